"""Validating configuration: profile tables, marker arguments and policies.

Every part that reads configuration declares its fields as :data:`Validator` s and calls
:func:`parse_table` (or :func:`check_fields` for a dataclass built in code), so every error reads
the same way: ``<where>: <key>: <what is wrong>``, or ``<where>: unknown key 'x'; allowed: ...``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .errors import ChaosConfigError
from .saferepr import safe_repr, short


def _short(value: Any) -> str:
    return safe_repr(value, 80)


#: ``validator(value, where) -> normalised value``; raises ``ChaosConfigError`` naming ``where``.
Validator = Callable[[Any, str], Any]

__all__ = [
    "MAX_COUNT",
    "Validator",
    "boolean",
    "check_fields",
    "check_table",
    "choice",
    "count",
    "fail",
    "integer",
    "json_data",
    "number",
    "one_or_many",
    "optional",
    "parse_table",
    "text",
]


def fail(where: str, message: str) -> ChaosConfigError:
    """``ChaosConfigError("<where>: <message>")``: every configuration error names its
    source."""
    return ChaosConfigError(f"{where}: {message}")


def check_table(
    raw: object, allowed: Iterable[str], where: str, what: str = "table"
) -> Mapping[Any, Any]:
    """``raw`` is a table (a mapping) whose keys are all ``allowed``; else a
    ``ChaosConfigError`` naming ``where``, the first unknown key and what is allowed."""
    if not isinstance(raw, Mapping):
        raise fail(where, f"{what} must be a table/dict, got {_short(raw)}")
    names = list(allowed)
    unknown = sorted(str(k) for k in raw if k not in names)
    if unknown:
        raise fail(where, f"unknown key {short(unknown[0])}; allowed: {', '.join(names)}")
    return raw


def parse_table(
    raw: object, fields: Mapping[str, Validator], where: str, what: str = "table"
) -> dict[str, Any]:
    """Check ``raw`` against declared ``fields`` and return the normalised values it sets."""
    table = check_table(raw, fields, where, what)
    return {key: fields[key](value, f"{where}: {key}") for key, value in table.items()}


def check_fields(obj: object, fields: Mapping[str, Validator], where: str) -> None:
    """Validate the attributes of ``obj`` named by ``fields`` (for ``__post_init__``)."""
    for key, validator in fields.items():
        validator(getattr(obj, key), f"{where}: {key}")


def _n(value: float) -> str:
    """A bound as people write it: ``10000000``, ``0.5``."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def number(
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_min: bool = False,
    unit: str = "",
    finite: bool = True,
) -> Validator:
    """A finite int or float (not a bool) within the bounds; returned as ``float``.

    ``finite=False`` also admits infinity (``inf`` in TOML: "no limit"), never NaN.
    """
    suffix = f" {unit}" if unit else ""
    expected = "a finite number" if finite else "a number"

    def check(value: Any, where: str) -> float:
        try:  # an int too big for a float overflows: it is no finite number either
            as_float = float(value) if isinstance(value, (int, float)) else math.nan
        except OverflowError:
            as_float = math.inf
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not (math.isfinite(as_float) if finite else not math.isnan(as_float))
            or (isinstance(value, int) and not math.isfinite(as_float))
        ):
            raise fail(where, f"expected {expected}{' of ' + unit if unit else ''}, "
                       f"got {_short(value)}")  # fmt: skip
        if minimum is not None and (value <= minimum if exclusive_min else value < minimum):
            op = ">" if exclusive_min else ">="
            raise fail(where, f"must be {op} {_n(minimum)}{suffix}, got {_short(value)}")
        if maximum is not None and value > maximum:
            raise fail(where, f"must be <= {_n(maximum)}{suffix}, got {_short(value)}")
        return as_float

    return check


def integer(*, minimum: int | None = 0, maximum: int | None = None) -> Validator:
    """An ``int`` (not a bool) within the bounds."""

    def check(value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            bound = f" >= {minimum}" if minimum is not None else ""
            raise fail(where, f"expected an integer{bound}, got {_short(value)}")
        if minimum is not None and value < minimum:
            raise fail(where, f"must be >= {minimum}, got {short(value)}")
        if maximum is not None and value > maximum:
            raise fail(where, f"must be <= {maximum}, got {short(value)}")
        return value

    return check


#: The largest count a policy may set (attempts, thresholds, windows): larger is a typo, and
#: sizes buffers no run needs.
MAX_COUNT = 1_000_000


def count(*, minimum: int = 1) -> Validator:
    """An ``int`` from ``minimum`` to :data:`MAX_COUNT`."""
    return integer(minimum=minimum, maximum=MAX_COUNT)


def boolean(value: Any, where: str) -> bool:
    """``True`` or ``False`` (not ``1``, not ``"yes"``)."""
    if not isinstance(value, bool):
        raise fail(where, f"expected a boolean, got {_short(value)}")
    return value


def text(value: Any, where: str) -> str:
    """A non-empty string."""
    if not isinstance(value, str) or not value:
        raise fail(where, f"expected a non-empty string, got {_short(value)}")
    return value


def choice(allowed: Sequence[Any]) -> Validator:
    """One of ``allowed``."""

    def check(value: Any, where: str) -> Any:
        try:
            ok = value in allowed
        except TypeError:  # an unhashable value looked up in a set
            ok = False
        if not ok:
            raise fail(where, f"{_short(value)} is not one of {', '.join(str(a) for a in allowed)}")
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


def optional(item: Validator) -> Validator:
    """``None``, or what ``item`` accepts."""

    def check(value: Any, where: str) -> Any:
        return None if value is None else item(value, where)

    return check


#: How deep JSON data may nest: deeper values are typos or attacks, and would exhaust the stack.
MAX_JSON_DEPTH = 64


def json_data(value: Any, where: str) -> Any:
    """Plain JSON data: strings, finite numbers, booleans, null, lists and tables with string
    keys. Anything else (a set, an object) would serialise differently from run to run."""
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack:
        current, at, depth = stack.pop()
        if current is None or isinstance(current, (str, bool, int)):
            continue
        if isinstance(current, float):
            if not math.isfinite(current):
                raise fail(at, f"expected JSON data, got the non-finite number {short(current)}")
            continue
        if depth >= MAX_JSON_DEPTH:
            raise fail(at, f"JSON data nested deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(current, (list, tuple)):
            stack.extend((v, f"{at}[{i}]", depth + 1) for i, v in enumerate(current))
        elif isinstance(current, Mapping):
            for key, v in current.items():
                if not isinstance(key, str):
                    raise fail(at, f"expected JSON data (string keys), got the key {_short(key)}")
                stack.append((v, f"{at}.{key}", depth + 1))
        else:
            raise fail(
                at,
                f"expected JSON data (string, number, boolean, null, list or table), "
                f"got {type(current).__name__} {_short(current)}",
            )
    return value
