"""Text the terminal shows for chaos runs, built from traces alone.

Summary rows are plain data (JSON-able: they cross pytest-xdist); the summary prints the rows
that need attention (all of them with ``-v``) sorted by node id, a total per profile, and notes
about faults that matched no call and agent threads left running.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..trace.events import Event, RunEnded
from ..trace.trace import Trace
from ..verdicts.verdict import (
    LABELS,
    NOT_EXERCISED,
    Verdict,
    error_line,
    error_of,
    outcome_of,
    run_end,
    usage,
)
from .metrics import run_metrics, total_metrics, verdict_metrics

__all__ = [
    "QUIET_OUTCOMES",
    "failure_section",
    "format_row",
    "not_exercised_notes",
    "replay_command",
    "row_error",
    "summary_lines",
    "summary_row",
]

#: Outcomes whose rows are shown only with ``-v``: nothing to look at.
QUIET_OUTCOMES = frozenset({"passed", "xfailed", "skipped"})
#: Outcomes of a run that failed (the HTML report lists them first; totals count them).
FAILED_OUTCOMES = frozenset({"failed", "error", "xpassed", "interrupted"})
#: The longest message of the error that ended a run shown in its summary row.
ROW_ERROR = 160
#: Notes on verdicts not exercised shown without ``-v``.
NOTES_SHOWN = 10


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
        "error": run_end(trace)["error"],
        "profile": trace.meta.get("profile", ""),
        "seed": trace.meta.get("seed", 0),
        "faults": trace.fault_counts(),
        "tool_calls": u["tool_calls"],
        "model_calls": u["model_calls"],
        "steps": u["steps"],
        "seconds": u["seconds"],
        "halted": halted,
        "capped": capped,
        "verdicts": {v.name: v.outcome for v in verdicts},
        "metrics": {**run_metrics(trace), **verdict_metrics(verdicts)},
        "unmatched": list(unmatched),
        "threads_left": list(threads_left),
    }


def row_error(row: Mapping[str, Any], limit: int = ROW_ERROR) -> str | None:
    """The exception that ended a row's run, on one line (None: it ended without one)."""
    error = row.get("error")
    if not isinstance(error, Mapping) or not isinstance(error.get("type"), str):
        return None
    return error_line({k: str(v) for k, v in error.items() if isinstance(v, str)}, limit)


def _verdict_text(name: str, value: Any) -> str:
    outcome = outcome_of(value)
    return f"{name}={'not_exercised' if outcome == NOT_EXERCISED else LABELS[outcome]}"


def format_row(row: dict[str, Any]) -> str:
    """One line of the summary for a :func:`summary_row`: outcome, test, seed, faults, usage,
    verdicts, and the exception that ended the run, if one did and no halt of the harness or
    cap of a framework (which the line names) stopped it."""
    faults = ",".join(f"{k}:{v}" for k, v in row["faults"].items()) or "none"
    verdicts = ",".join(_verdict_text(k, v) for k, v in row["verdicts"].items())
    if row["halted"]:
        verdicts = ",".join(filter(None, [verdicts, "halted:" + "+".join(row["halted"])]))
    if row.get("capped"):
        verdicts = ",".join(filter(None, [verdicts, "capped:" + "+".join(row["capped"])]))
    error = None if row["halted"] or row.get("capped") else row_error(row)
    return (
        f"{row['outcome'].upper():<7} {row['test']}  profile={row['profile']} "
        f"test_seed={row['seed']} "
        f"faults={faults} tool_calls={row['tool_calls']} model_calls={row['model_calls']} "
        f"steps={row['steps']} vtime={row['seconds']:.1f}s verdict={verdicts or '-'}"
        + (f" error={error}" if error else "")
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
        idle: dict[str, int] = {}
        halted = capped = 0
        for row in group:
            outcomes[row["outcome"]] = outcomes.get(row["outcome"], 0) + 1
            for kind, n in row["faults"].items():
                faults[kind] = faults.get(kind, 0) + n
            halted += bool(row["halted"])
            capped += bool(row.get("capped"))
            for name, value in (row.get("verdicts") or {}).items():
                if outcome_of(value) == NOT_EXERCISED:
                    idle[name] = idle.get(name, 0) + 1
        counted = ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items()))
        fired = ",".join(f"{k}:{v}" for k, v in sorted(faults.items())) or "none"
        plural = "s" if len(group) != 1 else ""
        by_cap = f"; stopped by a framework's cap: {capped}" if capped else ""
        survived = outcomes.get("passed", 0)
        unexercised = ",".join(f"{k}:{v}" for k, v in sorted(idle.items()))
        lines.append(
            f"profile={profile}: {len(group)} chaos test{plural} ({counted}); survived "
            f"{survived}/{len(group)}; faults fired: {fired}; halted by the harness: "
            f"{halted}{by_cap}"
            + (f"; verdicts not exercised: {unexercised}" if unexercised else "")
        )
        stack = _stack_line(total_metrics(row.get("metrics") or {} for row in group))
        if stack:
            lines.append(f"  {stack}")
    return lines


