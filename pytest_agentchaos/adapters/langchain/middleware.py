"""The ``create_agent`` middleware: :func:`chaos_middleware`, the check that it sits inside the
agent's retry and fallback middleware, and its handling of model and tool requests."""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from ...errors import ChaosConfigError
from ...inject.call import CallState
from ...inject.callables import _wire, check_name
from ...inject.handover import endpoint_for, handed_over
from ...inject.intercept import Interceptor
from ...inject.session import ChaosSession
from ...saferepr import safe_str
from ..common import transformed
from .agents import _Agents, _agents, _caller, _session_of
from .errors import _request_url
from .framework import _HINT, BaseTool, ToolMessage
from .state import _state_of
from .tools import ORIGINAL, model_schema
from .turns import _response_finish


class ChaosPlacementWarning(UserWarning):
    """``chaos_middleware`` sits outside a retry or fallback middleware of the agent: the
    faults it injects never reach that middleware, so the test does not exercise it."""


#: The middleware (of ``langchain.agents.middleware``) that must see the faults: by channel.
_HANDLERS = {
    "model": ("ModelRetryMiddleware", "ModelFallbackMiddleware"),
    "tool": ("ToolRetryMiddleware", "ToolErrorMiddleware"),
}


def chaos_middleware(chaos: Any, *, repairers: Mapping[str, Any] | None = None) -> Any:
    """An ``AgentMiddleware`` for ``langchain.agents.create_agent`` that puts the agent's
    model calls and tool calls under ``chaos`` (a ``Chaos``, e.g. the ``chaos`` fixture).
    ``repairers``: tool name -> ``ParamRepairer``; the model's arguments for that tool are
    repaired (``Repair`` events in the trace) before the tool node validates them.

    Put it **last** in ``create_agent(middleware=[...])``: LangChain runs the first middleware
    outermost, so the agent's ``ModelRetryMiddleware``, ``ModelFallbackMiddleware``,
    ``ToolRetryMiddleware`` and ``ToolErrorMiddleware`` must come before it to see its faults
    (as they see a real failure). Placed outside one of them, it says so once: a
    :class:`ChaosPlacementWarning` and a note in the trace.

    Model calls: the model's text and the tool calls it asks for are recorded (the halt
    monitor reads them), its ``usage_metadata`` counts against ``max_tokens``; faults on the
    ``model`` channel apply: an error raises what the agent's chat model raises for it (see
    the module doc), ``repeated_output`` / ``paraphrased_output`` / ``stale_output`` answer in
    its place. Each agent has its own model target (its name, or the graph node running it;
    the model's name for an unnamed agent at the top of the graph), and events name the
    agent. Calls of a model under :func:`chaos_model` record themselves and pass through.
    Tool calls: faults apply before the tool runs; a ``malformed_params`` fault sends its
    arguments through the tool node's own validation. Tools wrapped with ``chaos.wrap``
    already are recorded by themselves, not twice.
    """
    try:
        from langchain.agents.middleware import AgentMiddleware  # the `langchain` package
    except ImportError as exc:
        raise ChaosConfigError(
            f"chaos_middleware() needs the langchain package (create_agent): {_HINT} ({exc})"
        ) from None

    session = _session_of(chaos, "chaos_middleware()")
    if repairers is not None and not isinstance(repairers, Mapping):
        raise TypeError(
            f"chaos_middleware(repairers=...) needs a tool name -> ParamRepairer mapping, "
            f"got {safe_str(repairers, 80)}"
        )
    wired = {check_name(k, "chaos_middleware(): repairers"): _wire(r, session)
             for k, r in (repairers or {}).items()}  # fmt: skip
    agents = _agents(session)
    placement = _Placement(session)

    class ChaosMiddleware(AgentMiddleware):
        """Every model and tool call of the agent through the chaos run's fault plan."""

        name = "ChaosMiddleware"

        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            __tracebackhide__ = True
            placement.check("model", handler)
            core = _request_core(agents, request)
            if core is None:
                return handler(request)
            if _on_wire(agents, request):  # one call, recorded and faulted on the wire
                with handed_over(agents.session, core.target, core.agent):
                    return handler(request)
            return core.call(_model_args(request), lambda _: handler(request))

        async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            __tracebackhide__ = True
            placement.check("model", handler)
            core = _request_core(agents, request)
            if core is None:
                return await handler(request)
            if _on_wire(agents, request):  # one call, recorded and faulted on the wire
                with handed_over(agents.session, core.target, core.agent):
                    return await handler(request)

            async def invoke(_: Any) -> Any:
                return await handler(request)

            return await core.acall(_model_args(request), invoke)

        def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            __tracebackhide__ = True
            placement.check("tool", handler)
            core, call = _tool_core(session, request, wired)
            if core is None:
                return handler(request)
            return core.call(call["args"], lambda m: handler(_with_args(request, call, m)))

        async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            __tracebackhide__ = True
            placement.check("tool", handler)
            core, call = _tool_core(session, request, wired)
            if core is None:
                return await handler(request)

            async def invoke(m: Mapping[str, Any]) -> Any:
                return await handler(_with_args(request, call, m))

            return await core.acall(call["args"], invoke)

    return ChaosMiddleware()


