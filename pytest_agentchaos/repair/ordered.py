"""Spans: two sibling fields that bound one span by their names (``start`` / ``end``,
``min_price`` / ``max_price``, ``check_in`` / ``check_out``, ``created_gte`` /
``created_lte``).

Sent backwards (the end before the start), they are swapped only when the task gives the
order itself: it writes the value that becomes the start before the one that becomes the end
(``from 2pm to 3pm``, ``16:00-17:00``, ``between 10 and 20``). A span that may cross
midnight or a slip in one value is not for us to guess, so without that evidence the call is
left as it is (the tool's own check judges it).

Sent as one value under the bounds' shared name (``pay_period: "2026-11"`` for
``pay_period_start`` / ``pay_period_end``, dates), the span is its first and last day: a
month or a year, nothing coarser or vaguer.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterator, Mapping
from typing import Any

from .dates import DATE_PHRASE, read_date, read_time
from .paths import field_of
from .results import RepairStep
from .words import find_word, name_tokens

__all__ = ["STRATEGY", "split_spans", "unswap_ranges"]

STRATEGY = "range_order_correction"

#: The words that name a span's lower and upper bound in an identifier, in pairs.
_LOWER = frozenset({"start", "begin", "from", "since", "min", "minimum", "lower", "low",
                    "earliest", "after", "gte", "gt", "in", "first"})  # fmt: skip
_UPPER = frozenset({"end", "to", "until", "max", "maximum", "upper", "high", "latest",
                    "before", "lte", "lt", "out", "last"})  # fmt: skip
#: A time of day as a task writes it ("2pm", "9:30 am", "16:00").
_TIME_WORD = re.compile(
    r"(?<![\w:.])\d{1,2}(?::\d{2})?\s*(?:[ap]\.?m\.?)(?![\w])|(?<![\w:.])\d{1,2}:\d{2}(?![\w:])",
    re.IGNORECASE,
)


def _pairs(obj: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """``(lower key, upper key)`` of each two keys whose words differ in one bound word."""
    keys = [k for k in obj if isinstance(k, str)]
    words = {k: name_tokens(k) for k in keys}
    for low in keys:
        for high in keys:
            a, b = words[low], words[high]
            if low == high or len(a) != len(b) or not a:
                continue
            differ = [i for i in range(len(a)) if a[i] != b[i]]
            if len(differ) == 1 and a[differ[0]] in _LOWER and b[differ[0]] in _UPPER:
                yield low, high  # first_name / last_name: texts, never compared


def _comparable(value: Any) -> Any:
    """A value's place on its scale: a number, a date or a date-time; None for any other."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if not isinstance(value, str) or len(value) > 40:
        return None
    text = value.strip().replace("Z", "+00:00")
    try:
        stamp = _dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if stamp.tzinfo is None and re.search(r"[T ]\d", text):
        return stamp.replace(tzinfo=_dt.timezone.utc)  # both alike, compared alike
    return stamp


