"""The HTML report's section comparing, for each test run several times, its first passing
and first failing run (``report.diff``): where their traces part ways and the fault decisions
that differ."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .html import _esc, _one_line, _step
from .terminal import FAILED_OUTCOMES

__all__ = ["MAX_DIFFS", "MAX_DIFF_FAULTS", "diffs_section"]

#: Cases whose passing and failing runs are compared, and fault decisions listed per case.
MAX_DIFFS = 50
MAX_DIFF_FAULTS = 20


def diffs_section(
    tests: list[Mapping[str, Any]],
    load_trace: Callable[[Mapping[str, Any]], Mapping[str, Any] | None],
) -> str:
    """For each test run several times with passing and failing runs: its first passing and
    first failing run compared (``report.diff``): where they part ways, the events around it
    and the fault decisions that differ; nothing when no test has both."""
    from .diff import diff_lines, diff_traces

    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for entry in tests:
        case = entry.get("case")
        if isinstance(case, str) and case:
            groups.setdefault((case, str(entry.get("profile", ""))), []).append(entry)
    items, found = [], 0
    for (case, profile), group in sorted(groups.items()):
        ordered = sorted(group, key=lambda e: (_step(e.get("run")), str(e.get("node_id", ""))))
        passing = [e for e in ordered if e.get("outcome") == "passed"]
        failing = [e for e in ordered if str(e.get("outcome", "")) in FAILED_OUTCOMES]
        if not passing or not failing:
            continue
        found += 1
        if found > MAX_DIFFS:
            continue
        ok, bad = passing[0], failing[0]
        try:
            docs = load_trace(ok), load_trace(bad)
            if docs[0] is None or docs[1] is None:
                raise ValueError("no trace written for one of the runs")
            diff = diff_traces(_checked(docs[0]), _checked(docs[1]))
        except Exception as exc:  # a bad trace spoils its own comparison, never the report
            head, body = f"not compared: {_one_line(exc)}", ""
        else:
            at = diff.divergence.at if diff.divergence is not None else None
            head = (f"first divergence at event {at}" if at is not None else "no divergence") + (
                f"; {len(diff.faults)} fault decision(s) differ" if diff.faults else ""
            )
            lines = diff_lines(diff, ("pass", "fail"), most_faults=MAX_DIFF_FAULTS)
            body = f'<pre class="run-diff">{_esc(chr(10).join(lines))}</pre>'
        items.append(
            f'<details class="run-diff"><summary><span class="node-id">{_esc(case)}</span>@'
            f"{_esc(profile)}: {_esc(head)}</summary><p>pass: <code>"
            f"{_esc(str(ok.get('node_id', '')))}</code> \u00b7 fail: <code>"
            f"{_esc(str(bad.get('node_id', '')))}</code></p>{body}</details>"
        )
    if not items:
        return ""
    more = (
        f'<p class="muted">and {found - MAX_DIFFS} more tests with passing and failing runs</p>'
        if found > MAX_DIFFS
        else ""
    )
    return (
        '<section id="run-diffs"><h2>Passing and failing runs compared</h2><p class="muted">'
        "Each test with passing and failing runs: its first passing and first failing run, "
        "where their traces part ways, the events around that point and the fault decisions "
        "that differ (<code>python -m pytest_agentchaos diff A.json B.json</code> compares any "
        f"two).</p>{''.join(items)}{more}</section>"
    )


def _checked(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """A trace document the diff can read: events that are objects with a type."""
    from .diff import trace_problem

    problem = trace_problem(doc)
    if problem is not None:
        raise ValueError(problem)
    return doc
