"""The LangChain / LangGraph adapter against the real packages (no mocks of the framework):
langchain-core tools wrapped by ``chaos.wrap``, and ``create_agent`` under ``chaos_middleware``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Annotated, Any

import pytest

if importlib.util.find_spec("langchain") is None or importlib.util.find_spec("langgraph") is None:
    if os.environ.get("AGENTCHAOS_REQUIRE_FRAMEWORKS") == "1":
        raise RuntimeError("the langchain extra is required here (AGENTCHAOS_REQUIRE_FRAMEWORKS=1)")
    pytest.skip("the langchain extra is not installed", allow_module_level=True)

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.errors import GraphRecursionError
from pydantic import Field, ValidationError

from pytest_agentchaos import Chaos
from pytest_agentchaos.adapters import framework_of, require
from pytest_agentchaos.adapters.caps import record_cap
from pytest_agentchaos.adapters.langchain import chaos_middleware, model_schema
from pytest_agentchaos.errors import BudgetExhausted, ChaosConfigError
from pytest_agentchaos.faults.plan import parse_faults
from pytest_agentchaos.inject.errors import InjectedFault
from pytest_agentchaos.profiles.budgets import Budgets
from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.trace.events import Halt, ModelResult, ToolCall, ToolResult

CALLS: list[str] = []


@tool
def search(query: str, limit: int = 3) -> str:
    """Search the catalogue."""
    CALLS.append(query)
    return f"results for {query} x{limit}"


@tool
async def asearch(query: str) -> str:
    """Search the catalogue, asynchronously."""
    CALLS.append(query)
    return f"async results for {query}"


@tool
def book(date: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")], seats: int) -> str:
    """Book seats on a date (YYYY-MM-DD)."""
    return f"booked {seats} on {date}"


class Lookup(BaseTool):
    """A BaseTool subclass with its own _run and _arun."""

    name: str = "lookup"
    description: str = "Look a key up."

    def _run(self, key: str) -> str:
        CALLS.append(key)
        return f"value of {key}"

    async def _arun(self, key: str) -> str:
        CALLS.append(key)
        return f"async value of {key}"


class Scripted(GenericFakeChatModel):
    """A scripted chat model that create_agent can bind tools to."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:
        return self


@pytest.fixture(autouse=True)
def _clear() -> None:
    CALLS.clear()


def make(*faults: dict[str, Any], budgets: Budgets | None = None) -> Chaos:
    return Chaos.create(faults=parse_faults(list(faults), "test"), seed=3, budgets=budgets)


def calls_and_results(chaos: Chaos) -> tuple[list[ToolCall], list[ToolResult]]:
    return chaos.trace.of_type(ToolCall), chaos.trace.of_type(ToolResult)


def turn(
    text: str = "", *calls: tuple[str, dict[str, Any]], tokens: int | None = None
) -> AIMessage:
    usage = {"input_tokens": tokens, "output_tokens": 0, "total_tokens": tokens} if tokens else None
    tool_calls = [{"name": n, "args": a, "id": f"call-{n}-{i}"} for i, (n, a) in enumerate(calls)]
    return AIMessage(content=text, tool_calls=tool_calls, usage_metadata=usage)  # type: ignore[arg-type]


def agent(chaos: Chaos, script: Iterator[AIMessage], tools: list[Any], **kw: Any) -> Any:
    return create_agent(
        Scripted(messages=script), tools, middleware=[chaos_middleware(chaos, **kw)]
    )


# -- wrapped tools: the same tool to the framework and the model ------------------------------


@pytest.mark.parametrize("original", [search, asearch, book, Lookup()], ids=lambda t: t.name)
def test_a_wrapped_tool_is_the_same_tool_to_the_model(original: BaseTool) -> None:
    with make() as chaos:
        wrapped = chaos.wrap(original)
    assert type(wrapped) is type(original)
    assert (wrapped.name, wrapped.description) == (original.name, original.description)
    before = json.dumps(convert_to_openai_tool(original), sort_keys=True)
    assert json.dumps(convert_to_openai_tool(wrapped), sort_keys=True) == before
    assert framework_of(original) is not None and framework_of(original).name == "langchain"  # type: ignore[union-attr]


