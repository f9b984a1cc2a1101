"""The pytest plugin: options, ini keys, markers, the ``chaos`` fixture and the hooks.

Thin by design: it turns options and markers into plain data and asks :mod:`..harness` to
build each run, :mod:`..verdicts` (through the run) to judge it and :mod:`..report` for text.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ChaosConfigError
from ..harness.spec import MARKERS, RunSpec, parse_marks
from ..profiles.profile import ProfileRegistry, builtin_dir
from .state import CALL_OUTCOME, RUN, SPEC, STATE, VARIANT, PluginState
from .summary import SEED_KEY, TRACES_KEY, Summary, XdistSeed

if TYPE_CHECKING:
    from ..harness.settings import SessionSettings
    from ..inject.chaos import Chaos

__all__ = ["chaos"]

_PREFIX = "pytest-agentchaos"


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


def _runs(value: str) -> int:
    from ..harness.spec import MAX_RUNS

    runs = _seed(value)
    if not 1 <= runs <= MAX_RUNS:
        raise argparse.ArgumentTypeError(f"expected 1 to {MAX_RUNS} runs, got {value!r}")
    return runs


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the ``--chaos-*`` options and the ``chaos_*`` ini keys."""
    group = parser.getgroup("agentchaos", "chaos testing for tool-using agents")
    group.addoption(
        "--chaos-profile",
        metavar="NAME",
        default=None,
        help="chaos profile for tests that use the chaos fixture or markers; several "
        "separated by commas run each test under each (default: ini chaos_profile, else 'none')",
    )
    group.addoption(
        "--chaos-seed",
        metavar="N",
        type=_seed,
        default=None,
        help="session seed for every fault decision (default: random, shown in the header)",
    )
    group.addoption(
        "--chaos-runs",
        metavar="K",
        type=_runs,
        default=None,
        help="run each chaos test under K seeds derived from the session seed, each its own "
        "test; a test passes if all K do (pass^k; default: 1)",
    )
    group.addoption(
        "--chaos-html",
        metavar="FILE",
        default=None,
        help="write a self-contained HTML report of the chaos tests to FILE: a filterable "
        "table, and per test its verdicts, replay command and timeline (default: none)",
    )
    group.addoption(
        "--chaos-baseline",
        metavar="FILE",
        default=None,
        help="compare each chaos test's metrics with the baseline FILE; regressions beyond "
        "the tolerances fail the session (default: ini chaos_baseline, or none)",
    )
    group.addoption(
        "--chaos-baseline-save",
        action="store_true",
        default=False,
        help="write this session's metrics into the baseline file instead of comparing "
        "(tests not run keep their entries)",
    )
    group.addoption(
        "--chaos-replay",
        metavar="PATH",
        default=None,
        help="re-run the tests recorded in PATH (a trace file, or a report dir / its "
        "index.json) with the fault decisions their traces recorded; other tests are "
        "deselected",
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
    group.addoption(
        "--chaos-report-dir",
        metavar="DIR",
        default=None,
        help="write report artifacts into DIR: each chaos test's trace (DIR/traces/) and "
        "DIR/index.json (default: ini chaos_report_dir, or none)",
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
        default="false",
    )
    parser.addini(
        "chaos_freeze_time",
        "only make time.time/monotonic/datetime.now follow the virtual clock, leaving sleeps "
        "real (default: false; a loop that sleeps until the clock moves would never end)",
        default="false",
    )
    parser.addini(
        "chaos_allow_hosts",
        "hosts a chaos test may reach over the network (host names, addresses, networks such "
        "as 10.0.0.0/8, 'localhost' for loopback, '*' for any; default: none)",
        type="linelist",
        default=[],
    )
    parser.addini(
        "chaos_wall_timeout",
        "real seconds a chaos test may run before the watchdog stops its agent "
        "(default: 300; 0 turns the watchdog off)",
        default="300",
    )
    parser.addini(
        "chaos_report_dir",
        "directory for report artifacts (traces, index.json), relative to the rootdir",
        default="",
    )
    parser.addini(
        "chaos_baseline",
        "baseline file of the chaos tests' metrics, relative to the rootdir",
        default="",
    )
    parser.addini(
        "chaos_baseline_tolerances",
        "how far a metric may regress from the baseline, one per line: 'steps = +20%', "
        "'pass_rate = -5pt', 'tokens = off' (default: pass_rate -5pt, counts and time +20%)",
        type="linelist",
        default=[],
    )
    parser.addini(
        "chaos_trace_max_value",
        "largest value (characters of JSON) a trace keeps of one argument or output; larger "
        "ones keep a head, their size and a digest (default: 65536)",
        default="65536",
    )


def _registry(config: pytest.Config) -> ProfileRegistry:
    configured = str(config.getini("chaos_profiles_dir"))
    user_dir = config.rootpath / configured
    if configured != "chaos_profiles" and not user_dir.is_dir():
        raise pytest.UsageError(f"{_PREFIX}: ini chaos_profiles_dir: {user_dir} is not a directory")
    return ProfileRegistry.default(user_dir)


def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """With ``--chaos-list-profiles``, print the available profiles and exit."""
    if not config.getoption("chaos_list_profiles"):
        return None
    from ..report.profiles import profile_listing

    text = profile_listing(_registry(config))
    if config.pluginmanager.has_plugin("terminalreporter"):
        config.get_terminal_writer().line(text)
    else:  # pragma: no cover - terminal plugin disabled
        sys.stdout.write(text + "\n")
    return 0


def _settings(config: pytest.Config, registry: ProfileRegistry) -> SessionSettings:
    """The session's settings from options and ini keys; a bad one is a usage error."""
    from ..harness import settings as s

    replay = None
    if config.getoption("chaos_replay") is not None:
        from ..harness.replay import load_source

        try:
            replay = load_source(config.getoption("chaos_replay"), config.invocation_params.dir)
        except ChaosConfigError as exc:
            raise pytest.UsageError(f"{_PREFIX}: {exc}") from None
    recorded = replay.meta if replay is not None else {}
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and SEED_KEY in workerinput:
        seed = int(workerinput[SEED_KEY])
    else:
        option = config.getoption("chaos_seed")
        option = option if option is not None else recorded.get("session_seed")
        seed = option if option is not None else random.SystemRandom().randrange(10**9)
    # a replay collects the recorded ids: the same profile matrix and runs
    profile_option = config.getoption("chaos_profile") or recorded.get("profile_option")
    runs = config.getoption("chaos_runs") or recorded.get("runs") or 1
    source = "--chaos-profile" if profile_option is not None else "ini chaos_profile"
    if profile_option is not None:
        default_profile = profile_option
    else:
        default_profile = str(config.getini("chaos_profile")).strip() or "none"
    try:
        profiles = s.parse_profile_names(default_profile, source)
        default_profile = profiles[0]
        for name in profiles:
            path = registry.path(name)
            # The built-in `none` is known good: skip parsing it: runs without chaos stay cheap.
            if path is None or path.parent.resolve() != builtin_dir().resolve() or name != "none":
                registry.get(name)
    except ChaosConfigError as exc:
        text = str(exc)
        text = text if text.startswith(source) else f"{source}: {text}"
        raise pytest.UsageError(f"{_PREFIX}: {text}") from None
    try:
        report_dir, trace_dir = s.artifact_dirs(
            config.getoption("chaos_report_dir"),
            str(config.getini("chaos_report_dir")),
            config.getoption("chaos_trace_dir"),
            config.rootpath,
        )
        if replay is not None and report_dir is not None and replay.reads_from(report_dir):
            report_dir, trace_dir = None, None  # never overwrite the recording it replays
        html = s.parse_html(config.getoption("chaos_html"), config.invocation_params.dir)
        temp_traces = html is not None and trace_dir is None
        if temp_traces:  # the report reads the traces: the controller's folder, in workers too
            given = (workerinput or {}).get(TRACES_KEY)
            trace_dir = Path(given or tempfile.mkdtemp(prefix="agentchaos-traces-"))
        return s.SessionSettings(
            seed=seed,
            default_profile=default_profile,
            profile_option=profile_option,
            virtual_sleep=_ini_bool(config, "chaos_virtual_sleep"),
            freeze_time=_ini_bool(config, "chaos_freeze_time"),
            trace_dir=trace_dir,
            report_dir=report_dir,
            trace_max_value=s.ini_int(
                config.getini("chaos_trace_max_value"),
                "ini chaos_trace_max_value",
                minimum=s.MIN_TRACE_MAX_VALUE,
            ),
            allow_hosts=s.parse_allow(config.getini("chaos_allow_hosts"), "ini chaos_allow_hosts"),
            wall_timeout=s.parse_wall_timeout(
                config.getini("chaos_wall_timeout"), "ini chaos_wall_timeout"
            ),
            runs=runs,
            profiles=profiles,
            replay=replay,
            html=html,
            temp_traces=temp_traces,
            baseline=s.baseline_path(
                config.getoption("chaos_baseline"),
                str(config.getini("chaos_baseline")),
                config.invocation_params.dir,
                config.rootpath,
                save=config.getoption("chaos_baseline_save"),
            ),
            baseline_save=config.getoption("chaos_baseline_save"),
            tolerances=s.tolerances(config.getini("chaos_baseline_tolerances")),
        )
    except ChaosConfigError as exc:
        raise pytest.UsageError(f"{_PREFIX}: {exc}") from None


def _ini_bool(config: pytest.Config, key: str) -> bool:
    from ..harness.settings import ini_bool

    return ini_bool(config.getini(key), f"ini {key}")


def pytest_configure(config: pytest.Config) -> None:
    """Declare the markers, validate the session's settings (a bad one is a usage error) and
    register the summary and, under xdist, the seed hand-off."""
    for description in MARKERS.values():
        config.addinivalue_line("markers", description)
    registry = _registry(config)
    state = PluginState(_settings(config, registry), registry)
    if state.settings.baseline is not None and not hasattr(config, "workerinput"):
        from ..report.baseline import load_baseline

        path = state.settings.baseline
        try:  # now, not at the end: a bad file must not cost a session
            if not state.settings.baseline_save or os.path.lexists(path):
                state.baseline = load_baseline(path)
        except ChaosConfigError as exc:
            raise pytest.UsageError(f"{_PREFIX}: {exc}") from None
    config.stash[STATE] = state
    config.pluginmanager.register(Summary(state, config), "agentchaos-summary")
    if config.pluginmanager.hasplugin("xdist"):
        traces = state.settings.trace_dir if state.settings.temp_traces else None
        config.pluginmanager.register(XdistSeed(state.settings.seed, traces), "agentchaos-xdist")


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Show the default profile and the session seed, and how to replay with that seed."""
    settings = config.stash[STATE].settings
    profiles = ",".join(settings.profiles) or settings.default_profile
    runs = f" runs={settings.runs}" if settings.runs > 1 else ""
    lines = [
        f"agentchaos: profile={profiles} seed={settings.seed}{runs} "
        f"(replay with --chaos-seed={settings.seed})"
    ]
    if settings.replay is not None:
        lines.append(
            f"agentchaos: replaying the fault decisions recorded in {settings.replay.path}"
        )
    return lines


def _spec(item: pytest.Item, state: PluginState) -> RunSpec | None:
    """The item's chaos markers, validated, with the profile they name loaded."""
    spec = parse_marks(item.iter_markers())
    if spec is not None and spec.profile is not None:
        try:
            state.registry.get(spec.profile)
        except ChaosConfigError as exc:
            raise ChaosConfigError(f"@pytest.mark.chaos: profile: {exc}") from None
    return spec


def _has_marker(item: pytest.Item) -> bool:
    return any(name in item.keywords for name in MARKERS)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize a chaos test by its variants: its runs (``--chaos-runs``, ``runs=``) and
    the profiles of a matrix (``--chaos-profile=a,b``), each its own test id."""
    state = metafunc.config.stash.get(STATE, None)
    definition = metafunc.definition
    if state is None or (
        "chaos" not in metafunc.fixturenames
        and not any(True for name in MARKERS for _ in definition.iter_markers(name))
    ):
        return
    from ..harness.variants import variants

    try:
        spec = parse_marks(definition.iter_markers())
    except ChaosConfigError:
        return  # the collection report names it
    found = variants(spec, state.settings, definition.nodeid)
    if found:
        metafunc.fixturenames.append(VARIANT)
        metafunc.parametrize(VARIANT, found, ids=[v.id for v in found], indirect=True)


@pytest.fixture(name=VARIANT)
def _variant(request: pytest.FixtureRequest) -> Any:
    """The run of a chaos test this item is (see ``harness.variants``)."""
    return request.param


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    """Validate the chaos markers of the items collected: a bad one fails the collection."""
    report = yield
    state = collector.config.stash.get(STATE, None)
    if state is None or not report.passed or not report.result:
        return report
    errors: list[str] = []
    for node in report.result:
        if not isinstance(node, pytest.Item) or not _has_marker(node):
            continue
        try:
            node.stash[SPEC] = _spec(node, state)
        except ChaosConfigError as exc:
            errors.append(f"{node.nodeid}: {exc}")
    if errors:
        report.outcome = "failed"
        report.longrepr = f"{_PREFIX}: bad chaos marker\n" + "\n".join(errors)
    return report


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Parse chaos markers again (a bad one now fails its test when it runs) and give every
    marked test the ``chaos`` fixture."""
    state = config.stash.get(STATE, None)
    if state is not None and state.settings.replay is not None:
        _replay_only(config, items, state.settings.replay)
    for item in items:
        # Parse again: a conftest or plugin may have added markers since collection.
        if state is not None and _has_marker(item):
            try:
                item.stash[SPEC] = _spec(item, state)
            except ChaosConfigError as exc:
                item.stash[SPEC] = RunSpec(error=f"{_PREFIX}: bad chaos marker: {exc}")
        if item.stash.get(SPEC, None) is not None:
            names = getattr(item, "fixturenames", None)
            if isinstance(names, list) and "chaos" not in names:
                # A new list: params of one function share theirs, and only this one is marked.
                item.fixturenames = [*names, "chaos"]  # type: ignore[attr-defined]


def _replay_only(config: pytest.Config, items: list[pytest.Item], source: Any) -> None:
    """Deselect the tests ``--chaos-replay`` has no recorded run of."""
    kept = [item for item in items if item.nodeid in source]
    if not kept and items:
        known = ", ".join(sorted(source.traces)[:3])
        raise pytest.UsageError(
            f"{_PREFIX}: --chaos-replay: {source.path}: none of the tests collected here has a "
            f"recorded run in it (it has {len(source.traces)}: {known}"
            f"{', ...' if len(source.traces) > 3 else ''}); run pytest from the rootdir the "
            "recording ran from"
        )
    dropped = [item for item in items if item.nodeid not in source]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _cwd_relative(config: pytest.Config, nodeid: str) -> str:
    """The node id as the user can pass it from where pytest was run (ids are rootdir-relative)."""
    invoked = config.invocation_params.dir
    if invoked == config.rootpath:
        return nodeid
    path, sep, rest = nodeid.partition("::")
    return os.path.relpath(config.rootpath / path, invoked) + sep + rest


def _last_resort(config: pytest.Config) -> Any:
    """What the watchdog writes before it ends the process: past pytest's output capture."""

    def write(text: str) -> None:
        capman = config.pluginmanager.getplugin("capturemanager")
        try:
            if capman is not None:
                capman.suspend_global_capture(in_=True)
        finally:
            sys.stderr.write("\n" + "+" * 30 + " agentchaos watchdog " + "+" * 30 + "\n")
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    return write


@pytest.fixture
def chaos(request: pytest.FixtureRequest) -> Iterator[Chaos]:
    """Inject the test's chaos profile into tools, HTTP and model calls, on virtual time.

    ``chaos.wrap(fn)`` / ``chaos.wrap_tools(...)`` / ``chaos.http`` / ``chaos.model(fn)`` /
    ``chaos.step()``; ``chaos.trace``, ``chaos.seed``, ``chaos.profile``, ``chaos.clock``.
    """
    from ..harness.run import build_run

    item = request.node
    state = request.config.stash[STATE]
    spec: RunSpec = item.stash.get(SPEC, None) or RunSpec()
    if spec.error is not None:
        pytest.fail(spec.error, pytrace=False)
    variant = _variant_of(item)
    if variant is not None:
        spec = variant.apply(spec)
    replay = state.settings.replay
    try:
        recorded = replay.recorded(item.nodeid) if replay is not None else None
        with build_run(
            state.settings,
            spec,
            item.nodeid,
            state.registry,
            replay_id=_cwd_relative(request.config, item.nodeid),
            last_resort=_last_resort(request.config),
            recorded=recorded,
        ) as run:
            item.stash[RUN] = run
            yield run.chaos
    except ChaosConfigError as exc:
        pytest.fail(f"{_PREFIX}: {exc}", pytrace=False)


def _variant_of(item: pytest.Item) -> Any:
    callspec = getattr(item, "callspec", None)
    return callspec.params.get(VARIANT) if callspec is not None else None


_PASS_THROUGH = (pytest.skip.Exception, pytest.xfail.Exception, pytest.exit.Exception)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """End a chaos test's run with its body and judge it: a hard halt or a failing verdict
    fails the test with the harness's message."""
    run = item.stash.get(RUN, None)
    if run is None:
        return (yield)
    try:
        result = yield
    except _PASS_THROUGH:
        run.finish(None)
        raise
    except BaseException as exc:
        outcome = run.finish(exc)
        if outcome.halt is not None:
            raise pytest.fail.Exception(
                outcome.message or outcome.halt.message, pytrace=False
            ) from None
        raise
    outcome = run.finish(None)
    if outcome.message:
        pytest.fail(outcome.message, pytrace=False)
    return result


def _diverged(item: pytest.Item, run: Any) -> tuple[str, ...]:
    """Warn when a replay made other calls than its recorded run; the note for its section."""
    if run.divergence is None:
        return ()
    from ..errors import ReplayDiverged

    source = run.plan.recorded.source if run.plan.recorded is not None else "?"
    text = f"the replay diverged from {source} {run.divergence}"
    item.warn(ReplayDiverged(f"{_PREFIX}: {item.nodeid}: {text}"))
    return (text,)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Add the agentchaos section (replay command, last events) to a failed chaos test's
    report, and the test's summary row and JUnit properties to its teardown report."""
    report = yield
    run = item.stash.get(RUN, None)
    if run is None:
        return report
    from ..report.artifacts import trace_file
    from ..report.terminal import failure_section, summary_row

    variant = _variant_of(item)
    spec = item.stash.get(SPEC, None)
    min_rate = spec.min_pass_rate if spec is not None else None
    if report.when == "call":
        outcome: str = report.outcome
        if hasattr(report, "wasxfail"):
            outcome = "xpassed" if report.passed else "xfailed"
        item.stash[CALL_OUTCOME] = outcome
        diverged = _diverged(item, run)
        if report.failed:
            notes = run.outcome.notes if run.outcome is not None else ()
            notes = (*diverged, *notes)
            report.sections.append(("agentchaos", failure_section(run.trace, run.replay, notes)))
            if min_rate is not None and variant is not None and variant.run is not None:
                # one failed run of several: the pass rate over the runs judges the test
                report.outcome = "skipped"
                report.wasxfail = (
                    f"agentchaos: this run failed; the test is judged by its pass rate "
                    f"(min_pass_rate={min_rate:g}): {run.replay}"
                )
    elif report.when == "teardown" and CALL_OUTCOME in item.stash:
        verdicts = run.outcome.verdicts if run.outcome is not None else ()
        outcome = item.stash[CALL_OUTCOME] if report.passed else "error"
        row = summary_row(
            run.trace,
            verdicts,
            outcome,
            unmatched=run.unmatched_faults(),
            threads_left=run.threads_left,
        )
        state = item.config.stash[STATE]
        row.update(
            replay=run.replay,
            explanations={v.name: v.explanation for v in verdicts},
            trace_file=trace_file(run.plan.trace_path, state.settings.report_dir),
        )
        if variant is not None:
            from ..harness.variants import case_id

            row.update(case=case_id(item.nodeid, variant.id), run=variant.run)
            if min_rate is not None:
                row["min_pass_rate"] = min_rate
        report.agentchaos = row  # type: ignore[attr-defined]
        from ..report.junit import junit_properties  # --junitxml writes them once, here

        report.user_properties = [
            *report.user_properties,
            *junit_properties(row, verdicts, run.replay),
        ]
    return report
