"""Dates and times (the seed's DATE_FORMAT_CORRECTION): what the model wrote, read as a date
(:mod:`.date_layouts` writes it the way the schema asks), and what the task settles where the
value leaves it open: the day/month order, the year, the time zone ("UTC").

Read: ISO with other separators (``2024/10/26``, ``2024.10.26``, ``20241026``), month names
in any order (``Oct 26, 2024``, ``26 October 2024``, ``Saturday, October 26, 2024``, by
python-dateutil), ``2024年10月26日``, and relative words against the run's clock (``today``,
``tomorrow``, ``in 3 days``, ``2 weeks ago``, ``next Friday``, ``明天``).

Declined, with the reason: a day/month order the text leaves open (``03/04/2024``), a date
without its year or day (``Oct 26``, ``the 26th``), a weekday that contradicts the date, a day
that does not exist (``Feb 30``), a vague span (``next week``, ``soon``), and a relative date
when no clock is known.
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from .fixes import Context, shown

__all__ = [
    "DATE_PHRASE",
    "YEARLESS_PHRASE",
    "bare_number_date",
    "yearless_days",
    "next_occurrence",
    "order_told",
    "read_date",
    "read_time",
    "task_says_utc",
    "writes_offsets",
]

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
#: A date as a task writes it, to find in free text ("on October 1st, 2024").
DATE_PHRASE = re.compile(
    r"\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b"
    r"|\b\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}\b"
    r"|\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+)?"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)"
    r"[a-z]*\.?,?\s+\d{4}\b"
    r"|\b(?:the day after tomorrow|tomorrow|today|yesterday)\b"
    r"|\bnext\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|\d{4}年\d{1,2}月\d{1,2}[日号]|明天|后天|今天",
    re.IGNORECASE,
)
_HAS_MONTH_NAME = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\b", re.IGNORECASE
)


#: The longest text read as a date ("Saturday, the 26th of October 2024, at 3:30 pm UTC"...).
_DATE_LIMIT = 120


class _Unreadable(ValueError):
    """Why a text is not read as a date."""


def read_date(text: str, now: _dt.datetime | None = None) -> tuple[_dt.date, _dt.time | None, str]:
    """``(date, time of day or None, how it was read)``; raises ``ValueError`` with the
    reason when ``text`` is not one date (ambiguous, incomplete, impossible or vague)."""
    if len(text) > _DATE_LIMIT:
        raise _Unreadable(f"{len(text)} characters are too long to be a date")
    raw = " ".join(text.strip().split())
    low = raw.lower().rstrip(".")
    if not low:
        raise _Unreadable("an empty string is no date")
    if _VAGUE.match(low):
        raise _Unreadable(f"{shown(text)} is a span, not a day")
    if _BARE_DAY.match(low):
        raise _Unreadable(f"{shown(text)} does not say the month and year")
    day_part, time_part = _split_time(low)
    relative = _relative(day_part, now, text)
    if relative is not None:
        moment = read_time(time_part) if time_part else None
        return relative, moment, "a relative date against the run's clock"
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
                f"{shown(text)} could be day/month or month/day: the order is not for us to guess"
            )
        year = _full_year(year, match[3], now)
        month, mday = (first, second) if first <= 12 and second > 12 else (second, first)
        moment = _time(match[4], text) if match[4] else None
        return _day(year, month, mday, text), moment, "numeric day and month"
    if _HAS_MONTH_NAME.search(low):
        return _with_month_name(raw, text)
    raise _Unreadable(f"{shown(text)} is not a date")


def _relative(low: str, now: _dt.datetime | None, text: str) -> _dt.date | None:
    offset = _RELATIVE_DAYS.get(low)
    match_in, match_ago, match_day = _IN.match(low), _AGO.match(low), _NEXT_DAY.match(low)
    if offset is None and not (match_in or match_ago or match_day):
        return None
    if now is None:
        raise _Unreadable(f"{shown(text)} is relative and no clock is known to read it against")
    today = now.date()
    if offset is not None:
        return today + _dt.timedelta(days=offset)
    for match, sign in ((match_in, 1), (match_ago, -1)):
        if match:
            count = _SMALL.get(match[1]) or int(match[1])
            days = count * (7 if match[2] == "week" else 1)
            try:
                return today + _dt.timedelta(days=sign * days)
            except OverflowError:
                raise _Unreadable(f"{shown(text)} is past the calendar") from None
    assert match_day is not None
    which, name = match_day[1], match_day[2]
    target = _WEEKDAYS.index(name)
    ahead = (target - today.weekday()) % 7
    if which == "last":
        if target < today.weekday():
            # said on a Tuesday, "last Monday" is yesterday for some, eight days ago for others
            raise _Unreadable(
                f"{shown(text)} could be this week's {name.title()} or last week's: which is not "
                "for us to guess"
            )
        back = (today.weekday() - target) % 7 or 7
        return today - _dt.timedelta(days=back)
    if which is None and ahead == 0:
        raise _Unreadable(f"{shown(text)} could be today or a week from today")
    if which == "next" and ahead > 0 and today.weekday() < target:
        # said on a Tuesday, "next Friday" is this week's for some, next week's for others
        raise _Unreadable(
            f"{shown(text)} could be this week's {name.title()} or next week's: which is not for "
            "us to guess"
        )
    if which == "this" and ahead == 0:
        return today
    return today + _dt.timedelta(days=ahead or 7)  # the first such day after today


_TIME = re.compile(
    r"^(?P<h>\d{1,2})(?::(?P<m>\d{2}))?(?::(?P<s>\d{2})(?:[.,]\d+)?)?\s*(?P<ampm>a\.?m\.?|p\.?m\.?)?"
    r"\s*(?P<zone>z|utc|gmt|[+-]\d{2}:?\d{2})?$"
)
_H_TIME = re.compile(r"(?P<h>\d{1,2})\s?h\s?(?P<m>[0-5]\d)?")
_TIME_SUFFIX = re.compile(
    r"^(?P<day>.*?)(?:,?\s+(?:at\s+)?)(?P<time>\d{1,2}(?::\d{2}){0,2}(?:[.,]\d+)?\s*"
    r"(?:a\.?m\.?|p\.?m\.?)?\s*(?:z|utc|gmt|[+-]\d{2}:?\d{2})?)$"
)


def _split_time(low: str) -> tuple[str, str | None]:
    """``("tomorrow", "12:30")`` for ``"tomorrow 12:30"``; the text and None without a time."""
    match = _TIME_SUFFIX.match(low)
    if match and match["day"] and not match["day"][-1].isdigit():
        return match["day"].strip(), match["time"].strip()
    return low, None


def read_time(text: str) -> _dt.time:
    """A time of day: ``15:00``, ``07:30``, ``7pm``, ``9:30 am``, ``14:05:09Z``, ``14h30``,
    ``10:00 -04:00``; raises ``ValueError`` for anything else: ``7 o'clock`` and ``7:00``
    (morning or evening?), ``25:00``."""
    low = " ".join(text.strip().lower().split())
    if low in ("noon", "midday"):
        return _dt.time(12, 0)
    if low == "midnight":
        return _dt.time(0, 0)
    french = _H_TIME.fullmatch(low)  # "14h30", "9h": the h notation is a 24-hour clock
    if french is not None and int(french["h"]) <= 23:
        return _dt.time(int(french["h"]), int(french["m"] or 0))
    match = _TIME.match(low)
    if match is None or (match["m"] is None and match["ampm"] is None):
        raise _Unreadable(f"{shown(text)} is not a time of day")  # "7": which 7?
    hour, minute, second = int(match["h"]), int(match["m"] or 0), int(match["s"] or 0)
    ampm = (match["ampm"] or "").replace(".", "")
    if not ampm and len(match["h"]) == 1 and hour != 0 and not match["zone"] and not match["s"]:
        # "7:00": a 12-hour clock read aloud, morning or evening; "07:00" says the morning
        raise _Unreadable(
            f"{shown(text)} could be morning or evening: which is not for us to guess"
        )
    if ampm:
        if not 1 <= hour <= 12:
            raise _Unreadable(f"{shown(text)} is not a time of day")
        hour = hour % 12 + (12 if ampm == "pm" else 0)
    if hour > 23 or minute > 59 or second > 59:
        raise _Unreadable(f"{shown(text)} is not a time of day")
    zone = match["zone"]
    tzinfo: _dt.tzinfo | None = None
    if zone in ("z", "utc", "gmt"):
        tzinfo = _dt.timezone.utc
    elif zone:
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        tzinfo = _dt.timezone(sign * _dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
    return _dt.time(hour, minute, second, tzinfo=tzinfo)


def _day(year: int, month: int, day: int, text: str) -> _dt.date:
    try:
        return _dt.date(year, month, day)
    except ValueError:
        raise _Unreadable(f"{shown(text)} is not a day of the calendar") from None


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
        return read_time(text)
    except ValueError:
        pass
    try:
        parsed = _parse(text, _dt.datetime(2000, 1, 1))
    except (ValueError, OverflowError):
        raise _Unreadable(f"{shown(original)} has a time that cannot be read") from None
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
        raise _Unreadable(f"{shown(text)} {reason}") from None
    if a.year != b.year:
        raise _Unreadable(f"{shown(text)} does not say the year")
    if a.day != b.day:
        raise _Unreadable(f"{shown(text)} does not say the day")
    if a.month != b.month:
        raise _Unreadable(f"{shown(text)} does not say the month")
    named = [d for d in _WEEKDAYS if re.search(rf"\b{d[:3]}[a-z]*\b", raw.lower())]
    if named and _WEEKDAYS.index(named[0]) != a.weekday():
        raise _Unreadable(
            f"{shown(text)}: {a.date().isoformat()} is a {_WEEKDAYS[a.weekday()].title()}, "
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


_UTC = re.compile(r"(?<![\w+-])(?:UTC|GMT)(?![\w+\-−])")


def task_says_utc(task: str | None) -> bool:
    """Whether the task says its times are in UTC, and names no other zone by an offset."""
    head = (task or "")[:4000]
    return bool(_UTC.search(head)) and not re.search(r"(?:UTC|GMT)\s*[+\-−]\s*\d", head)


def writes_offsets(args: Mapping[str, Any]) -> bool:
    """Whether the call writes UTC as ``+00:00`` in another of its values (and never ``Z``)."""
    texts = [v for v in args.values() if isinstance(v, str) and re.search(r"\d:\d\d", v)]
    return any(t.endswith("+00:00") for t in texts) and not any(t.endswith("Z") for t in texts)


def order_told(value: str, ctx: Context) -> tuple[_dt.date, _dt.time | None, str] | None:
    """A day/month order the value leaves open, as the task's own date settles it
    ("10/01/2024" where the task says "October 1st, 2024"), or None."""
    match = _NUMERIC.match(" ".join(value.strip().lower().split()))
    if match is None or not ctx.task:
        return None
    first, second = int(match[1]), int(match[2])
    year = _full_year(int(match[3]), match[3], ctx.now)
    readings = set()
    for month, mday in ((first, second), (second, first)):
        try:
            readings.add(_dt.date(year, month, mday))
        except ValueError:
            continue
    stated = set()
    for phrase in DATE_PHRASE.finditer(ctx.task[:4000]):
        try:
            stated.add(read_date(phrase.group(0).rstrip(",."), ctx.now)[0])
        except ValueError:
            continue
    told = readings & stated
    if len(told) != 1:
        return None
    try:
        moment = _time(match[4], value) if match[4] else None
    except ValueError:
        return None
    return told.pop(), moment, "the day and month in the order the task's date gives"


_MONTH_DAY = re.compile(r"^(\d{1,2})[-/.](\d{1,2})$")
#: A month and day in the CJK layout, no year ("3月15日", "3 月 15 号").
_CJK_MONTH_DAY = re.compile(r"^(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]$")


def next_occurrence(value: str, ctx: Context) -> tuple[_dt.date, _dt.time | None, str] | None:
    """A day the value gives without its year (``Dec 10``, ``12/24``, ``3月15日``) or month and year
    (``the 5th``), as its next occurrence on the run's clock, when that is nearer than the
    last one (said on 27 November, ``Dec 10`` is 13 days ahead, not 352 days back); None
    when no clock is known, the day/month order is open, or the last occurrence is nearer."""
    if ctx.now is None or len(value) > _DATE_LIMIT:
        return None
    today = ctx.now.date()
    low = " ".join(value.strip().lower().split()).rstrip(".")
    moment: _dt.time | None = None
    month: int | None = None
    if _BARE_DAY.match(low):
        mday = int(re.sub(r"\D", "", low))
    elif (numeric := _MONTH_DAY.match(low)) is not None:
        first, second = int(numeric[1]), int(numeric[2])
        if (first <= 12) == (second <= 12):
            return None  # 03/04: the order is open; 13/14: no month at all
        month, mday = (first, second) if first <= 12 else (second, first)
    elif (cjk := _CJK_MONTH_DAY.match(unicodedata.normalize("NFKC", low))) is not None:
        month, mday = int(cjk[1]), int(cjk[2])
    elif _HAS_MONTH_NAME.search(low):
        try:
            a = _parse(value.strip(), _dt.datetime(1904, 1, 1, 0, 0, 0))
            b = _parse(value.strip(), _dt.datetime(1908, 2, 2, 1, 1, 1))
        except (ValueError, OverflowError):
            return None
        if a.year == b.year or a.month != b.month or a.day != b.day:
            return None  # it gives the year, or leaves the day or month open
        month, mday = a.month, a.day
        if a.hour == b.hour:
            moment = _dt.time(a.hour, a.minute if a.minute == b.minute else 0, tzinfo=a.tzinfo)
    else:
        return None
    upcoming = _occurrences(today, month, mday)
    if upcoming is None:
        return None
    last, following = upcoming
    if _since(value, ctx.task):  # "since March 1st": a point already past (or today)
        day = following if following == today else last
        return day, moment, f"no year given: the task says since it, the last such day ({today})"
    if (following - today) > (today - last):
        return None  # the last such day is nearer: which one is meant is open
    return following, moment, f"no year given: the next such day on the run's clock ({today})"


_BARE_NUMBER = re.compile(r"^\s*(\d{1,6})(?:\.0+)?\s*$")
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
#: A day and month a task writes without the year ("December 10", "10 Dec", "12月10日").
YEARLESS_PHRASE = re.compile(
    rf"\b{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?!,?\s*\d{{4}})"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}(?![a-z])(?!,?\s*\d{{4}})"
    r"|(?<!\d)\d{1,2}\s*月\s*\d{1,2}\s*[日号]",
    re.IGNORECASE,
)


def bare_number_date(
    value: str, ctx: Context
) -> tuple[_dt.date, _dt.time | None, str] | str | None:
    """A bare number sent where a date is due (``10``, ``26``, ``2025``), read only from
    evidence: the one date the task gives whose day or year it is, or the day the task
    itself writes as a day of the month ("on the 10th"), at its next occurrence. Returns the
    reading, the reason to decline (a string), or None when ``value`` is no bare number.

    A bare number is never read as a count of days or seconds since 1970, nor as a day of
    the run's current month: nothing says which month, and a virtual clock at its start makes
    ``10`` into 1970-01-10."""
    match = _BARE_NUMBER.match(value)
    if match is None:
        return None
    number = int(match[1])
    task = (ctx.task or "")[:4000]
    stated: dict[_dt.date, str] = {}
    for phrase in DATE_PHRASE.finditer(task):
        written = phrase.group(0).rstrip(",.")
        if not re.search(r"\d", written):
            continue  # "tomorrow" has no part a number could be
        try:
            day = read_date(written, ctx.now)[0]
        except ValueError:
            continue
        if number in (day.day, day.year):
            stated.setdefault(day, written)
    if not stated:  # a day the task gives without its year: "December 10", "12月10日"
        for phrase in YEARLESS_PHRASE.finditer(task):
            written = phrase.group(0).strip()
            told = next_occurrence(written, ctx)
            if told is not None and told[0].day == number:
                stated.setdefault(told[0], written)
    if len(stated) == 1:
        ((day, written),) = stated.items()
        part = "day" if number == day.day else "year"
        return day, None, f"the {part} of the task's date {written!r}"
    if len(stated) > 1:
        return f"{shown(value)} is part of {len(stated)} dates the task gives: which is open"
    if 1 <= number <= 31 and re.search(
        rf"(?<![\w.,/:-])(?:the\s+)?{number}(?:st|nd|rd|th)(?![\w])", task, re.IGNORECASE
    ):
        told = next_occurrence(f"the {number}th", ctx)
        if told is not None:
            return told
        return (
            f"{shown(value)} is the day of the month the task writes, and which month is open "
            "(the last such day is nearer than the next, or no clock is known)"
        )
    return (
        f"{shown(value)} is a bare number, not a date, and the task gives no date it is part "
        "of: reading it as a day of some month or a count since 1970 would be a guess"
    )


def yearless_days(task: str, now: _dt.datetime | None) -> set[_dt.date] | None:
    """The days a task gives without their year ("due Friday 4 December"), each at its next
    occurrence on the clock; None when one of them is open (the last such day is nearer, or
    the weekday written beside it is another)."""
    days: set[_dt.date] = set()
    ctx = Context(task=task, now=now)
    for match in YEARLESS_PHRASE.finditer(task[:4000]):
        told = next_occurrence(match.group(0).strip(), ctx)
        if told is None:
            return None
        before = task[max(0, match.start() - 12) : match.start()].lower()
        named = [i for i, d in enumerate(_WEEKDAYS) if re.search(rf"\b{d}\b,?\s*$", before)]
        if named and told[0].weekday() != named[0]:
            return None  # "Friday 5 December" where the 5th is a Saturday
        days.add(told[0])
    return days


def _since(value: str, task: str | None) -> bool:
    """Whether the task writes ``value`` right after "since" (a point in the past)."""
    if not task:
        return False
    written = r"\s+".join(re.escape(w) for w in value.split())
    return bool(re.search(rf"\bsince\s+(?:the\s+)?{written}\b", task[:4000], re.IGNORECASE))


def _occurrences(today: _dt.date, month: int | None, mday: int) -> tuple[_dt.date, _dt.date] | None:
    """The last day before ``today`` and the first from ``today`` on that are ``mday`` (of
    ``month`` when given, else of any month)."""
    found: list[_dt.date] = []
    for step in range(-13, 14) if month is None else range(-1, 2):
        year, index = (today.year, today.month - 1 + step) if month is None else (
            today.year + step, month - 1)  # fmt: skip
        try:
            found.append(_dt.date(year + index // 12, index % 12 + 1, mday))
        except ValueError:
            continue
    before = [d for d in found if d < today]
    after = [d for d in found if d >= today]
    if not before or not after:
        return None
    return max(before), min(after)
