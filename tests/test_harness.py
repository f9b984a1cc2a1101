"""The harness: a run is validated before anything is installed, undone on every exit path,
and ends agents that swallow hard halts (in any thread, at any depth)."""

from __future__ import annotations

import asyncio
import builtins
import concurrent.futures
import datetime
import logging
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_agentchaos.errors import (
    BudgetExhausted,
    ChaosConfigError,
    HaltSwallowed,
    NetworkBlocked,
)
from pytest_agentchaos.harness import RunSpec, SessionSettings, build_run, find_halt, parse_marks
from pytest_agentchaos.inject.network import NetworkGuard
from pytest_agentchaos.profiles import Budgets, ProfileRegistry


def registry(tmp_path: Path, **profiles: str) -> ProfileRegistry:
    for name, text in profiles.items():
        (tmp_path / f"{name}.toml").write_text(text, encoding="utf-8")
    return ProfileRegistry.default(tmp_path)


def settings(**kw: Any) -> SessionSettings:
    kw.setdefault("seed", 1)
    kw.setdefault("wall_timeout", 0)
    return SessionSettings(**kw)


def untouched() -> bool:
    """Whether everything a run patches is as it was before it (time, sockets, tracers, the
    threads' excepthook, the watchdog's signal)."""
    return now_installed() == REAL


def now_installed() -> tuple[Any, ...]:
    return (
        time.time,
        time.sleep,
        socket.getaddrinfo,
        socket.socket.connect,
        datetime.datetime,
        sys.gettrace(),
        sys.getprofile(),
        threading.excepthook,
        signal.getsignal(signal.SIGUSR2),
    )


REAL = now_installed()


def swallowing_loop(tool: Callable[[], Any]) -> None:
    while True:
        try:  # noqa: SIM105 - the hostile agent, as written in the wild
            tool()
        except BaseException:
            pass


# -- plan first, install after ------------------------------------------------------------------


def test_a_bad_stack_table_fails_before_anything_is_installed(tmp_path: Path) -> None:
    reg = registry(tmp_path, typo='extends = "none"\n[escape.loops]\nmax_perod = 8\n')
    spec = RunSpec(profile="typo", virtual_sleep=True, escape={})
    with pytest.raises(ChaosConfigError) as exc, build_run(settings(), spec, "t", reg):
        pass  # pragma: no cover - never entered
    assert str(exc.value) == (
        f"{tmp_path / 'typo.toml'}: [escape.loops]: unknown key 'max_perod'; allowed: "
        "min_period, max_period, repeats_period_1, repeats, error_streak, state_repeats, "
        "state_window, node_visits, node_window_events, node_window_seconds, text_similarity, "
        "error_streak_window, error_numbers, error_wording, nudge_tokens, ignore_fields, keys"
    )
    assert untouched()


def test_a_failing_install_undoes_what_was_installed(tmp_path: Path, monkeypatch: Any) -> None:
    def broken_install(self: NetworkGuard) -> None:
        raise RuntimeError("install failed")

    monkeypatch.setattr(NetworkGuard, "install", broken_install)
    spec = RunSpec(virtual_sleep=True)  # time is installed before the network guard
    with (
        pytest.raises(RuntimeError, match="install failed"),
        build_run(settings(), spec, "t", registry(tmp_path)),
    ):
        pass  # pragma: no cover
    monkeypatch.undo()
    assert untouched()


def test_every_undo_runs_even_when_one_is_interrupted(tmp_path: Path) -> None:
    def interrupt_on_end(event: Any) -> None:
        if type(event).__name__ == "RunEnded":
            raise KeyboardInterrupt

    with (
        pytest.raises(KeyboardInterrupt),
        build_run(  # noqa: PT012
            settings(), RunSpec(virtual_sleep=True), "t", registry(tmp_path)
        ) as run,
    ):
        run.trace.subscribe(interrupt_on_end)
        assert (
            time.time() == datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc).timestamp()
        )
    assert untouched()


