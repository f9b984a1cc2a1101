"""OpenAI chat completions (``POST /v1/chat/completions``): requests in, turns out.

Non-streaming: a ``chat.completion`` with one choice per ``n`` (all the same), ``usage``,
``system_fingerprint``. Streaming: ``data: {chat.completion.chunk}`` events without an
``event:`` line -- a first chunk with the role (and, for a tool-call-only turn, the first
call's header), text deltas word by word, per tool call a header chunk (id, name, empty
arguments) and its arguments in 8-character pieces, a chunk with an empty delta and the
``finish_reason``, a ``choices: []`` usage chunk when ``stream_options.include_usage``, then
``data: [DONE]``. With ``finish=False`` the finish-reason chunk is left out (the usage chunk
and ``[DONE]`` still come): the stream ends cleanly without saying why the answer stopped.

Finish reasons: stop, tool_calls, length, content_filter, as the turn says.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any

from .openai_common import BAD_JSON, OpenAIFormat, check_schema, kind_of
from .turns import Turn, arguments_text
from .wire import (
    ParsedRequest,
    RequestInvalid,
    hex_id,
    join_text,
    json_body,
    make_id,
    split_pieces,
    split_words,
    sse,
)

__all__ = ["OpenAIChat"]

_ROLES = ("system", "assistant", "user", "function", "tool", "developer")
_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")


class OpenAIChat(OpenAIFormat):
    """The chat completions wire format (module doc)."""

    api = "openai.chat"
    path = "/v1/chat/completions"
    suffix = "/chat/completions"

    # -- requests ---------------------------------------------------------------------------

    def parse_request(self, body: bytes, headers: Mapping[str, str]) -> ParsedRequest:
        """The request, normalised (:class:`~.wire.ParsedRequest`); :class:`RequestInvalid`
        with the API's wording for: a body that is not a JSON object, no ``model``, no or
        empty ``messages``, an unknown role, a message without the content its role needs, a
        ``tool`` message that answers no pending call of the assistant message before it, an
        assistant's tool calls left unanswered, a tool whose name or parameter schema the API
        refuses, ``json_object`` output without the word "json" in the messages,
        ``stream_options`` without ``stream``."""
        raw = json_body(body, BAD_JSON)
        model = raw.get("model")
        if model is None:
            raise RequestInvalid("you must provide a model parameter")
        _expect(model, str, "model")
        if "messages" not in raw:
            raise RequestInvalid(
                "Missing required parameter: 'messages'.",
                param="messages",
                code="missing_required_parameter",
            )
        messages = _messages(raw["messages"])
        tools = tuple(_tools(raw.get("tools")))
        structured = _structured(raw.get("response_format"), messages)
        stream = raw.get("stream")
        if stream is not None:
            _expect(stream, bool, "stream")
        if raw.get("stream_options") is not None and not stream:
            raise RequestInvalid(
                "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                param="stream_options",
                code="invalid_value",
            )
        return ParsedRequest(
            api=self.api,
            model=model,
            messages=tuple(messages),
            tools=tools,
            stream=bool(stream),
            structured=structured,
            raw=raw,
        )

    # -- responses --------------------------------------------------------------------------

    def render(
        self, turn: Turn, request: ParsedRequest, *, n: int, created: float | None = None
    ) -> dict[str, Any]:
        """The ``chat.completion`` for ``turn`` (module doc)."""
        message: dict[str, Any] = {
            "role": "assistant",
            "content": turn.content,
            "refusal": None,
            "annotations": [],
        }
        if turn.tool_calls:
            message["tool_calls"] = [
                {
                    "id": self._call_id(turn, n, i),
                    "type": "function",
                    "function": {"name": call.name, "arguments": arguments_text(call)},
                }
                for i, call in enumerate(turn.tool_calls)
            ]
        choices = [
            {
                "index": index,
                "message": message,
                "logprobs": None,
                "finish_reason": turn.finish,
            }
            for index in range(self._choices(request))
        ]
        return {
            **self._head(request, n, created, "chat.completion"),
            "choices": choices,
            "usage": self._usage(turn, request),
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
        """The SSE chunks for ``turn`` (module doc); ``finish=False`` leaves out the chunk
        with the ``finish_reason``."""
        head = self._head(request, n, created, "chat.completion.chunk")
        usage_key = {"usage": None} if request.include_usage else {}

        def chunk(delta: dict[str, Any], reason: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}
            return sse({**head, "choices": [choice], **usage_key})

        deltas: list[dict[str, Any]] = []
        for i, call in enumerate(turn.tool_calls):
            deltas.append(
                {
                    "tool_calls": [
                        {
                            "index": i,
                            "id": self._call_id(turn, n, i),
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
            deltas += [
                {"tool_calls": [{"index": i, "function": {"arguments": piece}}]}
                for piece in split_pieces(arguments_text(call))
            ]
        first: dict[str, Any] = {"role": "assistant", "content": "", "refusal": None}
        if turn.content is None:
            first["content"] = None
            if deltas:
                first.update(deltas.pop(0))
        text = [{"content": piece} for piece in split_words(turn.content or "")]
        events = [chunk(first)] + [chunk(delta) for delta in text + deltas]
        if finish:
            events.append(chunk({}, turn.finish))
        if request.include_usage:
            events.append(sse({**head, "choices": [], "usage": self._usage(turn, request)}))
        events.append(sse("[DONE]"))
        return events

    def stream_error(self, status: int, message: str | None = None, *, n: int = 0) -> bytes:
        """``data: {"error": {...}}``: the ``openai`` SDK raises ``APIError`` with the message
        while iterating."""
        _, body = self.error(status, message, n=n)
        return sse(body)

    def _is_delta(self, event: bytes) -> bool:
        return b'"delta":{"content":' in event or b'"function":{"arguments":' in event

    # -- parts ------------------------------------------------------------------------------

    def _head(
        self, request: ParsedRequest, n: int, created: float | None, kind: str
    ) -> dict[str, Any]:
        return {
            "id": make_id("chatcmpl-", 29, self.api, n),
            "object": kind,
            "created": int(time.time() if created is None else created),
            "model": request.model,
            "service_tier": "default",
            "system_fingerprint": hex_id("fp_", 10, request.model),
        }

    def _usage(self, turn: Turn, request: ParsedRequest) -> dict[str, Any]:
        prompt, completion = self.tokens(turn, request)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }

    def _call_id(self, turn: Turn, n: int, i: int) -> str:
        given = turn.tool_calls[i].id
        return given if given is not None else make_id("call_", 24, self.api, n, i)

    @staticmethod
    def _choices(request: ParsedRequest) -> int:
        count = request.raw.get("n")
        return count if isinstance(count, int) and not isinstance(count, bool) and count > 1 else 1


def _expect(value: object, kind: type, param: str) -> None:
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        expected = {str: "a string", bool: "a boolean", list: "an array", dict: "an object"}
        raise RequestInvalid(
            f"Invalid type for '{param}': expected {expected[kind]}, but got {kind_of(value)} "
            "instead.",
            param=param,
            code="invalid_type",
        )


def _text(content: object, param: str, *, optional: bool = False) -> str:
    """The text of a message's ``content``: a string, or the ``text`` of its text parts."""
    if content is None:
        if optional:
            return ""
        raise RequestInvalid(
            f"Missing required parameter: '{param}'.",
            param=param,
            code="missing_required_parameter",
        )
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise RequestInvalid(
            f"Invalid type for '{param}': expected one of a string or array of objects, but "
            f"got {kind_of(content)} instead.",
            param=param,
            code="invalid_type",
        )
    texts = []
    for j, part in enumerate(content):
        at = f"{param}[{j}]"
        if not isinstance(part, dict):
            raise RequestInvalid(
                f"Invalid type for '{at}': expected an object, but got {kind_of(part)} instead.",
                param=at,
                code="invalid_type",
            )
        if "type" not in part:
            raise RequestInvalid(
                f"Missing required parameter: '{at}.type'.",
                param=f"{at}.type",
                code="missing_required_parameter",
            )
        if part["type"] == "text":
            if not isinstance(part.get("text"), str):
                raise RequestInvalid(
                    f"Missing required parameter: '{at}.text'.",
                    param=f"{at}.text",
                    code="missing_required_parameter",
                )
            texts.append(part["text"])
        elif part["type"] == "refusal" and isinstance(part.get("refusal"), str):
            texts.append(part["refusal"])
    return join_text(texts)


