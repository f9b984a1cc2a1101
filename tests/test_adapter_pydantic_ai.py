"""The pydantic-ai adapter against the real package, offline (``FunctionModel`` scripts the
model): wrapped tools and toolsets keep their type and their model-facing definitions, every
call goes through the run before the tool runs, faults reach the agent as pydantic-ai shows
them, the repair loop fixes the model's arguments before pydantic-ai's validation, the model
wrapper records turns and tokens, and a ``UsageLimits`` stop is the framework's hard halt."""

from __future__ import annotations

import asyncio
import datetime as dt
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import pytest

if importlib.util.find_spec("pydantic_ai") is None:
    if os.environ.get("AGENTCHAOS_REQUIRE_FRAMEWORKS") == "1":
        raise RuntimeError("AGENTCHAOS_REQUIRE_FRAMEWORKS=1 but pydantic-ai is not installed")
    pytest.skip("pydantic-ai is not installed", allow_module_level=True)

import pydantic_ai.models
from pydantic_ai import Agent, ModelRetry, RunContext, Tool
from pydantic_ai.exceptions import ModelConnectionError, UsageLimitExceeded
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import CombinedToolset, FunctionToolset, PrefixedToolset
from pydantic_ai.usage import RequestUsage, UsageLimits

from pytest_agentchaos import Chaos
from pytest_agentchaos.adapters import framework_of
from pytest_agentchaos.adapters.caps import record_cap
from pytest_agentchaos.adapters.pydantic_ai import (
    ChaosModel,
    ChaosToolset,
    chaos_agent,
    chaos_model,
    chaos_toolset,
    tool_spec,
    wrap_tool,
)
from pytest_agentchaos.errors import BudgetExhausted, ChaosConfigError
from pytest_agentchaos.inject import InjectedTimeout
from pytest_agentchaos.repair import ParamRepairer
from pytest_agentchaos.trace import FaultInjected, ModelCall, ModelResult, ToolCall, ToolResult
from pytest_agentchaos.trace.events import Halt, Repair

# -- tools and a scripted model ------------------------------------------------------------

ran: list[tuple[str, Any]] = []


def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: the first.
        b: the second.
    """
    ran.append(("add", (a, b)))
    return a + b


async def shout(text: str) -> str:
    """Say it louder."""
    ran.append(("shout", text))
    await asyncio.sleep(0)
    return text.upper()


def greet(ctx: RunContext[str], name: str) -> str:
    """Greet someone from the deps."""
    ran.append(("greet", name))
    return f"{ctx.deps} greets {name}"


async def count(ctx: RunContext[str], n: int) -> list[int]:
    """Count to n."""
    ran.append(("count", n))
    return list(range(n))


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", False)  # no real model
    ran.clear()
    yield
    ran.clear()


Turn = Callable[[list[ModelMessage]], ModelResponse]


class Script:
    """A scripted model: one function per turn (the last repeats); ``seen`` keeps the last
    message of every request it got."""

    def __init__(self, *turns: Turn, tokens: tuple[int, int] | None = None) -> None:
        self.turns = turns
        self.seen: list[ModelMessage] = []
        self.tokens = tokens

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(messages[-1])
        turn = self.turns[min(len(self.seen), len(self.turns)) - 1]
        response = turn(messages)
        if self.tokens is not None:
            response.usage = RequestUsage(input_tokens=self.tokens[0], output_tokens=self.tokens[1])
        return response

    def model(self) -> FunctionModel:
        return FunctionModel(self)


def call(tool: str, **args: Any) -> Turn:
    return lambda _messages: ModelResponse(parts=[ToolCallPart(tool, args)])


def say(text: str) -> Turn:
    return lambda _messages: ModelResponse(parts=[TextPart(text)])


def returned(message: ModelMessage) -> list[ToolReturnPart]:
    return [p for p in message.parts if isinstance(p, ToolReturnPart)]


def definition(tool: Tool[Any]) -> str:
    return json.dumps(asdict(tool.tool_def), sort_keys=True, default=str)


def make(*faults: dict[str, Any], **kwargs: Any) -> Chaos:
    from pytest_agentchaos.faults import parse_faults

    return Chaos.create(faults=parse_faults(list(faults), "test"), **kwargs)


@pytest.fixture
def chaos() -> Iterator[Chaos]:
    run = make()
    yield run
    run.close()


def calls_and_results(chaos: Chaos) -> list[tuple[str, int, bool]]:
    """Every tool call's (tool, index, ok of its result): each call must have its result."""
    results = {(r.tool, r.index): r.ok for r in chaos.trace.of_type(ToolResult)}
    calls = chaos.trace.of_type(ToolCall)
    assert len(results) == len(calls), "a tool call without a result"
    return [(c.tool, c.index, results[(c.tool, c.index)]) for c in calls]


