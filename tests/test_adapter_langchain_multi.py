"""The LangChain adapter's chat models under chaos, native model errors and multi-agent apps,
against the real packages: langchain / langgraph / langgraph-supervisor, and ``ChatOpenAI`` /
``ChatAnthropic`` sending through the real SDKs over an ``httpx2.MockTransport`` (no network).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import importlib.util
import itertools
import json
import operator
import os
import pickle
import random
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Annotated, Any, TypedDict

import pytest

if any(
    importlib.util.find_spec(m) is None
    for m in ("langchain", "langgraph", "langgraph_supervisor", "langchain_openai",
              "langchain_anthropic", "httpx2")
):  # fmt: skip
    if os.environ.get("AGENTCHAOS_REQUIRE_FRAMEWORKS") == "1":
        raise RuntimeError("the langchain extra is required here (AGENTCHAOS_REQUIRE_FRAMEWORKS=1)")
    pytest.skip("the langchain extra is not installed", allow_module_level=True)

import anthropic
import httpx2
import openai
from langchain.agents import create_agent
from langchain.agents.middleware import (
    ModelFallbackMiddleware,
    ModelRetryMiddleware,
    ToolRetryMiddleware,
)
from langchain_anthropic import ChatAnthropic
from langchain_core.exceptions import (
    ModelAPIError,
    ModelConnectionError,
    ModelError,
    ModelInvalidRequestError,
    ModelRateLimitError,
    ModelTimeoutError,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import RetryPolicy
from langgraph_supervisor import create_supervisor
from pydantic import BaseModel

from pytest_agentchaos import Chaos
from pytest_agentchaos.adapters.langchain import (
    ChaosPlacementWarning,
    chaos_middleware,
    chaos_model,
)
from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.faults.plan import parse_faults
from pytest_agentchaos.inject.errors import InjectedFault
from pytest_agentchaos.inject.network import AllowList, NetworkGuard
from pytest_agentchaos.profiles.profile import ProfileRegistry
from pytest_agentchaos.trace.events import FaultInjected, ModelCall, ModelResult, ToolCall
from pytest_agentchaos.trace.trace import Trace

with warnings.catch_warnings():  # deprecated since LangGraph 1.0, still what the supervisor uses
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent

SEEDS = range(50)
PROFILES = ProfileRegistry.default()
QUESTION = [HumanMessage("What is 2 + 3, and what do the notes say about chaos?")]


def make(*faults: dict[str, Any], **kw: Any) -> Chaos:
    return Chaos.create(faults=parse_faults(list(faults), "test"), seed=3, **kw)


class Scripted(GenericFakeChatModel):
    """A scripted chat model that create_agent can bind tools to."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:
        return self


def turn(
    text: str = "", *calls: tuple[str, dict[str, Any]], tokens: int | None = None
) -> AIMessage:
    usage = {"input_tokens": tokens, "output_tokens": 0, "total_tokens": tokens} if tokens else None
    tool_calls = [{"name": n, "args": a, "id": f"call-{n}-{i}"} for i, (n, a) in enumerate(calls)]
    return AIMessage(content=text, tool_calls=tool_calls, usage_metadata=usage)  # type: ignore[arg-type]


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@tool
def search(query: str) -> str:
    """Search the team's notes."""
    return f"notes about {query}"


def react_agent(*args: Any, **kwargs: Any) -> Any:
    """LangGraph's create_react_agent (deprecated since 1.0, still what langgraph-supervisor
    builds its supervisor with)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_react_agent(*args, **kwargs)


def model_calls(chaos: Chaos) -> list[tuple[str, str | None]]:
    return [(c.model, c.agent) for c in chaos.trace.of_type(ModelCall)]


# -- ChatOpenAI / ChatAnthropic over a mock transport ----------------------------------------------

OPENAI_429 = {
    "error": {
        "message": "Rate limit reached for requests. Please try again later.",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}
OPENAI_400 = {
    "error": {
        "message": "Invalid request.",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
}
ANTHROPIC_429 = {
    "type": "error",
    "error": {
        "type": "rate_limit_error",
        "message": "Number of request tokens has exceeded your per-minute rate limit.",
    },
}

Handler = Callable[[httpx2.Request], httpx2.Response]


def completion(text: str = "", calls: Sequence[tuple[str, dict[str, Any]]] = ()) -> dict[str, Any]:
    """An OpenAI chat completion saying ``text`` and asking for ``calls``."""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": n, "arguments": json.dumps(a)}}
            for i, (n, a) in enumerate(calls)
        ]  # fmt: skip
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def openai_model(handler: Handler, **kw: Any) -> ChatOpenAI:
    return ChatOpenAI(
        model=kw.pop("model", "gpt-4o-mini"),
        api_key="sk-test",  # type: ignore[arg-type]
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
        http_async_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
        **kw,
    )


def anthropic_model(handler: Handler) -> ChatAnthropic:
    model = ChatAnthropic(model="claude-x", api_key="sk-test", max_retries=0)  # type: ignore[call-arg]
    transport = httpx2.MockTransport(handler)
    model.__dict__["_client"] = anthropic.Anthropic(
        api_key="sk-test", max_retries=0, http_client=httpx2.Client(transport=transport)
    )
    return model


def answers(text: str = "ok") -> Handler:
    """A mock OpenAI API that always answers ``text`` (and records what it was asked)."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        handler.asked.append(json.loads(request.content))  # type: ignore[attr-defined]
        return httpx2.Response(200, json=completion(text))

    handler.asked = []  # type: ignore[attr-defined]
    return handler


def fails(status: int, body: Any, headers: Mapping[str, str] | None = None) -> Handler:
    def handler(request: httpx2.Request) -> httpx2.Response:
        handler.count += 1  # type: ignore[attr-defined]
        return httpx2.Response(status, json=body, headers=dict(headers or {}))

    handler.count = 0  # type: ignore[attr-defined]
    return handler


def raised(call: Callable[[], Any]) -> BaseException:
    try:
        call()
    except BaseException as exc:
        return exc
    raise AssertionError("no exception")


# -- a chat model under chaos: the same model to every caller --------------------------------------


