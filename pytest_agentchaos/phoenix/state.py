"""The state protocol: an agent's state as plain JSON data, and back.

``to_state`` turns a value into JSON data: objects with a ``to_state()`` method, dataclasses,
pydantic models (duck-typed: ``model_dump(mode="json")``) and plain dicts, lists, tuples
(stored as lists), strings, numbers, booleans and ``None``. Anything else (sets, bytes, NaN,
non-string keys, cycles, nesting deeper than :data:`MAX_DEPTH`) is a :class:`SnapshotError`
that names where in the state it sits. ``from_state`` rebuilds a value of a given kind.
Snapshots are data, never pickle or eval.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

from ..saferepr import safe_str, short, type_name

__all__ = ["MAX_DEPTH", "SnapshotError", "from_state", "to_state"]

T = TypeVar("T")

#: The deepest nesting of containers a state may have.
MAX_DEPTH = 128

_SCALARS = (str, int, float, bool, type(None))
_isfinite = math.isfinite
_ALLOWED = "dict/list/str/int/float/bool/None, a dataclass, a pydantic model or to_state()"


class SnapshotError(ValueError):
    """A state cannot be snapshotted or restored: not JSON data, or a snapshot that is not
    readable. The message names where (a path into the state) and what."""


def to_state(obj: Any) -> Any:
    """``obj`` as JSON data (a new structure where objects were converted; plain values are
    shared). Raises :class:`SnapshotError` for anything that is not JSON data."""
    try:
        return _value(obj, 0)
    except _Problem as problem:
        raise SnapshotError(problem.describe()) from problem.__cause__


def from_state(kind: type[T], data: Any) -> T:
    """Rebuild a ``kind`` from the JSON data ``to_state`` made of it.

    ``kind.from_state(data)`` when it has one, ``kind.model_validate(data)`` for pydantic
    models, ``kind(**data)`` for dataclasses (nested dataclass fields and tuple fields are
    rebuilt from their type hints), and the data itself for the plain JSON types.
    """
    builder = getattr(kind, "from_state", None)
    if callable(builder):
        return _call(kind, "from_state", builder, data)  # type: ignore[no-any-return]
    validate = getattr(kind, "model_validate", None)
    if callable(validate) and hasattr(kind, "model_dump"):
        return _call(kind, "model_validate", validate, data)  # type: ignore[no-any-return]
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _dataclass(kind, data, "state")
    if kind in (dict, list, str, int, float, bool, type(None)):
        if isinstance(data, kind) and (kind is not int or not isinstance(data, bool)):
            return data
        raise SnapshotError(f"cannot rebuild {_kind_name(kind)} from state: got {type_name(data)}")
    raise SnapshotError(
        f"cannot rebuild {_kind_name(kind)} from state: it has no from_state() or "
        "model_validate() and is not a dataclass or a JSON type"
    )


def _kind_name(kind: Any) -> str:
    """The qualified name of a class (or of a value's type); never raises."""
    try:
        return str(kind.__qualname__) if isinstance(kind, type) else type_name(kind)
    except Exception:  # pragma: no cover - a metaclass that hides its name
        return "object"


class _Problem(Exception):
    """Why a value is not JSON data. On the way up each container adds its key (to name the
    path) and its id (to tell a cycle from mere depth)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        #: (key below, id) of each container on the path, innermost first; the key is
        #: ``None`` for an object converted in place (it adds no step to the path).
        self.trail: list[tuple[str | int | None, int]] = []

    def describe(self) -> str:
        """One line: the path into the state, then what is wrong there."""
        trail = self.trail[::-1]
        seen: dict[int, int] = {}
        for n, (_, ident) in enumerate(trail):
            if ident in seen:
                first = _path(trail[: seen[ident]])
                return f"{_path(trail[:n])}: cycle (refers back to {first}, which contains it)"
            seen[ident] = n
        return f"{_path(trail)}: {self.args[0]}"


def _path(trail: list[tuple[str | int | None, int]]) -> str:
    text = "state" + "".join(f"[{key!r}]" for key, _ in trail if key is not None)
    return text if len(text) <= 160 else f"{text[:70]}...{text[-70:]}"


def _value(obj: Any, depth: int) -> Any:
    cls = type(obj)
    if cls is str or cls is bool or cls is int or obj is None:
        return obj
    if cls is float:
        if math.isfinite(obj):
            return obj
        raise _Problem(f"{obj!r} is not JSON data (NaN and infinity are not)")
    if cls is dict:
        return _mapping(obj, depth)
    if cls is list or cls is tuple:
        return _sequence(obj, depth)
    return _other(obj, depth)


def _mapping(obj: dict[Any, Any], depth: int) -> dict[str, Any]:
    # Cycles are not tracked on the way down (that would cost every container a set
    # operation): a cycle runs into the depth limit, and the ids collected on the way up
    # tell it apart from a merely deep state.
    if depth >= MAX_DEPTH:
        raise _Problem(f"nested deeper than {MAX_DEPTH} levels")
    depth += 1
    for key, item in obj.items():
        _check_key(key)
        cls = type(item)
        if cls is str or cls is int or cls is bool or item is None:
            continue
        if cls is float and _isfinite(item):
            continue
        new = _child(item, depth, key, obj)
        if new is not item:
            return _mapping_copy(obj, depth, key, new)
    return obj


def _mapping_copy(obj: dict[Any, Any], depth: int, at: str, new: Any) -> dict[str, Any]:
    """The rest of ``_mapping`` once a value was converted: a copy, ``at`` set to ``new``."""
    out: dict[str, Any] = {}
    items = iter(obj.items())
    for key, item in items:
        if key == at:
            out[key] = new
            break
        out[key] = item
    for key, item in items:
        _check_key(key)
        out[key] = _child(item, depth, key, obj)
    return out


def _check_key(key: Any) -> None:
    if type(key) is not str:
        raise _Problem(
            f"key {short(key)} ({type_name(key)}) is not a string; JSON object keys are strings"
        )


def _child(item: Any, depth: int, key: str | int, holder: Any) -> Any:
    """``item`` (held at ``key`` of ``holder``) as JSON data; a problem inside it learns
    the key and the holder on its way up."""
    try:
        return _value(item, depth)
    except _Problem as problem:
        problem.trail.append((key, id(holder)))
        raise


def _sequence(obj: list[Any] | tuple[Any, ...], depth: int) -> list[Any]:
    if depth >= MAX_DEPTH:
        raise _Problem(f"nested deeper than {MAX_DEPTH} levels")
    out: list[Any] | None = list(obj) if type(obj) is tuple else None
    depth += 1
    i = -1
    for item in obj:
        i += 1
        cls = type(item)
        if cls is str or cls is int or cls is bool or item is None:
            continue
        if cls is float and _isfinite(item):
            continue
        new = _child(item, depth, i, obj)
        if new is not item:
            if out is None:
                out = list(obj)
            out[i] = new
    return obj if out is None else out  # type: ignore[return-value]


def _other(obj: Any, depth: int) -> Any:
    """A value that is not plain JSON data: converted, or a problem."""
    if isinstance(obj, type):
        raise _Problem(f"class {_kind_name(obj)} is not JSON data")
    if isinstance(obj, _SCALARS):  # subclasses: str / int / float enums and the like
        return _value(_plain_scalar(obj), depth)
    if depth >= MAX_DEPTH:
        raise _Problem(f"nested deeper than {MAX_DEPTH} levels")
    method = _method(obj, "to_state")
    if method is not None:
        data = _convert(obj, "to_state()", method)
    elif dataclasses.is_dataclass(obj):
        data = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    else:
        dump = _method(obj, "model_dump")
        if dump is None or not callable(getattr(type(obj), "model_validate", None)):
            raise _Problem(f"{type_name(obj)} is not JSON data (allowed: {_ALLOWED})")
        data = _convert(obj, "model_dump()", lambda: dump(mode="json"))
    try:
        converted = _value(data, depth + 1)
    except _Problem as problem:
        problem.trail.append((None, id(obj)))
        raise
    return converted


def _convert(obj: Any, what: str, convert: Callable[[], Any]) -> Any:
    try:
        return convert()
    except Exception as exc:
        raise _Problem(
            f"{type_name(obj)}.{what} raised {type(exc).__name__}: {safe_str(exc, 200)}"
        ) from exc


def _plain_scalar(obj: Any) -> Any:
    """The plain value under a ``str`` / ``int`` / ``float`` subclass (an enum member, say),
    read through the base type so an override of ``__str__`` does not change it."""
    if isinstance(obj, int):
        return int.__int__(obj)
    if isinstance(obj, float):
        return float.__float__(obj)
    return str.__str__(obj)


def _method(obj: Any, name: str) -> Callable[..., Any] | None:
    try:
        found = getattr(obj, name, None)
    except Exception:
        return None
    return found if callable(found) else None


def _call(kind: Any, name: str, builder: Callable[[Any], Any], data: Any) -> Any:
    try:
        return builder(data)
    except Exception as exc:
        raise SnapshotError(
            f"cannot rebuild {_kind_name(kind)} from state: {name}() raised "
            f"{type(exc).__name__}: {safe_str(exc, 300)}"
        ) from exc


def _dataclass(kind: type[T], data: Any, path: str) -> T:
    if not isinstance(data, dict):
        raise SnapshotError(
            f"cannot rebuild {_kind_name(kind)} from {path}: expected an object, "
            f"got {type_name(data)}"
        )
    try:
        hints = typing.get_type_hints(kind)
    except Exception:
        hints = {}
    args = {}
    for f in dataclasses.fields(kind):  # type: ignore[arg-type]
        if f.init and f.name in data:
            args[f.name] = _rebuild(hints.get(f.name), data[f.name], f"{path}.{f.name}")
    try:
        return kind(**args)
    except Exception as exc:
        raise SnapshotError(
            f"cannot rebuild {_kind_name(kind)} from {path}: {type(exc).__name__}: "
            f"{safe_str(exc, 300)}"
        ) from exc


def _rebuild(hint: Any, value: Any, path: str) -> Any:
    """``value`` shaped by a field's type hint: nested dataclasses, tuples, optionals."""
    if hint is None:
        return value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint) and isinstance(value, dict):
        return _dataclass(hint, value, path)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        arms = [a for a in args if a is not type(None)]
        return _rebuild(arms[0], value, path) if len(arms) == 1 and value is not None else value
    if origin in (tuple, list) and isinstance(value, list):
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            return tuple(_rebuild(args[0], v, f"{path}[{i}]") for i, v in enumerate(value))
        if origin is tuple:
            return tuple(value)
        inner = args[0] if args else None
        return [_rebuild(inner, v, f"{path}[{i}]") for i, v in enumerate(value)]
    return value
