"""The pytest plugin: options, ini keys, markers, the ``chaos`` fixture and the hooks.

Thin by design: it turns options and markers into plain data and asks :mod:`..harness` to
build each run, :mod:`..verdicts` (through the run) to judge it and :mod:`..report` for text.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import shutil
import sys
import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from ..errors import ChaosConfigError
from ..harness.spec import MARKERS, RunSpec, parse_marks
from ..patching import sweep
from .fixtures import _variant, chaos, chaos_mcp_proxy  # noqa: F401 - pytest reads fixtures here
from .options import PREFIX, add_options, option, registry_of, settings_of
from .peers import has_own_marker, own_marks
from .state import CALL_OUTCOME, RUN, SPEC, STATE, VARIANT, PluginState, variant_of
from .summary import Summary, XdistSeed

__all__ = ["chaos", "chaos_mcp_proxy"]

_PREFIX = PREFIX


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Add the ``--agentchaos-*`` / ``--chaos-*`` options and the ``chaos_*`` ini keys."""
    add_options(parser, pluginmanager)


def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """With ``--chaos-list-profiles``, print the available profiles and exit."""
    if not option(config, "list-profiles"):
        return None
    from ..report.profiles import profile_listing

    text = profile_listing(registry_of(config))
    if config.pluginmanager.has_plugin("terminalreporter"):
        config.get_terminal_writer().line(text)
    else:  # pragma: no cover - terminal plugin disabled
        sys.stdout.write(text + "\n")
    return 0


def pytest_configure(config: pytest.Config) -> None:
    """Declare the markers, validate the session's settings (a bad one is a usage error) and
    register the summary and, under xdist, the seed hand-off."""
    for description in MARKERS.values():
        config.addinivalue_line("markers", description)
    registry = registry_of(config)
    state = PluginState(settings_of(config, registry), registry)
    if state.settings.baseline is not None and not hasattr(config, "workerinput"):
        from ..report.baseline import load_baseline

        path = state.settings.baseline
        try:  # now, not at the end: a bad file must not cost a session
            if not state.settings.baseline_save or os.path.lexists(path):
                state.baseline = load_baseline(path)
        except ChaosConfigError as exc:
            raise pytest.UsageError(f"{_PREFIX}: {exc}") from None
    if state.settings.temp_traces and state.settings.trace_dir is None:
        # the HTML report's traces, when no trace dir keeps them: removed as pytest ends
        made = tempfile.mkdtemp(prefix="agentchaos-traces-")
        config.add_cleanup(functools.partial(shutil.rmtree, made, ignore_errors=True))
        state.settings = dataclasses.replace(state.settings, trace_dir=Path(made))
    config.stash[STATE] = state
    config.pluginmanager.register(Summary(state, config), "agentchaos-summary")
    _register_search(config)
    if config.pluginmanager.hasplugin("xdist"):
        traces = state.settings.trace_dir if state.settings.temp_traces else None
        config.pluginmanager.register(XdistSeed(state.settings.seed, traces), "agentchaos-xdist")


def _register_search(config: pytest.Config) -> None:
    """The hooks of ``--chaos-explore`` and ``--chaos-schedule`` (see :mod:`.search`)."""
    from .search import SearchHooks

    config.pluginmanager.register(SearchHooks(config), "agentchaos-search")


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Show the default profile and the session seed, and how to replay with that seed."""
    from ..report.notes import header_lines

    return header_lines(config.stash[STATE].settings)


def _spec(item: pytest.Item, state: PluginState) -> RunSpec | None:
    """The item's chaos markers, validated, with the profile they name loaded."""
    spec = parse_marks(own_marks(item))
    if spec is not None and spec.profile is not None:
        try:
            state.registry.get(spec.profile)
        except ChaosConfigError as exc:
            raise ChaosConfigError(f"@pytest.mark.chaos: profile: {exc}") from None
    return spec


