"""The call methods of a chat model's chaos class (``_generate``, ``_agenerate``, ``_stream``,
``_astream``): each call through the plan, recorded once; a streamed call's chunks joined."""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import Any

from ...inject.handover import endpoint_for, handed_over
from ...inject.intercept import Interceptor
from ...saferepr import safe_str
from .agents import _caller
from .errors import _request_url
from .framework import (
    AIMessage,
    AIMessageChunk,
    BaseChatModel,
    BaseMessage,
    ChatGenerationChunk,
    ChatResult,
    generate_from_stream,
)
from .state import _ACTIVE, _ModelChaos, _state_of
from .turns import _result_finish


def _takes_run_manager(method: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return True
    return "run_manager" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )


def _call_args(messages: Any, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """What a model call's arguments show in the trace: how many messages, which tools."""
    tools = []
    for tool in kwargs.get("tools") or ():
        found: Any = None
        if isinstance(tool, Mapping):
            function = tool.get("function")
            found = tool.get("name") or (
                function.get("name") if isinstance(function, Mapping) else None
            )
        else:
            found = getattr(tool, "name", None)
        tools.append(safe_str(found if found is not None else tool, 100))
    try:
        count = len(messages)
    except TypeError:
        count = 0
    return {"messages": count, "tools": tools}


def _core_for(model: BaseChatModel, state: _ModelChaos) -> Interceptor:
    caller = _caller()
    agents = state.agents
    target = agents.target(state.name, caller, model, state)
    return agents.core(target, agents.label(caller), model, _result_finish)


def _handed(model: BaseChatModel, state: _ModelChaos) -> tuple[str, str | None] | None:
    """(target, agent) of a call that a scripted provider endpoint of the run answers
    (``chaos.provider``): recorded and faulted there, once, as this call (see
    :mod:`~pytest_agentchaos.inject.handover`). ``None``: this seam takes the call."""
    agents = state.agents
    if endpoint_for(agents.session, _request_url(model)) is None:
        return None
    caller = _caller()
    return agents.target(state.name, caller, model, state), agents.label(caller)


def _sync_call(base: Callable[..., Any]) -> Callable[..., Any]:
    manager = _takes_run_manager(base)

    def _generate(
        self: BaseChatModel,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Any:
        __tracebackhide__ = True
        if manager:
            kwargs["run_manager"] = run_manager
        state = _state_of(self)
        if state is None or _ACTIVE.get() is state:
            return base(self, messages, stop=stop, **kwargs)
        handed = _handed(self, state)
        if handed is not None:  # one call, recorded and faulted on the wire
            token = _ACTIVE.set(state)
            try:
                with handed_over(state.agents.session, *handed):
                    return base(self, messages, stop=stop, **kwargs)
            finally:
                _ACTIVE.reset(token)

        def invoke(_: Any) -> Any:
            token = _ACTIVE.set(state)
            try:
                return base(self, messages, stop=stop, **kwargs)
            finally:
                _ACTIVE.reset(token)

        return _core_for(self, state).call(_call_args(messages, kwargs), invoke)

    return _generate


def _async_call(base: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    manager = _takes_run_manager(base)

    async def _agenerate(
        self: BaseChatModel,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Any:
        __tracebackhide__ = True
        if manager:
            kwargs["run_manager"] = run_manager
        state = _state_of(self)
        if state is None or _ACTIVE.get() is state:
            return await base(self, messages, stop=stop, **kwargs)
        handed = _handed(self, state)
        if handed is not None:  # one call, recorded and faulted on the wire
            token = _ACTIVE.set(state)
            try:
                with handed_over(state.agents.session, *handed):
                    return await base(self, messages, stop=stop, **kwargs)
            finally:
                _ACTIVE.reset(token)

        async def invoke(_: Any) -> Any:
            token = _ACTIVE.set(state)
            try:
                return await base(self, messages, stop=stop, **kwargs)
            finally:
                _ACTIVE.reset(token)

        return await _core_for(self, state).acall(_call_args(messages, kwargs), invoke)

    return _agenerate


def _sync_stream(base: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    manager = _takes_run_manager(base)

    def _stream(
        self: BaseChatModel,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Iterator[Any]:
        __tracebackhide__ = True
        if manager:
            kwargs["run_manager"] = run_manager
        state = _state_of(self)
        if state is None or _ACTIVE.get() is state:
            yield from base(self, messages, stop=stop, **kwargs)
            return
        chunks: list[Any] = []
        handed = _handed(self, state)
        if handed is not None:  # one call, recorded and faulted on the wire
            token = _ACTIVE.set(state)
            try:
                with handed_over(state.agents.session, *handed):
                    chunks.extend(base(self, messages, stop=stop, **kwargs))
            finally:
                _ACTIVE.reset(token)
            yield from chunks
            return
        joined: list[ChatResult] = []

        def invoke(_: Any) -> ChatResult:
            token = _ACTIVE.set(state)
            try:
                chunks.extend(base(self, messages, stop=stop, **kwargs))
            finally:
                _ACTIVE.reset(token)
            joined.append(_joined(chunks))
            return joined[0]

        result = _core_for(self, state).call(_call_args(messages, kwargs), invoke)
        yield from chunks if joined and result is joined[0] else _as_chunks(result)

    return _stream


def _async_stream(base: Callable[..., AsyncIterator[Any]]) -> Callable[..., AsyncIterator[Any]]:
    manager = _takes_run_manager(base)

    async def _astream(
        self: BaseChatModel,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        __tracebackhide__ = True
        if manager:
            kwargs["run_manager"] = run_manager
        state = _state_of(self)
        if state is None or _ACTIVE.get() is state:
            async for chunk in base(self, messages, stop=stop, **kwargs):
                yield chunk
            return
        chunks: list[Any] = []
        handed = _handed(self, state)
        if handed is not None:  # one call, recorded and faulted on the wire
            token = _ACTIVE.set(state)
            try:
                with handed_over(state.agents.session, *handed):
                    async for chunk in base(self, messages, stop=stop, **kwargs):
                        chunks.append(chunk)
            finally:
                _ACTIVE.reset(token)
            for chunk in chunks:
                yield chunk
            return
        joined: list[ChatResult] = []

        async def invoke(_: Any) -> ChatResult:
            token = _ACTIVE.set(state)
            try:
                async for chunk in base(self, messages, stop=stop, **kwargs):
                    chunks.append(chunk)
            finally:
                _ACTIVE.reset(token)
            joined.append(_joined(chunks))
            return joined[0]

        result = await _core_for(self, state).acall(_call_args(messages, kwargs), invoke)
        for chunk in chunks if joined and result is joined[0] else _as_chunks(result):
            yield chunk

    return _astream


def _joined(chunks: list[Any]) -> ChatResult:
    """A streamed call's chunks as one result (what the trace records and a replay returns)."""
    try:
        return generate_from_stream(iter(chunks))
    except Exception:  # no chunks, or chunks that do not add up
        return ChatResult(generations=[])


def _as_chunks(result: Any) -> Iterator[ChatGenerationChunk]:
    """A result that answers in the model's place (a replay, a rewrite), as one stream chunk."""
    generations = getattr(result, "generations", None) or []
    if not generations or not isinstance(getattr(generations[0], "message", None), AIMessage):
        return
    generation = generations[0]
    yield ChatGenerationChunk(
        message=_as_chunk(generation.message), generation_info=generation.generation_info
    )


def _as_chunk(message: AIMessage) -> AIMessageChunk:
    chunks: list[dict[str, Any]] = [
        {
            "name": call.get("name"),
            "args": json.dumps(call.get("args", {}), default=str),
            "id": call.get("id"),
            "index": i,
            "type": "tool_call_chunk",
        }
        for i, call in enumerate(message.tool_calls)
    ]
    for call in message.invalid_tool_calls:
        chunks.append(
            {
                "name": call.get("name"),
                "args": call.get("args"),
                "id": call.get("id"),
                "index": len(chunks),
                "type": "tool_call_chunk",
            }
        )
    fields: dict[str, Any] = {
        "content": message.content,
        "additional_kwargs": message.additional_kwargs,
        "response_metadata": message.response_metadata,
        "id": message.id,
        "name": message.name,
        "tool_call_chunks": chunks,
        "usage_metadata": message.usage_metadata,
    }
    if "chunk_position" in AIMessageChunk.model_fields:
        fields["chunk_position"] = "last"
    return AIMessageChunk(**fields)
