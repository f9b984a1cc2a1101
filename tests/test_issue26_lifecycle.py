"""A run's lifecycle (issue 26): the trace says why a run ended; nothing a run patches is left
installed whatever the fixture order or an interruption; every call has its end in the trace
for any ``BaseException``; an interrupted test is in ``index.json`` as interrupted."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from pytest_agentchaos.harness import RunSpec, SessionSettings, build_run
from pytest_agentchaos.harness.cause import error_detail, is_users_file
from pytest_agentchaos.inject import Chaos
from pytest_agentchaos.inject.intercept import Interceptor
from pytest_agentchaos.profiles import Budgets, ProfileRegistry
from pytest_agentchaos.trace.events import RunEnded

INTERRUPTED = pytest.ExitCode.INTERRUPTED


def index_of(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / "index.json").read_text(encoding="utf-8"))
    return data


def outcomes(directory: Path) -> dict[str, str]:
    return {t["node_id"]: t["outcome"] for t in index_of(directory)["tests"]}


def run_ended(report_dir: Path, node_id: str) -> dict[str, Any]:
    """The ``RunEnded`` event of ``node_id``'s trace in a report dir."""
    (entry,) = [t for t in index_of(report_dir)["tests"] if t["node_id"] == node_id]
    trace = json.loads((report_dir / entry["trace"]).read_text(encoding="utf-8"))
    (ended,) = [e for e in trace["events"] if e["type"] == "RunEnded"]
    return dict(ended)


# -- why a run ended ---------------------------------------------------------------------------

WHY = """
import json
import pytest

def parse(text):
    return json.loads(text)          # PARSE: the stdlib raises below this line

def check(chaos, value):
    tool = chaos.wrap(lambda: value, name="tool")
    assert tool() == 2, "the tool said " + str(tool())   # CHECK

def test_assert_in_a_helper(chaos):
    check(chaos, 1)

def test_error_in_the_stdlib(chaos):
    parse("{not json")

def test_long_message(chaos):
    raise ValueError("x" * 2000)

def test_fine(chaos):
    pass

def test_pytest_fail(chaos):
    pytest.fail("told to fail")      # FAIL

def test_system_exit(chaos):
    raise SystemExit(3)              # EXIT

def test_bare_assert_of_a_long_value(chaos):
    values = list(range(300))
    assert not values

def test_bare_assert_of_short_values(chaos):
    x = 1
    assert x == 2
"""


def line_of(source: str, marker: str) -> int:
    """The line number of ``marker`` in ``source`` as pytester writes it (dedented, stripped)."""
    lines = source.strip("\n").splitlines()
    return next(i for i, line in enumerate(lines, 1) if marker in line)


def test_run_ended_says_why_the_run_ended(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_why=WHY)
    result = pytester.runpytest("--chaos-report-dir=out")
    result.assert_outcomes(failed=7, passed=1)
    out = pytester.path / "out"
    ended = run_ended(out, "test_why.py::test_assert_in_a_helper")
    assert ended["status"] == "error"
    error = ended["detail"]["error"]
    assert error["type"] == "AssertionError"
    assert error["message"] == "the tool said 1"  # not pytest's explanation: it depends on -v
    # the deepest frame of the user's own code
    assert error["where"] == f"test_why.py:{line_of(WHY, '# CHECK')} in check"
    error = run_ended(out, "test_why.py::test_error_in_the_stdlib")["detail"]["error"]
    assert error["type"] == "JSONDecodeError"
    assert error["message"].startswith("Expecting property name enclosed in double quotes")
    assert error["where"] == f"test_why.py:{line_of(WHY, '# PARSE')} in parse"  # not json's
    error = run_ended(out, "test_why.py::test_long_message")["detail"]["error"]
    assert len(error["message"]) == 500 and error["message"].endswith("...")
    assert run_ended(out, "test_why.py::test_fine") == {
        **run_ended(out, "test_why.py::test_fine"),
        "status": "completed",
        "detail": {},
    }
    error = run_ended(out, "test_why.py::test_pytest_fail")["detail"]["error"]
    assert error == {
        "type": "Failed",
        "message": "told to fail",
        "where": f"test_why.py:{line_of(WHY, '# FAIL')} in test_pytest_fail",
    }
    ended = run_ended(out, "test_why.py::test_system_exit")
    assert ended["status"] == "error"  # pytest fails the test: not an interruption
    assert ended["detail"]["error"] == {
        "type": "SystemExit",
        "message": "3",
        "where": f"test_why.py:{line_of(WHY, '# EXIT')} in test_system_exit",
    }
    # a bare assert: its statement (pytest's explanation shows more or less under -v)
    error = run_ended(out, "test_why.py::test_bare_assert_of_a_long_value")["detail"]["error"]
    assert error["message"] == "assert not values"
    error = run_ended(out, "test_why.py::test_bare_assert_of_short_values")["detail"]["error"]
    assert error["message"] == "assert x == 2"
    # and the same under -v, whose explanations show more: a replay records the same end
    verbose = pytester.runpytest("--chaos-report-dir=out-v", "-vv")
    verbose.assert_outcomes(failed=7, passed=1)
    for name in outcomes(out):
        assert run_ended(pytester.path / "out-v", name) == run_ended(out, name)


