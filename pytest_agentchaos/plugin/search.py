"""The plugin's side of schedule search: ``--chaos-explore``, ``--chaos-schedule`` and
``--chaos-schedule-dir``. Thin: it re-runs a chaos test's body through
:mod:`..harness.rerun` and asks :mod:`..search` what to run and what was found.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ChaosConfigError
from ..harness.option_table import BREAKING_RUNS, SEARCH_OPTIONS
from ..harness.option_table import DEFAULT_SCHEDULE_DIR as DEFAULT_DIR
from ..harness.options import parse_explore

if TYPE_CHECKING:
    from ..harness.run import Run
    from ..harness.spec import RunSpec
    from ..search.breaking import BreakingPoint, Target
    from ..search.schedule import ScheduleFile
    from .body import FreshBody

__all__ = ["SEARCH_OPTIONS", "SearchHooks", "parse_explore"]

_PREFIX = "pytest-agentchaos"

#: A test's breaking point, as its summary row carries it.
BREAKING = pytest.StashKey[dict[str, Any]]()
#: Why a chaos test was not searched though a search was asked for (its summary row's
#: ``not_searched``).
NOT_SEARCHED = pytest.StashKey[str]()

_PASS_THROUGH = (pytest.skip.Exception, pytest.xfail.Exception)
_INTERRUPTS = (KeyboardInterrupt, pytest.exit.Exception, SystemExit)


class SearchHooks:
    """Registered by the plugin at configure time: the search's hooks, its state per session."""

    def __init__(self, config: pytest.Config) -> None:
        from .options import flag_prefix, option

        self.config = config
        self.explore: int | None = None
        flag = flag_prefix(config)
        raw_explore = option(config, "explore")
        if raw_explore is not None:
            try:
                self.explore = parse_explore(raw_explore, f"{flag}explore")
            except ChaosConfigError as exc:
                raise pytest.UsageError(f"{_PREFIX}: {exc}") from None
        raw_dir = option(config, "schedule-dir")
        self.dir = (
            config.invocation_params.dir / raw_dir if raw_dir else config.rootpath / DEFAULT_DIR
        )
        self.pinned: ScheduleFile | None = None
        self.breaking: Target | None = None
        raw_point = option(config, "breaking-point")
        if raw_point:
            from ..search.breaking import parse_target

            try:
                self.breaking = parse_target(raw_point)
            except ChaosConfigError as exc:
                raise pytest.UsageError(f"{_PREFIX}: {exc}") from None
        raw = option(config, "schedule")
        if raw:
            from ..search.schedule import read_schedule_file

            try:
                self.pinned = read_schedule_file(config.invocation_params.dir / raw)
            except ChaosConfigError as exc:
                raise pytest.UsageError(f"{_PREFIX}: --chaos-schedule: {exc}") from None

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """A schedule file names one test: it must be among those collected."""
        pinned = self.pinned
        if pinned is None or not items:
            return
        if not any(item.nodeid == pinned.get("test") for item in items):
            raise pytest.UsageError(
                f"{_PREFIX}: --chaos-schedule: {pinned['path']} is for test "
                f"{pinned.get('test')!r}, which is not among the tests collected here; run "
                "pytest from the rootdir the schedule was found from"
            )

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """The test a schedule file names runs under exactly its faults."""
        from ..harness.spec import RunSpec
        from .state import SPEC

        pinned = self.pinned
        if pinned is None or item.nodeid != pinned.get("test"):
            return
        spec = item.stash.get(SPEC, None) or RunSpec()
        if spec.error is not None:
            return
        item.stash[SPEC] = dataclasses.replace(
            spec,
            schedule=pinned.decisions,
            beyond=pinned["beyond"],
            seed=pinned.get("seed", spec.seed),
            profile=pinned.get("profile", spec.profile),
            explore=None,
        )

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, Any]:
        """After a chaos test's body ran (and its run was judged): bisect its breaking point
        (``--chaos-breaking-point``), fail a pinned schedule that never fired, search schedules
        or shrink the faults of a run that failed (``--chaos-explore`` / ``chaos(explore=N)``);
        each re-run of the body gets fresh function-scoped fixtures (:mod:`.body`)."""
        from ..harness.rerun import NotRerunnable
        from .body import FreshBody
        from .state import RUN, SPEC, STATE

        run = item.stash.get(RUN, None)
        spec = item.stash.get(SPEC, None)
        pinned = self.pinned
        if run is not None and pinned is not None and item.nodeid == pinned.get("test"):
            state = item.config.stash[STATE]
            run.plan = dataclasses.replace(run.plan, replay=_replay(item, state, pinned["path"]))
        schedule = spec.schedule if spec is not None else None
        budget, why_not = _budget(item, spec, self.explore)
        # a test expected to fail: its failure is no news, nothing to search or bisect
        breaking = None if _expected_to_fail(item) else self.breaking
        if run is not None and why_not is not None:
            item.stash[NOT_SEARCHED] = why_not
        if run is None or not (breaking or schedule is not None or budget):
            return (yield)
        body = FreshBody(item, (*_INTERRUPTS, NotRerunnable))
        error: BaseException | None = None
        try:
            result = yield
        except (*_PASS_THROUGH, *_INTERRUPTS):
            raise
        except BaseException as exc:
            error = exc
        if breaking is not None:
            item.stash[BREAKING] = self._bisect(item, run, spec, breaking, body).as_dict()
        if schedule is not None and error is None:
            _fired_or_fail(item, run, schedule)
        if budget:
            self._search(item, run, spec, budget, error, body)
        if error is not None:
            raise error
        return result

    def _bisect(
        self, item: pytest.Item, run: Run, spec: RunSpec | None, target: Target, body: FreshBody
    ) -> BreakingPoint:
        """Bisect ``target`` over fresh runs of the test's body (:mod:`..harness.searches`)."""
        from ..harness.rerun import NotRerunnable
        from ..harness.searches import bisect_test
        from ..harness.spec import RunSpec
        from .state import STATE

        state = item.config.stash[STATE]
        reason: str | None = None
        try:
            return bisect_test(
                state.settings, spec or RunSpec(), item.nodeid, state.registry, body, run,
                target, runs=BREAKING_RUNS,
            )  # fmt: skip
        except NotRerunnable as exc:
            reason = str(exc)
        where = f"{_PREFIX}: {state.settings.flag_prefix}breaking-point: {item.nodeid}"
        pytest.fail(f"{where} is not re-runnable: {reason}", pytrace=False)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """Put a test's breaking point in its summary row (the report's index)."""
        report = yield
        row = getattr(report, "agentchaos", None)
        point = item.stash.get(BREAKING, None)
        if isinstance(row, dict) and point is not None:
            row["breaking_point"] = point
        if isinstance(row, dict) and NOT_SEARCHED in item.stash:
            row["not_searched"] = item.stash[NOT_SEARCHED]
        return report

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Print each test's breaking point (from the summary rows: under xdist the
        controller has them from every worker)."""
        from ..report.notes import search_sections
        from .state import STATE

        state = self.config.stash.get(STATE, None)
        for title, lines in search_sections(state.rows if state is not None else []):
            terminalreporter.write_sep("-", title)
            for line in lines:
                terminalreporter.write_line(line)

    def _search(
        self,
        item: pytest.Item,
        run: Run,
        spec: RunSpec | None,
        budget: int,
        error: BaseException | None,
        body: FreshBody,
    ) -> None:
        """Search schedules for the test (:mod:`..harness.searches`); fail it with the shrunk
        schedule found, its marker and its schedule file."""
        from ..harness.rerun import NotRerunnable
        from ..harness.run import safe_file_name
        from ..harness.searches import known_schedules, search_test
        from ..harness.spec import RunSpec
        from .state import RUN, STATE, VARIANT

        state = item.config.stash[STATE]
        callspec = getattr(item, "callspec", None)
        variant = callspec.params.get(VARIANT) if callspec is not None else None
        spec = spec or RunSpec()
        if variant is not None:
            spec = variant.apply(spec)
        where = f"{_PREFIX}: {state.settings.flag_prefix}explore: {item.nodeid}"
        path = self.dir / f"{safe_file_name(item.nodeid)}.json"
        reason: str | None = None
        try:
            found = search_test(
                state.settings, spec, item.nodeid, state.registry, body, run, error,
                budget=budget, known=known_schedules(path, item.nodeid),
            )  # fmt: skip
        except NotRerunnable as exc:
            reason = str(exc)
        if reason is not None:  # outside the except: one message, not a chain
            pytest.fail(f"{where} is not re-runnable: {reason}", pytrace=False)
        if found is None:
            return
        path = found.write(path, item.nodeid)
        item.stash[RUN] = found.final.run  # the report shows the shrunk run
        replay = _replay(item, state, str(path))
        found.final.run.plan = dataclasses.replace(found.final.run.plan, replay=replay)
        pytest.fail(found.message(where, path, replay), pytrace=False)


def _replay(item: pytest.Item, state: Any, path: str) -> str:
    """The command that runs ``item`` under the schedule file at ``path``."""
    from ..harness.search_plan import schedule_replay
    from .state import cwd_relative

    return schedule_replay(cwd_relative(item.config, item.nodeid), state.settings, path)


def _budget(
    item: pytest.Item, spec: RunSpec | None, session: int | None
) -> tuple[int | None, str | None]:
    """How many schedules to search for ``item``, and why none (:mod:`..harness.search_plan`)."""
    from ..harness.search_plan import search_budget

    return search_budget(spec, session, expected_to_fail=_expected_to_fail(item))


def _expected_to_fail(item: pytest.Item) -> bool:
    """Whether the test is marked xfail (its condition met) and ``--runxfail`` is not given."""
    try:
        from _pytest.skipping import xfailed_key  # set by pytest's setup phase
    except ImportError:  # pragma: no cover - pytest moved it: the markers say it
        return any(True for _ in item.iter_markers("xfail"))
    return item.stash.get(xfailed_key, None) is not None and not item.config.option.runxfail


def _fired_or_fail(item: pytest.Item, run: Run, schedule: Any) -> None:
    """A pinned schedule whose faults did not all fire fails its test: a regression test whose
    faults never fire tests nothing (the agent now makes other calls, or the schedule names a
    target it never calls)."""
    from ..search.schedule import unfired

    missed = unfired(schedule, run.trace.schedule(), run.session.calls_seen())
    if missed:
        from ..harness.search_plan import unfired_message

        message = unfired_message(item.nodeid, missed, len(schedule))
        pytest.fail(f"{_PREFIX}: {message}", pytrace=False)
