"""Units of measure read with a units library (``pint``, the ``repair`` extra) rather than a
hand list: a word as written (``km``, ``metres``, ``mins``, ``hours``) -> the library's unit.

A word of one or two letters is taken only for what it commonly abbreviates (a length, a time,
a mass, an amount of data: ``m``, ``s``, ``h``, ``kg``, ``MB``) and never for a function word,
since the library knows many one-letter units (``a`` for a year, ``in`` for an inch, ``F`` for
a farad) that a description's ``in a`` or a name's ``expires_in`` does not mean.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from .enums import FUNCTION_WORDS

__all__ = ["registry", "unit_name", "unit_of"]

#: Dimensions a one- or two-letter abbreviation is read in (each to the first power).
_SHORT_DIMENSIONS = frozenset({"[length]", "[time]", "[mass]", "[information]"})


def _dimension(unit: Any) -> str | None:
    """The one base dimension of ``unit`` (``[time]`` for an hour), or None for a compound.

    Read from the container's items, never its text: formatting a container imports the
    library's formatter lazily, and once the library's modules have been re-imported (as
    pytest's in-process runs do when they restore ``sys.modules``) that formatter no longer
    recognises the registry's containers and raises ``TypeError``."""
    items = list(unit.dimensionality.items())
    if len(items) != 1 or items[0][1] != 1:
        return None
    return str(items[0][0])


#: A bit rate as written: ``bps``, ``kbps``, ``Mbps``, ``Gbps`` (SI prefixes, bits per second).
_BIT_RATE = re.compile(r"(?P<p>[kKMGT]?)bps")
_SI_PREFIXES = {"": "", "k": "kilo", "K": "kilo", "M": "mega", "G": "giga", "T": "tera"}


@lru_cache(maxsize=1)
def registry() -> Any:
    """The units library's registry, built on first use (raises ``ImportError`` without it)."""
    import pint  # the "repair" extra; on first use only

    return pint.UnitRegistry()


@lru_cache(maxsize=1024)
def unit_of(word: str) -> Any:
    """The units library's unit for a word as written, or None (a label, or no library)."""
    try:
        units = registry()
    except ImportError:
        return None
    rate = _BIT_RATE.fullmatch(word)
    if rate is not None:  # "Mbps": bits per second with an SI prefix, as rates are written
        return units.Unit(_SI_PREFIXES[rate["p"]] + "bit / second")
    try:
        found = units.parse_unit_name(word)
    except Exception:
        found = ()
    if not found and not word.isascii():  # a unit's name in another script: CLDR (babel)
        named = _cldr_names().get(word.strip())
        return units.Unit(named) if named is not None else None
    for prefix, unit, _suffix in found:
        if not prefix or word.lower().startswith(prefix) or len(word) <= 3:
            try:
                return units.Unit(prefix + unit)
            except Exception:
                return None
    return None


#: Locales whose unit names are read (CLDR, through babel), and the kinds of unit.
_LOCALES = ("zh", "zh_Hant", "ja", "ko")
_KINDS = ("length-", "mass-", "duration-", "digital-", "volume-")


@lru_cache(maxsize=1)
def _cldr_names() -> dict[str, str]:
    """CLDR's names of units in scripts other than Latin (``公里`` -> ``kilometer``, ``米`` ->
    ``meter``, ``小时`` -> ``hour``), long, short and narrow, for the units the library knows;
    a name two units share is left out. Empty without babel."""
    try:
        from babel import Locale
        from babel.units import get_unit_name
    except ImportError:
        return {}
    found: dict[str, set[str]] = {}
    units = registry()
    for code in _LOCALES:
        try:
            ids = [
                u for u in Locale.parse(code)._data["unit_display_names"] if u.startswith(_KINDS)
            ]
        except Exception:
            continue
        for unit_id in ids:
            name = unit_id.split("-", 1)[1].replace("-", "_")
            try:
                units.Unit(name)
            except Exception:
                continue
            for length in ("long", "short", "narrow"):
                try:
                    written = get_unit_name(unit_id, length=length, locale=code)
                except Exception:
                    continue
                if written and not written.isascii():
                    found.setdefault(written.strip(), set()).add(name)
    return {k: v.pop() for k, v in found.items() if len(v) == 1}


@lru_cache(maxsize=1024)
def unit_name(word: str) -> str | None:
    """The library's name of the unit ``word`` writes (``metres`` -> ``meter``, ``km`` ->
    ``kilometer``), for a unit with a dimension; None for anything else (see the module)."""
    unit = unit_of(word)
    if unit is None:
        return None
    name = str(unit)
    information = name.endswith(("bit", "byte"))  # dimensionless in the library
    if unit.dimensionless and not information:
        return None  # percent, dozen: a count, not a unit to convert
    if len(word) <= 2 and (
        word.lower() in FUNCTION_WORDS
        or not information
        and _dimension(unit) not in _SHORT_DIMENSIONS
    ):
        return None
    return name
