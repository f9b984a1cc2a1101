"""The provider wire formats against the real ``openai`` and ``anthropic`` SDKs, offline: what
a turn says is what the SDK returns (text, tool calls, usage, finish), streamed or not; each
error status is the SDK's own exception; the SDKs' own traffic is accepted and malformed
requests are refused as the APIs refuse them."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from provider_fake import (
    Cut,
    Err,
    FakeProvider,
    anthropic_client,
    async_anthropic_client,
    async_openai_client,
    openai_client,
)
from pydantic import BaseModel

from pytest_agentchaos.inject.providers import (
    DEFAULT_HOSTS,
    FORMATS,
    ParsedRequest,
    RequestInvalid,
    ToolCallSpec,
    Turn,
    format_for_path,
    formats_for,
    parse_turn,
)
from pytest_agentchaos.inject.providers.wire import split_words

APIS = ["openai.chat", "openai.responses", "anthropic.messages"]
SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string"}},
    "required": ["q"],
    "additionalProperties": False,
}


# -- one call through each SDK, the answer in one shape ---------------------------------------


def client_for(fake: FakeProvider, **options: Any) -> Any:
    if fake.api.startswith("openai"):
        return openai_client(fake, **options)
    return anthropic_client(fake, **options)


def tools_for(api: str) -> list[dict[str, Any]]:
    if api == "openai.chat":
        return [
            {
                "type": "function",
                "function": {"name": "search", "description": "Search.", "parameters": SCHEMA},
            }
        ]
    if api == "openai.responses":
        return [
            {
                "type": "function",
                "name": "search",
                "description": "Search.",
                "parameters": SCHEMA,
                "strict": True,
            }
        ]
    return [{"name": "search", "description": "Search.", "input_schema": SCHEMA}]


def ask(fake: FakeProvider, client: Any, *, stream: bool, tools: bool = True) -> dict[str, Any]:
    """One call with a system prompt and a user message; the answer as
    ``{"text", "calls": [(id, name, arguments)], "usage": (in, out), "finish"}``."""
    api = fake.api
    extra: dict[str, Any] = {"tools": tools_for(api)} if tools else {}
    if api == "openai.chat":
        messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
        if stream:
            with client.chat.completions.stream(
                model="gpt-4o", messages=messages, stream_options={"include_usage": True}, **extra
            ) as s:
                for _ in s:
                    pass
                completion = s.get_final_completion()
        else:
            completion = client.chat.completions.create(model="gpt-4o", messages=messages, **extra)
        choice = completion.choices[0]
        calls = [
            (c.id, c.function.name, c.function.arguments) for c in choice.message.tool_calls or []
        ]
        usage = completion.usage
        return {
            "text": choice.message.content or "",
            "calls": calls,
            "usage": (usage.prompt_tokens, usage.completion_tokens) if usage else None,
            "finish": choice.finish_reason,
        }
    if api == "openai.responses":
        kwargs = {"model": "gpt-4o", "instructions": "Be brief.", "input": "hi", **extra}
        if stream:
            with client.responses.stream(**kwargs) as s:
                for _ in s:
                    pass
                response = s.get_final_response()
        else:
            response = client.responses.create(**kwargs)
        calls = [
            (o.call_id, o.name, o.arguments) for o in response.output if o.type == "function_call"
        ]
        return {
            "text": response.output_text,
            "calls": calls,
            "usage": (response.usage.input_tokens, response.usage.output_tokens),
            "finish": response.status,
        }
    kwargs = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 1024,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "hi"}],
        **extra,
    }
    if stream:
        with client.messages.stream(**kwargs) as s:
            for _ in s:
                pass
            message = s.get_final_message()
    else:
        message = client.messages.create(**kwargs)
    calls = [
        (b.id, b.name, json.dumps(b.input, ensure_ascii=False))
        for b in message.content
        if b.type == "tool_use"
    ]
    text = "".join(b.text for b in message.content if b.type == "text")
    return {
        "text": text,
        "calls": calls,
        "usage": (message.usage.input_tokens, message.usage.output_tokens),
        "finish": message.stop_reason,
    }


def same_arguments(api: str, got: str, sent: str) -> bool:
    """OpenAI returns the arguments text as sent; Anthropic the JSON object it encodes."""
    return got == sent if api.startswith("openai") else json.loads(got) == json.loads(sent)


# -- round trips ---------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("api", APIS)
def test_text_round_trip(api: str, stream: bool) -> None:
    fake = FakeProvider(
        api,
        [
            {
                "content": "Paris is the capital of France.",
                "usage": {"input_tokens": 12, "output_tokens": 7},
            }
        ],
    )
    answer = ask(fake, client_for(fake), stream=stream)
    assert answer["text"] == "Paris is the capital of France."
    assert answer["calls"] == []
    assert answer["usage"] == (12, 7)
    assert (
        answer["finish"]
        == {
            "openai.chat": "stop",
            "openai.responses": "completed",
            "anthropic.messages": "end_turn",
        }[api]
    )
    request = fake.requests[0]
    assert request.stream is stream
    assert request.messages[0] == {"role": "system", "content": "Be brief."}
    assert request.messages[-1] == {"role": "user", "content": "hi"}
    assert request.tools == ({"name": "search", "description": "Search.", "parameters": SCHEMA},)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("api", APIS)
def test_tool_calls_reach_the_sdk(api: str, stream: bool) -> None:
    turn = {
        "content": "Let me look.",
        "tool_calls": [
            {"name": "search", "arguments": {"q": "weather in Zürich 🌦"}},
            {"name": "search", "arguments": '{"q": "given id"}', "id": "call_given_1"},
        ],
    }
    fake = FakeProvider(api, [turn])
    answer = ask(fake, client_for(fake), stream=stream)
    assert answer["text"] == "Let me look."
    (id1, name1, args1), (id2, name2, args2) = answer["calls"]
    assert (name1, name2) == ("search", "search")
    assert same_arguments(api, args1, '{"q":"weather in Zürich 🌦"}')
    assert same_arguments(api, args2, '{"q": "given id"}')
    prefix = "toolu_01" if api.startswith("anthropic") else "call_"
    assert id1.startswith(prefix) and len(id1) == len(prefix) + (22 if "toolu" in prefix else 24)
    assert id2 == "call_given_1"
    assert (
        answer["finish"]
        == {
            "openai.chat": "tool_calls",
            "openai.responses": "completed",
            "anthropic.messages": "tool_use",
        }[api]
    )


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("api", ["openai.chat", "openai.responses"])
def test_invalid_json_arguments_reach_openai_verbatim(api: str, stream: bool) -> None:
    """Verbatim, but for the responses stream helper given a strict tool: it parses the
    arguments of strict tools and raises the JSON error."""
    fake = FakeProvider(api, [{"tool_calls": [{"name": "search", "arguments": '{"q": "unterm'}]}])
    answer = ask(fake, client_for(fake), stream=stream, tools=False)
    assert answer["calls"][0][2] == '{"q": "unterm'
    assert answer["text"] == ""
    if api == "openai.responses" and stream:
        with pytest.raises(json.JSONDecodeError):
            ask(fake, client_for(fake), stream=True, tools=True)


def test_anthropic_invalid_json_arguments_only_stream() -> None:
    """The Messages API's tool input is an object: a broken-JSON call cannot be a JSON body,
    and streamed, the SDK refuses it as it refuses a real model's broken JSON."""
    fake = FakeProvider(
        "anthropic.messages", [{"tool_calls": [{"name": "search", "arguments": '{"q": nope}'}]}]
    )
    fmt = FORMATS["anthropic.messages"]
    with pytest.raises(ValueError, match="input is a JSON object"):
        fmt.render(parse_turn(fake.script[0], "t"), _request(fmt), n=1)
    with pytest.raises(ValueError, match="Unable to parse tool parameter JSON"):
        ask(fake, client_for(fake), stream=True)
    # a truncated object is not refused: the SDK parses it as partial JSON, which drops the
    # unfinished string
    fake = FakeProvider(
        "anthropic.messages", [{"tool_calls": [{"name": "search", "arguments": '{"q": "unt'}]}]
    )
    assert ask(fake, client_for(fake), stream=True)["calls"][0][2] == "{}"  # silently empty


