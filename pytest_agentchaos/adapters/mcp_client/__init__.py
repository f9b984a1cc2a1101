"""Chaos for tools served over the Model Context Protocol, in-process: ``chaos.wrap(session)``
for an ``mcp`` ``ClientSession`` (see :mod:`.session`), and through it the clients that hold
one: the SDK's ``mcp.Client``, the OpenAI Agents SDK's ``MCPServer*``, and anything that takes
a session (langchain-mcp-adapters' ``load_mcp_tools``). Faults arrive as MCP delivers them
(see :mod:`.results`). Imported only when such an object is wrapped.
"""

from __future__ import annotations

from typing import Any

from ...inject.session import ChaosSession
from ...saferepr import safe_repr
from .results import mcp_errors, on_content, tool_error, wire_form
from .session import McpCalls, McpSeam, seam_of

__all__ = [
    "McpCalls",
    "McpSeam",
    "mcp_errors",
    "on_content",
    "seam_of",
    "tool_error",
    "wire_form",
    "wrap_session",
    "wrap_tool",
]


def wrap_session(
    run: ChaosSession, client: Any, *, repair: Any = None, policy: Any = None
) -> McpSeam:
    """Install the seam on ``client`` (a ``ClientSession``); refuses one wrapped already."""
    __tracebackhide__ = True
    if seam_of(client) is not None:
        raise ValueError(
            "chaos.wrap(): this MCP session is wrapped already (by this run or another); "
            "wrap it once per run"
        )
    seam = McpSeam(run, client, repair=repair, policy=policy)
    seam.install()
    return seam


def wrap_tool(
    run: ChaosSession,
    obj: Any,
    *,
    name: str | None = None,
    repair: Any = None,
    policy: Any = None,
) -> Any:
    """``obj`` under chaos, returned as the same object:

    - an ``mcp.ClientSession``: its tool calls go through the plan from now on;
    - an entered ``mcp.Client``: its session's;
    - an OpenAI Agents SDK ``MCPServer*``: its session's, now if it is connected, else as
      soon as it connects.
    """
    __tracebackhide__ = True
    if name is not None:
        raise TypeError("chaos.wrap(): an MCP server's tools keep their own names; no name=")
    from mcp import ClientSession

    if isinstance(obj, ClientSession):
        wrap_session(run, obj, repair=repair, policy=policy)
        return obj
    if _is_mcp_client(obj):
        session = getattr(obj, "_session", None)
        if session is None:
            raise ValueError(
                "chaos.wrap(): this mcp.Client is not connected; wrap it inside "
                "`async with client:` (or wrap client.session)"
            )
        wrap_session(run, session, repair=repair, policy=policy)
        return obj
    if _is_fastmcp_client(obj):
        _watch_fastmcp_client(run, obj, repair=repair, policy=policy)
        return obj
    inner = getattr(obj, "client", None)
    if type(obj).__module__ == "pydantic_ai.mcp" and _is_fastmcp_client(inner):
        _watch_fastmcp_client(run, inner, repair=repair, policy=policy)  # an MCPToolset
        _name_pydantic_ai_callers(run, obj)
        return obj
    if hasattr(obj, "connect") and hasattr(obj, "session"):  # an Agents SDK MCPServer
        _wrap_agents_server(run, obj, repair=repair, policy=policy)
        return obj
    raise TypeError(f"chaos.wrap(): not an MCP client session: {safe_repr(obj, 80)}")


def _is_mcp_client(obj: Any) -> bool:
    from mcp.client.client import Client

    return isinstance(obj, Client)


def _is_fastmcp_client(obj: Any) -> bool:
    return any(
        f"{c.__module__}:{c.__qualname__}" == "fastmcp.client.client:Client"
        for c in type(obj).__mro__
    )


def _watch_fastmcp_client(run: ChaosSession, client: Any, *, repair: Any, policy: Any) -> None:
    """A FastMCP ``Client`` (pydantic-ai's ``MCPToolset`` holds one): it opens its
    ``ClientSession`` in a task of its own when it connects, and keeps it in its session
    state; that state is watched, so each session it opens is wrapped as it is stored."""
    state = client._session_state
    native = type(state)
    if getattr(native, "__chaos_watched__", False):
        raise ValueError("chaos.wrap(): this MCP client is wrapped already; wrap it once per run")

    def get(self: Any) -> Any:
        return self.__dict__.get("session")

    def put(self: Any, session: Any) -> None:
        self.__dict__["session"] = session
        if session is not None and seam_of(session) is None and not run._closed:
            wrap_session(run, session, repair=repair, policy=policy)

    watched = type(
        native.__name__,
        (native,),
        {"session": property(get, put), "__chaos_watched__": True, "__module__": native.__module__},
    )
    state.__class__ = watched
    if state.__dict__.get("session") is not None:
        put(state, state.__dict__["session"])

    def restore() -> None:
        if type(state) is watched:
            state.__class__ = native

    run.add_cleanup(restore)


def _wrap_agents_server(run: ChaosSession, server: Any, *, repair: Any, policy: Any) -> None:
    """An Agents SDK ``MCPServer``: its session wrapped now, or when ``connect`` makes one."""
    if server.session is not None:
        wrap_session(run, server.session, repair=repair, policy=policy)
        return
    if "connect" in server.__dict__:
        raise ValueError("chaos.wrap(): this MCP server is wrapped already; wrap it once per run")
    connect = server.connect

    async def connect_under_chaos(*args: Any, **kwargs: Any) -> Any:
        out = await connect(*args, **kwargs)
        session = server.session
        if session is not None and seam_of(session) is None and not run._closed:
            wrap_session(run, session, repair=repair, policy=policy)
        return out

    server.__dict__["connect"] = connect_under_chaos
    run.add_cleanup(lambda: server.__dict__.pop("connect", None))


def _name_pydantic_ai_callers(run: ChaosSession, toolset: Any) -> None:
    """A pydantic-ai ``MCPToolset``: each agent that runs one of its tools is named on the
    calls its session records (the run context handed to ``call_tool`` says which agent).
    The toolset's class is swapped for a subclass (so a per-run copy, ``for_run``, calls
    through its own client), put back when the run closes."""
    from ...inject.acting import acting_as
    from ..pydantic_ai.runs import _label

    native = type(toolset)
    if getattr(native, "__chaos_named__", False):
        return

    async def call_tool(
        self: Any, name: str, tool_args: Any, ctx: Any, *args: Any, **kw: Any
    ) -> Any:
        __tracebackhide__ = True
        with acting_as(_label(run, getattr(ctx, "agent", None))):
            return await native.call_tool(self, name, tool_args, ctx, *args, **kw)

    named = type(
        native.__name__,
        (native,),
        {"call_tool": call_tool, "__chaos_named__": True, "__module__": native.__module__},
    )
    toolset.__class__ = named

    def restore() -> None:
        if type(toolset) is named:
            toolset.__class__ = native

    run.add_cleanup(restore)
