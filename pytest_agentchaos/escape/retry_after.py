"""Retry-After: how long a server asked us to wait, from its headers or its error message.

Headers: ``retry-after-ms`` (OpenAI, Anthropic) or ``Retry-After`` as delay-seconds or an
HTTP-date. Messages: "retry after 30s", "Please try again in 6ms", "try again in 1m26.4s",
"请在30秒后重试".
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterable
from datetime import timezone
from email.utils import parsedate_to_datetime
from typing import Protocol


class Headers(Protocol):
    """Response headers: a mapping (httpx, requests, a dict) or an ``email.message.Message``
    (urllib); anything whose ``items()`` gives name/value pairs."""

    def items(self) -> Iterable[tuple[str, str]]:
        """The headers as (name, value) pairs."""
        ...


_UNITS = {
    "ms": 0.001,
    "millisecond": 0.001,
    "milliseconds": 0.001,
    "毫秒": 0.001,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "秒": 1.0,
    "秒钟": 1.0,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "分钟": 60.0,
}
_DURATION = (
    r"(?:(?P<mins>\d+)m(?=\d))?(?P<value>\d+(?:\.\d+)?)\s*"
    r"(?P<unit>ms|milliseconds?|secs?|seconds?|s|mins?|minutes?|m)?(?![a-z])"
)
#: "retry after 30s", "Retry-After: 30", "Please try again in 6ms", "try again in 1m26.4s",
#: "请在30秒后重试", "请 2 分钟后再试".
_MESSAGE_RETRY = (
    re.compile(r"retry[ _-]?after\s*[:=]?\s*" + _DURATION, re.IGNORECASE),
    re.compile(r"(?:try again|retry(?:ing)?) in\s*" + _DURATION, re.IGNORECASE),
    re.compile(
        r"(?<!\d)(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>毫秒|秒钟?|分钟)\s*(?:之?后)\s*(?:再|重)"
    ),
)


def retry_after_from_headers(
    headers: Headers, wall: Callable[[], float] = time.time
) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (delay-seconds or an
    HTTP-date, measured from the response's ``Date`` header if it has one, else ``wall()``).

    Header names are matched case-insensitively; a date in the past means 0.
    """
    lowered = {str(k).lower(): v for k, v in _items(headers)}
    millis = _number(lowered.get("retry-after-ms"))
    if millis is not None:
        return max(0.0, millis / 1000)
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return max(0.0, seconds)
    when = _http_date(raw)
    if when is None:
        return None
    now = _http_date(lowered.get("date"))
    return max(0.0, when - (now if now is not None else wall()))


def retry_after_from_message(text: str) -> float | None:
    """Seconds to wait that a message asks for ("retry after 30s", "try again in 6ms",
    "请在30秒后重试"), or ``None``."""
    for pattern in _MESSAGE_RETRY:
        match = pattern.search(text)
        if match is None:
            continue
        groups = match.groupdict()
        unit = (groups.get("unit") or "s").lower()
        seconds = float(match["value"]) * _UNITS.get(unit, 1.0)
        if groups.get("mins"):
            seconds += int(match["mins"]) * 60
        return seconds
    return None


def _items(headers: Headers) -> Iterable[tuple[str, str]]:
    try:
        return list(headers.items())
    except Exception:  # a response object whose headers cannot be read (e.g. closed)
        return []


def _number(raw: object) -> float | None:
    if raw is None:
        return None
    try:
        value = float(str(raw).strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _http_date(raw: object) -> float | None:
    if raw is None:
        return None
    try:
        when = parsedate_to_datetime(str(raw).strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": RFC 5322 says UTC with unknown local zone
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()
