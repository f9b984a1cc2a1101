"""Verdicts: pure functions ``Trace -> Verdict`` with an explanation a human can act on.

Each verdict has one of three outcomes: **pass**, **fail**, or **not exercised** (the run never
gave it anything to judge: no loop arose, no call needed repair, nothing went wrong to recover
from, or an error ended the run before the agent could show whether it stops on its own). A
verdict not exercised does not fail its test, unless the marker asks for its subject
(``require_loop=True``, ``require_problem=True``): then it fails, as it always did.
"""

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

#: The outcomes of a verdict, as reports and ``index.json`` spell them.
PASS, FAIL, NOT_EXERCISED = "pass", "fail", "not_exercised"
OUTCOMES = (PASS, FAIL, NOT_EXERCISED)
#: How the terminal summary, JUnit and the HTML report show each outcome.
LABELS = {PASS: "ok", FAIL: "FAIL", NOT_EXERCISED: "not exercised"}


@dataclass(frozen=True, slots=True)
class Verdict:
    """The judgement of one marker over one trace. ``exercised`` is False when the run gave
    the verdict nothing to judge; such a verdict passes (``ok``) unless its marker required
    its subject, and its :attr:`outcome` is ``not_exercised`` either way it did not fail."""

    name: str
    ok: bool
    explanation: str
    facts: dict[str, Any] = field(default_factory=dict)
    exercised: bool = True

    def __bool__(self) -> bool:
        return self.ok

    @property
    def outcome(self) -> str:
        """``fail`` when it fails its test, else ``not_exercised`` or ``pass``."""
        return FAIL if not self.ok else PASS if self.exercised else NOT_EXERCISED


def outcome_of(value: Any) -> str:
    """A verdict outcome from what a summary row or an index holds (``True`` / ``False``
    from older rows; anything unknown is a failure, never a pass)."""
    if value is True:
        return PASS
    if isinstance(value, str) and value in OUTCOMES:
        return value
    return FAIL


def run_end(trace: Trace) -> dict[str, Any]:
    """How the run ended, from its last ``RunEnded`` event: ``status`` (``completed``,
    ``halted``, ``error``, ``interrupted``; ``""`` when it never ended), ``step`` and, when
    the test's call raised, ``error`` (``type``, ``message``, ``where``: plain strings, cut)."""
    ended = None
    events = trace.events
    if events and isinstance(events[-1], RunEnded):
        ended = events[-1]
    else:
        found = trace.of_type(RunEnded)
        ended = found[-1] if found else None
    if ended is None:
        return {"status": "", "step": trace.steps, "error": None}
    return {"status": safe_str(ended.status, 40), "step": ended.step,
            "error": error_of(ended.detail)}  # fmt: skip


def error_of(detail: Any) -> dict[str, str] | None:
    """The ``error`` a ``RunEnded`` detail carries (``type``, ``message``, ``where``), each a
    string cut to a readable length; None when there is none or it is not an object."""
    error = detail.get("error") if isinstance(detail, dict) else None
    if not isinstance(error, dict):
        return None
    kind = error.get("type")
    if not isinstance(kind, str) or not kind:
        return None
    message = error.get("message")
    where = error.get("where")
    return {
        "type": safe_str(kind, 120),
        "message": safe_str(message, 500) if isinstance(message, str) else "",
        "where": safe_str(where, 300) if isinstance(where, str) else "",
    }


def error_line(error: dict[str, str], limit: int = 300) -> str:
    """``AssertionError: 2 != 3 (at test_x.py:12 in test_agent)`` on one line."""
    message = " ".join(error.get("message", "").split())
    if len(message) > limit:
        message = message[: limit - 3] + "..."
    text = f"{error.get('type', '?')}: {message}" if message else error.get("type", "?")
    where = error.get("where")
    return f"{text} (at {where})" if where else text


