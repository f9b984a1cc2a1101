"""The session summary of chaos tests, and handing the session seed to xdist workers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .state import PluginState

__all__ = ["SEED_KEY", "TRACES_KEY", "Summary", "XdistSeed"]

SEED_KEY = "agentchaos_seed"
#: the controller's temporary trace dir (``--chaos-html`` without a report dir)
TRACES_KEY = "agentchaos_traces"


class Summary:
    """Collects one row per chaos test (from xdist workers too) and prints the summary."""

    def __init__(self, state: PluginState, config: pytest.Config) -> None:
        self.state = state
        self.config = config
        #: report files that could not be written, one line each
        self.errors: list[str] = []
        #: report files written that the summary names
        self.written: list[str] = []
        self.rates: list[Any] = []
        self.baseline_lines: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep the summary row a chaos test's teardown report carries."""
        row = getattr(report, "agentchaos", None)
        if isinstance(row, dict):
            self.state.rows.append(row)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Judge the pass rates of tests run several times (a rate below its
        ``min_pass_rate`` fails the session) and, with a report dir, write its ``index.json``
        (once: in the controller under xdist, from every worker's rows). A dir that cannot
        be written is one line, no traceback."""
        if hasattr(self.config, "workerinput"):
            return
        if self.config.option.collectonly:
            return  # nothing ran: no report replaces the last one
        from ..report.passk import case_rates

        self.rates = case_rates(self.state.rows)
        if any(not r.ok for r in self.rates) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        settings = self.state.settings
        if settings.baseline is not None:
            self._baseline(session)
        report_dir = settings.report_dir
        if report_dir is None and settings.html is None:
            return
        from ..report.artifacts import index_data, write_index

        data = index_data(
            self.state.rows,
            session_seed=settings.seed,
            profile_option=settings.profile_option,
            runs=settings.runs,
        )
        if report_dir is not None:
            try:
                write_index(report_dir, data)
            except OSError as exc:
                self._failed(session, report_dir / "index.json", exc)
        if settings.html is not None:
            self._write_html(session, data)

    def _baseline(self, session: pytest.Session) -> None:
        """Save the baseline, or compare with it: a regression fails the session."""
        from ..report import baseline as b

        settings = self.state.settings
        path = settings.baseline
        assert path is not None
        saved_with = {"session_seed": settings.seed, "profile_option": settings.profile_option}
        if settings.baseline_save:
            try:
                b.save_baseline(
                    path, self.state.rows, previous=self.state.baseline or {},
                    saved_with=saved_with,
                )  # fmt: skip
            except b.BaselineError as exc:
                self.errors.append(f"agentchaos: {exc}")
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
                return
            n = len(b.case_metrics(self.state.rows))
            self.baseline_lines = [f"agentchaos: baseline {path}: saved {n} case(s)"]
            return
        if self.state.baseline is None:
            return
        tolerances = settings.tolerances or b.DEFAULT_TOLERANCES
        found = b.compare(self.state.baseline, b.case_metrics(self.state.rows), tolerances)
        self.baseline_lines = b.regression_lines(found, path, self.config.get_verbosity())
        note = b.seed_note(path, settings.seed)
        if note is not None:
            self.baseline_lines.append(note)
        if found.regressions and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _write_html(self, session: pytest.Session, data: dict[str, Any]) -> None:
        from ..report.artifacts import read_trace
        from ..report.html import write_html

        settings = self.state.settings
        assert settings.html is not None
        try:
            write_html(settings.html, data, lambda entry: read_trace(entry, settings.report_dir))
        except OSError as exc:
            self._failed(session, settings.html, exc)
        else:
            self.written.append(f"agentchaos: HTML report: {settings.html}")

    def _failed(self, session: pytest.Session, path: Any, exc: OSError) -> None:
        """A report file that cannot be written: one line, exit code 3."""
        self.errors.append(f"agentchaos: cannot write {path}: {exc.strerror or exc}")
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Print the agentchaos section: the rows, totals per profile and the session seed."""
        for line in self.errors:
            terminalreporter.write_line(line, red=True)
        rows = self.state.rows
        if not rows:
            self._baseline_lines(terminalreporter)
            return
        from ..report.terminal import summary_lines

        tr = terminalreporter
        seed = self.state.settings.seed
        tr.write_sep("=", f"agentchaos: {len(rows)} chaos test{'s' if len(rows) != 1 else ''}")
        for line in summary_lines(rows, verbose=self.config.get_verbosity()):
            tr.write_line(line)
        if self.rates:
            from ..report.passk import rate_lines

            for line in rate_lines(self.rates):
                tr.write_line(line, red=line.endswith("FAIL"))
            below = sum(not r.ok for r in self.rates)
            if below:
                tr.write_line(
                    f"agentchaos: {below} test(s) below their pass rate rule: the session fails",
                    red=True,
                )
        self._baseline_lines(tr)
        tr.write_line(f"session seed {seed}: replay with --chaos-seed={seed}")

    def _baseline_lines(self, terminalreporter: Any) -> None:
        for line in self.baseline_lines:
            bad = "regression" in line and "no regressions" not in line
            terminalreporter.write_line(line, red=bad)
        for line in self.written:
            terminalreporter.write_line(line)


class XdistSeed:
    """Hands the controller's session seed (and its temporary trace dir) to every worker."""

    def __init__(self, seed: int, traces: Path | None = None) -> None:
        self.seed = seed
        self.traces = traces

    def pytest_configure_node(self, node: Any) -> None:
        """Give the worker the controller's session seed (the one the header shows)."""
        node.workerinput[SEED_KEY] = self.seed
        if self.traces is not None:
            node.workerinput[TRACES_KEY] = str(self.traces)
