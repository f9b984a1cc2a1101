"""Anthropic messages (``POST /v1/messages``): requests in, turns out.

Non-streaming: a ``message`` (``msg_01...``) whose ``content`` is a ``text`` block when the
turn has non-empty text, then a ``tool_use`` block (``toolu_01...``) per tool call, with
``stop_reason`` ``end_turn`` / ``tool_use`` / ``max_tokens`` / ``refusal`` for the neutral
``stop`` / ``tool_calls`` / ``length`` / ``content_filter``. An empty text is no block (the
API answers ``content: []``; an empty text block would be refused if sent back).

A ``tool_use`` block's ``input`` is always a JSON object on this API: a tool call whose
arguments are a string that is not a JSON object cannot be rendered non-streaming
(``ValueError``); streamed, the string goes out as ``input_json_delta`` pieces, as a model
that wrote broken JSON would, and the ``anthropic`` SDK raises ``ValueError("Unable to parse
tool parameter JSON from model...")`` while accumulating it.

Streaming: ``event: <type>\\ndata: {...}`` events: ``message_start`` (empty content),
``ping``, per block ``content_block_start``, ``content_block_delta`` (``text_delta`` word by
word; ``input_json_delta`` from ``""`` then 8-character pieces), ``content_block_stop``, then
``message_delta`` (stop reason and usage) and ``message_stop``. With ``finish=False`` the last
two are left out: the stream ends without a stop reason.

Errors: ``{"type": "error", "error": {"type", "message"}, "request_id"}`` with
``request-id`` header; overloaded is 529 (``overloaded_error``, with ``x-should-retry:
true``), a 429 carries ``anthropic-ratelimit-*`` and, when given, ``retry-after`` in whole
seconds (rounded up) -- the API sends no ``retry-after-ms``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .turns import ToolCallSpec, Turn, arguments_text
from .wire import (
    FormatBase,
    ParsedRequest,
    RequestInvalid,
    join_text,
    json_body,
    make_id,
    split_pieces,
    split_words,
    sse,
    whole_seconds,
)

__all__ = ["AnthropicMessages"]

_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens",
         "content_filter": "refusal"}  # fmt: skip
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
_ERRORS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request."),
    401: ("authentication_error", "invalid x-api-key"),
    402: ("billing_error", "Your credit balance is too low to access the Anthropic API."),
    403: ("permission_error", "Your API key does not have permission to use the specified "
          "resource."),
    404: ("not_found_error", "Not found"),
    408: ("timeout_error", "Request timed out."),
    409: ("conflict_error", "Conflict."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    422: ("invalid_request_error", "Invalid request."),
    429: ("rate_limit_error", "This request would exceed the rate limit for your organization "
          "of 50 requests per minute. For details, refer to: "
          "https://docs.claude.com/en/api/rate-limits."),
    500: ("api_error", "Internal server error"),
    502: ("api_error", "Bad gateway"),
    503: ("api_error", "Service unavailable"),
    504: ("timeout_error", "Request timed out"),
    529: ("overloaded_error", "Overloaded"),
}  # fmt: skip


class AnthropicMessages(FormatBase):
    """The messages wire format (module doc)."""

    api = "anthropic.messages"
    provider = "anthropic"
    path = "/v1/messages"
    suffix = "/messages"

    # -- requests ---------------------------------------------------------------------------

    def parse_request(self, body: bytes, headers: Mapping[str, str]) -> ParsedRequest:
        """The request, normalised; :class:`RequestInvalid` with the API's wording for: a body
        that is not a JSON object, no ``model`` / ``max_tokens`` / ``messages``, a
        ``max_tokens`` below 1, a role other than ``user`` / ``assistant`` (``system`` named
        specially), empty content (but for a final assistant prefill), an empty text block,
        a ``tool_result`` whose id is not a ``tool_use`` of the message before, a
        ``tool_use`` not answered in the next message, a custom tool with a bad name or an
        ``input_schema`` not of type object."""
        raw = json_body(body, "The request body is not valid JSON.")
        for key in ("model", "max_tokens", "messages"):
            if key not in raw:
                raise RequestInvalid(f"{key}: Field required", param=key)
        if not isinstance(raw["model"], str):
            raise RequestInvalid("model: Input should be a valid string", param="model")
        tokens = raw["max_tokens"]
        if isinstance(tokens, bool) or not isinstance(tokens, int):
            raise RequestInvalid("max_tokens: Input should be a valid integer", param="max_tokens")
        if tokens < 1:
            raise RequestInvalid(
                "max_tokens: Input should be greater than or equal to 1", param="max_tokens"
            )
        messages = [*_system(raw.get("system")), *_messages(raw["messages"])]
        stream = raw.get("stream")
        if stream is not None and not isinstance(stream, bool):
            raise RequestInvalid("stream: Input should be a valid boolean", param="stream")
        return ParsedRequest(
            api=self.api,
            model=raw["model"],
            messages=tuple(messages),
            tools=tuple(_tools(raw.get("tools"))),
            stream=bool(stream),
            structured=_structured(raw),
            raw=raw,
        )

    # -- responses --------------------------------------------------------------------------

    def render(
        self, turn: Turn, request: ParsedRequest, *, n: int, created: float | None = None
    ) -> dict[str, Any]:
        """The ``message`` for ``turn`` (module doc); ``ValueError`` for a tool call whose
        arguments string is not a JSON object."""
        content: list[dict[str, Any]] = []
        if turn.content:
            content.append({"type": "text", "text": turn.content})
        for i, call in enumerate(turn.tool_calls):
            content.append(self._tool_block(turn, n, i, _input_object(call)))
        used, said = self.tokens(turn, request)
        return {
            **self._message(request, n, content),
            "stop_reason": _STOP[turn.finish],
            "usage": _usage(used, said),
        }

    def render_stream(
        self,
        turn: Turn,
        request: ParsedRequest,
        *,
        n: int,
        created: float | None = None,
        finish: bool = True,
    ) -> list[bytes]:
        """The SSE events for ``turn`` (module doc); ``finish=False`` leaves out
        ``message_delta`` and ``message_stop``."""
        used, said = self.tokens(turn, request)
        start = {**self._message(request, n, []), "stop_reason": None, "usage": _usage(used, 1)}
        events = [sse({"type": "message_start", "message": start}, "message_start")]
        index = 0

        def block(opened: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
            nonlocal index
            events.append(_event("content_block_start", index=index, content_block=opened))
            if index == 0:
                events.append(_event("ping"))
            events.extend(_event("content_block_delta", index=index, delta=d) for d in deltas)
            events.append(_event("content_block_stop", index=index))
            index += 1

        if turn.content:
            block(
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": piece} for piece in split_words(turn.content)],
            )
        for i, call in enumerate(turn.tool_calls):
            pieces = ["", *split_pieces(arguments_text(call))]
            block(
                self._tool_block(turn, n, i, {}),
                [{"type": "input_json_delta", "partial_json": piece} for piece in pieces],
            )
        if index == 0:
            events.append(_event("ping"))
        if finish:
            events.append(
                _event(
                    "message_delta",
                    delta={"stop_reason": _STOP[turn.finish], "stop_sequence": None},
                    usage={
                        "input_tokens": used,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                        "output_tokens": said,
                    },
                )  # fmt: skip
            )
            events.append(_event("message_stop"))
        return events

    def error(
        self,
        status: int,
        message: str | None = None,
        *,
        retry_after: float | None = None,
        param: str | None = None,
        code: str | None = None,
        n: int = 0,
    ) -> tuple[list[tuple[str, str]], dict[str, Any]]:
        """The headers and body Anthropic sends with ``status`` (module doc). ``param`` and
        ``code`` are not part of Anthropic's errors and are ignored."""
        kind, default = _ERRORS.get(status) or (
            ("api_error", "Internal server error")
            if status >= 500
            else ("invalid_request_error", "Invalid request.")
        )
        request_id = self._request_id(n)
        body = {
            "type": "error",
            "error": {"type": kind, "message": message if message is not None else default},
            "request_id": request_id,
        }
        headers = [("content-type", "application/json"), ("request-id", request_id)]
        if status == 529 or status >= 500:
            headers.append(("x-should-retry", "true"))
        if status == 429:
            headers += [
                ("anthropic-ratelimit-requests-limit", "50"),
                ("anthropic-ratelimit-requests-remaining", "0"),
                ("anthropic-ratelimit-requests-reset", "1970-01-01T00:00:00Z"),
                ("anthropic-ratelimit-tokens-limit", "40000"),
                ("anthropic-ratelimit-tokens-remaining", "40000"),
                ("anthropic-ratelimit-tokens-reset", "1970-01-01T00:00:00Z"),
            ]
        if retry_after is not None:
            headers.append(("retry-after", whole_seconds(retry_after)))
        return headers, body

    def reject(
        self, exc: RequestInvalid, *, n: int = 0
    ) -> tuple[list[tuple[str, str]], dict[str, Any]]:
        """The 400 Anthropic answers to an invalid request."""
        return self.error(exc.status, exc.message, n=n)

    def stream_error(self, status: int, message: str | None = None, *, n: int = 0) -> bytes:
        """``event: error`` with the error body (``overloaded_error`` for 529); the
        ``anthropic`` SDK raises the status's exception class (by the response's 200 status:
        ``APIStatusError``) while iterating."""
        _, body = self.error(status, message, n=n)
        return sse(body, "error")

    def success_headers(self, *, n: int, stream: bool) -> list[tuple[str, str]]:
        """``content-type`` (JSON, or ``text/event-stream; charset=utf-8``), ``request-id``
        and roomy ``anthropic-ratelimit-*``."""
        kind = "text/event-stream; charset=utf-8" if stream else "application/json"
        return [
            ("content-type", kind),
            ("request-id", self._request_id(n)),
            ("anthropic-ratelimit-requests-limit", "50"),
            ("anthropic-ratelimit-requests-remaining", "49"),
            ("anthropic-ratelimit-tokens-limit", "40000"),
            ("anthropic-ratelimit-tokens-remaining", "39000"),
        ]

    def _is_delta(self, event: bytes) -> bool:
        return (
            event.startswith(b"event: content_block_delta") and b'"partial_json":""}' not in event
        )

    # -- parts ------------------------------------------------------------------------------

    def _message(self, request: ParsedRequest, n: int, content: list[Any]) -> dict[str, Any]:
        return {
            "id": make_id("msg_01", 22, self.api, n),
            "type": "message",
            "role": "assistant",
            "model": request.model,
            "content": content,
            "stop_sequence": None,
        }

    def _tool_block(self, turn: Turn, n: int, i: int, arguments: dict[str, Any]) -> dict[str, Any]:
        call = turn.tool_calls[i]
        block_id = call.id if call.id is not None else make_id("toolu_01", 22, self.api, n, i)
        return {"type": "tool_use", "id": block_id, "name": call.name, "input": arguments}

    def _request_id(self, n: int) -> str:
        return make_id("req_011C", 20, self.api, "request", n)


