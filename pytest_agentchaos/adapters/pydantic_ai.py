"""Chaos for pydantic-ai: its tools, toolsets and models, through the injection core
(:class:`~pytest_agentchaos.inject.intercept.Interceptor`).

The public surface:

- :func:`wrap_tool` (what ``chaos.wrap`` calls for a pydantic-ai object): a ``Tool`` comes back
  as a ``Tool`` of the same type, a ``FunctionToolset`` as a ``FunctionToolset`` of the same
  type, any other toolset inside a :class:`ChaosToolset` (a ``WrapperToolset``). The
  model-facing tool definitions (name, description, argument JSON Schema) are unchanged.
- :func:`chaos_toolset` and :func:`chaos_model` (a :class:`ChaosModel`, a ``WrapperModel``):
  the same for a toolset and for a model, from a ``Chaos`` or a ``ChaosSession``.
- :func:`chaos_agent`: a context manager that runs an ``Agent`` with its model and all its
  tools under chaos (``agent.override``), in one line.
- :func:`tool_spec`: a ``Tool``'s ``ToolSpec`` (its own JSON Schema), for a ``ParamRepairer``.

Where the calls are taken: pydantic-ai validates the model's arguments (its
``ToolsetTool.args_validator``, then the tool's ``args_validator`` function) *before* it calls
the toolset, and turns a ``ValidationError`` into a retry prompt to the model. A wrapped tool
moves that validation into the call: its validator only parses the model's JSON, and the call
goes through the ``Interceptor`` with the model's raw arguments, so that faults apply first (an
error fault raises without running anything), a ``malformed_params`` fault corrupts what the
model sent and meets pydantic-ai's own validator (the ``check``), and a ``repair=`` repairer
fixes the model's arguments before that validator sees them. A ``ValidationError`` raised there
reaches the model as the same retry prompt (``cause="validation_error"``, through the agent's
``wrap_tool_execute`` hook), and counts against the tool's retries as before. What changes:
capabilities' ``before/after_tool_validate`` hooks see the unvalidated arguments, and
``FunctionToolCallEvent.args_valid`` is true for them. A repairer that declines raises
``ModelRetry`` (the model is asked again, with the repairer's reason) rather than its
``RepairError``, which pydantic-ai would let out of the run.

Errors keep their framework meaning: a tool's ``ModelRetry`` is a retry, any other exception
(an injected fault included) propagates out of ``run_sync``. The trace records the real error.
Streamed model requests (``run_stream``) are refused by :class:`ChaosModel` rather than let
through unrecorded.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ChaosConfigError
from ..inject.call import CallState
from ..inject.callables import _wire, check_name
from ..inject.intercept import Interceptor
from ..inject.session import ChaosSession
from ..repair.spec import ToolSpec
from ..saferepr import safe_repr, safe_str
from .common import finish_model

try:
    from pydantic_ai import Agent, ModelRetry, RunContext, Tool
    from pydantic_ai._function_schema import FunctionSchema
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models import Model, ModelRequestParameters
    from pydantic_ai.models.wrapper import WrapperModel
    from pydantic_ai.settings import ModelSettings
    from pydantic_ai.toolsets import AbstractToolset, FunctionToolset, WrapperToolset
    from pydantic_ai.toolsets.abstract import ToolsetTool
    from pydantic_core import from_json
except ImportError as exc:  # pragma: no cover - the adapters' registry checks first
    raise ImportError(
        "the pydantic-ai adapter needs pydantic-ai-slim: "
        "pip install 'pytest-agentchaos[pydantic-ai]'"
    ) from exc

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from pydantic_ai.models import StreamedResponse

__all__ = [
    "ChaosModel",
    "ChaosToolset",
    "chaos_agent",
    "chaos_model",
    "chaos_toolset",
    "tool_spec",
    "wrap_tool",
]


def _session(chaos: Any) -> ChaosSession:
    """The ``ChaosSession`` of a ``Chaos`` (or the session itself)."""
    session = getattr(chaos, "session", chaos)
    if not isinstance(session, ChaosSession):
        raise TypeError(f"expected a Chaos or a ChaosSession, got {safe_repr(chaos, 80)}")
    return session


# -- tool calls ----------------------------------------------------------------------------


class _Hook:
    """One tool's calls: its Interceptor settings, pydantic-ai's own validation of its
    arguments (the validator and the tool's ``args_validator`` function), run in the call."""

    __slots__ = ("func", "real", "repairer", "schema", "session", "target")

    def __init__(
        self,
        session: ChaosSession,
        target: str,
        schema: Mapping[str, Any],
        real: Any,
        func: Callable[..., Any] | None,
        repairer: Any,
    ) -> None:
        self.session = session
        self.target = target
        self.schema = schema
        self.real = real
        self.func = func
        self.repairer = repairer

    async def run(
        self,
        args: Mapping[str, Any],
        ctx: RunContext[Any],
        call: Callable[[dict[str, Any]], Awaitable[Any]],
    ) -> Any:
        """Run one call: ``args`` are the model's (parsed, unvalidated), ``call(validated)``
        the real tool."""
        __tracebackhide__ = True
        real, func = self.real, self.func

        def validate(mapping: Mapping[str, Any]) -> dict[str, Any]:
            validated = real.validate_python(dict(mapping), context=ctx.validation_context)
            return validated if isinstance(validated, dict) else dict(validated)

        async def invoke(mapping: Mapping[str, Any]) -> Any:
            __tracebackhide__ = True
            validated = validate(mapping)
            if func is not None:
                checked = func(ctx, **validated)
                if inspect.isawaitable(checked):
                    await checked
            return await call(validated)

        core = Interceptor(
            self.session,
            self.target,
            schema=self.schema,
            # with a repairer, repair comes first: the validator then sees the repaired call
            check=validate if self.repairer is None else None,
            repairer=self.repairer,
        )
        return await core.acall(args, invoke)


class _Unvalidated:
    """Stands in for a tool's argument validator: it only parses the model's arguments into
    a dict (anything else goes to the real validator, which rejects it as before), so that
    the call sees what the model sent; the real validation runs in the call (:class:`_Hook`)."""

    __slots__ = ("hook", "owner", "tool")

    def __init__(self, hook: _Hook, owner: object = None, tool: Any = None) -> None:
        self.hook = hook
        self.owner = owner  # the ChaosToolset layer that intercepts it (None: the Tool itself)
        self.tool = tool  # the wrapped toolset's own ToolsetTool (a ChaosToolset's tools)

    def validate_json(
        self, input: str | bytes | bytearray, *, allow_partial: Any = False, **kwargs: Any
    ) -> Any:
        try:
            parsed = from_json(input, allow_partial=allow_partial)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed
        return self.hook.real.validate_json(input, allow_partial=allow_partial, **kwargs)

    def validate_python(self, input: Any, *, allow_partial: Any = False, **kwargs: Any) -> Any:
        if isinstance(input, Mapping):
            return dict(input)
        return self.hook.real.validate_python(input, allow_partial=allow_partial, **kwargs)

    def __repr__(self) -> str:
        return f"<chaos-intercepted validator of {self.hook.target!r}>"


@dataclasses.dataclass(kw_only=True)
class _ChaosSchema(FunctionSchema):
    """A ``Tool``'s function schema whose calls go through the chaos run (see :class:`_Hook`);
    everything pydantic-ai reads from it is the original's."""

    hook: _Hook | None = dataclasses.field(default=None, repr=False, compare=False)

    async def call(self, args_dict: dict[str, Any], ctx: RunContext[Any]) -> Any:
        __tracebackhide__ = True
        assert self.hook is not None
        run = super().call  # the original: runs the function (sync ones in a thread)
        return await self.hook.run(args_dict, ctx, lambda validated: run(validated, ctx))


class _AsRetry:
    """A repairer whose refusal is a ``ModelRetry`` (pydantic-ai asks the model again, with
    the repairer's reason) instead of an exception that would end the run."""

    __slots__ = ("repairer", "spec")

    def __init__(self, repairer: Any) -> None:
        self.repairer = repairer
        self.spec = getattr(repairer, "spec", None)

    def repair(self, args: Any, *, at: int | None = None, intended: Any = None) -> Any:
        return self.repairer.repair(args, at=at, intended=intended)

    def declined(self, result: Any) -> BaseException:
        error = self.repairer.declined(result)
        retry = ModelRetry(safe_str(error, 1000))
        retry.__cause__ = error
        return retry


def _repairer(repair: Any, session: ChaosSession) -> Any:
    return None if repair is None else _AsRetry(_wire(repair, session))


def tool_spec(tool: Tool[Any]) -> ToolSpec:
    """The :class:`~pytest_agentchaos.repair.ToolSpec` of a pydantic-ai ``Tool``: its name,
    description and the argument JSON Schema the model sees (for ``ParamRepairer``)."""
    if not isinstance(tool, Tool):
        raise TypeError(f"tool_spec() needs a pydantic-ai Tool, got {safe_repr(tool, 80)}")
    return ToolSpec.from_schema(tool.name, tool.function_schema.json_schema, tool.description)


def _is_wrapped_tool(tool: Tool[Any]) -> bool:
    return isinstance(tool.function_schema, _ChaosSchema)


def wrap_tool(
    session: ChaosSession,
    tool: Any,
    *,
    name: str | None = None,
    repair: Any = None,
) -> Any:
    """``tool`` under chaos, as pydantic-ai accepts it unchanged.

    - A ``Tool`` (sync or async function, with or without ``RunContext``) comes back as a
      copy of the same type with the same name, description and argument schema; ``name``
      names its calls in the trace (default: the tool's name), ``repair`` is a
      ``ParamRepairer`` for its arguments. A ``Tool`` wrapped already is refused.
    - A toolset: see :func:`chaos_toolset` (``repair``: a repairer per tool name).
    """
    __tracebackhide__ = True
    if isinstance(tool, AbstractToolset):
        if name is not None:
            raise TypeError("chaos.wrap(): a toolset's tools keep their own names; no name=")
        return chaos_toolset(session, tool, repair=repair)
    if not isinstance(tool, Tool):
        raise TypeError(f"expected a pydantic-ai Tool or toolset, got {safe_repr(tool, 80)}")
    if _is_wrapped_tool(tool):
        raise ChaosConfigError(
            f"chaos.wrap(): the pydantic-ai tool {tool.name!r} is under chaos already; wrap the "
            "original tool (wrapping twice would record every call twice)"
        )
    target = check_name(name, "chaos.wrap(): name") if name is not None else tool.name
    schema = tool.function_schema
    hook = _Hook(
        session,
        target,
        schema.json_schema,
        schema.validator,
        tool.args_validator,
        _repairer(repair, session),
    )
    fields = {f.name: getattr(schema, f.name) for f in dataclasses.fields(FunctionSchema)}
    fields["validator"] = _Unvalidated(hook)
    wrapped = copy.copy(tool)
    wrapped.function_schema = _ChaosSchema(**fields, hook=hook)
    wrapped.args_validator = None  # run by the hook, on the validated arguments
    return wrapped


# -- toolsets ------------------------------------------------------------------------------


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


def _under_chaos(toolset: AbstractToolset[Any]) -> bool:
    """A ``ChaosToolset``, or a ``FunctionToolset`` whose tools are all wrapped."""
    if isinstance(toolset, ChaosToolset):
        return True
    return (
        isinstance(toolset, FunctionToolset)
        and bool(toolset.tools)
        and all(_is_wrapped_tool(t) for t in toolset.tools.values())
    )


def chaos_toolset(chaos: Any, toolset: Any, *, repair: Any = None) -> Any:
    """``toolset`` with its tools' calls under chaos (``chaos``: a ``Chaos`` or its session).

    A ``FunctionToolset`` comes back as a copy of the same type whose tools are wrapped as
    :func:`wrap_tool` does (tools wrapped already are kept as they are); any other toolset
    (MCP servers, combined, prefixed, dynamic ones) inside a :class:`ChaosToolset`.
    ``repair``: a ``ParamRepairer`` per tool name (or one, for the tool its spec names).
    A toolset under chaos already is refused.
    """
    __tracebackhide__ = True
    session = _session(chaos)
    if not isinstance(toolset, AbstractToolset):
        raise TypeError(
            f"chaos_toolset() needs a pydantic-ai toolset, got {safe_repr(toolset, 80)}"
        )
    repairers = _by_name(repair)
    if _under_chaos(toolset):
        raise ChaosConfigError(
            f"chaos_toolset(): {toolset.label} is under chaos already; wrap the original "
            "(wrapping twice would record every call twice)"
        )
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
            else wrap_tool(session, tool, repair=repairers.get(key))
            for key, tool in toolset.tools.items()
        }
        return wrapped
    wired = {key: _repairer(r, session) for key, r in repairers.items()}
    return ChaosToolset(toolset, session=session, repairers=wired)


