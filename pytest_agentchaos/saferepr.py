"""Showing any value as text without ever failing: for traces, reports and error messages.

An agent under test may hand us objects whose ``__repr__`` raises, returns a non-string or a
10 MB string; whatever we print about them must still come out, short.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_REPR", "safe_repr", "safe_str", "short", "type_name"]

#: The longest text kept of one value by default.
MAX_REPR = 1000


def type_name(value: Any) -> str:
    """The qualified name of ``value``'s type; never raises."""
    try:
        return str(type(value).__qualname__)
    except Exception:  # pragma: no cover - a metaclass that hides its name
        return "object"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 3] + "..." if limit > 3 else text[: max(0, limit)]


def safe_repr(value: Any, limit: int = MAX_REPR) -> str:
    """``repr(value)`` cut to ``limit`` characters; a failing ``repr`` is named, not raised."""
    try:
        text = repr(value)
        if not isinstance(text, str):
            raise TypeError("__repr__ returned a non-string")
    except Exception as exc:
        text = f"<{type_name(value)} object (repr failed: {type(exc).__name__})>"
    return _cut(text, limit)


def safe_str(value: Any, limit: int = MAX_REPR) -> str:
    """``str(value)`` cut to ``limit`` characters; a failing ``str`` is named, not raised."""
    try:
        text = str(value)
        if not isinstance(text, str):
            raise TypeError("__str__ returned a non-string")
    except Exception as exc:
        text = f"<{type_name(value)} (str failed: {type(exc).__name__})>"
    return _cut(text, limit)


def short(value: Any) -> str:
    """A value shown in a one-line error message: its safe ``repr``, at most 80 characters."""
    return safe_repr(value, 80)
