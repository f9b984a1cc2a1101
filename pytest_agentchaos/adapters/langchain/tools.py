"""LangChain tools under chaos: :func:`wrap_tool` copies a ``BaseTool`` (same type, name,
description and schemas) whose ``_run`` / ``_arun`` go through the plan, per calling agent."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from ...inject.callables import _wire, check_name
from ...inject.intercept import Interceptor
from ...inject.session import ChaosSession
from ..common import schema_of_model
from .agents import _agents, _caller
from .framework import BaseTool, StructuredTool, _get_runnable_config_param

#: The attribute of a wrapped tool that holds the tool it wraps.
ORIGINAL = "__chaos_original__"


def model_schema(tool: BaseTool) -> dict[str, Any]:
    """The argument JSON Schema the model sees for ``tool`` (injected arguments left out)."""
    schema = schema_of_model(tool.tool_call_schema)
    return dict(schema) if schema is not None else {"type": "object", "properties": {}}


def _checker(tool: BaseTool) -> Callable[[Mapping[str, Any]], object] | None:
    """Validation of corrupted arguments as the tool validates the model's: its model-facing
    pydantic schema (a ``ValidationError``, which LangChain reports to the model). Returns
    what LangChain then hands the tool: each given field as validated (a number sent as text
    coerced back, an unknown key dropped)."""
    schema = tool.tool_call_schema
    validate = getattr(schema, "model_validate", None)
    if not callable(validate):
        return None

    def check(mapping: Mapping[str, Any]) -> object:
        result = validate(dict(mapping))
        dump = getattr(result, "model_dump", None)
        if not callable(dump):
            return None
        return {k: getattr(result, k) for k in dump() if k in mapping}

    return check


def wrap_tool(
    session: ChaosSession, tool: BaseTool, *, name: str | None = None, repair: Any = None
) -> BaseTool:
    """A copy of ``tool`` (same type, name, description and schemas) whose every call goes
    through ``session``'s plan before the real tool runs. ``name``: the tool's name in the
    trace (default: ``tool.name``; the model still sees ``tool.name``); each call's
    ``ToolCall`` names the agent calling it (as for model calls). Wrapping a wrapped tool
    wraps the original again (its calls are recorded once)."""
    __tracebackhide__ = True
    original: BaseTool = getattr(tool, ORIGINAL, tool)
    target = check_name(name, "chaos.wrap(): name") if name is not None else original.name
    schema = model_schema(original)
    fields = list(schema.get("properties", {}))
    repairer = _wire(repair, session) if repair is not None else None
    core = _ToolCores(session, target, schema, _checker(original), repairer)
    copy: BaseTool = original.model_copy()
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


class _ToolCores:
    """A wrapped tool's interceptors: one per calling agent (the same target; the agent is
    what its ``ToolCall`` events name)."""

    __slots__ = ("_args", "_cores", "session", "target")

    def __init__(
        self,
        session: ChaosSession,
        target: str,
        schema: Mapping[str, Any],
        check: Callable[[Mapping[str, Any]], object] | None,
        repairer: Any,
    ) -> None:
        self.session = session
        self.target = target
        self._args = (schema, check, repairer)
        self._cores: dict[str | None, Interceptor] = {}

    def get(self) -> Interceptor:
        agent = _agents(self.session).label(_caller())
        core = self._cores.get(agent)
        if core is None:
            schema, check, repairer = self._args
            core = Interceptor(
                self.session, self.target, schema=schema, check=check, repairer=repairer,
                agent=agent, validator="LangChain",
            )  # fmt: skip
            core = self._cores.setdefault(agent, core)
        return core


def _sync(cores: _ToolCores, run: Callable[..., Any], fields: list[str]) -> Callable[..., Any]:
    def _run(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        mapping, positional, extras = _split(fields, args, kwargs)

        def invoke(m: Mapping[str, Any]) -> Any:
            pos, named = _rebuild(m, positional)
            return run(*pos, **named, **extras)

        return cores.get().call(mapping, invoke)

    return _keep_signature(_run, run)


def _async(cores: _ToolCores, arun: Callable[..., Any], fields: list[str]) -> Callable[..., Any]:
    async def _arun(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        mapping, positional, extras = _split(fields, args, kwargs)

        async def invoke(m: Mapping[str, Any]) -> Any:
            pos, named = _rebuild(m, positional)
            return await arun(*pos, **named, **extras)

        return await cores.get().acall(mapping, invoke)

    return _keep_signature(_arun, arun)


def _keep_signature(wrapper: Callable[..., Any], method: Callable[..., Any]) -> Callable[..., Any]:
    """LangChain reads ``_run``'s signature and type hints to decide whether to pass
    ``run_manager`` and ``config``: the wrapper shows the wrapped method's."""
    functools.update_wrapper(wrapper, method)
    if _get_runnable_config_param(wrapper) != _get_runnable_config_param(method):
        raise TypeError(f"cannot wrap {method!r}: its RunnableConfig parameter is not visible")
    return wrapper
