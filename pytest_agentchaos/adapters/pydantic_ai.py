"""Chaos for pydantic-ai: its tools, toolsets, models and whole agents (one or several), through
the injection core (:class:`~pytest_agentchaos.inject.intercept.Interceptor`).

The public surface:

- :func:`wrap_tool` (what ``chaos.wrap`` calls for a pydantic-ai object): a ``Tool`` comes back
  as a ``Tool`` of the same type, a ``FunctionToolset`` as a ``FunctionToolset`` of the same
  type, any other toolset inside a :class:`ChaosToolset` (a ``WrapperToolset``). The
  model-facing tool definitions (name, description, argument JSON Schema) are unchanged.
- :func:`chaos_toolset` and :func:`chaos_model` (a :class:`ChaosModel`, a ``WrapperModel``; a
  ``FallbackModel`` comes back as a ``FallbackModel`` of them): the same for a toolset and for
  a model, from a ``Chaos`` or a ``ChaosSession``.
- :func:`chaos_agent`: a context manager that runs agents with their models and all their tools
  under chaos (``agent.override``), in one line: ``chaos_agent(chaos, agent)``, or
  ``chaos_agent(chaos, router, specialist)`` for an agent and the agents it delegates to.
- :func:`tool_spec`: a ``Tool``'s ``ToolSpec`` (its own JSON Schema), for a ``ParamRepairer``.

**Every agent its own target.** An agent's model calls are the target of its name (``name=``,
``agent.name``, the variable that holds it as pydantic-ai infers a name, else ``"model"``),
made unique in the run (``router``, ``router#2`` for a second agent of that name); a
``FallbackModel``'s fallbacks are ``router/fallback1``, ``router/fallback2`` ... Model and tool
calls name their agent in the trace (``ModelCall.agent``, ``ToolCall.agent``). A model shared by
several agents (``chaos_model(chaos, model)`` without a name) takes the running agent's target
per request (pydantic-ai's current run context), so stateful faults (``repeated_output``,
``paraphrased_output``, ``stale_output``) only ever replay an agent's own outputs.

**Errors pydantic-ai raises.** An injected model failure raises what pydantic-ai raises at that
seam, so the agent's ``FallbackModel``, its ``fallback_on`` and its retry hooks run as in
production. For a model that sends through the ``openai`` or ``anthropic`` SDK it is the SDK's
own exception (for a real response of the model's base URL) mapped by pydantic-ai's own
``map_api_errors``: ``ModelRateLimitError`` with ``retry_after``, ``ModelOverloadedError`` /
``ModelUnavailableError`` / ``ModelServerError``, ``ModelTimeoutError``,
``ModelConnectionError``, the SDK's exception as ``__cause__``. For any other model
(``FunctionModel``, ``TestModel``, your own) it is pydantic-ai's category of the same
(``ModelHTTPError.for_category``, ``ModelTimeoutError``, ``ModelConnectionError``). Each is
marked injected (``isinstance(exc, InjectedFault)``) and recorded under its own class name.
A tool's failure keeps the built-in family (``TimeoutError``, ``ConnectionError``,
``InjectedHTTPError``): a tool's real failure is its own exception, which pydantic-ai lets out
of the run unless a capability turns it into a retry.

**Timeouts are pydantic-ai's.** A fault's hang (a ``timeout`` or ``latency`` fault) ends where
an enclosing deadline ends it: a tool's ``timeout`` (``Tool(timeout=)``, ``@agent.tool(timeout=)``,
``FunctionToolset(timeout=)``, ``Agent(tool_timeout=)``) cuts it after the tool's timeout of
virtual time, and pydantic-ai gives the model its own retry prompt (``Timed out after 2
seconds.``, counted against the tool's retries). On a virtual event loop (``virtual_sleep``)
every anyio deadline does, a model's ``request_timeout`` included (``ModelRequestTimeout``).

**Streaming.** Streamed requests (``run_stream``, ``run(event_stream_handler=)``, ``iter``) go
through the plan as the others do: an error is raised before the stream opens (a
``FallbackModel`` falls back), a replayed output streams as a ``CompletedStreamedResponse``, a
live stream passes through and its final response is recorded, with its token usage.

Where tool calls are taken: pydantic-ai validates the model's arguments (its
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
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import inspect
import math
import sys
import weakref
from collections.abc import Awaitable, Callable, Iterator, Mapping
from types import FrameType
from typing import TYPE_CHECKING, Any

from ..clock import VirtualClock
from ..errors import ChaosConfigError
from ..faults.effects import Failure
from ..inject.call import CallState
from ..inject.callables import _wire, check_name
from ..inject.errors import NativeErrors, Templates, failure_exception
from ..inject.intercept import Interceptor
from ..inject.session import _MISSING, ChaosSession
from ..repair.spec import ToolSpec
from ..saferepr import safe_repr, safe_str
from .common import finish_model, native_errors

try:
    from pydantic_ai import Agent, ModelRetry, RunContext, Tool
    from pydantic_ai._function_schema import FunctionSchema
    from pydantic_ai.exceptions import ModelAPIError, ModelHTTPError
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models import (
        CompletedStreamedResponse,
        Model,
        ModelRequestParameters,
        StreamedResponse,
        infer_model,
    )
    from pydantic_ai.models.fallback import FallbackModel
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

    __slots__ = ("agent", "func", "real", "repairer", "schema", "session", "target")

    def __init__(
        self,
        session: ChaosSession,
        target: str,
        schema: Mapping[str, Any],
        real: Any,
        func: Callable[..., Any] | None,
        repairer: Any,
        agent: str | None = None,
    ) -> None:
        self.session = session
        self.target = target
        self.schema = schema
        self.real = real
        self.func = func
        self.repairer = repairer
        self.agent = agent  # the agent's name in the run (None: the running agent's, per call)

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

        session = self.session
        core = Interceptor(
            session,
            self.target,
            schema=self.schema,
            # with a repairer, repair comes first: the validator then sees the repaired call
            check=validate if self.repairer is None else None,
            repairer=self.repairer,
            agent=self.agent if self.agent is not None else _label(session, ctx.agent),
        )
        return await _acall(core, args, invoke, deadline=True)


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

    Each call names the agent that runs it (``ToolCall.agent``). A fault's hang is cut by the
    tool's ``timeout``, as pydantic-ai's own timeout cuts a real one (see the module doc); an
    injected failure raises the built-in kind (``TimeoutError``, ``ConnectionError``,
    ``InjectedHTTPError``), as the tool's own exception would propagate.
    """
    __tracebackhide__ = True
    if isinstance(tool, AbstractToolset):
        if name is not None:
            raise TypeError("chaos.wrap(): a toolset's tools keep their own names; no name=")
        return chaos_toolset(session, tool, repair=repair)
    return _wrap_tool(session, tool, name=name, repair=repair)