def _stack_line(total: dict[str, Any]) -> str:
    """What the escape, repair and halt stacks did across a profile's runs, and what the
    retry, duplicate and injected-instruction verdicts counted (empty when nothing)."""
    parts = []
    if total["loops"]:
        median = total["median_steps_to_escape"]
        took = f", median {median:g} steps to escape" if median is not None else ""
        parts.append(f"loops detected {total['loops']}, escaped {total['escaped']}{took}")
    repairs = (total["repairs_ok"], total["repairs_declined"], total["repairs_failed"])
    if any(repairs):
        parts.append("repairs {} ok, {} declined, {} failed".format(*repairs))
    if "retries" in total:
        problems = total.get("retry_problems", 0)
        parts.append(f"retries {total['retries']} ({problems} against must_retry's rules)")
    if "duplicate_effects" in total:
        parts.append(f"duplicate effects {total['duplicate_effects']}")
    if "instructions_followed" in total:
        parts.append(f"injected instructions followed {total['instructions_followed']}")
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
    notes = not_exercised_notes(ordered)
    shown = notes if verbose > 0 else notes[:NOTES_SHOWN]
    lines.extend(shown)
    if len(shown) < len(notes):
        lines.append(f"note: ... and {len(notes) - len(shown)} more verdicts not exercised "
                     "(-v lists them)")  # fmt: skip
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


def not_exercised_notes(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One note per test (all its runs together) and verdict that was not exercised in any
    of its runs, when they passed: a test that passed only because nothing arose (a failed run
    says so itself). A verdict exercised in some runs is counted on the test's pass-rate line
    instead."""
    runs: dict[tuple[str, str], dict[str, list[str]]] = {}
    for row in rows:
        if row.get("outcome") != "passed":
            continue
        key = (str(row.get("case") or row.get("test", "")), str(row.get("profile", "")))
        explanations = row.get("explanations")
        for name, value in (row.get("verdicts") or {}).items():
            outcome = outcome_of(value)
            text = explanations.get(name, "") if isinstance(explanations, Mapping) else ""
            runs.setdefault(key, {}).setdefault(str(name), []).append(
                _why_idle(str(name), str(text)) if outcome == NOT_EXERCISED else ""
            )
    notes = []
    for (case, profile), verdicts in sorted(runs.items()):
        for name, whys in verdicts.items():
            if not all(whys):
                continue
            n = len(whys)
            seen = f"any of its {n} runs" if n > 1 else "this run"
            at = f"@{profile}" if n > 1 else ""
            notes.append(f"note: {case}{at}: {name} not exercised in {seen}: {whys[0]}")
    return notes


def _why_idle(name: str, explanation: str) -> str:
    """What a not-exercised verdict said of its run, in a few words."""
    head = f"{name} not exercised: "
    for line in explanation.splitlines():
        if line.startswith(head):
            text = line[len(head) :].split(" (")[0].split(";")[0].strip()
            return text or "nothing to judge"
    return "nothing to judge"


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
    lines.extend("  " + _describe(e) for e in events)
    return "\n".join(lines)


def _describe(event: Event) -> str:
    """An event's line; the end of a run that an exception ended names it in full, on one
    line (the generic line would cut it at 80 characters of a dict's repr)."""
    if isinstance(event, RunEnded):
        error = error_of(event.detail)
        if error is not None:
            rest = {k: v for k, v in event.detail.items() if k != "error"}
            bare = RunEnded(step=event.step, t=event.t, status=event.status, detail=rest)
            return f"{bare.describe()} with {error_line(error)}"
    return event.describe()


def _budgets(budgets: Any) -> str:
    if not budgets:
        return "budgets=none"
    return "budgets=" + ",".join(f"{k}={v:g}" for k, v in budgets.items())
