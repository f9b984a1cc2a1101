"""Time zones (``timezone_correction``): an IANA zone name written another way.

For a text field that holds a time zone (its name or description says so, or the schema lists
IANA zones in its examples): the zone in another case (``europe/paris``), a city whose zone is
the only one named after it (``New York`` -> ``America/New_York``, ``Tokyo`` ->
``Asia/Tokyo``), a spoken name of a metazone (``Pacific Time`` -> ``America/Los_Angeles``,
the zone CLDR names for it), an abbreviation that the task spells out (``PST`` where the task
says "Pacific time"). Declined: an abbreviation alone (``CST`` is Central Standard Time in the
US and China Standard Time; ``IST`` three different zones), a city no zone or several zones
are named after.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from .fixes import Context, Decline, Fix, shown

__all__ = ["fix_zone", "holds_zone", "zones_named_in"]

_STRATEGY = "timezone_correction"
_ZONE_FIELD = re.compile(r"time_?zone|timezone|\btz\b|IANA", re.IGNORECASE)
#: A field named for a date or a time, which no description makes a zone.
_WHEN_FIELD = re.compile(r"(?:^|_)(?:date|time|day|datetime|at|when|start|end|due)(?:_|$)",
                         re.IGNORECASE)  # fmt: skip


def holds_zone(name: str, schema: Mapping[str, Any]) -> bool:
    """Whether a text field holds an IANA time zone name."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1_\2", name)
    if _ZONE_FIELD.search(spaced):
        return True
    if _WHEN_FIELD.search(spaced):  # a date or time "relative to the user's timezone"
        return False
    return bool(_ZONE_FIELD.search(str(schema.get("description", ""))))


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


#: Spoken names of metazones -> (the zone CLDR takes as their example, their abbreviations).
#: Only names that mean one set of rules to a reader; "Central" alone is North America's.
_SPOKEN: dict[str, tuple[str, tuple[str, ...]]] = {
    "pacific": ("America/Los_Angeles", ("PT", "PST", "PDT")),
    "mountain": ("America/Denver", ("MT", "MST", "MDT")),
    "central": ("America/Chicago", ("CT", "CST", "CDT")),
    "eastern": ("America/New_York", ("ET", "EST", "EDT")),
    "atlantic": ("America/Halifax", ("AT", "AST", "ADT")),
    "hawaii": ("Pacific/Honolulu", ("HST",)),
    "central european": ("Europe/Paris", ("CET", "CEST")),
    "eastern european": ("Europe/Bucharest", ("EET", "EEST")),
    "british": ("Europe/London", ("BST",)),
    "japan": ("Asia/Tokyo", ("JST",)),
    "india": ("Asia/Kolkata", ("IST",)),
    "china": ("Asia/Shanghai", ("CST",)),
    "korea": ("Asia/Seoul", ("KST",)),
    "australian eastern": ("Australia/Sydney", ("AET", "AEST", "AEDT")),
    "new zealand": ("Pacific/Auckland", ("NZST", "NZDT")),
}
_SPOKEN_NAME = re.compile(
    r"\b(?:u\.?s\.?\s+)?(" + "|".join(sorted(_SPOKEN, key=len, reverse=True)) + r")"
    r"\s+(?:standard\s+|daylight\s+|summer\s+)?time\b",
    re.IGNORECASE,
)
#: Zones whose last part is no place a task names ("Center", "Casey", "Troll").
_NOT_CITIES = ("Antarctica/", "America/Indiana/", "America/Kentucky/", "America/North_Dakota/")


def _spoken(text: str) -> str | None:
    """The zone of a whole spoken name ("Pacific Standard Time"), or None."""
    match = _SPOKEN_NAME.fullmatch(text.strip())
    return _SPOKEN[match[1].lower()][0] if match else None