@pytest.mark.parametrize("api", APIS)
def test_raw_sdk_stream_iteration(api: str) -> None:
    """``create(stream=True)`` (no helper): the raw events add up to the turn."""
    fake = FakeProvider(
        api,
        [
            {
                "content": "one two three",
                "tool_calls": [
                    {"name": "search", "arguments": {"q": "a longer argument to cut in pieces"}}
                ],
            }
        ],
    )
    client = client_for(fake)
    text, arguments = "", ""
    if api == "openai.chat":
        chunks = list(
            client.chat.completions.create(
                model="gpt-4o",
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        for chunk in chunks[:-1]:
            delta = chunk.choices[0].delta
            text += delta.content or ""
            arguments += "".join(c.function.arguments or "" for c in delta.tool_calls or [])
        assert chunks[-2].choices[0].finish_reason == "tool_calls"
        assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0
        assert len({c.id for c in chunks}) == 1
    elif api == "openai.responses":
        events = list(client.responses.create(model="gpt-4o", input="hi", stream=True))
        assert [e.sequence_number for e in events] == list(range(len(events)))
        assert events[0].type == "response.created" and events[-1].type == "response.completed"
        text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
        arguments = "".join(
            e.delta for e in events if e.type == "response.function_call_arguments.delta"
        )
    else:
        events = list(
            client.messages.create(
                model="claude-sonnet-5-5",
                max_tokens=100,
                stream=True,
                messages=[{"role": "user", "content": "hi"}],
            )
        )
        assert events[0].type == "message_start" and events[-1].type == "message_stop"
        deltas = [e.delta for e in events if e.type == "content_block_delta"]
        text = "".join(d.text for d in deltas if d.type == "text_delta")
        arguments = "".join(d.partial_json for d in deltas if d.type == "input_json_delta")
    assert text == "one two three"
    assert json.loads(arguments) == {"q": "a longer argument to cut in pieces"}


@pytest.mark.parametrize("api", APIS)
async def test_async_clients(api: str) -> None:
    fake = FakeProvider(
        api,
        [{"content": "async hello", "tool_calls": [{"name": "search", "arguments": {"q": "x"}}]}],
    )
    if api == "openai.chat":
        client = async_openai_client(fake)
        async with client.chat.completions.stream(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
        ) as s:
            async for _ in s:
                pass
            message = (await s.get_final_completion()).choices[0].message
        text, name = message.content, message.tool_calls[0].function.name
    elif api == "openai.responses":
        client = async_openai_client(fake)
        async with client.responses.stream(model="gpt-4o", input="hi") as s:
            async for _ in s:
                pass
            response = await s.get_final_response()
        text, name = response.output_text, response.output[1].name
    else:
        client = async_anthropic_client(fake)
        async with client.messages.stream(
            model="claude-sonnet-5-5", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        ) as s:
            async for _ in s:
                pass
            message = await s.get_final_message()
        text, name = message.content[0].text, message.content[1].name
    assert (text, name) == ("async hello", "search")


# -- structured output ---------------------------------------------------------------------------


class City(BaseModel):
    name: str
    population: int


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_chat_parse_structured_output(stream: bool) -> None:
    fake = FakeProvider("openai.chat", [{"content": {"name": "Zürich", "population": 443037}}])
    client = openai_client(fake)
    messages = [{"role": "user", "content": "Largest Swiss city?"}]
    if stream:
        with client.chat.completions.stream(
            model="gpt-4o", messages=messages, response_format=City
        ) as s:
            for _ in s:
                pass
            parsed = s.get_final_completion().choices[0].message.parsed
    else:
        completion = client.chat.completions.parse(
            model="gpt-4o", messages=messages, response_format=City
        )
        parsed = completion.choices[0].message.parsed
    assert parsed == City(name="Zürich", population=443037)
    assert fake.requests[0].structured is not None
    assert fake.requests[0].structured["properties"]["population"] == {
        "title": "Population",
        "type": "integer",
    }


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_responses_parse_structured_output(stream: bool) -> None:
    fake = FakeProvider("openai.responses", ['{"name": "Bern", "population": 134794}'])
    client = openai_client(fake)
    if stream:
        with client.responses.stream(model="gpt-4o", input="Capital?", text_format=City) as s:
            for _ in s:
                pass
            parsed = s.get_final_response().output_parsed
    else:
        parsed = client.responses.parse(model="gpt-4o", input="Capital?", text_format=City)
        parsed = parsed.output_parsed
    assert parsed == City(name="Bern", population=134794)
    assert fake.requests[0].structured is not None


def test_anthropic_parse_structured_output() -> None:
    fake = FakeProvider("anthropic.messages", [{"content": {"name": "Basel", "population": 1}}])
    message = anthropic_client(fake).messages.parse(
        model="claude-sonnet-5-5",
        max_tokens=100,
        output_format=City,
        messages=[{"role": "user", "content": "A city?"}],
    )
    assert message.parsed_output == City(name="Basel", population=1)
    assert fake.requests[0].structured is not None


@pytest.mark.parametrize("api", APIS)
def test_finish_reasons_map_to_each_api(api: str) -> None:
    expected = {
        "openai.chat": ["stop", "tool_calls", "length", "content_filter"],
        "openai.responses": [
            ("completed", None),
            ("completed", None),
            ("incomplete", "max_output_tokens"),
            ("incomplete", "content_filter"),
        ],
        "anthropic.messages": ["end_turn", "tool_use", "max_tokens", "refusal"],
    }[api]
    for reason, want in zip(
        ["stop", "tool_calls", "length", "content_filter"], expected, strict=True
    ):
        turn = Turn(content="x", finish_reason=reason)
        body = FORMATS[api].render(turn, _request(FORMATS[api]), n=1)
        if api == "openai.chat":
            assert (
                openai.types.chat.ChatCompletion.model_validate(body).choices[0].finish_reason
                == want
            )
        elif api == "openai.responses":
            response = openai.types.responses.Response.model_validate(body)
            details = response.incomplete_details
            assert (response.status, details.reason if details else None) == want
        else:
            assert anthropic.types.Message.model_validate(body).stop_reason == want


# -- errors and retries -------------------------------------------------------------------------

OPENAI_CLASSES = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    408: openai.APIStatusError,
    409: openai.ConflictError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
    500: openai.InternalServerError,
    502: openai.InternalServerError,
    503: openai.InternalServerError,
    504: openai.InternalServerError,
    529: openai.InternalServerError,
}
ANTHROPIC_CLASSES = {
    400: anthropic.BadRequestError,
    401: anthropic.AuthenticationError,
    403: anthropic.PermissionDeniedError,
    404: anthropic.NotFoundError,
    408: anthropic.RequestTimeoutError,
    409: anthropic.ConflictError,
    422: anthropic.UnprocessableEntityError,
    429: anthropic.RateLimitError,
    500: anthropic.InternalServerError,
    502: anthropic.InternalServerError,
    503: anthropic.ServiceUnavailableError,
    504: anthropic.GatewayTimeoutError,
    529: anthropic.OverloadedError,
}


@pytest.mark.parametrize("status", sorted(OPENAI_CLASSES))
@pytest.mark.parametrize("api", APIS)
def test_each_error_status_is_the_sdks_exception(api: str, status: int) -> None:
    classes = OPENAI_CLASSES if api.startswith("openai") else ANTHROPIC_CLASSES
    fake = FakeProvider(api, [Err(status, "scripted failure")])
    with pytest.raises(classes[status]) as caught:
        ask(fake, client_for(fake), stream=False)
    error = caught.value
    assert type(error) is classes[status] or status == 408 and api.startswith("openai")
    assert error.status_code == status
    assert "scripted failure" in error.message
    if api.startswith("openai"):
        assert error.body["message"] == "scripted failure"  # the SDK keeps body["error"]
        assert error.request_id.startswith("req_")
    else:
        assert error.api_message == "scripted failure"
        assert error.request_id.startswith("req_011C")
        assert error.type == error.body["error"]["type"]


def test_default_error_bodies_are_the_providers() -> None:
    _, body = FORMATS["openai.chat"].error(429, retry_after=0.12)
    assert body["error"]["type"] == "requests" and body["error"]["code"] == "rate_limit_exceeded"
    assert "Please try again in 120ms." in body["error"]["message"]
    _, body = FORMATS["openai.responses"].error(502)
    assert body == {
        "error": {"message": "Bad gateway.", "type": "cf_bad_gateway", "param": None, "code": 502}
    }
    headers, body = FORMATS["anthropic.messages"].error(529)
    assert body["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    assert ("x-should-retry", "true") in headers
    anthropic.types.ErrorResponse.model_validate(body)
    headers, _ = FORMATS["anthropic.messages"].error(429, retry_after=0.2)
    assert ("retry-after", "1") in headers and not any(k == "retry-after-ms" for k, _ in headers)
    headers, _ = FORMATS["openai.chat"].error(429, retry_after=2.5)
    assert ("retry-after", "3") in headers and ("retry-after-ms", "2500") in headers


@pytest.mark.parametrize("api", APIS)
def test_sdk_retries_a_429_after_the_servers_delay(
    api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``max_retries=2`` two 429s are retried (3 requests) and the third answer is used;
    the SDK waits what the headers say (OpenAI: ``retry-after-ms``; Anthropic: ``retry-after``
    in whole seconds)."""
    import time

    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)
    fake = FakeProvider(api, [Err(429, retry_after=0.25), Err(429, retry_after=0.25), "done"])
    answer = ask(fake, client_for(fake, max_retries=2), stream=False)
    assert answer["text"] == "done"
    assert fake.calls == 3
    assert waits == ([0.25, 0.25] if api.startswith("openai") else [1.0, 1.0])


@pytest.mark.parametrize("api", APIS)
def test_retry_after_zero_falls_back_to_the_sdks_backoff(
    api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``retry-after: 0`` is not a delay the SDKs honour: they back off exponentially (0.5 s,
    1 s, minus up to 25 % jitter)."""
    import time

    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)
    fake = FakeProvider(api, [Err(429, retry_after=0), Err(503, retry_after=0), "done"])
    assert ask(fake, client_for(fake, max_retries=2), stream=False)["text"] == "done"
    assert 0.375 <= waits[0] <= 0.5 and 0.75 <= waits[1] <= 1.0


@pytest.mark.parametrize("api", APIS)
def test_errors_inside_a_stream(api: str) -> None:
    fmt = FORMATS[api]
    events = fmt.render_stream(Turn(content="a b c d"), _request(fmt, stream=True), n=1)
    at = fmt.mid_answer(events)
    fake = FakeProvider(api, [])
    fake.respond = (
        lambda request: (  # type: ignore[method-assign]
            200,
            fmt.success_headers(n=1, stream=True),
            [*events[:at], fmt.stream_error(529 if api.startswith("anthropic") else 500, "boom")],
        )
    )
    if api == "openai.responses":  # an event, not an exception; no response.completed after it
        with openai_client(fake).responses.stream(model="m", input="hi") as s:
            errors = [e for e in s if e.type == "error"]
            assert [e.message for e in errors] == ["boom"]
            with pytest.raises(RuntimeError, match="response.completed"):
                s.get_final_response()
        return
    with pytest.raises((openai.APIError, anthropic.APIStatusError), match="boom"):
        ask(fake, client_for(fake), stream=True, tools=False)


# -- cut streams and streams without a finish --------------------------------------------------


@pytest.mark.parametrize("api", APIS)
def test_mid_answer_cut_is_inside_the_answer(api: str) -> None:
    fmt = FORMATS[api]
    turn = Turn(content="one two three four", tool_calls=(ToolCallSpec("search", {"q": "x"}),))
    events = fmt.render_stream(turn, _request(fmt, stream=True), n=1)
    at = fmt.mid_answer(events)
    assert 1 <= at < len(events) - 1
    assert b"one" in b"".join(events[:at]) and b"four" not in b"".join(events[:at])


def test_sdk_reactions_to_cut_and_unfinished_streams() -> None:
    """What each SDK's stream helper does with a stream cut mid-answer, and with one that ends
    without its finishing events (see the report in the module doc of the formats)."""
    turn = {"content": "one two three four"}
    seen = {}
    for api in APIS:
        for name, step in (("cut", Cut(turn)), ("no_finish", Cut(turn, finish=False))):
            fake = FakeProvider(api, [step])
            try:
                answer = ask(fake, client_for(fake), stream=True, tools=False)
                seen[(api, name)] = ("ok", answer["text"], answer["finish"])
            except Exception as exc:
                seen[(api, name)] = ("raised", type(exc).__name__)
    assert seen[("openai.chat", "cut")] == ("ok", "one two", None)
    assert seen[("openai.chat", "no_finish")] == ("ok", "one two three four", None)
    assert seen[("openai.responses", "cut")] == ("raised", "RuntimeError")
    assert seen[("openai.responses", "no_finish")] == ("raised", "RuntimeError")
    assert seen[("anthropic.messages", "cut")] == ("ok", "one two", None)
    assert seen[("anthropic.messages", "no_finish")] == ("ok", "one two three four", None)


# -- requests: the SDKs' traffic is accepted, malformed requests refused -------------------------


def test_multi_turn_conversations_from_each_sdk_are_accepted() -> None:
    """System prompt, tools, a tool call, its result, the follow-up: no false 400."""
    call = {"tool_calls": [{"name": "search", "arguments": {"q": "x"}}]}
    # chat completions: the SDK's own message object is sent back
    fake = FakeProvider("openai.chat", [call, "final"])
    client = openai_client(fake)
    messages: list[Any] = [{"role": "system", "content": "Sys."}, {"role": "user", "content": "q"}]
    first = client.chat.completions.create(model="m", messages=messages, tools=tools_for(fake.api))
    message = first.choices[0].message
    messages += [
        message,
        {"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "result"},
    ]
    second = client.chat.completions.create(model="m", messages=messages, tools=tools_for(fake.api))
    assert second.choices[0].message.content == "final" and not fake.rejected
    assert fake.requests[1].messages[2]["tool_calls"][0]["name"] == "search"
    assert fake.requests[1].messages[3] == {
        "role": "tool",
        "content": "result",
        "tool_call_id": message.tool_calls[0].id,
    }
    # responses: the output items are sent back as input
    fake = FakeProvider("openai.responses", [call, "final"])
    client = openai_client(fake)
    items: list[Any] = [{"role": "user", "content": "q"}]
    first = client.responses.create(
        model="m", instructions="Sys.", input=items, tools=tools_for(fake.api)
    )
    items += [
        *first.output,
        {"type": "function_call_output", "call_id": first.output[0].call_id, "output": "result"},
    ]
    second = client.responses.create(
        model="m", instructions="Sys.", input=items, tools=tools_for(fake.api)
    )
    assert second.output_text == "final" and not fake.rejected
    assert fake.requests[1].messages[-1]["role"] == "tool"
    # anthropic: content blocks are sent back
    fake = FakeProvider("anthropic.messages", [{"content": "Looking.", **call}, "final"])
    client = anthropic_client(fake)
    history: list[Any] = [{"role": "user", "content": "q"}]
    first = client.messages.create(
        model="c", max_tokens=10, system="Sys.", messages=history, tools=tools_for(fake.api)
    )
    use = first.content[1]
    history += [
        {"role": "assistant", "content": first.content},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "result"}],
        },
    ]
    second = client.messages.create(
        model="c", max_tokens=10, system="Sys.", messages=history, tools=tools_for(fake.api)
    )
    assert second.content[0].text == "final" and not fake.rejected
    assert [m["role"] for m in fake.requests[1].messages] == ["system", "user", "assistant", "tool"]


