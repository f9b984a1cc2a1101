"""Exceptions shared by every part of pytest-agentchaos.

`HardHalt` derives from `BaseException`, as pytest's own outcomes do, so an agent's
``except Exception:`` cannot keep a runaway loop alive.
"""

from __future__ import annotations

from typing import Any


class ChaosConfigError(ValueError):
    """A profile, fault or marker argument is invalid.

    The message names where the bad value came from, the key and what is allowed.
    """


def config_error(where: str, message: str) -> ChaosConfigError:
    """``ChaosConfigError("<where>: <message>")``: every config error names its source."""
    return ChaosConfigError(f"{where}: {message}")


class HardHalt(BaseException):
    """Base of every halt that an agent must not be able to swallow."""

    def __init__(self, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.detail = detail


class BudgetExhausted(HardHalt):
    """A hard budget (steps, tool calls, model calls, virtual seconds, tokens) was hit."""

    def __init__(self, budget: str, limit: float, count: float) -> None:
        super().__init__(
            f"budget {budget} exhausted: {_num(count)} > limit {_num(limit)}",
            budget=budget,
            limit=limit,
            count=count,
        )
        self.budget = budget
        self.limit = limit
        self.count = count


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}"
