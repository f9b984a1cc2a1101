"""Validation of fault and selector parameters, with errors that say what is allowed."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import ChaosConfigError, config_error

Validator = Callable[[Any, str], Any]

#: The longest virtual duration a fault may spend: about 116 days. Longer ones are typos
#: (and overflow the datetime arithmetic of frozen time).
MAX_SECONDS = 1e7


def fail(where: str, message: str) -> ChaosConfigError:
    return config_error(where, message)


def number(
    *, minimum: float | None = None, maximum: float | None = None, exclusive_min: bool = False
) -> Validator:
    def check(value: Any, where: str) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise fail(where, f"expected a finite number, got {value!r}")
        if minimum is not None and (value <= minimum if exclusive_min else value < minimum):
            op = ">" if exclusive_min else ">="
            raise fail(where, f"must be {op} {minimum}, got {value!r}")
        if maximum is not None and value > maximum:
            raise fail(where, f"must be <= {maximum}, got {value!r}")
        return float(value)

    return check


def integer(*, minimum: int = 0) -> Validator:
    def check(value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail(where, f"expected an integer, got {value!r}")
        if value < minimum:
            raise fail(where, f"must be >= {minimum}, got {value!r}")
        return value

    return check


def one_or_many(item: Validator) -> Validator:
    """A single value or a non-empty list of them; returned as a tuple."""

    def check(value: Any, where: str) -> tuple[Any, ...]:
        if isinstance(value, (list, tuple)):
            if not value:
                raise fail(where, "must not be an empty list")
            return tuple(item(v, f"{where}[{i}]") for i, v in enumerate(value))
        return (item(value, where),)

    return check


def choice(allowed: Sequence[str]) -> Validator:
    def check(value: Any, where: str) -> str:
        if value not in allowed:
            raise fail(where, f"{value!r} is not one of {', '.join(allowed)}")
        return str(value)

    return check


def http_status(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(
            where, f"expected an HTTP status code (an integer from 400 to 599), got {value!r}"
        )
    status = value
    if not 400 <= status <= 599:
        raise fail(where, f"HTTP status must be a 4xx or 5xx code (400-599), got {status}")
    return status


def seconds_or_range(value: Any, where: str) -> tuple[float, float]:
    """``5`` or ``[1, 5]``: a fixed number of seconds or a range to draw from."""
    positive = number(minimum=0, maximum=MAX_SECONDS)
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            raise fail(where, f"expected seconds or [low, high], got {value!r}")
        low, high = positive(value[0], where), positive(value[1], where)
        if low > high:
            raise fail(where, f"range low {low} is above high {high}")
        return (low, high)
    s = positive(value, where)
    return (s, s)


def anything(value: Any, where: str) -> Any:
    return value