def _wrap_tool(
    session: ChaosSession,
    tool: Any,
    *,
    name: str | None = None,
    repair: Any = None,
    agent: str | None = None,
) -> Any:
    """:func:`wrap_tool` for a ``Tool``; ``agent`` names the agent whose tool it is (default:
    the agent that runs it, per call)."""
    __tracebackhide__ = True
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
        agent,
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


def _under_chaos_toolset(toolset: AbstractToolset[Any]) -> bool:
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
            else _wrap_tool(session, tool, repair=repairers.get(key), agent=agent)
            for key, tool in toolset.tools.items()
        }
        return wrapped
    wired = {key: _repairer(r, session) for key, r in repairers.items()}
    return ChaosToolset(toolset, session=session, repairers=wired, agent=agent)


# -- calls: the fault's wait, cut by a deadline ----------------------------------------------


def _deadline_left() -> float | None:
    """Seconds until the nearest enclosing anyio deadline (a tool's ``timeout``, a model's
    ``request_timeout``), or ``None`` when there is none (or no anyio here)."""
    try:
        import anyio

        deadline = anyio.current_effective_deadline()
        if math.isinf(deadline):
            return None
        return deadline - anyio.current_time()
    except Exception:  # no async library detected, a backend without deadlines
        return None


def _hung(state: CallState, waited: float, planned: float) -> BaseException:
    """What a call that hung past its deadline raised: a ``TimeoutError`` (as ``anyio.fail_after``
    raises), marked injected by the call's fault."""
    failure = Failure(
        "timeout",
        f"{state.target} hung past its deadline: cut after {waited:g}s of a {planned:g}s hang",
    )
    return failure_exception(failure, state.fault)


