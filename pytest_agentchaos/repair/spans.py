"""An end the task gives as a length: "a one-hour interview starting 10:00" is a start and a
duration, and the missing ``end`` is the start plus the duration, written as the start is; or
as the other bound of a span of times it writes ("16:00-17:00", "from 2pm to 3pm") whose
first bound is the start's time of day."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["end_from_length", "end_from_range"]

_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "eight": 8, "ten": 10, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30,
    "forty-five": 45, "ninety": 90, "half an": 0.5, "half a": 0.5,
}  # fmt: skip
_UNITS = {"minute": 60, "min": 60, "hour": 3600, "hr": 3600, "day": 86400}
#: A length: "one-hour", "30-minute", "for 2 hours", "90 minutes", "half an hour", "1.5 h".
_LENGTH = re.compile(
    r"(?<![\w.])(?P<n>\d+(?:\.\d+)?|half an?|forty-five|[a-z]+)[\s-]+"
    r"(?P<unit>minutes?|mins?|hours?|hrs?|days?)(?:[\s-]+long)?\b"
    r"(?!\s+(?:before|after|earlier|later|ahead|prior|beforehand|in advance|ago|from now))",
    re.IGNORECASE,
)


def end_from_length(name: str, task: str, args: Mapping[str, Any]) -> tuple[Any, str] | None:
    """``(end, reason)`` for the missing field ``name`` (an end: ``end``, ``endTime``,
    ``end_date``...) when ``args`` holds its start and the task states one length; the end
    is written in the start's form (an ISO date-time, or an object holding one)."""
    start_name = _start_of(name)
    if start_name is None or start_name not in args:
        return None
    lengths = set()
    for match in _LENGTH.finditer(task[:4000]):
        count = _WORDS.get(match["n"].lower())
        if count is None:
            try:
                count = float(match["n"])
            except ValueError:
                continue
        unit = match["unit"].lower()
        lengths.add(count * _UNITS[unit[:-1] if unit.endswith("s") else unit])
    lengths.discard(0)
    if len(lengths) != 1:
        return None  # none, or several lengths: which is the event's is not for us to say
    length = _dt.timedelta(seconds=lengths.pop())
    end = _shifted(args[start_name], length)
    if end is None:
        return None
    return end, f"the task gives the length ({length}) from {start_name!r}"


def _start_of(name: str) -> str | None:
    """The start field paired with an end field's name, or None when it is no end."""
    for end, start in (("end", "start"), ("End", "Start"), ("END", "START"), ("until", "from")):
        match = re.search(rf"(?:^|_|(?<=[a-z])){end}(?:$|_|(?=[A-Z]))", name)
        if match:
            word = match.group(0).replace(end, start)
            return name[: match.start()] + word + name[match.end() :]
    return None


def _shifted(start: Any, length: _dt.timedelta) -> Any:
    if isinstance(start, str):
        try:
            moment = _dt.datetime.fromisoformat(start.replace("Z", "+00:00"))
        except ValueError:
            return None
        if "T" not in start.upper() and " " not in start.strip():
            return None  # a date alone: a length of hours says nothing of its end day
        text = (moment + length).isoformat()
        if start.endswith("Z") and text.endswith("+00:00"):
            text = text[:-6] + "Z"
        return text
    if isinstance(start, Mapping):
        keys = [k for k, v in start.items() if isinstance(v, str) and _shifted(v, length)]
        if len(keys) != 1:
            return None
        return {**start, keys[0]: _shifted(start[keys[0]], length)}
    return None


#: Two times of day bounding a span: "16:00-17:00", "2pm to 3pm", "from 9:30 am until 11".
_TIME = r"\d{1,2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?"
_SPAN = re.compile(
    rf"(?<![\w:.])(?P<a>{_TIME})\s*(?:-|–|—|~|to|until|till)\s*(?P<b>{_TIME})(?![\w:])",
    re.IGNORECASE,
)


def end_from_range(name: str, task: str, args: Mapping[str, Any]) -> tuple[Any, str] | None:
    """``(end, reason)`` for the missing end field ``name`` when ``args`` holds its start (an
    ISO date-time) and the task writes one span of times whose first bound is the start's
    time of day: the end is the same day at the second bound. None when the span would cross
    midnight (which day is not for us to say) or the task writes no such span, or several."""
    from .dates import read_time

    start_name = _start_of(name)
    if start_name is None or not isinstance(args.get(start_name), str):
        return None
    start = args[start_name]
    try:
        moment = _dt.datetime.fromisoformat(start.replace("Z", "+00:00"))
    except ValueError:
        return None
    if "T" not in start.upper() and " " not in start.strip():
        return None
    ends = set()
    text, at = task[:4000], 0
    while (match := _SPAN.search(text, at)) is not None:
        at = match.start("b")  # spans may share a bound: "1 to 16:00-17:00"
        a, b = match["a"], match["b"]
        half = re.search(r"[ap]\.?m\.?", b, re.I)
        if half is not None and not re.search(r"[ap]\.?m|:", a, re.I):
            a = a + half.group(0)  # "2 to 3pm": both in the afternoon
        try:
            first, second = read_time(a), read_time(b)
        except ValueError:
            continue
        if (first.hour, first.minute) == (moment.hour, moment.minute) and second > first.replace(
            tzinfo=second.tzinfo
        ):
            ends.add(moment.replace(hour=second.hour, minute=second.minute, second=second.second))
    if len(ends) != 1:
        return None
    text = ends.pop().isoformat()
    if start.endswith("Z") and text.endswith("+00:00"):
        text = text[:-6] + "Z"
    return text, f"the task writes the span's end after the start's time, {start_name!r}"