def test_a_halt_names_the_users_line_not_the_plugins(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_budget="""
        import pytest

        @pytest.mark.chaos(max_tool_calls=1)
        def test_budget(chaos):
            tool = chaos.wrap(lambda: 1, name="tool")
            tool()
            tool()  # line 7
        """
    )
    pytester.runpytest("--chaos-report-dir=out").assert_outcomes(failed=1)
    ended = run_ended(pytester.path / "out", "test_budget.py::test_budget")
    assert ended["status"] == "halted"
    assert ended["detail"]["error"]["type"] == "BudgetExhausted"
    assert ended["detail"]["error"]["where"] == "test_budget.py:7 in test_budget"


def test_no_where_without_a_frame_of_the_users_code(tmp_path: Path) -> None:
    assert error_detail(ValueError("made, never raised")) == {
        "type": "ValueError",
        "message": "made, never raised",
    }
    try:
        json.loads("{")
    except ValueError as exc:
        exc.__traceback__ = exc.__traceback__.tb_next if exc.__traceback__ else None
        assert "where" not in error_detail(exc)  # only json's own frames are left
    assert not is_users_file(json.__file__)
    assert not is_users_file(pytest.__file__)
    assert not is_users_file("<string>")
    assert is_users_file(__file__)
    with build_run(SessionSettings(seed=1, wall_timeout=0), RunSpec(), "t", registry()) as run:
        run.finish(RuntimeError("no traceback"))
    (ended,) = run.trace.of_type(RunEnded)
    assert ended.status == "error"
    assert ended.detail == {"error": {"type": "RuntimeError", "message": "no traceback"}}


def registry() -> ProfileRegistry:
    return ProfileRegistry.default(None)