async def _wait(session: ChaosSession, state: CallState, *, deadline: bool) -> None:
    """Apply the effect's delay as a hang that an enclosing deadline ends.

    On a virtual event loop the wait is a real ``await``, so pydantic-ai's own deadline (a
    tool's ``anyio.fail_after``, a model's ``request_timeout``) cancels it as it would cancel
    a real hang; the call is recorded as timed out and the cancellation goes on to the
    deadline's owner. On a real loop time does not pass, so with ``deadline`` (tool calls) a
    hang longer than the nearest deadline is cut there (to the millisecond): the virtual clock
    advances by what was left and the call raises ``TimeoutError``, which pydantic-ai's tool
    timeout turns into its own retry prompt.
    """
    effect = state.effect
    if effect is None or not effect.delay:
        return
    clock = session.clock
    virtual_loop = isinstance(clock, VirtualClock) and clock.on_virtual_loop()
    left = _deadline_left()
    if deadline and not virtual_loop and left is not None and left < effect.delay:
        left = max(0.0, round(left, 3))
        exc = _hung(state, left, effect.delay)
        try:
            session.sleep(max(0.0, state.t + left - session.now()))
        finally:
            session.finish_error(state, exc)
        raise exc
    start = session.now()
    try:
        await session.adelay(state)
    except BaseException as exc:  # a deadline cancelled the hang (or the run stopped)
        waited = session.now() - start
        if virtual_loop and left is not None and waited >= left - 1e-6:  # until the deadline
            session.finish_error(state, _hung(state, round(waited, 6), effect.delay))
        else:
            session.finish_error(state, exc)
        raise


async def _acall(
    core: Interceptor,
    mapping: Mapping[str, Any],
    invoke: Callable[[Mapping[str, Any]], Awaitable[Any]],
    *,
    deadline: bool,
) -> Any:
    """``core.acall(mapping, invoke)``, whose fault delay is a hang an enclosing deadline ends
    (:func:`_wait`)."""
    __tracebackhide__ = True
    state = core.begin(mapping)
    session = core.session
    if state.effect is not None:
        await _wait(session, state, deadline=deadline)
    mapping, replayed = core._prepare(state, mapping)
    if replayed is not _MISSING:
        return core.finish(state, replayed)
    try:
        out = await invoke(mapping)
    except BaseException as exc:  # cancelled, halted: the call still has its end
        session.finish_error(state, exc)
        raise
    return core.finish(state, out)


# -- agents' names -------------------------------------------------------------------------

#: Each run's agents: id(agent) -> (agent, its target). The agent is held so its id stays its
#: own while the run lives; the run (its session) is held weakly.
_AGENTS: weakref.WeakKeyDictionary[ChaosSession, dict[int, tuple[object, str]]] = (
    weakref.WeakKeyDictionary()
)


def _name_of(agent: object) -> str | None:
    """An agent's own name (``agent.name``: its ``name=``, an ``override(name=)``, or the
    name pydantic-ai inferred on its first run), if it is a non-empty string."""
    try:
        name = getattr(agent, "name", None)
    except Exception:  # a hostile agent whose name cannot be read
        return None
    return name if isinstance(name, str) and name else None


def _agent_target(
    session: ChaosSession, agent: object, name: str | None = None, *, fallback: str | None = None
) -> str:
    """The target of ``agent``'s model calls in ``session``'s run: ``name`` (default: the
    target it has already, else its own name, else ``fallback``, else ``"model"``), made unique
    by ``session.agent_target`` (``name#2`` for a second agent that asks for a name taken)."""
    known = _AGENTS.setdefault(session, {})
    held = known.get(id(agent))
    if name is None and held is not None and held[0] is agent:
        return held[1]
    target = session.agent_target(name or _name_of(agent) or fallback or "model", owner=agent)
    known[id(agent)] = (agent, target)
    return target


def _label(session: ChaosSession, agent: object) -> str | None:
    """What the trace calls ``agent``: its target when it has one in this run, else its own
    name (``None`` for no agent, or one without a name)."""
    if agent is None:
        return None
    held = _AGENTS.get(session, {}).get(id(agent))
    if held is not None and held[0] is agent:
        return held[1]
    return _name_of(agent)


def _running_agent(run_context: Any = None) -> Any:
    """The agent whose run makes the current request: ``run_context.agent``, else that of
    pydantic-ai's current run context (a private ContextVar; ``None`` if it moved)."""
    if run_context is None:
        try:
            from pydantic_ai._run_context import get_current_run_context

            run_context = get_current_run_context()
        except Exception:  # moved or renamed in a later pydantic-ai: no agent known
            return None
    return getattr(run_context, "agent", None)