class _Placement:
    """Whether the middleware LangChain composed inside ``chaos_middleware`` include one that
    must see its faults: read from the handler it is given (LangChain composes the inner
    middleware as closures over their ``wrap_*_call`` methods), once per composed chain."""

    __slots__ = ("_lock", "_seen", "_warned", "session")

    def __init__(self, session: ChaosSession) -> None:
        self.session = session
        self._seen: dict[int, object] = {}  # inner chains checked (kept: ids stay unique)
        self._warned: set[str] = set()
        self._lock = threading.Lock()

    def check(self, channel: str, handler: Any) -> None:
        inner = _cell(handler, "inner")
        if inner is None or id(inner) in self._seen:  # innermost, or known
            return
        with self._lock:
            if id(inner) in self._seen:
                return
            self._seen[id(inner)] = inner
            names = sorted({type(m).__name__ for m in _inner_middleware(inner, channel)})
            late = [n for n in names if n not in self._warned]
            self._warned.update(late)
        if late:
            message = (
                f"chaos_middleware sits outside {', '.join(late)}: the faults it injects into "
                f"{channel} calls never reach {'it' if len(late) == 1 else 'them'}, so this "
                f"chaos test does not exercise {'its' if len(late) == 1 else 'their'} retries "
                "or fallbacks; put chaos_middleware(chaos) last in "
                "create_agent(middleware=[...])"
            )
            self.session.note(message)
            warnings.warn(message, ChaosPlacementWarning, stacklevel=_user_level())


#: Modules whose frames are not the user's code: a warning points past them.
_INTERNAL = (
    "pytest_agentchaos", "langchain", "langgraph", "langsmith", "pydantic", "asyncio",
    "concurrent", "threading", "contextlib", "functools", "contextvars", "anyio",
)  # fmt: skip


def _user_level() -> int:
    """The ``stacklevel`` of the user's code that made the call (its ``agent.invoke(...)``
    line), counted from the caller of this function; 2 when the call runs in a thread of
    LangGraph's (no user frame on its stack)."""
    frame = sys._getframe(2)
    level = 2
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not isinstance(module, str) or module.split(".")[0] not in _INTERNAL:
            return level
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return 2


def _cell(function: Any, name: str) -> Any:
    """The value of the closure variable ``name`` of ``function`` (``None`` if none)."""
    code = getattr(function, "__code__", None)
    closure = getattr(function, "__closure__", None)
    if code is None or not closure:
        return None
    for var, cell in zip(code.co_freevars, closure, strict=False):
        if var == name:
            try:
                return cell.cell_contents
            except ValueError:  # an empty cell
                return None
    return None


