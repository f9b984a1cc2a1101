"""Hard budgets: the most a chaos run may spend before the harness stops it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ..errors import config_error as fail

BUDGET_KEYS = ("max_steps", "max_tool_calls", "max_model_calls", "max_seconds", "max_tokens")


@dataclass(frozen=True, slots=True)
class Budgets:
    """Limits per run; ``None`` means unlimited. ``max_seconds`` is virtual time."""

    max_steps: int | None = None
    max_tool_calls: int | None = None
    max_model_calls: int | None = None
    max_seconds: float | None = None
    max_tokens: int | None = None

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


def parse_budgets(raw: Any, where: str) -> Budgets:
    """Validate a ``[budgets]`` table or the budget keyword arguments of a marker."""
    if raw is None:
        return Budgets()
    if not isinstance(raw, Mapping):
        raise fail(where, f"budgets must be a table/dict, got {raw!r}")
    unknown = sorted(set(raw) - set(BUDGET_KEYS))
    if unknown:
        raise fail(where, f"unknown budget {unknown[0]!r}; allowed: {', '.join(BUDGET_KEYS)}")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if value is None:
            continue
        ok_type = (int, float) if key == "max_seconds" else (int,)
        if isinstance(value, bool) or not isinstance(value, ok_type) or not math.isfinite(value):
            kind = "a finite number of seconds" if key == "max_seconds" else "an integer"
            raise fail(f"{where}: {key}", f"expected {kind}, got {value!r}")
        if value <= 0:
            raise fail(f"{where}: {key}", f"must be > 0, got {value!r}")
        values[key] = float(value) if key == "max_seconds" else value
    return Budgets(**values)
