"""What the trace keeps of a value: plain JSON data, bounded in size, never failing.

An agent's tool may return anything: a 10 MB string, an object whose ``repr`` raises, a list
nested 2,000 deep, a structure that contains itself, an int of a million digits. :func:`capture`
turns any of them into JSON data the trace can hold, compare, digest and write:

- containers are copied, so later mutation by the agent cannot rewrite history; tuples and sets
  become lists (sets sorted, so their order does not depend on ``PYTHONHASHSEED``); dict keys
  become strings;
- objects that are not JSON data become their (safe, capped) ``repr``; NaN and infinities their
  ``repr``; ints too long for text a marker with their size and digest;
- a value the JSON encoder cannot walk (deeper than it recurses, or cyclic) is cut at
  :data:`MAX_DEPTH` levels (the cut part keeps its type and a digest) and a cycle becomes a
  ``"<cycle: ...>"`` string;
- a value whose JSON text exceeds the limit becomes a :data:`TRUNCATED` marker that keeps the
  size of that text, a digest of the whole (independent of dict key order) and as much of the
  text's head as fits; a dict keeps its keys when its values can be cut instead.

Equal values capture equal, so loop detectors still see an agent repeating a big output.

A seam that already holds a value's JSON text (a pydantic model's serializer writes it in one C
call) hands it over as :class:`Captured` (:func:`captured_json`): read once, measured by its
text, it is recorded as it is, without being encoded again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from ..saferepr import MAX_REPR, safe_repr
from ..saferepr import type_name as _type_name

__all__ = [
    "DEFAULT_MAX_VALUE",
    "MAX_DEPTH",
    "TRUNCATED",
    "Captured",
    "capture",
    "captured_json",
    "deep_digest",
]

#: Default cap on one recorded value: 64 KiB of JSON text.
DEFAULT_MAX_VALUE = 64 * 1024
#: Where values the JSON encoder cannot walk are cut (see the module doc).
MAX_DEPTH = 32
#: The key of the marker that stands for a value cut to the size limit.
TRUNCATED = "$truncated"
#: Ints longer than this many bits are not written out (CPython refuses ints over 4300 digits).
MAX_INT_BITS = 4096

_LEAVES = (str, int, float, bool, type(None))
#: A "flat" dict, copied without encoding: at most this many items, each key and string value at
#: most this many characters, ints of at most 64 bits, finite floats; its JSON text is at most
#: ``_FLAT_ITEMS * (2 * 6 * _FLAT_TEXT + 32)`` characters even if every character is escaped.
_FLAT_ITEMS = 16
_FLAT_TEXT = 128
_FLAT_LIMIT = _FLAT_ITEMS * (12 * _FLAT_TEXT + 32)
#: The most a marker's own keys take besides its head.
_MARKER_KEYS = 120
#: How many characters of :func:`capture`'s JSON text one character of any JSON text can
#: become, at most: a string's characters never grow (the text escapes at least what the
#: encoder does), a ``,`` or ``:`` becomes two, a number at most 4.5 (``9e15`` ->
#: ``9000000000000000.0``); 6 leaves a margin.
_JSON_GROWTH = 6


class Captured:
    """JSON data read from a JSON text by :func:`captured_json`: :func:`capture` records it as
    it is when it surely fits the limit (``size``: at most that many characters of JSON text),
    else captures ``value`` as any other value. The data is fresh, owned by whoever records it."""

    __slots__ = ("size", "value")

    def __init__(self, value: Any, size: int) -> None:
        self.value = value
        self.size = size

    def __repr__(self) -> str:
        return f"Captured(<JSON data, at most {self.size} characters>)"


def _finite_float(text: str) -> float:
    number = float(text)
    if number - number != 0.0:  # 1e400 reads as an infinity: not JSON data
        raise ValueError(f"not a finite number: {text[:40]}")
    return number


def _no_constant(name: str) -> Any:
    raise ValueError(f"not JSON data: {name}")


_DECODER = json.JSONDecoder(parse_float=_finite_float, parse_constant=_no_constant)


def captured_json(
    text: str | bytes, decode: Callable[[str | bytes], Any] | None = None
) -> Captured | None:
    """The JSON data a JSON text holds, as :class:`Captured`; ``None`` when the text is not
    strict JSON data (``NaN``, an infinity, an int too long to read, nested deeper than the
    decoder recurses, text after the value): capture the value it came from instead.

    What :func:`capture` then records equals what it records of any value whose JSON text this
    is (a pydantic model's ``model_dump(mode="json")`` for its ``model_dump_json()``).
    ``decode``: a faster reader of JSON text the caller vouches for, which raises on any text
    the standard library's strict reading refuses (default: that reading)."""
    try:
        if decode is not None:
            value = decode(text)
        else:
            value = _DECODER.decode(text if isinstance(text, str) else bytes(text).decode())
    except Exception:  # not JSON data as capture records it: the caller captures the value
        return None
    return Captured(value, len(text) * _JSON_GROWTH)


def capture(value: Any, limit: int = DEFAULT_MAX_VALUE) -> Any:
    """``value`` as JSON data of at most ``max(limit, ~100)`` characters of JSON text.

    Cheap for the common cases: flat arguments are copied in one pass; other JSON-native values
    are encoded and decoded by the C JSON codec (which copies and measures them at once);
    anything else takes the slow, careful path.
    """
    kind = type(value)
    if kind is dict and len(value) <= _FLAT_ITEMS and limit >= _FLAT_LIMIT:
        # The hot path: a few short leaves (tool arguments, small results): copy and go.
        for k, v in value.items():
            if type(k) is not str or len(k) > _FLAT_TEXT:
                break
            t = type(v)
            if t is str:
                if len(v) > _FLAT_TEXT:
                    break
            elif t is int:
                if v.bit_length() > 64:
                    break
            elif t is float:
                if v - v != 0.0:  # NaN or an infinity: not JSON
                    break
            elif t is not bool and v is not None:
                break
        else:
            return value.copy()
    elif kind is str:
        if len(value) <= limit >> 3:  # fits even if every character is escaped
            return value
        text = _dumps(value)
        return value if len(text) <= limit else _fit(value, text, limit)
    elif kind is int:
        return value if value.bit_length() <= MAX_INT_BITS else _big_int(value)
    elif kind in _LEAVES:
        return _finite(value) if kind is float else value
    elif kind is Captured:
        return value.value if value.size <= limit else capture(value.value, limit)
    if kind is dict or kind is list or kind is tuple:
        try:
            text = _dumps(value)
        except Exception:  # not JSON data (an object, NaN, a huge int, a cycle, too deep...)
            pass
        else:
            return json.loads(text) if len(text) <= limit else _fit(value, text, limit)
    try:
        plain = _plain(value, 0, set())
    except RecursionError:  # pragma: no cover - MAX_DEPTH keeps _plain shallow
        plain = _marker("depth", value)
    return _bounded(plain, limit)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _finite(value: float) -> Any:
    # JSON has no NaN or infinity; keep them readable and stable.
    return value if math.isfinite(value) else repr(value)


def _big_int(value: int) -> dict[str, Any]:
    digest = hashlib.blake2b(_int_bytes(value), digest_size=8).hexdigest()
    return {TRUNCATED: "int", "bits": value.bit_length(), "digest": digest}


def _int_bytes(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 8) // 8 or 1, "big", signed=True)


def _marker(reason: str, value: Any) -> dict[str, Any]:
    return {TRUNCATED: reason, "type": _type_name(value), "digest": deep_digest(value)}


def _plain(value: Any, depth: int, path: set[int]) -> Any:
    """``value`` as JSON data without a size limit: copies containers, cuts depth and cycles;
    anything that misbehaves (a raising ``__class__``, ``items()`` or ``len()``) is named."""
    try:
        return _plain_unsafe(value, depth, path)
    except RecursionError:
        raise
    except Exception as exc:
        return f"<{_type_name(value)} object (unreadable: {type(exc).__name__})>"


def _plain_unsafe(value: Any, depth: int, path: set[int]) -> Any:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        return value if value.bit_length() <= MAX_INT_BITS else _big_int(value)
    if kind is float:
        return _finite(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, _LEAVES):  # str / int / float subclasses (enums, numpy scalars...)
        return _plain(_leaf(value), depth, path)
    is_mapping = isinstance(value, Mapping)
    if not (is_mapping or isinstance(value, (list, tuple, set, frozenset))):
        return safe_repr(value)
    if id(value) in path:
        return f"<cycle: {_type_name(value)}>"
    if depth >= MAX_DEPTH:
        return _marker("depth", value)
    path.add(id(value))
    try:
        if is_mapping:
            out: dict[str, Any] = {}
            for k, v in list(value.items()):
                out[k if type(k) is str else _key(k)] = _plain(v, depth + 1, path)
            return out
        items = [_plain(v, depth + 1, path) for v in list(value)]
        if isinstance(value, (set, frozenset)):  # order must not depend on PYTHONHASHSEED
            items.sort(key=_sort_key)
        return items
    finally:
        path.discard(id(value))


def _sort_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True)


