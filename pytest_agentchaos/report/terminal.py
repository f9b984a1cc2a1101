"""Text the terminal shows for chaos runs, built from traces alone.

Summary rows are plain data (JSON-able: they cross pytest-xdist); the summary prints the rows
that need attention (all of them with ``-v``) sorted by node id, a total per profile, and notes
about faults that matched no call and agent threads left running.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from typing import Any

from ..trace.trace import Trace
from ..verdicts.verdict import Verdict, usage
from .metrics import run_metrics, total_metrics

__all__ = [
    "QUIET_OUTCOMES",
    "failure_section",
    "format_row",
    "replay_command",
    "summary_lines",
    "summary_row",
]

#: Outcomes whose rows are shown only with ``-v``: nothing to look at.
QUIET_OUTCOMES = frozenset({"passed", "xfailed", "skipped"})


def replay_command(
    test_id: str, session_seed: int, profile_option: str | None = None, runs: int = 1
) -> str:
    """The command that replays a run: same test, same session seed (and profile option, and
    ``--chaos-runs``, which the ids of the runs need)."""
    cmd = f"pytest {shlex.quote(test_id)} --chaos-seed={session_seed}"
    if profile_option:
        cmd += f" --chaos-profile={shlex.quote(profile_option)}"
    if runs > 1:
        cmd += f" --chaos-runs={runs}"
    return cmd


def summary_row(
    trace: Trace,
    verdicts: Sequence[Verdict],
    outcome: str,
    *,
    unmatched: Sequence[str] = (),
    threads_left: Sequence[str] = (),
) -> dict[str, Any]:
    """Plain data for one summary line."""
    u = usage(trace)
    halted = [e.budget for e in trace.budget_exhausted()]
    capped: list[str] = []
    for e in trace.hard_halts():
        framework = isinstance(e.detail, dict) and e.detail.get("by") == "framework"
        names = capped if framework else halted
        reason = f"{e.detail.get('framework')}.{e.detail.get('cap')}" if framework else e.reason
        if reason not in names:
            names.append(reason)
    return {
        "test": trace.meta.get("test", ""),
        "outcome": outcome,
        "profile": trace.meta.get("profile", ""),
        "seed": trace.meta.get("seed", 0),
        "faults": trace.fault_counts(),
        "tool_calls": u["tool_calls"],
        "model_calls": u["model_calls"],
        "steps": u["steps"],
        "seconds": u["seconds"],
        "halted": halted,
        "capped": capped,
        "verdicts": {v.name: v.ok for v in verdicts},
        "metrics": run_metrics(trace),
        "unmatched": list(unmatched),
        "threads_left": list(threads_left),
    }


def format_row(row: dict[str, Any]) -> str:
    """One line of the summary for a :func:`summary_row`: outcome, test, seed, faults, usage
    and verdicts."""
    faults = ",".join(f"{k}:{v}" for k, v in row["faults"].items()) or "none"
    verdicts = ",".join(f"{k}={'ok' if ok else 'FAIL'}" for k, ok in row["verdicts"].items())
    if row["halted"]:
        verdicts = ",".join(filter(None, [verdicts, "halted:" + "+".join(row["halted"])]))
    if row.get("capped"):
        verdicts = ",".join(filter(None, [verdicts, "capped:" + "+".join(row["capped"])]))
    return (
        f"{row['outcome'].upper():<7} {row['test']}  profile={row['profile']} "
        f"test_seed={row['seed']} "
        f"faults={faults} tool_calls={row['tool_calls']} model_calls={row['model_calls']} "
        f"steps={row['steps']} vtime={row['seconds']:.1f}s verdict={verdicts or '-'}"
    )


def _totals(rows: Iterable[dict[str, Any]]) -> list[str]:
    by_profile: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_profile.setdefault(str(row["profile"]), []).append(row)
    lines = []
    for profile in sorted(by_profile):
        group = by_profile[profile]
        outcomes: dict[str, int] = {}
        faults: dict[str, int] = {}
        halted = capped = 0
        for row in group:
            outcomes[row["outcome"]] = outcomes.get(row["outcome"], 0) + 1
            for kind, n in row["faults"].items():
                faults[kind] = faults.get(kind, 0) + n
            halted += bool(row["halted"])
            capped += bool(row.get("capped"))
        counted = ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items()))
        fired = ",".join(f"{k}:{v}" for k, v in sorted(faults.items())) or "none"
        plural = "s" if len(group) != 1 else ""
        by_cap = f"; stopped by a framework's cap: {capped}" if capped else ""
        survived = outcomes.get("passed", 0)
        lines.append(
            f"profile={profile}: {len(group)} chaos test{plural} ({counted}); survived "
            f"{survived}/{len(group)}; faults fired: {fired}; halted by the harness: "
            f"{halted}{by_cap}"
        )
        stack = _stack_line(total_metrics(row.get("metrics") or {} for row in group))
        if stack:
            lines.append(f"  {stack}")
    return lines


def _stack_line(total: dict[str, Any]) -> str:
    """What the escape, repair and halt stacks did across a profile's runs (empty when
    they did nothing)."""
    parts = []
    if total["loops"]:
        median = total["median_steps_to_escape"]
        took = f", median {median:g} steps to escape" if median is not None else ""
        parts.append(f"loops detected {total['loops']}, escaped {total['escaped']}{took}")
    repairs = (total["repairs_ok"], total["repairs_declined"], total["repairs_failed"])
    if any(repairs):
        parts.append("repairs {} ok, {} declined, {} failed".format(*repairs))
    if total["halts"]:
        named = ",".join(f"{k}:{v}" for k, v in sorted(total["halts"].items()))
        parts.append(f"halts (by heuristic, budget or cap): {named}")
    return "; ".join(parts)


def summary_lines(rows: Sequence[dict[str, Any]], verbose: int = 0) -> list[str]:
    """The summary section's lines: rows needing attention (every row with ``verbose``),
    sorted by node id, then totals per profile and notes."""
    ordered = sorted(rows, key=lambda r: str(r["test"]))
    lines = [
        format_row(row) for row in ordered if verbose > 0 or row["outcome"] not in QUIET_OUTCOMES
    ]
    lines.extend(_totals(ordered))
    for row in ordered:
        for fault in row.get("unmatched", ()):
            lines.append(f"note: {row['test']}: {fault}")
        threads = row.get("threads_left", ())
        if threads:
            lines.append(
                f"note: {row['test']}: agent threads still running after the test: "
                + ", ".join(threads)
            )
    return lines


def failure_section(trace: Trace, replay: str, notes: Sequence[str] = (), last: int = 20) -> str:
    """The report section of a failing chaos test: ``notes`` (failing verdicts and halts the
    failure message did not show), how to replay it and its last events."""
    meta = trace.meta
    events = trace.tail(last)
    lines = list(notes)
    lines += [
        f"profile={meta.get('profile')} test seed={meta.get('seed')} "
        f"faults fired={sum(trace.fault_counts().values())} {_budgets(meta.get('budgets'))}",
        f"replay: {replay}",
        f"last {len(events)} of {len(trace)} trace events:",
    ]
    lines.extend("  " + e.describe() for e in events)
    return "\n".join(lines)


def _budgets(budgets: Any) -> str:
    if not budgets:
        return "budgets=none"
    return "budgets=" + ",".join(f"{k}={v:g}" for k, v in budgets.items())
