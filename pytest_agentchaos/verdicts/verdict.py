"""Verdicts: pure functions ``Trace -> Verdict`` with an explanation a human can act on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..saferepr import safe_str
from ..trace.events import Halt, ModelCall, ModelResult, RunEnded, Step, ToolCall
from ..trace.trace import Trace


@dataclass(frozen=True, slots=True)
class Verdict:
    """The judgement of one marker over one trace."""

    name: str
    ok: bool
    explanation: str
    facts: dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.ok


def usage(trace: Trace) -> dict[str, Any]:
    """What the run spent: steps, tool calls, model calls, virtual seconds and tokens."""
    steps = tool_calls = model_calls = tokens = 0
    for e in trace:
        if isinstance(e, ToolCall):
            steps += 1
            tool_calls += 1
        elif isinstance(e, ModelCall):
            steps += 1
            model_calls += 1
        elif isinstance(e, Step):
            steps += 1
        elif isinstance(e, ModelResult) and e.tokens:
            tokens += e.tokens
    return {
        "steps": steps,
        "tool_calls": tool_calls,
        "model_calls": model_calls,
        "seconds": round(trace.elapsed, 3),
        "tokens": tokens,
    }


_LIMIT_TO_USAGE = {
    "max_steps": "steps",
    "max_tool_calls": "tool_calls",
    "max_model_calls": "model_calls",
    "max_seconds": "seconds",
    "max_tokens": "tokens",
}


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}"


def _used(u: dict[str, Any]) -> str:
    return (
        f"steps={u['steps']} tool_calls={u['tool_calls']} model_calls={u['model_calls']} "
        f"virtual_seconds={_fmt(u['seconds'])} tokens={u['tokens']}"
    )


def must_halt(
    trace: Trace,
    *,
    max_steps: int | None = None,
    max_tool_calls: int | None = None,
    max_model_calls: int | None = None,
    max_seconds: float | None = None,
    max_tokens: int | None = None,
) -> Verdict:
    """The agent stopped by itself within every given limit, and no hard budget fired.

    A run that a hard budget had to stop did not halt: it was halted.
    """
    given: dict[str, float | None] = {
        "max_steps": max_steps,
        "max_tool_calls": max_tool_calls,
        "max_model_calls": max_model_calls,
        "max_seconds": max_seconds,
        "max_tokens": max_tokens,
    }
    limits: dict[str, float] = {k: v for k, v in given.items() if v is not None}
    u = usage(trace)
    problems: list[str] = []
    for exhausted in trace.budget_exhausted():
        problems.append(
            f"hard budget {exhausted.budget}={_fmt(exhausted.limit)} stopped it at step "
            f"{exhausted.step}, t={exhausted.t:.3f}s ({exhausted.budget.removeprefix('max_')} "
            f"would have reached {_fmt(exhausted.count)})"
        )
    for halt in trace.hard_halts():
        problems.append(f"{halt_line(halt)} stopped it at step {halt.step}, t={halt.t:.3f}s")
    for key, limit in limits.items():
        spent = u[_LIMIT_TO_USAGE[key]]
        if spent > limit:
            problems.append(f"{key}={_fmt(limit)} exceeded: {_LIMIT_TO_USAGE[key]}={_fmt(spent)}")
    ended = trace.of_type(RunEnded)
    if ended and ended[-1].status == "error" and not problems:
        problems.append("the run ended with an error before it halted")
    shown = " ".join(f"{k}={_fmt(v)}" for k, v in limits.items()) or "no explicit limits"
    if problems:
        text = (
            "must_halt failed: the agent did not halt on its own within its budget\n"
            + "\n".join(f"  - {p}" for p in problems)
        )
        text += f"\n  limits: {shown}\n  used:   {_used(u)}"
        return Verdict("must_halt", False, text, {"limits": limits, "usage": u})
    return Verdict(
        "must_halt",
        True,
        f"must_halt ok: halted after {_used(u)} ({shown})",
        {"limits": limits, "usage": u},
    )


def halt_line(halt: Halt) -> str:
    """A hard ``Halt`` event in a few words: its reason and what it said."""
    message = halt.detail.get("message") if isinstance(halt.detail, dict) else None
    what = f": {safe_str(message, 200)}" if message else ""
    return f"hard halt '{halt.reason}'{what};"


def not_implemented(name: str, issue: str) -> Verdict:
    """A marker whose stack has not landed yet: it fails, never passes vacuously."""
    return Verdict(
        name,
        False,
        f"{name} is not implemented yet ({issue}); a test that needs it cannot pass until it lands",
    )
