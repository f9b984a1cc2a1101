"""The pytest plugin: options, markers, the ``chaos`` fixture, verdicts and the summary.

Thin by design: it reads options and markers, builds a :class:`~pytest_agentchaos.Chaos` per
test, and turns its trace into verdicts and report lines. The logic lives in the parts.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import BudgetExhausted, ChaosConfigError
from ..profiles.profile import ProfileRegistry, builtin_dir
from .markers import MARKERS, TestChaos, parse_marks
from .state import RUN, SPEC, STATE, PluginState, RunState

if TYPE_CHECKING:
    from ..inject.chaos import Chaos
    from ..profiles.profile import Profile
    from ..verdicts.verdict import Verdict

# The parts below the plugin (inject, verdicts, report) load on the first chaos test, so
# `pytest` runs without chaos tests pay only for option parsing and marker checks.

__all__ = ["chaos"]

_SEED_KEY = "agentchaos_seed"


def _seed(value: str) -> int:
    try:
        seed = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a non-negative integer, got {value!r}"
        ) from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value!r}")
    return seed


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentchaos", "chaos testing for tool-using agents")
    group.addoption(
        "--chaos-profile",
        metavar="NAME",
        default=None,
        help="chaos profile for tests that use the chaos fixture or markers "
        "(default: ini chaos_profile, else 'none')",
    )
    group.addoption(
        "--chaos-seed",
        metavar="N",
        type=_seed,
        default=None,
        help="session seed for every fault decision (default: random, shown in the header)",
    )
    group.addoption(
        "--chaos-list-profiles",
        action="store_true",
        default=False,
        help="list the chaos profiles available here and exit",
    )
    group.addoption(
        "--chaos-trace-dir",
        metavar="DIR",
        default=None,
        help="write each chaos test's trace as JSON into DIR (default: not written)",
    )
    parser.addini("chaos_profile", "default chaos profile (default: none)", default="none")
    parser.addini(
        "chaos_profiles_dir",
        "directory of user chaos profiles, relative to the rootdir (default: chaos_profiles)",
        default="chaos_profiles",
    )
    parser.addini(
        "chaos_virtual_sleep",
        "make the agent's time virtual in chaos tests: time.sleep and asyncio.sleep advance "
        "the virtual clock, and time.time/monotonic/datetime.now follow it (default: false)",
        type="bool",
        default=False,
    )
    parser.addini(
        "chaos_freeze_time",
        "only make time.time/monotonic/datetime.now follow the virtual clock, leaving sleeps "
        "real (default: false; a loop that sleeps until the clock moves would never end)",
        type="bool",
        default=False,
    )


def _registry(config: pytest.Config) -> ProfileRegistry:
    configured = str(config.getini("chaos_profiles_dir"))
    user_dir = Path(configured)
    if not user_dir.is_absolute():
        user_dir = config.rootpath / user_dir
    if configured != "chaos_profiles" and not user_dir.is_dir():
        raise pytest.UsageError(
            f"pytest-agentchaos: ini chaos_profiles_dir: {user_dir} is not a directory"
        )
    return ProfileRegistry.default(user_dir)


def pytest_cmdline_main(config: pytest.Config) -> int | None:
    if not config.getoption("chaos_list_profiles"):
        return None
    registry = _registry(config)
    builtin = builtin_dir()
    lines = [f"chaos profiles (searched: {', '.join(str(d) for d in registry.dirs)}):"]
    for name in registry.names():
        path = registry.path(name)
        origin = (
            "built-in"
            if path is not None and path.parent.resolve() == builtin.resolve()
            else "user"
        )
        try:
            profile = registry.get(name)
        except ChaosConfigError as exc:
            lines.append(f"  {name:<14} [{origin}] BROKEN: {exc}")
            continue
        kinds = ", ".join(dict.fromkeys(f.kind.name for f in profile.faults)) or "no faults"
        budgets = ", ".join(f"{k}={v:g}" for k, v in profile.budgets.as_dict().items()) or "none"
        lines.append(f"  {name:<14} [{origin}] {profile.description}")
        lines.append(f"  {'':<14} faults: {kinds}; budgets: {budgets}")
    tw = (
        config.get_terminal_writer()
        if config.pluginmanager.has_plugin("terminalreporter")
        else None
    )
    text = "\n".join(lines)
    if tw is not None:
        tw.line(text)
    else:  # pragma: no cover - terminal plugin disabled
        import sys

        sys.stdout.write(text + "\n")
    return 0


def pytest_configure(config: pytest.Config) -> None:
    for description in MARKERS.values():
        config.addinivalue_line("markers", description)
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and _SEED_KEY in workerinput:
        seed = int(workerinput[_SEED_KEY])
    else:
        option = config.getoption("chaos_seed")
        seed = option if option is not None else random.SystemRandom().randrange(10**9)
    registry = _registry(config)
    profile_option = config.getoption("chaos_profile")
    default_profile = profile_option or str(config.getini("chaos_profile") or "none")
    try:
        path = registry.path(default_profile)
        # The built-in `none` is known good: skip parsing it, so runs without chaos stay cheap.
        if path is None or path.parent.resolve() != builtin_dir().resolve() or path.stem != "none":
            registry.get(default_profile)
    except ChaosConfigError as exc:
        source = "--chaos-profile" if profile_option else "ini chaos_profile"
        raise pytest.UsageError(f"pytest-agentchaos: {source}: {exc}") from None
    trace_dir = config.getoption("chaos_trace_dir")
    config.stash[STATE] = PluginState(
        seed=seed,
        registry=registry,
        default_profile=default_profile,
        profile_option=profile_option,
        freeze_time=bool(config.getini("chaos_freeze_time")),
        virtual_sleep=bool(config.getini("chaos_virtual_sleep")),
        trace_dir=Path(trace_dir).resolve() if trace_dir else None,
    )
    config.pluginmanager.register(_Summary(config.stash[STATE]), "agentchaos-summary")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(seed), "agentchaos-xdist")


class _Summary:
    """Collects one row per chaos test (from xdist workers too) and prints them at the end."""

    def __init__(self, state: PluginState) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        row = getattr(report, "agentchaos", None)
        if isinstance(row, dict):
            self.state.rows.append(row)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        rows = self.state.rows
        if not rows:
            return
        from ..report.terminal import format_row

        tr = terminalreporter
        tr.write_sep("=", f"agentchaos: {len(rows)} chaos test{'s' if len(rows) != 1 else ''}")
        for row in rows:
            tr.write_line(format_row(row))
        tr.write_line(f"session seed {self.state.seed}: replay with --chaos-seed={self.state.seed}")


class _XdistHooks:
    """Hands the controller's session seed to every worker."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[_SEED_KEY] = self.seed