# -- wrapped tools keep their type and definition -------------------------------------------


class MyTool(Tool[Any]):
    """A user's own Tool subclass."""


@pytest.mark.parametrize("fn", [add, shout, greet, count], ids=lambda f: f.__name__)
def test_a_wrapped_tool_is_a_tool_of_its_type_with_a_byte_identical_definition(
    chaos: Chaos, fn: Callable[..., Any]
) -> None:
    for tool in (Tool(fn), MyTool(fn, max_retries=4, description="custom words")):
        wrapped = chaos.wrap(tool)
        assert type(wrapped) is type(tool)
        assert wrapped is not tool
        assert definition(wrapped) == definition(tool)
        assert (wrapped.name, wrapped.takes_ctx, wrapped.max_retries) == (
            tool.name,
            tool.takes_ctx,
            tool.max_retries,
        )
        assert wrapped.function is fn
    assert framework_of(Tool(fn)) is not None and framework_of(fn) is None


async def test_the_tool_definitions_the_model_gets_are_unchanged(chaos: Chaos) -> None:
    async def seen_by_model(**kwargs: Any) -> str:
        defs: list[str] = []

        def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            defs.append(json.dumps([asdict(t) for t in info.function_tools], default=str))
            return ModelResponse(parts=[TextPart("ok")])

        await Agent(FunctionModel(model), deps_type=str, **kwargs).run("x", deps="d")
        (only,) = defs
        return only

    def tools() -> list[Tool[Any]]:
        return [Tool(add), Tool(shout), Tool(greet), Tool(count)]

    def prefixed() -> PrefixedToolset[Any]:
        return PrefixedToolset(FunctionToolset(tools()), "p")

    plain = await seen_by_model(tools=tools())
    assert await seen_by_model(tools=[chaos.wrap(t) for t in tools()]) == plain
    plain = await seen_by_model(toolsets=[FunctionToolset(tools())])
    assert await seen_by_model(toolsets=[chaos.wrap(FunctionToolset(tools()))]) == plain
    plain = await seen_by_model(toolsets=[prefixed()])
    assert await seen_by_model(toolsets=[chaos.wrap(prefixed())]) == plain
    assert '"name": "p_add"' in plain


def test_name_names_the_calls_in_the_trace_not_the_tool(chaos: Chaos) -> None:
    tool = chaos.wrap(Tool(add), name="adder")
    assert tool.name == "add" and definition(tool) == definition(Tool(add))
    Agent(Script(call("add", a=1, b=2), say("ok")).model(), tools=[tool]).run_sync("go")
    assert [(c.tool, c.args) for c in chaos.trace.of_type(ToolCall)] == [
        ("adder", {"a": 1, "b": 2})
    ]
    with pytest.raises(TypeError, match="keep their own names"):
        chaos.wrap(FunctionToolset([Tool(add)]), name="x")


