"""The one rule for the HTTP status an exception carries.

Used by the injectors (to record a failed call's status) and by the error classifier (to weigh
it), so a trace and a classification never disagree about an error's status.
"""

from __future__ import annotations

from typing import Any, TypeGuard

__all__ = ["attr", "is_status", "status_of"]


def is_status(value: object) -> TypeGuard[int]:
    """An HTTP status code: an ``int`` (not a bool) from 100 to 599."""
    return isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599


def attr(obj: object, name: str) -> Any:
    """``getattr(obj, name, None)`` that survives properties which raise (an httpx error's
    ``.request`` before it is set, a closed response's headers, a hostile object)."""
    try:
        return getattr(obj, name, None)
    except Exception:
        return None


def status_of(exc: BaseException) -> int | None:
    """The HTTP status ``exc`` carries, or ``None``.

    Looked for, in order: ``exc.status`` / ``exc.status_code`` (ours, SDKs'), ``exc.code`` when
    it is an error status (urllib's ``HTTPError``; small ``code`` values are errno-like), then
    ``exc.response.status_code`` / ``.status`` (httpx, requests, aiohttp).
    """
    for name in ("status", "status_code"):
        value = attr(exc, name)
        if is_status(value):
            return value
    code = attr(exc, "code")
    if is_status(code) and code >= 400:
        return code
    response = attr(exc, "response")
    if response is None:
        return None
    for name in ("status_code", "status"):
        value = attr(response, name)
        if is_status(value):
            return value
    return None