def pytest_report_header(config: pytest.Config) -> str:
    state = config.stash[STATE]
    return (
        f"agentchaos: profile={state.default_profile} seed={state.seed} "
        f"(replay with --chaos-seed={state.seed})"
    )


def _parse_checked(item: pytest.Item, state: PluginState) -> TestChaos | None:
    """The item's chaos markers, validated, with the profile they name loaded."""
    spec = parse_marks(item)
    if spec is not None and spec.profile is not None:
        try:
            state.profile(spec.profile)
        except ChaosConfigError as exc:
            raise ChaosConfigError(f"@pytest.mark.chaos: profile: {exc}") from None
    return spec


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    report = yield
    if not report.passed or not report.result:
        return report
    state = collector.config.stash.get(STATE, None)
    if state is None:
        return report
    errors: list[str] = []
    for node in report.result:
        if not isinstance(node, pytest.Item) or not any(n in node.keywords for n in MARKERS):
            continue
        try:
            spec = _parse_checked(node, state)
        except ChaosConfigError as exc:
            errors.append(f"{node.nodeid}: {exc}")
            continue
        node.stash[SPEC] = spec
    if errors:
        report.outcome = "failed"
        report.longrepr = "pytest-agentchaos: bad chaos marker\n" + "\n".join(errors)
    return report


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash.get(STATE, None)
    for item in items:
        # Parse again: a conftest or plugin may have added markers since collection.
        if state is not None and any(n in item.keywords for n in MARKERS):
            try:
                item.stash[SPEC] = _parse_checked(item, state)
            except ChaosConfigError as exc:
                item.stash[SPEC] = TestChaos(error=f"pytest-agentchaos: bad chaos marker: {exc}")
        if item.stash.get(SPEC, None) is not None:
            names = getattr(item, "fixturenames", None)
            if isinstance(names, list) and "chaos" not in names:
                # A new list: params of one function share theirs, and only this one is marked.
                item.fixturenames = [*names, "chaos"]  # type: ignore[attr-defined]


def _cwd_relative(config: pytest.Config, nodeid: str) -> str:
    """The node id as the user can pass it from where pytest was run (ids are rootdir-relative)."""
    invoked = config.invocation_params.dir
    if invoked == config.rootpath:
        return nodeid
    path, sep, rest = nodeid.partition("::")
    return os.path.relpath(config.rootpath / path, invoked) + sep + rest


def _safe_name(nodeid: str) -> str:
    """A file name for a node id: readable, and unique (ids differing in punctuation too)."""
    import hashlib

    readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")[:160] or "test"
    return f"{readable}-{hashlib.blake2b(nodeid.encode(), digest_size=4).hexdigest()}"


