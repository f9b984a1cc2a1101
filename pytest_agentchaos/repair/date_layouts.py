"""Dates written the way a schema asks (the seed's DATE_FORMAT_CORRECTION): ``format: date``
-> ``2024-10-26``; ``date-time`` -> RFC 3339; a pattern or a ``DD/MM/YYYY``-style hint in the
description -> that layout. What the value says is read by :mod:`.dates`.

Declined, with the reason: what :mod:`.dates` cannot read, a date-time without its time of
day, and a time without its time zone where ``date-time`` needs one and the task does not
say it is UTC.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .dates import (
    bare_number_date,
    next_occurrence,
    order_told,
    read_date,
    read_time,
    task_says_utc,
    writes_offsets,
)
from .fixes import Context, Decline, Fix, matches_pattern, shown

__all__ = ["described_layout", "fix_date", "wants_a_day"]

_STRATEGY = "date_format_correction"
#: Layouts a description names, and how to write them.
_HINTS = (
    ("DD/MM/YYYY", "%d/%m/%Y"), ("MM/DD/YYYY", "%m/%d/%Y"), ("DD.MM.YYYY", "%d.%m.%Y"),
    ("DD-MM-YYYY", "%d-%m-%Y"), ("MM-DD-YYYY", "%m-%d-%Y"), ("YYYYMMDD", "%Y%m%d"),
    ("YYYY/MM/DD", "%Y/%m/%d"), ("YYYY-MM-DD", "%Y-%m-%d"),
)  # fmt: skip


@dataclass(frozen=True)
class _Layout:
    """How a schema wants a date written: ``kind`` is ``date``, ``datetime``, ``time`` or
    ``iso`` (a date, or a date-time when a time is given, as ISO 8601 allows); ``layout`` the
    ``strftime`` layout of a date or time; ``zone`` for a date-time: ``required``,
    ``optional`` or ``none``; ``pattern`` the schema's pattern, which the result must match."""

    kind: str
    layout: str = ""
    zone: str = "optional"
    pattern: str | None = None


def described_layout(schema: Mapping[str, Any]) -> str | None:
    """The ``strftime`` layout of a date the description alone names (``YYYY-MM-DD``,
    ``DD/MM/YYYY``) for a text field with no format, pattern or layout of its own; None
    otherwise. What a description states is checked like the schema (the effective schema)."""
    if any(k in schema for k in ("format", "pattern", "x-strftime", "enum", "const")):
        return None
    if schema.get("type", "string") != "string":
        return None
    description = str(schema.get("description", ""))[:2000].upper()
    named = {layout for hint, layout in _HINTS if hint in description}
    return named.pop() if len(named) == 1 else None


def wants_a_day(schema: Mapping[str, Any]) -> bool:
    """Whether the schema asks for a date, a date-time or a time of day (by its format, its
    pattern or a layout its description names)."""
    return _layout(schema) is not None


def _cut_from_task(value: str, task: str | None) -> str | None:
    """The task's token that ``value`` is the start of, cut before a digit ("2025-07-1" of
    "2025-07-14"), or None."""
    stripped = value.strip()
    if not task or not stripped[-1:].isdigit():
        return None
    found = re.search(rf"(?<![\w-]){re.escape(stripped)}\d[\w:.+-]*", task[:4000])
    return found.group(0) if found else None


