"""A model turn in the trace: the text, tool calls and tokens of a chat model's answer (a
``ChatResult`` or a middleware's ``ModelResponse``), its rewrite, and a replay's fresh ids."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ...inject.call import CallState
from ...inject.session import ChaosSession
from ..common import finish_model
from .framework import AIMessage, BaseMessage, ChatResult


def _result_finish(session: ChaosSession) -> Callable[[CallState, Any], Any]:
    """The finish of a :func:`chaos_model` call (a ``ChatResult``): a replayed answer gets
    new tool-call ids and no message id (LangChain gives it this run's, as to a new one)."""
    finish = finish_model(session, _read_response, _rewrite_response)

    def fresh_finish(state: CallState, response: Any) -> Any:
        __tracebackhide__ = True
        if state.effect is not None and state.effect.replay:
            response = _fresh(response, state.index, keep_id=False)
        return finish(state, response)

    return fresh_finish


def _response_finish(session: ChaosSession) -> Callable[[CallState, Any], Any]:
    """The finish of a middleware model call (a ``ModelResponse``): a replayed answer gets
    new message and tool-call ids."""
    finish = finish_model(session, _read_response, _rewrite_response)

    def fresh_finish(state: CallState, response: Any) -> Any:
        __tracebackhide__ = True
        if state.effect is not None and state.effect.replay:
            response = _fresh(response, state.index, keep_id=True)
        return finish(state, response)

    return fresh_finish


def _messages(response: Any) -> list[BaseMessage]:
    if isinstance(response, BaseMessage):
        return [response]
    inner = getattr(response, "model_response", None)  # ExtendedModelResponse
    if inner is not None:
        return _messages(inner)
    generations = getattr(response, "generations", None)  # a chat model's ChatResult
    if isinstance(generations, list):
        return [
            g.message for g in generations if isinstance(getattr(g, "message", None), BaseMessage)
        ]
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
    generations = getattr(response, "generations", None)
    if isinstance(generations, list):
        return ChatResult(
            generations=[
                type(g)(message=update(g.message), generation_info=g.generation_info)
                if isinstance(getattr(g, "message", None), AIMessage)
                else g
                for g in generations
            ],
            llm_output=getattr(response, "llm_output", None),
        )
    result = [update(m) if isinstance(m, AIMessage) else m for m in _messages(response)]
    return dataclasses.replace(response, result=result)


def _rewrite_response(response: Any, text: str) -> Any:
    return _replace_ai(response, lambda m: m.model_copy(update={"content": text}))


def _fresh(response: Any, index: int, *, keep_id: bool) -> Any:
    """A replayed answer with new tool-call ids and a new message id (``keep_id``: derived
    from the old one; else none, for LangChain to give it the current run's): LangGraph
    would otherwise take it for the earlier message and replace that one instead of adding
    a repeat."""

    def update(message: AIMessage) -> AIMessage:
        calls = [{**c, "id": f"{c.get('id') or 'call'}-again{index}"} for c in message.tool_calls]
        new_id = f"{message.id or 'ai'}-again{index}" if keep_id else None
        return message.model_copy(update={"id": new_id, "tool_calls": calls})

    return _replace_ai(response, update)
