"""LangChain / LangGraph: chaos for langchain-core tools and for ``create_agent`` agents.

- ``chaos.wrap(tool)`` / ``chaos.wrap_tools([...])`` take a langchain-core ``BaseTool``
  (``@tool`` functions, ``StructuredTool``, your own ``BaseTool`` subclass; sync and async) and
  return a copy **of the same type**: same name, description and argument schema (the model
  sees the same tool), whose calls go through the fault plan before the real tool runs
  (:func:`wrap_tool`). LangGraph's ``ToolNode`` and ``create_react_agent`` take it unchanged.
- ``create_agent(model, tools, middleware=[chaos_middleware(chaos)])`` puts a whole agent
  under chaos in one line: every model call (its text, the tool calls it asks for, its token
  usage) and every tool call go through the plan (:func:`chaos_middleware`).

Errors reach the agent as LangChain surfaces them: an injected failure is an exception raised
where the tool's own would be, so ``handle_tool_error`` and ``ToolNode(handle_tool_errors=...)``
treat it as they treat the tool's; a ``malformed_params`` fault's arguments meet the tool's own
validation (a ``ValidationError``, which the tool node turns into a message to the model), and
``repair=`` may fix them first. A ``GraphRecursionError`` that ends a test is recorded as the
framework's cap (see :mod:`pytest_agentchaos.adapters.caps`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ChaosConfigError
from ..inject.call import CallState
from ..inject.callables import _wire, check_name
from ..inject.intercept import Interceptor
from ..inject.session import ChaosSession
from ..saferepr import safe_str
from .common import finish_model, schema_of_model, transformed

_HINT = "pip install 'pytest-agentchaos[langchain]'"

try:
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.tools import BaseTool, StructuredTool
    from langchain_core.tools.base import _get_runnable_config_param
except ImportError as exc:  # pragma: no cover - tested by hiding the package
    raise ImportError(f"the LangChain adapter needs langchain-core: {_HINT} ({exc})") from None

__all__ = ["chaos_middleware", "model_schema", "wrap_tool"]

#: The attribute of a wrapped tool that holds the tool it wraps.
ORIGINAL = "__chaos_original__"


def model_schema(tool: BaseTool) -> dict[str, Any]:
    """The argument JSON Schema the model sees for ``tool`` (injected arguments left out)."""
    schema = schema_of_model(tool.tool_call_schema)
    return dict(schema) if schema is not None else {"type": "object", "properties": {}}


def _checker(tool: BaseTool) -> Callable[[Mapping[str, Any]], object] | None:
    """Validation of corrupted arguments as the tool validates the model's: its model-facing
    pydantic schema (a ``ValidationError``, which LangChain reports to the model)."""
    schema = tool.tool_call_schema
    validate = getattr(schema, "model_validate", None)
    return validate if callable(validate) else None


def wrap_tool(
    session: ChaosSession, tool: BaseTool, *, name: str | None = None, repair: Any = None
) -> BaseTool:
    """A copy of ``tool`` (same type, name, description and schemas) whose every call goes
    through ``session``'s plan before the real tool runs. ``name``: the tool's name in the
    trace (default: ``tool.name``; the model still sees ``tool.name``). Wrapping a wrapped
    tool wraps the original again (its calls are recorded once)."""
    __tracebackhide__ = True
    original: BaseTool = getattr(tool, ORIGINAL, tool)
    target = check_name(name, "chaos.wrap(): name") if name is not None else original.name
    schema = model_schema(original)
    fields = list(schema.get("properties", {}))
    repairer = _wire(repair, session) if repair is not None else None
    core = Interceptor(session, target, schema=schema, check=_checker(original), repairer=repairer)
    copy = original.model_copy()
    if _has_sync(original):
        _override(copy, "_run", _sync(core, original._run, fields))
    if _has_async(original):
        _override(copy, "_arun", _async(core, original._arun, fields))
    _override(copy, ORIGINAL, original)
    _override(copy, "__chaos_tool__", target)
    return copy


def _has_sync(tool: BaseTool) -> bool:
    return not isinstance(tool, StructuredTool) or tool.func is not None


def _has_async(tool: BaseTool) -> bool:
    """Whether the tool runs its own async code (otherwise LangChain's ``_arun`` runs the
    sync ``_run`` in a thread, which is wrapped already: wrapping both would count twice)."""
    if isinstance(tool, StructuredTool):
        return tool.coroutine is not None
    return type(tool)._arun is not BaseTool._arun


def _override(tool: BaseTool, attribute: str, value: Any) -> None:
    """Set an attribute on the tool instance past pydantic (methods are looked up on the
    instance first, so the copy's ``_run`` is ours and the class is untouched)."""
    object.__setattr__(tool, attribute, value)


def _split(
    fields: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
    """(the model's arguments, the names given positionally, the rest: run_manager, config,
    callbacks and injected arguments, which are passed through and not recorded)."""
    positional = fields[: len(args)] if len(fields) >= len(args) else [
        f"arg{i}" for i in range(len(args))
    ]  # fmt: skip
    mapping = dict(zip(positional, args, strict=True))
    extras = {}
    for key, value in kwargs.items():
        if key in fields:
            mapping[key] = value
        else:
            extras[key] = value
    return mapping, positional, extras


def _rebuild(mapping: Mapping[str, Any], positional: list[str]) -> tuple[list[Any], dict[str, Any]]:
    rest = dict(mapping)
    return [rest.pop(n) for n in positional if n in rest], rest


def _sync(core: Interceptor, run: Callable[..., Any], fields: list[str]) -> Callable[..., Any]:
    def _run(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        mapping, positional, extras = _split(fields, args, kwargs)

        def invoke(m: Mapping[str, Any]) -> Any:
            pos, named = _rebuild(m, positional)
            return run(*pos, **named, **extras)

        return core.call(mapping, invoke)

    return _keep_signature(_run, run)


def _async(core: Interceptor, arun: Callable[..., Any], fields: list[str]) -> Callable[..., Any]:
    async def _arun(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        mapping, positional, extras = _split(fields, args, kwargs)

        async def invoke(m: Mapping[str, Any]) -> Any:
            pos, named = _rebuild(m, positional)
            return await arun(*pos, **named, **extras)

        return await core.acall(mapping, invoke)

    return _keep_signature(_arun, arun)


def _keep_signature(wrapper: Callable[..., Any], method: Callable[..., Any]) -> Callable[..., Any]:
    """LangChain reads ``_run``'s signature and type hints to decide whether to pass
    ``run_manager`` and ``config``: the wrapper shows the wrapped method's."""
    functools.update_wrapper(wrapper, method)
    if _get_runnable_config_param(wrapper) != _get_runnable_config_param(method):
        raise TypeError(f"cannot wrap {method!r}: its RunnableConfig parameter is not visible")
    return wrapper


# -- the create_agent middleware ------------------------------------------------------------


def chaos_middleware(chaos: Any, *, repairers: Mapping[str, Any] | None = None) -> Any:
    """An ``AgentMiddleware`` for ``langchain.agents.create_agent`` that puts the agent's
    model calls and tool calls under ``chaos`` (a ``Chaos``, e.g. the ``chaos`` fixture).
    ``repairers``: tool name -> ``ParamRepairer``; the model's arguments for that tool are
    repaired (``Repair`` events in the trace) before the tool node validates them.

    Model calls: the model's text and the tool calls it asks for are recorded (the halt
    monitor reads them), its ``usage_metadata`` counts against ``max_tokens``; faults on the
    ``model`` channel apply (an error, ``repeated_output``, ``paraphrased_output``). Tool calls:
    faults apply before the tool runs; a ``malformed_params`` fault sends its arguments
    through the tool node's own validation. Tools wrapped with ``chaos.wrap`` already are
    recorded by themselves, not twice.
    """
    try:
        from langchain.agents.middleware import AgentMiddleware  # the `langchain` package
    except ImportError as exc:
        raise ChaosConfigError(
            f"chaos_middleware() needs the langchain package (create_agent): {_HINT} ({exc})"
        ) from None

    session: ChaosSession = getattr(chaos, "session", chaos)
    if not isinstance(session, ChaosSession):
        raise TypeError(f"chaos_middleware() needs a Chaos, got {safe_str(chaos, 80)}")
    if repairers is not None and not isinstance(repairers, Mapping):
        raise TypeError(
            f"chaos_middleware(repairers=...) needs a tool name -> ParamRepairer mapping, "
            f"got {safe_str(repairers, 80)}"
        )
    wired = {check_name(k, "chaos_middleware(): repairers"): _wire(r, session)
             for k, r in (repairers or {}).items()}  # fmt: skip

    cores: dict[int, tuple[Any, Interceptor]] = {}  # by model object

    class ChaosMiddleware(AgentMiddleware):
        """Every model and tool call of the agent through the chaos run's fault plan."""

        name = "ChaosMiddleware"

        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            __tracebackhide__ = True
            return _model_core(session, request, cores).call(
                _model_args(request), lambda _: handler(request)
            )

        async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            __tracebackhide__ = True
            core = _model_core(session, request, cores)

            async def invoke(_: Any) -> Any:
                return await handler(request)

            return await core.acall(_model_args(request), invoke)

        def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            __tracebackhide__ = True
            core, call = _tool_core(session, request, wired)
            if core is None:
                return handler(request)
            return core.call(call["args"], lambda m: handler(_with_args(request, call, m)))

        async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            __tracebackhide__ = True
            core, call = _tool_core(session, request, wired)
            if core is None:
                return await handler(request)

            async def invoke(m: Mapping[str, Any]) -> Any:
                return await handler(_with_args(request, call, m))

            return await core.acall(call["args"], invoke)

    return ChaosMiddleware()


def _model_name(request: Any) -> str:
    model = getattr(request, "model", None)
    for attribute in ("model_name", "model", "model_id"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__ if model is not None else "model"


def _model_args(request: Any) -> dict[str, Any]:
    """What a model call's arguments show in the trace: how many messages, which tools."""
    tools = [getattr(t, "name", None) or str(t) for t in (getattr(request, "tools", None) or [])]
    return {"messages": len(getattr(request, "messages", None) or []), "tools": tools}


def _model_core(
    session: ChaosSession, request: Any, cores: dict[int, tuple[Any, Interceptor]]
) -> Interceptor:
    """The interceptor of the request's model: one per model object (its name is read once)."""
    model = getattr(request, "model", None)
    known = cores.get(id(model))
    if known is not None:
        return known[1]
    finish = finish_model(session, _read_response, _rewrite_response)

    def fresh_finish(state: CallState, response: Any) -> Any:
        __tracebackhide__ = True
        if state.effect is not None and state.effect.replay:
            response = _fresh(response, state.index)  # a repeat, not the same message again
        return finish(state, response)

    core = Interceptor(session, _model_name(request), channel="model", finish=fresh_finish)
    cores[id(model)] = (model, core)  # the model kept alive: its id cannot be reused
    return core


def _messages(response: Any) -> list[BaseMessage]:
    if isinstance(response, BaseMessage):
        return [response]
    inner = getattr(response, "model_response", None)  # ExtendedModelResponse
    if inner is not None:
        return _messages(inner)
    return list(getattr(response, "result", None) or [])


def _ai(response: Any) -> AIMessage | None:
    return next((m for m in _messages(response) if isinstance(m, AIMessage)), None)


def _read_response(response: Any) -> tuple[str, list[tuple[str, Any]], int | None]:
    message = _ai(response)
    if message is None:
        return "", [], None
    calls = [(c.get("name", ""), c.get("args", {})) for c in message.tool_calls]
    usage = message.usage_metadata
    tokens = usage.get("total_tokens") if usage else None
    return message.text, calls, tokens


def _replace_ai(response: Any, update: Callable[[AIMessage], AIMessage]) -> Any:
    """``response`` with its AI message replaced by ``update(message)``."""
    if isinstance(response, AIMessage):
        return update(response)
    inner = getattr(response, "model_response", None)
    if inner is not None:
        return dataclasses.replace(response, model_response=_replace_ai(inner, update))
    result = [update(m) if isinstance(m, AIMessage) else m for m in _messages(response)]
    return dataclasses.replace(response, result=result)


def _rewrite_response(response: Any, text: str) -> Any:
    return _replace_ai(response, lambda m: m.model_copy(update={"content": text}))


def _fresh(response: Any, index: int) -> Any:
    """A replayed answer with new message and tool-call ids: LangGraph would otherwise take
    it for the earlier message and replace that one instead of adding a repeat."""

    def update(message: AIMessage) -> AIMessage:
        calls = [{**c, "id": f"{c.get('id') or 'call'}-again{index}"} for c in message.tool_calls]
        new_id = f"{message.id or 'ai'}-again{index}"
        return message.model_copy(update={"id": new_id, "tool_calls": calls})

    return _replace_ai(response, update)


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
    return Interceptor(session, name, schema=schema, repairer=repairer, finish=finish), call


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
    text = out.content if isinstance(out.content, str) else None
    new = transformed(state, text) if text is not None else None
    if new is not None:
        out = out.model_copy(update={"content": new})
    return session.finish_ok(state, out, transform=False, recorded=out.content)
