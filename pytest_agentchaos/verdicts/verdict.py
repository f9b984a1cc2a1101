"""Verdicts: pure functions ``Trace -> Verdict`` with an explanation a human can act on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..saferepr import safe_str
from ..trace.events import (
    Detection,
    Halt,
    Intervention,
    ModelCall,
    ModelResult,
    RunEnded,
    Step,
    ToolCall,
)
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
    by: tuple[str, ...] | list[str] | str | None = None,
    not_before: int | None = None,
) -> Verdict:
    """The agent stopped by itself within every given limit, and no hard budget fired.

    A run that a hard budget had to stop did not halt: it was halted (the failure shows the
    halt monitor's strikes, the risk history, when one watched the run). ``by``: the stop
    must be a halt decision of the halt monitor naming one of these heuristics (``limits``
    for its hard limits). ``not_before``: a halt decision before this step fails (a healthy
    run stopped is a failure too).
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
    decided = [h for h in trace.of_type(Halt) if _by_monitor(h)]
    errored = bool(ended) and ended[-1].status == "error" and not problems
    if errored and not decided:
        problems.append("the run ended with an error before it halted")
    budget_problems = len(problems)
    if errored and decided:
        problems.append(
            f"the halt monitor stopped it ({_decision(decided[0])}), but the run then ended "
            "with an error (the test's own assertion, or the agent's)"
        )
    wanted = (by,) if isinstance(by, str) else tuple(by or ())
    if wanted and not problems:
        named = [h for h in decided if set(h.detail.get("fired", ())) & set(wanted)]
        if not named:
            seen = "; ".join(_decision(h) for h in decided[:3]) or "no halt decision at all"
            problems.append(
                f"it stopped, but not by a halt decision of {', '.join(wanted)} ({seen})"
            )
    if not_before is not None:
        for h in decided:
            if h.step < not_before:
                problems.append(
                    f"halted at step {h.step}, before not_before={not_before} ({_decision(h)}): "
                    "a run stopped too early is a failure too"
                )
    shown = " ".join(f"{k}={_fmt(v)}" for k, v in limits.items()) or "no explicit limits"
    if problems:
        headline = (
            "the agent did not halt on its own within its budget"
            if budget_problems
            else "the agent halted, but not as the marker requires"
        )
        text = f"must_halt failed: {headline}\n" + "\n".join(f"  - {p}" for p in problems)
        text += f"\n  limits: {shown}\n  used:   {_used(u)}"
        history = _risk_history(trace)
        if history:
            text += "\n  halt monitor (latest strikes):\n" + "\n".join(
                f"    {line}" for line in history
            )
        return Verdict("must_halt", False, text, {"limits": limits, "usage": u})
    how = ""
    if decided:
        answered = [
            str(e.action)
            for e in trace.of_type(Intervention)
            if isinstance(e.detail, dict)
            and e.detail.get("by") == "halt_monitor"
            and e.action in ("nudge", "rollback", "restart")
        ]
        first = decided[0]
        fired = ", ".join(map(str, first.detail.get("fired", ()))) or "a halt"
        how = f"; stopped by the halt monitor at step {first.step} ({fired})"
        how += f"; interventions before: {', '.join(answered)}" if answered else ""
    return Verdict(
        "must_halt",
        True,
        f"must_halt ok: halted after {_used(u)} ({shown}){how}",
        {"limits": limits, "usage": u},
    )


def _by_monitor(halt: Halt) -> bool:
    return isinstance(halt.detail, dict) and halt.detail.get("by") == "halt_monitor"


def _decision(halt: Halt) -> str:
    fired = (
        ", ".join(map(str, halt.detail.get("fired", ()))) if isinstance(halt.detail, dict) else ""
    )
    return f"step {halt.step}: {fired or 'a halt'}"


def _risk_history(trace: Trace, last: int = 8) -> list[str]:
    """The halt monitor's latest strikes (``Detection`` events of detector ``halt``)."""
    lines = []
    for event in trace.of_type(Detection):
        if event.detector != "halt" or not isinstance(event.detail, dict):
            continue
        d = event.detail
        lines.append(
            f"step {event.step}: {event.kind} {d.get('strikes')} strike(s), score "
            f"{d.get('score', 0):.2f}: {safe_str(d.get('reason', ''), 160)}"
        )
    return lines[-last:]


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
