"""Hard budgets: the most a chaos run may spend before the harness stops it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ..config import fail
from ..saferepr import short

BUDGET_KEYS = ("max_steps", "max_tool_calls", "max_model_calls", "max_seconds", "max_tokens")


@dataclass(frozen=True, slots=True)
class Budgets:
    """Limits per run; ``None`` means unlimited. ``max_seconds`` is virtual time."""

    max_steps: int | None = None
    max_tool_calls: int | None = None
    max_model_calls: int | None = None
    max_seconds: float | None = None
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        _checked(self.as_dict(), "Budgets")

    def override(self, other: Budgets) -> Budgets:
        """``other``'s limits where it sets them, ours elsewhere."""
        return replace(self, **{k: v for k, v in other.as_dict().items()})

    def tighten(self, other: Budgets) -> Budgets:
        """The stricter of the two limits, key by key."""
        merged: dict[str, Any] = {}
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            merged[f.name] = b if a is None else a if b is None else min(a, b)
        return Budgets(**merged)

    def as_dict(self) -> dict[str, Any]:
        """Only the limits that are set."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }

    def __bool__(self) -> bool:
        return bool(self.as_dict())


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too big for a float
        return False


def parse_budgets(raw: Any, where: str) -> Budgets:
    """Validate a ``[budgets]`` table or the budget keyword arguments of a marker."""
    return Budgets() if raw is None else Budgets(**_checked(raw, where))


def _checked(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise fail(where, f"budgets must be a table/dict, got {short(raw)}")
    unknown = sorted((k for k in raw if k not in BUDGET_KEYS), key=str)
    if unknown:
        raise fail(where, f"unknown budget {short(unknown[0])}; allowed: {', '.join(BUDGET_KEYS)}")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if value is None:
            continue
        ok_type = (int, float) if key == "max_seconds" else (int,)
        if isinstance(value, bool) or not isinstance(value, ok_type) or not _finite(value):
            kind = "a finite number of seconds" if key == "max_seconds" else "an integer"
            raise fail(f"{where}: {key}", f"expected {kind}, got {short(value)}")
        if value <= 0:
            raise fail(f"{where}: {key}", f"must be > 0, got {short(value)}")
        values[key] = float(value) if key == "max_seconds" else value
    return values
