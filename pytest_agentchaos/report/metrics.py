"""What a chaos run did, in numbers, read from its trace alone: the metrics the terminal
summary totals per profile (and that JUnit properties, report files and baselines can carry).

Plain JSON-able data: summary rows cross pytest-xdist.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from typing import Any

from ..trace.events import Detection, Halt, Repair, ToolResult
from ..trace.trace import Trace
from ..verdicts.verdict import Verdict, usage

__all__ = ["LOOP_OBSERVER", "HALT_MONITOR", "VERDICT_METRICS", "run_metrics", "total_metrics",
           "verdict_metrics"]  # fmt: skip

#: The ``detector`` of the loop observer's detections, and the ``by`` of the monitor's halts.
LOOP_OBSERVER = "loop_observer"
HALT_MONITOR = "halt_monitor"


def run_metrics(trace: Trace) -> dict[str, Any]:
    """One run's numbers: usage (steps, tool and model calls, virtual seconds, tokens), faults
    by kind, loops detected and escaped with the steps each escape took, repairs that worked,
    were declined or were followed by a failed call, and halts by heuristic (the halt
    monitor's), by budget and by a framework's cap."""
    loops = escaped = 0
    to_escape: list[int] = []
    detected_at: dict[Any, int] = {}
    for d in trace.of_type(Detection):
        if d.detector != LOOP_OBSERVER or not isinstance(d.detail, dict):
            continue
        if d.kind == "loop":
            loops += 1
            detected_at[d.detail.get("episode")] = _int(d.detail.get("detected_step"), d.step)
        elif d.kind == "loop_broken":
            escaped += 1
            start = detected_at.get(d.detail.get("episode"))
            if start is not None:
                to_escape.append(max(0, _int(d.detail.get("broken_step"), d.step) - start))
    return {
        **usage(trace),
        "faults": trace.fault_counts(),
        "loops": loops,
        "escaped": escaped,
        "steps_to_escape": to_escape,
        **_repairs(trace),
        "halts": _halts(trace),
    }


#: The numbers a run's verdicts add to its metrics, when the test asked for them: metric name
#: -> (verdict, its facts that add up to it).
VERDICT_METRICS: dict[str, tuple[str, tuple[str, ...]]] = {
    "retries": ("must_retry", ("retries",)),
    "retry_problems": ("must_retry", ("problems",)),
    "duplicate_effects": ("must_not_duplicate", ("duplicates",)),
    "instructions_followed": ("must_not_follow", ("followed", "canaries_repeated")),
}


def verdict_metrics(verdicts: Iterable[Verdict]) -> dict[str, int]:
    """What the run's ``must_retry`` / ``must_not_duplicate`` / ``must_not_follow`` counted:
    retries and the retry rules they broke, effects that ran twice for one intent, injected
    instructions obeyed (a call made or a canary repeated). Only the verdicts judged."""
    by_name = {v.name: v.facts for v in verdicts}
    found: dict[str, int] = {}
    for metric, (name, keys) in VERDICT_METRICS.items():
        facts = by_name.get(name)
        if facts is not None:
            found[metric] = sum(_int(facts.get(key), 0) for key in keys)
    return found


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _repairs(trace: Trace) -> dict[str, int]:
    """Repairs that worked (the repaired call succeeded), declined (the repairer refused),
    and failed (repaired, and the call failed all the same). A framework's own validation of
    corrupted arguments (``detail["by"] == "framework"``) is no repair of the agent's."""
    ends: dict[tuple[str, Any], bool] = {(r.tool, r.index): r.ok for r in trace.of_type(ToolResult)}
    ok = declined = failed = 0
    for repair in trace.of_type(Repair):
        if isinstance(repair.detail, dict) and repair.detail.get("by") == "framework":
            continue
        if not repair.ok:
            declined += 1
            continue
        index = repair.detail.get("index") if isinstance(repair.detail, dict) else None
        if ends.get((repair.tool, index), True):
            ok += 1
        else:
            failed += 1
    return {"repairs_ok": ok, "repairs_declined": declined, "repairs_failed": failed}


def _halts(trace: Trace) -> dict[str, int]:
    """How the run was stopped, by name: each heuristic of a halt-monitor decision, each
    budget (``budget:max_steps``), each framework cap (``cap:langgraph.recursion_limit``),
    other hard halts by their reason."""
    counts: dict[str, int] = {}

    def add(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1

    for exhausted in trace.budget_exhausted():
        add(f"budget:{exhausted.budget}")
    for halt in trace.of_type(Halt):
        detail = halt.detail if isinstance(halt.detail, dict) else {}
        if detail.get("by") == HALT_MONITOR:
            for name in detail.get("fired") or ["halt_monitor"]:
                add(str(name))
        elif detail.get("by") == "framework":
            add(f"cap:{detail.get('framework')}.{detail.get('cap')}")
        elif halt.hard:
            add(f"hard:{halt.reason[:60]}")
    return counts


def total_metrics(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The metrics of several runs added up (for a profile's total line); the median steps
    to escape over every escape of every run, ``None`` when nothing escaped. The verdicts'
    metrics (:data:`VERDICT_METRICS`) are there when some run counted them."""
    total: dict[str, Any] = {"loops": 0, "escaped": 0, "repairs_ok": 0, "repairs_declined": 0,
                             "repairs_failed": 0, "halts": {}}  # fmt: skip
    escapes: list[int] = []
    for metrics in rows:
        for key in ("loops", "escaped", "repairs_ok", "repairs_declined", "repairs_failed"):
            total[key] += int(metrics.get(key, 0))
        for key in VERDICT_METRICS:  # only where some run's verdict counted it
            if key in metrics:
                total[key] = total.get(key, 0) + int(metrics[key])
        for name, n in (metrics.get("halts") or {}).items():
            total["halts"][name] = total["halts"].get(name, 0) + int(n)
        escapes.extend(metrics.get("steps_to_escape") or [])
    total["median_steps_to_escape"] = statistics.median(escapes) if escapes else None
    return total
