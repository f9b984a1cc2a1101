"""Budgets through the plugin: a runaway agent is stopped, the test fails with a message that
says which budget, where and how to replay; must_halt passes when the agent stops in time."""

from __future__ import annotations

import textwrap

import hypothesis.internal.observability  # noqa: F401
import pytest

# An in-process run unloads every module it imported when it ends, and hypothesis's plugin
# imports hypothesis at each terminal summary: importing it here (above) keeps each run fast.

# Runaway loops below are bounded (1000 rounds) only so that a broken budget fails the test
# instead of hanging the suite; to the harness they are endless.


@pytest.fixture(autouse=True)
def _ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


def test_runaway_agent_is_stopped_by_must_halt(pytester):
    pytester.makepyfile(
        test_agent="""
        import pytest

        @pytest.mark.must_halt(max_steps=10)
        def test_runaway(chaos):
            def search():
                raise ValueError("backend down")

            tool = chaos.wrap(search)
            for _ in range(1000):
                try:
                    tool()
                except Exception:
                    pass
            print("AGENT FINISHED")
        """
    )
    result = pytester.runpytest("--chaos-seed=7")
    result.assert_outcomes(failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "must_halt failed: the agent did not halt on its own within its budget",
            "  - hard budget max_steps=10 stopped it at step 10, t=0.000s "
            "(steps would have reached 11)",
            "  limits: max_steps=10",
            "  used:   steps=10 tool_calls=10 model_calls=0 virtual_seconds=0 tokens=0",
            "replay: pytest test_agent.py::test_runaway --chaos-seed=7",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "FAILED  test_agent.py::test_runaway  *tool_calls=10 *steps=10 *"
            "verdict=must_halt=FAIL,halted:max_steps"
        ]
    )
    result.stdout.no_fnmatch_line("AGENT FINISHED")


def test_must_halt_passes_when_the_agent_stops_within_its_limits(pytester):
    pytester.makepyfile(
        test_agent="""
        import pytest

        @pytest.mark.chaos(faults=[{"kind": "http_error", "status": 503, "first": 2}])
        @pytest.mark.must_halt(max_steps=10, max_tool_calls=5, max_seconds=60)
        def test_retries_then_stops(chaos):
            tool = chaos.wrap(lambda: "ok", name="search")
            for attempt in range(5):
                try:
                    assert tool() == "ok"
                    break
                except Exception:
                    chaos.clock.sleep(2 ** attempt)
            chaos.step("answer")
        """
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "PASSED  *::test_retries_then_stops  *faults=http_error:2 tool_calls=3 model_calls=0 "
            "steps=4 vtime=3.0s verdict=must_halt=ok"
        ]
    )


def test_must_halt_steps_count_chaos_step(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.must_halt(max_steps=3)
        def test_thinks_too_long(chaos):
            for i in range(1000):
                chaos.step(f"think {i}")
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["  - hard budget max_steps=3 stopped it at step 3, *(steps would have reached 4)"]
    )


def test_profile_budget_stops_the_agent(pytester):
    (pytester.path / "chaos_profiles").mkdir()
    (pytester.path / "chaos_profiles" / "tight.toml").write_text(
        textwrap.dedent(
            """
            description = "three tool calls, no more"
            [budgets]
            max_tool_calls = 3
            """
        )
    )
    pytester.makepyfile(
        test_agent="""
        def test_agent(chaos):
            tool = chaos.wrap(lambda city: {"city": city, "temp": 20}, name="weather")
            for _ in range(1000):
                try:
                    tool("Oslo")
                except Exception:
                    pass
        """
    )
    result = pytester.runpytest("--chaos-profile=tight", "--chaos-seed=3")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "agentchaos: hard budget max_tool_calls=3 exhausted: tool_calls would have reached 4",
            "  used: steps=3 tool_calls=3 model_calls=0 virtual_seconds=0 tokens=0",
            "*- agentchaos -*",
            "replay: pytest test_agent.py::test_agent --chaos-seed=3 --chaos-profile=tight",
            "last 9 of 9 trace events:",
            "  #3 *ToolCall(tool='weather', index=3, args={'city': 'Oslo'}, channel='tool')",
            "  #3 *ToolResult(tool='weather', index=3, ok=True, "
            "output={'city': 'Oslo', 'temp': 20}, channel='tool')",
            "  #3 *BudgetExhausted(budget='max_tool_calls', limit=3, count=4)",
        ]
    )
    # the replay command and the events are shown once, in the agentchaos section
    assert sum(line.startswith("replay: ") for line in result.stdout.lines) == 1
    assert sum("ToolCall(tool='weather', index=3" in line for line in result.stdout.lines) == 1
    result.stdout.fnmatch_lines(
        ["FAILED  *::test_agent  profile=tight *verdict=halted:max_tool_calls"]
    )


