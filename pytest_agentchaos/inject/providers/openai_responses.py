"""OpenAI responses (``POST /v1/responses``): requests in, turns out.

Non-streaming: a ``response`` object whose ``output`` is a ``message`` item (``msg_...``) with
one ``output_text`` part when the turn has text, then one ``function_call`` item (``fc_...``,
``call_id`` ``call_...``) per tool call. A ``length`` / ``content_filter`` finish is
``status: "incomplete"`` with ``incomplete_details.reason`` ``max_output_tokens`` /
``content_filter``.

Streaming: typed events ``event: <type>\\ndata: {"type": <type>, "sequence_number": k, ...}``
from 0: ``response.created``, ``response.in_progress``; for the message
``response.output_item.added``, ``response.content_part.added``,
``response.output_text.delta`` (word by word), ``response.output_text.done``,
``response.content_part.done``, ``response.output_item.done``; per tool call
``response.output_item.added``, ``response.function_call_arguments.delta`` (8-character
pieces), ``response.function_call_arguments.done``, ``response.output_item.done``; last
``response.completed`` (or ``response.incomplete``). No ``[DONE]``. With ``finish=False`` the
last event is left out: the ``openai`` SDK's ``responses.stream`` then raises
``RuntimeError("Didn't receive a `response.completed` event.")`` from ``get_final_response``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from .openai_chat import check_name
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

__all__ = ["OpenAIResponses"]

_ROLES = ("assistant", "system", "developer", "user")
_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}


class OpenAIResponses(OpenAIFormat):
    """The responses wire format (module doc)."""

    api = "openai.responses"
    path = "/v1/responses"
    suffix = "/responses"

    # -- requests ---------------------------------------------------------------------------

    def parse_request(self, body: bytes, headers: Mapping[str, str]) -> ParsedRequest:
        """The request, normalised; :class:`RequestInvalid` with the API's wording for: a body
        that is not a JSON object, no ``model``, an ``input`` that is neither a string nor a
        list of items, a message with an unknown role or no content, a function call without
        ``call_id``/``name``/``arguments``, a ``function_call_output`` whose call is not in
        the input, a function call of the input with no output, a function tool without a
        name or with a bad parameter schema, a ``json_schema`` text format without a name.
        The call checks are skipped when ``previous_response_id`` or ``conversation`` keeps
        the calls on the server."""
        raw = json_body(body, BAD_JSON)
        model = raw.get("model")
        if model is None and raw.get("prompt") is None:
            raise RequestInvalid(
                "Missing required parameter: 'model'.",
                param="model",
                code="missing_required_parameter",
            )
        if model is not None and not isinstance(model, str):
            raise _type_error("model", "a string", model)
        server_state = raw.get("previous_response_id") is not None or raw.get("conversation")
        messages: list[dict[str, Any]] = []
        instructions = raw.get("instructions")
        if isinstance(instructions, str):
            messages.append({"role": "system", "content": instructions})
        messages += _input(raw.get("input"), check_calls=not server_state)
        stream = raw.get("stream")
        if stream is not None and not isinstance(stream, bool):
            raise _type_error("stream", "a boolean", stream)
        return ParsedRequest(
            api=self.api,
            model=model or "",
            messages=tuple(messages),
            tools=tuple(_tools(raw.get("tools"))),
            stream=bool(stream),
            structured=_structured(raw.get("text")),
            raw=raw,
        )

    # -- responses --------------------------------------------------------------------------

    def render(
        self, turn: Turn, request: ParsedRequest, *, n: int, created: float | None = None
    ) -> dict[str, Any]:
        """The ``response`` object for ``turn`` (module doc)."""
        when = int(time.time() if created is None else created)
        status = "incomplete" if turn.finish in _INCOMPLETE else "completed"
        items = [item for _, item in self._items(turn, n, done=True)]
        return self._response(turn, request, n, when, status, items, usage=True)

    def render_stream(
        self,
        turn: Turn,
        request: ParsedRequest,
        *,
        n: int,
        created: float | None = None,
        finish: bool = True,
    ) -> list[bytes]:
        """The typed SSE events for ``turn`` (module doc); ``finish=False`` leaves out the
        final ``response.completed`` / ``response.incomplete``."""
        when = int(time.time() if created is None else created)
        events: list[dict[str, Any]] = []
        start = self._response(turn, request, n, when, "in_progress", [], usage=False)
        events.append({"type": "response.created", "response": start})
        events.append({"type": "response.in_progress", "response": start})
        for index, (kind, item) in enumerate(self._items(turn, n, done=True)):
            opened = dict(item, status="in_progress")
            if kind == "message":
                part = item["content"][0]
                opened["content"] = []
                events.append(_added(index, opened))
                ids = {"item_id": item["id"], "output_index": index, "content_index": 0}
                events.append(
                    {"type": "response.content_part.added", **ids, "part": dict(part, text="")}
                )
                events += [
                    {"type": "response.output_text.delta", **ids, "delta": piece, "logprobs": []}
                    for piece in split_words(part["text"])
                ]
                events.append(
                    {"type": "response.output_text.done", **ids, "text": part["text"],
                     "logprobs": []}
                )  # fmt: skip
                events.append({"type": "response.content_part.done", **ids, "part": part})
            else:
                opened["arguments"] = ""
                events.append(_added(index, opened))
                ids = {"item_id": item["id"], "output_index": index}
                events += [
                    {"type": "response.function_call_arguments.delta", **ids, "delta": piece}
                    for piece in split_pieces(item["arguments"])
                ]
                events.append(
                    {"type": "response.function_call_arguments.done", **ids,
                     "name": item["name"], "arguments": item["arguments"]}
                )  # fmt: skip
            events.append({"type": "response.output_item.done", "output_index": index,
                           "item": item})  # fmt: skip
        if finish:
            final = self.render(turn, request, n=n, created=created)
            kind = "response.completed" if final["status"] == "completed" else "response.incomplete"
            events.append({"type": kind, "response": final})
        return [
            sse({"type": event["type"], "sequence_number": k, **event}, event["type"])
            for k, event in enumerate(events)
        ]

    def stream_error(self, status: int, message: str | None = None, *, n: int = 0) -> bytes:
        """An ``error`` event (``{"type": "error", "code", "message", "param",
        "sequence_number"}``). The ``openai`` SDK does not raise on it: iteration yields a
        ``ResponseErrorEvent`` and, the stream ending without ``response.completed``,
        ``get_final_response()`` raises ``RuntimeError("Didn't receive a
        `response.completed` event.")``. Its ``sequence_number`` is 0: renumber it when
        splicing it into a stream."""
        _, body = self.error(status, message, n=n)
        error = body["error"]
        code = error["code"] if isinstance(error["code"], str) else error["type"]
        return sse(
            {"type": "error", "code": code, "message": error["message"], "param": error["param"],
             "sequence_number": 0},
            "error",
        )  # fmt: skip

    def _is_delta(self, event: bytes) -> bool:
        return event.startswith((b"event: response.output_text.delta",
                                 b"event: response.function_call_arguments.delta"))  # fmt: skip

    # -- parts ------------------------------------------------------------------------------

    def _items(self, turn: Turn, n: int, *, done: bool) -> list[tuple[str, dict[str, Any]]]:
        items: list[tuple[str, dict[str, Any]]] = []
        status = "incomplete" if turn.finish in _INCOMPLETE else "completed"
        if turn.content is not None:
            text = {"type": "output_text", "annotations": [], "logprobs": [], "text": turn.content}
            items.append(
                ("message", {"id": hex_id("msg_", 50, self.api, n), "type": "message",
                             "status": status, "content": [text], "role": "assistant"})
            )  # fmt: skip
        for i, call in enumerate(turn.tool_calls):
            items.append(
                ("function_call", {
                    "id": hex_id("fc_", 50, self.api, n, i),
                    "type": "function_call",
                    "status": "completed",
                    "arguments": arguments_text(call),
                    "call_id": call.id if call.id is not None else make_id(
                        "call_", 24, self.api, n, i),
                    "name": call.name,
                })
            )  # fmt: skip
        return items

    def _response(
        self,
        turn: Turn,
        request: ParsedRequest,
        n: int,
        created: int,
        status: str,
        output: list[dict[str, Any]],
        *,
        usage: bool,
    ) -> dict[str, Any]:
        raw = request.raw
        reason = _INCOMPLETE.get(turn.finish) if status == "incomplete" else None
        asked = raw.get("text")
        text: dict[str, Any] = asked if isinstance(asked, dict) else {}
        body: dict[str, Any] = {
            "id": hex_id("resp_", 50, self.api, n),
            "object": "response",
            "created_at": created,
            "status": status,
            "background": False,
            "completed_at": created if status == "completed" else None,
            "error": None,
            "incomplete_details": {"reason": reason} if reason else None,
            "instructions": raw.get("instructions"),
            "max_output_tokens": raw.get("max_output_tokens"),
            "max_tool_calls": raw.get("max_tool_calls"),
            "model": request.model,
            "output": output,
            "parallel_tool_calls": raw.get("parallel_tool_calls", True),
            "previous_response_id": raw.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None},
            "service_tier": "default",
            "store": raw.get("store", True),
            "temperature": raw.get("temperature", 1.0),
            "text": {"format": {"type": "text"}, "verbosity": "medium", **text},
            "tool_choice": raw.get("tool_choice", "auto"),
            "tools": [_echo_tool(tool) for tool in raw.get("tools") or []],
            "top_p": raw.get("top_p", 1.0),
            "truncation": raw.get("truncation", "disabled"),
            "usage": None,
            "user": None,
            "metadata": raw.get("metadata") or {},
        }
        if usage:
            used, said = self.tokens(turn, request)
            body["usage"] = {
                "input_tokens": used,
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens": said,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": used + said,
            }
        return body


def _added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def _echo_tool(tool: object) -> object:
    """A request tool as the response echoes it: function tools with their defaults."""
    if isinstance(tool, dict) and tool.get("type") == "function":
        return {"description": None, "parameters": None, "strict": True, **tool}
    return tool


def _type_error(param: str, expected: str, value: object) -> RequestInvalid:
    return RequestInvalid(
        f"Invalid type for '{param}': expected {expected}, but got {kind_of(value)} instead.",
        param=param,
        code="invalid_type",
    )


def _missing(param: str) -> RequestInvalid:
    return RequestInvalid(
        f"Missing required parameter: '{param}'.", param=param, code="missing_required_parameter"
    )


def _content_text(content: object, param: str) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise _type_error(param, "one of a string or array of input items", content)
    texts = []
    for j, part in enumerate(content):
        if not isinstance(part, dict):
            raise _type_error(f"{param}[{j}]", "an object", part)
        if part.get("type") in ("input_text", "output_text", "text"):
            if not isinstance(part.get("text"), str):
                raise _missing(f"{param}[{j}].text")
            texts.append(part["text"])
        elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
            texts.append(part["refusal"])
    return join_text(texts)


def _input(raw: object, *, check_calls: bool) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if isinstance(raw, str):
        return [{"role": "user", "content": raw}]
    if not isinstance(raw, list):
        raise _type_error("input", "one of a string or array of input items", raw)
    out: list[dict[str, Any]] = []
    calls: dict[str, int] = {}  # call id -> input index of the function call
    answered: set[str] = set()
    for i, item in enumerate(raw):
        at = f"input[{i}]"
        if not isinstance(item, dict):
            raise _type_error(at, "an object", item)
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            role = item.get("role")
            if role not in _ROLES:
                raise RequestInvalid(
                    f"Invalid value: '{role}'. Supported values are: 'assistant', 'system', "
                    "'developer', and 'user'.",
                    param=f"{at}.role",
                    code="invalid_value",
                )
            if "content" not in item:
                raise _missing(f"{at}.content")
            text = _content_text(item["content"], f"{at}.content")
            out.append({"role": "system" if role == "developer" else role, "content": text})
        elif kind == "function_call":
            for key in ("call_id", "name", "arguments"):
                if not isinstance(item.get(key), str):
                    raise _missing(f"{at}.{key}")
            call = {"id": item["call_id"], "name": item["name"], "arguments": item["arguments"]}
            calls[item["call_id"]] = i
            last = out[-1] if out else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
            else:
                out.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                raise _missing(f"{at}.call_id")
            if "output" not in item:
                raise _missing(f"{at}.output")
            if check_calls and call_id not in calls:
                raise RequestInvalid(
                    f"No tool call found for function call output with call_id {call_id}.",
                    param="input",
                )
            answered.add(call_id)
            output = item["output"]
            text = output if isinstance(output, str) else _content_text(output, f"{at}.output")
            out.append({"role": "tool", "content": text, "tool_call_id": call_id})
        elif kind is None:
            raise _missing(f"{at}.type")
        # reasoning, item references, hosted tools' calls: nothing to normalise
    if check_calls:
        for call_id in calls:
            if call_id not in answered:
                raise RequestInvalid(
                    f"No tool output found for function call {call_id}.", param="input"
                )
    return out


def _tools(raw: object) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _type_error("tools", "an array", raw)
    tools = []
    for i, tool in enumerate(raw):
        at = f"tools[{i}]"
        if not isinstance(tool, dict):
            raise _type_error(at, "an object", tool)
        if tool.get("type") is None:
            raise _missing(f"{at}.type")
        if tool["type"] != "function":
            continue  # hosted and custom tools
        name = tool.get("name")
        check_name(name, f"{at}.name")
        assert isinstance(name, str)
        schema = check_schema(tool.get("parameters"), name, f"{at}.parameters")
        description = tool.get("description")
        tools.append({"name": name, "description": description or "", "parameters": schema})
    return tools


def _structured(raw: object) -> dict[str, Any] | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("format"), dict):
        return None
    spec = raw["format"]
    if spec.get("type") == "json_object":
        return {}
    if spec.get("type") != "json_schema":
        return None
    if not isinstance(spec.get("name"), str):
        raise _missing("text.format.name")
    schema = spec.get("schema")
    return dict(schema) if isinstance(schema, dict) else {}
