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


class RunClosed(RuntimeError):
    """A wrapped tool, model or agent was called after its chaos run had ended: it belongs to
    that run (its plan, its trace) and must not outlive it. Wrap the original again in the test
    that uses it."""


class HardHalt(BaseException):
    """Base of every halt that an agent must not be able to swallow.

    ``reason`` names the kind of halt in trace events and reports (a budget's name,
    ``network``, ``wall_timeout`` ...).
    """

    reason: str = "halt"

    def __init__(self, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.detail = detail

    @property
    def message(self) -> str:
        """The halt's message (its class name when it was raised without one)."""
        return str(self.args[0]) if self.args else type(self).__name__

    def again(self) -> HardHalt:
        """A fresh copy of this halt, raised for every call an agent makes after swallowing it
        (a fresh one, so tracebacks do not pile up on one object)."""
        copy = type(self).__new__(type(self))
        BaseException.__init__(copy, *self.args)
        copy.__dict__.update(self.__dict__)
        return copy


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

    @property
    def reason(self) -> str:  # type: ignore[override]
        """The name of the budget that was hit."""
        return self.budget


class NetworkBlocked(HardHalt):
    """A chaos test tried to reach the real network (an unmocked HTTP request, or a socket to
    a host the test does not allow). Hard, so a swallowed refusal still fails the test."""

    reason = "network"


class WallTimeout(HardHalt):
    """The test ran longer than its real-time limit (``chaos_wall_timeout``): the watchdog
    stopped an agent that would not stop."""

    reason = "wall_timeout"


class UnreadableUsage(HardHalt):
    """A model call reported token usage that is not a count, while ``max_tokens`` is set:
    the budget cannot be enforced, so the run stops rather than overspend in silence."""

    reason = "usage"


class ProviderScriptError(HardHalt):
    """A scripted provider endpoint (``chaos.provider``) cannot answer as the test asked: the
    agent's request is not valid for the provider's API (the provider would answer 400), the
    script has no turn left, or the test's ``respond`` function failed. Hard, so that an agent
    that swallows the error still fails its test, naming what is wrong."""

    reason = "provider"


class HaltSwallowed(HardHalt):
    """Raised into an agent that caught a hard halt and carried on, until it reaches the
    harness; ``halt`` is the halt it swallowed."""

    reason = "swallowed"

    def __init__(self, halt: HardHalt) -> None:
        super().__init__(
            f"the agent swallowed a hard halt and carried on: {halt.message}", halt=halt
        )
        self.halt = halt


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}"


class ReplayDiverged(UserWarning):
    """A replayed run (``--chaos-replay``) made other calls than the run it replays: other
    arguments, a call the recorded run did not make, or fewer calls. Its faults then hit
    other calls than they did, and the replay may not reproduce what was recorded."""
