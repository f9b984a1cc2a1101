"""Each framework's documented way of using an MCP server, under chaos with one line
(``chaos.wrap(server)``), against real servers run locally: the OpenAI Agents SDK's
``MCPServerStdio`` in ``Agent(mcp_servers=...)``, pydantic-ai's ``MCPToolset``; and the
reference time and git servers from PyPI (the git one on a temporary repository)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import (
    REQUIRED,
    SHOP,
    TIME_ARGS,
    connect,
    git_repo,
    new_token,
    processes,
    server_env,
)
from mcp_helpers import mcp as _sdk  # imported first: it skips this module without the SDK

from pytest_agentchaos import Chaos  # noqa: E402

MCPError = _sdk.MCPError


def text(result: Any) -> str:
    return "\n".join(b.text for b in result.content if b.type == "text")


def wire(result: Any) -> str:
    return json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True))


def need(module: str, extra: str) -> None:
    if importlib.util.find_spec(module) is None:
        if REQUIRED:
            raise RuntimeError(f"{module} is required here (AGENTCHAOS_REQUIRE_FRAMEWORKS=1)")
        pytest.skip(f"{module} is not installed (pip install 'pytest-agentchaos[{extra}]')")


# -- the reference servers ---------------------------------------------------------------------


async def test_the_time_server_under_chaos_its_listing_and_its_own_errors() -> None:
    need("mcp_server_time", "dev")
    token = new_token()
    async with connect(TIME_ARGS, token=token) as session:
        direct = wire(await session.list_tools())
        own = await session.call_tool("get_current_time", {"timezone": "Mars/Olympus"})
        with Chaos.create(faults=[{"kind": "http_error", "status": 502, "nth": 1}]) as chaos:
            chaos.wrap(session)
            assert wire(await session.list_tools()) == direct
            injected = await session.call_tool("get_current_time", {"timezone": "Europe/Paris"})
            real = await session.call_tool("get_current_time", {"timezone": "Europe/Paris"})
        assert len(processes(token)) == 1
    assert processes(token) == []
    assert own.is_error and injected.is_error and not real.is_error
    assert text(own).startswith("Error executing tool get_current_time: ")
    assert text(injected) == "Error executing tool get_current_time: HTTP 502 Bad Gateway"
    assert json.loads(text(real))["timezone"] == "Europe/Paris"
    assert [r.ok for r in chaos.trace.tool_results()] == [False, True]


async def test_the_git_server_on_a_temporary_repository(tmp_path: Path) -> None:
    need("mcp_server_git", "dev")
    repo = git_repo(tmp_path / "repo")
    args = ("-m", "mcp_server_git", "--repository", str(repo))
    faults = [
        {"kind": "repeated_output", "tools": ["git_status"], "nth": 2},
        {"kind": "malformed_params", "tools": ["git_log"], "mutations": ["missing_required"]},
    ]
    async with connect(args) as session:
        with Chaos.create(faults=faults, seed=5) as chaos:
            chaos.wrap(session)
            schemas = {t.name: t.input_schema for t in (await session.list_tools()).tools}
            status = await session.call_tool("git_status", {"repo_path": str(repo)})
            (repo / "notes.txt").write_text("two\n")
            stale = await session.call_tool("git_status", {"repo_path": str(repo)})
            log = await session.call_tool("git_log", {"repo_path": str(repo)})
    assert "README.md" in text(status) and "notes.txt" not in text(status)
    assert text(stale) == text(status)  # the repeated answer: the change is not in it
    assert "repo_path" in schemas["git_log"]["required"]
    (corrupt,) = chaos.trace.faults("malformed_params")
    assert corrupt.detail["key"] == "repo_path"  # the only required key of the schema
    assert log.is_error  # the real server's own validation rejected the call


# -- OpenAI Agents SDK -------------------------------------------------------------------------


async def test_agents_sdk_mcp_server_stdio_under_chaos_in_an_agent_run() -> None:
    need("agents.mcp", "openai-agents")
    from agents import Agent, Runner
    from agents.mcp import MCPServerStdio
    from agents.testing import ScriptedModel, assistant_message, function_call

    token = new_token()
    server = MCPServerStdio(
        params={"command": sys.executable, "args": [str(SHOP)], "env": server_env(token)},
        client_session_timeout_seconds=10,
    )
    model = ScriptedModel(
        [
            [function_call("search_products", {"query": "rain jacket"}, call_id="c1")],
            [function_call("search_products", {"query": "rain jacket"}, call_id="c2")],
            [function_call("search_products", {"query": "rain jacket"}, call_id="c3")],
            [assistant_message("done")],
        ]
    )
    faults = [{"kind": "http_error", "status": 503, "nth": 1}, {"kind": "timeout", "nth": 2}]
    with Chaos.create(faults=faults) as chaos:
        chaos.wrap(server)  # the one line
        async with server:
            agent = Agent(name="shopper", model=model, mcp_servers=[server])
            result = await Runner.run(agent, "find a rain jacket")
    assert result.final_output == "done"
    outputs = [str(i.output) for i in result.new_items if type(i).__name__ == "ToolCallOutputItem"]
    assert "Error executing tool search_products: HTTP 503 Service Unavailable" in outputs[0]
    assert "Rain jacket" in outputs[2]
    results = chaos.trace.tool_results("search_products")
    assert [(r.ok, r.error_type) for r in results] == [
        (False, "ToolError"),
        (False, "MCPError"),
        (True, None),
    ]
    assert chaos.session.now() == pytest.approx(10.0)  # the session's read timeout, virtual
    assert processes(token) == []


# -- pydantic-ai -------------------------------------------------------------------------------


async def test_pydantic_ai_mcp_toolset_under_chaos_in_an_agent_run() -> None:
    need("pydantic_ai", "pydantic-ai")
    need("fastmcp", "frameworks")
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        RetryPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    seen: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts[-1]
        if isinstance(last, (ToolReturnPart, RetryPromptPart)):
            seen.append(type(last).__name__ + ": " + str(last.content))
            if isinstance(last, ToolReturnPart) and last.content == "hello":
                return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("echo", {"text": "hello"})])

    faults = [{"kind": "http_error", "nth": 1}, {"kind": "protocol_error", "nth": 2}]
    with Chaos.create(faults=faults) as chaos:
        toolset = chaos.wrap(MCPToolset(SHOP, max_retries=3))  # the one line
        result = await Agent(FunctionModel(model), toolsets=[toolset]).run("say hello")
    assert result.output == "done"
    # pydantic-ai's own handling: the tool error and the MCPError reach the model as answers
    assert seen[0] == "ToolReturnPart: Error executing tool echo: HTTP 500 Internal Server Error"
    assert seen[1] == "ToolReturnPart: Internal error"
    assert seen[2] == "ToolReturnPart: hello"
    assert [r.ok for r in chaos.trace.tool_results("echo")] == [False, False, True]


async def test_chaos_agent_delivers_an_mcp_toolsets_faults_as_mcp_does() -> None:
    # chaos_agent(chaos, agent) wrapped the agent's MCPToolset in its generic toolset wrapper:
    # an injected 503 escaped agent.run as a Python exception no MCP server can send, where
    # chaos.wrap(MCPToolset(...)) hands the model the tool error MCP delivers (new-user trial)
    need("pydantic_ai", "pydantic-ai")
    need("fastmcp", "frameworks")
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from pytest_agentchaos.adapters.pydantic_ai import chaos_agent, chaos_toolset

    seen: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart):
            seen.append(str(last.content))
            if last.content == "hello":
                return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("echo", {"text": "hello"})])

    faults = [{"kind": "http_error", "status": 503, "nth": 1, "tools": ["echo"]}]
    with Chaos.create(faults=faults) as chaos:
        toolset = MCPToolset(SHOP, max_retries=3)
        agent = Agent(FunctionModel(model), toolsets=[toolset])
        with chaos_agent(chaos, agent):
            result = await agent.run("say hello")
        # under chaos already: wrapping it again is refused, as for any toolset
        with pytest.raises(Exception, match="under chaos already|wrapped already"):
            chaos_toolset(chaos, toolset)
    assert result.output == "done"
    assert seen == ["Error executing tool echo: HTTP 503 Service Unavailable", "hello"]
    assert [r.ok for r in chaos.trace.tool_results("echo")] == [False, True]
