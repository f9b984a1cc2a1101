"""OpenAI Agents SDK: chaos for ``FunctionTool`` tools, for models, for a whole multi-agent app.

- ``chaos_agent(chaos, agent)`` is the whole app in one line: a clone of ``agent`` whose model
  and function tools are wrapped, and so, recursively and once each, every agent it can reach:
  its handoffs (``Agent`` entries and ``Handoff`` objects) and the agents it uses as tools
  (``agent.as_tool(...)``); cycles (FAQ -> triage -> FAQ) are fine (:func:`chaos_agent`).
- ``chaos_model(chaos, model)`` wraps a ``Model``: every model call goes through the plan;
  its text and the tool calls it asks for are recorded (the halt monitor reads them), its
  usage counts against ``max_tokens``, and ``repeated_output`` / ``paraphrased_output``
  answer in the model's place (:class:`ChaosModel`). As the run's model
  (``RunConfig(model=chaos_model(chaos, model))``, which every agent of the run uses) it
  files each call under the agent that makes it.
- ``chaos.wrap(tool)`` / ``chaos.wrap_tools([...])`` take a ``FunctionTool`` and return a
  ``FunctionTool``: same name, description, strict flag and ``params_json_schema`` (the model
  sees the very same tool), whose calls go through the plan before the real tool runs
  (:func:`wrap_tool`).

**Every agent its own target.** Each agent's model calls are a target of their own, named
after the agent (``"Triage Agent"``; a second agent of the same name is ``"Triage Agent#2"``),
so ``repeated_output``, ``paraphrased_output`` and ``stale_output`` replay only that agent's
own answers, never another agent's (whose tool calls it does not have), and a fault aims at
one agent with ``{"tools": ["Triage*"], "channels": ["model"]}``. ``ModelCall`` and
``ToolCall`` events name their agent (``agent=``).

**Model errors are the openai SDK's own.** An injected model failure raises what the
``openai`` client raises: ``openai.RateLimitError`` for a 429 (with ``retry-after`` and
``retry-after-ms`` headers when the fault gives a delay), ``InternalServerError`` for a 5xx,
``BadRequestError`` for a 400 ..., ``APITimeoutError`` for a timeout and
``APIConnectionError`` for a dropped connection, built by the openai client's own code for a
request to the wrapped model's endpoint (``OpenAIResponsesModel``: ``<base_url>/responses``,
``OpenAIChatCompletionsModel``: ``<base_url>/chat/completions``; any other ``Model``: the
OpenAI API's ``/responses``). That is the default for every ``Model``: the SDK's retry runtime
reads openai errors, so the stock retry policies (``retry_policies.network_error()``,
``http_status([...])``, ``retry_after()``, ``provider_suggested()`` with a model whose
``get_retry_advice`` reads them, ``any`` / ``all``) retry an injected failure exactly as they
retry a real one, and honour its Retry-After (on virtual time with ``virtual_sleep=True``).
The exceptions are marked injected (``isinstance(exc, InjectedFault)``) for the trace.

**Tool errors reach the model as the SDK surfaces them.** The interception sits *inside* the
SDK's failure handling of a ``@function_tool`` (between its ``failure_error_function`` and the
code that parses the arguments and runs the function), so an injected failure is caught where
the tool's own exception would be: by default the model reads the SDK's fixed "An error
occurred while running the tool. Please try again.", while the trace keeps the real error. On
a tool with its own timeout (``@function_tool(timeout=...)``) a fault that hangs the call at
least that long (a ``timeout``; a ``latency`` as long) meets the SDK's timeout, at the tool's
timeout in virtual time: the model reads "Tool 'x' timed out after N seconds." (or the tool's
``timeout_error_function``'s text), or, with ``timeout_behavior="raise_exception"``, the run
raises ``agents.ToolTimeoutError``. With ``virtual_sleep=True`` it is the SDK's own timer that
ends the call; without, the adapter gives the call the outcome the SDK gives a timeout. A
``malformed_params`` fault's arguments go on as the JSON text the model would have sent; the
SDK parses and validates them (a ``ModelBehaviorError``, which reaches the model the same
way) before the function could run. ``repair=`` (a ``ParamRepairer``) sees the model's
arguments, JSON text that is no object included, before the SDK does. A ``MaxTurnsExceeded``
that ends a test is recorded as the framework's cap (:mod:`pytest_agentchaos.adapters.caps`).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import inspect
import json
import types
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from agents import Agent, FunctionTool, Handoff, Model, ModelResponse, ToolTimeoutError
from agents.items import TResponseStreamEvent
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from agents.tool import default_tool_timeout_error_message
from agents.tracing import get_current_span
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
)

from ..clock.clock import VirtualClock
from ..inject.call import CallState, new_state
from ..inject.callables import _wire, check_name
from ..inject.errors import NativeErrors, is_injected, mark_injected
from ..inject.intercept import Interceptor
from ..inject.model import default_tokens
from ..inject.session import ChaosSession
from ..saferepr import safe_repr
from .common import finish_model, native_errors

__all__ = ["ChaosModel", "chaos_agent", "chaos_model", "wrap_tool"]

#: The attribute of a wrapped tool, model, handoff or agent clone that holds its original.
ORIGINAL = "__chaos_original__"
#: The target of model calls whose agent is unknown (see :meth:`ChaosModel.target`).
UNKNOWN_AGENT = "model"

Invoke = Callable[[Any, str], Awaitable[Any]]


def _session(chaos: Any, where: str) -> ChaosSession:
    session = getattr(chaos, "session", chaos)
    if not isinstance(session, ChaosSession):
        raise TypeError(f"{where} needs a Chaos (the chaos fixture), got {safe_repr(chaos, 80)}")
    return session


def _original(obj: Any) -> Any:
    """The object a chaos wrapper (tool, model, handoff, agent clone) stands for, or ``obj``."""
    found = getattr(obj, "__dict__", {}).get(ORIGINAL)
    return obj if found is None else found


# -- tools -------------------------------------------------------------------------------------


def wrap_tool(
    session: ChaosSession,
    tool: FunctionTool,
    *,
    name: str | None = None,
    repair: Any = None,
    agent: str | None = None,
) -> FunctionTool:
    """A copy of ``tool`` (a ``FunctionTool``; same name, description and parameter schema)
    whose every call goes through ``session``'s plan before the real tool runs.

    ``name``: the tool's name in the trace (default: ``tool.name``; the model still sees
    ``tool.name``). ``repair``: a ``ParamRepairer`` that checks every call's arguments after
    the faults and before the SDK parses them. ``agent``: the agent whose tool it is, named
    on its ``ToolCall`` events. Wrapping a wrapped tool wraps the original again, so its
    calls are recorded once."""
    __tracebackhide__ = True
    if not isinstance(tool, FunctionTool):
        raise TypeError(f"wrap_tool() needs an Agents SDK FunctionTool, got {safe_repr(tool, 80)}")
    if agent is not None and not isinstance(agent, str):
        raise TypeError(f"wrap_tool(): agent must be an agent's name, got {safe_repr(agent, 80)}")
    original: FunctionTool = _original(tool)
    target = check_name(name, "chaos.wrap(): name") if name is not None else original.name
    repairer = _wire(repair, session) if repair is not None else None
    return _wrapped_tool(session, original, target, repairer, agent)


def _wrapped_tool(
    session: ChaosSession,
    original: FunctionTool,
    target: str,
    repairer: Any,
    agent: str | None,
    *,
    runs: Agent[Any] | None = None,
) -> FunctionTool:
    """``original`` wrapped (see :func:`wrap_tool`); ``runs``: for an agent used as a tool,
    the agent its nested run starts with instead of the original's."""
    timeout = original.timeout_seconds
    core: Interceptor
    if timeout:
        core = _TimedCore(session, target, original, repairer=repairer, agent=agent)
    else:
        core = Interceptor(
            session, target, schema=original.params_json_schema, repairer=repairer, agent=agent
        )
    wrapped = copy.copy(original)  # the SDK's own copy: the invoker is rebound to the copy
    invoker: Any = original.on_invoke_tool
    inner = getattr(invoker, "_invoke_tool_impl", None)
    nested = runs
    if callable(inner) and callable(getattr(invoker, "__agents_bind_function_tool__", None)):
        # A @function_tool (or agent.as_tool()): its invoker runs the failure handling around
        # `inner` (which parses the arguments and runs the function). Ours goes between them.
        if runs is not None:
            rebound = _runs_agent(inner, original._agent_instance, runs)
            if rebound is None:
                nested = None
            else:
                inner = rebound
        ours = _intercepting(core, inner, raises=False)
        ours.__dict__.update(getattr(inner, "__dict__", {}))  # approval and __wrapped__ hooks
        handler = copy.copy(invoker)
        if timeout:
            handler.__class__ = _raising_invoker(type(invoker))
        handler._invoke_tool_impl = ours
        handler._function_tool = None
        wrapped.on_invoke_tool = handler.__agents_bind_function_tool__(wrapped)
    else:  # a FunctionTool built by hand: its on_invoke_tool is the tool
        wrapped.on_invoke_tool = _intercepting(core, invoker, raises=True)
        nested = None
    if nested is not None:
        wrapped.__dict__["_agent_instance"] = nested
    elif runs is not None:
        session.note(
            f"agent tool {original.name!r}: this openai-agents version builds agent tools in a "
            f"way the adapter does not know, so its nested run starts with the original agent "
            f"{runs.name!r}, whose model calls and tools are not under chaos"
        )
    wrapped.__dict__[ORIGINAL] = original
    wrapped.__dict__["__chaos_tool__"] = target
    return wrapped