def _raw(api: str, body: Any) -> RequestInvalid:
    fmt = FORMATS[api]
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    with pytest.raises(RequestInvalid) as caught:
        fmt.parse_request(data, {})
    return caught.value


USER = {"role": "user", "content": "hi"}
CHAT_CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    ],
}


@pytest.mark.parametrize(
    ("body", "words", "param"),
    [
        (b"{not json", "could not parse the JSON body", None),
        ({"messages": [USER]}, "you must provide a model parameter", None),
        ({"model": "m"}, "Missing required parameter: 'messages'", "messages"),
        ({"model": "m", "messages": []}, "empty array", "messages"),
        (
            {"model": "m", "messages": [{"role": "robot", "content": "x"}]},
            "Invalid value: 'robot'",
            "messages[0].role",
        ),
        (
            {"model": "m", "messages": [{"role": "user"}]},
            "Missing required parameter: 'messages[0].content'",
            "messages[0].content",
        ),
        (
            {
                "model": "m",
                "messages": [USER, {"role": "tool", "tool_call_id": "x", "content": "r"}],
            },
            "must be a response to a preceeding message with 'tool_calls'",
            "messages.[1].role",
        ),
        (
            {"model": "m", "messages": [USER, CHAT_CALL, {"role": "tool", "content": "r"}]},
            "'messages[2].tool_call_id'",
            "messages[2].tool_call_id",
        ),
        (
            {
                "model": "m",
                "messages": [
                    USER,
                    CHAT_CALL,
                    {"role": "tool", "tool_call_id": "call_2", "content": "r"},
                ],
            },
            "'tool_call_id' of 'call_2' not found",
            "messages.[2].tool_call_id",
        ),
        (
            {"model": "m", "messages": [USER, CHAT_CALL, USER]},
            "did not have response messages: call_1",
            "messages.[1].role",
        ),
        (
            {
                "model": "m",
                "messages": [USER],
                "tools": [
                    {
                        "type": "function",
                        "function": {"name": "bad name", "parameters": {"type": "object"}},
                    }
                ],
            },
            "does not match pattern",
            "tools[0].function.name",
        ),
        (
            {
                "model": "m",
                "messages": [USER],
                "tools": [
                    {
                        "type": "function",
                        "function": {"name": "f", "parameters": {"type": "string"}},
                    }
                ],
            },
            "schema must be a JSON Schema of 'type: \"object\"'",
            "tools[0].function.parameters",
        ),
        (
            {
                "model": "m",
                "messages": [USER],
                "tools": [
                    {
                        "type": "function",
                        "function": {
                            "name": "f",
                            "parameters": {"type": "object", "properties": {"q": {"type": 5}}},
                        },
                    }
                ],
            },
            "Invalid schema for function 'f'",
            "tools[0].function.parameters",
        ),
        (
            {"model": "m", "messages": [USER], "response_format": {"type": "json_object"}},
            "must contain the word 'json'",
            "messages",
        ),
        (
            {"model": "m", "messages": [USER], "stream_options": {"include_usage": True}},
            "only allowed when 'stream' is enabled",
            "stream_options",
        ),
    ],
)
def test_chat_refuses_malformed_requests(body: Any, words: str, param: str | None) -> None:
    error = _raw("openai.chat", body)
    assert words in error.message and error.param == param