def test_a_model_under_chaos_is_the_same_kind_of_model_and_the_original_is_untouched() -> None:
    original = Scripted(messages=iter([turn("hello", ("add", {"a": 1, "b": 2}), tokens=12)]))
    with make() as chaos:
        model = chaos_model(chaos, original)
        reply = model.invoke("hi")
    assert isinstance(model, Scripted) and isinstance(model, BaseChatModel)
    assert type(model).__name__ == "Scripted" and type(model).__module__ == __name__
    assert model._llm_type == original._llm_type
    assert reply.content == "hello" and reply.tool_calls[0]["args"] == {"a": 1, "b": 2}
    assert type(original) is Scripted and "__chaos_model__" not in original.__dict__
    (result,) = chaos.trace.of_type(ModelResult)
    assert result.output == 'hello\n-> add({"a": 1, "b": 2})' and result.tokens == 12
    assert model_calls(chaos) == [("Scripted", None)]  # no agent: the model's name
    # the original's later calls are not recorded; it shares the script with its copy
    with make() as other:
        Scripted(messages=iter([turn("x")])).invoke("hi")
    assert other.trace.of_type(ModelCall) == []


def test_every_call_path_goes_through_the_plan_once() -> None:
    """invoke, batch, stream (the fake implements _stream), ainvoke / astream (LangChain runs
    the sync methods in a thread), invoke(stream=True): one recorded call each."""
    script = iter([AIMessage(f"answer number {i}") for i in range(8)])
    with make() as chaos:
        model = chaos_model(chaos, Scripted(messages=script))
        assert model.invoke("a").content == "answer number 0"
        assert [m.content for m in model.batch(["b", "c"])] == [
            "answer number 1",
            "answer number 2",
        ]
        assert "".join(str(c.content) for c in model.stream("d")) == "answer number 3"
        assert asyncio.run(model.ainvoke("e")).content == "answer number 4"

        async def astream() -> str:
            return "".join([str(c.content) async for c in model.astream("f")])

        assert asyncio.run(astream()) == "answer number 5"
        assert model.invoke("g", stream=True).content == "answer number 6"
    outputs = [r.output for r in chaos.trace.of_type(ModelResult)]
    assert outputs == [f"answer number {i}" for i in range(7)]


