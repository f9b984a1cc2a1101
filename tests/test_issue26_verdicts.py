"""Verdicts judge what happened, and say it (issue 26): a third outcome, *not exercised*; every
verdict says first what ended the run; ``must_halt`` never blames an agent for the test's own
error; ``must_repair`` judges what the tool received after the framework's own validation
(pydantic-ai, the Agents SDK and LangChain, scripted offline)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from pytest_agentchaos import Chaos
from pytest_agentchaos.faults import parse_faults
from pytest_agentchaos.trace import Trace
from pytest_agentchaos.trace.events import (
    BudgetExhaustedEvent,
    Detection,
    FaultInjected,
    Halt,
    Repair,
    RunEnded,
    RunStarted,
    ToolCall,
    ToolResult,
)
from pytest_agentchaos.verdicts import (
    Verdict,
    must_escape,
    must_halt,
    must_recover_state,
    must_repair,
)
from pytest_agentchaos.verdicts.verdict import ended_by, outcome_of, run_end

ASSERT = {
    "type": "AssertionError",
    "message": "expected 'Paris', got 'Lyon'",
    "where": "test_trip.py:14 in test_trip",
}
ENDED = "the run ended at step 2 with AssertionError: expected 'Paris', got 'Lyon' " + (
    "(at test_trip.py:14 in test_trip)"
)


def trace_of(*events: Any, status: str = "completed", error: Any = None) -> Trace:
    """A run of ``events`` (at their steps), ended with ``status`` and, if given, the error
    its ``RunEnded`` carries (as the harness records the test's own exception)."""
    trace = Trace(meta={"test": "test_trip.py::test_trip"})
    trace.append(RunStarted(step=0, t=0.0, test="test_trip.py::test_trip"))
    for event in events:
        trace.append(event)
    last = max((e.step for e in trace), default=0)
    detail = {} if error is None else {"error": error}
    trace.append(RunEnded(step=last, t=0.0, status=status, detail=detail))
    return trace


def calls(n: int, tool: str = "search") -> list[Any]:
    """``n`` successful calls of ``tool``, one a step."""
    out: list[Any] = []
    for i in range(1, n + 1):
        out.append(ToolCall(step=i, t=0.0, tool=tool, index=i, args={"q": "x"}))
        out.append(ToolResult(step=i, t=0.0, tool=tool, index=i, ok=True, output="r"))
    return out


# -- the third outcome ----------------------------------------------------------------------


def test_a_verdict_has_three_outcomes_and_only_fail_fails() -> None:
    assert Verdict("v", True, "").outcome == "pass"
    assert Verdict("v", False, "").outcome == "fail"
    idle = Verdict("v", True, "", exercised=False)
    assert (bool(idle), idle.outcome) == (True, "not_exercised")
    assert Verdict("v", False, "", exercised=False).outcome == "fail"  # required, not there


@pytest.mark.parametrize(
    ("value", "outcome"),
    [
        (True, "pass"),
        (False, "fail"),
        ("pass", "pass"),
        ("not_exercised", "not_exercised"),
        ("fail", "fail"),
        ("PASS", "fail"),  # anything unknown is a failure, never a pass
        (None, "fail"),
        (1, "fail"),
        (["pass"], "fail"),
    ],
)
def test_an_outcome_read_back_from_a_row_or_an_index_is_never_a_false_pass(
    value: Any, outcome: str
) -> None:
    assert outcome_of(value) == outcome


@pytest.mark.parametrize(
    ("judge", "word"),
    [
        (must_escape, "must_escape not exercised: no loop arose in this run"),
        (must_repair, "must_repair not exercised: no call had malformed parameters"),
        (must_recover_state, "must_recover_state not exercised: no crash, loop or stagnation"),
    ],
)
def test_nothing_to_judge_is_not_exercised_and_fails_only_when_required(
    judge: Any, word: str
) -> None:
    trace = trace_of(*calls(3))
    idle = judge(trace)
    assert (idle.ok, idle.outcome) == (True, "not_exercised")
    assert idle.explanation.startswith(word)
    required = "require_loop" if judge is must_escape else "require_problem"
    assert f"{required}=True fails such a run" in idle.explanation
    strict = judge(trace, **{required: True})
    assert (strict.ok, strict.outcome, strict.exercised) == (False, "fail", False)


# -- what ended the run, first ----------------------------------------------------------------


def test_must_halt_never_blames_an_agent_that_stopped_within_its_limits_before_the_assert() -> None:
    trace = trace_of(*calls(2), status="error", error=ASSERT)
    verdict = must_halt(trace, max_steps=10)
    assert (verdict.ok, verdict.outcome) == (True, "not_exercised")
    lines = verdict.explanation.splitlines()
    assert lines[0] == ENDED
    assert lines[1].startswith(
        "must_halt not exercised: the run ended by that error within its limits "
        "(steps=2 of max_steps=10), before any halt decision"
    )
    assert "did not halt on its own" not in verdict.explanation


def test_a_budget_stop_fails_with_a_headline_its_numbers_agree_with() -> None:
    trace = trace_of(
        *calls(10),
        BudgetExhaustedEvent(step=10, t=0.0, budget="max_steps", limit=10, count=11),
        status="halted",
    )
    verdict = must_halt(trace, max_steps=10)
    assert verdict.outcome == "fail"
    lines = verdict.explanation.splitlines()
    assert lines[0] == "must_halt failed: the agent did not halt on its own within its budget"
    assert lines[1] == (
        "  - hard budget max_steps=10 stopped it at step 10, t=0.000s (steps would have reached 11)"
    )
    assert "used:   steps=10 " in verdict.explanation


def test_a_halt_decision_then_the_tests_own_error_passes_and_says_what_ended_the_run() -> None:
    halt = Halt(step=2, t=0.0, reason="repetition", detail={"by": "halt_monitor",
                                                            "fired": ["repetition"]})  # fmt: skip
    trace = trace_of(*calls(2), halt, status="error", error=ASSERT)
    verdict = must_halt(trace, max_steps=10, by="repetition")
    assert verdict.outcome == "pass"
    assert verdict.explanation.splitlines()[0] == ENDED
    assert "stopped by the halt monitor at step 2 (repetition)" in verdict.explanation


def unbroken_loop() -> list[Any]:
    return [
        *calls(2),
        Detection(step=2, t=0.0, detector="loop_observer", kind="loop",
                  detail={"episode": 1, "detected_step": 2, "loop_kind": "repeat",
                          "block": ["search"], "repeats": 3, "period": 1}),
    ]  # fmt: skip


def failed_call() -> list[Any]:
    return [
        ToolCall(step=1, t=0.0, tool="book", index=1, args={"n": 2}),
        ToolResult(step=1, t=0.0, tool="book", index=1, ok=False, error_type="ValueError",
                   message="n must be text"),
        ToolCall(step=2, t=0.0, tool="search", index=1, args={}),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("judge", "events", "kw", "second"),
    [
        (must_escape, unbroken_loop(), {}, "must_escape failed: the agent did not escape its loop"),
        (must_repair, failed_call(), {}, "must_repair failed: 1 of 1 parameter problem(s)"),
        (must_recover_state, calls(2), {"require_problem": True}, "must_recover_state failed: "),
        (must_escape, calls(2), {}, "must_escape not exercised: no loop arose"),
    ],
)
def test_every_verdict_says_first_what_ended_the_run(
    judge: Any, events: list[Any], kw: dict[str, Any], second: str
) -> None:
    verdict = judge(trace_of(*events, status="error", error=ASSERT), **kw)
    lines = verdict.explanation.splitlines()
    assert lines[0] == ENDED
    assert lines[1].startswith(second)


def test_an_interruption_is_what_ended_the_run_too() -> None:
    ctrl_c = {"type": "KeyboardInterrupt", "message": "", "where": "agent.py:9 in loop"}
    with_detail = trace_of(*calls(1), status="interrupted", error=ctrl_c)
    assert ended_by(with_detail) == (
        "the run ended at step 1 with KeyboardInterrupt (at agent.py:9 in loop)"
    )
    bare = trace_of(*calls(1), status="interrupted")
    assert ended_by(bare) == "the run was interrupted at step 1"
    assert must_halt(bare, max_steps=5).outcome == "not_exercised"
    # an error the harness recorded without detail is said as such, never as a completion
    assert ended_by(trace_of(status="error")) == (
        "the run ended with an error at step 0 (no detail recorded)"
    )
    assert ended_by(trace_of(*calls(1))) is None
    halted = trace_of(*calls(1), status="halted", error={"type": "BudgetExhausted"})
    assert ended_by(halted) is None  # the halt's own lines say it


@pytest.mark.parametrize(
    "error",
    [
        "boom",
        7,
        ["AssertionError"],
        {"type": 3, "message": "x"},
        {"type": "", "message": "x"},
        {"message": "no type"},
    ],
)
def test_an_error_detail_that_is_not_one_is_no_error(error: Any) -> None:
    trace = trace_of(*calls(1), status="error", error=error)
    assert run_end(trace)["error"] is None
    assert ended_by(trace) == "the run ended with an error at step 1 (no detail recorded)"


def test_a_hostile_error_detail_is_one_bounded_line() -> None:
    error = {"type": "E" * 1000, "message": "line one\nline two\r\n" + "x" * 10_000,
             "where": ["not", "text"], "extra": object()}  # fmt: skip
    trace = trace_of(*calls(1), status="error", error=error)
    line = ended_by(trace)
    assert line is not None and "\n" not in line and "\r" not in line
    assert len(line) < 800
    assert "line one line two" in line and " (at " not in line
    verdict = must_halt(trace, max_steps=3)
    assert verdict.explanation.splitlines()[0] == line


def test_a_trace_that_never_ended_reads_as_such() -> None:
    trace = Trace()
    for event in calls(2):
        trace.append(event)
    assert run_end(trace) == {"status": "", "step": 2, "error": None}
    assert must_halt(trace, max_steps=5).outcome == "pass"


# -- must_repair judges what the tool received ---------------------------------------------------


def corrupted(value: Any, *, mutation: str = "wrong_type", key: str = "lat") -> list[Any]:
    """The agent's call of ``weather`` with lat=51.5, and the fault that corrupted it."""
    detail = {"mutation": mutation, "key": key, "original": 51.5, "value": value,
              "repairable": True}  # fmt: skip
    return [
        ToolCall(step=1, t=0.0, tool="weather", index=1, args={"lat": 51.5, "lon": -0.12}),
        FaultInjected(step=1, t=0.0, kind="malformed_params", target="weather", index=1,
                      detail=detail),
    ]  # fmt: skip


def framework(after: Any, before: Any = None) -> Repair:
    return Repair(step=1, t=0.0, tool="weather", strategy="pydantic-ai validation", ok=True,
                  before=before or {}, after=after,
                  detail={"index": 1, "by": "framework", "validator": "pydantic-ai"})  # fmt: skip


def done(index: int = 1, ok: bool = True, **kw: Any) -> ToolResult:
    return ToolResult(step=index, t=0.0, tool="weather", index=index, ok=ok, **kw)


def test_a_value_the_framework_coerced_back_is_neutralised() -> None:
    trace = trace_of(*corrupted("51.5"), framework({"lat": 51.5, "lon": -0.12}), done())
    verdict = must_repair(trace)
    assert verdict.outcome == "pass", verdict.explanation
    assert verdict.facts["neutralised"] == 1 and verdict.facts["repaired_in_place"] == 0
    assert (
        "call #1 of weather (step 1), wrong_type (lat: 51.5 -> '51.5'): neutralised by "
        "pydantic-ai validation (the tool received 51.5)"
    ) in verdict.explanation


def test_an_unknown_key_the_framework_dropped_is_neutralised() -> None:
    trace = trace_of(
        *corrupted(51.5, mutation="unknown_key", key="lt"),
        framework({"lat": 51.5, "lon": -0.12}), done(),
    )  # fmt: skip
    verdict = must_repair(trace)
    assert verdict.outcome == "pass", verdict.explanation
    assert "neutralised by pydantic-ai validation (the unknown key was dropped)" in (
        verdict.explanation
    )


def test_a_value_the_framework_accepted_as_it_was_fails_and_says_who_passed_it() -> None:
    moved = {"lat": 1051.5, "lon": -0.12}
    trace = trace_of(
        *corrupted(1051.5, mutation="out_of_range"), framework(moved, before=moved), done()
    )
    verdict = must_repair(trace)
    assert verdict.outcome == "fail"
    assert 'passed by pydantic-ai validation as {"lat": 1051.5' in verdict.explanation
    assert "the tool ran with the malformed arguments: pydantic-ai validation accepted them" in (
        verdict.explanation
    )


def test_a_validation_refusal_the_model_answered_is_neutralised() -> None:
    trace = trace_of(
        *corrupted([51.5]),
        done(ok=False, error_type="ValidationError", message="lat: Input should be a number"),
        ToolCall(step=2, t=0.0, tool="weather", index=2, args={"lat": 51.5, "lon": -0.12}),
        done(2),
    )  # fmt: skip
    verdict = must_repair(trace)
    assert verdict.outcome == "pass", verdict.explanation
    assert verdict.facts["neutralised"] == 1
    assert (
        "neutralised by the tool's validation, which refused it (ValidationError); call #2 "
        "then succeeded"
    ) in verdict.explanation


def test_a_validation_refusal_nobody_answered_fails() -> None:
    trace = trace_of(*corrupted([51.5]), done(ok=False, error_type="ValidationError"))
    verdict = must_repair(trace)
    assert verdict.outcome == "fail"
    assert "and no later call of this tool" in verdict.explanation


@pytest.mark.parametrize("after", [None, "lat=51.5", ["lat"], {"lon": -0.12}])
def test_a_framework_record_that_holds_no_arguments_never_passes_the_call(after: Any) -> None:
    event = framework({}).__class__(
        step=1, t=0.0, tool="weather", strategy="x validation", ok=True, before={}, after=after,
        detail={"index": 1, "by": "framework"},
    )  # fmt: skip
    verdict = must_repair(trace_of(*corrupted("51.5"), event, done()))
    assert verdict.outcome == "fail"


def test_a_framework_validation_is_no_repair_in_the_metrics() -> None:
    from pytest_agentchaos.report.metrics import run_metrics

    trace = trace_of(*corrupted("51.5"), framework({"lat": 51.5, "lon": -0.12}), done())
    metrics = run_metrics(trace)
    assert (metrics["repairs_ok"], metrics["repairs_declined"], metrics["repairs_failed"]) == (
        0, 0, 0,
    )  # fmt: skip


# -- the real frameworks, scripted offline -------------------------------------------------------


def make(*faults: dict[str, Any], seed: int = 3) -> Chaos:
    return Chaos.create(faults=parse_faults(list(faults), "test"), seed=seed)


def wrong_type(**kw: Any) -> dict[str, Any]:
    return {"kind": "malformed_params", "mutations": ["wrong_type"], "nth": 1, **kw}


needs = {
    name: pytest.mark.skipif(importlib.util.find_spec(module) is None, reason=f"{name} missing")
    for name, module in (("pydantic-ai", "pydantic_ai"), ("openai-agents", "agents"),
                         ("langchain", "langchain_core"))
}  # fmt: skip


def pydantic_ai_weather(chaos: Chaos, received: list[dict[str, Any]], args: dict[str, Any]) -> str:
    """A pydantic-ai agent whose scripted model calls ``weather`` and asks again after a
    validation error, run under ``chaos``."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    from pytest_agentchaos.adapters.pydantic_ai import chaos_agent

    def script(messages: list[Any], info: Any) -> ModelResponse:
        parts = messages[-1].parts
        if any(isinstance(p, ToolReturnPart) and p.outcome != "retried" for p in parts):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("weather", dict(args))])

    agent = Agent(FunctionModel(script), name="forecaster", retries=3)

    @agent.tool_plain
    def weather(lat: float, lon: float, city: str) -> str:
        """The weather at a place."""
        received.append({"lat": lat, "lon": lon, "city": city})
        return "sunny"

    with chaos_agent(chaos, agent):
        return str(agent.run_sync("weather in London").output)


ARGS = {"lat": 51.5, "lon": -0.12, "city": "London"}


@needs["pydantic-ai"]
@pytest.mark.parametrize("seed", range(6))
def test_pydantic_ai_coerces_a_number_sent_as_text_back_and_must_repair_says_so(seed: int) -> None:
    received: list[dict[str, Any]] = []
    with make(wrong_type(), seed=seed) as chaos:
        assert pydantic_ai_weather(chaos, received, ARGS) == "done"
    (fault,) = chaos.trace.faults()
    verdict = must_repair(chaos.trace)
    assert verdict.outcome == "pass", verdict.explanation
    assert received[-1] == ARGS  # what the tool ran is what the agent asked
    if isinstance(fault.detail["value"], str):  # a number as text: pydantic coerced it back
        assert "neutralised by pydantic-ai validation (the tool received" in verdict.explanation
        assert len(received) == 1
    else:  # 'London' as ['London'] or as 6: refused, and the model asked again
        assert "neutralised by the tool's validation, which refused it (ValidationError)" in (
            verdict.explanation
        )
        assert len(received) == 1


@needs["openai-agents"]
@pytest.mark.parametrize("mutation", ["wrong_type", "unknown_key"])
def test_the_agents_sdk_drops_an_unknown_key_and_coerces_text_and_must_repair_says_so(
    mutation: str,
) -> None:
    from agents import Agent, Runner, function_tool
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from pytest_agentchaos.adapters.openai_agents import chaos_agent

    received: list[dict[str, Any]] = []

    @function_tool
    def weather(lat: float, lon: float) -> str:
        """The weather at a place."""
        received.append({"lat": lat, "lon": lon})
        return "sunny"

    class Scripted(Model):
        def __init__(self) -> None:
            self.turn = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            self.turn += 1
            if self.turn == 1:
                item: Any = ResponseFunctionToolCall(
                    type="function_call", name="weather", call_id="c1",
                    arguments='{"lat": 51.5, "lon": -0.12}',
                )  # fmt: skip
            else:
                item = ResponseOutputMessage(
                    id="m", type="message", role="assistant", status="completed",
                    content=[ResponseOutputText(type="output_text", text="done", annotations=[])],
                )  # fmt: skip
            return ModelResponse(output=[item], usage=Usage(), response_id=None)

        async def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
            raise NotImplementedError
            yield

    fault = {"kind": "malformed_params", "mutations": [mutation], "nth": 1}
    with make(fault) as chaos:
        agent = chaos_agent(chaos, Agent(name="forecaster", model=Scripted(), tools=[weather]))
        Runner.run_sync(agent, "weather in London")
    assert received == [{"lat": 51.5, "lon": -0.12}]
    verdict = must_repair(chaos.trace)
    assert verdict.outcome == "pass", verdict.explanation
    assert "neutralised by Agents SDK validation" in verdict.explanation


@needs["langchain"]
def test_a_langchain_tool_gets_the_value_its_validation_coerced_and_must_repair_says_so() -> None:
    from langchain_core.tools import tool

    received: list[Any] = []

    @tool
    def weather(lat: float, lon: float) -> str:
        """The weather at a place."""
        received.append((lat, lon))
        return "sunny"

    for seed in range(4):
        received.clear()
        with make(wrong_type(), seed=seed) as chaos:
            assert chaos.wrap(weather).invoke({"lat": 51.5, "lon": -0.12}) == "sunny"
        # the corrupted '51.5' reached the tool as LangChain hands it over: 51.5, a float
        assert received == [(51.5, -0.12)] and all(type(v) is float for v in received[0])
        verdict = must_repair(chaos.trace)
        assert verdict.outcome == "pass", verdict.explanation
        assert "neutralised by LangChain validation (the tool received" in verdict.explanation


# -- as a user sees it ----------------------------------------------------------------------------


PA_AGENT = """
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel

from pytest_agentchaos.adapters.pydantic_ai import chaos_agent

ARGS = {"lat": 51.5, "lon": -0.12, "city": "London"}


def script(messages, info):
    parts = messages[-1].parts
    if any(isinstance(p, ToolReturnPart) and p.outcome != "retried" for p in parts):
        return ModelResponse(parts=[TextPart("done")])
    return ModelResponse(parts=[ToolCallPart("weather", dict(ARGS))])


agent = Agent(FunctionModel(script), name="forecaster", retries=3)


@agent.tool_plain
def weather(lat: float, lon: float, city: str) -> str:
    '''The weather at a place.'''
    return "sunny"


@pytest.mark.chaos("malformed")
@pytest.mark.must_repair
def test_forecast(chaos):
    with chaos_agent(chaos, agent):
        assert agent.run_sync("weather in London").output == "done"
"""


@needs["pydantic-ai"]
def test_a_healthy_agent_under_the_malformed_profile_never_fails_must_repair_for_luck(
    pytester: pytest.Pytester,
) -> None:
    # it calls its tool once: 70% of its runs have nothing to repair; the rest are corrupted
    # in ways pydantic-ai coerces back or refuses (and the model asks again)
    pytester.makepyfile(test_forecast=PA_AGENT)
    result = pytester.runpytest("-p", "no:randomly", "--chaos-runs=12", "--chaos-seed=5")
    result.assert_outcomes(passed=12)
    result.stdout.fnmatch_lines(
        ["test_forecast.py::test_forecast@malformed: 12/12 runs passed * pass^12 ok; "
         "must_repair not exercised in * of 12 runs"]
    )  # fmt: skip
    assert "must_repair failed" not in result.stdout.str()


def test_the_tests_own_assert_after_the_agent_finished_is_not_blamed_on_must_halt(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_trip="""
        import pytest

        @pytest.mark.must_halt(max_steps=10)
        def test_trip(chaos):
            plan = chaos.wrap(lambda city: city.upper(), name="plan")
            answer = plan("lyon")
            chaos.step("reply")
            assert answer == "PARIS"
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "must_halt failed" not in out and "did not halt on its own" not in out
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: assert 'LYON' == 'PARIS'",
            "FAILED  test_trip.py::test_trip  * steps=2 * verdict=must_halt=not_exercised*",
        ]
    )


def test_a_framework_that_turned_the_value_into_another_says_so() -> None:
    trace = trace_of(*corrupted("51,5"), framework({"lat": 515.0, "lon": -0.12}), done())
    verdict = must_repair(trace)
    assert verdict.outcome == "fail"
    assert (
        "repaired into a different request: lat was 51.5 in the agent's call, a fault changed "
        "it and pydantic-ai validation made it 515.0"
    ) in verdict.explanation
