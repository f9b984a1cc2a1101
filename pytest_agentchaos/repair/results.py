"""What a repair decided: its steps, its result, and the error raised when it declines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .diagnose import Diagnosis
from .paths import plain

__all__ = ["RepairError", "RepairResult", "RepairStep"]


@dataclass(frozen=True)
class RepairStep:
    """One repair of one value (or one decline)."""

    field: str
    problem: str
    strategy: str
    before: Any
    after: Any
    confidence: float
    reason: str
    ok: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "problem": self.problem,
            "strategy": self.strategy,
            "before": plain(self.before),
            "after": plain(self.after),
            "confidence": self.confidence,
            "reason": self.reason,
            "ok": self.ok,
        }


@dataclass(frozen=True)
class RepairResult:
    """What :meth:`ParamRepairer.repair` decided.

    ``ok``: ``args`` are the arguments to call with (validated; unchanged for a valid call,
    with ``strategy == "none"``). Not ok: ``args`` is None and ``reason`` says why
    (``strategy`` is the one that declined, ``retry`` for a transient error — a timeout, a
    5xx, a rate limit: no parameter error, the call is retried as it is by whoever retries —
    ``alternative_route`` for a missing tool, ``report_unrecoverable`` otherwise).
    ``confidence`` is the least of the steps' confidences.
    """

    ok: bool
    args: dict[str, Any] | None
    strategy: str
    confidence: float
    reason: str
    steps: tuple[RepairStep, ...] = ()
    diagnosis: Diagnosis | None = None

    @property
    def changed(self) -> bool:
        """Whether the arguments were changed."""
        return any(step.ok for step in self.steps)


class RepairError(ValueError):
    """A tool call failed for a parameter reason the repairer could not fix (or it ran out
    of attempts). ``result`` is the last :class:`RepairResult`; the tool's own error is the
    ``__cause__``. A ``ValueError``: the escape stack's classifier sees a persistent
    validation error, which no backoff retries."""

    def __init__(self, message: str, result: RepairResult) -> None:
        super().__init__(message)
        self.result = result
