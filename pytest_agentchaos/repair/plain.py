"""Whether arguments are JSON data the repairer can read, before it reads them.

A tool call's arguments come from a model, or from an agent that is hostile: sets, bytes,
objects whose ``repr`` or ``==`` raise, NaN, an int of 5,000 digits, keys that are not text,
values nested thousands deep or containing themselves. The repairer declines such arguments
with the reason (where, and what) instead of crashing the run: :func:`not_json` finds the
first one, walking without recursion and within a budget.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["MAX_DEPTH", "not_json"]

#: How deep arguments may nest (real ones: a handful of levels).
MAX_DEPTH = 128
#: How many values are looked at (real calls: a few dozen).
_BUDGET = 200_000
_MAX_DIGITS = 4000


def not_json(value: Any) -> str | None:
    """Why ``value`` is not JSON data the repairer reads (naming where), or None."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    ancestors: set[int] = set()  # the containers being walked: one seen again is a cycle
    seen = 0
    while stack:
        item, where, depth = stack.pop()
        if item is _LEAVE:
            ancestors.discard(depth)  # depth holds the id of the container left
            continue
        seen += 1
        if seen > _BUDGET:
            return f"more than {_BUDGET} values"
        at = (where or "the top")[-80:]
        if depth > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels (at {at})"
        kind = type(item)
        if item is None or kind is bool or kind is str:
            continue
        if kind is int:
            if item.bit_length() > _MAX_BITS:
                return f"a number of more than {_MAX_DIGITS} digits at {at}"
            continue
        if kind is float:
            if not math.isfinite(item):
                return f"{item!r} at {at}: not a JSON number"
            continue
        if kind is dict or kind is list:
            if id(item) in ancestors:
                return f"a value that contains itself at {at}"
            ancestors.add(id(item))
            stack.append((_LEAVE, where, id(item)))
            if kind is dict:
                for key, child in item.items():
                    if type(key) is not str:
                        return f"a key that is not text ({type(key).__name__}) at {at}"
                    stack.append((child, f"{where}.{key}" if where else key, depth + 1))
            else:
                stack.extend((child, f"{where}[{i}]", depth + 1) for i, child in enumerate(item))
            continue
        return f"a {kind.__name__} at {at}: not JSON data"
    return None


_LEAVE: Any = object()
_MAX_BITS = int(_MAX_DIGITS * 3.33)