def test_overlapping_runs_are_refused_and_the_first_keeps_its_patches(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    with build_run(settings(), RunSpec(virtual_sleep=True), "first", reg):
        during = now_installed()
        with (
            pytest.raises(ChaosConfigError) as exc,
            build_run(settings(), RunSpec(), "second", reg),
        ):
            pass  # pragma: no cover - never entered
        assert now_installed() == during  # the refused run undid nothing of the first's
        assert socket.socket.connect is not REAL[3]  # the first run's guard is still on
    assert str(exc.value) == (
        "second: another chaos run is active in this process (first): a run patches time, "
        "sockets and signal handlers process-wide, so runs cannot overlap"
    )
    assert untouched()
    with build_run(settings(), RunSpec(), "third", reg):  # the claim was given back
        pass


def test_the_trace_file_is_written_on_exit_whatever_happened(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    out.mkdir()
    with (
        pytest.raises(ZeroDivisionError),
        build_run(  # noqa: PT012
            settings(trace_dir=out), RunSpec(), "a::b[x/y]", registry(tmp_path)
        ) as run,
    ):
        run.chaos.wrap(lambda: 1, name="t")()
        1 / 0  # noqa: B018
    (written,) = out.iterdir()
    assert written.name.startswith("a_b_x_y-") and written.suffix == ".json"
    text = written.read_text(encoding="utf-8")
    assert '"status": "error"' in text and '"tool": "t"' in text


# -- swallowed halts ---------------------------------------------------------------------------


def halting_run(tmp_path: Path, **spec: Any) -> Any:
    spec.setdefault("budgets", Budgets(max_tool_calls=2))
    return build_run(settings(), RunSpec(**spec), "t", registry(tmp_path))


def test_an_agent_catching_base_exception_is_unwound(tmp_path: Path) -> None:
    with halting_run(tmp_path) as run:
        tool = run.chaos.wrap(lambda: "ok", name="search")
        with pytest.raises(HaltSwallowed) as exc:
            swallowing_loop(tool)
        outcome = run.finish(exc.value)
    assert isinstance(exc.value.halt, BudgetExhausted)
    assert outcome.message is not None
    assert outcome.message.splitlines()[0] == (
        "agentchaos: hard budget max_tool_calls=2 exhausted: tool_calls would have reached 3"
    )
    assert "pytest-agentchaos raised it again in the agent's code" in outcome.message
    assert run.session.tool_calls == 2
    assert untouched()


def test_with_blocks_of_an_unwound_agent_still_exit(tmp_path: Path) -> None:
    """The unwinder cuts ``finally`` blocks short, but a ``with`` block's exit still runs: a
    lock is released and a patch undone."""
    from unittest import mock

    class Target:
        value = "real"

    lock = threading.Lock()

    def agent(tool: Callable[[], Any]) -> None:
        with mock.patch.object(Target, "value", "patched"):
            while True:
                with lock:
                    try:  # noqa: SIM105
                        tool()
                    except BaseException:
                        pass

    with halting_run(tmp_path) as run:
        tool = run.chaos.wrap(lambda: "ok", name="t")
        with pytest.raises(HaltSwallowed):
            agent(tool)
        run.finish(None)
    assert Target.value == "real"
    assert not lock.locked()


def test_nested_swallowers_and_logging_handlers_are_unwound(tmp_path: Path) -> None:
    log = logging.getLogger("agent")

    def inner(tool: Callable[[], Any]) -> None:
        while True:
            try:
                tool()
            except BaseException as error:
                log.debug("retrying after %r", error)

    def outer(tool: Callable[[], Any]) -> None:
        while True:
            try:
                inner(tool)
            except BaseException:
                continue

    with halting_run(tmp_path) as run:
        tool = run.chaos.wrap(lambda: "ok", name="search")
        with pytest.raises(HaltSwallowed):
            outer(tool)
    assert untouched()


def test_a_swallowing_coroutine_is_unwound(tmp_path: Path) -> None:
    async def agent(tool: Callable[[], Any]) -> None:
        while True:
            try:
                await tool()
            except BaseException:
                await asyncio.sleep(0)

    async def fetch() -> str:
        return "ok"

    with halting_run(tmp_path) as run:
        tool = run.chaos.wrap(fetch)
        with pytest.raises(HaltSwallowed):
            asyncio.run(agent(tool))
    assert untouched()


def test_a_swallowing_thread_is_ended_and_the_pool_keeps_working(tmp_path: Path) -> None:
    with halting_run(tmp_path) as run:
        tool = run.chaos.wrap(lambda: "ok", name="search")
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            future = pool.submit(swallowing_loop, tool)
            with pytest.raises(HaltSwallowed):
                future.result(timeout=10)
            run.finish(None)
            # the same worker thread runs the next job normally: no hook is left behind
            assert pool.submit(lambda: sys.gettrace() is None and sum(range(10))).result() == 45


def test_the_unwinder_gives_a_previous_tracer_back(tmp_path: Path) -> None:
    calls: list[str] = []

    def coverage_like(frame: Any, event: str, arg: Any) -> Any:
        calls.append(event)

    sys.settrace(coverage_like)
    try:
        with halting_run(tmp_path) as run:
            tool = run.chaos.wrap(lambda: "ok", name="search")
            with pytest.raises(HaltSwallowed):
                swallowing_loop(tool)
            run.finish(None)
            assert sys.gettrace() is coverage_like
    finally:
        sys.settrace(None)


def test_library_sessions_do_not_unwind(make_chaos: Any) -> None:
    """Outside the harness (production code), a swallowed halt just raises again."""
    chaos = make_chaos(budgets=Budgets(max_tool_calls=1))
    tool = chaos.wrap(lambda: "ok", name="t")
    tool()
    for _ in range(3):
        with pytest.raises(BudgetExhausted):
            tool()
    assert sys.gettrace() is None


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception groups are 3.11+")
def test_find_halt_looks_inside_exception_groups() -> None:
    budget = BudgetExhausted("max_steps", 3, 4)
    group_type = builtins.BaseExceptionGroup  # type: ignore[attr-defined,unused-ignore]
    group = group_type("tasks", [ValueError("x"), group_type("in", [budget])])
    assert find_halt(group) is budget
    assert find_halt(ValueError("x")) is None
    assert find_halt(None) is None


# -- the outcome -------------------------------------------------------------------------------


def test_a_halt_the_agent_swallowed_and_returned_from_still_fails(tmp_path: Path) -> None:
    with halting_run(tmp_path, halt=Budgets(max_tool_calls=2)) as run:
        tool = run.chaos.wrap(lambda: "ok", name="search")
        tool()
        tool()
        try:  # noqa: SIM105 - swallowed once, then the agent stops calling
            tool()
        except BaseException:
            pass
        outcome = run.finish(None)
    assert outcome.message is not None
    lines = outcome.message.splitlines()
    assert lines[0] == "must_halt failed: the agent did not halt on its own within its budget"
    assert lines[-1].startswith("  (the agent caught BudgetExhausted and carried on;")


def test_a_test_failing_by_its_own_error_gets_the_verdicts_as_notes(tmp_path: Path) -> None:
    with halting_run(tmp_path, budgets=Budgets(), escape={"require_loop": True}) as run:
        run.chaos.step()
        outcome = run.finish(AssertionError("agent answered wrong"))
    # the test's own error is what pytest shows; the failing verdicts join its report section,
    # each saying first what ended the run
    assert outcome.message is None and outcome.halt is None
    assert [note.splitlines()[0].startswith("the run ended ") for note in outcome.notes] == [True]
    assert [note.splitlines()[1] for note in outcome.notes] == [
        "must_escape failed: nothing to escape: no loop arose in this run (0 faults fired; the "
        "run ended error at step 1, t=0.000s). Inject faults that trap the agent, or pass "
        "require_loop=False."
    ]


def test_agent_threads_left_running_are_reported(tmp_path: Path) -> None:
    stop = threading.Event()
    with build_run(settings(), RunSpec(), "t", registry(tmp_path)) as run:
        threading.Thread(target=stop.wait, name="poller", daemon=True).start()
    try:
        assert run.threads_left == ["poller (daemon)"]
        assert run.trace.meta["threads_left"] == ["poller (daemon)"]
    finally:
        stop.set()


@pytest.mark.skipif(sys.platform == "win32", reason="asyncio's child watcher is POSIX's")
def test_asyncios_child_watcher_is_no_agent_thread_left_running(tmp_path: Path) -> None:
    # a stdio MCP server (any subprocess asyncio starts) has asyncio's waitpid thread, which
    # may outlive the test by the moment the process takes to be reaped: it runs no agent code
    # and was noted on every such test ("asyncio-waitpid-N (daemon)"; a new-user trial).
    # The watcher's own thread function, on a child of our own (no asyncio transport is left
    # for the garbage collector to finalise later, in another test)
    import subprocess
    from asyncio.unix_events import ThreadedChildWatcher

    release = threading.Event()
    loop = asyncio.new_event_loop()
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)  # fmt: skip
    watcher = ThreadedChildWatcher()
    waiting = threading.Thread(
        target=watcher._do_waitpid,
        name="asyncio-waitpid-0",
        args=(loop, child.pid, lambda *_: None, ()),
        daemon=True,
    )
    watcher._threads[child.pid] = waiting  # as add_child_handler registers it
    try:
        with build_run(settings(), RunSpec(), "t", registry(tmp_path)) as run:
            waiting.start()
            threading.Thread(target=release.wait, name="poller", daemon=True).start()
        assert run.threads_left == ["poller (daemon)"]
    finally:
        release.set()
        assert child.stdin is not None
        child.stdin.close()  # the child ends, and the watcher with it
        waiting.join(10)
        child.wait(10)  # reaped by the watcher already: Popen learns it is gone
        loop.close()


def test_markers_parse_without_pytest() -> None:
    class Mark:
        def __init__(self, name: str, *args: Any, **kwargs: Any) -> None:
            self.name, self.args, self.kwargs = name, args, kwargs

    spec = parse_marks(
        [Mark("chaos", "flaky", seed=3, allow_hosts=["localhost"]), Mark("must_halt", max_steps=5)]
    )
    assert spec is not None
    assert (spec.profile, spec.seed, spec.allow_hosts) == ("flaky", 3, ("localhost",))
    assert spec.halt == Budgets(max_steps=5)
    assert parse_marks([Mark("parametrize", "x", [1])]) is None
    with pytest.raises(ChaosConfigError, match=r"^@pytest.mark.chaos: wall_timeout: must be"):
        parse_marks([Mark("chaos", wall_timeout=-1)])


# -- the watchdog, as a user meets it ----------------------------------------------------------

WATCHED = """
import concurrent.futures
import queue
import threading
import time

import pytest

BEFORE = threading.active_count()  # pytest-xdist runs a thread of its own


@pytest.mark.chaos(wall_timeout=0.4)
def test_blocked_on_a_dead_worker(chaos):
    q = queue.Queue()
    work = chaos.wrap(lambda: 1 / 0, name="work")
    threading.Thread(target=lambda: q.put(work()), name="worker").start()
    while True:  # the worker died: this would wait forever
        try:
            q.get()
        except BaseException:
            pass


@pytest.mark.chaos(wall_timeout=0.4)
def test_spins_without_calling_a_tool(chaos):
    n = 0
    while True:
        try:
            n += 1
        except BaseException:
            pass


@pytest.mark.chaos(wall_timeout=0.4, max_tool_calls=3)
def test_a_thread_swallows_the_budget(chaos):
    tool = chaos.wrap(lambda: "ok", name="t")

    def spin():
        while True:
            try:
                tool()
            except BaseException:
                pass

    t = threading.Thread(target=spin, name="spinner")
    t.start()
    t.join()


def test_later_tests_are_untouched():
    assert threading.active_count() == BEFORE, threading.enumerate()


POOL = []


@pytest.mark.chaos(wall_timeout=0.4)
def test_a_library_pool_made_during_the_run(chaos):
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="libpool")
    POOL.append(pool)  # a lazily built global executor outlives the test
    assert pool.submit(lambda: 1).result() == 1
    while True:
        try:
            time.sleep(0.01)
        except BaseException:
            pass


@pytest.mark.chaos(wall_timeout=0.4)
def test_an_idle_thread_beside_a_spinning_agent(chaos):
    q = queue.SimpleQueue()
    threading.Thread(target=q.get, name="idle-consumer", daemon=True).start()
    while True:
        try:
            time.sleep(0.01)
        except BaseException:
            pass


def test_the_library_pool_still_works():
    assert POOL[0].submit(lambda: 42).result(timeout=5) == 42
    POOL[0].shutdown()
"""


def test_the_watchdog_ends_agents_that_never_stop(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_watched=WATCHED)
    # In a subprocess with a time limit: a watchdog that regresses hangs instead of failing.
    result = pytester.runpytest_subprocess(
        "-p", "no:randomly", "-W", "ignore::DeprecationWarning", timeout=120
    )
    result.assert_outcomes(failed=5, passed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ test_blocked_on_a_dead_worker _*",
            "agentchaos: the test ran 0.4s of real time (chaos_wall_timeout) without finishing: "
            "pytest-agentchaos stopped the agent (agent threads: none)",
            "  used: steps=1 tool_calls=1 *",
            "  the agent's threads when the watchdog stopped it:",
            "    thread MainThread:",
            "      File *test_watched.py*, line *, in test_blocked_on_a_dead_worker",
            "        q.get()",
            "*_ test_spins_without_calling_a_tool _*",
            "agentchaos: the test ran 0.4s of real time (chaos_wall_timeout) without finishing:*",
            "*_ test_a_thread_swallows_the_budget _*",
            "agentchaos: hard budget max_tool_calls=3 exhausted: tool_calls would have reached 4",
            "*Detection(detector='harness', kind='thread_halted', "
            "detail={'thread': 'spinner', 'halt': 'HaltSwallowed'})",
        ]
    )
    # The watchdog's own stack frames and pytest's are not shown.
    assert (
        "_pytest"
        not in result.stdout.str()
        .split("short test summary")[0]
        .split("the agent's threads")[1]
        .split("agentchaos --")[0]
    )


