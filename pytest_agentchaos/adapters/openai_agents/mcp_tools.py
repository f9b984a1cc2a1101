"""An agent's MCP tools (``Agent(mcp_servers=...)``) under ``chaos_agent``: the SDK builds them
from the servers' listings on each turn; each one's invocation runs naming the agent
(:func:`~pytest_agentchaos.inject.acting.acting_as`), so the calls the wrapped MCP session
records under it (``chaos.wrap(server)``) carry that agent's name, as its function tools do.
The faults and the trace stay the MCP session's."""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any

from agents import Agent, FunctionTool

from ...inject.acting import acting_as


def name_mcp_calls(clone: Agent[Any], agent: str | None) -> None:
    """Make ``clone``'s MCP tools name ``agent`` on their calls (nothing without servers)."""
    if not getattr(clone, "mcp_servers", None):
        return
    get_mcp_tools = clone.get_mcp_tools  # the SDK's own, bound to the clone

    async def get_mcp_tools_naming(run_context: Any) -> list[Any]:
        tools = await get_mcp_tools(run_context)
        return [_naming(t, agent) if isinstance(t, FunctionTool) else t for t in tools]

    clone.__dict__["get_mcp_tools"] = get_mcp_tools_naming


def _named(call: Callable[..., Awaitable[Any]], agent: str | None) -> Callable[..., Any]:
    async def named(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        with acting_as(agent):
            return await call(*args, **kwargs)

    return named


def _naming(tool: FunctionTool, agent: str | None) -> FunctionTool:
    """A copy of ``tool`` whose invocation runs naming ``agent``."""
    invoker: Any = tool.on_invoke_tool
    inner = getattr(invoker, "_invoke_tool_impl", None)
    named = copy.copy(tool)
    if callable(inner) and callable(getattr(invoker, "__agents_bind_function_tool__", None)):
        # the SDK's invoker (failure handling around `inner`) rebound to the copy, as for the
        # wrapped function tools (see .tools)
        ours = _named(inner, agent)
        ours.__dict__.update(getattr(inner, "__dict__", {}))
        handler = copy.copy(invoker)
        handler._invoke_tool_impl = ours
        handler._function_tool = None
        named.on_invoke_tool = handler.__agents_bind_function_tool__(named)
    else:
        named.on_invoke_tool = _named(invoker, agent)
    return named
