"""The environment's state after a step (``observe(..., state=...)``), as the halt monitor
keeps it: a bounded plain copy and a key that is equal for the same state.

A state is whatever a harness logs (a board, a page, a plan, a file's hash): any value, even
one that is recursive, unhashable, huge or whose ``repr`` raises. The copy reads at most
:data:`MAX_NODES` values and :data:`MAX_CHARS` characters of text, to :data:`MAX_DEPTH`
levels; a value seen again inside itself is ``"<cycle>"``. Volatile details (timestamps, ids,
durations, per-call fields by name) are masked, so a state that only ticks a clock is the same
state.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
from collections.abc import Mapping
from itertools import islice
from typing import Any

from ..escape.normalize import mask
from ..saferepr import safe_str

__all__ = ["MAX_CHARS", "MAX_DEPTH", "MAX_NODES", "plain", "state_key"]

MAX_NODES = 5000
MAX_CHARS = 200_000
MAX_DEPTH = 24
_LEAF = 2000  # characters of one string or of one object's text


class _Budget:
    def __init__(self) -> None:
        self.nodes = MAX_NODES
        self.chars = MAX_CHARS


def plain(value: Any) -> Any:
    """A bounded plain-data copy of ``value`` (dicts with string keys, lists, strings,
    numbers, booleans, None)."""
    return _plain(value, _Budget(), 0, set())


def _plain(value: Any, budget: _Budget, depth: int, stack: set[int]) -> Any:
    budget.nodes -= 1
    if budget.nodes < 0 or budget.chars < 0:
        return "<more>"
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) < 10**18 else safe_str(value, 40)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (str, bytes)):
        text = value[:_LEAF] if isinstance(value, str) else safe_str(value[:_LEAF], _LEAF)
        budget.chars -= len(text)
        return text
    if depth >= MAX_DEPTH:
        return "<deep>"
    if id(value) in stack:
        return "<cycle>"
    stack.add(id(value))
    try:
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            try:
                items = list(islice(value.items(), MAX_NODES))
            except Exception:
                return safe_str(value, _LEAF)
            for key, item in items:
                if budget.nodes < 0:
                    break
                name = key if isinstance(key, str) else safe_str(key, 200)
                out[name] = _plain(item, budget, depth + 1, stack)
            return out
        if isinstance(value, (list, tuple)):
            return [_plain(item, budget, depth + 1, stack) for item in islice(value, MAX_NODES)]
        if isinstance(value, (set, frozenset)):
            items = [_plain(item, budget, depth + 1, stack) for item in islice(value, MAX_NODES)]
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, default=str))
        text = safe_str(value, _LEAF)
        budget.chars -= len(text)
        return text
    finally:
        stack.discard(id(value))


def state_key(value: Any) -> str:
    """A short key of ``value`` as a state: equal for equal states (key order, volatile
    details aside), bounded work for any input."""
    copy = plain(value)
    with contextlib.suppress(Exception):  # best effort: the copy is plain data already
        copy = mask(copy)
    text = json.dumps(copy, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=12).hexdigest()
