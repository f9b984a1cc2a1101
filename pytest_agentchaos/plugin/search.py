"""The plugin's side of schedule search: ``--chaos-explore``, ``--chaos-schedule`` and
``--chaos-schedule-dir``. Thin: it re-runs a chaos test's body through
:mod:`..harness.rerun` and asks :mod:`..search` what to run and what was found.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import shlex
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ChaosConfigError

if TYPE_CHECKING:
    from ..harness.rerun import Attempt
    from ..harness.run import Run
    from ..harness.spec import RunSpec
    from ..search.breaking import BreakingPoint, Target
    from ..search.schedule import ScheduleFile
    from .body import FreshBody

__all__ = ["SEARCH_OPTIONS", "SearchHooks", "parse_explore"]

_PREFIX = "pytest-agentchaos"
#: Where found schedules are kept (relative to the rootdir) unless ``--chaos-schedule-dir``.
DEFAULT_DIR = ".agentchaos/schedules"


def parse_explore(raw: str, flag: str = "--chaos-explore") -> int:
    """``--chaos-explore=N``: N schedules, a whole number written in digits; a bad one is a
    ``ChaosConfigError`` naming the option and what is allowed."""
    from ..harness.spec import MAX_EXPLORE

    found = int(raw) if re.fullmatch(r"[0-9]{1,7}", raw, re.ASCII) else -1
    if not 1 <= found <= MAX_EXPLORE:
        raise ChaosConfigError(f"{flag}: expected 1 to {MAX_EXPLORE} schedules, got {raw!r}")
    return found


#: Seeds each probed value of a breaking point runs under.
BREAKING_RUNS = 10
#: A test's breaking point, as its summary row carries it.
BREAKING = pytest.StashKey[dict[str, Any]]()

#: The search's options, by their name after ``--agentchaos-`` / ``--chaos-``.
SEARCH_OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "explore",
        {
            "metavar": "N",
            "default": None,
            "help": "search up to N fault schedules per chaos test, re-running its body "
            "in-process on virtual time, and shrink the first that fails to a minimal one, "
            "printed as a marker and written to a schedule file; a failing test's own faults "
            "are shrunk too; each re-run gets fresh function-scoped fixtures, and a test "
            "marked xfail is not searched (default: off; chaos(explore=N) asks for one test)",
        },
    ),
    (
        "schedule",
        {
            "metavar": "FILE",
            "default": None,
            "help": "run the test a schedule file names (written by --chaos-explore) under "
            "exactly its faults (default: none)",
        },
    ),
    (
        "breaking-point",
        {
            "metavar": "FAULT.PARAM",
            "default": None,
            "help": "after each chaos test, bisect one severity parameter (latency.seconds, "
            "rate_limit.retry_after, timeout.probability, timeout.first ...) to the least value "
            f"where the test's pass rate over {BREAKING_RUNS} seeds falls below its "
            "min_pass_rate (1 by default), and report it with the pass rate's interval there "
            "(default: off)",
        },
    ),
    (
        "schedule-dir",
        {
            "metavar": "DIR",
            "default": None,
            "help": "where --chaos-explore writes the schedules it finds and reads them back "
            f"to try first next time (default: {DEFAULT_DIR} under the rootdir)",
        },
    ),
)

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
        budget = spec.explore if spec is not None and spec.explore else self.explore
        schedule = spec.schedule if spec is not None else None
        breaking = self.breaking
        if _expected_to_fail(item):  # its failure is no news: nothing to search
            budget, breaking = None, None
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
        if budget and schedule is None:
            self._search(item, run, spec, budget, error, body)
        if error is not None:
            raise error
        return result

    def _bisect(
        self, item: pytest.Item, run: Run, spec: RunSpec | None, target: Target, body: FreshBody
    ) -> BreakingPoint:
        """Bisect ``target`` over fresh runs of the test's body."""
        from ..harness.rerun import NotRerunnable, run_attempt
        from ..harness.spec import RunSpec
        from ..rng import derive_seed
        from ..search.breaking import Probe, bisect, vary
        from .state import STATE

        state = item.config.stash[STATE]
        spec = spec or RunSpec()
        profile = run.plan.profile
        faults = (*spec.faults, *profile.faults)
        seed = run.plan.seed
        run.close()  # the probes need the process: runs cannot overlap

        def probe(value: float) -> Probe:
            registry: Any = _Varied(state.registry, vary(faults, target, value))
            passed = 0
            for k in range(BREAKING_RUNS):
                varied = dataclasses.replace(
                    spec,
                    faults=(),
                    profile=profile.name,
                    seed=derive_seed(seed, f"breaking-{k}"),
                    explore=None,
                    schedule=None,  # a pinned schedule would leave no fault to vary
                    beyond="none",
                )
                attempt = run_attempt(
                    state.settings, varied, item.nodeid, registry, body, None,
                    interrupts=body.interrupts,
                )  # fmt: skip
                passed += attempt.failure is None
            return Probe(value, passed, BREAKING_RUNS)

        min_rate = spec.min_pass_rate if spec.min_pass_rate is not None else 1.0
        reason: str | None = None
        try:
            body.start()
            return bisect(target, probe, min_pass_rate=min_rate)
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
        return report

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Print each test's breaking point (from the summary rows: under xdist the
        controller has them from every worker)."""
        from .state import STATE

        state = self.config.stash.get(STATE, None)
        rows = state.rows if state is not None else []
        found = [(r.get("test"), r["breaking_point"]) for r in rows if r.get("breaking_point")]
        if not found:
            return
        terminalreporter.write_sep("-", "agentchaos: breaking points")
        for node_id, point in sorted(found, key=lambda f: str(f[0])):
            terminalreporter.write_line(f"{node_id}: {point.get('description', point)}")

    def _search(
        self,
        item: pytest.Item,
        run: Run,
        spec: RunSpec | None,
        budget: int,
        error: BaseException | None,
        body: FreshBody,
    ) -> None:
        from ..harness.rerun import FirstRun, NotRerunnable, run_attempt, search_schedules
        from ..harness.run import safe_file_name
        from ..harness.spec import RunSpec
        from ..search.schedule import marker_line, write_schedule_file
        from .state import RUN, STATE, VARIANT

        state = item.config.stash[STATE]
        callspec = getattr(item, "callspec", None)
        variant = callspec.params.get(VARIANT) if callspec is not None else None
        spec = spec or RunSpec()
        if variant is not None:
            spec = variant.apply(spec)
        spec = dataclasses.replace(spec, seed=run.plan.seed, profile=run.plan.profile.name)
        first = FirstRun.of(run, error, (*spec.faults, *run.plan.profile.faults))
        run.close()  # the attempts need the process: runs cannot overlap

        def attempt(schedule: Any, keep_trace: bool = False) -> Attempt:
            return run_attempt(
                state.settings,
                spec,
                item.nodeid,
                state.registry,
                body,
                schedule,
                interrupts=body.interrupts,
                keep_trace=keep_trace,
            )

        where = f"{_PREFIX}: {state.settings.flag_prefix}explore: {item.nodeid}"
        path = self.dir / f"{safe_file_name(item.nodeid)}.json"
        reason: str | None = None
        try:
            body.start()
            exploration = search_schedules(
                first, attempt, budget=budget, known=_known(path, item.nodeid)
            )
            shrunk = exploration.shrunk if exploration is not None else None
            final = attempt(shrunk, keep_trace=True) if shrunk is not None else None
        except NotRerunnable as exc:
            reason = str(exc)
        if reason is not None:  # outside the except: one message, not a chain
            pytest.fail(f"{where} is not re-runnable: {reason}", pytrace=False)
        if exploration is None or shrunk is None or final is None:
            return
        path = write_schedule_file(
            path,
            test=item.nodeid,
            schedule=shrunk,
            seed=spec.seed or 0,
            profile=spec.profile or "none",
            failure={"kind": str(exploration.failure), "explanation": final.explanation},
        )
        item.stash[RUN] = final.run  # the report shows the shrunk run
        replay = _replay(item, state, str(path))
        final.run.plan = dataclasses.replace(final.run.plan, replay=replay)
        found = len(exploration.found or ())
        if first.failure is not None:
            head = f"its run failed ({exploration.failure}) with {found} fault(s)"
        else:
            source = "a previous search's schedule" if exploration.known else "a schedule"
            head = (
                f"{source} of {found} fault(s) failed ({exploration.failure}) after "
                f"{exploration.search_attempts} attempt(s)"
            )
        lines = [
            f"{where}: {head}; shrunk to {len(shrunk)} fault(s) in "
            f"{exploration.shrink_attempts} more attempt(s)"
            + (" (stopped at the budget)" if exploration.exhausted else ""),
            final.explanation or "(the shrunk schedule fails without an explanation)",
        ]
        if final.failure != exploration.failure:
            lines.append(
                f"note: run again, the shrunk schedule failed otherwise ({final.failure}): the "
                "body does not run the same way twice"
            )
        lines += [
            "pin it as a regression test:",
            marker_line(shrunk, seed=spec.seed),
            f"schedule file: {path} (replay: {replay})",
        ]
        pytest.fail("\n".join(lines), pytrace=False)


def _replay(item: pytest.Item, state: Any, path: str) -> str:
    """The command that runs ``item`` under the schedule file at ``path``: the session's own
    replay command (its seed, profile option and ``--chaos-runs``, which the ids of a test's
    runs need) with ``--chaos-schedule``."""
    from ..report.terminal import replay_command
    from .state import cwd_relative

    settings = state.settings
    command = replay_command(
        cwd_relative(item.config, item.nodeid), settings.seed, settings.profile_option,
        settings.runs,
    )  # fmt: skip
    command += f" --chaos-schedule={shlex.quote(path)}"
    return command.replace(" --chaos-", " " + settings.flag_prefix)


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
        pytest.fail(
            f"{_PREFIX}: {item.nodeid}: {len(missed)} of the {len(schedule)} faults its schedule "
            f"pins never fired: {'; '.join(missed)}; a regression test whose faults do not "
            "fire tests nothing: fix the schedule or the test",
            pytrace=False,
        )


def _known(path: Path, test: str) -> list[Any]:
    """The schedule a previous search kept for ``test`` (none when the file is unreadable)."""
    from ..search.schedule import read_schedule_file

    if not path.is_file():
        return []
    with contextlib.suppress(ChaosConfigError):
        found = read_schedule_file(path)
        if found.get("test") == test:
            return [found.decisions]
    return []


class _Varied:
    """A profile registry whose profiles carry ``faults`` instead of their own (the probes of
    a breaking point vary one parameter of them)."""

    def __init__(self, registry: Any, faults: tuple[Any, ...]) -> None:
        self._registry = registry
        self._faults = faults

    def get(self, name: str) -> Any:
        return dataclasses.replace(self._registry.get(name), faults=self._faults)

    def path(self, name: str) -> Any:
        return self._registry.path(name)