def test_a_function_toolset_comes_back_as_its_type_other_toolsets_in_a_chaos_toolset(
    chaos: Chaos,
) -> None:
    function = FunctionToolset([Tool(add), Tool(shout)], max_retries=3)
    wrapped = chaos.wrap(function)
    assert type(wrapped) is FunctionToolset and wrapped is not function
    assert set(wrapped.tools) == {"add", "shout"} and wrapped.max_retries == 3
    assert function.tools["add"].function_schema is not wrapped.tools["add"].function_schema
    combined = CombinedToolset([FunctionToolset([Tool(add)])])
    other = chaos.wrap(combined)
    assert isinstance(other, ChaosToolset) and other.wrapped is combined


# -- calls go through the run --------------------------------------------------------------


@pytest.mark.parametrize("how", ["tools", "toolset", "chaos_toolset", "agent"])
def test_sync_async_and_context_tools_are_recorded_and_run(chaos: Chaos, how: str) -> None:
    script = Script(
        call("add", a=2, b=3),
        call("shout", text="hi"),
        call("greet", name="Ann"),
        call("count", n=3),
        say("done"),
    )
    tools = [Tool(add), Tool(shout), Tool(greet), Tool(count)]
    if how == "tools":
        agent = Agent(script.model(), tools=[chaos.wrap(t) for t in tools], deps_type=str)
    elif how == "toolset":
        agent = Agent(script.model(), toolsets=[chaos.wrap(FunctionToolset(tools))], deps_type=str)
    elif how == "chaos_toolset":
        inner = CombinedToolset([FunctionToolset(tools)])
        agent = Agent(script.model(), toolsets=[chaos_toolset(chaos, inner)], deps_type=str)
    else:
        agent = Agent(script.model(), tools=tools, deps_type=str)
    if how == "agent":
        with chaos_agent(chaos, agent):
            out = agent.run_sync("go", deps="Bo").output
    else:
        out = agent.run_sync("go", deps="Bo").output
    assert out == "done"
    assert ran == [("add", (2, 3)), ("shout", "hi"), ("greet", "Ann"), ("count", 3)]
    assert [(c.tool, c.args) for c in chaos.trace.of_type(ToolCall)] == [
        ("add", {"a": 2, "b": 3}),
        ("shout", {"text": "hi"}),
        ("greet", {"name": "Ann"}),
        ("count", {"n": 3}),
    ]
    assert [r.output for r in chaos.trace.of_type(ToolResult)] == [
        5,
        "HI",
        "Bo greets Ann",
        [0, 1, 2],
    ]
    assert all(ok for _, _, ok in calls_and_results(chaos))
    got = [returned(m)[0].content for m in script.seen[1:]]
    assert got == [5, "HI", "Bo greets Ann", [0, 1, 2]]
    model_calls = chaos.trace.of_type(ModelCall)
    assert len(model_calls) == (5 if how == "agent" else 0)


def test_an_error_fault_raises_before_the_tool_runs_and_propagates_out_of_run_sync() -> None:
    chaos = make({"kind": "timeout", "seconds": 30, "nth": [2]})
    script = Script(call("add", a=1, b=1), call("add", a=2, b=2), say("never"))
    agent = Agent(script.model(), tools=[chaos.wrap(Tool(add))])
    with pytest.raises(InjectedTimeout):
        agent.run_sync("go")
    assert ran == [("add", (1, 1))]  # the second call never reached the tool
    assert calls_and_results(chaos) == [("add", 1, True), ("add", 2, False)]
    failed = chaos.trace.of_type(ToolResult)[-1]
    assert failed.error_type == "InjectedTimeout"
    assert chaos.clock.now() >= 30  # the timeout's wait, on the virtual clock
    chaos.close()


def test_a_real_tool_error_propagates_and_model_retry_reaches_the_model(chaos: Chaos) -> None:
    attempts: list[int] = []

    def picky(n: int) -> int:
        """Only even numbers."""
        attempts.append(n)
        if n % 2:
            raise ModelRetry(f"{n} is odd, send an even number")
        if n > 10:
            raise LookupError("no such number")
        return n

    script = Script(call("picky", n=3), call("picky", n=4), call("picky", n=12))
    agent = Agent(script.model(), tools=[chaos.wrap(Tool(picky, max_retries=2))])
    with pytest.raises(LookupError, match="no such number"):
        agent.run_sync("go")
    retry = returned(script.seen[1])[0]
    assert retry.outcome == "retried" and "3 is odd" in str(retry.content)
    assert attempts == [3, 4, 12]
    results = chaos.trace.of_type(ToolResult)
    assert [(r.ok, r.error_type) for r in results] == [
        (False, "ModelRetry"),
        (True, None),
        (False, "LookupError"),
    ]
    assert results[2].message == "no such number"


