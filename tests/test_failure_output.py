"""What a user reads when a chaos test fails: their own code, the fault, the verdict, once.

Also the summary's manners (quiet with -q, every row with -v, in node-id order under
pytest-xdist) and two teardown regressions (virtual sleep in modules imported during a test,
Ctrl-C in an async test).
"""

from __future__ import annotations

import sys

import pytest

PLAIN = ("-p", "no:randomly", "-W", "ignore::DeprecationWarning")


def plugin_frames(text: str) -> list[str]:
    """Traceback lines that point into the plugin's own source."""
    return [line for line in text.splitlines() if "pytest_agentchaos/" in line and ".py:" in line]


def test_an_unhandled_injected_fault_ends_at_the_users_own_call(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        def search(q):
            return [q]

        @pytest.mark.chaos(faults=[{"kind": "timeout", "seconds": 30}])
        def test_agent(chaos):
            tool = chaos.wrap(search)
            tool("flights")  # the agent does not handle the timeout
        """
    )
    result = pytester.runpytest(*PLAIN)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert plugin_frames(out) == []
    result.stdout.fnmatch_lines(
        [
            '>       tool("flights")  # the agent does not handle the timeout',
            "E       pytest_agentchaos.inject.errors.InjectedTimeout: search timed out after 30s",
            *(
                [
                    "E       injected by pytest-agentchaos: fault 'timeout' (faults[[]0[]] of the "
                    "plan) on call 1 of 'search', step 1"
                ]
                if sys.version_info >= (3, 11)
                else []
            ),
            "test_agent.py:9: InjectedTimeout",
        ]
    )


def test_a_failing_verdict_is_explained_whatever_ended_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        @pytest.mark.must_escape(require_loop=True)
        def test_agent(chaos):
            chaos.step("plan")
            raise RuntimeError("the agent crashed on its own")
        """
    )
    result = pytester.runpytest(*PLAIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E       RuntimeError: the agent crashed on its own",
            "*- agentchaos -*",
            "the run ended * step 1 *",
            "must_escape failed: nothing to escape: no loop arose in this run (0 faults fired; "
            "the run ended error at step 1, t=0.000s). Inject faults that trap the agent, or "
            "pass require_loop=False.",
            "profile=none test seed=* faults fired=0 budgets=none",
            "replay: pytest test_agent.py::test_agent --chaos-seed=*",
        ]
    )


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.TaskGroup is 3.11+")
def test_a_budget_stop_inside_a_task_group_is_explained_as_the_budget(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_agent="""
        import asyncio
        import pytest

        @pytest.mark.asyncio
        @pytest.mark.chaos(max_tool_calls=5)
        async def test_agent(chaos):
            async def fetch(i):
                return i

            tool = chaos.wrap(fetch)

            async def worker(n):
                for i in range(100):
                    await tool(i)
                    await asyncio.sleep(0)

            async with asyncio.TaskGroup() as group:
                for n in range(3):
                    group.create_task(worker(n))
        """
    )
    result = pytester.runpytest(*PLAIN)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*_ test_agent _*",
            "agentchaos: hard budget max_tool_calls=5 exhausted: tool_calls would have reached 6",
            "  used: steps=5 tool_calls=5 *",
            "*- agentchaos -*",
        ]
    )
    assert "ExceptionGroup" not in out.split("- agentchaos -")[0]
    failure = out.split("= FAILURES =")[1].split("- agentchaos -")[0]
    shown = [
        line for line in failure.splitlines() if line.strip("=_- ") and "test_agent" not in line
    ]
    assert len(shown) == 2  # the budget and what was used, not a 237-line exception group