def _runs_agent(inner: Any, nested: Any, agent: Agent[Any]) -> Any:
    """``inner`` (``agent.as_tool()``'s implementation, whose nested run starts with the agent
    it closes over as ``self``, ``nested``) closing over ``agent`` instead, every other
    parameter of ``as_tool`` kept; ``None`` when its layout is not that."""
    code = getattr(inner, "__code__", None)
    cells = getattr(inner, "__closure__", None)
    if code is None or cells is None or "self" not in code.co_freevars:
        return None
    at = code.co_freevars.index("self")
    try:
        if cells[at].cell_contents is not nested:
            return None
    except ValueError:  # an empty cell
        return None
    closure = (*cells[:at], types.CellType(agent), *cells[at + 1 :])
    rebound = types.FunctionType(
        code, inner.__globals__, inner.__name__, inner.__defaults__, closure
    )
    rebound.__kwdefaults__ = inner.__kwdefaults__
    rebound.__qualname__ = inner.__qualname__
    rebound.__dict__.update(inner.__dict__)
    return rebound


class _TimedCore(Interceptor):
    """The interceptor of a tool with the SDK's own timeout (``timeout_seconds``). A fault
    that makes a call hang at least that long (a ``timeout``, a ``latency`` as long) is the
    SDK's timeout: on a virtual event loop (or a real one) the call hangs past the timeout, so
    that the SDK's own ``asyncio.wait_for`` ends it, in virtual time, as it ends a tool that
    hangs; on a loop that does not keep virtual time (``virtual_sleep`` off) the SDK's timer
    cannot see time pass, so the call ends after the tool's timeout with a
    ``ToolTimeoutError`` that :func:`_intercepting` turns into what the SDK makes of one."""

    def __init__(
        self,
        session: ChaosSession,
        target: str,
        tool: FunctionTool,
        *,
        repairer: Any,
        agent: str | None,
    ) -> None:
        super().__init__(
            session, target, schema=tool.params_json_schema, repairer=repairer, agent=agent
        )
        self.tool = tool
        self.timeout = float(tool.timeout_seconds or 0.0)
        self._begun: CallState | None = None

    def begin(self, mapping: Mapping[str, Any], recorded: Any = None) -> CallState:
        __tracebackhide__ = True
        state, self._begun = self._begun, None
        return state if state is not None else super().begin(mapping, recorded)

    async def acall(
        self,
        mapping: Mapping[str, Any],
        invoke: Callable[[Mapping[str, Any]], Awaitable[Any]],
        *,
        recorded: Any = None,
    ) -> Any:
        __tracebackhide__ = True
        state = super().begin(mapping, recorded)
        effect = state.effect
        if effect is None or not (
            (effect.failure is not None and effect.failure.kind == "timeout")
            or (effect.failure is None and effect.delay >= self.timeout)
        ):
            self._begun = state  # taken by begin() as the interceptor starts, before any await
            return await super().acall(mapping, invoke, recorded=recorded)
        return await self._time_out(state)

    async def _time_out(self, state: CallState) -> Any:
        """Hang ``state``'s call until the SDK's timeout ends it (see the class doc)."""
        __tracebackhide__ = True
        session = self.session
        clock = session.clock
        effect = state.effect
        assert effect is not None
        if isinstance(clock, VirtualClock) and not clock.on_virtual_loop():
            hang = self.timeout
        else:
            hang = max(effect.delay, self.timeout) + self.timeout  # the SDK's timer fires first
        hanging = new_state(
            state.channel, state.target, state.index, state.step, state.t, state.key,
            dataclasses.replace(effect, delay=hang), state.fault, state.decision,
        )  # fmt: skip
        error = mark_injected(ToolTimeoutError(self.tool.name, self.timeout), state.fault)
        try:
            await session.adelay(hanging)
        except asyncio.CancelledError as cancelled:  # the SDK's timeout, or the run's end
            timed_out = session.now() - state.t >= self.timeout - 1e-9
            session.finish_error(state, error if timed_out else cancelled)
            raise
        except BaseException as exc:  # a budget ended the wait
            session.finish_error(state, exc)
            raise
        session.finish_error(state, error)
        raise error

    async def outcome(self, ctx: Any, error: ToolTimeoutError) -> Any:
        """What the SDK makes of a timeout of this tool: the model's text, or a
        :class:`_Raise` of ``error`` for its invoker to raise."""
        tool = self.tool
        if tool.timeout_behavior == "raise_exception":
            return _Raise(error)
        formatter = tool.timeout_error_function
        if formatter is None:
            return default_tool_timeout_error_message(
                tool_name=tool.name, timeout_seconds=self.timeout
            )
        result = formatter(ctx, error)
        return await result if inspect.isawaitable(result) else result