def test_malformed_params_meet_pydantic_ais_validation_and_the_model_gets_a_retry_prompt() -> None:
    chaos = make({"kind": "malformed_params", "mutations": ["missing_required"], "nth": [1]})
    script = Script(call("add", a=1, b=2), call("add", a=1, b=2), say("done"))
    agent = Agent(script.model(), tools=[chaos.wrap(Tool(add))])
    assert agent.run_sync("go").output == "done"
    (fault,) = chaos.trace.of_type(FaultInjected)
    assert fault.kind == "malformed_params" and fault.index == 1
    retry = returned(script.seen[1])[0]
    assert retry.outcome == "retried" and retry.retry is not None
    assert retry.retry.cause == "validation_error"  # as pydantic-ai says of invalid arguments
    assert retry.content[0]["type"] == "missing"
    assert ran == [("add", (1, 2))]  # only the second, clean call ran
    results = chaos.trace.of_type(ToolResult)
    assert [(r.ok, r.error_type) for r in results] == [(False, "ValidationError"), (True, None)]
    chaos.close()


def test_a_model_that_sends_invalid_arguments_gets_pydantic_ais_own_retry_prompt(
    chaos: Chaos,
) -> None:
    wrapped, plain = (
        Script(call("add", a="x", b=2), say("ok")),
        Script(call("add", a="x", b=2), say("ok")),
    )
    Agent(wrapped.model(), tools=[chaos.wrap(Tool(add))]).run_sync("go")
    Agent(plain.model(), tools=[Tool(add)]).run_sync("go")
    ours, theirs = returned(wrapped.seen[1])[0], returned(plain.seen[1])[0]
    assert (ours.content, ours.retry) == (theirs.content, theirs.retry)
    assert chaos.trace.of_type(ToolResult)[0].error_type == "ValidationError"


def test_every_call_has_a_result_under_a_bad_day() -> None:
    chaos = make(
        {"kind": "timeout", "seconds": 5, "probability": 0.2},
        {"kind": "malformed_params", "probability": 0.3},
        {"kind": "latency", "seconds": 1, "probability": 0.3},
        seed=3,
    )
    tool = chaos.wrap(Tool(add, max_retries=50))
    outcomes = []
    for i in range(30):
        script = Script(call("add", a=i, b=1), say("done"))
        try:
            outcomes.append(Agent(script.model(), tools=[tool]).run_sync("go").output)
        except InjectedTimeout:
            outcomes.append("timeout")
    results = calls_and_results(chaos)
    assert len(results) >= 30
    assert "timeout" in outcomes and "done" in outcomes
    assert {f.kind for f in chaos.trace.of_type(FaultInjected)} >= {"timeout", "malformed_params"}
    chaos.close()


# -- repair ----------------------------------------------------------------------------------


def test_repair_fixes_the_models_bad_arguments_before_pydantic_ai_rejects_them(
    chaos: Chaos,
) -> None:
    def booking(day: dt.date, seats: int) -> str:
        """Book seats."""
        ran.append(("book", (day, seats)))
        return f"{seats} on {day.isoformat()}"

    tool = Tool(booking, name="book")
    repairer = ParamRepairer(tool_spec(tool), task="Book two seats on October 26, 2024")
    script = Script(call("book", day="October 26, 2024", seats="two"), say("booked"))
    agent = Agent(script.model(), tools=[chaos.wrap(tool, repair=repairer)])
    assert agent.run_sync("go").output == "booked"
    assert ran == [("book", (dt.date(2024, 10, 26), 2))]
    assert returned(script.seen[1])[0].content == "2 on 2024-10-26"  # no retry round trip
    (repair,) = chaos.trace.of_type(Repair)
    assert repair.ok and repair.after == {"day": "2024-10-26", "seats": 2}
    assert chaos.trace.of_type(ToolCall)[0].args == {"day": "October 26, 2024", "seats": "two"}