def test_an_unprintable_error_is_still_recorded(tmp_path: Path) -> None:
    class Hostile(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    detail = error_detail(Hostile())
    assert detail["type"] == "Hostile"
    assert detail["message"].startswith("<")


# -- interruptions -------------------------------------------------------------------------------

LEAK_CHECK = """
import asyncio, datetime, socket, time

REAL = (time.time, time.sleep, asyncio.sleep, socket.getaddrinfo, socket.socket.connect,
        datetime.datetime)

def installed():
    now = (time.time, time.sleep, asyncio.sleep, socket.getaddrinfo, socket.socket.connect,
           datetime.datetime)
    return [r.__name__ for r, n in zip(REAL, now) if r is not n]

def pytest_sessionfinish(session):
    print("\\nLEFT INSTALLED at the session's end:", installed())
"""


def test_a_ctrl_c_in_a_chaos_test(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(LEAK_CHECK)
    pytester.makeini("[pytest]\nchaos_virtual_sleep = true\nchaos_report_dir = out\n")
    pytester.makepyfile(
        test_interrupted="""
        import time

        def test_first(chaos):
            pass

        def test_interrupted(chaos):
            time.sleep(5)
            raise KeyboardInterrupt

        def test_never_run(chaos):
            pass
        """
    )
    result = pytester.runpytest_inprocess("-s", no_reraise_ctrlc=True)
    assert result.ret == INTERRUPTED
    result.stdout.fnmatch_lines(["LEFT INSTALLED at the session's end: []"])
    out = pytester.path / "out"
    assert outcomes(out) == {
        "test_interrupted.py::test_first": "passed",
        "test_interrupted.py::test_interrupted": "interrupted",
    }
    ended = run_ended(out, "test_interrupted.py::test_interrupted")
    assert ended["status"] == "interrupted"
    assert ended["t"] == 5.0
    assert ended["detail"]["error"] == {
        "type": "KeyboardInterrupt",
        "message": "",
        "where": "test_interrupted.py:8 in test_interrupted",
    }


def test_pytest_exit_in_a_chaos_test_is_an_interruption(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(LEAK_CHECK)
    pytester.makeini("[pytest]\nchaos_virtual_sleep = true\nchaos_report_dir = out\n")
    pytester.makepyfile(
        test_exit="""
        import pytest

        def test_stops_the_session(chaos):
            pytest.exit("enough")
        """
    )
    result = pytester.runpytest_inprocess("-s", no_reraise_ctrlc=True)
    assert result.ret == INTERRUPTED
    result.stdout.fnmatch_lines(["LEFT INSTALLED at the session's end: []"])
    out = pytester.path / "out"
    assert outcomes(out) == {"test_exit.py::test_stops_the_session": "interrupted"}
    (entry,) = index_of(out)["tests"]
    ended = run_ended(out, entry["node_id"])
    assert ended["status"] == "interrupted"
    assert ended["detail"]["error"]["type"] == "Exit"


@pytest.mark.parametrize("where", ["fixture", "chaos-last"])
def test_a_ctrl_c_in_a_fixtures_teardown(pytester: pytest.Pytester, where: str) -> None:
    pytester.makeconftest(LEAK_CHECK)
    pytester.makeini("[pytest]\nchaos_virtual_sleep = true\nchaos_report_dir = out\n")
    args = "agent" if where == "fixture" else "agent, chaos"
    pytester.makepyfile(
        test_teardown=f"""
        import pytest

        @pytest.fixture
        def agent(chaos):
            yield chaos.wrap(lambda: 1, name="tool")
            raise KeyboardInterrupt

        def test_one({args}):
            assert agent() == 1

        def test_two(chaos):
            pass
        """
    )
    result = pytester.runpytest_inprocess("-s", no_reraise_ctrlc=True)
    assert result.ret == INTERRUPTED
    result.stdout.fnmatch_lines(["LEFT INSTALLED at the session's end: []"])
    out = pytester.path / "out"
    name = "test_teardown.py::test_one"
    assert outcomes(out) == {name: "interrupted"}
    ended = run_ended(out, name)  # the trace was written too
    assert ended["status"] == "completed"  # the test itself had ended well
    assert len(list((out / "traces").iterdir())) == 1


# -- fixture order: monkeypatch and friends --------------------------------------------------------

STUBS = {
    "time.sleep": ("time", "time", "sleep", "lambda s: None"),
    "asyncio.sleep": ("asyncio", "asyncio", "sleep", "lambda *a: None"),
    "socket.getaddrinfo": ("socket", "socket", "getaddrinfo", "lambda *a, **k: []"),
    "socket.socket.connect": ("socket", "socket.socket", "connect", "lambda *a: None"),
}

ORDERS = {
    # monkeypatch set up before chaos: torn down after it, it puts back what it replaced: ours
    "monkeypatch-first": "def test_stub(monkeypatch, chaos):\n    {patch}\n",
    "chaos-first": "def test_stub(chaos, monkeypatch):\n    {patch}\n",
    # a fixture of the user's set up before chaos, that patches while the run is installed
    "in-a-fixture": (
        "@pytest.fixture\ndef stubbed(monkeypatch):\n    yield monkeypatch\n\n"
        "def test_stub(stubbed, chaos):\n    monkeypatch = stubbed\n    {patch}\n"
    ),
    # patched before the run installs: the run's own original is the stub
    "before-the-run": (
        "@pytest.fixture\ndef stubbed(monkeypatch):\n    {patch}\n\n"
        "def test_stub(stubbed, chaos):\n    pass\n"
    ),
}


@pytest.mark.parametrize("order", list(ORDERS))
@pytest.mark.parametrize("name", list(STUBS))
def test_a_stub_of_the_tests_leaves_nothing_installed(
    pytester: pytest.Pytester, name: str, order: str
) -> None:
    module, owner, attr, stub = STUBS[name]
    patch = f"monkeypatch.setattr({owner}, {attr!r}, {stub})"
    body = ORDERS[order].format(patch=patch)
    pytester.makeini("[pytest]\nchaos_virtual_sleep = true\n")
    pytester.makepyfile(
        f"""
        import asyncio, socket, time
        import pytest

        REAL = ({owner}.{attr},)  # in a tuple: a run rebinds every global bound to sleep

        {body.replace(chr(10), chr(10) + " " * 8)}

        def test_later_tests_see_the_real_one():
            assert {owner}.{attr} is REAL[0]

        def test_and_after_another_chaos_test(chaos):
            pass

        def test_still_real():
            assert {owner}.{attr} is REAL[0]
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=4)
    # (and the suite's own guard checks this process after the in-process run)


def test_a_module_that_bound_sleep_by_name_is_restored_too(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        helper="from time import sleep\n",
        test_bound="""
        import time
        import helper
        import pytest

        REAL = (time.sleep,)  # in a tuple: a run rebinds every global bound to sleep

        @pytest.mark.chaos(virtual_sleep=True)
        def test_stub(monkeypatch, chaos):
            assert helper.sleep is not REAL[0]  # virtual in the run
            monkeypatch.setattr(helper, "sleep", lambda s: None)

        def test_later():
            assert helper.sleep is REAL[0] and time.sleep is REAL[0]
        """,
    )
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=2)


# -- every call has its end ----------------------------------------------------------------------


class Custom(BaseException):
    """A tool's own BaseException (not an Exception)."""


ENDS = [SystemExit(2), GeneratorExit(), Custom("mine"), KeyboardInterrupt()]


def results(chaos: Chaos) -> list[tuple[bool, str | None]]:
    return [(r.ok, r.error_type) for r in chaos.trace.tool_results()] + [
        (r.ok, r.error_type) for r in chaos.trace.model_results()
    ]


@pytest.mark.parametrize("end", ENDS, ids=lambda e: type(e).__name__)
def test_a_sync_tool_ending_in_any_base_exception_has_its_result(end: BaseException) -> None:
    def tool() -> None:
        raise end

    with Chaos.create() as chaos:
        wrapped = chaos.wrap(tool)
        with pytest.raises(type(end)):
            wrapped()
        model = chaos.model(tool, name="m")
        with pytest.raises(type(end)):
            model()
    assert results(chaos) == [(False, type(end).__name__)] * 2


@pytest.mark.parametrize("end", ENDS, ids=lambda e: type(e).__name__)
def test_an_async_tool_ending_in_any_base_exception_has_its_result(end: BaseException) -> None:
    async def tool() -> None:
        raise end

    with Chaos.create() as chaos:
        wrapped = chaos.wrap(tool)
        model = chaos.model(tool, name="m")

        async def main() -> None:
            with pytest.raises(type(end)):
                await wrapped()
            with pytest.raises(type(end)):
                await model()

        asyncio.run(main())
    assert results(chaos) == [(False, type(end).__name__)] * 2


@pytest.mark.parametrize("end", ENDS, ids=lambda e: type(e).__name__)
def test_a_faulted_call_ending_in_any_base_exception_has_its_result(end: BaseException) -> None:
    def tool() -> None:
        raise end

    latency = [{"kind": "latency", "seconds": 2, "tools": ["*"]}]
    with Chaos.create(faults=latency) as chaos:
        with pytest.raises(type(end)):
            chaos.wrap(tool)()
        with pytest.raises(type(end)):
            chaos.model(tool, name="m")()
        core = Interceptor(chaos.session, "framework-tool")
        with pytest.raises(type(end)):
            core.call({}, lambda mapping: tool())
    assert results(chaos) == [(False, type(end).__name__)] * 3
    assert len(chaos.trace.faults()) == 3


def test_a_budget_that_ends_a_delay_is_the_calls_end() -> None:
    slow = [{"kind": "latency", "seconds": 30, "tools": ["*"]}]
    chaos = Chaos.create(faults=slow, budgets=Budgets(max_seconds=10))
    with chaos, pytest.raises(BaseException, match="max_seconds"):
        chaos.wrap(lambda: 1, name="slow")()
    ((ok, error),) = results(chaos)
    assert not ok and error == "BudgetExhausted"


# -- a replay never touches the report it replays -------------------------------------------------

SESSION = """
import pytest

@pytest.mark.chaos(faults=[{"kind": "timeout", "tools": ["search"], "probability": 0.5}])
@pytest.mark.parametrize("n", range(8))
def test_agent(chaos, n):
    search = chaos.wrap(lambda q: q, name="search")
    for q in range(4):
        try:
            search(q)
        except TimeoutError:
            pass
    assert n not in (2, 5)

def test_plain():
    pass
"""


def replay_lines(result: pytest.RunResult) -> list[str]:
    return sorted(set(re.findall(r"pytest '?\S+'? --chaos-seed=\d+", result.stdout.str())))


def run_line(pytester: pytest.Pytester, line: str, *more: str) -> pytest.RunResult:
    return pytester.runpytest(*shlex.split(line)[1:], *more)


def test_the_printed_replay_command_writes_its_own_report(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\nchaos_report_dir = report\nchaos_baseline = baseline.json\n"
        "addopts = --chaos-html=report.html\n"
    )
    pytester.makepyfile(test_agent=SESSION)
    recorded = pytester.runpytest("-p", "no:randomly", "--chaos-baseline-save")
    report = pytester.path / "report"
    files = [
        *report.rglob("*.json"),
        pytester.path / "baseline.json",
        pytester.path / "report.html",
    ]
    before = {p: p.read_bytes() for p in files}
    runs = outcomes(report)
    assert len(runs) == 8 and "failed" in runs.values() and "passed" in runs.values()
    lines = replay_lines(recorded)
    assert lines, recorded.stdout.str()
    replay = run_line(pytester, lines[0])
    replay.assert_outcomes(failed=1)
    # the recording is left as it was: its index has its 8 runs, its traces, its HTML report
    # and the baseline are unchanged
    assert {p: p.read_bytes() for p in before} == before
    own = report / "replay"
    replay.stdout.fnmatch_lines(
        [
            f"agentchaos: this session ran 1 of the 8 runs recorded in {report / 'index.json'} "
            f"again under their seed: its report is in {own}; the recording is left as it was",
        ]
    )
    replay.stdout.fnmatch_lines(
        [
            "*no regressions against baseline * (1 case compared)",
            "not run, not compared (7): *",  # the baseline's other cases
            f"agentchaos: HTML report: {own / 'report.html'}",
        ]
    )
    (entry,) = index_of(own)["tests"]
    assert (own / entry["trace"]).is_file() and entry["trace"].startswith("traces/")
    # and a later replay of the recording still has every recorded run
    again = pytester.runpytest("--chaos-replay=report")
    failed = list(runs.values()).count("failed")
    again.assert_outcomes(failed=failed, passed=len(runs) - failed, deselected=1)
    assert outcomes(report) == runs


def test_a_session_that_runs_every_recorded_run_again_replaces_the_report(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nchaos_report_dir = report\n")
    pytester.makepyfile(test_agent=SESSION)
    pytester.runpytest("-p", "no:randomly", "--chaos-seed=3")
    report = pytester.path / "report"
    first = index_of(report)
    # the same seed, every run again: the report is this session's (in place)
    pytester.runpytest("-p", "no:randomly", "--chaos-seed=3")
    assert index_of(report)["tests"] == first["tests"]
    assert not (report / "replay").exists()
    # another seed is another session: it replaces the report, as any new session does
    pytester.runpytest("-p", "no:randomly", "--chaos-seed=4", "-k", "test_agent and 1")
    assert index_of(report)["session_seed"] == 4 and len(index_of(report)["tests"]) == 1
    assert not (report / "replay").exists()


def test_a_corrupt_recording_is_replaced_as_before(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nchaos_report_dir = report\n")
    pytester.makepyfile(test_agent=SESSION)
    (pytester.path / "report").mkdir()
    (pytester.path / "report" / "index.json").write_text("[" * 100_000)
    result = pytester.runpytest("-p", "no:randomly", "--chaos-seed=3", "-k", "test_plain")
    result.assert_outcomes(passed=1, deselected=8)
    assert index_of(pytester.path / "report")["tests"] == []


def test_the_printed_replay_command_under_xdist(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nchaos_report_dir = report\n")
    pytester.makepyfile(test_agent=SESSION)
    recorded = pytester.runpytest_subprocess("-p", "xdist", "-n", "2", "--chaos-seed=9")
    report = pytester.path / "report"
    runs = outcomes(report)
    line = replay_lines(recorded)[0]
    replay = pytester.runpytest_subprocess("-p", "xdist", "-n", "2", *shlex.split(line)[1:])
    replay.assert_outcomes(failed=1)
    assert outcomes(report) == runs
    replay.stdout.fnmatch_lines(["agentchaos: this session ran 1 of the 8 runs recorded in *"])
    (entry,) = index_of(report / "replay")["tests"]
    assert (report / "replay" / entry["trace"]).is_file()


def test_a_recorded_trace_nested_too_deep_fails_its_test_in_one_line(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_x="def test_x(chaos):\n    pass\n")
    (pytester.path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    entry = {"node_id": "test_x.py::test_x", "trace": "deep.json"}
    index = {"format": 1, "session_seed": 1, "tests": [entry]}
    (pytester.path / "index.json").write_text(json.dumps(index))
    result = pytester.runpytest("--chaos-replay=index.json")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            f"pytest-agentchaos: --chaos-replay: {pytester.path / 'deep.json'}: nested too "
            "deeply to be a recording"
        ]
    )
    assert "RecursionError" not in result.stdout.str()
