"""A value where a list is due: a list sent as JSON text, a wildcard ("all", "*") expanded to the
values the items' enum lists, text joined with commas split where the schema or the task says
the parts are several, and one value wrapped as a one-item list unless the schema or the task
says there are several (a count before the field's name, another token shaped as its items)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .fixes import Context, Decline, Fix
from .words import find_word

__all__ = ["expand_wildcard", "is_wildcard", "to_array"]


def _no(reason: str) -> Decline:
    return Decline("schema_type_conversion", reason)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def to_array(value: Any, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline | None:
    """``value`` where the schema asks for a list (see the module's docstring)."""
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            parsed = json.loads(value)
        except ValueError:
            return _no(f"{_short(value)} looks like a list but is not valid JSON")
        if isinstance(parsed, list):
            return Fix("schema_type_conversion", parsed, 0.95, "the list was sent as JSON text")
    if is_wildcard(value):
        return expand_wildcard(value, schema, ctx.task)
    minimum = schema.get("minItems")
    if isinstance(minimum, int) and minimum > 1:
        return Decline("wrap_in_list", f"one value where at least {minimum} are asked for")
    several = _several_in_task(ctx)
    if several:
        return Decline("wrap_in_list", f"the task names {several} of them; one value is given")
    other = _another_item_in_task(value, schema.get("items"), ctx.task)
    if other is not None:
        return Decline(
            "wrap_in_list",
            f"the task also writes {other!r}, shaped as an item of this list: one item is given",
        )
    if value is None or value == "" or (isinstance(value, (list, dict)) and not value):
        return _no(f"{_short(value)} is empty: there is nothing to put in a list")
    if isinstance(value, str) and _JOINED.search(value):
        return _split(value, schema, ctx)
    if isinstance(value, str) and re.search(r"\s(?:and|&)\s", value):
        parts = [p.strip() for p in re.split(r",\s*|\s+(?:and|&)\s+", value) if p.strip()]
        if _enumerated(parts, ctx.task):  # "Alice and Bob", as the task lists them
            return Fix("wrap_in_list", parts, 0.9, f"the task names {len(parts)} of them")
        return Decline("wrap_in_list", f"{_short(value)} may name several, or be one name")
    if isinstance(value, dict):
        from .compound import entries_as_items

        entries = entries_as_items(value, schema.get("items"))
        if entries is not None:
            return entries
    return Fix(
        "wrap_in_list", [value], 0.9, f"one value where a list is asked for: [{_short(value)}]"
    )


#: Quantifiers that ask for every value rather than name one (a closed class of English).
_WILDCARDS = frozenset({"all", "any", "every", "everything", "anything", "each", "*"})


def is_wildcard(value: Any) -> bool:
    """Whether ``value`` is a wildcard ("all", "*") rather than a value."""
    return isinstance(value, str) and value.strip().lower() in _WILDCARDS


def expand_wildcard(
    value: Any, schema: Mapping[str, Any], task: str | None = None
) -> Fix | Decline:
    """A wildcard where a list is asked for: every value the items' enum lists, else declined
    (a one-item list ``["all"]`` would name a thing called "all"); declined too when the task
    names some of the listed values and not the others (it asked for those)."""
    items = schema.get("items")
    allowed = items.get("enum") if isinstance(items, Mapping) else None
    if isinstance(allowed, list) and allowed and task:
        text = task.casefold()
        named = [v for v in allowed if isinstance(v, str) and find_word(text, v.casefold()) >= 0]
        if named and len(named) < len(allowed):
            return Decline("wrap_in_list", f"{_short(value)} asks for every listed value, "
                           f"but the task names only {', '.join(map(repr, named))}")  # fmt: skip
    if isinstance(allowed, list) and allowed and not _limited(schema, len(allowed)):
        return Fix("wrap_in_list", list(allowed), 0.9,
                   f"{_short(value)} asks for every listed value")  # fmt: skip
    return Decline(
        "wrap_in_list",
        f"{_short(value)} asks for everything, and the schema lists nothing to expand it to",
    )


def _limited(schema: Mapping[str, Any], count: int) -> bool:
    most = schema.get("maxItems")
    return isinstance(most, int) and most < count


_JOINED = re.compile(r"[,;|]")


def _split(value: str, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline:
    """Text that may be several values joined: split only where every part is one of the
    items' enum values, or where the task enumerates the parts ("assign it to octocat and
    hubot"); else it may be one value with a comma in it ("Paris, France"), or several."""
    items = schema.get("items")
    allowed = items.get("enum") if isinstance(items, Mapping) else None
    parts = [p.strip() for p in _JOINED.split(value)]
    if isinstance(allowed, list) and parts and all(p in allowed for p in parts):
        return Fix("wrap_in_list", parts, 0.9, f"{_short(value)} lists {len(parts)} allowed values")
    if all(parts) and _enumerated(parts, ctx.task):
        return Fix("wrap_in_list", parts, 0.9, f"the task names {len(parts)} of them, one by one")
    return Decline(
        "wrap_in_list",
        f"{_short(value)} may be several values joined into one text, or one value: "
        "which is not for us to tell",
    )


def _enumerated(parts: list[str], task: str | None) -> bool:
    """Whether the task lists ``parts`` as several, with an "and", "or" or "&" before the last
    ("documentation and good first issue"); a comma alone may join one value ("Paris,
    France")."""
    if not task or len(parts) < 2 or len(parts) > 20:
        return False
    comma = r",\s*"
    last = r"(?:,\s*)?\s(?:and|or|&)\s+"
    pattern = comma.join(map(re.escape, parts[:-1])) + last + re.escape(parts[-1])
    return re.search(rf"(?<!\w){pattern}(?!\w)", task[:4000], re.IGNORECASE) is not None


_COUNT = re.compile(
    r"\b(\d+|two|three|four|five|six|seven|eight|nine|ten|several|multiple|both)"
    r"((?:\s+\w+){1,3})",
    re.IGNORECASE,
)


def _another_item_in_task(value: Any, items: Any, task: str | None) -> str | None:
    """A token of the task shaped as this list's items are by their pattern (the item's own,
    or its object's id field's), other than the one value sent: the task names more items
    than the one a one-item list would send."""
    if not task or not isinstance(items, Mapping):
        return None
    pairs: list[tuple[Any, Any]] = [(value, items.get("pattern"))]
    props = items.get("properties")
    if isinstance(value, dict) and isinstance(props, Mapping):
        pairs = [(value.get(k), sub.get("pattern")) for k, sub in props.items()
                 if isinstance(sub, Mapping)]  # fmt: skip
    for sent, pattern in pairs:
        if not isinstance(sent, str) or not isinstance(pattern, str):
            continue
        try:
            shaped = re.compile(pattern)
        except re.error:
            continue
        for token in re.findall(r"[\w][\w./:@-]*[\w]", task[:4000]):
            if token.casefold() != sent.casefold() and shaped.fullmatch(token):
                return str(token)
    return None


def _several_in_task(ctx: Context) -> str | None:
    """A count of two or more that the task puts before the field's name ("two cities",
    "3 passengers"), or None."""
    if not ctx.task or not ctx.name:
        return None
    words = {w for w in re.split(r"[_\W]+", ctx.name.lower()) if len(w) > 2}
    stems = {w.rstrip("s") for w in words}
    task = ctx.task[:4000]
    for match in _COUNT.finditer(task):
        count = match[1].lower()
        # the count's noun may come after a word or two ("two big cities")
        if count not in ("1", "0") and any(
            w.lower().rstrip("s") in stems for w in match[2].split()
        ):
            return count
    return None