def _inner_middleware(chain: Any, channel: str) -> list[Any]:
    """The retry / fallback middleware in a composed chain of ``wrap_*_call`` handlers."""
    try:
        from langchain.agents import middleware as lc
    except ImportError:  # pragma: no cover - the middleware itself needs it
        return []
    kinds = tuple(
        cls for cls in (getattr(lc, n, None) for n in _HANDLERS[channel]) if isinstance(cls, type)
    )
    found: list[Any] = []
    todo: list[Any] = [chain]
    seen: set[int] = set()
    while todo and len(seen) < 256:
        item = todo.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        owner = getattr(item, "__self__", None)  # a bound wrap_*_call method
        if kinds and isinstance(owner, kinds):
            found.append(owner)
        todo.append(getattr(item, "__wrapped__", None))  # LangSmith's traceable() wrapper
        todo.extend(_cell(item, n) for n in ("inner", "outer"))
    return found


def _model_args(request: Any) -> dict[str, Any]:
    """What a model call's arguments show in the trace: how many messages, which tools."""
    tools = [getattr(t, "name", None) or str(t) for t in (getattr(request, "tools", None) or [])]
    return {"messages": len(getattr(request, "messages", None) or []), "tools": tools}


def _on_wire(agents: _Agents, request: Any) -> bool:
    """Whether a scripted provider endpoint of the run answers the request's model
    (``chaos.provider``): it records and faults the call then, once, under the same target
    and agent (see :mod:`~pytest_agentchaos.inject.handover`)."""
    return endpoint_for(agents.session, _request_url(getattr(request, "model", None))) is not None


def _request_core(agents: _Agents, request: Any) -> Interceptor | None:
    """The interceptor of the request's model call, by the agent making it; ``None`` for a
    model under :func:`chaos_model` (it records its calls itself)."""
    model = getattr(request, "model", None)
    if _state_of(model) is not None:
        return None
    caller = _caller(getattr(request, "runtime", None))
    target = agents.target(None, caller, model, model)
    return agents.core(target, agents.label(caller), model, _response_finish)


def _tool_core(
    session: ChaosSession, request: Any, repairers: Mapping[str, Any]
) -> tuple[Interceptor | None, dict[str, Any]]:
    """The interceptor of one tool call, or ``None`` when the tool records itself (it was
    wrapped with ``chaos.wrap``)."""
    call = dict(request.tool_call)
    tool = getattr(request, "tool", None)
    if tool is not None and getattr(tool, ORIGINAL, None) is not None:
        return None, call
    if not isinstance(call.get("args"), Mapping):
        call["args"] = {}
    schema = model_schema(tool) if isinstance(tool, BaseTool) else None
    call_id = call.get("id")

    def finish(state: CallState, out: Any) -> Any:
        __tracebackhide__ = True
        return _finish_tool(session, state, out, call_id)

    name = str(call.get("name") or "tool")
    repairer = repairers.get(name)
    agent = _agents(session).label(_caller(getattr(request, "runtime", None)))
    core = Interceptor(session, name, schema=schema, repairer=repairer, finish=finish, agent=agent)
    return core, call


def _with_args(request: Any, call: dict[str, Any], args: Mapping[str, Any]) -> Any:
    if args is call["args"]:
        return request
    return request.override(tool_call={**call, "args": dict(args)})


def _finish_tool(session: ChaosSession, state: CallState, out: Any, call_id: Any) -> Any:
    """Record what the tool node answered: an error message as a failed call (the tool node
    caught the tool's error), a replayed message under this call's id."""
    __tracebackhide__ = True
    if not isinstance(out, ToolMessage):  # a Command, or what a custom handler returned
        return session.finish_ok(state, out)
    if out.status == "error":
        session.finish_error(state, error_type="ToolError", message=safe_str(out.content, 500))
        return out
    if out.tool_call_id != call_id:  # replayed: the earlier answer, to this call
        out = out.model_copy(update={"tool_call_id": call_id, "id": None})
    if state.effect is not None and state.effect.reply is not None:  # what the tool said
        state, content = session.reply(state, out.content)
        if content is not out.content:
            out = out.model_copy(update={"content": content})
    text = out.content if isinstance(out.content, str) else None
    new = transformed(state, text) if text is not None else None
    if new is not None:
        out = out.model_copy(update={"content": new})
    return session.finish_ok(state, out, transform=False, recorded=out.content)