# -- models --------------------------------------------------------------------------------


def _read(response: Any) -> tuple[str, list[tuple[str, Any]], int | None]:
    """(text, tool calls as (name, args), total tokens) of a ``ModelResponse``."""
    texts: list[str] = []
    calls: list[tuple[str, Any]] = []
    for part in response.parts:
        if isinstance(part, TextPart):
            texts.append(part.content)
        elif isinstance(part, ToolCallPart):
            calls.append((part.tool_name, part.args_as_dict()))
    usage = getattr(response, "usage", None)
    tokens = getattr(usage, "total_tokens", None) if usage is not None else None
    return "\n".join(texts), calls, tokens if isinstance(tokens, int) else None


def _rewrite(response: Any, text: str) -> Any:
    """A copy of ``response`` saying ``text``: its first text part says it, the other text
    parts go, tool calls stay."""
    parts: list[Any] = []
    said = False
    for part in response.parts:
        if isinstance(part, TextPart):
            if not said:
                parts.append(dataclasses.replace(part, content=text))
                said = True
        else:
            parts.append(part)
    return dataclasses.replace(response, parts=parts)


def _request_args(messages: list[ModelMessage]) -> dict[str, Any]:
    """What the trace shows of a model request: how many messages, and the parts of the
    last one (the prompt, tool returns, retry prompts)."""
    last = messages[-1] if messages else None
    parts: list[dict[str, Any]] = []
    for part in getattr(last, "parts", ()):
        shown: dict[str, Any] = {"kind": getattr(part, "part_kind", type(part).__name__)}
        tool_name = getattr(part, "tool_name", None)
        if tool_name:
            shown["tool"] = tool_name
        shown["content"] = getattr(part, "content", None)
        parts.append(shown)
    return {"messages": len(messages), "request": parts}