def test_calls_of_a_wrapped_tool_are_traced_and_the_original_is_untouched() -> None:
    with make() as chaos:
        wrapped = chaos.wrap(search)
        assert wrapped.invoke({"query": "lamps"}) == "results for lamps x3"
        assert search.invoke({"query": "chairs"}) == "results for chairs x3"  # not traced
    calls, results = calls_and_results(chaos)
    assert [c.args for c in calls] == [{"query": "lamps", "limit": 3}]
    assert [(r.ok, r.output) for r in results] == [(True, "results for lamps x3")]


def test_an_error_fault_raises_before_the_real_tool_runs() -> None:
    with make({"kind": "timeout", "tools": ["search"], "nth": 2}) as chaos:
        wrapped = chaos.wrap(search)
        wrapped.invoke({"query": "a"})
        with pytest.raises(InjectedFault, match="timed out"):
            wrapped.invoke({"query": "b"})
    assert CALLS == ["a"]  # the second call never reached the tool: no side effects
    _, results = calls_and_results(chaos)
    assert [r.ok for r in results] == [True, False]
    assert results[1].error_type == "InjectedTimeout"


def test_an_injected_error_is_handled_as_the_tool_s_own_error_would_be() -> None:
    """handle_tool_error catches only ToolException: an injected fault, like a real crash,
    propagates; the adapter does not change what the tool's settings catch."""
    careful = search.model_copy(update={"handle_tool_error": True})

    def broken(query: str) -> str:
        """Always fails the LangChain way."""
        raise ToolException(f"no index for {query}")

    catches = StructuredTool.from_function(broken, name="broken", handle_tool_error=True)
    with make({"kind": "connection_error", "tools": ["search"]}) as chaos:
        with pytest.raises(InjectedFault):
            chaos.wrap(careful).invoke({"query": "a"})
        assert chaos.wrap(catches).invoke({"query": "x"}) == "no index for x"
    _, results = calls_and_results(chaos)
    assert [(r.tool, r.ok) for r in results] == [("search", False), ("broken", False)]


def test_malformed_params_meet_the_tool_s_own_validation() -> None:
    fault = {"kind": "malformed_params", "tools": ["asearch"], "nth": 1, "mutations": "wrong_type"}
    with make(fault) as chaos:
        wrapped = chaos.wrap(asearch)
        with pytest.raises(ValidationError):
            asyncio.run(wrapped.ainvoke({"query": "a"}))
        lenient = wrapped.model_copy(update={"handle_validation_error": True})
        assert asyncio.run(lenient.ainvoke({"query": "b"})) == "async results for b"
    assert CALLS == ["b"]
    _, results = calls_and_results(chaos)
    assert results[0].error_type == "ValidationError"


@pytest.mark.parametrize("use_async", [False, True])
def test_a_base_tool_subclass_is_wrapped_sync_and_async(use_async: bool) -> None:
    with make({"kind": "http_error", "status": 503, "tools": ["lookup"], "nth": 1}) as chaos:
        wrapped = chaos.wrap(Lookup())
        run = (lambda x: asyncio.run(wrapped.ainvoke(x))) if use_async else wrapped.invoke
        with pytest.raises(InjectedFault):
            run({"key": "k1"})
        assert run({"key": "k2"}).endswith("value of k2")
    assert CALLS == ["k2"]
    calls, results = calls_and_results(chaos)
    assert len(calls) == len(results) == 2  # counted once, also on the async path


def test_a_sync_tool_called_asynchronously_is_counted_once() -> None:
    with make() as chaos:
        asyncio.run(chaos.wrap(search).ainvoke({"query": "a"}))
    calls, results = calls_and_results(chaos)
    assert len(calls) == len(results) == 1


def test_wrapping_twice_records_each_call_once() -> None:
    with make() as chaos:
        twice = chaos.wrap(chaos.wrap(search))
        twice.invoke({"query": "a"})
    calls, _ = calls_and_results(chaos)
    assert len(calls) == 1


def test_replayed_output_returns_an_earlier_answer_without_calling() -> None:
    with make({"kind": "repeated_output", "tools": ["search"], "nth": 2}) as chaos:
        wrapped = chaos.wrap(search)
        assert wrapped.invoke({"query": "a"}) == "results for a x3"
        assert wrapped.invoke({"query": "b"}) == "results for a x3"
    assert CALLS == ["a"]


def test_a_schema_argument_is_refused_for_a_framework_tool() -> None:
    with make() as chaos, pytest.raises(TypeError, match="brings its own argument schema"):
        chaos.wrap(search, schema={"type": "object"})