def test_repair_repairs_a_malformed_params_fault_before_validation() -> None:
    chaos = make({"kind": "malformed_params", "mutations": ["wrong_type"], "nth": [1]}, seed=1)
    tool = Tool(add)
    script = Script(call("add", a=4, b=5), say("done"))
    agent = Agent(script.model(), tools=[chaos.wrap(tool, repair=ParamRepairer(tool_spec(tool)))])
    assert agent.run_sync("go").output == "done"
    assert len(chaos.trace.of_type(FaultInjected)) == 1
    assert ran == [("add", (4, 5))]
    assert returned(script.seen[1])[0].content == 9
    chaos.close()


def test_a_repairer_that_declines_asks_the_model_again(chaos: Chaos) -> None:
    def booking(day: dt.date) -> str:
        """Book a day."""
        return day.isoformat()

    tool = Tool(booking, max_retries=2)
    script = Script(call("booking", day="03/04/2024"), call("booking", day="2024-04-03"), say("ok"))
    agent = Agent(script.model(), tools=[chaos.wrap(tool, repair=ParamRepairer(tool_spec(tool)))])
    assert agent.run_sync("go").output == "ok"
    retry = returned(script.seen[1])[0]
    assert retry.outcome == "retried" and retry.retry is not None
    assert retry.retry.cause == "model_retry" and "03/04/2024" in str(retry.content)
    results = chaos.trace.of_type(ToolResult)
    assert [(r.ok, r.error_type) for r in results] == [(False, "ModelRetry"), (True, None)]


def test_a_toolset_takes_a_repairer_per_tool_name(chaos: Chaos) -> None:
    tool = Tool(add)
    with pytest.raises(ChaosConfigError, match="'nope', which is not among the tools: add"):
        chaos.wrap(FunctionToolset([tool]), repair={"nope": ParamRepairer(tool_spec(tool))})
    toolset = chaos.wrap(FunctionToolset([tool]), repair=ParamRepairer(tool_spec(tool)))
    script = Script(call("add", a="seven", b=1), say("done"))
    Agent(script.model(), toolsets=[toolset]).run_sync("go")
    assert ran == [("add", (7, 1))]


# -- the model -------------------------------------------------------------------------------


def test_the_model_wrapper_records_text_tool_calls_and_tokens(chaos: Chaos) -> None:
    script = Script(call("add", a=1, b=2), say("three"), tokens=(10, 5))
    model = chaos_model(chaos, script.model())
    assert isinstance(model, ChaosModel) and model.model_name == script.model().model_name
    out = Agent(model, tools=[chaos.wrap(Tool(add))]).run_sync("add them")
    assert out.output == "three"
    calls = chaos.trace.of_type(ModelCall)
    results = chaos.trace.of_type(ModelResult)
    assert [c.model for c in calls] == ["model", "model"]
    assert calls[0].input["request"][0]["content"] == "add them"
    assert calls[1].input["request"][0] == {"kind": "tool-return", "tool": "add", "content": 3}
    assert [r.output for r in results] == ['-> add({"a": 1, "b": 2})', "three"]
    assert [r.tokens for r in results] == [15, 15]
    assert chaos.session.tokens == 30
    kinds = [type(e).__name__ for e in chaos.trace][1:]
    assert kinds == [
        "ModelCall",
        "ModelResult",
        "ToolCall",
        "ToolResult",
        "ModelCall",
        "ModelResult",
    ]


