"""What the end of a session writes and judges, from the summary rows alone (free of pytest):
the pass rates of tests run several times, the baseline (saved, or compared with), then
``index.json`` and the HTML report. The plugin calls :func:`end_session` once, in the
controller under xdist, and turns its result into an exit status and terminal lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .passk import CaseRate, case_rates, rate_lines

__all__ = ["SessionEnd", "end_session"]


@dataclass
class SessionEnd:
    """What :func:`end_session` found and did."""

    rates: list[CaseRate] = field(default_factory=list)
    #: a pass rate below its rule, or a regression against the baseline: the session fails
    failed: bool = False
    #: report files that could not be written, one line each (exit code 3)
    errors: list[str] = field(default_factory=list)
    #: the baseline's lines and the report files written, for the terminal
    lines: list[str] = field(default_factory=list)

    def rate_lines(self) -> list[str]:
        """The pass-rate lines, and the one that says the session fails by them."""
        lines = rate_lines(self.rates)
        below = sum(not r.ok for r in self.rates)
        if below:
            lines.append(
                f"agentchaos: {below} test(s) below their pass rate rule: the session fails"
            )
        return lines


def end_session(
    rows: Sequence[Mapping[str, Any]],
    *,
    seed: int,
    profile_option: str | None,
    runs: int = 1,
    report_dir: Path | None = None,
    html: Path | None = None,
    baseline_path: Path | None = None,
    baseline_save: bool = False,
    baseline: Mapping[str, Mapping[str, Any]] | None = None,
    tolerances: Any = None,
    verbosity: int = 0,
    interrupted: bool = False,
) -> SessionEnd:
    """Judge the pass rates, save or compare the baseline (an ``interrupted`` session saves
    none), write ``index.json`` (into ``report_dir``) and the HTML report (``html``; traces
    read from the index's files).
    A file that cannot be written is an error line; nothing raises for it."""
    end = SessionEnd(rates=case_rates(rows))
    end.failed = any(not r.ok for r in end.rates)
    if baseline_path is not None and baseline_save and interrupted:
        # a partial session's runs would become the yardstick of every later comparison
        end.lines.append(
            f"agentchaos: baseline {baseline_path}: not saved: the session was interrupted"
        )
    elif baseline_path is not None:
        _baseline(end, rows, baseline_path, baseline_save, baseline, tolerances, verbosity,
                  {"session_seed": seed, "profile_option": profile_option})  # fmt: skip
    if report_dir is None and html is None:
        return end
    from .artifacts import INDEX_NAME, index_data, read_trace, write_index

    data = index_data(rows, session_seed=seed, profile_option=profile_option, runs=runs)
    if report_dir is not None:
        try:
            write_index(report_dir, data)
        except OSError as exc:
            end.errors.append(_cannot(report_dir / INDEX_NAME, exc))
    if html is not None:
        from .html import write_html

        try:
            write_html(html, data, lambda entry: read_trace(entry, report_dir))
        except OSError as exc:
            end.errors.append(_cannot(html, exc))
        else:
            end.lines.append(f"agentchaos: HTML report: {html}")
    return end


def _cannot(path: Path, exc: OSError) -> str:
    return f"agentchaos: cannot write {path}: {exc.strerror or exc}"


def _baseline(
    end: SessionEnd,
    rows: Sequence[Mapping[str, Any]],
    path: Path,
    save: bool,
    cases: Mapping[str, Mapping[str, Any]] | None,
    tolerances: Any,
    verbosity: int,
    saved_with: dict[str, Any],
) -> None:
    """Save the baseline (merged with ``cases``, the file read at the start), or compare
    with it: a regression fails the session."""
    from . import baseline as b

    if save:
        try:
            b.save_baseline(path, rows, previous=cases or {}, saved_with=saved_with)
        except b.BaselineError as exc:
            end.errors.append(f"agentchaos: {exc}")
            return
        end.lines.append(f"agentchaos: baseline {path}: saved {len(b.case_metrics(rows))} case(s)")
        return
    if cases is None:
        return
    found = b.compare(cases, b.case_metrics(rows), tolerances or b.DEFAULT_TOLERANCES)
    end.lines.extend(b.regression_lines(found, path, verbosity))
    note = b.seed_note(path, saved_with["session_seed"])
    if note is not None:
        end.lines.append(note)
    end.failed = end.failed or bool(found.regressions)
