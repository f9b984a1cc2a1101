"""The OpenAI Agents SDK adapter against the real package (no mocks of the SDK): ``FunctionTool``
tools wrapped by ``chaos.wrap``, models by ``chaos_model``, whole agents by ``chaos_agent``,
run by the SDK's own ``Runner`` with scripted ``Model`` subclasses, offline.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

import pytest

# `agents` must be the openai-agents package (another top-level `agents` has no `agents.run`)
if importlib.util.find_spec("agents") is None or importlib.util.find_spec("agents.run") is None:
    if os.environ.get("AGENTCHAOS_REQUIRE_FRAMEWORKS") == "1":
        raise RuntimeError(
            "the openai-agents extra is required here (AGENTCHAOS_REQUIRE_FRAMEWORKS=1)"
        )
    pytest.skip("the openai-agents extra is not installed", allow_module_level=True)

from agents import (
    Agent,
    FunctionTool,
    MaxTurnsExceeded,
    Model,
    ModelResponse,
    ModelSettings,
    ModelTracing,
    Runner,
    UserError,
    WebSearchTool,
    function_tool,
    set_tracing_disabled,
)
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.usage import Usage

from pytest_agentchaos import Chaos
from pytest_agentchaos.adapters import framework_of
from pytest_agentchaos.adapters.caps import record_cap
from pytest_agentchaos.adapters.openai_agents import (
    ChaosModel,
    chaos_agent,
    chaos_model,
    wrap_tool,
)
from pytest_agentchaos.errors import BudgetExhausted
from pytest_agentchaos.faults.plan import parse_faults
from pytest_agentchaos.inject.errors import InjectedFault
from pytest_agentchaos.profiles.budgets import Budgets
from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.trace.events import (
    FaultInjected,
    Halt,
    ModelCall,
    ModelResult,
    Repair,
    ToolCall,
    ToolResult,
)

set_tracing_disabled(True)

#: The keyword arguments the SDK passes to every model call.
NO_IDS: dict[str, Any] = {"previous_response_id": None, "conversation_id": None, "prompt": None}
#: What the SDK's default failure_error_function tells the model about any tool error.
SDK_ERROR = "An error occurred while running the tool. Please try again."

CALLS: list[Any] = []


@function_tool
def weather(city: str, days: int = 1) -> str:
    """The weather of a city for the next days."""
    CALLS.append(city)
    return f"sunny in {city} for {days} days"


@function_tool
async def aweather(city: str) -> str:
    """The weather of a city, asynchronously."""
    await asyncio.sleep(0)
    CALLS.append(city)
    return f"async sunny in {city}"


@function_tool(strict_mode=False)
def loose(city: str, note: str | None = None) -> str:
    """A tool with a non-strict schema."""
    CALLS.append(city)
    return f"noted {city}"


@function_tool
def convert(amount: float, unit: Literal["celsius", "fahrenheit"]) -> str:
    """Convert a temperature."""
    CALLS.append((amount, unit))
    return f"{amount} {unit}"


@function_tool
def broken(city: str) -> str:
    """A tool whose backend is down."""
    CALLS.append(city)
    raise ValueError(f"database for {city} is down")


def _shout(ctx: Any, error: Exception) -> str:
    return f"tool failed: {type(error).__name__}: {error}"


@function_tool(failure_error_function=_shout)
def shouting(city: str) -> str:
    """A tool with its own failure_error_function."""
    CALLS.append(city)
    return f"loud {city}"


@function_tool(failure_error_function=None)
def strict_errors(city: str) -> str:
    """A tool whose errors end the run."""
    CALLS.append(city)
    return f"strict {city}"


Turn = Sequence[Any]


class Scripted(Model):
    """A scripted model: ``turns[i]`` is its i-th answer (a list of output items), or
    ``turns(i, input)`` computes it; ``calls`` counts how often it was really asked."""

    def __init__(self, turns: Sequence[Turn] | Callable[[int, Any], Turn], tokens: int = 15):
        self.turns = turns
        self.tokens = tokens
        self.calls = 0
        self.inputs: list[Any] = []

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        n, self.calls = self.calls, self.calls + 1
        self.inputs.append(input)
        turns = self.turns
        output = turns(n, input) if callable(turns) else turns[min(n, len(turns) - 1)]
        usage = Usage(
            requests=1, input_tokens=self.tokens - 5, output_tokens=5, total_tokens=self.tokens
        )
        return ModelResponse(output=list(output), usage=usage, response_id=None)

    async def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        raise NotImplementedError("use ScriptedModel for streams")
        yield


@pytest.fixture(autouse=True)
def _clear() -> None:
    CALLS.clear()


def make(*faults: dict[str, Any], budgets: Budgets | None = None, **kw: Any) -> Chaos:
    return Chaos.create(faults=parse_faults(list(faults), "test"), seed=3, budgets=budgets, **kw)


def call(tool: str, args: Any, call_id: str = "c1") -> Any:
    return function_call(tool, args, call_id=call_id)


def say(text: str) -> Any:
    return assistant_message(text)


def run(chaos: Chaos, model: Model, tools: list[Any], **kw: Any) -> Any:
    agent = chaos_agent(chaos, Agent(name="assistant", model=model, tools=tools))
    return Runner.run_sync(agent, "What is the weather in Oslo?", **kw)


def tool_outputs(model: Scripted, turn: int) -> list[str]:
    """The tool outputs the model read in its ``turn``-th input."""
    return [i["output"] for i in model.inputs[turn] if i.get("type") == "function_call_output"]


def assert_complete(chaos: Chaos) -> None:
    """Every call in the trace has its result (same target and index)."""
    tools = {(e.tool, e.index) for e in chaos.trace.of_type(ToolCall)}
    assert tools == {(e.tool, e.index) for e in chaos.trace.of_type(ToolResult)}
    models = {(e.model, e.index) for e in chaos.trace.of_type(ModelCall)}
    assert models == {(e.model, e.index) for e in chaos.trace.of_type(ModelResult)}


# -- the wrapped tool is the same tool to the SDK and to the model ---------------------------------


@pytest.mark.parametrize("original", [weather, aweather, loose, convert], ids=lambda t: t.name)
def test_a_wrapped_tool_is_the_same_function_tool_to_the_model(original: FunctionTool) -> None:
    before = json.dumps(original.params_json_schema)
    with make() as chaos:
        wrapped = chaos.wrap(original)
    assert type(wrapped) is FunctionTool and wrapped is not original
    assert framework_of(original) is not None and framework_of(original).name == "openai_agents"
    assert (wrapped.name, wrapped.description, wrapped.strict_json_schema) == (
        original.name,
        original.description,
        original.strict_json_schema,
    )
    assert json.dumps(wrapped.params_json_schema) == before
    assert json.dumps(original.params_json_schema) == before
    assert wrapped.__wrapped__ is original.__wrapped__  # the decorated function, for direct calls
    assert original.on_invoke_tool is not wrapped.on_invoke_tool
    assert original.on_invoke_tool._function_tool is original  # the original is untouched


def test_a_function_tool_built_by_hand_is_wrapped_too() -> None:
    """A ``FunctionTool`` whose ``on_invoke_tool`` is the user's own: no failure handling
    around it, so the SDK ends the run on its error, and on an injected one."""

    async def echo(ctx: Any, input_json: str) -> str:
        CALLS.append(json.loads(input_json)["text"])
        return input_json

    schema = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    }
    by_hand = FunctionTool("echo", "Echo the text.", schema, echo)
    model = Scripted([[call("echo", {"text": "hi"})], [say("ok")]])
    with make() as chaos:
        wrapped = chaos.wrap(by_hand)
        assert json.dumps(wrapped.params_json_schema) == json.dumps(by_hand.params_json_schema)
        Runner.run_sync(Agent(name="a", model=model, tools=[wrapped]), "go")
    assert CALLS == ["hi"] and tool_outputs(model, 1) == ['{"text":"hi"}']
    assert [r.ok for r in chaos.trace.of_type(ToolResult)] == [True]

    CALLS.clear()
    model = Scripted([[call("echo", {"text": "hi"})], [say("ok")]])
    fault = {"kind": "timeout", "seconds": 1, "nth": 1, "channels": ["tool"]}
    with make(fault) as chaos, pytest.raises(UserError, match="Error running tool echo"):
        Runner.run_sync(Agent(name="a", model=model, tools=[chaos.wrap(by_hand)]), "go")
    assert CALLS == [] and chaos.trace.of_type(ToolResult)[0].error_type == "InjectedTimeout"


def test_a_name_given_is_the_tool_s_name_in_the_trace_only() -> None:
    model = Scripted([[call("weather", {"city": "Oslo"})], [say("ok")]])
    with make() as chaos:
        wrapped = chaos.wrap(weather, name="forecast")
        Runner.run_sync(Agent(name="a", model=model, tools=[wrapped]), "go")
    assert wrapped.name == "weather" and CALLS == ["Oslo"]
    assert [c.tool for c in chaos.trace.of_type(ToolCall)] == ["forecast"]


def test_the_original_tool_is_left_alone() -> None:
    with make() as chaos:
        chaos.wrap(weather)
        Runner.run_sync(
            Agent(
                name="a",
                model=Scripted([[call("weather", {"city": "Oslo"})], [say("ok")]]),
                tools=[weather],
            ),
            "go",
        )
    assert CALLS == ["Oslo"] and not chaos.trace.of_type(ToolCall)


@pytest.mark.parametrize("tool", [weather, aweather], ids=["sync", "async"])
def test_a_run_traces_each_tool_call_and_its_result(tool: FunctionTool) -> None:
    model = Scripted(
        [
            [call(tool.name, {"city": "Oslo"})],
            [call(tool.name, {"city": "Rome"}, "c2")],
            [say("done")],
        ]
    )
    with make() as chaos:
        result = run(chaos, model, [tool])
    assert result.final_output == "done" and CALLS == ["Oslo", "Rome"]
    calls = chaos.trace.of_type(ToolCall)
    assert [(c.tool, c.index, c.args) for c in calls] == [
        (tool.name, 1, {"city": "Oslo"}),
        (tool.name, 2, {"city": "Rome"}),
    ]
    outputs = [r.output for r in chaos.trace.of_type(ToolResult)]
    assert all(r.ok for r in chaos.trace.of_type(ToolResult))
    assert "Oslo" in outputs[0] and "Rome" in outputs[1]
    assert tool_outputs(model, 1) == [outputs[0]]  # the model read what the trace shows
    assert_complete(chaos)


# -- faults reach the model as the SDK surfaces a tool's errors ------------------------------------


@pytest.mark.parametrize("tool", [weather, aweather], ids=["sync", "async"])
def test_an_error_fault_reaches_the_model_as_the_sdk_s_fixed_message(tool: FunctionTool) -> None:
    model = Scripted([[call(tool.name, {"city": "Oslo"})], [say("sorry")]])
    with make({"kind": "timeout", "seconds": 5, "nth": 1, "channels": ["tool"]}) as chaos:
        result = run(chaos, model, [tool])
    assert CALLS == []  # the fault fired before the real tool ran
    assert result.final_output == "sorry"
    assert tool_outputs(model, 1) == [SDK_ERROR]
    (failed,) = chaos.trace.of_type(ToolResult)
    assert (failed.ok, failed.error_type) == (False, "InjectedTimeout")  # the real error
    assert "timed out after 5s" in failed.message and failed.t == 5.0
    assert_complete(chaos)


def test_the_tool_s_own_failure_error_function_gets_the_injected_error() -> None:
    model = Scripted([[call("shouting", {"city": "Oslo"})], [say("ok")]])
    with make({"kind": "connection_error", "nth": 1, "channels": ["tool"]}) as chaos:
        run(chaos, model, [shouting])
    (seen,) = tool_outputs(model, 1)
    assert seen.startswith("tool failed: InjectedConnectionError") and CALLS == []


def test_without_a_failure_error_function_the_injected_error_ends_the_run() -> None:
    """``failure_error_function=None``: the SDK lets a tool's error end the run; it does so for
    an injected one too, and the trace keeps it."""
    model = Scripted([[call("strict_errors", {"city": "Oslo"})], [say("ok")]])
    fault = {"kind": "timeout", "seconds": 1, "nth": 1, "channels": ["tool"]}
    with (
        make(fault) as chaos,
        pytest.raises(UserError, match="Error running tool strict_errors") as info,
    ):
        run(chaos, model, [strict_errors])
    assert isinstance(info.value.__cause__, InjectedFault)
    (failed,) = chaos.trace.of_type(ToolResult)
    assert failed.error_type == "InjectedTimeout" and CALLS == []


def test_the_tool_s_own_error_is_in_the_trace_and_hidden_from_the_model() -> None:
    model = Scripted([[call("broken", {"city": "Oslo"})], [say("ok")]])
    with make() as chaos:
        run(chaos, model, [broken])
    assert tool_outputs(model, 1) == [SDK_ERROR]
    (failed,) = chaos.trace.of_type(ToolResult)
    assert (failed.ok, failed.error_type, failed.message) == (
        False,
        "ValueError",
        "database for Oslo is down",
    )


def test_malformed_params_meet_the_sdk_s_own_validation() -> None:
    model = Scripted([[call("convert", {"amount": 20, "unit": "celsius"})], [say("ok")]])
    fault = {"kind": "malformed_params", "mutations": ["invalid_enum"], "nth": 1}
    with make(fault) as chaos:
        run(chaos, model, [convert])
    assert CALLS == []  # the SDK refused the corrupted arguments before the function ran
    assert tool_outputs(model, 1) == [SDK_ERROR]
    (fired,) = chaos.trace.of_type(FaultInjected)
    assert fired.kind == "malformed_params" and fired.detail["key"] == "unit"
    (failed,) = chaos.trace.of_type(ToolResult)
    assert (failed.ok, failed.error_type) == (False, "ModelBehaviorError")
    assert "Invalid JSON input for tool convert" in failed.message


def test_a_budget_halt_in_a_tool_is_not_swallowed_by_the_sdk_s_failure_handling() -> None:
    model = Scripted(lambda n, _: [call("weather", {"city": "Oslo"}, f"c{n}")])
    with (
        make(budgets=Budgets(max_tool_calls=2)) as chaos,
        pytest.raises(BudgetExhausted, match="max_tool_calls"),
    ):
        run(chaos, model, [weather])
    assert CALLS == ["Oslo", "Oslo"]
    assert all(SDK_ERROR not in out for out in tool_outputs(model, model.calls - 1))


# -- repair ----------------------------------------------------------------------------------------


def repairer(tool: FunctionTool) -> ParamRepairer:
    return ParamRepairer(ToolSpec.from_schema(tool.name, tool.params_json_schema))


def test_repair_fixes_corrupted_arguments_before_the_sdk_validates_them() -> None:
    model = Scripted([[call("convert", {"amount": 20, "unit": "celsius"})], [say("ok")]])
    fault = {"kind": "malformed_params", "mutations": ["invalid_enum"], "nth": 1}
    with make(fault) as chaos:
        tool = chaos.wrap(convert, repair=repairer(convert))
        Runner.run_sync(Agent(name="a", model=model, tools=[tool]), "go")
    assert CALLS == [(20.0, "celsius")]  # what the model meant
    assert tool_outputs(model, 1) == ["20.0 celsius"]
    (repair,) = chaos.trace.of_type(Repair)
    assert repair.ok and repair.after == {"amount": 20, "unit": "celsius"}
    assert_complete(chaos)


def test_repair_reads_arguments_the_sdk_cannot_parse() -> None:
    """The model's arguments are JSON-ish text: the SDK refuses them; the repairer reads them
    first and the tool runs."""
    bad = "{'city': 'Oslo',}"
    model = Scripted([[call("weather", bad)], [say("ok")]])
    with make() as chaos:
        result = run(chaos, model, [weather])
    assert CALLS == [] and tool_outputs(model, 1) == [SDK_ERROR] and result.final_output == "ok"
    (refused,) = chaos.trace.of_type(ToolResult)
    assert refused.error_type == "ModelBehaviorError"
    assert chaos.trace.of_type(ToolCall)[0].args == {"(arguments)": bad}

    model = Scripted([[call("weather", bad)], [say("ok")]])
    with make() as chaos:
        tool = chaos.wrap(weather, repair=repairer(weather))
        Runner.run_sync(Agent(name="a", model=model, tools=[tool]), "go")
    assert CALLS == ["Oslo"] and tool_outputs(model, 1) == ["sunny in Oslo for 1 days"]
    (repair,) = chaos.trace.of_type(Repair)
    assert repair.ok and repair.strategy == "json_repair"


def test_changed_arguments_do_not_trip_the_sdk_s_approval_check() -> None:
    """With a callable ``needs_approval`` the SDK prepares the model's arguments before the
    tool runs; arguments a fault changed are prepared again, not refused as a mismatch."""

    async def never(ctx: Any, params: dict[str, Any], call_id: str) -> bool:
        return False

    def switch(on: bool) -> str:
        """Switch the heating on or off."""
        CALLS.append(on)
        return f"heating {'on' if on else 'off'}"

    tool = function_tool(switch, needs_approval=never)
    model = Scripted([[call("switch", {"on": True})], [say("ok")]])
    fault = {"kind": "malformed_params", "mutations": ["wrong_type"], "nth": 1}
    with make(fault) as chaos:
        run(chaos, model, [tool])
    assert chaos.trace.of_type(FaultInjected)[0].detail["value"] == "yes"
    assert CALLS == [True]  # "yes" passes the SDK's (lax) validation
    assert tool_outputs(model, 1) == ["heating on"]
    assert [r.ok for r in chaos.trace.of_type(ToolResult)] == [True]


# -- the model wrapper -----------------------------------------------------------------------------


def test_the_model_wrapper_records_text_tool_calls_and_tokens() -> None:
    model = Scripted([[say("Let me look."), call("weather", {"city": "Oslo"})], [say("Sunny.")]])
    with make() as chaos:
        run(chaos, model, [weather])
    results = chaos.trace.of_type(ModelResult)
    assert [r.output for r in results] == ['Let me look.\n-> weather({"city": "Oslo"})', "Sunny."]
    assert [r.tokens for r in results] == [15, 15] and chaos.session.tokens == 30
    first_input = chaos.trace.of_type(ModelCall)[0].input
    assert first_input == {"input": [{"content": "What is the weather in Oslo?", "role": "user"}]}


def test_token_usage_counts_against_max_tokens() -> None:
    model = Scripted(lambda n, _: [call("weather", {"city": "Oslo"}, f"c{n}")], tokens=400)
    with (
        make(budgets=Budgets(max_tokens=1000)) as chaos,
        pytest.raises(BudgetExhausted, match="max_tokens"),
    ):
        run(chaos, model, [weather])
    assert model.calls == 3


def test_repeated_output_answers_for_the_model_and_its_tool_calls_run_again() -> None:
    """The replayed turn asks for the same call under a new call id: the SDK would skip a call
    id it has run already, a model that repeats itself asks again."""
    model = Scripted([[call("weather", {"city": "Oslo"})], [say("done")]])
    with make({"kind": "repeated_output", "channels": ["model"], "nth": 2}) as chaos:
        result = run(chaos, model, [weather])
    assert model.calls == 2  # the second turn was the fault's, the third the model's
    assert result.final_output == "done" and CALLS == ["Oslo", "Oslo"]
    outputs = [r.output for r in chaos.trace.of_type(ModelResult)]
    assert outputs[0] == outputs[1] == '-> weather({"city": "Oslo"})'
    ids = [i["call_id"] for i in model.inputs[-1] if i.get("type") == "function_call"]
    assert ids == ["c1", "c1~2"]
    assert_complete(chaos)


def test_paraphrased_output_rewrites_the_replayed_turn() -> None:
    text = "The build still fails. Let me look at the build log again."
    model = Scripted([[say(text)]])
    with make({"kind": "paraphrased_output", "channels": ["model"], "nth": 2}) as chaos:
        wrapped = chaos_model(chaos, model)

        async def twice() -> list[ModelResponse]:
            ask: Any = wrapped.get_response
            return [
                await ask(
                    None, "go", ModelSettings(), [], None, [], ModelTracing.DISABLED, **NO_IDS
                )
                for _ in range(2)
            ]

        first, second = asyncio.run(twice())
    assert model.calls == 1
    said = second.output[0].content[0].text
    assert said != text and "build" in said and first.output[0].content[0].text == text
    assert [r.output for r in chaos.trace.of_type(ModelResult)] == [text, said]


def test_a_model_fault_propagates_out_of_the_run_and_is_recorded() -> None:
    model = Scripted([[say("never")]])
    fault = {"kind": "http_error", "status": 503, "nth": 1, "channels": ["model"]}
    with make(fault) as chaos, pytest.raises(InjectedFault):
        run(chaos, model, [weather])
    assert model.calls == 0
    (failed,) = chaos.trace.of_type(ModelResult)
    assert not failed.ok and "503" in failed.message


def test_a_streamed_run_is_recorded_and_the_agent_sees_the_same_turns() -> None:
    scripted = ScriptedModel(
        [[call("weather", {"city": "Oslo"})], [say("Sunny in Oslo.")]],
        default_usage=Usage(requests=1, input_tokens=7, output_tokens=3, total_tokens=10),
    )
    with make() as chaos:
        agent = chaos_agent(chaos, Agent(name="a", model=scripted, tools=[weather]))

        async def go() -> Any:
            streamed = Runner.run_streamed(agent, "go")
            kinds = [event.type async for event in streamed.stream_events()]
            return streamed, kinds

        streamed, kinds = asyncio.run(go())
    assert streamed.final_output == "Sunny in Oslo." and CALLS == ["Oslo"]
    assert "raw_response_event" in kinds
    results = chaos.trace.of_type(ModelResult)
    assert [r.output for r in results] == ['-> weather({"city": "Oslo"})', "Sunny in Oslo."]
    assert [r.tokens for r in results] == [10, 10]
    assert_complete(chaos)


def test_a_replayed_stream_asks_for_its_tool_calls_anew() -> None:
    scripted = ScriptedModel([[call("weather", {"city": "Oslo"})], [say("done")]])
    with make({"kind": "repeated_output", "channels": ["model"], "nth": 2}) as chaos:
        agent = chaos_agent(chaos, Agent(name="a", model=scripted, tools=[weather]))

        async def go() -> Any:
            streamed = Runner.run_streamed(agent, "go")
            async for _ in streamed.stream_events():
                pass
            return streamed

        streamed = asyncio.run(go())
    assert streamed.final_output == "done" and CALLS == ["Oslo", "Oslo"]
    assert len(scripted.calls) == 2  # the replayed turn did not reach it
    assert_complete(chaos)


def test_a_paraphrased_stream_says_its_completed_response_in_other_words() -> None:
    text = "The build still fails. Let me look at the build log again."
    scripted = ScriptedModel([[say(text)], [say("unused")]])
    with make({"kind": "paraphrased_output", "channels": ["model"], "nth": 2}) as chaos:
        wrapped = chaos_model(chaos, scripted)

        async def texts() -> list[str]:
            said = []
            for _ in range(2):
                stream: Any = wrapped.stream_response(
                    None, "go", ModelSettings(), [], None, [], ModelTracing.DISABLED, **NO_IDS
                )
                events = [e async for e in stream]
                done = [e for e in events if e.type == "response.completed"][-1]
                said.append(done.response.output[0].content[0].text)
            return said

        first, second = asyncio.run(texts())
    assert first == text and second != text and "build" in second
    assert len(scripted.calls) == 1
    assert [r.output for r in chaos.trace.of_type(ModelResult)] == [text, second]


# -- hostile inputs --------------------------------------------------------------------------------


class Hostile:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")

    def __str__(self) -> str:
        return "a hostile but printable object"


def test_hostile_tool_outputs_are_recorded_safely() -> None:
    @function_tool
    def hostile(kind: str) -> Any:
        """Return something awkward."""
        return Hostile() if kind == "repr" else "x" * 10_000_000

    model = Scripted(
        [[call("hostile", {"kind": "repr"})], [call("hostile", {"kind": "big"}, "c2")], [say("ok")]]
    )
    with make() as chaos:
        started = time.perf_counter()
        run(chaos, model, [hostile])
        elapsed = time.perf_counter() - started
    assert tool_outputs(model, 1) == ["a hostile but printable object"]
    assert len(tool_outputs(model, 2)[-1]) == 10_000_000  # the model gets it all
    recorded = [r.output for r in chaos.trace.of_type(ToolResult)]
    assert isinstance(recorded[0], str) and "Hostile" in recorded[0]
    assert len(json.dumps(recorded[1])) < 100_000  # the trace keeps a capped copy
    assert elapsed < 30  # generous: no quadratic work on 10 MB


# -- wrapping twice, refusals ----------------------------------------------------------------------


def test_wrapping_twice_records_each_call_once() -> None:
    model = Scripted([[call("weather", {"city": "Oslo"})], [say("ok")]])
    with make() as chaos:
        twice = wrap_tool(chaos.session, wrap_tool(chaos.session, weather))
        agent = chaos_agent(chaos, chaos_agent(chaos, Agent(name="a", model=model, tools=[twice])))
        assert isinstance(agent.model, ChaosModel) and agent.model.model is model
        Runner.run_sync(agent, "go")
    assert len(chaos.trace.of_type(ToolCall)) == 1 and CALLS == ["Oslo"]
    assert len(chaos.trace.of_type(ModelCall)) == 2


def test_chaos_agent_keeps_other_tools_and_settings() -> None:
    search = WebSearchTool()
    agent = Agent(
        name="a", instructions="Be brief.", model=Scripted([[say("ok")]]), tools=[weather, search]
    )
    with make() as chaos:
        wrapped = chaos_agent(chaos, agent)
    assert wrapped.tools[1] is search and wrapped.tools[0] is not weather
    assert wrapped.instructions == "Be brief." and wrapped.model_settings == agent.model_settings
    assert agent.tools == [weather, search] and not isinstance(agent.model, ChaosModel)


def test_what_is_not_the_sdk_s_is_refused_in_one_line() -> None:
    with make() as chaos:
        with pytest.raises(TypeError, match="needs an Agents SDK FunctionTool"):
            wrap_tool(chaos.session, lambda: None)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="pass the Model itself"):
            chaos_model(chaos, "gpt-4.1")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="pass model="):
            chaos_agent(chaos, Agent(name="a", model="gpt-4.1"))
        with pytest.raises(TypeError, match="needs a Chaos"):
            chaos_model(object(), Scripted([]))
        with pytest.raises(TypeError, match="do not pass schema="):
            chaos.wrap(weather, schema={"type": "object"})


# -- the framework's cap ---------------------------------------------------------------------------


def test_max_turns_is_recorded_as_the_framework_s_hard_halt() -> None:
    model = Scripted(lambda n, _: [call("weather", {"city": "Oslo"}, f"c{n}")])
    with make() as chaos:
        with pytest.raises(MaxTurnsExceeded) as info:
            run(chaos, model, [weather], max_turns=3)
        halt = record_cap(chaos, info.value)
    assert halt is not None and halt.hard
    assert halt.detail["by"] == "framework" and halt.detail["framework"] == "openai_agents"
    assert halt.detail["cap"] == "max_turns" and halt.detail["limit"] == 3
    assert halt.detail["model_calls"] == 3 and chaos.trace.of_type(Halt) == [halt]


def test_must_halt_fails_when_max_turns_stopped_the_agent(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from agents import Agent, Model, ModelResponse, Runner, function_tool, set_tracing_disabled
        from agents.testing import function_call
        from agents.usage import Usage
        from pytest_agentchaos.adapters.openai_agents import chaos_agent

        set_tracing_disabled(True)

        class Again(Model):
            n = 0
            async def get_response(self, *args, **kwargs):
                self.n += 1
                out = [function_call("look", {}, call_id=f"c{self.n}")]
                return ModelResponse(output=out, usage=Usage(), response_id=None)
            async def stream_response(self, *args, **kwargs):
                raise NotImplementedError
                yield

        @function_tool
        def look() -> str:
            'Look again.'
            return "nothing new"

        @pytest.mark.chaos(profile="none")
        @pytest.mark.must_halt(max_model_calls=50)
        def test_runaway(chaos):
            agent = chaos_agent(chaos, Agent(name="a", model=Again(), tools=[look]))
            Runner.run_sync(agent, "go", max_turns=4)
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the framework's cap openai_agents max_turns=4*"])


# -- async and virtual time ------------------------------------------------------------------------


async def test_tool_calls_of_one_turn_overlap_in_virtual_time() -> None:
    """The SDK runs a turn's tool calls concurrently: two calls delayed 10 s each end at
    t=10, not t=20, and no wall time is spent."""
    both = [call("aweather", {"city": "Oslo"}), call("aweather", {"city": "Rome"}, "c2")]
    model = Scripted([both, [say("done")]])
    latency = {"kind": "latency", "seconds": 10, "channels": ["tool"]}
    with make(latency, virtual_sleep=True) as chaos:
        agent = chaos_agent(chaos, Agent(name="a", model=model, tools=[aweather]))
        started = time.perf_counter()
        result = await Runner.run(agent, "go")
        elapsed = time.perf_counter() - started
    assert result.final_output == "done" and sorted(CALLS) == ["Oslo", "Rome"]
    assert [r.t for r in chaos.trace.of_type(ToolResult)] == [10.0, 10.0]
    assert elapsed < 5


# -- loading ---------------------------------------------------------------------------------------


def test_importing_the_package_and_loading_the_plugin_imports_no_agents(tmp_path: Any) -> None:
    (tmp_path / "test_x.py").write_text("def test_x(chaos):\n    chaos.wrap(len)('ab')\n")
    code = (
        "import sys, pytest\n"
        "import pytest_agentchaos, pytest_agentchaos.plugin, pytest_agentchaos.adapters\n"
        "assert 'agents' not in sys.modules\n"
        "rc = pytest.main(['-q', '-p', 'no:cacheprovider', '-p', 'no:randomly', '.'])\n"
        "assert rc == 0, rc\n"
        "assert 'agents' not in sys.modules, 'the plugin imported agents'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)