def test_max_tokens_is_enforced_from_the_responses_usage() -> None:
    from pytest_agentchaos.profiles import Budgets

    chaos = make(budgets=Budgets(max_tokens=40))
    script = Script(call("add", a=1, b=2), tokens=(10, 5))
    agent = Agent(chaos_model(chaos, script.model()), tools=[chaos.wrap(Tool(add, max_retries=9))])
    with pytest.raises(BudgetExhausted, match="max_tokens"):
        agent.run_sync("loop")
    assert chaos.session.tokens == 45
    assert len(chaos.trace.of_type(ModelResult)) == 3
    chaos.close()


def test_a_hard_budget_stops_the_run_from_inside_a_tool_call() -> None:
    from pytest_agentchaos.profiles import Budgets

    chaos = make(budgets=Budgets(max_tool_calls=3))
    script = Script(call("add", a=1, b=1))
    agent = Agent(script.model(), tools=[chaos.wrap(Tool(add, max_retries=9))])
    with pytest.raises(BudgetExhausted, match="max_tool_calls"):  # not wrapped by pydantic-ai
        agent.run_sync("loop")
    assert calls_and_results(chaos) == [("add", 1, True), ("add", 2, True), ("add", 3, True)]
    assert len(ran) == 3
    chaos.close()


def test_repeated_output_answers_with_the_earlier_response_without_asking_the_model() -> None:
    chaos = make({"kind": "repeated_output", "channels": ["model"], "nth": [2]})
    script = Script(call("add", a=1, b=2), say("three"))
    agent = Agent(chaos_model(chaos, script.model()), tools=[chaos.wrap(Tool(add, max_retries=3))])
    assert agent.run_sync("go").output == "three"
    # request 2 was answered with request 1's tool call: the tool ran twice, the model 2 times
    assert ran == [("add", (1, 2)), ("add", (1, 2))]
    assert len(script.seen) == 2
    (fault,) = chaos.trace.of_type(FaultInjected)
    assert (fault.kind, fault.channel, fault.index) == ("repeated_output", "model", 2)
    outputs = [r.output for r in chaos.trace.of_type(ModelResult)]
    assert outputs == ['-> add({"a": 1, "b": 2})'] * 2 + ["three"]
    chaos.close()


def test_paraphrased_output_rewrites_the_replayed_text() -> None:
    chaos = make({"kind": "paraphrased_output", "channels": ["model"], "nth": [2]})
    script = Script(say("The order is still pending."))
    model = chaos_model(chaos, script.model())
    agent = Agent(model)
    runs = agent.run_sync("status?"), agent.run_sync("status?")
    first, second = (run.output for run in runs)
    assert [run.all_messages()[-1].run_id for run in runs] == [run.run_id for run in runs]
    assert first == "The order is still pending."
    assert second != first and second
    assert len(script.seen) == 1
    assert chaos.trace.of_type(ModelResult)[1].output == second
    chaos.close()


def test_a_model_error_fault_propagates_before_the_model_is_asked() -> None:
    chaos = make({"kind": "connection_error", "channels": ["model"], "nth": [1]})
    script = Script(say("hi"))
    with pytest.raises(ModelConnectionError):  # what pydantic-ai raises for a dropped connection
        Agent(chaos_model(chaos, script.model())).run_sync("go")
    assert script.seen == []
    (result,) = chaos.trace.of_type(ModelResult)
    assert not result.ok and result.error_type == "ModelConnectionError"
    chaos.close()


async def test_streamed_requests_are_recorded(chaos: Chaos) -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        yield "hi"

    agent = Agent(chaos_model(chaos, FunctionModel(stream_function=stream)))
    async with agent.run_stream("go") as run:
        assert await run.get_output() == "hi"
    assert [r.output for r in chaos.trace.of_type(ModelResult)] == ["hi"]


# -- framework caps ----------------------------------------------------------------------------