def sse(*deltas: dict[str, Any]) -> httpx2.Response:
    """An OpenAI streamed completion of ``deltas``."""
    events = [
        {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini",
         "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        for delta in deltas
    ]  # fmt: skip
    text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return httpx2.Response(
        200, content=text.encode(), headers={"content-type": "text/event-stream"}
    )


def test_chat_openai_keeps_bind_tools_structured_output_streaming_and_async() -> None:
    class Weather(BaseModel):
        city: str
        temp: int

    def handler(request: httpx2.Request) -> httpx2.Response:
        asked = json.loads(request.content)
        seen.append(asked)
        if asked.get("stream"):
            return sse({"role": "assistant", "content": "sun"}, {"content": "ny"})
        if "response_format" in asked:
            return httpx2.Response(200, json=completion('{"city": "Paris", "temp": 20}'))
        return httpx2.Response(200, json=completion("", [("add", {"a": 1, "b": 2})]))

    seen: list[dict[str, Any]] = []
    with make() as chaos:
        model = chaos_model(chaos, openai_model(handler))
        bound = model.bind_tools([add])
        assert bound.invoke("add").tool_calls[0]["args"] == {"a": 1, "b": 2}  # type: ignore[attr-defined]
        assert seen[-1]["tools"][0]["function"]["name"] == "add"
        assert model.with_structured_output(Weather).invoke("w") == Weather(city="Paris", temp=20)
        assert "".join(str(c.content) for c in model.stream("s")) == "sunny"
        assert asyncio.run(model.ainvoke("a")).tool_calls[0]["name"] == "add"
        streaming = model.model_copy(update={"streaming": True})
        assert streaming.invoke("t").content == "sunny"  # its _generate streams: one call
    recorded = [(c.model, c.input) for c in chaos.trace.of_type(ModelCall)]
    assert [r.output for r in chaos.trace.of_type(ModelResult)] == [
        '-> add({"a": 1, "b": 2})', '{"city": "Paris", "temp": 20}', "sunny",
        '-> add({"a": 1, "b": 2})', "sunny",
    ]  # fmt: skip
    assert recorded[0] == ("gpt-4o-mini", {"messages": 1, "tools": ["add"]})


class Chunky(Scripted):
    """A scripted model that streams its turns in two chunks (tool calls in the last)."""

    def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:  # fmt: skip
        message = next(self.messages)
        assert isinstance(message, AIMessage)
        text = str(message.content)
        calls = [
            {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i,
             "type": "tool_call_chunk"}
            for i, c in enumerate(message.tool_calls)
        ]  # fmt: skip
        yield ChatGenerationChunk(message=AIMessageChunk(content=text[: len(text) // 2]))
        last = AIMessageChunk(content=text[len(text) // 2 :], tool_call_chunks=calls)  # type: ignore[arg-type]
        yield ChatGenerationChunk(message=last)


def test_an_agent_streaming_messages_streams_the_models_turns_and_its_repeats() -> None:
    """create_agent with stream_mode="messages": LangGraph's streaming handler makes the
    model stream (its _stream); each turn is one recorded call; a repeat streams as one
    chunk, with new ids (the agent runs its tool call again)."""
    script = iter([turn("adding", ("add", {"a": 2, "b": 3})), turn("the sum is 5"), turn("x")])
    repeat = {"kind": "repeated_output", "channels": ["model"], "nth": 2}
    with make(repeat) as chaos:
        model = chaos_model(chaos, Chunky(messages=script))
        agent = create_agent(model, [add], name="adder")
        stream = list(agent.stream({"messages": [HumanMessage("add")]}, stream_mode="messages"))
        streamed = [c for c, meta in stream if meta["langgraph_node"] == "model"]
        tool_answers = [c.content for c, meta in stream if meta["langgraph_node"] == "tools"]
    assert "".join(str(c.content) for c in streamed) == "addingaddingthe sum is 5"
    assert len(streamed) >= 5  # the model's own chunks, and the repeat's one
    assert [r.output for r in chaos.trace.of_type(ModelResult)] == [
        'adding\n-> add({"a": 2, "b": 3})', 'adding\n-> add({"a": 2, "b": 3})', "the sum is 5"
    ]  # fmt: skip
    assert model_calls(chaos) == [("adder", "adder")] * 3
    assert tool_answers == ["5", "5"]  # the repeated turn's call ran again, under its new id


async def test_chat_openai_streams_asynchronously_under_chaos() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return sse({"role": "assistant", "content": "as"}, {"content": "ync"})

    with make() as chaos:
        model = chaos_model(chaos, openai_model(handler))
        said = "".join([str(c.content) async for c in model.astream("hi")])
    assert said == "async"
    assert [r.output for r in chaos.trace.of_type(ModelResult)] == ["async"]


def test_a_copy_of_a_model_under_chaos_stays_under_chaos_with_its_updates() -> None:
    """model_copy copies the instance's dict: closures would stay bound to the first copy and
    send its model name; the chaos class calls the copy's own methods."""
    handler = answers()
    with make() as chaos:
        model = chaos_model(chaos, openai_model(handler))
        newer = model.model_copy(update={"model_name": "gpt-4.1"})
        newer.invoke("a")
        model.invoke("b")
        deep = copy.deepcopy(chaos_model(chaos, Scripted(messages=iter([AIMessage("d")]))))
        deep.invoke("c")
    assert [a["model"] for a in handler.asked] == ["gpt-4.1", "gpt-4o-mini"]  # type: ignore[attr-defined]
    assert model_calls(chaos) == [("gpt-4.1", None), ("gpt-4o-mini", None), ("Scripted", None)]


def test_wrapping_a_model_under_chaos_wraps_the_model_it_wraps() -> None:
    script = iter([AIMessage("one"), AIMessage("two")])
    with make() as first, make() as second:
        once = chaos_model(first, Scripted(messages=script))
        twice = chaos_model(first, once)
        elsewhere = chaos_model(second, once, name="triage")
        twice.invoke("a")
        elsewhere.invoke("b")
    assert type(twice) is type(once)
    assert model_calls(first) == [("Scripted", None)]  # recorded once, not twice
    assert model_calls(second) == [("triage", None)]  # only in the run that wrapped it last


def test_an_async_method_that_calls_the_sync_one_is_one_call() -> None:
    class SelfCalling(Scripted):
        async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                             **kwargs: Any) -> ChatResult:  # fmt: skip
            return self._generate(messages, stop=stop, **kwargs)

    with make() as chaos:
        model = chaos_model(chaos, SelfCalling(messages=iter([AIMessage("once")])))
        assert asyncio.run(model.ainvoke("x")).content == "once"
    assert len(chaos.trace.of_type(ModelCall)) == 1


def test_wrong_input_is_refused_with_a_message_naming_it() -> None:
    model = Scripted(messages=iter([]))
    with make() as chaos:
        with pytest.raises(TypeError, match=r"chaos_model\(\) needs a Chaos"):
            chaos_model(object(), model)
        with pytest.raises(TypeError, match="chat_model must be a LangChain chat model.*got 'gpt"):
            chaos_model(chaos, "gpt-4o-mini")
        with pytest.raises(TypeError, match="then bind tools to the model chaos_model returns"):
            chaos_model(chaos, openai_model(answers()).bind_tools([add]))
        with pytest.raises(ChaosConfigError, match=r"chaos_model\(\): name"):
            chaos_model(chaos, model, name="")
        with pytest.raises(ChaosConfigError, match=r"chaos_model\(\): name"):
            chaos_model(chaos, model, name=3)  # type: ignore[arg-type]
        wrapped = chaos_model(chaos, model)
        with pytest.raises(TypeError, match="cannot be pickled"):
            pickle.dumps(wrapped)
        assert pickle.loads(pickle.dumps(model)).messages is not None  # the model itself can


def test_models_with_odd_names_get_bounded_readable_targets() -> None:
    class Blank(Scripted):
        model: str = "   "

    class Huge(Scripted):
        model: str = "m" * 5000

    class NotAString(Scripted):
        model_id: int = 42

    with make() as chaos:
        for cls in (Blank, Huge, NotAString):
            chaos_model(chaos, cls(messages=iter([AIMessage("x")]))).invoke("hi")
    targets = [c.model for c in chaos.trace.of_type(ModelCall)]
    assert targets == ["Blank", "m" * 200, "NotAString"]


def test_a_class_that_cannot_be_subclassed_is_refused_clearly() -> None:
    class Final(Scripted):
        def __init_subclass__(cls, **kwargs: Any) -> None:
            raise TypeError("Final is final")

    with make() as chaos, pytest.raises(TypeError, match="cannot put a .*Final under chaos"):
        chaos_model(chaos, Final(messages=iter([])))


# -- answers in the model's place ------------------------------------------------------------------


def test_a_repeated_answer_is_a_new_message_with_new_tool_call_ids() -> None:
    script = iter([turn("", ("search", {"query": "a"})), turn("done"), turn("unused")])
    with make({"kind": "repeated_output", "channels": ["model"], "nth": 2}) as chaos:
        model = chaos_model(chaos, Scripted(messages=script))
        agent = react_agent(model, [search])
        out = agent.invoke({"messages": [HumanMessage("go")]})
    ai = [m for m in out["messages"] if isinstance(m, AIMessage)]
    assert [m.tool_calls[0]["args"] if m.tool_calls else m.content for m in ai] == [
        {"query": "a"}, {"query": "a"}, "done"
    ]  # fmt: skip
    assert len({m.id for m in ai}) == 3  # the repeat was added, not put in the first one's place
    assert ai[1].tool_calls[0]["id"] != ai[0].tool_calls[0]["id"]
    tool_answers = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(tool_answers) == 2  # each call got its own answer


def test_a_replayed_answer_streams_as_one_chunk_and_a_paraphrase_in_other_words() -> None:
    script = iter([AIMessage("the sum is five"), AIMessage("unused")])
    with make({"kind": "paraphrased_output", "channels": ["model"], "nth": 2}) as chaos:
        model = chaos_model(chaos, Scripted(messages=script))
        model.invoke("a")
        chunks = list(model.stream("b"))
    assert len(chunks) == 1
    said = str(chunks[0].content)
    assert said != "the sum is five" and "sum is five" in said
    assert [r.output for r in chaos.trace.of_type(ModelResult)] == ["the sum is five", said]


# -- native errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "cls", "status"),
    [
        ({"kind": "rate_limit", "retry_after": 7}, ModelRateLimitError, 429),
        ({"kind": "http_error", "status": 503}, ModelAPIError, 503),
        ({"kind": "http_error", "status": 400}, ModelInvalidRequestError, 400),
        ({"kind": "timeout"}, ModelTimeoutError, None),
        ({"kind": "connection_error"}, ModelConnectionError, None),
    ],
    ids=["429", "503", "400", "timeout", "connection"],
)
def test_any_other_chat_model_raises_langchains_provider_neutral_errors(
    fault: dict[str, Any], cls: type[ModelError], status: int | None
) -> None:
    with make({**fault, "channels": ["model"]}) as chaos:
        model = chaos_model(chaos, Scripted(messages=iter([AIMessage("x")])))
        exc = raised(lambda: model.invoke("hi"))
    assert type(exc).__bases__[0] is cls and isinstance(exc, InjectedFault)
    assert exc.status_code == status  # type: ignore[attr-defined]
    assert exc.is_retryable is (status != 400)  # type: ignore[attr-defined]
    if status == 429:
        assert exc.retry_after == 7 and exc.headers["retry-after"] == "7"  # type: ignore[attr-defined]


def test_chat_openai_raises_the_429_its_own_client_raises() -> None:
    headers = {"retry-after": "7", "retry-after-ms": "7000", "x-request-id": "req_1"}
    real = raised(lambda: openai_model(fails(429, OPENAI_429, headers)).invoke("hi"))
    with make({"kind": "rate_limit", "retry_after": 7, "channels": ["model"]}) as chaos:
        model = chaos_model(chaos, openai_model(answers()))
        injected = raised(lambda: model.invoke("hi"))
        with pytest.raises(openai.RateLimitError):
            model.invoke("again")
        with pytest.raises(ModelRateLimitError):
            asyncio.run(model.ainvoke("async"))
    assert (
        type(injected).__bases__[0] is type(real) and type(real).__name__ == "OpenAIRateLimitError"
    )
    assert isinstance(injected, (openai.RateLimitError, ModelRateLimitError, InjectedFault))
    assert (injected.status_code, injected.message, injected.body) == (  # type: ignore[attr-defined]
        real.status_code, real.message, real.body  # type: ignore[attr-defined]
    )  # fmt: skip
    for name in ("retry-after", "retry-after-ms", "content-type"):
        assert injected.response.headers[name] == real.response.headers[name]  # type: ignore[attr-defined]
    assert type(injected.__cause__) is type(real.__cause__) is openai.RateLimitError
    assert injected.is_retryable is real.is_retryable is True  # type: ignore[attr-defined]


def test_chat_openai_timeouts_are_caused_as_the_client_causes_them() -> None:
    def hangs(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("timed out", request=request)

    real = raised(lambda: openai_model(hangs).invoke("hi"))
    with make({"kind": "timeout", "channels": ["model"]}) as chaos:
        injected = raised(lambda: chaos_model(chaos, openai_model(answers())).invoke("hi"))
    assert type(injected).__bases__[0] is type(real) and type(real).__name__ == "OpenAITimeoutError"
    chain = [type(injected.__cause__), type(injected.__cause__.__cause__)]
    assert chain == [type(real.__cause__), type(real.__cause__.__cause__)]
    assert chain == [openai.APITimeoutError, httpx2.ReadTimeout]


def test_chat_anthropic_raises_the_429_and_529_its_own_client_raises() -> None:
    headers = {"retry-after": "7", "request-id": "req_1"}
    real = raised(lambda: anthropic_model(fails(429, ANTHROPIC_429, headers)).invoke("hi"))
    faults = [
        {"kind": "rate_limit", "retry_after": 7, "channels": ["model"], "nth": 1},
        {"kind": "http_error", "status": 529, "channels": ["model"], "nth": 2},
    ]
    with make(*faults) as chaos:
        model = chaos_model(chaos, anthropic_model(fails(500, {})))
        injected = raised(lambda: model.invoke("hi"))
        overloaded = raised(lambda: model.invoke("again"))
    assert type(injected).__bases__[0] is type(real)
    assert type(real).__name__ == "AnthropicRateLimitError"
    assert isinstance(injected, (anthropic.RateLimitError, ModelRateLimitError))
    assert (injected.status_code, injected.message) == (real.status_code, real.message)  # type: ignore[attr-defined]
    assert injected.response.headers["retry-after"] == real.response.headers["retry-after"]  # type: ignore[attr-defined]
    assert type(overloaded).__name__ == "AnthropicOverloadedError"
    assert isinstance(overloaded, (anthropic.OverloadedError, ModelAPIError))


def test_without_the_integrations_conversion_the_errors_are_langchains_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The integration's conversion is private: when a release renames it, an injected error
    is LangChain's provider-neutral one (still retried by is_retryable), and the trace says so."""
    from langchain_openai.chat_models import base

    monkeypatch.delattr(base, "_handle_openai_api_error")
    with make({"kind": "rate_limit", "retry_after": 3, "channels": ["model"]}) as chaos:
        exc = raised(lambda: chaos_model(chaos, openai_model(answers())).invoke("hi"))
    assert type(exc).__bases__[0] is ModelRateLimitError and exc.retry_after == 3  # type: ignore[attr-defined]
    assert any("error conversion was not found" in n for n in chaos.trace.meta["notes"])


def test_a_400_is_not_retried_by_model_retry_as_the_real_one_is_not() -> None:
    """ModelRetryMiddleware's default retry_on asks ModelError.is_retryable: False for a 400,
    True for a 429, for the real error and the injected one alike."""

    def agent(model: Any) -> Any:
        retry = ModelRetryMiddleware(max_retries=3, initial_delay=0, jitter=False)
        return create_agent(model, [], middleware=[retry])

    real = fails(400, OPENAI_400)
    with pytest.raises(openai.BadRequestError):
        agent(openai_model(real)).invoke({"messages": [HumanMessage("hi")]})
    fault = {"kind": "http_error", "status": 400, "channels": ["model"]}
    with make(fault) as chaos, pytest.raises(openai.BadRequestError) as injected:
        agent(chaos_model(chaos, openai_model(answers()))).invoke(
            {"messages": [HumanMessage("hi")]}
        )
    assert real.count == 1 == len(chaos.trace.of_type(ModelCall))  # type: ignore[attr-defined]
    assert injected.value.is_retryable is False  # type: ignore[attr-defined]
    with make({"kind": "rate_limit", "channels": ["model"], "first": 2}) as chaos:
        out = agent(chaos_model(chaos, openai_model(answers("made it")))).invoke(
            {"messages": [HumanMessage("hi")]}
        )
    assert out["messages"][-1].content == "made it" and len(model_calls(chaos)) == 3


# -- chaos_middleware: placement, retries, fallbacks -----------------------------------------------


def test_model_retry_before_chaos_middleware_retries_the_injected_faults() -> None:
    script = iter([turn("done")])
    retry = ModelRetryMiddleware(max_retries=3, initial_delay=0, jitter=False)
    fault = {"kind": "http_error", "status": 503, "channels": ["model"], "first": 2}
    with make(fault) as chaos, warnings.catch_warnings():
        warnings.simplefilter("error", ChaosPlacementWarning)  # none: it is in its place
        out = create_agent(
            Scripted(messages=script), [], middleware=[retry, chaos_middleware(chaos)]
        ).invoke({"messages": [HumanMessage("go")]})
    assert out["messages"][-1].content == "done"
    results = chaos.trace.of_type(ModelResult)
    assert [(r.ok, r.error_type) for r in results] == [
        (False, "ModelAPIError"), (False, "ModelAPIError"), (True, None)
    ]  # fmt: skip


def test_an_agent_with_its_retries_before_chaos_middleware_survives_flaky() -> None:
    """The flaky profile's timeouts, 5xx and dropped connections on every model and tool call:
    the agent's own ModelRetryMiddleware and ToolRetryMiddleware ride them out."""
    no_wait = {"initial_delay": 0, "jitter": False}
    faults: dict[str, int] = defaultdict(int)
    for seed in range(30):
        with Chaos.create(PROFILES.get("flaky"), seed=seed) as chaos:
            script = iter([turn("", ("add", {"a": 2, "b": 3})), turn("five")])
            agent = create_agent(
                Scripted(messages=script),
                [add],
                name="adder",
                middleware=[
                    ModelRetryMiddleware(max_retries=5, **no_wait),  # type: ignore[arg-type]
                    ToolRetryMiddleware(max_retries=5, **no_wait),  # type: ignore[arg-type]
                    chaos_middleware(chaos),
                ],
            )
            out = agent.invoke({"messages": [HumanMessage("add")]})
        assert out["messages"][-1].content == "five", f"seed {seed}"
        assert [m.content for m in out["messages"] if isinstance(m, ToolMessage)] == ["5"]
        for fault in chaos.trace.faults():
            faults[f"{fault.channel}:{fault.kind}"] += 1
    assert faults["model:http_error"] and faults["tool:http_error"] and faults["model:timeout"]


def test_nothing_is_left_patched_after_the_runs() -> None:
    methods = {n: getattr(Scripted, n) for n in ("_generate", "_stream", "_agenerate")}
    base = {n: getattr(BaseChatModel, n) for n in ("_generate", "_stream", "_astream")}
    original = Scripted(messages=iter([AIMessage("a"), AIMessage("b")]))
    with (
        make({"kind": "timeout", "channels": ["model"]}) as chaos,
        pytest.raises(ModelTimeoutError),
    ):
        chaos_model(chaos, original).invoke("x")
    assert {n: getattr(Scripted, n) for n in methods} == methods
    assert {n: getattr(BaseChatModel, n) for n in base} == base
    assert original.invoke("y").content == "a" and type(original) is Scripted
    assert len(chaos.trace.of_type(ModelCall)) == 1  # the original's call was not recorded


def test_chaos_middleware_outside_model_retry_warns_once_and_the_retry_never_sees_a_fault() -> None:
    retry = ModelRetryMiddleware(max_retries=3, initial_delay=0, jitter=False)
    with make({"kind": "http_error", "status": 503, "channels": ["model"], "first": 1}) as chaos:
        agent = create_agent(
            Scripted(messages=iter([turn("done"), turn("again")])),
            [],
            middleware=[chaos_middleware(chaos), retry],
        )
        with pytest.warns(ChaosPlacementWarning) as caught:
            with pytest.raises(ModelAPIError):
                agent.invoke({"messages": [HumanMessage("go")]})
            agent.invoke({"messages": [HumanMessage("go")]})  # no second warning
    (warning,) = caught
    message = str(warning.message)
    assert warning.filename == __file__  # it points at the test's own invoke(), not LangChain
    assert "chaos_middleware sits outside ModelRetryMiddleware" in message
    assert "put chaos_middleware(chaos) last in create_agent(middleware=[...])" in message
    assert message in chaos.trace.meta["notes"]


def test_tool_retry_sees_tool_faults_in_place_and_is_named_when_out_of_place() -> None:
    def run(order: str) -> tuple[Chaos, Any]:
        chaos = make({"kind": "timeout", "tools": ["add"], "first": 2})
        script = iter([turn("", ("add", {"a": 2, "b": 3})), turn("five")])
        retry = ToolRetryMiddleware(max_retries=3, initial_delay=0, jitter=False)
        chain = [retry, chaos_middleware(chaos)]
        agent = create_agent(Scripted(messages=script), [add], middleware=chain[:: int(order)])
        with chaos:
            return chaos, agent.invoke({"messages": [HumanMessage("add")]})

    chaos, out = run("1")
    assert out["messages"][-1].content == "five"
    assert [m.content for m in out["messages"] if isinstance(m, ToolMessage)] == ["5"]
    assert [c.args for c in chaos.trace.of_type(ToolCall)] == [{"a": 2, "b": 3}] * 3
    with (
        pytest.warns(ChaosPlacementWarning, match="outside ToolRetryMiddleware"),
        pytest.raises(TimeoutError),  # the tool node lets it through: the run fails
    ):
        run("-1")


def test_model_fallback_falls_back_when_the_agents_model_fails() -> None:
    primary = Scripted(messages=iter([turn("from primary")]))
    backup = Scripted(messages=iter([turn("from backup")]))
    with make({"kind": "http_error", "status": 500, "channels": ["model"], "first": 1}) as chaos:
        agent = create_agent(
            primary,
            [],
            name="triage",
            middleware=[ModelFallbackMiddleware(backup), chaos_middleware(chaos)],
        )
        out = agent.invoke({"messages": [HumanMessage("go")]})
    assert out["messages"][-1].content == "from backup"
    # one agent, one target: the fallback model's call is the same agent's next call
    assert model_calls(chaos) == [("triage", "triage"), ("triage", "triage")]


def test_model_fallback_to_chat_openai_raises_and_records_openais_errors() -> None:
    faults = [{"kind": "rate_limit", "retry_after": 2, "channels": ["model"], "nth": 1}]
    with make(*faults) as chaos:
        agent = create_agent(
            openai_model(answers("primary")),
            [],
            middleware=[
                ModelFallbackMiddleware(openai_model(answers("backup"), model="gpt-4.1")),
                chaos_middleware(chaos),
            ],
        )
        with pytest.raises(openai.RateLimitError) as caught:
            agent.invoke({"messages": [HumanMessage("go")]})
        out = agent.invoke({"messages": [HumanMessage("go")]})
    assert type(caught.value).__name__ == "OpenAIRateLimitError"
    assert out["messages"][-1].content == "primary"
    results = chaos.trace.of_type(ModelResult)
    assert [r.error_type for r in results] == ["OpenAIRateLimitError"] * 2 + [None]
    # an unnamed top-level agent: each model object its own target, by its name
    assert [c.model for c in chaos.trace.of_type(ModelCall)] == [
        "gpt-4o-mini", "gpt-4.1", "gpt-4o-mini"
    ]  # fmt: skip


def test_the_placement_check_survives_a_handler_chain_with_a_cycle() -> None:
    def chain() -> Callable[[Any], Any]:
        inner: Any = None

        def handler(request: Any) -> Any:  # its closure's `inner` is itself
            return AIMessage("ok") if inner is handler else None

        inner = handler
        handler.__wrapped__ = handler  # type: ignore[attr-defined]
        return handler

    class Request:
        model = None
        messages: list[Any] = []
        tools: list[Any] = []
        runtime = None

    with make() as chaos:
        assert chaos_middleware(chaos).wrap_model_call(Request(), chain()).content == "ok"
    assert [r.output for r in chaos.trace.of_type(ModelResult)] == ["ok"]


async def test_the_async_middleware_records_agents_and_checks_its_place() -> None:
    def agent(chaos: Chaos, chaos_first: bool) -> Any:
        chain = [ModelRetryMiddleware(max_retries=2, initial_delay=0, jitter=False),
                 chaos_middleware(chaos)]  # fmt: skip
        return create_agent(
            Scripted(messages=iter([turn("async done")])),
            [],
            name="helper",
            middleware=chain[::-1] if chaos_first else chain,
        )

    fault = {"kind": "http_error", "status": 502, "channels": ["model"], "first": 1}
    with make(fault) as chaos, warnings.catch_warnings():
        warnings.simplefilter("error", ChaosPlacementWarning)
        out = await agent(chaos, chaos_first=False).ainvoke({"messages": [HumanMessage("go")]})
    assert out["messages"][-1].content == "async done"
    assert model_calls(chaos) == [("helper", "helper")] * 2
    with (
        make(fault) as chaos,
        pytest.warns(ChaosPlacementWarning, match="outside ModelRetryMiddleware"),
        pytest.raises(ModelAPIError),
    ):
        await agent(chaos, chaos_first=True).ainvoke({"messages": [HumanMessage("go")]})


# -- every agent its own target --------------------------------------------------------------------


def test_two_agents_sharing_one_model_get_a_target_each_through_the_middleware() -> None:
    shared = Scripted(
        messages=iter([turn("", ("add", {"a": 1, "b": 1})), turn("two"), turn("first"), turn("x")])
    )
    repeat = {"kind": "repeated_output", "tools": ["writer"], "channels": ["model"], "nth": 2}
    with make(repeat) as chaos:
        middleware = chaos_middleware(chaos)
        one = create_agent(shared, [add], name="adder", middleware=[middleware])
        two = create_agent(shared, [], name="writer", middleware=[middleware])
        one.invoke({"messages": [HumanMessage("add")]})
        first = two.invoke({"messages": [HumanMessage("w")]})["messages"][-1].content
        again = two.invoke({"messages": [HumanMessage("w")]})["messages"][-1].content
    assert model_calls(chaos) == [("adder", "adder")] * 2 + [("writer", "writer")] * 2
    assert [(c.tool, c.agent) for c in chaos.trace.of_type(ToolCall)] == [("add", "adder")]
    # the writer's repeat is its own earlier answer, not the adder's last one ("two")
    assert first == again == "first"


def test_two_agents_with_the_same_name_in_different_places_get_two_targets() -> None:
    shared = Scripted(messages=iter([turn("a says"), turn("b says")]))
    with make() as chaos:
        model = chaos_model(chaos, shared)
        helper = create_agent(model, [], name="helper")
        graph = StateGraph(MessagesState)
        graph.add_node("a", helper)
        graph.add_node("b", helper)
        graph.add_edge(START, "a")
        graph.add_edge("a", "b")
        graph.add_edge("b", END)
        graph.compile().invoke({"messages": [HumanMessage("go")]})
    # the trace tells the two apart: each call names its agent by its target
    assert model_calls(chaos) == [("helper", "helper"), ("helper#2", "helper#2")]
    assert chaos.trace.meta["agents"] == {"helper": "helper", "helper#2": "helper"}


def test_nodes_of_a_custom_graph_sharing_a_model_get_a_target_each() -> None:
    shared = Scripted(messages=iter([AIMessage("plan"), AIMessage("critique"), AIMessage("x")]))
    with make({"kind": "repeated_output", "channels": ["model"], "nth": 2}) as chaos:
        model = chaos_model(chaos, shared)

        def node(state: MessagesState) -> dict[str, Any]:
            return {"messages": [model.invoke(state["messages"])]}

        graph = StateGraph(MessagesState)
        graph.add_node("planner", node)
        graph.add_node("critic", node)
        graph.add_edge(START, "planner")
        graph.add_edge("planner", "critic")
        graph.add_edge("critic", END)
        out = graph.compile().invoke({"messages": [HumanMessage("go")]})
    # the critic's call (the target's second) could be repeated only with its own answer:
    # it has none yet, so the fault does not fire and the critic says its own words
    assert [m.content for m in out["messages"][1:]] == ["plan", "critique"]
    # each node its own target, by its name (nodes may run in parallel threads: a name from
    # the order of their first calls would not be deterministic)
    assert model_calls(chaos) == [("planner", None), ("critic", None)]
    assert chaos.trace.faults() == []


def test_an_agent_that_swallows_model_errors_is_recorded_and_goes_on() -> None:
    with make({"kind": "timeout", "channels": ["model"], "first": 1}) as chaos:
        model = chaos_model(chaos, Scripted(messages=iter([AIMessage("fine")])))

        def careless(state: MessagesState) -> dict[str, Any]:
            try:
                return {"messages": [model.invoke(state["messages"])]}
            except Exception:
                return {"messages": [AIMessage("shrug")]}

        graph = StateGraph(MessagesState)
        graph.add_node("careless", careless)
        graph.add_edge(START, "careless")
        graph.add_edge("careless", END)
        out = graph.compile().invoke({"messages": [HumanMessage("go")]})
    assert out["messages"][-1].content == "shrug"
    assert [(r.ok, r.error_type) for r in chaos.trace.of_type(ModelResult)] == [
        (False, "ModelTimeoutError")
    ]


# -- a langgraph-supervisor team -------------------------------------------------------------------

WORKERS = {"math_expert": "add", "research_expert": "search"}
#: What shows that a model turn is one agent's: its tag, the tools only it calls.
MARKS = {
    "supervisor": ("[supervisor]", "-> transfer_to_"),
    "math_expert": ("[math_expert]", "-> add("),
    "research_expert": ("[research_expert]", "-> search("),
}
_ids = itertools.count(1)


def decide(turns: list[dict[str, Any]]) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """One turn of the team's scripted policy: the role is in the system prompt; the
    supervisor hands off to each worker that has not answered, then answers; a worker calls
    its tool, then reports what the tool said."""
    role = next((t["content"].split()[2].rstrip(".") for t in turns if t["role"] == "system"), "")
    if role == "supervisor":
        answered = {t.get("name") for t in turns if t["role"] == "assistant"}
        for worker in WORKERS:
            if worker not in answered:
                return "", [(f"transfer_to_{worker}", {})]
        return "[supervisor] 2 + 3 = 5; the notes are about chaos.", []
    asked = {cid: name for t in turns for cid, name in t.get("calls", ())}
    last = turns[-1]
    if last["role"] == "tool" and asked.get(last.get("tool_call_id")) == WORKERS[role]:
        return f"[{role}] the tool said: {last['content']}", []
    args = {"a": 2, "b": 3} if role == "math_expert" else {"query": "chaos"}
    return "", [(WORKERS[role], args)]


def lc_turns(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, SystemMessage):
            turns.append({"role": "system", "content": m.text})
        elif isinstance(m, AIMessage):
            calls = [(c["id"], c["name"]) for c in m.tool_calls]
            turns.append({"role": "assistant", "name": m.name, "content": m.text, "calls": calls})
        elif isinstance(m, ToolMessage):
            turns.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.text})
        else:
            turns.append({"role": "user", "content": m.text})
    return turns


class TeamPolicy(BaseChatModel):
    """A scripted chat model playing :func:`decide` (state-driven, so faults change the
    course of a run, never its end)."""

    @property
    def _llm_type(self) -> str:
        return "team-policy"

    def bind_tools(self, tools: Any, **kwargs: Any) -> TeamPolicy:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:  # fmt: skip
        text, calls = decide(lc_turns(messages))
        tool_calls = [{"name": n, "args": a, "id": f"call_{next(_ids)}"} for n, a in calls]
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
        message = AIMessage(content=text, tool_calls=tool_calls, usage_metadata=usage)  # type: ignore[arg-type]
        return ChatResult(generations=[ChatGeneration(message=message)])


def team_api(request: httpx2.Request) -> httpx2.Response:
    """The OpenAI API playing :func:`decide` on the messages it is sent."""
    turns = []
    for m in json.loads(request.content)["messages"]:
        content = m.get("content") or ""
        if isinstance(content, list):
            content = "".join(block.get("text", "") for block in content)
        calls = [(c["id"], c["function"]["name"]) for c in m.get("tool_calls") or ()]
        turns.append({**m, "content": content, "calls": calls})
    text, asked = decide(turns)
    body = completion(text, asked)
    for call in body["choices"][0]["message"].get("tool_calls", ()):
        call["id"] = f"call_{next(_ids)}"
    return httpx2.Response(200, json=body)


def retryable(exc: Exception) -> bool:
    """The team's node retry: anything but a model error that says retrying cannot help."""
    return not isinstance(exc, ModelError) or exc.is_retryable


def team(chaos: Chaos, models: Sequence[Any]) -> Any:
    """The supervisor (built by langgraph-supervisor with create_react_agent) and two workers:
    ``math_expert`` (create_agent with its retry middleware and chaos_middleware last) and
    ``research_expert`` (create_react_agent; its tools wrapped by chaos); every node of the
    team retried by LangGraph's RetryPolicy."""
    supervisor_model, math_model, research_model = models
    no_wait = {"initial_delay": 0, "jitter": False}
    math = create_agent(
        math_model,
        [add],
        name="math_expert",
        system_prompt="You are math_expert.",
        middleware=[
            ModelRetryMiddleware(max_retries=4, **no_wait),  # type: ignore[arg-type]
            ToolRetryMiddleware(max_retries=4, **no_wait),  # type: ignore[arg-type]
            chaos_middleware(chaos),
        ],
    )
    tools = ToolNode(chaos.wrap_tools([search]), handle_tool_errors=True)
    research = react_agent(
        research_model, tools, name="research_expert", prompt="You are research_expert."
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # it calls create_react_agent
        builder = create_supervisor([math, research], model=supervisor_model,
                                    prompt="You are supervisor.")  # fmt: skip
    policy = RetryPolicy(max_attempts=10, initial_interval=0.0, jitter=False, retry_on=retryable)
    return builder.set_node_defaults(retry_policy=policy).compile()


def shared_openai(chaos: Chaos, name: str | None = None) -> list[Any]:
    """ONE ChatOpenAI object for the supervisor and both workers."""
    model = chaos_model(chaos, openai_model(team_api), name=name)
    return [model, model, model]


def own_models(chaos: Chaos) -> list[Any]:
    return [chaos_model(chaos, TeamPolicy()) for _ in range(3)]


def agent_problems(trace: Trace) -> list[str]:
    """What breaks "every agent its own target" in a run: a model target that served several
    agents (or an unnamed one), a model turn of one agent carrying another agent's marks (its
    answer handed to the wrong agent), or a replayed turn that is not the target's own."""
    problems: list[str] = []
    agents_of: dict[str, set[str | None]] = defaultdict(set)
    agent_at: dict[tuple[str, int], str | None] = {}
    for call in trace.of_type(ModelCall):
        agents_of[call.model].add(call.agent)
        agent_at[(call.model, call.index)] = call.agent
    for target, agents in agents_of.items():
        if len(agents) != 1 or None in agents:
            problems.append(f"target {target!r} served {sorted(map(str, agents))}")
    replays = {(f.target, f.index): f.kind for f in trace.faults() if f.channel == "model"
               and f.kind in ("repeated_output", "stale_output", "paraphrased_output")}  # fmt: skip
    said: dict[str, list[str]] = defaultdict(list)
    for result in trace.of_type(ModelResult):
        if not result.ok or not isinstance(result.output, str):
            continue
        agent = agent_at.get((result.model, result.index))
        for other, marks in MARKS.items():
            if other != agent and any(mark in result.output for mark in marks):
                problems.append(f"{agent} was handed {other}'s turn: {result.output!r}")
        kind = replays.get((result.model, result.index))
        earlier = said[result.model]
        if kind in ("repeated_output", "stale_output") and result.output not in earlier:
            problems.append(f"{kind} on {result.model} returned what it never said")
        if kind == "paraphrased_output":
            calls = [ln for ln in result.output.splitlines() if ln.startswith("-> ")]
            if not any(calls == [ln for ln in e.splitlines() if ln.startswith("-> ")]
                       for e in earlier):  # fmt: skip
                problems.append(f"paraphrase on {result.model} of no earlier turn of its own")
        earlier.append(result.output)
    return problems


@pytest.fixture
def refusals() -> Iterator[list[str]]:
    """The real network connections the runs tried (refused, recorded)."""
    refused: list[str] = []

    def refuse(target: str, via: str) -> BaseException:
        refused.append(f"{target} ({via})")
        return ConnectionRefusedError(f"chaos test: no network ({target})")

    guard = NetworkGuard(AllowList(), refuse)
    guard.install()
    try:
        yield refused
    finally:
        guard.uninstall()


def run_team(profile: str, seed: int, models: Callable[[Chaos], Sequence[Any]]) -> Chaos:
    with Chaos.create(PROFILES.get(profile), seed=seed) as chaos:
        app = team(chaos, models(chaos))
        last = app.invoke({"messages": QUESTION}, {"recursion_limit": 400})["messages"][-1]
        assert last.name == "supervisor" and not last.tool_calls  # the team answered
    return chaos


@pytest.mark.parametrize("profile", ["spiral", "flaky"])
@pytest.mark.parametrize("models", [shared_openai, own_models], ids=["one-openai-model", "three"])
def test_a_supervisor_team_under_50_seeds_never_hands_an_agent_anothers_answer(
    profile: str, models: Callable[[Chaos], Sequence[Any]], refusals: list[str]
) -> None:
    fired: dict[str, int] = defaultdict(int)
    for seed in SEEDS:
        chaos = run_team(profile, seed, models)
        assert agent_problems(chaos.trace) == [], f"seed {seed}"
        assert {c.agent for c in chaos.trace.of_type(ModelCall)} == set(MARKS), f"seed {seed}"
        assert {c.model for c in chaos.trace.of_type(ModelCall)} == set(MARKS)
        assert {c.agent for c in chaos.trace.of_type(ToolCall)} == set(WORKERS)
        for fault in chaos.trace.faults():
            fired[f"{fault.channel}:{fault.kind}"] += 1
    assert refusals == []
    if profile == "spiral":  # the stateful faults were there to get it wrong, many times
        assert fired["model:paraphrased_output"] > 50 and fired["model:repeated_output"] > 10
    else:
        assert fired["model:http_error"] > 10 and fired["model:timeout"] > 5
        assert fired["tool:http_error"] > 3


def test_the_old_shared_target_naming_fails_the_checker() -> None:
    """One target for the whole team (what naming the target after the shared model did):
    every run breaks the first rule, and the replays hand agents each other's answers."""
    handed = 0
    for seed in range(12):
        with Chaos.create(PROFILES.get("spiral"), seed=seed) as chaos:
            app = team(chaos, shared_openai(chaos, name="gpt-4o-mini"))
            # a team fed the wrong answers may never finish: that is the bug
            with contextlib.suppress(Exception):
                app.invoke({"messages": QUESTION}, {"recursion_limit": 60})
        problems = agent_problems(chaos.trace)
        assert problems[0].startswith("target 'gpt-4o-mini' served ")
        handed += any("was handed" in p for p in problems)
    assert handed >= 3


def test_a_fault_aimed_at_one_agent_hits_only_that_agent() -> None:
    aimed = {"kind": "rate_limit", "tools": ["research*"], "channels": ["model"], "first": 1}
    with make(aimed) as chaos:
        app = team(chaos, shared_openai(chaos))
        app.invoke({"messages": QUESTION})
    (fault,) = chaos.trace.faults()
    assert (fault.target, fault.kind) == ("research_expert", "rate_limit")
    failed = [r for r in chaos.trace.of_type(ModelResult) if not r.ok]
    assert [(r.model, r.error_type) for r in failed] == [
        ("research_expert", "OpenAIRateLimitError")
    ]


def test_the_trace_reads_as_the_team_ran() -> None:
    with make() as chaos:
        team(chaos, shared_openai(chaos)).invoke({"messages": QUESTION})
    assert model_calls(chaos) == [
        ("supervisor", "supervisor"),
        ("math_expert", "math_expert"), ("math_expert", "math_expert"),
        ("supervisor", "supervisor"),
        ("research_expert", "research_expert"), ("research_expert", "research_expert"),
        ("supervisor", "supervisor"),
    ]  # fmt: skip
    assert [(c.tool, c.agent) for c in chaos.trace.of_type(ToolCall)] == [
        ("add", "math_expert"), ("search", "research_expert")
    ]  # fmt: skip
    assert all(isinstance(f, FaultInjected) for f in chaos.trace.faults())


class _Outs(TypedDict):
    out: Annotated[list[str], operator.add]


def _two_parallel_nodes(model: Any, pause: random.Random) -> Any:
    def node(label: str) -> Callable[[_Outs], dict[str, list[str]]]:
        def run(state: _Outs) -> dict[str, list[str]]:
            for _ in range(pause.randrange(200)):  # the node's own work first: a thread yields
                time.sleep(0)
            try:
                model.invoke("hi")
            except Exception as exc:
                return {"out": [f"{label}:{type(exc).__name__}"]}
            return {"out": [f"{label}:ok"]}

        return run

    graph = StateGraph(_Outs)
    graph.add_node("a", node("a"))
    graph.add_node("b", node("b"))
    graph.add_edge(START, "a")
    graph.add_edge(START, "b")
    graph.add_edge("a", END)
    graph.add_edge("b", END)
    return graph.compile()


def test_parallel_nodes_sharing_a_model_are_named_by_their_node_whatever_runs_first() -> None:
    """Two nodes run in parallel threads and call one model: a fault aimed at one node hits
    that node in every run, however the threads interleave."""
    outcomes = set()
    for trial in range(12):
        fault = {"kind": "http_error", "status": 503, "tools": ["b"], "channels": ["model"]}
        with make(fault) as chaos:
            model = chaos_model(chaos, Scripted(messages=iter([AIMessage("x")] * 4)))
            app = _two_parallel_nodes(model, random.Random(trial))
            outcomes.add(tuple(sorted(app.invoke({"out": []})["out"])))
    assert outcomes == {("a:ok", "b:ModelAPIError")}