def _event(kind: str, **fields: Any) -> bytes:
    return sse({"type": kind, **fields}, kind)


def _usage(used: int, said: int) -> dict[str, Any]:
    return {
        "input_tokens": used,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": said,
        "service_tier": "standard",
    }


def _input_object(call: ToolCallSpec) -> dict[str, Any]:
    if not isinstance(call.arguments, str):
        value = {} if call.arguments is None else call.arguments
    else:
        try:
            value = json.loads(call.arguments)
        except ValueError:
            value = None
    if not isinstance(value, dict):
        raise ValueError(
            f"tool call {call.name!r}: Anthropic's tool_use input is a JSON object, got "
            f"arguments {arguments_text(call)[:80]!r}; only a stream can carry arguments that "
            "are not one"
        )
    return value


def _system(raw: object) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if isinstance(raw, str):
        return [{"role": "system", "content": raw}] if raw else []
    if not isinstance(raw, list):
        raise RequestInvalid("system: Input should be a valid list", param="system")
    texts = []
    for j, block in enumerate(raw):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise RequestInvalid(f"system.{j}.type: Input should be 'text'", param="system")
        if not isinstance(block.get("text"), str):
            raise RequestInvalid(f"system.{j}.text: Field required", param="system")
        texts.append(block["text"])
    return [{"role": "system", "content": join_text(texts)}]