def test_a_run_stopped_by_usage_limits_is_the_frameworks_hard_halt(chaos: Chaos) -> None:
    script = Script(call("add", a=1, b=1))
    agent = Agent(chaos_model(chaos, script.model()), tools=[chaos.wrap(Tool(add, max_retries=9))])
    with pytest.raises(UsageLimitExceeded) as caught:
        agent.run_sync("loop", usage_limits=UsageLimits(request_limit=3))
    halt = record_cap(chaos, caught.value)
    assert halt is not None and halt.hard
    assert halt.detail["by"] == "framework" and halt.detail["framework"] == "pydantic_ai"
    assert halt.detail["limit"] == 3 and halt.detail["model_calls"] == 3
    assert chaos.trace.hard_halts() == [halt]
    assert record_cap(chaos, caught.value) is halt  # recorded once
    assert chaos.trace.of_type(Halt) == [halt]


def test_must_halt_fails_saying_the_frameworks_cap_stopped_the_agent(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        test_cap="""
        import pytest
        from pydantic_ai import Agent, Tool
        from pydantic_ai.messages import ModelResponse, ToolCallPart
        from pydantic_ai.models.function import FunctionModel
        from pydantic_ai.usage import UsageLimits
        from pytest_agentchaos.adapters.pydantic_ai import chaos_agent

        def lookup(q: str) -> str:
            return "nothing yet"

        def model(messages, info):
            return ModelResponse(parts=[ToolCallPart("lookup", {"q": "again"})])

        @pytest.mark.must_halt(max_model_calls=50)
        def test_loops(chaos):
            agent = Agent(FunctionModel(model), tools=[Tool(lookup)])
            with chaos_agent(chaos, agent):
                agent.run_sync("go", usage_limits=UsageLimits(request_limit=4))
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*must_halt failed: the agent did not halt on its own within its budget*",
            "*hard halt 'the framework's cap pydantic_ai usage_limits=4 (usage; 4 model calls, "
            "4 tool calls), UsageLimitExceeded'*stopped it*",
        ]
    )


# -- hostile values ----------------------------------------------------------------------------


@dataclass
class Unprintable:
    """Data pydantic-ai can send to the model, whose repr and str raise."""

    value: int

    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")

    __str__ = __repr__


def test_hostile_outputs_and_huge_strings_are_recorded_without_breaking_the_run(
    chaos: Chaos,
) -> None:
    def weird() -> Any:
        """Returns something that cannot be shown."""
        return Unprintable(7)

    def huge(n: int) -> str:
        """A very long answer."""
        return "x" * n

    script = Script(call("weird"), call("huge", n=2_000_000), say("done"))
    tools = [chaos.wrap(Tool(weird)), chaos.wrap(Tool(huge))]
    got: list[Any] = []

    def keep(messages: list[ModelMessage]) -> ModelResponse:
        got.append(returned(messages[-1])[0].content)
        return ModelResponse(parts=[TextPart("done")])

    script.turns = (*script.turns[:2], keep)
    assert Agent(script.model(), tools=tools).run_sync("go").output == "done"
    assert len(got) == 1 and len(got[0]) == 2_000_000  # the agent gets the output, whole
    weird_result, huge_result = chaos.trace.of_type(ToolResult)
    assert weird_result.ok and huge_result.ok
    assert len(json.dumps(huge_result.output, default=str)) < 100_000  # the trace keeps a cap
    assert weird_result.output == "<Unprintable object (repr failed: RuntimeError)>"


def test_hostile_model_arguments_reach_validation_not_the_tool(chaos: Chaos) -> None:
    script = Script(
        lambda _m: ModelResponse(parts=[ToolCallPart("add", '{"a": 1, "b": ')]),
        lambda _m: ModelResponse(parts=[ToolCallPart("add", "[1, 2]")]),
        say("gave up"),
    )
    agent = Agent(script.model(), tools=[chaos.wrap(Tool(add, max_retries=5))])
    assert agent.run_sync("go").output == "gave up"
    assert ran == []
    assert [r.retry.cause for m in script.seen[1:] for r in returned(m) if r.retry] == [
        "validation_error",
        "validation_error",
    ]


# -- wrapping twice, other objects, imports ----------------------------------------------------


def test_wrapping_twice_is_refused_and_nesting_does_not_record_twice(chaos: Chaos) -> None:
    once = chaos.wrap(Tool(add))
    with pytest.raises(ChaosConfigError, match="under chaos already"):
        chaos.wrap(once)
    toolset = chaos.wrap(FunctionToolset([Tool(add)]))
    with pytest.raises(ChaosConfigError, match="under chaos already"):
        chaos.wrap(toolset)
    outer = chaos.wrap(CombinedToolset([toolset]))
    with pytest.raises(ChaosConfigError, match="under chaos already"):
        chaos.wrap(outer)
    model = chaos_model(chaos, Script(say("x")).model())
    with pytest.raises(ChaosConfigError, match="under chaos already"):
        chaos_model(chaos, model)
    script = Script(call("add", a=1, b=1), say("done"))
    Agent(script.model(), toolsets=[outer]).run_sync("go")
    assert len(chaos.trace.of_type(ToolCall)) == 1
    assert len(chaos.trace.of_type(ToolResult)) == 1
    agent = Agent(Script(call("add", a=2, b=2), say("done")).model(), tools=[once])
    with chaos_agent(chaos, agent):
        agent.run_sync("go")
    assert len(chaos.trace.of_type(ToolCall)) == 2  # the wrapped tool kept, not wrapped again
    inner = chaos.wrap(CombinedToolset([FunctionToolset([Tool(add)])]))
    nested = chaos.wrap(PrefixedToolset(CombinedToolset([inner]), "n"))
    script = Script(call("n_add", a="3", b=3), say("done"))
    Agent(script.model(), toolsets=[nested]).run_sync("go")
    assert [(c.tool, c.args) for c in chaos.trace.of_type(ToolCall)][2:] == [
        ("add", {"a": "3", "b": 3})  # recorded once, by the innermost layer, by its own name
    ]
    assert ran[-1] == ("add", (3, 3))


def test_chaos_wrap_of_other_objects_is_unaffected(chaos: Chaos) -> None:
    def plain(x: int) -> int:
        return x * 2

    wrapped = chaos.wrap(plain)
    assert not isinstance(wrapped, Tool) and wrapped(4) == 8
    assert chaos.trace.of_type(ToolResult)[0].output == 8
    with pytest.raises(TypeError, match="brings its own argument schema"):
        chaos.wrap(Tool(add), schema={"type": "object"})
    with pytest.raises(TypeError, match="Tool or toolset"):
        wrap_tool(chaos.session, plain)
    with pytest.raises(TypeError, match="Chaos or a ChaosSession"):
        chaos_model(object(), Script(say("x")).model())


def test_chaos_agent_needs_a_model_and_known_tool_names(chaos: Chaos) -> None:
    with (
        pytest.raises(ChaosConfigError, match="no model of its own"),
        chaos_agent(chaos, Agent(None, tools=[Tool(add)])),
    ):
        pass
    agent = Agent(Script(say("x")).model(), tools=[Tool(add)])
    repair = {"sub": ParamRepairer(tool_spec(Tool(add)))}
    with (
        pytest.raises(ChaosConfigError, match="'sub', which is not among the agent's tools: add"),
        chaos_agent(chaos, agent, repair=repair),
    ):
        pass
    with chaos_agent(chaos, agent):
        agent.run_sync("go")
    assert len(chaos.trace.of_type(ModelCall)) == 1
    agent.run_sync("again")  # outside the block: the agent is its own again
    assert len(chaos.trace.of_type(ModelCall)) == 1


def test_importing_the_package_and_loading_the_plugin_imports_no_pydantic_ai() -> None:
    code = textwrap.dedent(
        """
        import sys
        import pytest_agentchaos, pytest_agentchaos.plugin, pytest_agentchaos.adapters
        from pytest_agentchaos import Chaos
        Chaos.create().wrap(lambda x: x)(1)
        assert "pydantic_ai" not in sys.modules, "pydantic_ai was imported"
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