class ChaosModel(WrapperModel):
    """A pydantic-ai model whose requests go through a chaos run on the ``"model"``
    channel: each turn's text and tool calls are recorded (as :func:`~.common.describe_turn` shows
    them), its token usage counts toward ``max_tokens``, and the plan's model faults apply
    (errors and latency before the request; ``repeated_output`` / ``paraphrased_output``
    answer with an earlier response, not asking the model)."""

    def __init__(self, session: ChaosSession, wrapped: Model | str, *, name: str = "model"):
        super().__init__(wrapped)
        self.chaos_session = session
        self.chaos_target = check_name(name, "chaos_model(): name")
        base = finish_model(session, _read, _rewrite)

        def finish(state: CallState, response: Any) -> Any:
            __tracebackhide__ = True
            if (
                state.effect is not None
                and state.effect.replay
                and isinstance(response, ModelResponse)
            ):
                # a new response, which this run stamps as its own (pydantic-ai fills in
                # run_id and conversation_id only where they are unset)
                response = dataclasses.replace(
                    response, parts=list(response.parts), run_id=None, conversation_id=None
                )
            return base(state, response)

        self._chaos_finish = finish

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        __tracebackhide__ = True
        core = Interceptor(
            self.chaos_session, self.chaos_target, channel="model", finish=self._chaos_finish
        )
        response: ModelResponse = await core.acall(
            _request_args(messages),
            lambda _args: self.wrapped.request(messages, model_settings, model_request_parameters),
        )
        return response

    @contextlib.asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        raise ChaosConfigError(
            "chaos_model(): streamed requests (run_stream, event streams) are not intercepted; "
            "run the agent with run() / run_sync() under chaos"
        )
        yield  # pragma: no cover - makes this a generator

    def __repr__(self) -> str:
        return f"ChaosModel({self.wrapped!r}, name={self.chaos_target!r})"