def _messages(raw: object) -> list[dict[str, Any]]:
    _expect(raw, list, "messages")
    assert isinstance(raw, list)
    if not raw:
        raise RequestInvalid(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got "
            "an empty array instead.",
            param="messages",
            code="empty_array",
        )
    out: list[dict[str, Any]] = []
    pending: list[str] = []  # call ids of the last assistant message not yet answered
    pending_at = -1
    for i, message in enumerate(raw):
        at = f"messages[{i}]"
        _expect(message, dict, at)
        role = message.get("role")
        if role is None:
            raise RequestInvalid(
                f"Missing required parameter: '{at}.role'.",
                param=f"{at}.role",
                code="missing_required_parameter",
            )
        if role not in _ROLES:
            raise RequestInvalid(
                f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', "
                "'function', 'tool', and 'developer'.",
                param=f"{at}.role",
                code="invalid_value",
            )
        if role != "tool" and pending:
            raise _unanswered(pending, pending_at)
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str):
                raise RequestInvalid(
                    f"Missing required parameter: '{at}.tool_call_id'.",
                    param=f"{at}.tool_call_id",
                    code="missing_required_parameter",
                )
            if pending_at < 0:
                raise RequestInvalid(
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    param=f"messages.[{i}].role",
                )
            if call_id not in pending:
                raise RequestInvalid(
                    f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in "
                    "'tool_calls' of previous message.",
                    param=f"messages.[{i}].tool_call_id",
                )
            pending.remove(call_id)
            content = _text(message.get("content"), f"{at}.content")
            out.append({"role": "tool", "content": content, "tool_call_id": call_id})
            continue
        pending_at = -1
        if role == "assistant":
            calls = _tool_calls(message.get("tool_calls"), at)
            has_call = bool(calls) or message.get("function_call") is not None
            content = _text(message.get("content"), f"{at}.content", optional=has_call)
            normal: dict[str, Any] = {"role": "assistant", "content": content}
            if calls:
                normal["tool_calls"] = calls
                pending = [call["id"] for call in calls]
                pending_at = i
            out.append(normal)
            continue
        content = _text(message.get("content"), f"{at}.content")
        if role in ("system", "developer"):
            out.append({"role": "system", "content": content})
        elif role == "function":
            out.append({"role": "tool", "content": content, "tool_call_id": message.get("name")})
        else:
            out.append({"role": "user", "content": content})
    if pending:
        raise _unanswered(pending, pending_at)
    return out