def test_max_seconds_is_virtual_time(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.chaos(max_seconds=100, faults=[{"kind": "timeout", "seconds": 30}])
        def test_slow_backend(chaos):
            tool = chaos.wrap(lambda: "ok", name="slow")
            for _ in range(1000):
                try:
                    tool()
                except TimeoutError:
                    pass
        """
    )
    # four 30 s timeouts = 120 virtual seconds; a real wait would take two minutes
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "agentchaos: hard budget max_seconds=100 exhausted: seconds would have reached 120",
            "  used: steps=4 tool_calls=4 model_calls=0 virtual_seconds=120 tokens=0",
            "last 15 of 15 trace events:",
            "  #4 *t=   90.000s ToolCall(tool='slow', index=4, channel='tool')",
            "  #4 *t=   90.000s FaultInjected(kind='timeout', *",
            "  #4 *t=  120.000s BudgetExhausted(budget='max_seconds', limit=100.0, count=120.0)",
            # the call the budget ended has its end too (issue 26)
            "  #4 *t=  120.000s ToolResult(tool='slow', index=4, ok=False, "
            "error_type='BudgetExhausted', *",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "FAILED  *::test_slow_backend  *faults=timeout:4 tool_calls=4 "
            "*vtime=120.0s verdict=halted:max_seconds"
        ]
    )


def test_agent_that_catches_base_exception_still_fails(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.chaos(max_tool_calls=2)
        def test_swallows_everything(chaos):
            tool = chaos.wrap(lambda: "ok", name="search")
            while True:  # spun forever before the harness unwound swallowing agents
                try:
                    tool()
                except BaseException:
                    pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "agentchaos: hard budget max_tool_calls=2 exhausted: tool_calls would have reached 3",
            "*(the agent caught BudgetExhausted and carried on; pytest-agentchaos raised it "
            "again in the agent's code until it reached the test: hard halts derive from "
            "BaseException precisely so that `except Exception` cannot hold them)",
            "replay: pytest *::test_swallows_everything --chaos-seed=*",
        ]
    )


def test_agent_that_catches_base_exception_fails_must_halt(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.must_halt(max_tool_calls=2)
        def test_swallows_everything(chaos):
            tool = chaos.wrap(lambda: "ok", name="search")
            for _ in range(1000):
                try:
                    tool()
                except BaseException:
                    pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["must_halt failed: *", "  - hard budget max_tool_calls=2 stopped it at step 2, *"]
    )


def test_max_tokens_counts_model_usage(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.chaos(max_tokens=100)
        def test_chatty(chaos):
            model = chaos.model(lambda prompt: {"text": "hmm", "usage": {"total_tokens": 40}})
            for _ in range(1000):
                model("think harder")

        @pytest.mark.chaos(max_tokens=100)
        def test_brief(chaos):
            model = chaos.model(lambda prompt: {"text": "done", "usage": {"total_tokens": 40}})
            assert model("answer")["text"] == "done"
            assert model("answer")["text"] == "done"
        """
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "agentchaos: hard budget max_tokens=100 exhausted: tokens would have reached 120",
            "  used: steps=3 tool_calls=0 model_calls=3 virtual_seconds=0 tokens=120",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            # rows sorted by node id
            "PASSED  *::test_brief  *model_calls=2 steps=2 *verdict=-",
            "FAILED  *::test_chatty  *model_calls=3 steps=3 *verdict=halted:max_tokens",
        ]
    )


def test_must_halt_max_tokens(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.must_halt(max_tokens=100)
        def test_chatty(chaos):
            model = chaos.model(lambda prompt: {"usage": {"total_tokens": 40}}, name="llm")
            for _ in range(1000):
                model("again")
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "must_halt failed: *",
            "  - hard budget max_tokens=100 stopped it at step 3, *(tokens would have reached 120)",
            "  limits: max_tokens=100",
        ]
    )
