"""Values a tool refused for reasons its schema does not hold, read against the task.

A tool's error can say more than the schema: a date is ``past`` (a model that guessed last
year), two parameters are ``exclusive`` (the filesystem server's head and tail), or the tool
``rejected`` a value and says no more (GitHub's 422 ``{"field": "base", "code": "invalid"}``).
Each is repaired only from what the task's own words settle, else declined:

- a past date: the next such day, when the task names the day without its year;
- an exclusive pair: the parameter whose description the task's words speak of is kept;
- a rejected value: the task's own form of it, when the call decorated it (``@octocat`` for
  ``octocat``, ``origin/feature/login`` for ``feature/login``), or the value the task gives
  where the field's description says how ("pulled into" and "into main"), when the refused
  value is nowhere in the task.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .codes import recode
from .fixes import DROP, Context, Decline, Fix, shown
from .infer import cued_value, strings_in
from .paths import get
from .reconcile import reconcile, stated
from .spec import Problem

__all__ = ["exclusive_pair", "fix_past", "fix_rejected", "keep_of_pair", "narrow_refused"]

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = r"(?P<month>jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
#: A day and month the task writes, with the year when it gives one.
_DAY_MONTH = re.compile(
    rf"\b(?:{_DAY}\s+(?:of\s+)?{_MONTH}|{_MONTH.replace('month', 'month2')}\s+"
    rf"{_DAY.replace('day', 'day2')})(?:,?\s+(?P<year>\d{{4}}))?\b",
    re.IGNORECASE,
)


#: A yearless day that passed this recently (a month) is the day past the user meant, not
#: the one a year away: the tool's refusal stands.
_RECENT_DAYS = 31


def fix_past(value: Any, ctx: Context) -> Fix | Decline:
    """A date the tool says is past, moved to the next such day when the task names the day
    and month without a year (the model filled in a year the user did not say)."""
    what = "date_year_correction"
    if not isinstance(value, str) or ctx.now is None:
        return Decline(what, f"{shown(value)} is past, and no clock says what comes next")
    match = re.match(
        r"^(\d{4})-(\d{2})-(\d{2})((?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?"
        r"(?:[Zz]|[+-]\d{2}:?\d{2})?)?)$",
        value.strip()[:64],
    )
    if match is None:
        return Decline(what, f"{shown(value)} is past, and is no ISO date to move")
    month, day = int(match[2]), int(match[3])
    named = _task_days(ctx.task or "", month, day)
    if not named:
        return Decline(what, f"{shown(value)} is past, and the task does not name that day")
    if any(year is not None for year in named):
        return Decline(what, f"{shown(value)} is past, and the task gives its year: it is past")
    today = ctx.now.date()
    year = today.year
    try:
        moved = _dt.date(year, month, day)
        ago = (today - moved).days
        if moved < today:
            moved = _dt.date(year + 1, month, day)
    except ValueError:  # 29 February of a year that has none
        return Decline(what, f"{shown(value)}: that day is not in the coming year")
    if 0 < ago <= _RECENT_DAYS:
        return Decline(what, f"{shown(value)} is past: the day the task names was {ago} days "
                       f"ago, and {moved} is a year from what was asked")  # fmt: skip
    fixed = moved.isoformat() + match[4]
    if fixed == value:
        return Decline(what, f"{shown(value)} is the next such day already")
    reason = f"{shown(value)} is past; the task names the day without a year: the next is {moved}"
    return Fix(what, fixed, 0.9, reason)


def _task_days(task: str, month: int, day: int) -> list[int | None]:
    """The years (None where not given) of each mention of ``day``/``month`` in the task."""
    found: list[int | None] = []
    for match in _DAY_MONTH.finditer(task[:4000]):
        name = (match["month"] or match["month2"]).lower()[:3]
        written = int(match["day"] or match["day2"])
        if _MONTHS.index(name) + 1 == month and written == day:
            found.append(int(match["year"]) if match["year"] else None)
    return found


def keep_of_pair(
    names: list[str], properties: Mapping[str, Any], task: str | None
) -> tuple[str, str, str] | Decline:
    """Of parameters a tool will not take together, ``(kept, dropped, why)``: the kept one is
    the one whose own words (name and description, less what both share) the task uses."""
    what = "drop_exclusive_key"
    if len(names) != 2 or not task:
        return Decline(what, f"the tool will not take {' and '.join(names)} together, and no "
                       "task says which is meant")  # fmt: skip
    words = [_words(f"{n} {_description(properties.get(n))}") for n in names]
    asked = _words(task)
    own = [words[0] - words[1], words[1] - words[0]]
    scores = [len(own[0] & asked), len(own[1] & asked)]
    if scores[0] == scores[1]:
        return Decline(what, f"the tool will not take {names[0]!r} and {names[1]!r} together, "
                       "and the task does not say which it means")  # fmt: skip
    kept = 0 if scores[0] > scores[1] else 1
    said = ", ".join(sorted(own[kept] & asked)[:3])
    return names[kept], names[1 - kept], f"the task says {said}, as {names[kept]!r} does"


def exclusive_pair(
    problem: Problem, current: Mapping[str, Any], properties: Mapping[str, Any], task: str | None
) -> tuple[Problem, Fix | Decline]:
    """Two parameters the tool will not take together (``problem.expected``): a fix that
    drops the one the task does not speak of, with the problem moved to it; else a decline."""
    names = [str(n) for n in problem.expected or ()]
    given = [n for n in names if n in current]
    if len(given) < 2:
        return problem, Decline("drop_exclusive_key", "the call holds only one of them")
    chosen = keep_of_pair(given, properties, task)
    if isinstance(chosen, Decline):
        return problem, chosen
    _kept, dropped, why = chosen
    moved = dataclasses.replace(problem, path=(dropped,), schema={})
    return moved, Fix("drop_exclusive_key", DROP, 0.85, why)


def fix_rejected(
    value: Any, schema: Mapping[str, Any], ctx: Context, *, not_found: bool = False
) -> Fix | Decline:
    """A value the tool refused without saying why, replaced by what the task says in its
    place, else declined. ``not_found``: the tool says it does not have the value; one the
    task writes as sent (its sigil too) is then genuinely not there."""
    what = "rejected_value_correction"
    if isinstance(value, list) and len(value) > _MOST_ITEMS or _longest(value) > _LONGEST:
        return Decline(what, f"the tool refused {shown(value)}, too long a value to read")
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        items = [_undecorated(v, ctx.task or "") for v in value]
        if any(i is not None for i in items):
            fixed = [i if i is not None else v for i, v in zip(items, value, strict=True)]
            return Fix(what, fixed, 0.85, f"{shown(value)} without what the task does not "
                       f"write: {shown(fixed)}")  # fmt: skip
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        each = _reconciled_items(value, schema, ctx)
        if each is not None:
            return each
    # "DE" where the tool takes "Germany"; not for a value the tool says it does not have
    # and the task writes as sent ("India" for a city search: no city, not a country code)
    as_written = not_found and isinstance(value, str) and stated(value, ctx.task or "")
    coded = None if as_written else recode(value, schema, ctx, refused=True)
    if isinstance(coded, Fix):
        return coded
    reconciled = reconcile(value, schema, ctx)
    if isinstance(reconciled, Fix) and not_found and _into_words(value, reconciled.value):
        # "Collection support_article not found" and the task's "the support article
        # collection": prose describing the thing, no other name of it the tool may have
        return Decline(
            what,
            f"the tool has no {shown(value)}; the task's words {reconciled.value!r} describe "
            "it, they name no other value",
        )
    if isinstance(reconciled, Fix):
        return reconciled
    if not isinstance(value, str) or not ctx.task:
        return reconciled or Decline(what, f"the tool refused {shown(value)} and does not say why")
    # a value the task writes as it was sent (its sigil too) is not the task's decoration
    as_sent = not_found and _in_task(value, ctx.task)
    plain = None if as_sent else _undecorated(value, ctx.task)
    if plain is not None:
        reason = f"the tool refused {shown(value)}; the task writes {shown(plain)}"
        return Fix(what, plain, 0.85, reason)
    if not _in_task(value, ctx.task):
        others = strings_in({k: v for k, v in ctx.args.items() if k != ctx.name})
        cued = cued_value(ctx.name, schema, ctx.task, others)
        if cued is not None and cued[0] != value:
            reason = (f"the tool refused {shown(value)}, which the task does not say; the task "
                      f"says {cued[1]!r}")  # fmt: skip
            return Fix(what, cued[0], 0.85, reason)
    return reconciled or Decline(what, f"the tool refused {shown(value)} and does not say why")


def _into_words(value: Any, repaired: Any) -> bool:
    """Whether ``repaired`` turns an identifier (a text without whitespace) into words."""
    return (
        isinstance(value, str)
        and isinstance(repaired, str)
        and not any(c.isspace() for c in value)
        and any(c.isspace() for c in repaired.strip())
    )


def _reconciled_items(
    value: list[str], schema: Mapping[str, Any], ctx: Context
) -> Fix | Decline | None:
    """A refused list whose items the task spells otherwise (``["Bug"]`` where it writes "the
    bug label"): each item reconciled with the task on its own; items the task writes as
    sent stay. None where no item relates to the task; a decline where one is ambiguous."""
    items = schema.get("items")
    item_schema = items if isinstance(items, Mapping) else {}
    fixed: list[str] = []
    for item in value:
        found = reconcile(item, item_schema, ctx)
        if isinstance(found, Fix) and isinstance(found.value, str) and found.value not in value:
            fixed.append(found.value)
        elif isinstance(found, Decline) and not stated(item, ctx.task or ""):
            return found
        else:
            fixed.append(item)
    if fixed == value or len(set(fixed)) < len(fixed):
        return None
    return Fix("rejected_value_correction", fixed, 0.85,
               f"{shown(value)} as the task spells them: {shown(fixed)}")  # fmt: skip


def narrow_refused(
    problems: Sequence[Problem], args: Mapping[str, Any], task: str | None
) -> list[Problem]:
    """Of several values one error refuses in prose ("the stock code or date is not in the
    database"), those the task writes exactly as they were sent are what the user asked; the
    others are the ones to read against the task. All are kept when each, or none, is
    written as sent."""
    refused = [p for p in problems if p.source == "error" and p.keyword == "error_prose"]
    if len(refused) < 2 or not task:
        return list(problems)
    as_sent = [
        p for p in refused
        if isinstance(get(args, p.path), str) and stated(str(get(args, p.path)), task)
    ]  # fmt: skip
    if not as_sent or len(as_sent) == len(refused):
        return list(problems)
    return [p for p in problems if p not in as_sent]


_LONGEST = 500  # a longer text is no name or identifier to read against the task
_MOST_ITEMS = 100


def _longest(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return max((len(v) for v in value if isinstance(v, str)), default=0)
    return 0


#: Marks that decorate a name without being part of it: a mention's @, a channel's #.
_SIGILS = re.compile(r"^[@#$~]+$")
#: A token of the task: a word, or words joined by / . : - + (a branch, a path, an id).
_TOKEN = re.compile(r"[^\W_][\w./:+-]*[^\W_]|[^\W_]")


def _undecorated(value: str, task: str) -> str | None:
    """The one token of ``task`` that ``value`` holds with only a decoration the task does not
    write around it: a sigil (``@octocat``) or a prefix or suffix of words the task never
    uses (``origin/`` before ``feature/login``)."""
    found = set()
    for token in set(_TOKEN.findall(task[:4000])):
        if token == value or len(token) < 2 or token not in value:
            continue
        if value.endswith(token):
            rest = value[: -len(token)]
            joint = rest[-1:] if rest else ""
        elif value.startswith(token):
            rest = value[len(token) :]
            joint = rest[:1]
        else:
            continue
        if _SIGILS.match(rest) or (
            joint in "/:@#" and not any(_in_task(w, task) for w in re.findall(r"\w+", rest))
        ):
            found.add(token)
    # the longest reading wins where one token holds another (feature/login over login)
    longest = [t for t in found if not any(t != o and t in o for o in found)]
    if len(longest) != 1:
        return None
    token = str(longest[0])
    # words before a sigil the task writes too ("the #ops" where it writes "#ops"): the
    # words are the decoration, the sigil is the task's own spelling
    for sigil in "@#":
        marked = sigil + token
        if value != marked and value.endswith(marked) and _in_task(marked, task):
            return marked
    return token


def _in_task(word: str, task: str) -> bool:
    return bool(re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", task[:4000], re.IGNORECASE))


_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "and",
        "or",
        "is",
        "are",
        "be",
        "if",
        "only",
        "this",
        "that",
        "it",
        "its",
        "your",
        "you",
    ]
)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if w not in _STOP and len(w) > 1}


def _description(schema: Any) -> str:
    return str(schema.get("description", ""))[:1000] if isinstance(schema, Mapping) else ""