@pytest.fixture
def chaos(request: pytest.FixtureRequest) -> Iterator[Chaos]:
    """Inject the test's chaos profile into tools, HTTP and model calls, on virtual time.

    ``chaos.wrap(fn)`` / ``chaos.wrap_tools(...)`` / ``chaos.http`` / ``chaos.model(fn)`` /
    ``chaos.step()``; ``chaos.trace``, ``chaos.seed``, ``chaos.profile``, ``chaos.clock``.
    """
    from ..inject.chaos import Chaos
    from ..report.terminal import replay_command
    from ..rng import derive_seed

    item = request.node
    state = request.config.stash[STATE]
    spec: TestChaos = item.stash.get(SPEC, None) or TestChaos()
    profile = state.profile(spec.profile or state.default_profile)  # validated at collection
    if spec.error is not None:
        pytest.fail(spec.error, pytrace=False)
    seed = spec.seed if spec.seed is not None else derive_seed(state.seed, item.nodeid)
    virtual_sleep = state.virtual_sleep if spec.virtual_sleep is None else spec.virtual_sleep
    freeze = state.freeze_time if spec.freeze_time is None else spec.freeze_time
    budgets = profile.budgets.override(spec.budgets)
    if spec.halt is not None:
        budgets = budgets.tighten(spec.halt)
    run = Chaos.create(
        profile,
        seed=seed,
        faults=spec.faults,
        budgets=budgets,
        test_id=item.nodeid,
        freeze_time=freeze or virtual_sleep,  # virtual sleeps must show in time readings
        virtual_sleep=virtual_sleep,
    )
    replay = replay_command(
        _cwd_relative(request.config, item.nodeid), state.seed, state.profile_option
    )
    if spec.seed is not None:
        replay += f"  (test seed pinned to {spec.seed} by @pytest.mark.chaos)"
    run.trace.meta["session_seed"] = state.seed
    if spec.escape is not None:
        _observe_loops(run, profile)
    if "httpx" in sys.modules:
        run.http  # noqa: B018 - start the router now: unrouted requests must not go out
    item.stash[RUN] = RunState(run, spec, replay)
    try:
        yield run
    finally:
        run.session.end()
        try:
            if state.trace_dir is not None:
                state.trace_dir.mkdir(parents=True, exist_ok=True)
                path = state.trace_dir / f"{_safe_name(item.nodeid)}.json"
                path.write_text(run.trace.to_json(indent=1), encoding="utf-8")
        finally:
            run.close()


def _observe_loops(run: Chaos, profile: Profile) -> None:
    """must_escape judges the loops the harness itself sees: attach its loop observer."""
    from ..escape.loops import LoopPolicy
    from ..escape.observer import LoopObserver

    raw = profile.sections.get("escape", {}).get("loops", {})
    try:
        policy = LoopPolicy.from_dict(raw, f"{profile.source}: [escape.loops]")
    except ChaosConfigError as exc:
        raise pytest.UsageError(f"pytest-agentchaos: {exc}") from None
    run.trace.subscribe(LoopObserver(run.session, policy))


def _judge(run: RunState) -> list[Verdict]:
    from ..verdicts import must_escape, must_halt, not_implemented

    trace = run.chaos.trace
    spec = run.spec
    verdicts: list[Verdict] = []
    if spec.halt is not None:
        verdicts.append(must_halt(trace, **spec.halt.as_dict()))
    if spec.escape is not None:
        verdicts.append(must_escape(trace, **spec.escape))
    if spec.repair is not None:
        verdicts.append(not_implemented("must_repair", "the repair loop, issue 4"))
    return verdicts


def _budget_message(run: RunState, exc: BudgetExhausted) -> str:
    from ..verdicts.verdict import usage

    trace = run.chaos.trace
    u = usage(trace)
    lines = [
        f"agentchaos: hard budget {exc.budget}={exc.limit:g} exhausted: "
        f"{exc.budget.removeprefix('max_')} would have reached {exc.count:g}",
        f"  used: steps={u['steps']} tool_calls={u['tool_calls']} model_calls={u['model_calls']} "
        f"virtual_seconds={u['seconds']:g} tokens={u['tokens']}",
        "  last events:",
        *("    " + e.describe() for e in trace.tail(5)),
    ]
    return "\n".join(lines)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    run = item.stash.get(RUN, None)
    if run is None:
        return (yield)
    session = run.chaos.session
    try:
        result = yield
    except BudgetExhausted as exc:
        session.end("halted")
        run.verdicts = _judge(run)
        parts = [v.explanation for v in run.verdicts if not v.ok] or [_budget_message(run, exc)]
        message = "\n".join([*parts, f"replay: {run.replay}"])
        raise pytest.fail.Exception(message, pytrace=False) from None
    except BaseException:
        session.end("error")
        run.verdicts = _judge(run)
        raise
    session.end()
    run.verdicts = _judge(run)
    messages = [v.explanation for v in run.verdicts if not v.ok]
    halted = session.halted
    if halted is not None and not any(v.name == "must_halt" for v in run.verdicts):
        messages.append(
            _budget_message(run, halted)
            + "\n  (the agent caught BudgetExhausted and carried on; it derives from "
            "BaseException precisely so that `except Exception` cannot)"
        )
    if messages:
        pytest.fail("\n".join([*messages, f"replay: {run.replay}"]), pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    run = item.stash.get(RUN, None)
    if run is None:
        return report
    from ..report.terminal import failure_section, summary_row

    trace = run.chaos.trace
    if report.when == "call":
        outcome: str = report.outcome
        if hasattr(report, "wasxfail"):
            outcome = "xpassed" if report.passed else "xfailed"
        report.agentchaos = summary_row(trace, run.verdicts, outcome)  # type: ignore[attr-defined]
    if report.failed:
        report.sections.append(("agentchaos", failure_section(trace, run.replay)))
    return report