def test_wrap_tools_mixes_framework_tools_and_plain_functions() -> None:
    def plain(x: int) -> int:
        return x + 1

    with make() as chaos:
        lc, fn = chaos.wrap_tools([search, plain])
        assert type(lc) is StructuredTool and fn(x=1) == 2
        lc.invoke({"query": "a"})
    calls, _ = calls_and_results(chaos)
    assert [c.tool for c in calls] == ["plain", "search"]


def test_hostile_outputs_are_recorded_safely() -> None:
    class Nasty:
        def __repr__(self) -> str:
            raise RuntimeError("no repr for you")

    def nasty() -> Any:
        return Nasty()

    def huge() -> str:
        return "x" * 10_000_000

    with make() as chaos:
        chaos.wrap(StructuredTool.from_function(nasty, description="nasty")).invoke({})
        assert (
            len(chaos.wrap(StructuredTool.from_function(huge, description="huge")).invoke({}))
            == 10_000_000
        )
    _, results = calls_and_results(chaos)
    assert all(r.ok for r in results)
    assert len(json.dumps(results[1].output)) < 100_000  # capped in the trace


# -- create_agent under the middleware ---------------------------------------------------------


def test_the_middleware_records_model_turns_and_tool_calls() -> None:
    script = iter([turn("let me look", ("search", {"query": "lamps"}), tokens=20), turn("done")])
    with make() as chaos:
        out = agent(chaos, script, [search]).invoke({"messages": [HumanMessage("find lamps")]})
    assert out["messages"][-1].content == "done"
    results = chaos.trace.of_type(ModelResult)
    assert [r.output for r in results] == ['let me look\n-> search({"query": "lamps"})', "done"]
    assert results[0].tokens == 20 and chaos.session.tokens == 20
    calls, tool_results = calls_and_results(chaos)
    assert [c.args for c in calls] == [{"query": "lamps"}]
    assert [r.output for r in tool_results] == ["results for lamps x3"]


def test_token_usage_counts_against_max_tokens() -> None:
    script = iter([turn("a", ("search", {"query": "x"}), tokens=60)] * 3 + [turn("done")])
    with make(budgets=Budgets(max_tokens=100)) as chaos, pytest.raises(BudgetExhausted):
        agent(chaos, script, [search]).invoke({"messages": [HumanMessage("go")]})


def test_repeated_output_on_the_model_is_a_new_message_not_the_old_one() -> None:
    script = iter([turn("step", ("search", {"query": "a"})), turn("done"), turn("unused")])
    with make({"kind": "repeated_output", "channels": ["model"], "nth": 2}) as chaos:
        out = agent(chaos, script, [search]).invoke({"messages": [HumanMessage("go")]})
    ai = [m for m in out["messages"] if isinstance(m, AIMessage)]
    assert [m.content for m in ai] == ["step", "step", "done"]  # the repeat was added
    assert len({m.id for m in ai}) == 3
    assert CALLS == ["a", "a"]  # and its tool call ran again, as a repeating model's would


def test_a_tool_fault_through_the_middleware_propagates_as_the_tool_node_lets_it() -> None:
    script = iter([turn("", ("search", {"query": "a"})), turn("done")])
    with make({"kind": "timeout", "tools": ["search"]}) as chaos, pytest.raises(InjectedFault):
        agent(chaos, script, [search]).invoke({"messages": [HumanMessage("go")]})
    assert CALLS == []
    _, results = calls_and_results(chaos)
    assert [r.error_type for r in results] == ["InjectedTimeout"]


def test_malformed_params_through_the_middleware_reach_the_model_as_a_tool_error() -> None:
    script = iter([turn("", ("search", {"query": "a"})), turn("done")])
    with make(
        {"kind": "malformed_params", "tools": ["search"], "mutations": "missing_required"}
    ) as chaos:
        out = agent(chaos, script, [search]).invoke({"messages": [HumanMessage("go")]})
    errors = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
    assert len(errors) == 1 and CALLS == []
    _, results = calls_and_results(chaos)
    assert [r.ok for r in results] == [False]


def test_the_middleware_repairs_the_model_s_arguments_before_validation() -> None:
    spec = ToolSpec.from_schema("book", model_schema(book))
    script = iter([turn("", ("book", {"date": "2025/06/01", "seats": "two"})), turn("done")])
    with make() as chaos:
        repairers = {"book": ParamRepairer(spec)}
        out = agent(chaos, script, [book], repairers=repairers).invoke(
            {"messages": [HumanMessage("book two seats on 2025/06/01")]}
        )
    answers = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert answers == ["booked 2 on 2025-06-01"]
    repairs = [e for e in chaos.trace if e.type_name == "Repair"]
    assert repairs and repairs[0].after == {"date": "2025-06-01", "seats": 2}