RESP_CALL = {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"}


@pytest.mark.parametrize(
    ("body", "words", "param"),
    [
        (b"[1, 2]", "could not parse the JSON body", None),
        ({"input": "hi"}, "Missing required parameter: 'model'", "model"),
        ({"model": "m", "input": 5}, "Invalid type for 'input'", "input"),
        (
            {"model": "m", "input": [{"role": "tool", "content": "x"}]},
            "Invalid value: 'tool'",
            "input[0].role",
        ),
        (
            {
                "model": "m",
                "input": [
                    USER,
                    {"type": "function_call_output", "call_id": "call_9", "output": "r"},
                ],
            },
            "No tool call found for function call output with call_id call_9",
            "input",
        ),
        (
            {"model": "m", "input": [USER, RESP_CALL]},
            "No tool output found for function call call_1",
            "input",
        ),
        (
            {"model": "m", "input": [USER], "tools": [{"type": "function", "parameters": {}}]},
            "Missing required parameter: 'tools[0].name'",
            "tools[0].name",
        ),
        (
            {
                "model": "m",
                "input": [USER],
                "text": {"format": {"type": "json_schema", "schema": {}}},
            },
            "'text.format.name'",
            "text.format.name",
        ),
    ],
)
def test_responses_refuses_malformed_requests(body: Any, words: str, param: str | None) -> None:
    error = _raw("openai.responses", body)
    assert words in error.message and error.param == param


def test_responses_trusts_server_state_for_calls() -> None:
    body = {
        "model": "m",
        "previous_response_id": "resp_1",
        "input": [{"type": "function_call_output", "call_id": "call_9", "output": "r"}],
    }
    request = FORMATS["openai.responses"].parse_request(json.dumps(body).encode(), {})
    assert request.messages == ({"role": "tool", "content": "r", "tool_call_id": "call_9"},)


ANT = {"model": "c", "max_tokens": 10}
USE = {
    "role": "assistant",
    "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}],
}


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"nope", "not valid JSON"),
        ({"model": "c", "messages": [USER]}, "max_tokens: Field required"),
        ({"max_tokens": 5, "messages": [USER]}, "model: Field required"),
        ({**ANT}, "messages: Field required"),
        ({**ANT, "max_tokens": 0, "messages": [USER]}, "greater than or equal to 1"),
        (
            {**ANT, "messages": [{"role": "system", "content": "s"}, USER]},
            'Unexpected role "system"',
        ),
        (
            {**ANT, "messages": [{"role": "tool", "content": "s"}]},
            "Input should be 'user' or 'assistant'",
        ),
        (
            {**ANT, "messages": [{"role": "user", "content": ""}, USER]},
            "all messages must have non-empty content",
        ),
        (
            {**ANT, "messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]},
            "text content blocks must be non-empty",
        ),
        (
            {
                **ANT,
                "messages": [
                    USER,
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": "toolu_9", "content": "r"}
                        ],
                    },
                ],
            },
            "unexpected `tool_use_id` found in `tool_result` blocks: toolu_9",
        ),
        (
            {**ANT, "messages": [USER, USE, USER]},
            "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1",
        ),
        (
            {
                **ANT,
                "messages": [USER],
                "tools": [{"name": "f", "input_schema": {"type": "array"}}],
            },
            "tools.0.custom.input_schema.type: Input should be 'object'",
        ),
        (
            {**ANT, "messages": [USER], "tools": [{"name": "a b", "input_schema": {}}]},
            "tools.0.custom.name: String should match pattern",
        ),
    ],
)
def test_anthropic_refuses_malformed_requests(body: Any, words: str) -> None:
    assert words in _raw("anthropic.messages", body).message


