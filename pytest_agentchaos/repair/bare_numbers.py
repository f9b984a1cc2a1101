"""A bare number sent where text is due that is more than digits: a date or a time of day
(read from the task's evidence, or declined), an id whose description's example has a prefix
of letters (declined: which prefix is not ours to guess), and digits the task writes inside
a longer token (the ``0007`` of ``ORD-0007``, which are that token's)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .fixes import Context, Decline, Fix

__all__ = [
    "example_shape",
    "number_for_a_day",
    "prefixed_example",
    "standalone",
    "task_spelling",
]


def standalone(text: str, at: int) -> bool:
    """Whether the token starting at ``at`` stands on its own: not the digits after a joining
    mark of a longer token (``ORD-7``, ``v/7``, ``A:7``)."""
    return not (at >= 2 and text[at - 1] in "-_/:#" and text[at - 2].isalnum())


#: An example a description gives of its values ("e.g. ORD-0001", "for example BK-20455").
_EXAMPLE = re.compile(
    r"\b(?:e\.g\.|for example|for instance|example:|such as|like)\s*,?\s*['\"`]?"
    r"(?P<x>[A-Za-z][A-Za-z0-9]*[-_:#/]?\d[\w-]*)",
    re.IGNORECASE,
)


def prefixed_example(description: str) -> str | None:
    """The description's example of the field's values when it is an id with a prefix of
    letters before its digits (``ORD-0001``, ``usr_42``, ``BK20455``): a bare number lacks
    that prefix, and which one it is cannot be guessed."""
    match = _EXAMPLE.search(description[:2000])
    if match is None:
        return None
    example = match["x"]
    return example if re.match(r"[A-Za-z]+[-_:#/]?\d", example) else None


def example_shape(description: str) -> re.Pattern[str] | None:
    """The shape of the ids a description's prefixed example shows (``SNS-000231`` ->
    capitals, a hyphen, digits), as a regex a value of the field must match whole; None
    when the description gives no such example."""
    example = prefixed_example(description)
    if example is None:
        return None
    parts = []
    for run in re.findall(r"[A-Z]+|[a-z]+|\d+|.", example):
        if run.isdigit():
            parts.append(r"\d+")
        elif run.isupper():
            parts.append("[A-Z]+")
        elif run.islower():
            parts.append("[a-z]+")
        else:
            parts.append(re.escape(run))
    return re.compile("".join(parts))


def _task_gives_day(compact: str, ctx: Context) -> bool:
    """Whether the task writes the day ``compact`` (YYYYMMDD) reads as, in any layout."""
    import datetime as _dt

    from .dates import DATE_PHRASE, read_date

    task = (ctx.task or "")[:4000]
    if compact in task:
        return True
    try:
        day = _dt.date(int(compact[:4]), int(compact[4:6]), int(compact[6:]))
    except ValueError:
        return False
    for phrase in DATE_PHRASE.finditer(task):
        try:
            if read_date(phrase.group(0).rstrip(",."), ctx.now)[0] == day:
                return True
        except ValueError:
            continue
    return day.isoformat() in task


def number_for_a_day(text: str, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline | None:
    """A number sent for a field whose description or layout asks for a date or a time:
    read by :func:`~.date_layouts.fix_date` (from the task's evidence, or declined), never
    left as the text of a number. None for any other field."""
    from .date_layouts import fix_date, wants_a_day

    if not wants_a_day(schema):
        return None
    if re.fullmatch(r"\d{8}", text):  # a whole date written compactly: the task must give it
        if _task_gives_day(text, ctx):
            return None
        return Decline(
            "date_format_correction",
            f"the number {text} reads as a date, and the task gives no such date: the model's, "
            "not the user's",
        )
    fixed = fix_date(text, schema, ctx)
    if fixed is None:
        return Fix(
            "schema_type_conversion", text, 0.9, f"the number {text} as the text its layout writes"
        )
    return fixed


def task_spelling(value: float, text: str, task: str | None) -> str | None:
    """The one way the task writes ``value`` when it is not ``text``: the digits a number
    drops (``02134`` sent as 2134, a timestamp's ``.123400`` as ``.1234``). Digits inside a
    longer token (the ``0007`` of ``ORD-0007``) are that token's, not a writing of the
    number."""
    if not task:
        return None
    head = task[:4000]
    spellings = {
        match.group(0)
        for match in re.finditer(r"(?<![\w.,])[-+]?\d+(?:\.\d+)?(?![\w]|[.,]\d)", head)
        if match.group(0) != text
        and float(match.group(0)) == value
        and standalone(head, match.start())
    }
    return spellings.pop() if len(spellings) == 1 else None
