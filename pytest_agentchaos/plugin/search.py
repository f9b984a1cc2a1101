"""The plugin's side of schedule search: ``--chaos-explore``, ``--chaos-schedule`` and
``--chaos-schedule-dir``. Thin: it re-runs a chaos test's body through
:mod:`..harness.rerun` and asks :mod:`..search` what to run and what was found.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ChaosConfigError

if TYPE_CHECKING:
    from ..harness.rerun import Attempt
    from ..harness.run import Run
    from ..harness.spec import RunSpec
    from ..inject.chaos import Chaos
    from ..search.breaking import BreakingPoint, Target
    from ..search.schedule import ScheduleFile

__all__ = ["SEARCH_OPTIONS", "SearchHooks"]

_PREFIX = "pytest-agentchaos"
#: Where found schedules are kept (relative to the rootdir) unless ``--chaos-schedule-dir``.
DEFAULT_DIR = ".agentchaos/schedules"


def _explore(value: str) -> int:
    from ..harness.spec import MAX_EXPLORE

    try:
        found = int(value)
    except ValueError:
        found = -1
    if not 1 <= found <= MAX_EXPLORE:
        raise argparse.ArgumentTypeError(f"expected 1 to {MAX_EXPLORE} schedules, got {value!r}")
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
            "type": _explore,
            "default": None,
            "help": "search up to N fault schedules per chaos test, re-running its body "
            "in-process on virtual time, and shrink the first that fails to a minimal one, "
            "printed as a marker and written to a schedule file; a failing test's own faults "
            "are shrunk too (default: off; chaos(explore=N) asks for one test)",
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
        from .options import option

        self.config = config
        self.explore: int | None = option(config, "explore")
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
        """After a chaos test's body ran (and its run was judged): search schedules, or shrink
        the faults of a run that failed, as ``--chaos-explore`` / ``chaos(explore=N)`` ask."""
        from .state import RUN, SPEC, STATE

        run = item.stash.get(RUN, None)
        spec = item.stash.get(SPEC, None)
        pinned = self.pinned
        if run is not None and pinned is not None and item.nodeid == pinned.get("test"):
            flag = item.config.stash[STATE].settings.flag_prefix
            replay = f"pytest {item.nodeid} {flag}schedule={pinned['path']}"
            run.plan = dataclasses.replace(run.plan, replay=replay)
        if run is not None and self.breaking is not None:
            return (yield from self._breaking_point(item, run, spec, self.breaking))
        budget = spec.explore if spec is not None and spec.explore else self.explore
        if run is None or not budget or (spec is not None and spec.schedule is not None):
            return (yield)
        error: BaseException | None = None
        try:
            result = yield
        except (*_PASS_THROUGH, *_INTERRUPTS):
            raise
        except BaseException as exc:
            error = exc
        self._search(item, run, spec, budget, error)
        if error is not None:
            raise error
        return result

    def _breaking_point(
        self, item: pytest.Item, run: Run, spec: RunSpec | None, target: Target
    ) -> Generator[None, Any, Any]:
        """Run the test's body as usual, then bisect ``target`` over fresh runs of it."""
        error: BaseException | None = None
        try:
            result = yield
        except (*_PASS_THROUGH, *_INTERRUPTS):
            raise
        except BaseException as exc:
            error = exc
        point = self._bisect(item, run, spec, target)
        item.stash[BREAKING] = point.as_dict()
        if error is not None:
            raise error
        return result

    def _bisect(
        self, item: pytest.Item, run: Run, spec: RunSpec | None, target: Target
    ) -> BreakingPoint:
        from ..harness.rerun import run_attempt
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
        body = _body(item, run.chaos)

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
                    interrupts=_INTERRUPTS,
                )  # fmt: skip
                passed += attempt.failure is None
            return Probe(value, passed, BREAKING_RUNS)

        min_rate = spec.min_pass_rate if spec.min_pass_rate is not None else 1.0
        return bisect(target, probe, min_pass_rate=min_rate)

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
        body = _body(item, run.chaos)

        def attempt(schedule: Any, keep_trace: bool = False) -> Attempt:
            return run_attempt(
                state.settings,
                spec,
                item.nodeid,
                state.registry,
                body,
                schedule,
                interrupts=_INTERRUPTS,
                keep_trace=keep_trace,
            )

        where = f"{_PREFIX}: --chaos-explore: {item.nodeid}"
        path = self.dir / f"{safe_file_name(item.nodeid)}.json"
        reason: str | None = None
        try:
            exploration = search_schedules(
                first, attempt, budget=budget, known=_known(path, item.nodeid)
            )
        except NotRerunnable as exc:
            reason = str(exc)
        if reason is not None:  # outside the except: one message, not a chain
            pytest.fail(f"{where} is not re-runnable: {reason}", pytrace=False)
        if exploration is None:
            return
        first_failure = first.failure
        if exploration.shrunk is None:
            return
        final = attempt(exploration.shrunk, keep_trace=True)
        path = write_schedule_file(
            path,
            test=item.nodeid,
            schedule=exploration.shrunk,
            seed=spec.seed or 0,
            profile=spec.profile or "none",
            failure={"kind": str(exploration.failure), "explanation": final.explanation},
        )
        item.stash[RUN] = final.run  # the report shows the shrunk run
        replay = f"pytest {item.nodeid} {state.settings.flag_prefix}schedule={path}"
        final.run.plan = dataclasses.replace(final.run.plan, replay=replay)
        found = len(exploration.found or ())
        if first_failure is not None:
            head = f"its run failed ({exploration.failure}) with {found} fault(s)"
        else:
            source = "a previous search's schedule" if exploration.known else "a schedule"
            head = (
                f"{source} of {found} fault(s) failed ({exploration.failure}) after "
                f"{exploration.search_attempts} attempt(s)"
            )
        lines = [
            f"{where}: {head}; shrunk to {len(exploration.shrunk)} fault(s) in "
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
            marker_line(exploration.shrunk, seed=spec.seed),
            f"schedule file: {path} (replay: {replay})",
        ]
        pytest.fail("\n".join(lines), pytrace=False)


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


def _body(item: pytest.Item, original: Chaos) -> Any:
    """Run the test's body again with ``chaos`` in place of the first run's fixture value."""

    def body(chaos: Chaos) -> None:
        funcargs: dict[str, Any] = getattr(item, "funcargs", {})
        names = [name for name, value in funcargs.items() if value is original]
        for name in names:
            funcargs[name] = chaos
        try:
            item.runtest()
        except _PASS_THROUGH:
            pass
        finally:
            for name in names:
                funcargs[name] = original

    return body


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