def _leaf(value: Any) -> Any:
    """A subclass of a JSON leaf as the base value, as the JSON encoder writes it (a
    ``(str, Enum)`` member as its value, not ``Color.RED``)."""
    for base in (bool, int, float, str):
        if isinstance(value, base):
            return base.__str__(value) if base is str else base(value)
    return safe_repr(value)  # pragma: no cover - only called for leaf subclasses


def _key(key: Any) -> str:
    if key is None or isinstance(key, (bool, float)):
        return json.dumps(key)  # what json.dumps makes of such a key
    if isinstance(key, int):
        return str(key) if key.bit_length() <= MAX_INT_BITS else _sort_key(_big_int(key))
    if isinstance(key, str):
        return str.__str__(key)
    if isinstance(key, (frozenset, tuple)) and any(isinstance(k, frozenset) for k in (key, *key)):
        return _sort_key(_plain(key, MAX_DEPTH - 2, set()))  # stable, whatever the hash seed
    return safe_repr(key)


def _bounded(plain: Any, limit: int) -> Any:
    """``plain`` (JSON data) itself when its JSON text fits ``limit``, else cut to fit."""
    text = _dumps(plain)
    return plain if len(text) <= limit else _fit(plain, text, limit)


def _fit(value: Any, text: str, limit: int) -> Any:
    """``value`` (JSON data whose JSON text is ``text``, over ``limit``) cut to fit: a dict
    keeps its keys with each value cut to a share of the limit, when that fits; anything else
    becomes a size marker."""
    if isinstance(value, dict) and 0 < len(value) <= limit // 512:
        share = max(256, limit // len(value) - 64)
        cut = {k if type(k) is str else _key(k): capture(v, share) for k, v in list(value.items())}
        if len(_dumps(cut)) <= limit:
            return cut
    return _size_marker(value, text, limit)


def _size_marker(value: Any, text: str, limit: int) -> dict[str, Any]:
    if isinstance(value, (dict, list)):  # equal whatever the key order of its dicts
        with contextlib.suppress(Exception):  # keys of mixed types: keep the text as it came
            text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return {TRUNCATED: "size", "size": len(text), "digest": digest, "head": _head(text, limit)}


def _head(text: str, limit: int) -> str:
    """The longest start of ``text`` whose own JSON text fits in what the marker leaves of
    ``limit`` (a head full of quotes and backslashes is escaped again inside the marker)."""
    budget = max(0, limit - _MARKER_KEYS)
    head = text[:budget]
    while head:
        size = len(_dumps(head))
        if size <= budget:
            return head
        head = head[: max(0, len(head) * budget // size - 1)]
    return head


def deep_digest(value: Any, max_nodes: int = 1_000_000) -> str:
    """A digest of a value's content, computed without recursion (any depth, any cycle).

    Structure counts (``[[1], 2]`` and ``[[1, 2]]`` differ); sharing does not (a sub-list
    repeated digests as its content, only a container inside itself as a cycle).
    """
    digest = hashlib.blake2b(digest_size=8)
    update = digest.update
    end = object()
    stack: list[Any] = [value]
    path: list[int] = []
    on_path: set[int] = set()
    nodes = 0
    while stack and nodes < max_nodes:
        current = stack.pop()
        if current is end:
            on_path.discard(path.pop())
            update(b"]")
            continue
        nodes += 1
        try:
            kind = type(current)
            if kind is bool:
                update(b"T" if current else b"F")
            elif kind is int:
                update(b"i" + _int_bytes(current))
            elif isinstance(current, (bytes, bytearray)):
                update(b"b" + bytes(current))
            elif isinstance(current, _LEAVES):
                update(f"{kind.__name__}:{_leaf(current)!s}".encode("utf-8", "surrogatepass"))
            elif isinstance(current, (Mapping, list, tuple, set, frozenset)):
                if id(current) in on_path:
                    update(b"<cycle>")
                    continue
                path.append(id(current))
                on_path.add(id(current))
                stack.append(end)
                if isinstance(current, Mapping):
                    update(b"{")
                    pairs = sorted(list(current.items()), key=lambda kv: safe_repr(kv[0]))
                    for k, v in reversed(pairs):
                        stack.append(v)
                        stack.append(_Key(safe_repr(k)))
                elif isinstance(current, (set, frozenset)):
                    update(b"s[")
                    stack.extend(sorted(current, key=safe_repr))
                else:
                    update(b"[")
                    stack.extend(reversed(list(current)))
            elif isinstance(current, _Key):
                update(b"k" + current.text.encode("utf-8", "surrogatepass"))
            else:
                update(safe_repr(current, MAX_REPR).encode("utf-8", "surrogatepass"))
        except Exception as exc:
            update(f"<unreadable {type(exc).__name__}>".encode())
    if stack:
        update(f"<{len(stack)} more>".encode())
    return digest.hexdigest()


class _Key:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text