def test_the_last_resort_ends_the_process_and_says_why(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_stuck="""
        import signal
        import threading

        import pytest

        @pytest.mark.chaos(wall_timeout=0.2)
        def test_unstoppable(chaos):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})  # nothing gets in
            threading.Event().wait()
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", timeout=60)
    assert result.ret == 1
    result.stderr.fnmatch_lines(
        [
            "*+ agentchaos watchdog +*",
            "pytest-agentchaos: the agent could not be stopped: test_stuck.py::test_unstoppable "
            "ran 0.2s of real time (chaos_wall_timeout) and ignored the halt for another 2s; "
            "ending the test process, as pytest-timeout's thread method does.",
            "*test_stuck.py*, line *, in test_unstoppable",
        ]
    )


def test_the_last_resort_ends_what_the_unwinder_cannot(pytester: pytest.Pytester) -> None:
    """Catching the halt twice in nested ``try`` blocks of one looping frame defeats the
    unwinder (its documented limit); the watchdog on real time still ends the process."""
    pytester.makepyfile(
        test_nested="""
        import pytest

        @pytest.mark.chaos(wall_timeout=0.3, max_tool_calls=1)
        def test_nested_swallower(chaos):
            tool = chaos.wrap(lambda: "ok", name="t")
            while True:
                try:
                    try:
                        tool()
                    finally:
                        pass
                except BaseException:
                    pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", timeout=60)
    assert result.ret == 1
    result.stderr.fnmatch_lines(
        [
            "pytest-agentchaos: the agent could not be stopped: "
            "test_nested.py::test_nested_swallower ran 0.3s of real time (chaos_wall_timeout) "
            "and ignored the halt for another 2s; ending the test process*",
            "*test_nested.py*, line *, in test_nested_swallower",
        ]
    )


def test_a_refused_request_in_any_thread_halts_the_run(tmp_path: Path) -> None:
    with halting_run(tmp_path, budgets=Budgets()) as run:
        errors: list[BaseException] = []

        def agent_thread() -> None:
            try:
                socket.create_connection(("192.0.2.1", 80), timeout=1)
            except BaseException as exc:
                errors.append(exc)
            try:
                socket.socket().connect(("192.0.2.1", 443))
            except BaseException as exc:
                errors.append(exc)

        t = threading.Thread(target=agent_thread)
        t.start()
        t.join()
        outcome = run.finish(None)
    assert [type(e) for e in errors] == [NetworkBlocked, NetworkBlocked]
    assert [h.detail["via"] for h in run.trace.hard_halts()] == ["getaddrinfo", "socket.connect"]
    assert outcome.message is not None
    assert outcome.message.startswith(
        "pytest-agentchaos: blocked a real network connection to 192.0.2.1:80 (getaddrinfo): a "
        "chaos test may not reach the network;"
    )


def test_the_watchdog_gives_its_signal_back(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGUSR2)
    for _ in range(2):  # a handler left by one run would make the next one skip the signal
        with build_run(settings(wall_timeout=30), RunSpec(), "t", registry(tmp_path)):
            assert signal.getsignal(signal.SIGUSR2) is not before
        assert signal.getsignal(signal.SIGUSR2) is before


def test_a_ctrl_c_during_teardown_does_not_skip_the_other_undos() -> None:
    """A second Ctrl-C while the run is being undone: every other undo still runs."""
    from pytest_agentchaos.inject import Chaos

    chaos = Chaos.create(virtual_sleep=True)
    undone: list[str] = []
    chaos.session.add_cleanup(lambda: undone.append("first registered"))

    def interrupted() -> None:
        raise KeyboardInterrupt

    chaos.session.add_cleanup(interrupted)
    chaos.session.add_cleanup(lambda: undone.append("last registered"))
    with pytest.raises(KeyboardInterrupt):
        chaos.close()
    assert undone == ["last registered", "first registered"]
    assert untouched()  # virtual time was undone too