def _spots(value: Any, task: str, now: _dt.datetime | None) -> list[int]:
    """Where the task writes ``value``: a number as a word; a date-time by its time of day
    (or, at midnight, its day); a date by its day."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        written = str(int(value)) if float(value).is_integer() else str(value)
        spots, at = [], find_word(task, written)
        while at >= 0:
            spots.append(at)
            at = find_word(task, written, at + 1)
        return spots
    stamp = _comparable(value)
    if not isinstance(stamp, _dt.datetime):
        return []
    timed = "T" in value or " " in value.strip()
    if timed and (stamp.hour, stamp.minute) != (0, 0):
        found = []
        for match in _TIME_WORD.finditer(task):
            try:
                moment = read_time(match.group(0))
            except ValueError:
                continue
            if (moment.hour, moment.minute) == (stamp.hour, stamp.minute):
                found.append(match.start())
        return found
    found = []
    for match in DATE_PHRASE.finditer(task):
        try:
            day = read_date(match.group(0).rstrip(",."), now)[0]
        except ValueError:
            continue
        if day == stamp.date():
            found.append(match.start())
    return found


def unswap_ranges(
    args: Any, task: str | None, now: _dt.datetime | None, steps: list[RepairStep],
    path: tuple[str | int, ...] = (),
) -> None:  # fmt: skip
    """Each backward range in ``args`` (at any depth) swapped in place where the task writes
    its bounds in the other order (see the module); each swap two steps."""
    if isinstance(args, list):
        for i, item in enumerate(args):
            unswap_ranges(item, task, now, steps, (*path, i))
        return
    if not isinstance(args, dict):
        return
    for key, item in args.items():
        if isinstance(item, (dict, list)):
            unswap_ranges(item, task, now, steps, (*path, key))
    if not task:
        return
    text = task[:4000]
    for low, high in list(_pairs(args)):
        first, last = _comparable(args[low]), _comparable(args[high])
        if first is None or last is None or type(first) is not type(last):
            continue
        try:
            backwards = last < first
        except TypeError:  # a date-time with a zone against one without
            continue
        if not backwards:
            continue
        start_spots = _spots(args[high], text, now)
        end_spots = _spots(args[low], text, now)
        if not start_spots or not end_spots or min(start_spots) >= min(end_spots):
            continue  # the task does not write them in the swapped order
        why = (
            f"{low!r} and {high!r} bound one span, sent end before start; the task writes "
            f"{args[high]!r} first"
        )
        args[low], args[high] = args[high], args[low]
        for key in (low, high):
            other = args[high] if key == low else args[low]
            steps.append(RepairStep(field_of((*path, key)), "order", STRATEGY, other,
                                    args[key], 0.9, why, True))  # fmt: skip


_MONTH = re.compile(r"^\s*(\d{4})[-/.](\d{1,2})\s*$")
_YEAR = re.compile(r"^\s*(\d{4})\s*$")


def _days_of(value: Any) -> tuple[_dt.date, _dt.date] | None:
    """The first and last day of a month (``2026-11``) or a year (``2026``) written as one."""
    if not isinstance(value, str):
        return None
    month = _MONTH.match(value)
    if month is not None:
        year, number = int(month[1]), int(month[2])
        if not 1 <= number <= 12 or not 1900 <= year <= 2200:
            return None
        following = _dt.date(year + number // 12, number % 12 + 1, 1)
        return _dt.date(year, number, 1), following - _dt.timedelta(days=1)
    whole = _YEAR.match(value)
    if whole is not None and 1900 <= int(whole[1]) <= 2200:
        return _dt.date(int(whole[1]), 1, 1), _dt.date(int(whole[1]), 12, 31)
    return None


def split_spans(args: dict[str, Any], schema: Mapping[str, Any], steps: list[RepairStep]) -> None:
    """A span sent under its bounds' shared name, as the bounds (see the module), in place;
    at the top of the call, for two date fields the call lacks."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return
    for low, high in list(_pairs({k: None for k in props})):
        if low in args or high in args:
            continue
        if any(
            props[k].get("format") != "date" for k in (low, high) if isinstance(props[k], Mapping)
        ):
            continue
        a, b = name_tokens(low), name_tokens(high)
        shared = tuple(w for w, v in zip(a, b, strict=True) if w == v)
        sent = [k for k in args if k not in props and name_tokens(k) == shared]
        if len(sent) != 1 or not shared:
            continue
        days = _days_of(args[sent[0]])
        if days is None:
            continue
        value = args.pop(sent[0])
        why = f"{sent[0]} {value!r} is the span from {days[0]} to {days[1]}"
        for key, day in zip((low, high), days, strict=True):
            args[key] = day.isoformat()
            steps.append(RepairStep(field_of((key,)), "missing", STRATEGY, value,
                                    args[key], 0.9, why, True))  # fmt: skip