def _inferred_name(agent: object, frame: FrameType | None) -> str | None:
    """The name pydantic-ai would infer for ``agent`` from ``frame`` (a variable of that
    frame, then a global of its module, that holds it), without setting it on the agent."""
    if frame is None:
        return None
    scopes = [frame.f_locals]
    if frame.f_globals is not frame.f_locals:
        scopes.append(frame.f_globals)
    for scope in scopes:
        for key, item in list(scope.items()):
            if item is agent and isinstance(key, str):
                return key
    return None


def _caller_frame() -> FrameType | None:
    """The frame that entered a ``with chaos_agent(...)`` block: the first one outside this
    module and ``contextlib``."""
    frame: FrameType | None = sys._getframe(1)
    skip = {__file__, contextlib.__file__}
    while frame is not None and frame.f_code.co_filename in skip:
        frame = frame.f_back
    return frame


# -- models: the errors pydantic-ai raises -------------------------------------------------

#: What the SDKs say of a timeout and of a dropped connection (pydantic-ai passes it on).
_TIMED_OUT = "Request timed out."
_CONNECTION = "Connection error."


def _concrete(model: Model) -> Model:
    """The model that answers: ``model``, or the model inside its wrappers."""
    seen: set[int] = set()
    while isinstance(model, WrapperModel) and id(model) not in seen:
        seen.add(id(model))
        model = model.wrapped
    return model


def _provider_seam(model: Model) -> tuple[str, str, Any] | None:
    """(provider, request path, pydantic-ai's own ``map_api_errors`` for it) of a model that
    sends through the ``openai`` or ``anthropic`` SDK; ``None`` for any other model, or when
    pydantic-ai's mapping moved (a later version): the generic errors are used then."""
    openai_models = sys.modules.get("pydantic_ai.models.openai")
    if openai_models is not None:
        chat = getattr(openai_models, "OpenAIChatModel", None)
        responses = getattr(openai_models, "OpenAIResponsesModel", None)
        for cls, path in ((chat, "/chat/completions"), (responses, "/responses")):
            if isinstance(cls, type) and isinstance(model, cls):
                try:
                    from pydantic_ai.models.openai._errors import map_api_errors
                except Exception:
                    return None
                return "openai", path, map_api_errors
    anthropic_models = sys.modules.get("pydantic_ai.models.anthropic")
    cls = getattr(anthropic_models, "AnthropicModel", None)
    if isinstance(cls, type) and isinstance(model, cls):
        try:
            from pydantic_ai.models.anthropic._errors import map_api_errors as map_anthropic
        except Exception:
            return None
        return "anthropic", "/v1/messages", map_anthropic
    return None


def _provider_errors(session: ChaosSession, model: Model) -> NativeErrors | None:
    """The errors a provider-backed pydantic-ai model raises: the SDK's own exception (a real
    response of the model's base URL, see :mod:`~pytest_agentchaos.inject.provider_errors`)
    mapped by pydantic-ai's own ``map_api_errors``, as the model maps a real one (category,
    message, body, headers, ``retry_after``, ``__cause__``)."""
    seam = _provider_seam(model)
    if seam is None:
        return None
    provider, path, mapper = seam
    try:
        base_url = model.base_url
        model_name = model.model_name
    except Exception:
        return None
    sdk = native_errors(
        session,
        provider,
        f"pydantic-ai {type(model).__name__}",
        base_url=base_url if isinstance(base_url, str) and base_url else None,
        path=path,
        marked=False,  # the SDK's class: what is injected is pydantic-ai's mapping of it
    )
    if sdk is None:
        return None
    namespace = getattr(getattr(model, "_provider", None), "model_id_namespace", None)
    if not isinstance(namespace, str):
        namespace = provider

    def build(failure: Failure) -> BaseException | None:
        raw = sdk(failure)
        if raw is None:
            return None
        try:
            with mapper(model_name, namespace):
                raise raw
        except Exception as mapped:  # what pydantic-ai raises for it
            mapped.__traceback__ = None
            return mapped
        return None  # pragma: no cover - the block always raises

    return Templates(build)