@pytest.mark.parametrize("api", APIS)
def test_a_refused_request_is_a_400_the_sdk_raises(api: str) -> None:
    """The fake answers a refused request with the format's ``reject``: the SDK's
    ``BadRequestError`` carries the API's wording."""
    fake = FakeProvider(api, ["unused"])
    client = client_for(fake)
    with pytest.raises((openai.BadRequestError, anthropic.BadRequestError)) as caught:
        if api == "openai.chat":
            client.chat.completions.create(model="m", messages=[])
        elif api == "openai.responses":
            client.responses.create(model="m", input=[{"role": "tool", "content": "x"}])
        else:
            client.messages.create(model="c", max_tokens=0, messages=[USER])
    assert fake.rejected and fake.rejected[0].message in caught.value.message


# -- registry, paths ----------------------------------------------------------------------------


def test_registry_and_path_rule() -> None:
    assert [f.api for f in formats_for("openai")] == ["openai.chat", "openai.responses"]
    assert [f.api for f in formats_for("anthropic")] == ["anthropic.messages"]
    with pytest.raises(
        ValueError, match="unknown provider 'gemini'; the providers are anthropic, openai"
    ):
        formats_for("gemini")
    assert DEFAULT_HOSTS == {"openai": "api.openai.com", "anthropic": "api.anthropic.com"}
    chat, responses, messages = (FORMATS[a] for a in APIS)
    assert chat.matches("POST", "/v1/chat/completions")
    assert chat.matches("post", "/openai/deployments/gpt-4o/chat/completions/")
    assert responses.matches("POST", "/proxy/openai/v1/responses")
    assert not responses.matches("GET", "/v1/responses")
    assert not responses.matches("POST", "/v1/responses/resp_1/cancel")
    assert messages.matches("POST", "/v1/messages?beta=true")
    assert not messages.matches("POST", "/v1/messages/count_tokens")
    assert format_for_path("openai", "POST", "/v1/embeddings") is None
    assert format_for_path("anthropic", "POST", "/anthropic/v1/messages") is messages


