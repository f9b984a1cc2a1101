"""A model turn in the trace: a ``ModelResponse``'s text, tool calls and tokens, its rewrite,
what a request shows, and a replayed response as a stream."""

from __future__ import annotations

import dataclasses
from typing import Any

from .framework import (
    CompletedStreamedResponse,
    ModelMessage,
    ModelRequestParameters,
    ModelResponse,
    StreamedResponse,
    TextPart,
    ToolCallPart,
)


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
