"""The session summary of chaos tests, and handing the session seed to xdist workers."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..harness.options import SEED_KEY, TRACES_KEY
from .state import PluginState

if TYPE_CHECKING:
    from ..report.session import SessionEnd

__all__ = ["NO_CHAOS_TEST", "SEED_KEY", "TRACES_KEY", "Summary", "XdistSeed"]

#: A pass-rate line below its rule (a count of verdicts not exercised may follow the rule),
#: or the line that says the session fails by them.
_FAILING = re.compile(r": (?:pass\^\d+|min_pass_rate \d+%) FAIL(?:;|$)|the session fails$")

#: what a session asked for chaos says when none of its tests was a chaos test
NO_CHAOS_TEST = (
    "agentchaos: no chaos test ran (only tests using the chaos fixture or a chaos marker are "
    "put under chaos)"
)


class Summary:
    """Collects one row per chaos test (from xdist workers too) and prints the summary."""

    def __init__(self, state: PluginState, config: pytest.Config) -> None:
        self.state = state
        self.config = config
        self.end: SessionEnd | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep the summary row a chaos test's teardown report carries."""
        row = getattr(report, "agentchaos", None)
        if isinstance(row, dict):
            self.state.rows.append(row)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Judge the pass rates, save or compare the baseline and write the report files
        (once: in the controller under xdist, from every worker's rows); a rate below its
        rule or a regression fails the session, a file that cannot be written is exit 3."""
        if hasattr(self.config, "workerinput") or self.config.option.collectonly:
            return  # --collect-only: nothing ran, no report replaces the last one
        from ..report.session import end_session

        s = self.state.settings
        self.end = end = end_session(
            self.state.rows, seed=s.seed, profile_option=s.profile_option, runs=s.runs,
            report_dir=s.report_dir, html=s.html, baseline_path=s.baseline,
            baseline_save=s.baseline_save, baseline=self.state.baseline,
            tolerances=s.tolerances, verbosity=self.config.get_verbosity(),
            interrupted=session.exitstatus == pytest.ExitCode.INTERRUPTED,
        )  # fmt: skip
        if end.errors:
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        elif end.failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Print the agentchaos section: the rows, totals per profile, pass rates, the
        baseline and the report files, and the session seed."""
        tr, end, rows = terminalreporter, self.end, self.state.rows
        if not rows and self._asked_in_vain():
            tr.write_line(NO_CHAOS_TEST, yellow=True)
        for line in end.errors if end is not None else ():
            tr.write_line(line, red=True)
        if rows:
            from ..report.terminal import summary_lines

            tr.write_sep("=", f"agentchaos: {len(rows)} chaos test{'s' * (len(rows) != 1)}")
            for line in summary_lines(rows, verbose=self.config.get_verbosity()):
                tr.write_line(line)
            for line in end.rate_lines() if end is not None else ():
                tr.write_line(line, red=bool(_FAILING.search(line)))
        for line in end.lines if end is not None else ():
            red = ("regression" in line and "no regressions" not in line) or "REGRESSED" in line
            tr.write_line(line, red=red)
        if rows:
            settings = self.state.settings
            if settings.replay is None:
                tr.write_line(
                    f"session seed {settings.seed}: replay with "
                    f"{settings.flag_prefix}seed={settings.seed}"
                )
            else:
                tr.write_line(
                    f"replayed {settings.replay.path}: replay with {settings.flag_prefix}replay="
                    f"{shlex.quote(str(settings.replay.path))}"
                )

    def _asked_in_vain(self) -> bool:
        """A chaos option or profile was given, yet no chaos test ran."""
        config = self.config
        if hasattr(config, "workerinput") or config.option.collectonly:
            return False
        from .options import asked_for_chaos

        return asked_for_chaos(config)


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