def chaos_model(chaos: Any, model: Model | str, *, name: str = "model") -> ChaosModel:
    """``model`` (a pydantic-ai ``Model`` or a model name) with its requests under chaos, as
    the calls of target ``name`` on the ``"model"`` channel. A model under chaos already is
    refused."""
    session = _session(chaos)
    if isinstance(model, ChaosModel):
        raise ChaosConfigError(
            "chaos_model(): the model is under chaos already (wrapping twice would record "
            "every request twice)"
        )
    return ChaosModel(session, model, name=name)


# -- agents --------------------------------------------------------------------------------


@contextlib.contextmanager
def chaos_agent(
    chaos: Any,
    agent: Agent[Any, Any],
    *,
    model: Model | str | None = None,
    repair: Any = None,
    name: str = "model",
) -> Iterator[Agent[Any, Any]]:
    """Run ``agent`` under chaos inside the ``with`` block: its model (or ``model``) through
    :func:`chaos_model`, its own tools and its toolsets through :func:`wrap_tool` /
    :func:`chaos_toolset` (``repair``: a ``ParamRepairer`` per tool name), by
    ``agent.override``. Toolsets passed to a run itself are not wrapped: wrap them with
    :func:`chaos_toolset`."""
    session = _session(chaos)
    base = model if model is not None else agent.model
    if base is None:
        raise ChaosConfigError(
            "chaos_agent(): the agent has no model of its own; pass model= (the model its "
            "runs would get)"
        )
    repairers = _by_name(repair)
    function, *others = agent.toolsets
    own = function.tools if isinstance(function, FunctionToolset) else {}
    if all(isinstance(t, FunctionToolset) for t in others):  # every tool name is known now
        known = set(own).union(*(t.tools for t in others if isinstance(t, FunctionToolset)))
        unknown = sorted(set(repairers) - known)
        if unknown:
            raise ChaosConfigError(
                f"chaos_agent(): repair= names {unknown[0]!r}, which is not among the agent's "
                f"tools: {', '.join(sorted(known)) or '(none)'}"
            )
    overrides: dict[str, Any] = {"model": chaos_model(session, base, name=name)}
    if own:
        overrides["tools"] = [
            tool if _is_wrapped_tool(tool) else wrap_tool(session, tool, repair=repairers.get(key))
            for key, tool in own.items()
        ]
    if others:
        overrides["toolsets"] = [
            toolset
            if _under_chaos(toolset)
            else chaos_toolset(session, toolset, repair=_for(toolset, repairers))
            for toolset in others
        ]
    with agent.override(**overrides):
        yield agent


def _for(toolset: AbstractToolset[Any], repairers: Mapping[str, Any]) -> dict[str, Any]:
    """The repairers of ``toolset``'s tools (all of them for a toolset whose tools are only
    known at run time)."""
    if isinstance(toolset, FunctionToolset):
        return {k: r for k, r in repairers.items() if k in toolset.tools}
    return dict(repairers)
