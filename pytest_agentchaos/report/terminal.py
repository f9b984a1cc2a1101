"""Text the terminal shows for a chaos run, built from the trace alone."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from ..trace.trace import Trace
from ..verdicts.verdict import Verdict, usage


def replay_command(test_id: str, session_seed: int, profile_option: str | None = None) -> str:
    """The command that replays a run: same test, same session seed (and profile option)."""
    cmd = f"pytest {shlex.quote(test_id)} --chaos-seed={session_seed}"
    if profile_option:
        cmd += f" --chaos-profile={shlex.quote(profile_option)}"
    return cmd


def summary_row(trace: Trace, verdicts: Sequence[Verdict], outcome: str) -> dict[str, Any]:
    """Plain data for one summary line (JSON-able: it crosses pytest-xdist)."""
    u = usage(trace)
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
        "halted": [e.budget for e in trace.budget_exhausted()],
        "verdicts": {v.name: v.ok for v in verdicts},
    }


def format_row(row: dict[str, Any]) -> str:
    faults = ",".join(f"{k}:{v}" for k, v in row["faults"].items()) or "none"
    verdicts = ",".join(f"{k}={'ok' if ok else 'FAIL'}" for k, ok in row["verdicts"].items())
    if row["halted"]:
        verdicts = ",".join(filter(None, [verdicts, "halted:" + "+".join(row["halted"])]))
    return (
        f"{row['outcome'].upper():<7} {row['test']}  profile={row['profile']} "
        f"test_seed={row['seed']} "
        f"faults={faults} tool_calls={row['tool_calls']} model_calls={row['model_calls']} "
        f"steps={row['steps']} vtime={row['seconds']:.1f}s verdict={verdicts or '-'}"
    )


def failure_section(trace: Trace, replay: str, last: int = 20) -> str:
    """The report section of a failing chaos test: how to replay it and its last events."""
    meta = trace.meta
    events = trace.tail(last)
    lines = [
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
