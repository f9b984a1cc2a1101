"""OpenAI Agents SDK: chaos for ``FunctionTool`` tools, for models, for a whole ``Agent``.

- ``chaos.wrap(tool)`` / ``chaos.wrap_tools([...])`` take a ``FunctionTool`` (``@function_tool``
  on a sync or async function, or one built by hand) and return a ``FunctionTool``: same name,
  description, strict flag and ``params_json_schema`` (the model sees the very same tool),
  whose calls go through the fault plan before the real tool runs (:func:`wrap_tool`).
- ``chaos_model(chaos, model)`` wraps a ``Model``: every model call goes through the plan;
  its text and the tool calls it asks for are recorded (the halt monitor reads them), its
  usage counts against ``max_tokens``, and ``repeated_output`` / ``paraphrased_output``
  answer in the model's place (:class:`ChaosModel`).
- ``chaos_agent(chaos, agent)`` is the whole agent in one line: a clone whose model and
  function tools are wrapped (:func:`chaos_agent`).

Errors reach the model as the SDK surfaces them. The interception sits *inside* the SDK's
failure handling of a ``@function_tool`` (between its ``failure_error_function`` and the code
that parses the arguments and runs the function), so an injected failure is caught where the
tool's own exception would be: by default the model reads the SDK's fixed "An error occurred
while running the tool. Please try again.", while the trace keeps the real error. A
``malformed_params`` fault's arguments go on as the JSON text the model would have sent; the
SDK parses and validates them (a ``ModelBehaviorError``, which reaches the model the same
way) before the function could run. ``repair=`` (a ``ParamRepairer``) sees the model's
arguments, JSON text that is no object included, before the SDK does. A ``MaxTurnsExceeded``
that ends a test is recorded as the framework's cap (:mod:`pytest_agentchaos.adapters.caps`).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from agents import Agent, FunctionTool, Model, ModelResponse
from agents.items import TResponseStreamEvent
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
)

from ..inject.call import CallState
from ..inject.callables import _wire, check_name
from ..inject.intercept import Interceptor
from ..inject.model import default_tokens
from ..inject.session import ChaosSession
from ..saferepr import safe_repr
from .common import finish_model

__all__ = ["ChaosModel", "chaos_agent", "chaos_model", "wrap_tool"]

#: The attribute of a wrapped tool (or model) that holds the one it wraps.
ORIGINAL = "__chaos_original__"

Invoke = Callable[[Any, str], Awaitable[Any]]


def _session(chaos: Any, where: str) -> ChaosSession:
    session = getattr(chaos, "session", chaos)
    if not isinstance(session, ChaosSession):
        raise TypeError(f"{where} needs a Chaos (the chaos fixture), got {safe_repr(chaos, 80)}")
    return session


# -- tools -------------------------------------------------------------------------------------


def wrap_tool(
    session: ChaosSession, tool: FunctionTool, *, name: str | None = None, repair: Any = None
) -> FunctionTool:
    """A copy of ``tool`` (a ``FunctionTool``; same name, description and parameter schema)
    whose every call goes through ``session``'s plan before the real tool runs.

    ``name``: the tool's name in the trace (default: ``tool.name``; the model still sees
    ``tool.name``). ``repair``: a ``ParamRepairer`` that checks every call's arguments after
    the faults and before the SDK parses them. Wrapping a wrapped tool wraps the original
    again, so its calls are recorded once."""
    __tracebackhide__ = True
    if not isinstance(tool, FunctionTool):
        raise TypeError(f"wrap_tool() needs an Agents SDK FunctionTool, got {safe_repr(tool, 80)}")
    original: FunctionTool = getattr(tool, ORIGINAL, tool)
    target = check_name(name, "chaos.wrap(): name") if name is not None else original.name
    repairer = _wire(repair, session) if repair is not None else None
    core = Interceptor(session, target, schema=original.params_json_schema, repairer=repairer)
    wrapped = copy.copy(original)  # the SDK's own copy: the invoker is rebound to the copy
    invoker: Any = original.on_invoke_tool
    inner = getattr(invoker, "_invoke_tool_impl", None)
    if callable(inner) and callable(getattr(invoker, "__agents_bind_function_tool__", None)):
        # A @function_tool: its invoker runs the failure handling around `inner` (which parses
        # the arguments and runs the function). Ours goes between the two.
        ours = _intercepting(core, inner)
        ours.__dict__.update(getattr(inner, "__dict__", {}))  # approval and __wrapped__ hooks
        handler = copy.copy(invoker)
        handler._invoke_tool_impl = ours
        handler._function_tool = None
        wrapped.on_invoke_tool = handler.__agents_bind_function_tool__(wrapped)
    else:  # a FunctionTool built by hand: its on_invoke_tool is the tool
        wrapped.on_invoke_tool = _intercepting(core, invoker)
    wrapped.__dict__[ORIGINAL] = original
    wrapped.__dict__["__chaos_tool__"] = target
    return wrapped


def _intercepting(core: Interceptor, invoke: Invoke) -> Invoke:
    """``invoke(ctx, input_json)`` with its calls going through ``core``: faults and repair act
    on the parsed arguments; the real invoker gets them back as JSON text (the model's own
    text when nothing changed them)."""

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

        return await the_core.acall(args, run, recorded=recorded)

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


class ChaosModel(Model):
    """A ``Model`` whose calls (``get_response`` and ``stream_response``) go through a chaos
    run's plan, channel ``model``. A streamed response is read whole, recorded, then yielded
    event by event; a paraphrase rewrites its completed response (what the agent acts on)."""

    def __init__(self, session: ChaosSession, model: Model, name: str = "model") -> None:
        self.session = session
        self.model: Model = getattr(model, ORIGINAL, model)
        self.name = check_name(name, "chaos_model(): name")
        self.__dict__[ORIGINAL] = self.model
        self._finish = finish_model(session, _read, _rewrite)

    def _core(self, fresh: list[Any]) -> Interceptor:
        """An interceptor for one call; ``fresh`` holds what the real model returned."""

        def finish(state: CallState, response: Any) -> Any:
            __tracebackhide__ = True
            if not any(response is f for f in fresh):  # a replay answered in the model's place
                response = _replayed(response, state.index)
            return self._finish(state, response)

        return Interceptor(self.session, self.name, channel="model", finish=finish)

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

    async def close(self) -> None:  # noqa: D102 - the wrapped model's
        await self.model.close()

    async def _cleanup_on_run_end(self, owner: object) -> None:
        await self.model._cleanup_on_run_end(owner)

    def __repr__(self) -> str:
        return f"<ChaosModel {self.name!r} of {safe_repr(self.model, 80)}>"


def chaos_model(chaos: Any, model: Model, *, name: str = "model") -> ChaosModel:
    """``model`` (an Agents SDK ``Model``) with its calls under ``chaos`` (a ``Chaos``, e.g.
    the ``chaos`` fixture): faults on the ``model`` channel apply before it is asked; its text,
    the tool calls it asks for and its token usage are recorded. ``name``: the model's name in
    the trace and in fault selectors. Wrapping a wrapped model wraps the original again."""
    session = _session(chaos, "chaos_model()")
    if not isinstance(model, Model):
        raise TypeError(
            f"chaos_model() needs an Agents SDK Model instance, got {safe_repr(model, 80)} "
            "(a model name is resolved by the run's provider: pass the Model itself)"
        )
    return ChaosModel(session, model, name)


def chaos_agent(
    chaos: Any, agent: Agent[Any], *, model: Model | None = None, name: str = "model"
) -> Agent[Any]:
    """A clone of ``agent`` under ``chaos``: its model wrapped (:func:`chaos_model`; ``model``
    replaces the agent's own, which must be a ``Model`` instance otherwise) and its
    ``FunctionTool`` tools wrapped (:func:`wrap_tool`); other tools, settings and hooks are
    kept. Handoff agents are not cloned: put each under chaos too."""
    session = _session(chaos, "chaos_agent()")
    if not isinstance(agent, Agent):
        raise TypeError(f"chaos_agent() needs an Agents SDK Agent, got {safe_repr(agent, 80)}")
    base = model if model is not None else agent.model
    if not isinstance(base, Model):
        raise TypeError(
            f"chaos_agent(): agent {agent.name!r} has model {safe_repr(base, 80)}, not a Model "
            "instance: pass model=<the Model it should use>"
        )
    tools = [wrap_tool(session, t) if isinstance(t, FunctionTool) else t for t in agent.tools]
    return agent.clone(
        model=ChaosModel(session, base, name), model_settings=agent.model_settings, tools=tools
    )
