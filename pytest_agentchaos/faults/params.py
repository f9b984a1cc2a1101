"""Validators of fault and selector parameters that only faults need; the generic ones
(numbers, integers, choices, lists) live in :mod:`pytest_agentchaos.config`."""

from __future__ import annotations

from typing import Any

from ..config import (
    Validator,
    boolean,
    choice,
    fail,
    integer,
    json_data,
    number,
    one_or_many,
    optional,
    text,
)
from ..saferepr import short

__all__ = [
    "MAX_SECONDS",
    "anything",
    "Validator",
    "boolean",
    "choice",
    "fail",
    "http_status",
    "integer",
    "json_data",
    "number",
    "one_or_many",
    "optional",
    "seconds",
    "seconds_or_range",
    "text",
]

#: The longest virtual duration a fault may spend: about 116 days. Longer ones are typos
#: (and overflow the datetime arithmetic of frozen time).
MAX_SECONDS = 1e7

#: A number of virtual seconds a fault may spend.
seconds = number(minimum=0, maximum=MAX_SECONDS)


def http_status(value: Any, where: str) -> int:
    """An HTTP error status: an integer from 400 to 599."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(
            where, f"expected an HTTP status code (an integer from 400 to 599), got {short(value)}"
        )
    status = value
    if not 400 <= status <= 599:
        raise fail(where, f"HTTP status must be a 4xx or 5xx code (400-599), got {status}")
    return status


def seconds_or_range(value: Any, where: str) -> tuple[float, float]:
    """``5`` or ``[1, 5]``: a fixed number of seconds or a range to draw from."""
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            raise fail(where, f"expected seconds or [low, high], got {short(value)}")
        low, high = seconds(value[0], where), seconds(value[1], where)
        if low > high:
            raise fail(where, f"range low {low} is above high {high}")
        return (low, high)
    s = seconds(value, where)
    return (s, s)


def anything(value: Any, where: str) -> Any:
    """Any value (informative details that replay does not use)."""
    return value