# -- turns --------------------------------------------------------------------------------------


def test_parse_turn_accepts_the_script_forms() -> None:
    assert parse_turn("hi", "s") == Turn(content="hi")
    assert parse_turn({"content": ""}, "s") == Turn(content="")
    turn = parse_turn(
        {"tool_calls": [{"name": "f"}], "usage": {"input_tokens": 1, "output_tokens": 2}}, "s"
    )
    assert turn.tool_calls == (ToolCallSpec("f", {}),) and turn.usage == (1, 2)
    assert turn.finish == "tool_calls"
    assert parse_turn({"content": {"a": [1, "é"]}}, "s").content == '{"a":[1,"é"]}'
    assert parse_turn(turn, "s") is turn


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            None,
            "script[2]: a turn is a str or a dict with 'content' and/or 'tool_calls', got "
            "NoneType None",
        ),
        ({}, "script[2]: an empty turn: give 'content' (\"\" for an empty text) or 'tool_calls'"),
        (
            {"text": "x"},
            "script[2]: unknown key 'text'; allowed: content, tool_calls, usage, finish_reason",
        ),
        (
            {"content": 5},
            "script[2]: content: must be a str (or a dict/list, sent as JSON text), got int 5",
        ),
        ({"tool_calls": {"name": "f"}}, "script[2]: tool_calls: must be a list of calls, got dict"),
        (
            {"tool_calls": [{"arguments": {}}]},
            "script[2]: tool_calls[0]: name: must be a non-empty str, got None",
        ),
        (
            {"tool_calls": [{"name": "f", "args": {}}]},
            "script[2]: tool_calls[0]: unknown key 'args'; allowed: name, arguments, id",
        ),
        (
            {"tool_calls": [{"name": "f", "arguments": {"x": {1, 2}}}]},
            "script[2]: tool_calls[0]: arguments: not JSON-serialisable: Object of type set is not "
            "JSON serializable",
        ),
        (
            {"tool_calls": [{"name": "f", "id": "a"}, {"name": "g", "id": "a"}]},
            "script[2]: tool_calls[1]: id: 'a' is used by an earlier call of this turn",
        ),
        (
            {"content": "x", "usage": {"input_tokens": -1, "output_tokens": 2}},
            "script[2]: usage: input_tokens: must be an int >= 0, got -1",
        ),
        (
            {"content": "x", "usage": {"input_tokens": 1}},
            "script[2]: usage: missing 'output_tokens'; give both input_tokens and output_tokens",
        ),
        (
            {"content": "x", "finish_reason": "end_turn"},
            "script[2]: finish_reason: 'end_turn' is not one of stop, tool_calls, length, "
            "content_filter",
        ),
        (
            {"content": "x\ud800"},
            "script[2]: content: not valid Unicode text (a lone surrogate at index 1)",
        ),
    ],
)
def test_parse_turn_says_what_is_wrong_in_one_line(value: object, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_turn(value, "script[2]")
    assert str(caught.value) == message
    assert "\n" not in str(caught.value)


# -- properties: what the turn says is what the SDK returns, byte for byte -------------------------

TEXT = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [
            "",
            " ",
            "\n\n",
            "data: [DONE]\n\n",
            "event: error\ndata: {}",
            '{"a": 1}',
            "中文 测试 文本",
            "emoji 🎉👍🏽 ok",
            "line\r\nbreak",
            "\u2028sep\u2029",
            "  lead",
            "trail  ",
        ]
    ),
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
ARGUMENTS = st.dictionaries(st.text(max_size=10), JSON_VALUES, max_size=5)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=TEXT,
    arguments=ARGUMENTS,
    raw=st.text(max_size=40),
    api=st.sampled_from(APIS),
    stream=st.booleans(),
)
def test_property_turn_round_trips_through_the_sdk(
    text: str, arguments: dict[str, Any], raw: str, api: str, stream: bool
) -> None:
    calls: list[dict[str, Any]] = [{"name": "search", "arguments": arguments}]
    if api.startswith("openai"):
        calls.append({"name": "search", "arguments": raw})  # any text, verbatim
    fake = FakeProvider(api, [{"content": text, "tool_calls": calls}])
    # no tools declared: the responses stream helper would parse a strict tool's arguments
    answer = ask(fake, client_for(fake), stream=stream, tools=False)
    assert answer["text"] == text
    sent = [json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))]
    if api.startswith("openai"):
        assert [c[2] for c in answer["calls"]] == [sent[0], raw]
    else:
        assert [json.loads(c[2]) for c in answer["calls"]] == [arguments]


@given(text=TEXT)
def test_property_split_words_gives_the_text_back(text: str) -> None:
    assert "".join(split_words(text)) == text


@settings(max_examples=30, deadline=None)
@given(text=TEXT, api=st.sampled_from(APIS))
def test_property_rendered_bodies_validate_as_the_sdk_types(text: str, api: str) -> None:
    fmt = FORMATS[api]
    turn = Turn(content=text, tool_calls=(ToolCallSpec("f", {"a": text}),))
    body = fmt.render(turn, _request(fmt), n=3)
    model = {
        "openai.chat": openai.types.chat.ChatCompletion,
        "openai.responses": openai.types.responses.Response,
        "anthropic.messages": anthropic.types.Message,
    }[api]
    model.model_validate(body)


def _request(fmt: Any, *, stream: bool = False) -> ParsedRequest:
    return ParsedRequest(
        api=fmt.api,
        model="m",
        messages=({"role": "user", "content": "hi"},),
        tools=(),
        stream=stream,
        structured=None,
        raw={},
    )