def test_each_line_of_a_failure_is_shown_once(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        @pytest.mark.must_halt(max_steps=3)
        def test_runaway(chaos):
            while True:
                chaos.step("think")
        """
    )
    result = pytester.runpytest(*PLAIN)
    result.assert_outcomes(failed=1)
    lines = result.stdout.lines
    assert sum(line.startswith("replay: pytest ") for line in lines) == 1
    assert sum("Step(label='think')" in line for line in lines) == 3
    assert sum(line.startswith("must_halt failed:") for line in lines) == 1


SUITE = """
import pytest

@pytest.mark.chaos("flaky", seed=1)
def test_{name}_ok(chaos):
    chaos.step()

@pytest.mark.chaos("outage")
def test_{name}_broken(chaos):
    chaos.wrap(lambda: 1, name="t")()
"""


def test_quiet_runs_show_totals_and_failures_only(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_b=SUITE.format(name="b"), test_a=SUITE.format(name="a"))
    quiet = pytester.runpytest("-q", *PLAIN)
    quiet.assert_outcomes(passed=2, failed=2)
    summary = quiet.stdout.str().split("agentchaos: 4 chaos tests")[1].splitlines()
    assert not any(line.startswith("PASSED ") for line in summary)
    quiet.stdout.fnmatch_lines(
        [
            "FAILED  test_a.py::test_a_broken  profile=outage *",
            "FAILED  test_b.py::test_b_broken  profile=outage *",
            "profile=flaky: 2 chaos tests (2 passed); survived 2/2; faults fired: none; "
            "halted by the harness: 0",
            "profile=outage: 2 chaos tests (2 failed); survived 0/2; faults fired: http_error:2; "
            "halted by the harness: 0",
        ]
    )
    verbose = pytester.runpytest("-v", *PLAIN)
    verbose.stdout.fnmatch_lines(
        [
            "FAILED  test_a.py::test_a_broken  *",
            "PASSED  test_a.py::test_a_ok  *",
            "FAILED  test_b.py::test_b_broken  *",
            "PASSED  test_b.py::test_b_ok  *",
        ]
    )


def test_rows_are_in_node_id_order_under_xdist(pytester: pytest.Pytester) -> None:
    for name in "dcba":
        pytester.makepyfile(**{f"test_{name}": SUITE.format(name=name)})
    result = pytester.runpytest_subprocess("-v", "-n", "2", "-p", "xdist", *PLAIN, timeout=120)
    result.assert_outcomes(passed=4, failed=4)
    rows = [
        line.split()[1] for line in result.stdout.lines if line.startswith(("PASSED  ", "FAILED  "))
    ]
    assert rows == sorted(rows) and len(rows) == 8


def test_a_fault_glob_that_matches_no_call_is_reported(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        @pytest.mark.chaos(faults=[{"kind": "timeout", "tools": ["serach"]}])
        def test_agent(chaos):
            chaos.wrap(lambda q: [q], name="search")("x")
        """
    )
    result = pytester.runpytest("-q", *PLAIN)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "note: test_agent.py::test_agent: fault #0 (timeout, tools=[[]'serach'[]]) matched "
            "none of the calls: 'search'"
        ]
    )


def test_virtual_sleep_does_not_stay_in_modules_imported_during_the_test(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        late_agent="""
        from time import sleep
        from asyncio import sleep as asleep
        """
    )
    pytester.makepyfile(
        test_agent="""
        import asyncio
        import sys
        import time

        import pytest

        @pytest.mark.chaos(virtual_sleep=True)
        def test_imports_an_agent(chaos):
            import late_agent  # first imported while sleep is virtual

            late_agent.sleep(3600)  # virtual: no wall time
            assert chaos.clock.now() == 3600

        def test_later():
            late_agent = sys.modules["late_agent"]
            assert late_agent.sleep is time.sleep
            assert late_agent.asleep is asyncio.sleep
        """
    )
    pytester.runpytest(*PLAIN).assert_outcomes(passed=2)


def test_ctrl_c_in_an_async_chaos_test_still_undoes_the_run(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import datetime
        import signal
        import socket
        import sys
        import time

        # a Ctrl-C reaches Python as from a terminal even when this suite was started in the
        # background, where the shell left SIGINT ignored (and ignored, the run never ends)
        signal.signal(signal.SIGINT, signal.default_int_handler)

        REAL = (time.time, time.sleep, socket.getaddrinfo, datetime.datetime)

        def pytest_unconfigure(config):
            now = (time.time, time.sleep, socket.getaddrinfo, datetime.datetime)
            sys.stderr.write(f"RESTORED={all(a is b for a, b in zip(REAL, now))}\\n")
        """
    )
    pytester.makepyfile(
        test_agent="""
        import asyncio
        import os
        import signal
        import threading

        import pytest

        @pytest.mark.asyncio
        @pytest.mark.chaos(virtual_sleep=True)
        async def test_interrupted(chaos):
            threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
            while True:
                await asyncio.sleep(1)
        """
    )
    result = pytester.runpytest_subprocess(*PLAIN, timeout=240)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stderr.fnmatch_lines(["RESTORED=True"])
