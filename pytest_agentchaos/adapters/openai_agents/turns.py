"""A model turn in the trace: the text, tool calls and tokens of a ``ModelResponse`` or of a
streamed response's events, its rewrite, and a replay's fresh call ids."""

from __future__ import annotations

import dataclasses
from typing import Any

from agents import ModelResponse
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
)

from ...inject.model import default_tokens
from .tools import _parse


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