def fix_date(value: Any, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline | None:
    """``value`` rewritten as the date, date-time or time the schema asks for, or why not;
    None when the schema asks for no layout this reads."""
    layout = _layout(schema)
    if layout is None or not isinstance(value, str):
        return None
    if layout.kind == "time":
        return _fix_time(value, layout)
    cut = _cut_from_task(value, ctx.task)
    if cut is not None:
        return Decline(_STRATEGY, f"{shown(value)} is the start of {cut!r}, which the task "
                       "writes: a digit was cut, not a day given")  # fmt: skip
    bare = bare_number_date(value, ctx) if not _COMPACT_DAY.match(value.strip()) else None
    if isinstance(bare, str):
        return Decline(_STRATEGY, bare)
    try:
        if bare is not None:
            day, moment, how = bare
        else:
            day, moment, how = read_date(value, ctx.now)
    except ValueError as exc:
        told = order_told(value, ctx) or next_occurrence(value, ctx)
        if told is None:
            return Decline(_STRATEGY, str(exc))
        day, moment, how = told
    confidence = 0.9 if how.startswith("a relative") else 0.95
    kind = layout.kind
    if kind == "stamp":  # a date and time in a layout of the tool's own
        if moment is None or moment.tzinfo is not None:
            return Decline(_STRATEGY, f"{shown(value)} does not fit {layout.layout!r} as it is")
        fixed = _dt.datetime.combine(day, moment).strftime(layout.layout)
        if fixed == value:
            return None
        return Fix(_STRATEGY, fixed, confidence, f"{shown(value)} read as {fixed} ({how})")
    if kind == "iso":
        kind = "datetime" if moment is not None else "date"
    if kind == "datetime":
        if moment is None:
            moment = _bound_of_day(ctx.name)  # "tomorrow" for a window's start or end
        if moment is None:
            return Decline(
                _STRATEGY, f"{shown(value)} gives no time of day where a date-time is asked"
            )
        if moment.tzinfo is None and layout.zone == "required":
            if not task_says_utc(ctx.task):
                return Decline(
                    _STRATEGY, f"{shown(value)} gives no time zone: it is not for us to choose"
                )
            moment = moment.replace(tzinfo=_dt.timezone.utc)  # the task's own "UTC"
            how += ", in UTC as the task says"
        stamp = _dt.datetime.combine(day, moment.replace(microsecond=0))
        if layout.zone == "none":
            stamp = stamp.replace(tzinfo=None) if moment.tzinfo is None else stamp
            if moment.tzinfo is not None:
                return Decline(_STRATEGY, f"{shown(value)} has a time zone the field does not take")
        fixed = stamp.isoformat()
        if (
            fixed.endswith("+00:00")
            and (layout.pattern is None or matches_pattern(fixed[:-6] + "Z", layout.pattern))
            and not writes_offsets(ctx.args)
        ):
            fixed = fixed[:-6] + "Z"  # UTC as most APIs write it, unless the call does not
    else:
        fixed = day.strftime(layout.layout or "%Y-%m-%d")
    if layout.pattern is not None and not matches_pattern(fixed, layout.pattern):
        return Decline(
            _STRATEGY, f"{shown(value)} read as {fixed!r}, which the field's pattern refuses"
        )
    if fixed == value:
        return None
    return Fix(_STRATEGY, fixed, confidence, f"{shown(value)} read as {fixed} ({how})")


#: The task stating UTC (or GMT, the same clock) itself, not an offset from it ("UTC+2").


# bounds of a search window only: an event's "start" and "end" on a bare day are an all-day
# event, which a date-time field cannot say
_STARTS = frozenset({"min", "after", "since", "earliest"})
_ENDS = frozenset({"max", "before", "until", "latest"})


def _bound_of_day(name: str) -> _dt.time | None:
    """The time a day stands for in a search window's bound: its first second for
    ``timeMin`` or ``updated_after``, its last for ``timeMax`` or ``created_before``; None for
    any other field."""
    words = {w.lower() for w in re.findall(r"[A-Z]?[a-z]+", name)}
    if words & _STARTS and not words & _ENDS:
        return _dt.time(0, 0, 0)
    if words & _ENDS and not words & _STARTS:
        return _dt.time(23, 59, 59)
    return None


def _fix_time(value: str, layout: _Layout) -> Fix | Decline | None:
    try:
        moment = read_time(value)
    except ValueError as exc:
        return Decline(_STRATEGY, str(exc))
    fixed = moment.strftime(layout.layout or "%H:%M")
    if layout.pattern is not None and not matches_pattern(fixed, layout.pattern):
        return Decline(
            _STRATEGY, f"{shown(value)} read as {fixed!r}, which the field's pattern refuses"
        )
    if fixed == value:
        return None
    return Fix(_STRATEGY, fixed, 0.95, f"{shown(value)} read as {fixed}")


#: Eight digits in ISO order, a whole date written compactly (``20241026``): no bare number.
_COMPACT_DAY = re.compile(r"^\d{8}$")


_TIME_HINT = re.compile(r"\bHH:MM(:SS)?\b|\b24-hour\b", re.IGNORECASE)
#: A description that takes other writings besides the layout it names ("Accepts: ISO 8601,
#: relative dates (e.g. 'yesterday')"): no layout to impose.
_LENIENT = re.compile(r"\baccepts?\b[^.]{0,80}\b(?:relative|or|natural)\b|\brelative dates?\b",
                      re.IGNORECASE)  # fmt: skip
_ISO_HINT = re.compile(r"ISO[ -]?8601|RFC ?3339", re.IGNORECASE)
#: Renderings a pattern is tried on, to tell which layout it wants.
_SAMPLE = _dt.datetime(2024, 10, 26, 14, 5, 9)
_PATTERN_LAYOUTS: tuple[tuple[str, str, str], ...] = (
    ("time", "%H:%M", ""), ("time", "%H:%M:%S", ""),
    ("datetime", "%Y-%m-%dT%H:%M:%S", "none"), ("datetime", "%Y-%m-%dT%H:%M:%S+02:00", "zone"),
    ("datetime", "%Y-%m-%dT%H:%M:%SZ", "zone"),
)  # fmt: skip


def _layout(schema: Mapping[str, Any]) -> _Layout | None:
    """The layout the schema wants, from its ``format``, a description that names a layout
    (``DD/MM/YYYY``, ``HH:MM``, ``ISO 8601``), or the layouts its pattern accepts."""
    fmt = schema.get("format")
    pattern = schema.get("pattern") if isinstance(schema.get("pattern"), str) else None
    written = schema.get("x-strftime")  # a layout the tool's own error states
    if isinstance(written, str) and "%" in written:
        has_time = bool(re.search(r"%[HIMSp]", written))
        has_date = bool(re.search(r"%[Ydmby]", written))
        if has_time and not has_date:
            return _Layout("time", written, pattern=pattern)
        if has_date and has_time:
            return _Layout("stamp", written, pattern=pattern)
        if has_date:
            return _Layout("date", written, pattern=pattern)
    if fmt == "date-time":
        return _Layout("datetime", zone="required", pattern=pattern)
    if fmt == "time":
        return _Layout("time", "%H:%M:%S", pattern=pattern)
    if fmt == "date":
        return _Layout("date", "%Y-%m-%d", pattern=pattern)
    description = str(schema.get("description", ""))
    if pattern is not None:
        found = _from_pattern(pattern)
        if found is not None:
            return found
    for hint, layout in _HINTS:
        if hint in description.upper():
            return _Layout("date", layout, pattern=pattern)
    timed = _TIME_HINT.search(description)
    if timed:
        return _Layout("time", "%H:%M:%S" if timed.group(1) else "%H:%M", pattern=pattern)
    if _ISO_HINT.search(description) and not _LENIENT.search(description):
        return _Layout("iso", pattern=pattern)
    return None


def _from_pattern(pattern: str) -> _Layout | None:
    try:
        dates = {lay for _, lay in _HINTS if re.search(pattern, _SAMPLE.strftime(lay))}
        others = [(k, lay, z) for k, lay, z in _PATTERN_LAYOUTS
                  if re.search(pattern, _SAMPLE.strftime(lay))]  # fmt: skip
    except re.error:
        return None
    if dates and not others:
        return _Layout("date", dates.pop(), pattern=pattern) if len(dates) == 1 else None
    kinds = {k for k, _, _ in others}
    if kinds == {"time"}:
        return _Layout("time", others[0][1], pattern=pattern)
    if kinds == {"datetime"}:
        zones = {z for _, _, z in others}
        zone = (
            "optional"
            if zones == {"none", "zone"}
            else ("none" if zones == {"none"} else "required")
        )
        return _Layout("datetime", zone=zone, pattern=pattern)
    return None
