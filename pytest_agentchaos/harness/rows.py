"""A chaos test's summary row (its entry in the report's index), from its finished run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .variants import Variant, case_id

if TYPE_CHECKING:
    from .run import Run

__all__ = ["run_row"]


def run_row(
    run: Run,
    outcome: str,
    node_id: str,
    *,
    report_dir: Path | None,
    variant: Variant | None = None,
    min_pass_rate: float | None = None,
) -> dict[str, Any]:
    """The row the report code reads: the trace's summary, the verdicts' explanations, the
    replay command, the trace file, and for one run of several its case, run number, auto
    budget and minimum pass rate."""
    from ..report.artifacts import trace_file
    from ..report.terminal import summary_row

    verdicts = run.outcome.verdicts if run.outcome is not None else ()
    row = summary_row(
        run.trace,
        verdicts,
        outcome,
        unmatched=run.unmatched_faults(),
        threads_left=run.threads_left,
    )
    row.update(
        replay=run.replay,
        explanations={v.name: v.explanation for v in verdicts},
        trace_file=trace_file(run.plan.trace_path, report_dir),
    )
    if variant is not None:
        row.update(case=case_id(node_id, variant.id), run=variant.run)
        if variant.auto:
            row["auto_runs"] = variant.runs
        if min_pass_rate is not None:
            row["min_pass_rate"] = min_pass_rate
    return row