def _has_marker(item: pytest.Item) -> bool:
    return has_own_marker(item)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize a chaos test by its variants: its runs (``--chaos-runs``, ``runs=``) and
    the profiles of a matrix (``--chaos-profile=a,b``), each its own test id."""
    state = metafunc.config.stash.get(STATE, None)
    definition = metafunc.definition
    if state is None or (
        "agentchaos" not in metafunc.fixturenames and not has_own_marker(definition)
    ):
        return
    from ..harness.variants import variants

    try:
        spec = parse_marks(own_marks(definition))
    except ChaosConfigError:
        return  # the collection report names it
    found = variants(spec, state.settings, definition.nodeid)
    if found:
        metafunc.fixturenames.append(VARIANT)
        metafunc.parametrize(VARIANT, found, ids=[v.id for v in found], indirect=True)


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
    marked test the ``agentchaos`` fixture (``chaos`` is its short name)."""
    state = config.stash.get(STATE, None)
    if state is not None and state.settings.replay is not None:
        _replay_only(config, items, state.settings.replay)
    for item in items:
        # Parse again: a conftest or plugin may have added markers since collection.
        if state is not None and _has_marker(item):
            try:
                item.stash[SPEC] = spec = _spec(item, state)
            except ChaosConfigError as exc:
                item.stash[SPEC] = RunSpec(error=f"{_PREFIX}: bad chaos marker: {exc}")
            else:
                variant = variant_of(item)
                made = variant.runs if variant is not None else 1
                asked = {m.kwargs.get("runs") for m in own_marks(item, "chaos")} - {None}
                if spec is not None and spec.seed is None and asked - {made}:
                    item.stash[SPEC] = RunSpec(error=_UNPARAMETRIZED)
        if item.stash.get(SPEC, None) is not None:
            names = getattr(item, "fixturenames", None)
            if isinstance(names, list) and "agentchaos" not in names:
                # A new list: params of one function share theirs, and only this one is marked.
                item.fixturenames = [*names, "agentchaos"]  # type: ignore[attr-defined]


def pytest_collection_finish(session: pytest.Session) -> None:
    """Decide where the report goes before any test runs (see :func:`_place_report`)."""
    _place_report(session.config, [item.nodeid for item in session.items])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """Under xdist the controller writes the report: it decides from a worker's collection,
    as each worker did from its own (the same)."""
    _place_report(node.config, ids)


def _place_report(config: pytest.Config, ids: list[str]) -> None:
    """A session that runs again only some of the runs recorded in its report dir under its
    own seed (the printed replay command of one test) writes its report into the report
    dir's ``replay/`` folder: the recording stays whole for a later ``--chaos-replay``."""
    state = config.stash.get(STATE, None)
    if state is None or state.placed:
        return
    state.placed = True
    from ..harness.placement import place_report

    placed = place_report(state.settings, ids)
    if placed is not None:
        state.settings, state.replay_place = placed


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Say where a replay's report went, and that the recording it replays is untouched."""
    state = config.stash.get(STATE, None)
    if state is None:
        return
    from ..report.notes import replay_note

    settings = state.settings
    worker = hasattr(config, "workerinput")
    note = replay_note(
        state.replay_place,
        settings.report_dir,
        settings.replay.path if settings.replay is not None and not worker else None,
        asked_for_report=bool(option(config, "report-dir") or config.getini("chaos_report_dir")),
    )
    if note is not None:
        terminalreporter.write_line(note)


_UNPARAMETRIZED = (
    f"{_PREFIX}: bad chaos marker: @pytest.mark.chaos: runs: a mark of one pytest.param "
    "cannot multiply its runs; put runs= on the test function, its class or module"
)


def _replay_only(config: pytest.Config, items: list[pytest.Item], source: Any) -> None:
    """Deselect the tests ``--chaos-replay`` has no recorded run of."""
    kept = [item for item in items if item.nodeid in source]
    if not kept and items:
        from ..report.notes import no_recorded_test

        raise pytest.UsageError(f"{_PREFIX}: {no_recorded_test(source.path, list(source.traces))}")
    dropped = [item for item in items if item.nodeid not in source]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


