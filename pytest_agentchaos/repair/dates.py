"""Dates and times (the seed's DATE_FORMAT_CORRECTION): what the model wrote, read as a date
and written the way the schema asks (``format: date`` -> ``2024-10-26``; ``date-time`` ->
RFC 3339; a pattern or a ``DD/MM/YYYY``-style hint in the description -> that layout).

Read: ISO with other separators (``2024/10/26``, ``2024.10.26``, ``20241026``), month names
in any order (``Oct 26, 2024``, ``26 October 2024``, ``Saturday, October 26, 2024``, by
python-dateutil), ``2024年10月26日``, and relative words against the run's clock (``today``,
``tomorrow``, ``in 3 days``, ``2 weeks ago``, ``next Friday``, ``明天``).

Declined, with the reason: a day/month order the text leaves open (``03/04/2024``), a date
without its year or day (``Oct 26``, ``the 26th``), a weekday that contradicts the date, a day
that does not exist (``Feb 30``), a vague span (``next week``, ``soon``), a relative date when
no clock is known, and a time without its time zone where ``date-time`` needs one.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from typing import Any

from .fixes import Context, Decline, Fix

__all__ = ["fix_date", "read_date"]

_STRATEGY = "date_format_correction"
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_SHORT = {d[:3]: i for i, d in enumerate(_WEEKDAYS)}
_RELATIVE_DAYS = {
    "today": 0, "tonight": 0, "now": 0, "tomorrow": 1, "yesterday": -1,
    "day after tomorrow": 2, "the day after tomorrow": 2, "day before yesterday": -2,
    "the day before yesterday": -2,
    "今天": 0, "今日": 0, "明天": 1, "明日": 1, "后天": 2, "後天": 2, "昨天": -1, "前天": -2,
}  # fmt: skip
_VAGUE = re.compile(
    r"^(?:next|this|last|coming)\s+(?:week|month|year|weekend)$|^(?:soon|later|asap|someday"
    r"|sometime.*|whenever|recently)$"
)
_BARE_DAY = re.compile(r"^(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?$")
_IN = re.compile(r"^in\s+(\d+|a|an|one|two|three|four|five|six|seven)\s+(day|week)s?$")
_AGO = re.compile(r"^(\d+|a|an|one|two|three|four|five|six|seven)\s+(day|week)s?\s+ago$")
_NEXT_DAY = re.compile(r"^(?:(next|this|coming|last)\s+)?(" + "|".join(_WEEKDAYS) + r")$")
_SMALL = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
}
_ISO_LIKE = re.compile(r"^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[Tt\s]+(.+))?$")
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})$")
_CJK = re.compile(r"^(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]$")
_NUMERIC = re.compile(r"^(\d{1,2})[-/.](\d{1,2})[-/.](\d{2}|\d{4})(?:[T\s,]+(.+))?$")
_HAS_MONTH_NAME = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\b", re.IGNORECASE
)
_HINTS = (
    ("DD/MM/YYYY", "%d/%m/%Y"), ("MM/DD/YYYY", "%m/%d/%Y"), ("DD.MM.YYYY", "%d.%m.%Y"),
    ("DD-MM-YYYY", "%d-%m-%Y"), ("MM-DD-YYYY", "%m-%d-%Y"), ("YYYYMMDD", "%Y%m%d"),
    ("YYYY/MM/DD", "%Y/%m/%d"), ("YYYY-MM-DD", "%Y-%m-%d"),
)  # fmt: skip


class _Unreadable(ValueError):
    """Why a text is not read as a date."""


def read_date(text: str, now: _dt.datetime | None = None) -> tuple[_dt.date, _dt.time | None, str]:
    """``(date, time of day or None, how it was read)``; raises ``ValueError`` with the
    reason when ``text`` is not one date (ambiguous, incomplete, impossible or vague)."""
    raw = " ".join(text.strip().split())
    low = raw.lower().rstrip(".")
    if not low:
        raise _Unreadable("an empty string is no date")
    if _VAGUE.match(low):
        raise _Unreadable(f"{text!r} is a span, not a day")
    if _BARE_DAY.match(low):
        raise _Unreadable(f"{text!r} does not say the month and year")
    relative = _relative(low, now, text)
    if relative is not None:
        return relative, None, "a relative date against the run's clock"
    for pattern, how in ((_ISO_LIKE, "ISO order"), (_COMPACT, "compact ISO")):
        match = pattern.match(low)
        if match:
            day = _day(int(match[1]), int(match[2]), int(match[3]), text)
            moment = _time(match[4], text) if match.lastindex and match.lastindex >= 4 else None
            return day, moment, how
    match = _CJK.match(raw)
    if match:
        return _day(int(match[1]), int(match[2]), int(match[3]), text), None, "年月日"
    match = _NUMERIC.match(low)
    if match:
        first, second, year = int(match[1]), int(match[2]), int(match[3])
        if first <= 12 and second <= 12 and first != second:
            raise _Unreadable(
                f"{text!r} could be day/month or month/day: the order is not for us to guess"
            )
        year = _full_year(year, match[3], now)
        month, mday = (first, second) if first <= 12 and second > 12 else (second, first)
        moment = _time(match[4], text) if match[4] else None
        return _day(year, month, mday, text), moment, "numeric day and month"
    if _HAS_MONTH_NAME.search(low):
        return _with_month_name(raw, text)
    raise _Unreadable(f"{text!r} is not a date")


def _relative(low: str, now: _dt.datetime | None, text: str) -> _dt.date | None:
    offset = _RELATIVE_DAYS.get(low)
    match_in, match_ago, match_day = _IN.match(low), _AGO.match(low), _NEXT_DAY.match(low)
    if offset is None and not (match_in or match_ago or match_day):
        return None
    if now is None:
        raise _Unreadable(f"{text!r} is relative and no clock is known to read it against")
    today = now.date()
    if offset is not None:
        return today + _dt.timedelta(days=offset)
    for match, sign in ((match_in, 1), (match_ago, -1)):
        if match:
            count = _SMALL.get(match[1]) or int(match[1])
            days = count * (7 if match[2] == "week" else 1)
            return today + _dt.timedelta(days=sign * days)
    assert match_day is not None
    which, name = match_day[1], match_day[2]
    target = _WEEKDAYS.index(name)
    ahead = (target - today.weekday()) % 7
    if which == "last":
        back = (today.weekday() - target) % 7 or 7
        return today - _dt.timedelta(days=back)
    if which is None and ahead == 0:
        raise _Unreadable(f"{text!r} could be today or a week from today")
    return today + _dt.timedelta(days=ahead or 7)  # "next Friday": the first Friday after today


def _day(year: int, month: int, day: int, text: str) -> _dt.date:
    try:
        return _dt.date(year, month, day)
    except ValueError:
        raise _Unreadable(f"{text!r} is not a day of the calendar") from None


def _full_year(year: int, written: str, now: _dt.datetime | None) -> int:
    if len(written) == 4:
        return year
    century = (now.year if now else 2000) // 100 * 100
    return century + year


def _parse(text: str, default: _dt.datetime) -> _dt.datetime:
    """dateutil's parse, the same on every machine: UTC and GMT are UTC, an offset is that
    offset, and any other zone name leaves the time without a zone (dateutil would otherwise
    pick the machine's own zone for a name the machine's zone shares)."""
    import warnings

    from dateutil import parser, tz  # type: ignore[import-untyped]

    def zone(name: str | None, offset: int | None) -> _dt.tzinfo | None:
        found: _dt.tzinfo | None = None
        if offset is not None:
            found = tz.UTC if offset == 0 else tz.tzoffset(None, offset)
        elif name is not None and name.upper() in ("UTC", "GMT", "Z", "UT"):
            found = tz.UTC
        return found  # a zone name (EST, CET...) is no offset: "EST" is also Australia's

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed: _dt.datetime = parser.parse(text, default=default, tzinfos=zone)
        return parsed


def _time(text: str | None, original: str) -> _dt.time | None:
    if not text:
        return None
    try:
        parsed = _parse(text, _dt.datetime(2000, 1, 1))
    except (ValueError, OverflowError):
        raise _Unreadable(f"{original!r} has a time that cannot be read") from None
    return parsed.timetz()


def _with_month_name(raw: str, text: str) -> tuple[_dt.date, _dt.time | None, str]:
    # two different defaults: a field the text does not give comes out different
    first = _dt.datetime(1904, 1, 1, 0, 0, 0)
    second = _dt.datetime(1908, 2, 2, 1, 1, 1)
    try:
        a = _parse(raw, first)
        b = _parse(raw, second)
    except (ValueError, OverflowError) as exc:
        reason = (
            "is not a day of the calendar"
            if "day is out of range" in str(exc)
            else ("is not a date")
        )
        raise _Unreadable(f"{text!r} {reason}") from None
    if a.year != b.year:
        raise _Unreadable(f"{text!r} does not say the year")
    if a.day != b.day:
        raise _Unreadable(f"{text!r} does not say the day")
    if a.month != b.month:
        raise _Unreadable(f"{text!r} does not say the month")
    named = [d for d in _WEEKDAYS if re.search(rf"\b{d[:3]}[a-z]*\b", raw.lower())]
    if named and _WEEKDAYS.index(named[0]) != a.weekday():
        raise _Unreadable(
            f"{text!r}: {a.date().isoformat()} is a {_WEEKDAYS[a.weekday()].title()}, "
            f"not a {named[0].title()}"
        )
    moment = None
    if a.hour == b.hour:  # the text gives the hour ("3pm"): what it leaves out is zero
        moment = _dt.time(
            a.hour,
            a.minute if a.minute == b.minute else 0,
            a.second if a.second == b.second else 0,
            tzinfo=a.tzinfo,
        )
    return a.date(), moment, "a month name"


def fix_date(value: Any, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline | None:
    """``value`` rewritten as the date the schema asks for, or why not; None when the schema
    asks for no date layout this reads."""
    layout = _layout(schema)
    if layout is None or not isinstance(value, str):
        return None
    now = ctx.now
    try:
        day, moment, how = read_date(value, now)
    except ValueError as exc:
        return Decline(_STRATEGY, str(exc))
    confidence = 0.95
    if how.startswith("a relative"):
        confidence = 0.9
    if layout == "date-time":
        if moment is None:
            return Decline(_STRATEGY, f"{value!r} gives no time of day where a date-time is asked")
        if moment.tzinfo is None:
            return Decline(_STRATEGY, f"{value!r} gives no time zone: it is not for us to choose")
        fixed = _dt.datetime.combine(day, moment).isoformat()
    elif layout == "time":
        if moment is None:
            return Decline(_STRATEGY, f"{value!r} gives no time of day")
        fixed = moment.isoformat()
    else:
        fixed = day.strftime(layout)
    if fixed == value:
        return None
    return Fix(_STRATEGY, fixed, confidence, f"{value!r} read as {day.isoformat()} ({how})")


def _layout(schema: Mapping[str, Any]) -> str | None:
    """``date-time``, ``time`` or a ``strftime`` layout for a date, from the schema's
    ``format``, a description that names the layout, or a pattern one layout matches."""
    fmt = schema.get("format")
    if fmt in ("date-time", "time"):
        return str(fmt)
    if fmt == "date":
        return "%Y-%m-%d"
    description = str(schema.get("description", ""))
    for hint, layout in _HINTS:
        if hint in description.upper():
            return layout
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        sample = _dt.date(2024, 10, 26)
        try:
            fits = [lay for _, lay in _HINTS if re.search(pattern, sample.strftime(lay))]
        except re.error:
            return None
        if len(set(fits)) == 1:
            return fits[0]
    return None