def zones_named_in(text: str) -> list[str]:
    """The zones a text names by a spoken name or a city only one zone is named after, in the
    order named, each once ("14:00 London time in Tokyo" -> Europe/London, Asia/Tokyo)."""
    names, cities = _zones()
    found: dict[str, int] = {}
    text = text[:4000]
    for match in _SPOKEN_NAME.finditer(text):
        found.setdefault(_SPOKEN[match[1].lower()][0], match.start())
    for match in re.finditer(r"\b[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*){0,2}", text):
        words = match[0].split()
        start = 0
        while start < len(words):
            for size in range(len(words) - start, 0, -1):  # "New York", not "York"
                zones = cities.get(" ".join(words[start : start + size]).lower(), [])
                if len(zones) == 1 and not zones[0].startswith(_NOT_CITIES):
                    found.setdefault(zones[0], match.start())
                    break
            else:
                size = 1
            start += size
    return sorted(found, key=found.__getitem__)


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
    offset = re.fullmatch(r"(?:UTC|GMT)\s*([+-])\s*(\d{1,2})(?::?00)?", text, re.IGNORECASE)
    if offset is not None and int(offset[2]) != 0:
        # the tz database's fixed-offset zones count the POSIX way: UTC+5 is Etc/GMT-5
        hours = int(offset[2]) * (1 if offset[1] == "+" else -1)
        named = _named_with_offset(hours, ctx)
        if isinstance(named, (Fix, Decline)):
            return named
        zone = f"Etc/GMT{'-' if offset[1] == '+' else '+'}{int(offset[2])}"
        if zone in names.values():
            return Fix("timezone_correction", zone, 0.9,
                       f"{text!r} is the fixed-offset zone {zone} (POSIX sign)")  # fmt: skip
    known = names.get(text.lower()) or names.get(text.lower().replace(" ", "_"))
    if known is not None:
        return Fix(_STRATEGY, known, 0.95, f"{shown(value)} is the zone {known!r}")
    spoken = _spoken(text)
    if spoken is not None:
        return Fix(_STRATEGY, spoken, 0.9, f"{shown(value)} is the time of {spoken!r}")
    if re.fullmatch(r"[A-Za-z]{2,5}", text) and text.upper() == text:
        return _abbreviation(text, ctx)
    zones = cities.get(text.lower(), [])
    if len(zones) == 1:
        return Fix(_STRATEGY, zones[0], 0.9, f"{shown(value)} is in the zone {zones[0]!r}")
    if len(zones) > 1:
        return Decline(_STRATEGY, f"{shown(value)} could be {zones[0]!r} or {zones[1]!r}")
    near = _one_edit_from(text, set(names.values()))
    if near is not None:  # "Europe/Londn": the database's key with the character dropped
        return Fix(_STRATEGY, near, 0.9, f"{shown(value)} is the zone {near!r}, one character off")
    return Decline(_STRATEGY, f"{shown(value)} is no IANA time zone, and no zone is named after it")


def _one_edit_from(text: str, zones: set[str]) -> str | None:
    """The one zone of the database one edit from ``text`` (a character dropped, added,
    replaced or two swapped), for a text shaped like a key (``Area/Location``)."""
    if "/" not in text or len(text) < 8 or len(text) > 40:
        return None
    from rapidfuzz.distance import OSA

    found = [z for z in zones if abs(len(z) - len(text)) <= 1 and OSA.distance(z, text) == 1]
    return found[0] if len(found) == 1 else None


def _named_with_offset(hours: int, ctx: Context) -> Fix | Decline | None:
    """The zone the task names (by a city or a spoken name, held by no other field) for a
    fixed offset the call sent: the task's zone where its offset that year is the one sent
    ("GMT+1" and "Berlin time" in March), a decline where it is not; None where the task
    names no zone."""
    held = {v for k, v in ctx.args.items() if k != ctx.name and isinstance(v, str)}
    zones = [z for z in zones_named_in(ctx.task or "") if z not in held]
    if not zones:
        return None
    year = (ctx.now or _dt.datetime.now(_dt.timezone.utc)).year
    fitting = []
    for zone in zones:
        info = ZoneInfo(zone)
        offsets = {
            _dt.datetime(year, month, 1, 12, tzinfo=info).utcoffset() for month in (1, 7)
        }  # standard and summer time
        if _dt.timedelta(hours=hours) in offsets:
            fitting.append(zone)
    if len(fitting) == 1:
        return Fix(_STRATEGY, fitting[0], 0.9, f"UTC{hours:+d} is the offset of {fitting[0]!r}, "
                   "the zone the task names")  # fmt: skip
    listed = ", ".join(zones[:3])
    return Decline(_STRATEGY, f"UTC{hours:+d} was sent and the task names {listed}: which is "
                   "meant, the call and the task do not agree")  # fmt: skip


def _abbreviation(text: str, ctx: Context) -> Fix | Decline:
    """An abbreviation is read only where the task spells it out ("PST" and "Pacific time")."""
    meant = {
        _SPOKEN[m[1].lower()][0]
        for m in _SPOKEN_NAME.finditer((ctx.task or "")[:4000])
        if text in _SPOKEN[m[1].lower()][1]
    }
    if len(meant) == 1:
        zone = meant.pop()
        return Fix(_STRATEGY, zone, 0.9, f"{text!r} is spelt out in the task: {zone!r}")
    return Decline(_STRATEGY, f"{text!r} is an abbreviation several zones share")
