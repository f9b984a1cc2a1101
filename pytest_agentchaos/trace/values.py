"""What the trace keeps of a value: plain JSON data, bounded in size and depth, never failing.

An agent's tool may return anything: a 10 MB string, an object whose ``repr`` raises, a list
nested 2,000 deep, a structure that contains itself. :func:`capture` turns any of them into JSON
data the trace can hold, compare, digest and write: containers are copied (so later mutation by
the agent cannot rewrite history), other objects become their (safe, capped) ``repr``, and a
value whose JSON text exceeds the limit is replaced by a :data:`TRUNCATED` marker that keeps a
head of its text, its size and a digest of the whole, so equal values still compare equal.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

from ..saferepr import MAX_REPR, safe_repr
from ..saferepr import type_name as _type_name

__all__ = ["DEFAULT_MAX_VALUE", "MAX_DEPTH", "TRUNCATED", "capture", "deep_digest"]

#: Default cap on one recorded value: 64 KiB of JSON text.
DEFAULT_MAX_VALUE = 64 * 1024
#: Containers nested deeper than this are cut (the cut part keeps a digest of its content).
MAX_DEPTH = 32
#: The key of the marker that stands for a value cut to the size limit.
TRUNCATED = "$truncated"

_LEAVES = (str, int, float, bool, type(None))
_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, check_circular=False)


def capture(value: Any, limit: int = DEFAULT_MAX_VALUE) -> Any:
    """``value`` as JSON data of at most ``limit`` characters of JSON text (see the module doc).

    Cheap for the common cases: flat arguments are copied in one pass; other JSON-native values
    are encoded and decoded by the C JSON codec (which copies them and measures them at once);
    anything else takes the slow, careful path.
    """
    kind = type(value)
    if kind is str:
        return value if len(value) <= limit >> 3 else _from_text(value, _dumps(value), limit)
    if kind in _LEAVES:
        return _finite(value) if kind is float else value
    if kind is dict:
        # The hot path: a flat dict of short leaves (tool arguments, small results).
        size = 0
        for k, v in value.items():
            t = type(v)
            if type(k) is not str or (t is not str and t not in _LEAVES) or t is float:
                break
            size += len(k) + (len(v) if t is str else 8) + 6
        else:
            if size <= limit >> 3:
                return dict(value)
    if kind is dict or kind is list or kind is tuple:
        try:
            text = _dumps(value)
        except (TypeError, ValueError, RecursionError):
            pass  # not JSON data (an object, NaN, a cycle, too deep): the careful path
        else:
            return _from_text(value, text, limit) if len(text) > limit else json.loads(text)
    return _bounded(_plain(value, 0, set()), limit)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _from_text(value: Any, text: str, limit: int) -> Any:
    """``value`` (whose JSON text is ``text``) as itself when it fits, else a marker."""
    if len(text) <= limit:
        return value
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    head = text[: max(0, limit - 200)]
    return {TRUNCATED: "size", "size": len(text), "digest": digest, "head": head}


def _finite(value: float) -> Any:
    # JSON has no NaN or infinity; keep them readable and stable.
    return value if math.isfinite(value) else repr(value)


def _plain(value: Any, depth: int, path: set[int]) -> Any:
    """``value`` as JSON data without a size limit: copies containers, cuts depth and cycles."""
    kind = type(value)
    if kind in _LEAVES:
        return _finite(value) if kind is float else value
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value[: MAX_REPR * 4]) if len(value) > MAX_REPR * 4 else bytes(value)
        text = raw.decode("utf-8", "replace")
        return text if len(raw) == len(value) else _marker(value, text, len(value))
    if isinstance(value, _LEAVES):  # str / int / float subclasses (enums, numpy scalars...)
        return _plain(_leaf(value), depth, path)
    is_mapping = isinstance(value, Mapping)
    is_sequence = isinstance(value, (list, tuple, set, frozenset))
    if not (is_mapping or is_sequence):
        return safe_repr(value)
    if id(value) in path:
        return f"<cycle: {_type_name(value)}>"
    if depth >= MAX_DEPTH:
        return {TRUNCATED: "depth", "type": _type_name(value), "digest": deep_digest(value)}
    path.add(id(value))
    try:
        if is_mapping:
            out: dict[str, Any] = {}
            for k, v in _items(value):
                out[k if type(k) is str else _key(k)] = _plain(v, depth + 1, path)
            return out
        items = [_plain(v, depth + 1, path) for v in _iterate(value)]
        if isinstance(value, (set, frozenset)):  # order must not depend on PYTHONHASHSEED
            items.sort(key=lambda v: json.dumps(v, sort_keys=True, default=str))
        return items
    finally:
        path.discard(id(value))


def _leaf(value: Any) -> Any:
    for base in (bool, int, float, str):
        if isinstance(value, base):
            try:
                return base(value)
            except Exception:
                return safe_repr(value)
    return safe_repr(value)  # pragma: no cover - only called for leaf subclasses


def _key(key: Any) -> str:
    if isinstance(key, (int, float, bool)) or key is None:
        return json.dumps(key)  # what json.dumps makes of such a key
    return key if isinstance(key, str) else safe_repr(key)


def _items(mapping: Any) -> list[tuple[Any, Any]]:
    try:
        return list(mapping.items())
    except Exception as exc:
        return [("<items failed>", f"{type(exc).__name__}")]


def _iterate(values: Any) -> list[Any]:
    try:
        return list(values)
    except Exception as exc:
        return [f"<iteration failed: {type(exc).__name__}>"]


def _bounded(plain: Any, limit: int) -> Any:
    """``plain`` itself when its JSON text fits ``limit``, else the truncation marker."""
    if type(plain) is str and len(plain) * 6 + 2 <= limit:
        return plain  # even fully escaped it fits
    digest = hashlib.blake2b(digest_size=8)
    head: list[str] = []
    kept = size = 0
    budget = max(0, limit - 200)  # room for the marker's own keys
    for chunk in _ENCODER.iterencode(plain):
        size += len(chunk)
        digest.update(chunk.encode("utf-8", "surrogatepass"))
        if kept < budget:
            part = chunk[: budget - kept]
            head.append(part)
            kept += len(part)
    if size <= limit:
        return plain
    return {TRUNCATED: "size", "size": size, "digest": digest.hexdigest(), "head": "".join(head)}


def _marker(value: Any, head: str, size: int) -> dict[str, Any]:
    return {
        TRUNCATED: "size",
        "size": size,
        "digest": deep_digest(value),
        "head": head,
    }


def deep_digest(value: Any, max_nodes: int = 1_000_000) -> str:
    """A digest of a value's content, computed without recursion (any depth, any cycle)."""
    digest = hashlib.blake2b(digest_size=8)
    stack: list[Any] = [value]
    seen: set[int] = set()
    nodes = 0
    while stack and nodes < max_nodes:
        current = stack.pop()
        nodes += 1
        if isinstance(current, (bytes, bytearray, memoryview)):
            digest.update(b"b" + bytes(current))
        elif isinstance(current, _LEAVES):
            digest.update(f"{type(current).__name__}:{current!s}".encode("utf-8", "replace"))
        elif isinstance(current, (Mapping, list, tuple, set, frozenset)):
            if id(current) in seen:
                digest.update(b"<cycle>")
                continue
            seen.add(id(current))
            if isinstance(current, Mapping):
                digest.update(b"{")
                for k, v in sorted(_items(current), key=lambda kv: safe_repr(kv[0])):
                    digest.update(safe_repr(k).encode("utf-8", "replace"))
                    stack.append(v)
            else:
                digest.update(b"[")
                stack.extend(reversed(_iterate(current)))
        else:
            digest.update(safe_repr(current).encode("utf-8", "replace"))
    if stack:
        digest.update(f"<{len(stack)} more>".encode())
    return digest.hexdigest()