_PASS_THROUGH = (pytest.skip.Exception, pytest.xfail.Exception)
#: What ends the session from inside a test: no teardown phase of the test follows (pytest
#: tears its fixtures down as the session ends, after the report is written).
_INTERRUPTS = (KeyboardInterrupt, pytest.exit.Exception)


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
        with contextlib.suppress(Exception):
            _diverged(item, run)
        raise
    except _INTERRUPTS as exc:
        run.finish(exc, status="interrupted")
        _interrupted(item, run)
        raise
    except BaseException as exc:
        outcome = run.finish(exc)
        with contextlib.suppress(Exception):  # -W error: the test has failed already
            _diverged(item, run)
        if outcome.halt is not None:
            raise pytest.fail.Exception(
                outcome.message or outcome.halt.message, pytrace=False
            ) from None
        raise
    outcome = run.finish(None)
    _diverged(item, run)
    if outcome.message:
        pytest.fail(outcome.message, pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    """After the test's whole teardown: put back what a fixture torn down after the run
    restored to the run's patches (``monkeypatch``); tear down a run whose own teardown was
    cut short (a Ctrl-C in a fixture's teardown), and keep its row as interrupted."""
    try:
        return (yield)
    except _INTERRUPTS:
        run = item.stash.get(RUN, None)
        if run is not None:
            run.finish(None, status="interrupted")
            _interrupted(item, run)
        raise
    finally:
        run = item.stash.get(RUN, None)
        if run is not None and not run.closed:  # its fixture's finalizer never ran
            with contextlib.suppress(Exception):
                run.close()
        sweep()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """A run still open as the session ends was interrupted (``pytest.exit`` or a Ctrl-C
    between its setup and its teardown): tear it down before the report is written, and
    keep its row as interrupted."""
    state = session.config.stash.get(STATE, None)
    if state is None:
        return
    for item in list(state.live.values()):
        run = item.stash.get(RUN, None)
        if run is None:
            state.live.pop(item.nodeid, None)
            continue
        run.finish(None, status="interrupted")
        _interrupted(item, run)
    sweep()


def _interrupted(item: pytest.Item, run: Any) -> None:
    """Tear the run down now (no teardown phase of the test follows) and give the session
    report its row, as interrupted."""
    try:
        with contextlib.suppress(Exception):  # the trace file: the interruption says more
            run.close()
    finally:
        state = item.config.stash[STATE]
        with contextlib.suppress(Exception):
            state.rows.append(_row(item, run, "interrupted"))
        _release(item)


def _release(item: pytest.Item) -> None:
    """The test's run is over and reported: drop it (a session of many tests keeps none)."""
    if RUN in item.stash:
        del item.stash[RUN]
    item.config.stash[STATE].live.pop(item.nodeid, None)


def _diverged(item: pytest.Item, run: Any) -> None:
    """Warn, in the test's call (under ``-W error`` the warning fails that test alone), when
    its replay made other calls than the recorded run."""
    text = run.divergence_note
    if text is not None:
        from ..errors import ReplayDiverged

        item.warn(ReplayDiverged(f"{_PREFIX}: {item.nodeid}: {text}"))


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
    from ..report.terminal import failure_section

    variant = variant_of(item)
    spec = item.stash.get(SPEC, None)
    min_rate = spec.min_pass_rate if spec is not None else None
    if report.when == "call":
        outcome: str = report.outcome
        if hasattr(report, "wasxfail"):
            outcome = "xpassed" if report.passed else "xfailed"
        item.stash[CALL_OUTCOME] = outcome
        diverged = run.divergence_note
        if report.failed:
            notes = run.outcome.notes if run.outcome is not None else ()
            notes = (diverged, *notes) if diverged else notes
            report.sections.append(("agentchaos", failure_section(run.trace, run.replay, notes)))
            if min_rate is not None and variant is not None and variant.run is not None:
                # one failed run of several: the pass rate over the runs judges the test
                report.outcome = "skipped"
                report.wasxfail = (
                    f"agentchaos: this run failed; the test is judged by its pass rate "
                    f"(min_pass_rate={min_rate:g}): {run.replay}"
                )
    elif report.when == "teardown" and CALL_OUTCOME in item.stash:
        outcome = item.stash[CALL_OUTCOME] if report.passed else "error"
        row = _row(item, run, outcome)
        if variant is not None and variant.auto:
            from ..harness.auto import case_key

            state = item.config.stash[STATE]
            state.auto.record(case_key(item.nodeid, variant), outcome, min_rate, variant.runs)
        report.agentchaos = row  # type: ignore[attr-defined]
        from ..report.junit import junit_properties  # --junitxml writes them once, here

        verdicts = run.outcome.verdicts if run.outcome is not None else ()
        report.user_properties = [
            *report.user_properties,
            *junit_properties(row, verdicts, run.replay),
        ]
        _release(item)
    elif report.when == "teardown":
        _release(item)
    return report


def _row(item: pytest.Item, run: Any, outcome: str) -> dict[str, Any]:
    """The test's summary row (and index entry): :func:`..harness.rows.run_row`."""
    from ..harness.rows import run_row

    spec = item.stash.get(SPEC, None)
    return run_row(
        run,
        outcome,
        item.nodeid,
        report_dir=item.config.stash[STATE].settings.report_dir,
        variant=variant_of(item),
        min_pass_rate=spec.min_pass_rate if spec is not None else None,
    )