def _generic_errors(model_name: str) -> NativeErrors:
    """The errors pydantic-ai's models raise, for a model without a provider SDK
    (``FunctionModel``, ``TestModel``, a custom one): an HTTP status is a ``ModelHTTPError``
    of the status's category (``ModelRateLimitError`` with ``retry_after`` for a 429,
    ``ModelUnavailableError`` for a 503 ...), a timeout a ``ModelTimeoutError``, a dropped
    connection a ``ModelConnectionError``."""
    connection_error: Any = None
    http_status_category: Any = None
    try:
        from pydantic_ai import _model_errors

        connection_error = _model_errors.connection_error
        http_status_category = _model_errors.http_status_category
    except Exception:  # moved in a later pydantic-ai: plain ModelHTTPError / ModelAPIError
        pass

    def build(failure: Failure) -> BaseException | None:
        if failure.kind == "http":
            status = failure.status or 500
            headers = {key.lower(): value for key, value in failure.headers.items()}
            if failure.retry_after is not None:
                headers.setdefault("retry-after", str(math.ceil(failure.retry_after)))
            category = http_status_category(status) if http_status_category else None
            return ModelHTTPError.for_category(
                category,
                status_code=status,
                model_name=model_name,
                body=failure.any_body(),
                headers=headers or None,
                retry_after=failure.retry_after,
            )
        if failure.kind in ("timeout", "connection"):
            timeout = failure.kind == "timeout"
            message = _TIMED_OUT if timeout else _CONNECTION
            if connection_error is not None:
                cause = TimeoutError(message) if timeout else ConnectionError(message)
                error: BaseException = connection_error(model_name, message, cause, timeout=timeout)
                return error
            return ModelAPIError(model_name, message)
        return None  # a crash: no pydantic-ai form

    return Templates(build)


def _errors_of(session: ChaosSession, model: Model) -> NativeErrors:
    """The exceptions ``model`` raises in pydantic-ai for injected failures (see
    :class:`ChaosModel`): a provider-backed model's as pydantic-ai maps its SDK's, any other
    model's as pydantic-ai's own categories. Built once per failure, copied per call."""
    concrete = _concrete(model)
    errors = _provider_errors(session, concrete)
    if errors is not None:
        return errors
    try:
        name = model.model_name
    except Exception:
        name = type(model).__name__
    return _generic_errors(name if isinstance(name, str) else type(model).__name__)


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


def _completed(response: ModelResponse, parameters: ModelRequestParameters) -> StreamedResponse:
    """A stream that replays ``response`` (each part's start and end events)."""
    try:
        return CompletedStreamedResponse(
            response, model_request_parameters=parameters, replay_events=True
        )
    except TypeError:  # pragma: no cover - an older pydantic-ai, before replay_events
        return CompletedStreamedResponse(response, model_request_parameters=parameters, events=True)