def _blocks(content: object, at: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        raise RequestInvalid(f"{at}.content: Input should be a valid list", param=at)
    for j, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise RequestInvalid(
                f"{at}.content.{j}: Input should be a valid dictionary or object to extract "
                "fields from",
                param=at,
            )
        if block["type"] == "text":
            if not isinstance(block.get("text"), str):
                raise RequestInvalid(f"{at}.content.{j}.text: Field required", param=at)
            if not block["text"]:
                raise RequestInvalid("messages: text content blocks must be non-empty", param=at)
    return content


def _messages(raw: object) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise RequestInvalid("messages: Input should be a valid list", param="messages")
    out: list[dict[str, Any]] = []
    previous_uses: list[str] = []
    for i, message in enumerate(raw):
        at = f"messages.{i}"
        if not isinstance(message, dict):
            raise RequestInvalid(
                f"{at}: Input should be a valid dictionary or object to extract fields from",
                param=at,
            )
        role = message.get("role")
        if role == "system":
            raise RequestInvalid(
                'messages: Unexpected role "system". The Messages API accepts a top-level '
                '`system` parameter, not "system" as an input message role.',
                param=at,
            )
        if role not in ("user", "assistant"):
            raise RequestInvalid(f"{at}.role: Input should be 'user' or 'assistant'", param=at)
        if "content" not in message:
            raise RequestInvalid(f"{at}.content: Field required", param=at)
        blocks = _blocks(message["content"], at)
        final = i == len(raw) - 1
        if not blocks and not (final and role == "assistant"):
            raise RequestInvalid(
                f"{at}: all messages must have non-empty content except for the optional "
                "final assistant message",
                param=at,
            )
        results = [b for b in blocks if b["type"] == "tool_result"]
        uses = [b for b in blocks if b["type"] == "tool_use"]
        for j, block in enumerate(blocks):
            if block["type"] == "tool_result" and block.get("tool_use_id") not in previous_uses:
                raise RequestInvalid(
                    f"{at}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{block.get('tool_use_id')}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message.",
                    param=at,
                )
        if previous_uses:
            missing = [u for u in previous_uses if u not in {r.get("tool_use_id") for r in results}]
            if missing:
                raise RequestInvalid(
                    f"messages.{i - 1}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have "
                    "a corresponding `tool_result` block in the next message.",
                    param=f"messages.{i - 1}",
                )
        previous_uses = [u["id"] for u in uses] if role == "assistant" else []
        out += _normalise(role, blocks, at)
    return out


def _normalise(role: str, blocks: list[dict[str, Any]], at: str) -> list[dict[str, Any]]:
    """One API message as normalised messages: tool results first, as ``tool`` messages, then
    the text (and tool calls) of the message."""
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for j, block in enumerate(blocks):
        kind = block["type"]
        if kind == "text":
            texts.append(block["text"])
        elif kind == "tool_use":
            for key in ("id", "name"):
                if not isinstance(block.get(key), str):
                    raise RequestInvalid(
                        f"{at}.content.{j}.tool_use.{key}: Field required", param=at
                    )
            arguments = json.dumps(
                block.get("input", {}), ensure_ascii=False, separators=(",", ":")
            )
            calls.append({"id": block["id"], "name": block["name"], "arguments": arguments})
        elif kind == "tool_result":
            result: dict[str, Any] = {
                "role": "tool",
                "content": _result_text(block.get("content")),
                "tool_call_id": block["tool_use_id"],
            }
            if block.get("is_error"):
                result["is_error"] = True
            out.append(result)
    if texts or calls or not out:
        normal: dict[str, Any] = {"role": role, "content": join_text(texts)}
        if calls:
            normal["tool_calls"] = calls
        out.append(normal)
    return out


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return join_text(
            [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        )
    return ""


def _tools(raw: object) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RequestInvalid("tools: Input should be a valid list", param="tools")
    tools = []
    for i, tool in enumerate(raw):
        at = f"tools.{i}.custom"
        if not isinstance(tool, dict):
            raise RequestInvalid(
                f"tools.{i}: Input should be a valid dictionary or object to extract fields from",
                param=f"tools.{i}",
            )
        if tool.get("type") not in (None, "custom"):
            continue  # server tools (web search, code execution...) and client-defined types
        name = tool.get("name")
        if not isinstance(name, str):
            raise RequestInvalid(f"{at}.name: Field required", param=at)
        if not _NAME.match(name):
            raise RequestInvalid(
                f"{at}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'", param=at
            )
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            raise RequestInvalid(f"{at}.input_schema: Field required", param=at)
        if schema.get("type") != "object":
            raise RequestInvalid(f"{at}.input_schema.type: Input should be 'object'", param=at)
        description = tool.get("description")
        tools.append({"name": name, "description": description or "", "parameters": schema})
    return tools


def _structured(raw: dict[str, Any]) -> dict[str, Any] | None:
    for holder in (raw.get("output_config"), raw):
        if not isinstance(holder, dict):
            continue
        spec = holder.get("format") if holder is not raw else holder.get("output_format")
        if isinstance(spec, dict) and spec.get("type") == "json_schema":
            schema = spec.get("schema")
            return dict(schema) if isinstance(schema, dict) else {}
    return None