def _unanswered(pending: list[str], at: int) -> RequestInvalid:
    return RequestInvalid(
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(pending),
        param=f"messages.[{at}].role",
    )


def _tool_calls(raw: object, at: str) -> list[dict[str, Any]]:
    if raw is None:
        return []
    _expect(raw, list, f"{at}.tool_calls")
    assert isinstance(raw, list)
    calls = []
    for j, call in enumerate(raw):
        where = f"{at}.tool_calls[{j}]"
        _expect(call, dict, where)
        function = call.get("function")
        if call.get("type", "function") == "custom":
            custom = call.get("custom") or {}
            name, arguments = custom.get("name"), custom.get("input", "")
        else:
            if not isinstance(function, dict):
                raise RequestInvalid(
                    f"Missing required parameter: '{where}.function'.",
                    param=f"{where}.function",
                    code="missing_required_parameter",
                )
            name, arguments = function.get("name"), function.get("arguments")
        for key, value in (("id", call.get("id")), ("function.name", name)):
            if not isinstance(value, str):
                raise RequestInvalid(
                    f"Missing required parameter: '{where}.{key}'.",
                    param=f"{where}.{key}",
                    code="missing_required_parameter",
                )
        if not isinstance(arguments, str):
            raise RequestInvalid(
                f"Missing required parameter: '{where}.function.arguments'.",
                param=f"{where}.function.arguments",
                code="missing_required_parameter",
            )
        calls.append({"id": call["id"], "name": name, "arguments": arguments})
    return calls


def _tools(raw: object) -> list[dict[str, Any]]:
    if raw is None:
        return []
    _expect(raw, list, "tools")
    assert isinstance(raw, list)
    tools = []
    for i, tool in enumerate(raw):
        at = f"tools[{i}]"
        _expect(tool, dict, at)
        kind = tool.get("type", "function")
        if kind != "function":
            continue  # custom tools: free-form input, no schema to normalise
        function = tool.get("function")
        if not isinstance(function, dict):
            raise RequestInvalid(
                f"Missing required parameter: '{at}.function'.",
                param=f"{at}.function",
                code="missing_required_parameter",
            )
        name = function.get("name")
        check_name(name, f"{at}.function.name")
        assert isinstance(name, str)
        schema = check_schema(function.get("parameters"), name, f"{at}.function.parameters")
        description = function.get("description")
        tools.append({"name": name, "description": description or "", "parameters": schema})
    return tools


def check_name(name: object, param: str) -> None:
    """A function name as OpenAI checks it: a string of 1 to 64 letters, digits, ``_``, ``-``."""
    if name is None:
        raise RequestInvalid(
            f"Missing required parameter: '{param}'.",
            param=param,
            code="missing_required_parameter",
        )
    _expect(name, str, param)
    assert isinstance(name, str)
    if len(name) > 64:
        raise RequestInvalid(
            f"Invalid '{param}': string too long. Expected a string with maximum length 64, but "
            f"got a string with length {len(name)} instead.",
            param=param,
            code="string_above_max_length",
        )
    if not _NAME.match(name):
        raise RequestInvalid(
            f"Invalid '{param}': string does not match pattern. Expected a string that matches "
            "the pattern '^[a-zA-Z0-9_-]+$'.",
            param=param,
            code="invalid_value",
        )


def _structured(raw: object, messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    if raw is None:
        return None
    _expect(raw, dict, "response_format")
    assert isinstance(raw, dict)
    kind = raw.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        if not any("json" in m["content"].lower() for m in messages):
            raise RequestInvalid(
                "'messages' must contain the word 'json' in some form, to use 'response_format' "
                "of type 'json_object'.",
                param="messages",
            )
        return {}
    if kind == "json_schema":
        spec = raw.get("json_schema")
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise RequestInvalid(
                "Missing required parameter: 'response_format.json_schema.name'.",
                param="response_format.json_schema.name",
                code="missing_required_parameter",
            )
        schema = spec.get("schema")
        return dict(schema) if isinstance(schema, dict) else {}
    raise RequestInvalid(
        f"Invalid value: '{kind}'. Supported values are: 'text', 'json_object', and 'json_schema'.",
        param="response_format.type",
        code="invalid_value",
    )