def test_tools_wrapped_by_chaos_are_not_recorded_twice_by_the_middleware() -> None:
    script = iter([turn("", ("search", {"query": "a"})), turn("done")])
    with make() as chaos:
        agent(chaos, script, chaos.wrap_tools([search])).invoke({"messages": [HumanMessage("go")]})
    calls, results = calls_and_results(chaos)
    assert len(calls) == len(results) == 1


def test_the_middleware_refuses_what_is_not_a_chaos_run() -> None:
    with pytest.raises(TypeError, match="needs a Chaos"):
        chaos_middleware(object())
    with make() as chaos, pytest.raises(TypeError, match="repairers"):
        chaos_middleware(chaos, repairers=[("book", None)])  # type: ignore[arg-type]


# -- the framework's cap ------------------------------------------------------------------------


def looping(n: int) -> Iterator[AIMessage]:
    for i in range(n):
        yield turn("again", ("search", {"query": f"q{i}"}))


def test_a_recursion_limit_is_recorded_as_the_framework_s_hard_halt() -> None:
    with make() as chaos:
        with pytest.raises(GraphRecursionError) as caught:
            agent(chaos, looping(50), [search]).invoke(
                {"messages": [HumanMessage("go")]}, {"recursion_limit": 6}
            )
        halt = record_cap(chaos, caught.value)
        assert record_cap(chaos, caught.value) is halt  # once per exception
    assert halt is not None and halt.hard
    assert halt.detail["by"] == "framework" and halt.detail["cap"] == "recursion_limit"
    assert halt.detail["limit"] == 6
    assert halt.detail["model_calls"] >= 3 and halt.detail["tool_calls"] >= 2
    assert chaos.trace.of_type(Halt) == [halt]


def test_must_halt_fails_when_the_framework_s_cap_stopped_the_agent(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_cap="""
        import pytest
        from langgraph.errors import GraphRecursionError

        @pytest.mark.must_halt(max_steps=100)
        def test_agent(chaos):
            raise GraphRecursionError("Recursion limit of 25 reached without a stop condition.")
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*the framework's cap langgraph recursion_limit=25*",
            "*capped:langgraph.recursion_limit*",
            "*halted by the harness: 0; stopped by a framework's cap: 1*",
        ]
    )


# -- loading ---------------------------------------------------------------------------------------


def test_loading_the_plugin_and_wrapping_a_function_imports_no_framework() -> None:
    code = (
        "import sys, pytest_agentchaos.plugin\n"
        "from pytest_agentchaos import Chaos\n"
        "c = Chaos.create(); c.wrap(lambda x: x)(1); c.close()\n"
        "names = ('langchain_core', 'langgraph', 'pydantic_ai', 'agents')\n"
        "bad = [m for m in names if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_missing_framework_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "langchain_core" else real(name, *a),
    )
    with pytest.raises(ChaosConfigError, match=r"pip install 'pytest-agentchaos\[langchain\]'"):
        require("langchain")
    with pytest.raises(ChaosConfigError, match="no adapter for 'crewai'"):
        require("crewai")


def test_langgraph_s_tool_node_runs_wrapped_tools_and_its_error_handling_is_unchanged() -> None:
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    asked = {"messages": [turn("", ("search", {"query": "a"}), ("search", {"query": "b"}))]}
    with make({"kind": "timeout", "tools": ["search"], "nth": 2}) as chaos:
        graph = StateGraph(MessagesState)
        graph.add_node("tools", ToolNode(chaos.wrap_tools([search]), handle_tool_errors=True))
        graph.add_edge(START, "tools")
        graph.add_edge("tools", END)
        answers = graph.compile().invoke(asked)["messages"][1:]
    # the tool node runs both calls at once: which one arrives second (and times out) varies
    failed = [m for m in answers if m.status == "error"]
    ok = [m for m in answers if m.status != "error"]
    assert len(failed) == len(ok) == 1  # the tool node's own handling of the error
    assert "timed out" in str(failed[0].content)
    assert ok[0].content == f"results for {CALLS[0]} x3" and len(CALLS) == 1
    calls, results = calls_and_results(chaos)
    assert len(calls) == len(results) == 2
