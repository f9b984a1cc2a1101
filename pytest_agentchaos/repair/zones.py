"""Time zones (``timezone_correction``): an IANA zone name written another way.

For a text field that holds a time zone (its name or description says so, or the schema lists
IANA zones in its examples): the zone in another case (``europe/paris``), a city whose zone is
the only one named after it (``New York`` -> ``America/New_York``, ``Tokyo`` ->
``Asia/Tokyo``). Declined: an abbreviation (``CST`` is Central Standard Time in the US and
China Standard Time; ``IST`` three different zones), a spoken name (``Pacific Time``: which
place's rules?), a city no zone is named after.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from .fixes import Context, Decline, Fix, shown

__all__ = ["fix_zone", "holds_zone"]

_STRATEGY = "timezone_correction"
_ZONE_FIELD = re.compile(r"time_?zone|timezone|\btz\b|IANA", re.IGNORECASE)


def holds_zone(name: str, schema: Mapping[str, Any]) -> bool:
    """Whether a text field holds an IANA time zone name."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1_\2", name)
    return bool(
        _ZONE_FIELD.search(spaced) or _ZONE_FIELD.search(str(schema.get("description", "")))
    )


@lru_cache(maxsize=1)
def _zones() -> tuple[dict[str, str], dict[str, list[str]]]:
    """(lowercased name -> IANA name, lowercased city -> the zones named after it)."""
    try:
        from zoneinfo import available_timezones
    except ImportError:  # pragma: no cover - Python < 3.9
        return {}, {}
    names = {z.lower(): z for z in available_timezones()}
    cities: dict[str, list[str]] = {}
    for zone in names.values():
        if "/" in zone and not zone.startswith(("Etc/", "SystemV/")):
            city = zone.rsplit("/", 1)[1].replace("_", " ").lower()
            cities.setdefault(city, []).append(zone)
    return names, cities


def fix_zone(value: Any, ctx: Context) -> Fix | Decline | None:
    """``value`` as the IANA zone it names, None when it is one already (or this cannot
    read time zones), or why not."""
    if not isinstance(value, str) or not value.strip():
        return None
    names, cities = _zones()
    if not names:
        return None
    text = value.strip()
    if text in names.values():
        return None
    known = names.get(text.lower()) or names.get(text.lower().replace(" ", "_"))
    if known is not None:
        return Fix(_STRATEGY, known, 0.95, f"{shown(value)} is the zone {known!r}")
    if re.fullmatch(r"[A-Za-z]{2,5}", text) and text.upper() == text:
        return Decline(_STRATEGY, f"{shown(value)} is an abbreviation several zones share")
    zones = cities.get(text.lower(), [])
    if len(zones) == 1:
        return Fix(_STRATEGY, zones[0], 0.9, f"{shown(value)} is in the zone {zones[0]!r}")
    if len(zones) > 1:
        return Decline(_STRATEGY, f"{shown(value)} could be {zones[0]!r} or {zones[1]!r}")
    return Decline(_STRATEGY, f"{shown(value)} is no IANA time zone, and no zone is named after it")