class ChaosModel(WrapperModel):
    """A pydantic-ai model whose requests, streamed or not, go through a chaos run on the
    ``"model"`` channel.

    - Each turn's text and tool calls are recorded (as :func:`~.common.describe_turn` shows
      them), its token usage counts toward ``max_tokens``.
    - The plan's model faults apply before the request. An injected failure raises what
      pydantic-ai raises there: for a model that sends through the ``openai`` or ``anthropic``
      SDK (``OpenAIChatModel``, ``OpenAIResponsesModel``, the OpenAI-compatible models built on
      them, ``AnthropicModel``), the SDK's own exception for a response of the model's base URL,
      mapped by pydantic-ai's own ``map_api_errors`` (``ModelRateLimitError`` with
      ``retry_after``, ``ModelUnavailableError``, ``ModelTimeoutError``, ``ModelConnectionError``,
      the SDK's exception as ``__cause__``); for any other model pydantic-ai's categories of the
      same (``ModelHTTPError.for_category``, ``ModelTimeoutError``, ``ModelConnectionError``).
      A ``FallbackModel`` falls back on them; the SDK's own retries are below this seam.
    - ``repeated_output`` / ``paraphrased_output`` / ``stale_output`` answer with an earlier
      response of the same target, not asking the model; a streamed request replays it as a
      stream (``CompletedStreamedResponse``).
    - A streamed request (``run_stream``, ``run(event_stream_handler=)``, ``iter``) passes the
      live stream through and records its final response when the consumer is done.

    Its target: ``name`` when given (``agent`` then names the agent in the trace, default: the
    running agent); else each request's is the running agent's (its name, made unique in the
    run: ``router``, ``router#2`` ...) plus ``role`` (``/fallback1`` for a ``FallbackModel``'s
    first fallback), ``"model"`` outside an agent run. So one ``ChaosModel`` shared by several
    agents keeps each agent's calls, and the outputs stateful faults replay, apart.
    """

    def __init__(
        self,
        session: ChaosSession,
        wrapped: Model | str,
        *,
        name: str | None = None,
        agent: str | None = None,
        role: str = "",
    ):
        super().__init__(wrapped)
        self.chaos_session = session
        #: the fixed target of its requests (``None``: the running agent's, per request)
        self.chaos_target = None if name is None else check_name(name, "chaos_model(): name")
        #: the agent the trace names for its requests (``None``: the running agent)
        self.chaos_agent_name = agent
        self.chaos_role = role
        self._chaos_native: NativeErrors | None = None
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

    def _chaos_error(self, failure: Failure) -> BaseException | None:
        """The native exception for ``failure`` (the builder made on the first failure)."""
        native = self._chaos_native
        if native is None:
            native = self._chaos_native = _errors_of(self.chaos_session, self.wrapped)
        return native(failure)

    def _chaos_core(self, run_context: Any = None) -> Interceptor:
        """The interceptor of one request: its target and agent (see the class doc)."""
        session = self.chaos_session
        target, agent = self.chaos_target, self.chaos_agent_name
        if target is None or agent is None:
            running = _running_agent(run_context)
            if target is not None:
                agent = _label(session, running)
            elif running is None:
                target = "model" + self.chaos_role
            else:
                agent = _agent_target(session, running)
                target = agent
                if self.chaos_role:
                    target = session.agent_target(agent + self.chaos_role, owner=running)
        return Interceptor(
            session,
            target,
            channel="model",
            finish=self._chaos_finish,
            errors=self._chaos_error,
            agent=agent,
        )

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        __tracebackhide__ = True
        response: ModelResponse = await _acall(
            self._chaos_core(),
            _request_args(messages),
            lambda _args: self.wrapped.request(messages, model_settings, model_request_parameters),
            deadline=False,
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
        __tracebackhide__ = True
        core = self._chaos_core(run_context)
        session = core.session
        state = core.begin(_request_args(messages))
        if state.effect is not None:
            await _wait(session, state, deadline=False)
            _, replayed = core._prepare(state, {})  # a failure raises here, before the stream
            if replayed is not _MISSING:
                yield _completed(core.finish(state, replayed), model_request_parameters)
                return
        ended = False
        try:
            async with self.wrapped.request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as stream:
                try:
                    yield stream
                except BaseException as exc:  # the stream failed, or its consumer did
                    ended = True
                    session.finish_error(state, exc)
                    raise
                ended = True
                core.finish(state, stream.get())  # what the consumer read of it
        except BaseException as exc:  # opening the stream failed
            if not ended:
                session.finish_error(state, exc)
            raise

    def __repr__(self) -> str:
        shown = safe_repr(self.wrapped, 120)
        if self.chaos_target is None:
            return f"ChaosModel({shown}, per agent{self.chaos_role and ', ' + self.chaos_role})"
        return f"ChaosModel({shown}, name={self.chaos_target!r})"


# -- FallbackModel: each model its own target ------------------------------------------------


def _is_under_chaos(model: object) -> bool:
    """A ``ChaosModel``, or a ``FallbackModel`` whose models all are."""
    if isinstance(model, ChaosModel):
        return True
    if isinstance(model, FallbackModel):
        return bool(model.models) and all(_is_under_chaos(m) for m in model.models)
    return False


def _chaos_fallback(
    session: ChaosSession,
    fallback: FallbackModel,
    *,
    name: str | None,
    agent: str | None,
    owner: object,
    role: str,
) -> FallbackModel:
    """A copy of ``fallback`` (same type, same ``fallback_on``) whose models are each under
    chaos as their own target: the first takes the role given, fallback ``i`` the role
    ``+ "/fallback{i}"``. A model under chaos already is kept as it is."""
    models = [
        _under_chaos(
            session,
            member,
            name=name,
            agent=agent,
            owner=owner,
            role=role if i == 0 else f"{role}/fallback{i}",
        )
        for i, member in enumerate(fallback.models)
    ]
    copied = copy.copy(fallback)
    for cached in ("_enter_lock", "_exit_stack"):  # the original's, bound to its own use
        copied.__dict__.pop(cached, None)
    copied._entered_count = 0
    copied.models = models
    return copied


def _under_chaos(
    session: ChaosSession,
    model: Model,
    *,
    name: str | None,
    agent: str | None = None,
    owner: object = None,
    role: str = "",
) -> Model:
    """``model`` under chaos: a ``ChaosModel``, or a ``FallbackModel`` of them. ``name`` is
    the target (``None``: the running agent's, per request); a role (a fallback's) is added
    to it, made unique for ``owner`` when there is one."""
    if isinstance(model, ChaosModel):
        return model
    if isinstance(model, FallbackModel):
        return _chaos_fallback(session, model, name=name, agent=agent, owner=owner, role=role)
    if name is None:
        return ChaosModel(session, model, role=role)
    target = name + role
    if role and owner is not None:
        target = session.agent_target(target, owner=owner)
    return ChaosModel(session, model, name=target, agent=agent)


def _as_model(model: object, where: str) -> Model:
    if isinstance(model, str):
        inferred: Model = infer_model(model)
        return inferred
    if not isinstance(model, Model):
        raise TypeError(
            f"{where}: expected a pydantic-ai Model or a model name, got {safe_repr(model, 80)}"
        )
    return model


def chaos_model(chaos: Any, model: Model | str, *, name: str | None = None) -> Model:
    """``model`` (a pydantic-ai ``Model`` or a model name) with its requests under chaos on the
    ``"model"`` channel (see :class:`ChaosModel`).

    - ``name``: the target of its requests. Without it, each request's target is the running
      agent's own (its name, made unique in the run), so a model shared by several agents keeps
      their calls apart; outside an agent run it is ``"model"``.
    - A ``FallbackModel`` comes back as a copy whose models are each under chaos as their own
      target: the first model takes the target, fallback ``i`` the target ``+ "/fallback{i}"``
      (``router``, ``router/fallback1`` ...), so a fault on the first model makes the
      ``FallbackModel`` fall back, as a real failure does.

    A model under chaos already is refused.
    """
    session = _session(chaos)
    if name is not None:
        check_name(name, "chaos_model(): name")
    model = _as_model(model, "chaos_model(): model")
    if _is_under_chaos(model):
        raise ChaosConfigError(
            "chaos_model(): the model is under chaos already (wrapping twice would record "
            "every request twice)"
        )
    return _under_chaos(session, model, name=name)


# -- agents --------------------------------------------------------------------------------


def _overridden_under_chaos(agent: Agent[Any, Any]) -> bool:
    """Whether ``agent`` runs under a ``chaos_agent`` block already (its model override)."""
    override = getattr(agent, "_override_model", None)  # private: a ContextVar of Some(model)
    try:
        current = override.get() if override is not None else None
    except Exception:
        return False
    return _is_under_chaos(getattr(current, "value", None))


def _agent_toolsets(agent: Agent[Any, Any]) -> tuple[dict[str, Any], list[Any]]:
    """(the agent's own tools by name, its other toolsets)."""
    function, *others = agent.toolsets
    own = dict(function.tools) if isinstance(function, FunctionToolset) else {}
    return own, others


def _known_tools(agents: tuple[Agent[Any, Any], ...]) -> set[str] | None:
    """Every tool name of ``agents``, or ``None`` when a toolset's tools are only known at run
    time."""
    known: set[str] = set()
    for agent in agents:
        own, others = _agent_toolsets(agent)
        if not all(isinstance(t, FunctionToolset) for t in others):
            return None
        known.update(own, *(t.tools for t in others))
    return known


def _overrides(
    session: ChaosSession,
    agent: Agent[Any, Any],
    model: Model,
    target: str,
    repairers: Mapping[str, Any],
) -> dict[str, Any]:
    """What ``agent.override`` gets: its model, tools and toolsets under chaos as its own."""
    overrides: dict[str, Any] = {
        "model": _under_chaos(session, model, name=target, agent=target, owner=agent)
    }
    own, others = _agent_toolsets(agent)
    if own:
        overrides["tools"] = [
            tool
            if _is_wrapped_tool(tool)
            else _wrap_tool(session, tool, repair=repairers.get(key), agent=target)
            for key, tool in own.items()
        ]
    if others:
        overrides["toolsets"] = [
            toolset
            if _under_chaos_toolset(toolset)
            else _chaos_toolset(session, toolset, repair=_for(toolset, repairers), agent=target)
            for toolset in others
        ]
    return overrides


@contextlib.contextmanager
def chaos_agent(
    chaos: Any,
    agent: Agent[Any, Any],
    *more: Agent[Any, Any],
    model: Model | str | None = None,
    repair: Any = None,
    name: str | None = None,
) -> Iterator[Any]:
    """Run ``agent`` (and the agents ``more``: those it delegates to, hands off to, or runs
    beside) under chaos inside the ``with`` block, each as its own: its model through
    :func:`chaos_model`, its own tools and its toolsets through :func:`wrap_tool` /
    :func:`chaos_toolset`, by ``agent.override`` (undone when the block ends, however it ends).

    - Each agent's model calls are the target of its name (``name=``, else ``agent.name``,
      else the variable that holds it where the block is entered, as pydantic-ai infers a
      name, else ``"model"``), made unique in the run (``router``, ``router#2``); its
      ``FallbackModel``'s fallbacks ``router/fallback1`` ...; its calls and its tools' calls
      name it in the trace. So the agent a tool delegates to (``await specialist.run(...,
      usage=ctx.usage)``) is under chaos with ``chaos_agent(chaos, router, specialist)``, and
      stateful faults replay each agent's own outputs only.
    - ``model``: the model the agent's runs get instead of its own (one agent only);
      ``repair``: a ``ParamRepairer`` per tool name (of any of the agents).
    - Yields the agent, or the tuple of agents when several are given.

    Toolsets passed to a run itself are not wrapped: wrap them with :func:`chaos_toolset`.
    """
    session = _session(chaos)
    agents = (agent, *more)
    for i, each in enumerate(agents):
        if not isinstance(each, Agent):
            what = "agent" if i == 0 else f"agent {i + 1}"
            raise TypeError(
                f"chaos_agent(): {what} is not a pydantic-ai Agent: {safe_repr(each, 80)}"
            )
        if any(other is each for other in agents[:i]):
            raise ChaosConfigError(
                f"chaos_agent(): agent {i + 1} is given twice ({safe_repr(each, 80)}); give "
                "each agent once"
            )
    if more and (model is not None or name is not None):
        raise TypeError(
            "chaos_agent(): model= and name= are for one agent; with several agents each keeps "
            "its own model and its own name"
        )
    if name is not None:
        check_name(name, "chaos_agent(): name")
    repairers = _by_name(repair)
    models: list[Model] = []
    for each in agents:
        base = model if model is not None else each.model
        if base is None:
            whose = (
                "the agent" if not more else f"the agent {_name_of(each) or safe_repr(each, 60)}"
            )
            raise ChaosConfigError(
                f"chaos_agent(): {whose} has no model of its own; pass model= (the model its "
                "runs would get)" + ("" if not more else ", in a chaos_agent() block of its own")
            )
        resolved = _as_model(base, "chaos_agent(): model")
        if _is_under_chaos(resolved) or _overridden_under_chaos(each):
            raise ChaosConfigError(
                "chaos_agent(): the agent's model is under chaos already (wrapping twice would "
                "record every request twice)"
            )
        models.append(resolved)
    known = _known_tools(agents)
    if known is not None:
        unknown = sorted(set(repairers) - known)
        if unknown:
            whose = "agent's" if not more else "agents'"
            raise ChaosConfigError(
                f"chaos_agent(): repair= names {unknown[0]!r}, which is not among the {whose} "
                f"tools: {', '.join(sorted(known)) or '(none)'}"
            )
    frame = _caller_frame()
    try:
        targets = [
            _agent_target(session, each, name, fallback=_inferred_name(each, frame))
            for each in agents
        ]
    finally:
        del frame
    with contextlib.ExitStack() as stack:
        for each, base, target in zip(agents, models, targets, strict=True):
            stack.enter_context(each.override(**_overrides(session, each, base, target, repairers)))
        yield agent if not more else agents


def _for(toolset: AbstractToolset[Any], repairers: Mapping[str, Any]) -> dict[str, Any]:
    """The repairers of ``toolset``'s tools (all of them for a toolset whose tools are only
    known at run time)."""
    if isinstance(toolset, FunctionToolset):
        return {k: r for k, r in repairers.items() if k in toolset.tools}
    return dict(repairers)