def ended_by(trace: Trace) -> str | None:
    """What ended the run, when it was not the agent finishing: the test's own exception
    (``the run ended with AssertionError: ... (at test_x.py:12 in test_y)``) or an
    interruption; None for a run that completed, or that a hard halt stopped (verdicts name
    the halt themselves)."""
    end = run_end(trace)
    error, status = end["error"], end["status"]
    if error is not None and status != "halted":
        return f"the run ended at step {end['step']} with {error_line(error)}"
    if status == "interrupted":
        return f"the run was interrupted at step {end['step']}"
    if status == "error":
        return f"the run ended with an error at step {end['step']} (no detail recorded)"
    return None


def seconds(value: float) -> str:
    """Virtual seconds as a message writes them: ``29.0``, ``29.95``, ``0.000125`` (to the
    microsecond, the trace's resolution; never rounded up to a whole second)."""
    text = f"{value:.6f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def end_line(trace: Trace) -> str:
    """How the run ended, in a few words: ``the run ended completed at t=7.000s``."""
    last = trace[-1] if len(trace) else None
    ended = [last] if isinstance(last, RunEnded) else trace.of_type(RunEnded)
    if ended:
        return f"the run ended {ended[-1].status} at t={ended[-1].t:.3f}s"
    return f"the run stopped at t={trace.elapsed:.3f}s"


def headed(first: str, trace: Trace) -> str:
    """A verdict's explanation that says first what ended the run, then its own judgement."""
    why = ended_by(trace)
    return f"{why}\n{first}" if why else first


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
    run stopped is a failure too). A run that an exception ended (the test's own assertion,
    an error the agent let out) within its limits and before any halt decision is **not
    exercised**: it did not show whether the agent stops on its own, and the test fails by
    that exception already.
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
    facts: dict[str, Any] = {"limits": limits, "usage": u}
    shown = " ".join(f"{k}={_fmt(v)}" for k, v in limits.items()) or "no explicit limits"
    within = _within(limits, u)
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
    decided = [h for h in trace.of_type(Halt) if _by_monitor(h)]
    if problems:  # a budget or a hard halt stopped it, or it went past a limit
        return _halt_failed(
            trace, "the agent did not halt on its own within its budget", problems, shown, u,
            facts,
        )  # fmt: skip
    errored = ended_by(trace) is not None
    if errored and not decided:
        return Verdict(
            "must_halt",
            True,
            headed(
                f"must_halt not exercised: the run ended by that error within its limits "
                f"({within}), before any halt decision; whether the agent stops on its own "
                "was not shown",
                trace,
            ),
            facts,
            exercised=False,
        )
    wanted = (by,) if isinstance(by, str) else tuple(by or ())
    if wanted:
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
    if problems:
        return _halt_failed(
            trace, "the agent halted, but not as the marker requires", problems, shown, u, facts
        )
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
        headed(f"must_halt ok: halted after {_used(u)} ({shown}){how}", trace),
        facts,
    )


def _within(limits: dict[str, float], u: dict[str, Any]) -> str:
    """What the run used against each limit: ``steps=2 of max_steps=10``."""
    if not limits:
        return f"no explicit limits; used {_used(u)}"
    return ", ".join(
        f"{_LIMIT_TO_USAGE[k]}={_fmt(u[_LIMIT_TO_USAGE[k]])} of {k}={_fmt(v)}"
        for k, v in limits.items()
    )


def _halt_failed(
    trace: Trace,
    headline: str,
    problems: list[str],
    shown: str,
    u: dict[str, Any],
    facts: dict[str, Any],
) -> Verdict:
    text = f"must_halt failed: {headline}\n" + "\n".join(f"  - {p}" for p in problems)
    text += f"\n  limits: {shown}\n  used:   {_used(u)}"
    history = _risk_history(trace)
    if history:
        text += "\n  halt monitor (latest strikes):\n" + "\n".join(
            f"    {line}" for line in history
        )
    return Verdict("must_halt", False, headed(text, trace), facts)


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
