"""Reading and writing a value at a path of nested arguments (``("legs", 0, "date")``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .fixes import DROP
from .spec import Problem

__all__ = ["delete", "field_of", "get", "has", "path_of", "plain", "put"]


def field_of(path: tuple[str | int, ...]) -> str:
    return Problem("other", path, "").field


def path_of(name: str) -> tuple[str | int, ...]:
    """A dotted / bracketed field name as a path: ``items[0].sku`` -> ``("items", 0, "sku")``."""
    parts: list[str | int] = []
    for piece in re.split(r"\.|\[|\]", name):
        if piece:
            parts.append(int(piece) if piece.isdigit() else piece)
    return tuple(parts)


def has(value: Any, path: tuple[str | int, ...]) -> bool:
    for part in path:
        if not _holds(value, part):
            return False
        value = value[part]
    return True


def _holds(value: Any, part: str | int) -> bool:
    if isinstance(value, Mapping):
        return part in value
    return isinstance(value, list) and isinstance(part, int) and -len(value) <= part < len(value)


def get(value: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        if isinstance(value, Mapping):
            value = value.get(part)
        elif isinstance(value, list) and isinstance(part, int) and -len(value) <= part < len(value):
            value = value[part]
        else:
            return None
    return value


def put(root: dict[str, Any], path: tuple[str | int, ...], value: Any) -> None:
    if not path:
        return
    target: Any = root
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value


def delete(root: dict[str, Any], path: tuple[str | int, ...]) -> None:
    target: Any = root
    for part in path[:-1]:
        target = target[part]
    last = path[-1]
    if isinstance(target, dict):
        target.pop(last, None)
    elif isinstance(target, list) and isinstance(last, int):
        del target[last]


def plain(value: Any) -> Any:
    """A JSON-able copy for a trace event (DROP and odd values as text)."""
    if value is DROP:
        return "<dropped>"
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return repr(value)
