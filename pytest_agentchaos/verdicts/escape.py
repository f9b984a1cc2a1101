"""``must_escape``: every loop the harness saw was broken, soon enough, and the run finished.

Pure over the trace: it reads the ``Detection`` events of the harness's loop observer (which
watches the run whatever the agent does), the agent's ``Intervention`` events, budget stops
and the run's end.
"""

from __future__ import annotations

from typing import Any

from ..trace.events import Detection, Intervention, RunEnded
from ..trace.trace import Trace
from .verdict import Verdict, halt_line, headed

OBSERVER = "loop_observer"


def _loop_line(detail: dict[str, Any]) -> str:
    kind = detail.get("loop_kind", "?")
    block = " -> ".join(detail.get("block") or []) or "?"
    if kind == "repeat" and detail.get("rule") == "same_error":
        what = f"{block} failed the same way {detail.get('repeats')}x with varying arguments"
    elif kind == "repeat":
        what = f"{block} repeated {detail.get('repeats')}x (period {detail.get('period')})"
    elif kind == "node":
        what = f"node {detail.get('subject')} visited {detail.get('repeats')}x"
    else:  # a state, a visit with its state, or a call with its result, in any order
        what = f"{block} recurred {detail.get('repeats')}x with nothing new in between"
    return (
        f"loop #{detail.get('episode')} [{kind}]: {what}; "
        f"began at step {detail.get('began_step')}, detected at step {detail.get('detected_step')}"
    )


def must_escape(
    trace: Trace, *, within_steps: int | None = None, require_loop: bool = False
) -> Verdict:
    """Every loop episode was broken (within ``within_steps`` steps of its detection) and no
    hard budget stopped the run. A run where no loop arose is **not exercised** (it passes:
    under a probabilistic profile a run may draw no trap); with ``require_loop`` it fails."""
    detections = [d for d in trace.of_type(Detection) if d.detector == OBSERVER]
    loops = [d.detail for d in detections if d.kind == "loop"]
    broken = {d.detail.get("episode"): d.detail for d in detections if d.kind == "loop_broken"}
    interventions = trace.of_type(Intervention)
    ended = trace.of_type(RunEnded)
    end = (
        f"the run ended {ended[-1].status} at step {ended[-1].step}, t={ended[-1].t:.3f}s"
        if ended
        else f"the run stopped at step {trace.steps}"
    )
    facts: dict[str, Any] = {"loops": len(loops), "broken": len(broken)}
    problems: list[str] = []
    for halt in trace.budget_exhausted():
        problems.append(
            f"hard budget {halt.budget}={halt.limit:g} stopped the run at step {halt.step}: "
            "it did not finish"
        )
    for stop in trace.hard_halts():
        problems.append(f"{halt_line(stop)} stopped the run at step {stop.step}: it did not finish")
    if not loops:
        fired = sum(trace.fault_counts().values())
        if require_loop:
            return Verdict(
                "must_escape",
                False,
                headed(
                    "must_escape failed: nothing to escape: no loop arose in this run "
                    f"({fired} faults fired; {end}). Inject faults that trap the agent, or "
                    "pass require_loop=False.",
                    trace,
                ),
                facts,
                exercised=False,
            )
        if not problems:
            return Verdict(
                "must_escape",
                True,
                headed(
                    f"must_escape not exercised: no loop arose in this run ({fired} faults "
                    f"fired; {end}); require_loop=True fails such a run",
                    trace,
                ),
                facts,
                exercised=False,
            )
    for loop in loops:
        episode = loop.get("episode")
        fix = broken.get(episode)
        if fix is None:
            problems.append(_loop_line(loop) + "; never broken")
            continue
        took = int(fix["broken_step"]) - int(loop["detected_step"])
        if within_steps is not None and took > within_steps:
            problems.append(
                _loop_line(loop)
                + f"; broken only at step {fix['broken_step']}, {took} steps after detection "
                f"(within_steps={within_steps})"
            )
    if not problems:
        return Verdict(
            "must_escape",
            True,
            headed(f"must_escape ok: {len(loops)} loop(s) detected and broken; {end}", trace),
            facts,
        )
    first = min((int(loop["detected_step"]) for loop in loops), default=0)
    tried = [i for i in interventions if i.step >= first]
    headline = "the agent did not escape its loop"
    if not loops:
        headline = "no loop arose, but the run did not finish"
    lines = [f"must_escape failed: {headline}", *(f"  - {p}" for p in problems)]
    if tried:
        shown = ", ".join(f"{i.action}@{i.step}" for i in tried[:12])
        more = f" (+{len(tried) - 12} more)" if len(tried) > 12 else ""
        lines.append(f"  interventions tried: {shown}{more}")
    elif loops:
        lines.append("  interventions tried: none recorded (is the agent running an escape stack?)")
    lines.append(f"  {end}")
    return Verdict("must_escape", False, headed("\n".join(lines), trace), facts)
