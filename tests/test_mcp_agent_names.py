"""MCP tool calls made by a framework agent carry that agent's name in the trace, as its
function tools' calls do (pydantic-ai's MCPToolset, the Agents SDK's mcp_servers= under
chaos_agent, LangGraph agents calling a session as langchain-mcp-adapters' tools do): two
agents sharing one MCP server (one wrapped session), run one after the other and
concurrently; an agent run inside another's tool; a call made outside any agent stays
unnamed; threads and hostile names."""

from __future__ import annotations

import asyncio
import importlib.util
from typing import Any

import pytest
from mcp_helpers import SHOP
from mcp_helpers import mcp as _sdk  # noqa: F401  # imported first: skips without the SDK

from pytest_agentchaos import Chaos  # noqa: E402
from pytest_agentchaos.inject.acting import acting_agent, acting_as  # noqa: E402


def need(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")


def _echo_model(word: str) -> Any:
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    def model(messages: list[Any], info: Any) -> ModelResponse:
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("echo", {"text": word})])

    return FunctionModel(model)


def _named_calls(chaos: Any) -> list[tuple[str, str | None]]:
    return sorted((c.args["text"], c.agent) for c in chaos.trace.tool_calls("echo"))


@pytest.mark.parametrize("concurrent", [False, True])
async def test_pydantic_ai_agents_sharing_an_mcp_toolset_are_each_named(concurrent: bool) -> None:
    need("pydantic_ai")
    need("fastmcp")
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset

    with Chaos.create(faults=[]) as chaos:
        toolset = chaos.wrap(MCPToolset(SHOP, max_retries=3))
        async with toolset:
            buyer = Agent(_echo_model("b"), name="buyer", toolsets=[toolset])
            seller = Agent(_echo_model("s"), name="seller", toolsets=[toolset])
            if concurrent:
                await asyncio.gather(buyer.run("go"), seller.run("go"))
            else:
                await buyer.run("go")
                await seller.run("go")
            # a call made outside any agent stays unnamed
            await toolset.direct_call_tool("echo", {"text": "x"})
    assert _named_calls(chaos) == [("b", "buyer"), ("s", "seller"), ("x", None)]


async def test_pydantic_ai_agent_whose_name_is_not_a_string_is_recorded_unnamed() -> None:
    need("pydantic_ai")
    need("fastmcp")
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset

    with Chaos.create(faults=[]) as chaos:
        toolset = chaos.wrap(MCPToolset(SHOP, max_retries=3))
        async with toolset:
            agent = Agent(_echo_model("h"), toolsets=[toolset])
            agent.name = 42  # type: ignore[assignment]  # not a string: no name for it
            await agent.run("go")
    assert _named_calls(chaos) == [("h", None)]


def test_acting_agent_nests_and_does_not_cross_threads() -> None:
    import threading

    seen: list[str | None] = []
    assert acting_agent() is None
    with acting_as("outer"):
        with acting_as("inner"):  # an agent run as a tool of another: the inner one wins
            assert acting_agent() == "inner"
        assert acting_agent() == "outer"
        # contextvars do not cross threads: a plain thread's MCP calls are unnamed
        thread = threading.Thread(target=lambda: seen.append(acting_agent()))
        thread.start()
        thread.join()
    assert acting_agent() is None
    assert seen == [None]
    with acting_as(None):  # an agent without a usable name
        assert acting_agent() is None


@pytest.mark.parametrize("concurrent", [False, True])
async def test_agents_sdk_agents_sharing_an_mcp_server_are_each_named(concurrent: bool) -> None:
    need("agents.mcp")
    import sys

    from agents import Agent, Runner
    from agents.mcp import MCPServerStdio
    from agents.testing import ScriptedModel, assistant_message, function_call
    from mcp_helpers import new_token, server_env

    from pytest_agentchaos.adapters.openai_agents import chaos_agent

    def model(word: str) -> Any:
        return ScriptedModel(
            [[function_call("echo", {"text": word}, call_id="c1")], [assistant_message("done")]]
        )

    server = MCPServerStdio(
        params={"command": sys.executable, "args": [str(SHOP)], "env": server_env(new_token())},
        client_session_timeout_seconds=10,
    )
    with Chaos.create(faults=[]) as chaos:
        chaos.wrap(server)
        async with server:
            buyer = chaos_agent(chaos, Agent(name="buyer", model=model("b"), mcp_servers=[server]))
            seller = chaos_agent(
                chaos, Agent(name="seller", model=model("s"), mcp_servers=[server])
            )
            if concurrent:
                await asyncio.gather(Runner.run(buyer, "go"), Runner.run(seller, "go"))
            else:
                await Runner.run(buyer, "go")
                await Runner.run(seller, "go")
            await server.call_tool("echo", {"text": "x"})  # outside any agent: unnamed
    assert _named_calls(chaos) == [("b", "buyer"), ("s", "seller"), ("x", None)]


