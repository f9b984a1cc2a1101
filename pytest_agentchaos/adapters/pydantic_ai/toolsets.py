"""pydantic-ai toolsets under chaos: a ``FunctionToolset`` of wrapped tools, any other toolset
inside a :class:`ChaosToolset`."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from typing import Any

from ...errors import ChaosConfigError
from ...inject.session import ChaosSession
from ...saferepr import safe_repr
from .. import framework_of, require
from .framework import AbstractToolset, FunctionToolset, RunContext, ToolsetTool, WrapperToolset
from .runs import _session
from .tools import _Hook, _is_wrapped_tool, _repairer, _Unvalidated, _wrap_tool


def _by_name(repair: Any) -> dict[str, Any]:
    """Repairers by tool name: a mapping as it is, one repairer under its spec's name."""
    if repair is None:
        return {}
    if isinstance(repair, Mapping):
        return dict(repair)
    spec_name = getattr(getattr(repair, "spec", None), "name", None)
    if not isinstance(spec_name, str) or not spec_name:
        raise TypeError(
            "chaos_toolset(repair=...) takes a mapping of tool name -> ParamRepairer, or one "
            f"ParamRepairer whose spec names its tool; got {safe_repr(repair, 80)}"
        )
    return {spec_name: repair}


@dataclasses.dataclass
class ChaosToolset(WrapperToolset[Any]):
    """A toolset whose tools' calls go through a chaos run (see the module docstring): the
    tools listed are the wrapped toolset's, with the same definitions. Tools intercepted
    already (a wrapped ``Tool`` inside, another ``ChaosToolset``) pass through as they are,
    so no call is recorded twice."""

    session: ChaosSession = dataclasses.field(repr=False, kw_only=True)
    repairers: Mapping[str, Any] = dataclasses.field(default_factory=dict, repr=False, kw_only=True)
    #: tells this layer's tools from those of a ChaosToolset inside it (kept by ``for_run``)
    owner: object = dataclasses.field(default_factory=object, repr=False, kw_only=True)
    #: the agent whose toolset it is (``None``: the agent that runs it, per call)
    agent: str | None = dataclasses.field(default=None, repr=False, kw_only=True)

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await self.wrapped.get_tools(ctx)
        session = self.session
        out: dict[str, ToolsetTool[Any]] = {}
        for tool_name, tool in tools.items():
            if isinstance(tool.args_validator, _Unvalidated):  # intercepted further in
                out[tool_name] = tool
                continue
            hook = _Hook(
                session,
                tool_name,
                tool.tool_def.parameters_json_schema,
                tool.args_validator,
                tool.args_validator_func,
                self.repairers.get(tool_name),
                self.agent,
            )
            out[tool_name] = dataclasses.replace(
                tool,
                args_validator=_Unvalidated(hook, self.owner, tool),
                args_validator_func=None,
            )
        return out

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        __tracebackhide__ = True
        validator = tool.args_validator
        if not isinstance(validator, _Unvalidated) or validator.owner is not self.owner:
            return await self.wrapped.call_tool(name, tool_args, ctx, tool)
        own = validator.tool
        return await validator.hook.run(
            tool_args, ctx, lambda validated: self.wrapped.call_tool(name, validated, ctx, own)
        )


def _is_mcp_toolset(toolset: Any) -> bool:
    """pydantic-ai's ``MCPToolset``: its faults are MCP's (the MCP adapter's seam)."""
    framework = framework_of(toolset)
    return framework is not None and framework.name == "mcp"


def _under_chaos_toolset(toolset: AbstractToolset[Any]) -> bool:
    """A ``ChaosToolset``, a ``FunctionToolset`` whose tools are all wrapped, or an
    ``MCPToolset`` whose client's sessions are wrapped."""
    if isinstance(toolset, ChaosToolset):
        return True
    if _is_mcp_toolset(toolset):
        state = getattr(getattr(toolset, "client", None), "_session_state", None)
        return bool(getattr(type(state), "__chaos_watched__", False))
    return (
        isinstance(toolset, FunctionToolset)
        and bool(toolset.tools)
        and all(_is_wrapped_tool(t) for t in toolset.tools.values())
    )


def chaos_toolset(chaos: Any, toolset: Any, *, repair: Any = None) -> Any:
    """``toolset`` with its tools' calls under chaos (``chaos``: a ``Chaos`` or its session).

    A ``FunctionToolset`` comes back as a copy of the same type whose tools are wrapped as
    :func:`wrap_tool` does (tools wrapped already are kept as they are); an ``MCPToolset``
    as ``chaos.wrap`` takes it (the same object, faults delivered as MCP delivers them);
    any other toolset (combined, prefixed, dynamic ones, an MCP toolset inside one of them)
    inside a :class:`ChaosToolset`.
    ``repair``: a ``ParamRepairer`` per tool name (or one, for the tool its spec names).
    A toolset under chaos already is refused. Each call names the agent that runs it.

    A tool's timeout (``Tool(timeout=)``, ``FunctionToolset(timeout=)``, ``Agent(tool_timeout=)``)
    cuts a fault's hang for the tools of a ``FunctionToolset`` (the faults apply inside it);
    for a function toolset nested in another toolset the faults apply outside its timeout.
    """
    __tracebackhide__ = True
    return _chaos_toolset(_session(chaos), toolset, repair=repair)


def _chaos_toolset(
    session: ChaosSession, toolset: Any, *, repair: Any = None, agent: str | None = None
) -> Any:
    __tracebackhide__ = True
    if not isinstance(toolset, AbstractToolset):
        raise TypeError(
            f"chaos_toolset() needs a pydantic-ai toolset, got {safe_repr(toolset, 80)}"
        )
    repairers = _by_name(repair)
    if _under_chaos_toolset(toolset):
        raise ChaosConfigError(
            f"chaos_toolset(): {toolset.label} is under chaos already; wrap the original "
            "(wrapping twice would record every call twice)"
        )
    if _is_mcp_toolset(toolset):
        # MCP's own delivery (a tool error as an isError result, protocol errors as the SDK's
        # MCPError, timeouts as its request timeout), as chaos.wrap(MCPToolset(...)) gives it:
        # the generic wrapper would raise a Python exception no MCP server can send
        return require("mcp").wrap_tool(session, toolset, repair=repairers or None)
    if isinstance(toolset, FunctionToolset):
        unknown = sorted(set(repairers) - set(toolset.tools))
        if unknown:
            raise ChaosConfigError(
                f"chaos_toolset(): repair= names {unknown[0]!r}, which is not among the tools: "
                f"{', '.join(toolset.tools) or '(none)'}"
            )
        wrapped = copy.copy(toolset)
        wrapped.tools = {
            key: tool
            if _is_wrapped_tool(tool)
            else _wrap_tool(
                session, tool, repair=repairers.get(key), agent=agent, timeout=toolset.timeout
            )
            for key, tool in toolset.tools.items()
        }
        return wrapped
    wired = {key: _repairer(r, session) for key, r in repairers.items()}
    return ChaosToolset(toolset, session=session, repairers=wired, agent=agent)