class _Raise:
    """A tool result that its invoker raises (``ToolTimeoutError``, past the SDK's failure
    handling, as the SDK raises it)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


_INVOKERS: dict[type, type] = {}


def _raising_invoker(base: Any) -> type:
    """A subclass of the SDK's failure-handling invoker that raises a :class:`_Raise` result
    (also once rebound to a copy of the tool)."""
    found = _INVOKERS.get(base)
    if found is not None:
        return found

    async def call(self: Any, ctx: Any, input: str) -> Any:
        out = await base.__call__(self, ctx, input)
        if isinstance(out, _Raise):
            raise out.error from TimeoutError()
        return out

    def bind(self: Any, function_tool: FunctionTool) -> Any:
        bound = base.__agents_bind_function_tool__(self, function_tool)
        if type(bound) is base:
            bound.__class__ = type(self)
        return bound

    namespace = {
        "__module__": base.__module__,
        "__qualname__": base.__qualname__,
        "__call__": call,
        "__agents_bind_function_tool__": bind,
    }
    found = _INVOKERS[base] = type(base.__name__, (base,), namespace)
    return found


def _intercepting(core: Interceptor, invoke: Invoke, *, raises: bool) -> Invoke:
    """``invoke(ctx, input_json)`` with its calls going through ``core``: faults and repair act
    on the parsed arguments; the real invoker gets them back as JSON text (the model's own
    text when nothing changed them). ``raises``: a timeout the SDK raises is raised here (a
    hand-built tool), not handed to the invoker as a :class:`_Raise`."""
    timed = core if isinstance(core, _TimedCore) else None

    async def invoke_tool(ctx: Any, input_json: str) -> Any:
        __tracebackhide__ = True
        args = _parse(input_json)
        the_core = core
        if args is None:  # not a JSON object: the SDK will say so, unless repair fixes it
            args = {}
            if core.repairer is not None:
                the_core = copy.copy(core)
                the_core.repairer = _TextFirst(core.repairer, args, input_json)
            recorded: Any = {"(arguments)": input_json}
        else:
            recorded = None

        async def run(mapping: Mapping[str, Any]) -> Any:
            __tracebackhide__ = True
            if mapping is args:
                text = input_json
            else:
                text = json.dumps(dict(mapping), ensure_ascii=False, default=str)
                with contextlib.suppress(AttributeError):  # arguments prepared for approval
                    ctx._function_tool_arguments = None  # are the model's, not these
            return await invoke(ctx, text)

        try:
            return await the_core.acall(args, run, recorded=recorded)
        except ToolTimeoutError as error:  # a hang that no SDK timer ended (see _TimedCore)
            if timed is None or not is_injected(error):
                raise
            outcome = await timed.outcome(ctx, error)
            if raises and isinstance(outcome, _Raise):
                raise error from TimeoutError()
            return outcome

    return invoke_tool


def _parse(input_json: str) -> dict[str, Any] | None:
    """The model's arguments as the SDK reads them (empty text is ``{}``), or ``None``."""
    if not input_json:
        return {}
    try:
        parsed = json.loads(input_json)
    except (ValueError, TypeError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


class _TextFirst:
    """A repairer handed the model's JSON text in place of ``placeholder`` (the empty
    arguments faults saw), so that it can read arguments the SDK could not parse."""

    def __init__(self, repairer: Any, placeholder: Mapping[str, Any], text: str) -> None:
        self.repairer, self.placeholder, self.text = repairer, placeholder, text

    def repair(self, args: Any, **kwargs: Any) -> Any:
        return self.repairer.repair(self.text if args is self.placeholder else args, **kwargs)

    def declined(self, result: Any) -> Any:
        return self.repairer.declined(result)


# -- models ------------------------------------------------------------------------------------


def _read(response: Any) -> tuple[str, list[tuple[str, Any]], int | None]:
    """(text, tool calls, tokens) of a ``ModelResponse`` or of a streamed response's events."""
    usage_of: Any
    if isinstance(response, ModelResponse):
        output, usage_of = list(response.output), response
    else:
        done = _completed(response)
        output = list(done.response.output) if done is not None else []
        if not output:
            output = [e.item for e in response if isinstance(e, ResponseOutputItemDoneEvent)]
        usage_of = done.response if done is not None else None
    texts: list[str] = []
    calls: list[tuple[str, Any]] = []
    for item in output:
        if isinstance(item, ResponseOutputMessage):
            texts.extend(c.text for c in item.content if isinstance(c, ResponseOutputText))
        elif isinstance(item, ResponseFunctionToolCall):
            args = _parse(item.arguments)
            calls.append((item.name, args if args is not None else item.arguments))
    tokens = default_tokens(usage_of) if usage_of is not None else None
    return "".join(texts), calls, tokens


def _completed(events: Any) -> ResponseCompletedEvent | None:
    found = [e for e in events if isinstance(e, ResponseCompletedEvent)]
    return found[-1] if found else None


def _say(output: list[Any], text: str) -> list[Any]:
    """``output`` with its message text replaced by ``text`` (in the first text part; the
    other text parts go), tool calls unchanged."""
    new: list[Any] = []
    placed = False
    for item in output:
        if isinstance(item, ResponseOutputMessage):
            content = []
            for part in item.content:
                if isinstance(part, ResponseOutputText):
                    if placed:
                        continue
                    part, placed = part.model_copy(update={"text": text}), True
                content.append(part)
            item = item.model_copy(update={"content": content})
        new.append(item)
    return new


def _rewrite(response: Any, text: str) -> Any:
    """A copy of ``response`` (a ``ModelResponse`` or stream events) saying ``text``."""
    if isinstance(response, ModelResponse):
        return dataclasses.replace(response, output=_say(list(response.output), text))
    done = _completed(response)
    if done is None:
        return response
    rewritten = done.response.model_copy(update={"output": _say(done.response.output, text)})
    said = done.model_copy(update={"response": rewritten})
    return [said if e is done else e for e in response]


def _fresh_calls(output: list[Any], index: int) -> list[Any]:
    """``output`` with new call ids for its tool calls: a model that says the same again asks
    for the same calls anew (the SDK may skip a call whose id it has run already)."""
    new = []
    for item in output:
        if isinstance(item, ResponseFunctionToolCall):
            ids = {"call_id": f"{item.call_id}~{index}"}
            if item.id is not None:
                ids["id"] = f"{item.id}~{index}"
            item = item.model_copy(update=ids)
        new.append(item)
    return new


def _replayed(response: Any, index: int) -> Any:
    """A replayed response (``repeated_output``) with fresh tool call ids."""
    if isinstance(response, ModelResponse):
        return dataclasses.replace(response, output=_fresh_calls(list(response.output), index))
    events = []
    for event in response:
        if isinstance(event, ResponseCompletedEvent):
            fresh = _fresh_calls(list(event.response.output), index)
            event = event.model_copy(
                update={"response": event.response.model_copy(update={"output": fresh})}
            )
        elif isinstance(event, ResponseOutputItemDoneEvent):
            event = event.model_copy(update={"item": _fresh_calls([event.item], index)[0]})
        events.append(event)
    return events


def running_agent() -> str | None:
    """The name of the agent whose turn the SDK is running, from its current span (the turn
    span, or the agent span when the run's tracing config leaves turn spans out; both exist
    with tracing disabled too), or ``None`` outside a run."""
    try:
        data = getattr(get_current_span(), "span_data", None)
    except Exception:  # a trace provider of the user's own that fails
        return None
    name = getattr(data, "agent_name", None)
    if name is None and getattr(data, "type", None) == "agent":
        name = getattr(data, "name", None)
    return name if isinstance(name, str) and name else None


def _endpoint(model: Model) -> tuple[str | None, str]:
    """(base URL, path) of the requests ``model`` sends: its openai client's base URL (the
    OpenAI API's when it has none) and the path of its API."""
    path = "/chat/completions" if isinstance(model, OpenAIChatCompletionsModel) else "/responses"
    base = getattr(getattr(model, "__dict__", {}).get("_client"), "base_url", None)
    return (str(base) if base is not None else None), path


def _model_errors(session: ChaosSession, model: Model) -> NativeErrors | None:
    base_url, path = _endpoint(model)
    seam = "Agents SDK model calls"
    try:
        return native_errors(session, "openai", seam, base_url=base_url, path=path)
    except Exception:  # a base URL the HTTP client refuses: the OpenAI API's own
        return native_errors(session, "openai", seam, path=path)


class ChaosModel(Model):
    """A ``Model`` whose calls (``get_response`` and ``stream_response``) go through a chaos
    run's plan, channel ``model``; a failure raises the ``openai`` SDK's own exception. A
    streamed response is read whole, recorded, then yielded event by event (so a failure
    comes before any event, where the SDK may still retry); a paraphrase rewrites its
    completed response (what the agent acts on).

    ``name``: the target of its calls; ``None`` (the default) files each call under the agent
    that makes it (:meth:`target`). ``agent``: the agent whose model it is (default: the
    running agent), named on its ``ModelCall`` events."""

    def __init__(
        self,
        session: ChaosSession,
        model: Model,
        name: str | None = None,
        *,
        agent: str | None = None,
    ) -> None:
        self.session = session
        self.model: Model = _original(model)
        self.name = check_name(name, "chaos_model(): name") if name is not None else None
        self.agent = agent
        self.__dict__[ORIGINAL] = self.model
        self._finish = finish_model(session, _read, _rewrite)
        self._errors = _model_errors(session, self.model)
        self._targets: dict[str | None, str] = {}

    def target(self) -> tuple[str, str | None]:
        """(target, agent) of a call made now: ``name`` when given, else the running agent's
        own target (``session.agent_target``: its name; :func:`running_agent`), else
        ``"model"`` (a call made outside a run)."""
        running = self.agent or running_agent()
        if self.name is not None:
            return self.name, running
        target = self._targets.get(running)
        if target is None:
            if running is None:
                self.session.note(
                    "Agents SDK model calls whose agent is unknown (made outside a run) are "
                    f"filed under target {UNKNOWN_AGENT!r}"
                )
            owner = object()  # this model's calls for this agent name
            asked = running if running is not None else UNKNOWN_AGENT
            target = self._targets[running] = self.session.agent_target(asked, owner)
        return target, running

    def _core(self, fresh: list[Any]) -> Interceptor:
        """An interceptor for one call; ``fresh`` holds what the real model returned."""

        def finish(state: CallState, response: Any) -> Any:
            __tracebackhide__ = True
            if not any(response is f for f in fresh):  # a replay answered in the model's place
                response = _replayed(response, state.index)
            return self._finish(state, response)

        target, agent = self.target()
        return Interceptor(
            self.session, target, channel="model", finish=finish, errors=self._errors, agent=agent
        )

    @staticmethod
    def _args(system_instructions: str | None, input: Any) -> dict[str, Any]:
        args: dict[str, Any] = {"input": input}
        if system_instructions is not None:
            args["instructions"] = system_instructions
        return args

    async def get_response(  # noqa: D102 - Model's
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        __tracebackhide__ = True
        fresh: list[Any] = []

        async def invoke(_: Mapping[str, Any]) -> ModelResponse:
            response = await self.model.get_response(
                system_instructions, input, model_settings, tools, output_schema, handoffs,
                tracing, **kwargs,
            )  # fmt: skip
            fresh.append(response)
            return response

        args = self._args(system_instructions, input)
        return await self._core(fresh).acall(args, invoke)  # type: ignore[no-any-return]

    async def stream_response(  # noqa: D102 - Model's
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        **kwargs: Any,
    ) -> AsyncIterator[TResponseStreamEvent]:
        __tracebackhide__ = True
        fresh: list[Any] = []

        async def invoke(_: Mapping[str, Any]) -> list[Any]:
            stream = self.model.stream_response(
                system_instructions, input, model_settings, tools, output_schema, handoffs,
                tracing, **kwargs,
            )  # fmt: skip
            events = [event async for event in stream]
            fresh.append(events)
            return events

        args = self._args(system_instructions, input)
        for event in await self._core(fresh).acall(args, invoke):
            yield event

    def get_retry_advice(self, request: Any) -> Any:  # noqa: D102 - the wrapped model's
        return self.model.get_retry_advice(request)

    def _supports_default_prompt_cache_key(self) -> bool:
        """The wrapped model's answer: the SDK then sends it the same requests."""
        supports = getattr(self.model, "_supports_default_prompt_cache_key", None)
        return bool(supports()) if callable(supports) else False

    async def close(self) -> None:  # noqa: D102 - the wrapped model's
        await self.model.close()

    async def _cleanup_on_run_end(self, owner: object) -> None:
        await self.model._cleanup_on_run_end(owner)

    def __repr__(self) -> str:
        shown = self.name if self.name is not None else "per agent"
        return f"<ChaosModel {shown!r} of {safe_repr(self.model, 80)}>"


def chaos_model(chaos: Any, model: Model, *, name: str | None = None) -> ChaosModel:
    """``model`` (an Agents SDK ``Model``) with its calls under ``chaos`` (a ``Chaos``, e.g.
    the ``chaos`` fixture): faults on the ``model`` channel apply before it is asked (a
    failure raises the openai SDK's own exception); its text, the tool calls it asks for and
    its token usage are recorded.

    ``name``: the target of its calls in the trace and in fault selectors. By default each
    call is filed under the agent that makes it (its name), so one ``chaos_model`` serves a
    whole multi-agent app as ``RunConfig(model=chaos_model(chaos, model))``, each agent its
    own target (agents of the same name share one: :func:`chaos_agent` tells them apart).
    Wrapping a wrapped model wraps the original again."""
    session = _session(chaos, "chaos_model()")
    if not isinstance(model, Model):
        raise TypeError(
            f"chaos_model() needs an Agents SDK Model instance, got {safe_repr(model, 80)} "
            "(a model name is resolved by the run's provider: pass the Model itself)"
        )
    return ChaosModel(session, model, name)


# -- agents ------------------------------------------------------------------------------------


class _Cloner:
    """Puts a multi-agent app under chaos: each agent cloned once (by identity), with its
    model, function tools, handoffs and agents-as-tools pointing to clones."""

    def __init__(
        self,
        session: ChaosSession,
        start: Agent[Any],
        model: Model | None,
        name: str | None,
    ) -> None:
        self.session = session
        self.start = start
        self.model = model
        self.name = name
        self.clones: dict[int, Agent[Any]] = {}
        self.originals: list[Agent[Any]] = []  # keeps the ids above taken

    def clone(self, agent: Agent[Any]) -> Agent[Any]:
        """``agent``'s clone under chaos (made once; an agent reached again gets the same)."""
        agent = _original(agent)
        found = self.clones.get(id(agent))
        if found is not None:
            return found
        own = agent.model
        if self.model is not None and (agent is self.start or not isinstance(own, Model)):
            base: Any = self.model
        else:
            base = own
        if not isinstance(base, Model):
            raise TypeError(
                f"chaos_agent(): agent {agent.name!r} has model {safe_repr(base, 80)}, not a "
                "Model instance: pass model=<the Model the agents without one should use>"
            )
        asked = self.name if agent is self.start and self.name is not None else agent.name
        target = self.session.agent_target(asked or "agent", agent)
        model = ChaosModel(self.session, base, target, agent=agent.name or None)
        clone = agent.clone(model=model, model_settings=agent.model_settings)
        clone.__dict__[ORIGINAL] = agent
        self.clones[id(agent)] = clone  # before its tools and handoffs: cycles end here
        self.originals.append(agent)
        clone.tools = [self.tool(t, clone) for t in agent.tools]
        clone.handoffs = [self.handoff(h) for h in agent.handoffs]
        return clone

    def tool(self, tool: Any, owner: Agent[Any]) -> Any:
        if not isinstance(tool, FunctionTool):
            return tool
        original: FunctionTool = _original(tool)
        # one target per tool object: two different tools of the same name do not share one
        target = self.session.agent_target(original.name, original, channel="tool")
        nested: Any = getattr(original, "_agent_instance", None)
        is_agent_tool = getattr(original, "_is_agent_tool", False) and isinstance(nested, Agent)
        runs = self.clone(nested) if is_agent_tool else None
        agent = owner.name or None
        return _wrapped_tool(self.session, original, target, None, agent, runs=runs)

    def handoff(self, entry: Any) -> Any:
        entry = _original(entry)
        if isinstance(entry, Agent):
            return self.clone(entry)
        if not isinstance(entry, Handoff):
            return entry  # not the SDK's: left as it is
        # A copy keeping every field (name, description, schema, input_filter, is_enabled,
        # nest_handoff_history ...); its invocation runs the original's (on_handoff, input
        # validation) and hands over to the clone of the agent that returns.
        copied = copy.copy(entry)
        invoke: Any = entry.on_invoke_handoff
        clone_of = self.clone

        async def on_invoke_handoff(ctx: Any, input_json: str | None = None) -> Any:
            agent = await invoke(ctx, input_json)
            return clone_of(agent) if isinstance(agent, Agent) else agent

        copied.on_invoke_handoff = on_invoke_handoff
        ref = getattr(entry, "_agent_ref", None)
        target = ref() if callable(ref) else None
        if isinstance(target, Agent):
            copied._agent_ref = weakref.ref(self.clone(target))
        copied.__dict__[ORIGINAL] = entry
        return copied


def chaos_agent(
    chaos: Any, agent: Agent[Any], *, model: Model | None = None, name: str | None = None
) -> Agent[Any]:
    """A clone of ``agent`` under ``chaos``, and with it the whole app it leads: every agent it
    can reach through its handoffs (``Agent`` entries and ``Handoff`` objects) and the agents
    it uses as tools (``other.as_tool(...)``), recursively, each cloned once (cycles such as
    FAQ -> triage -> FAQ included). Each clone's model is wrapped (:class:`ChaosModel`) as a
    target of its own named after the agent, its ``FunctionTool`` tools are wrapped
    (:func:`wrap_tool`), its handoffs lead to the clones (each ``Handoff`` keeps its tool name,
    description, ``on_handoff``, ``input_filter``, ``is_enabled`` ...), and an agent tool's
    nested run starts with the clone; other tools, settings and hooks are kept. The originals
    are left untouched; hooks, ``on_handoff`` and ``result.last_agent`` see the clones (same
    names).

    ``model``: the ``Model`` that ``agent`` uses instead of its own, and that the agents
    without a ``Model`` instance of their own (a model name, or none) use; without it every
    agent needs one. ``name``: the target of ``agent``'s own model calls (default: its name).
    Putting a clone under chaos again wraps the originals again."""
    session = _session(chaos, "chaos_agent()")
    if not isinstance(agent, Agent):
        raise TypeError(f"chaos_agent() needs an Agents SDK Agent, got {safe_repr(agent, 80)}")
    if model is not None and not isinstance(model, Model):
        raise TypeError(
            f"chaos_agent(): model must be an Agents SDK Model instance, got "
            f"{safe_repr(model, 80)} (a model name is resolved by the run's provider)"
        )
    if name is not None:
        check_name(name, "chaos_agent(): name")
    return _Cloner(session, _original(agent), model, name).clone(agent)