async def test_agents_sdk_agent_used_as_a_tool_names_its_own_mcp_calls() -> None:
    # the inner agent's name wins inside its run; the outer's calls keep the outer's
    need("agents.mcp")
    import sys

    from agents import Agent, Runner
    from agents.mcp import MCPServerStdio
    from agents.testing import ScriptedModel, assistant_message, function_call
    from mcp_helpers import new_token, server_env

    from pytest_agentchaos.adapters.openai_agents import chaos_agent

    server = MCPServerStdio(
        params={"command": sys.executable, "args": [str(SHOP)], "env": server_env(new_token())},
        client_session_timeout_seconds=10,
    )
    helper_model = ScriptedModel(
        [[function_call("echo", {"text": "h"}, call_id="h1")], [assistant_message("helped")]]
    )
    boss_model = ScriptedModel(
        [
            [function_call("echo", {"text": "o"}, call_id="o1")],
            [function_call("helper", {"input": "go"}, call_id="o2")],
            [assistant_message("done")],
        ]
    )
    with Chaos.create(faults=[]) as chaos:
        chaos.wrap(server)
        async with server:
            helper = Agent(name="helper", model=helper_model, mcp_servers=[server])
            boss = Agent(
                name="boss",
                model=boss_model,
                mcp_servers=[server],
                tools=[helper.as_tool(tool_name="helper", tool_description="helps")],
            )
            result = await Runner.run(chaos_agent(chaos, boss), "go")
    assert result.final_output == "done"
    assert _named_calls(chaos) == [("h", "helper"), ("o", "boss")]


@pytest.mark.parametrize("concurrent", [False, True])
async def test_langgraph_agents_sharing_an_mcp_session_are_each_named(concurrent: bool) -> None:
    # langchain-mcp-adapters' tools call the session's call_tool from the tool's coroutine;
    # the agent is the one LangGraph's run config names, as for the agents' function tools
    need("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import StructuredTool
    from mcp_helpers import in_memory

    import pytest_agentchaos.adapters.langchain  # noqa: F401  # the adapter of the app's models

    class Scripted(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:
            return self

    def model(word: str) -> Scripted:
        call = {"name": "echo", "args": {"text": word}, "id": f"call-{word}"}
        return Scripted(messages=iter([AIMessage("", tool_calls=[call]), AIMessage("done")]))

    with Chaos.create(faults=[]) as chaos:
        async with in_memory() as session:
            chaos.wrap(session)

            async def echo(text: str) -> str:
                result = await session.call_tool("echo", {"text": text})
                return str(result.content[0].text)

            tool = StructuredTool.from_function(coroutine=echo, name="echo", description="echo")
            buyer = create_agent(model("b"), [tool], name="buyer")
            seller = create_agent(model("s"), [tool], name="seller")
            go = {"messages": [HumanMessage("go")]}
            if concurrent:
                await asyncio.gather(buyer.ainvoke(go), seller.ainvoke(go))
            else:
                await buyer.ainvoke(go)
                await seller.ainvoke(go)
            await echo("x")  # outside any agent: unnamed
    assert _named_calls(chaos) == [("b", "buyer"), ("s", "seller"), ("x", None)]


async def test_asyncio_to_thread_carries_the_acting_agent_an_executor_does_not() -> None:
    with acting_as("worker"):
        assert await asyncio.to_thread(acting_agent) == "worker"  # it copies the context
        loop = asyncio.get_running_loop()
        assert await loop.run_in_executor(None, acting_agent) is None  # it does not


def test_a_run_context_reader_that_fails_or_answers_nonsense_names_nobody() -> None:
    from pytest_agentchaos.inject import acting

    def broken(session: Any) -> str | None:
        raise RuntimeError("no run context")

    def nonsense(session: Any) -> Any:
        return 42

    saved = list(acting._READERS)
    try:
        acting.read_agents_with(broken)
        acting.read_agents_with(nonsense)
        acting.read_agents_with(broken)  # once only
        assert acting._READERS.count(broken) == 1
        with Chaos.create(faults=[]) as chaos:
            assert acting_agent(chaos.session) is None
            with acting_as("seam"):  # what a seam said comes first
                assert acting_agent(chaos.session) == "seam"
    finally:
        acting._READERS[:] = saved


async def test_pydantic_ai_agent_delegating_to_another_names_each_mcp_call() -> None:
    # an agent run from a tool of another: the inner agent's name wins inside its run
    need("pydantic_ai")
    need("fastmcp")
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    def boss_model(messages: list[Any], info: Any) -> ModelResponse:
        returned = [p.tool_name for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if not returned:
            return ModelResponse(parts=[ToolCallPart("echo", {"text": "o"})])
        if returned == ["echo"]:
            return ModelResponse(parts=[ToolCallPart("delegate", {})])
        return ModelResponse(parts=[TextPart("done")])

    with Chaos.create(faults=[]) as chaos:
        toolset = chaos.wrap(MCPToolset(SHOP, max_retries=3))
        async with toolset:
            helper = Agent(_echo_model("h"), name="helper", toolsets=[toolset])
            boss = Agent(FunctionModel(boss_model), name="boss", toolsets=[toolset])

            @boss.tool_plain
            async def delegate() -> str:
                return (await helper.run("go")).output

            assert (await boss.run("go")).output == "done"
    assert _named_calls(chaos) == [("h", "helper"), ("o", "boss")]
