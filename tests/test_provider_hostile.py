"""`chaos.provider` under attack: hostile agents (threads, gather, broad excepts, stragglers,
abandoned streams), hostile scripts and `respond` functions, wrong arguments, other fixtures
patching the same transports, interruptions, every model fault against both real SDKs, replay
and xdist.

Each test states what a user would expect. The ones marked ``xfail(strict=True)`` are defects
this suite found (the reason says which); the others are regression tests that held.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest
import respx

from pytest_agentchaos.errors import (
    BudgetExhausted,
    ChaosConfigError,
    NetworkBlocked,
    ProviderScriptError,
    RunClosed,
)
from pytest_agentchaos.inject import Chaos
from pytest_agentchaos.profiles import Budgets
from pytest_agentchaos.trace import FaultInjected, ModelCall, ModelResult

USER = [{"role": "user", "content": "Where is the Louvre?"}]
REAL_HTTPX2 = (httpx2.HTTPTransport.handle_request, httpx2.AsyncHTTPTransport.handle_async_request)
#: a local port nothing listens on: a request that leaves the run is refused, never sent out
DEAD_BASE = "http://127.0.0.1:9/v1"
ANSWER = "The Louvre is in Paris, on the right bank of the Seine."


def ask(client: openai.OpenAI, **kw: Any) -> Any:
    return client.chat.completions.create(model="gpt-4o-mini", messages=USER, **kw)


def text_of(client: openai.OpenAI, **kw: Any) -> str:
    return ask(client, **kw).choices[0].message.content


def stream_text(client: openai.OpenAI) -> str:
    return "".join(c.choices[0].delta.content or "" for c in ask(client, stream=True) if c.choices)


def events(chaos: Chaos) -> list[str]:
    return [type(e).__name__ for e in chaos.trace.events]


def ends_match(chaos: Chaos) -> None:
    """Every ModelCall has its ModelResult (same target and index), and nothing else."""
    calls = sorted((c.model, c.index) for c in chaos.trace.of_type(ModelCall))
    results = sorted((r.model, r.index) for r in chaos.trace.of_type(ModelResult))
    assert calls == results, (calls, results)


def _httpx2_transports() -> tuple[object, object]:
    return httpx2.HTTPTransport.handle_request, httpx2.AsyncHTTPTransport.handle_async_request


# == hostile agents ===========================================================================


def test_threads_each_get_a_distinct_turn_and_a_consistent_trace(make_chaos):
    chaos = make_chaos()
    endpoint = chaos.provider("openai", script=[f"turn {i}" for i in range(40)])
    client = openai.OpenAI(api_key="sk-test")
    got: list[str] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            got.append(text_of(client))
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sorted(got) == sorted(f"turn {i}" for i in range(40))  # no turn twice, none lost
    assert endpoint.calls == len(endpoint.requests) == 40
    ends_match(chaos)
    steps = [c.step for c in chaos.trace.of_type(ModelCall)]
    assert sorted(steps) == list(range(1, 41))
    # each result says what its call was answered (the turn handed to that attempt)
    assert sorted(r.output for r in chaos.trace.of_type(ModelResult)) == sorted(got)


def test_threads_with_retried_and_replayed_faults_keep_the_trace_whole(make_chaos):
    chaos = make_chaos(
        {"kind": "repeated_output", "probability": 0.3, "channels": ["model"]},
        {"kind": "rate_limit", "retry_after": 1, "probability": 0.2, "channels": ["model"]},
        virtual_sleep=True,
        seed=3,
    )
    endpoint = chaos.provider("openai", script=[f"t{i}" for i in range(200)])
    client = openai.OpenAI(api_key="sk-test", max_retries=6)
    got: list[str] = []

    def worker() -> None:
        for _ in range(5):
            got.append(text_of(client))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 40
    ends_match(chaos)
    assert len(chaos.trace.of_type(ModelCall)) == len(endpoint.requests)
    # the fresh answers are the script's first turns, each once; the rest are replays
    fresh = {f"t{i}" for i in range(endpoint.calls)}
    assert set(got) <= fresh


def test_gather_of_many_async_calls_gets_every_turn_once(make_chaos):
    chaos = make_chaos({"kind": "latency", "seconds": 3, "channels": ["model"]}, virtual_sleep=True)
    chaos.provider("anthropic", script=[f"turn {i}" for i in range(30)])

    async def go() -> list[str]:
        client = anthropic.AsyncAnthropic(api_key="sk-ant-test")
        answers = await asyncio.gather(
            *[
                client.messages.create(model="claude-x", max_tokens=20, messages=USER)
                for _ in range(30)
            ]
        )
        return [a.content[0].text for a in answers]

    started = time.perf_counter()
    got = asyncio.run(go())
    assert time.perf_counter() - started < 5
    assert sorted(got) == sorted(f"turn {i}" for i in range(30))
    assert chaos.clock.now() == pytest.approx(3)  # the latencies overlapped
    ends_match(chaos)


def test_an_agent_that_swallows_every_halt_cannot_use_more_turns(make_chaos):
    chaos = make_chaos(budgets=Budgets(max_model_calls=3))
    endpoint = chaos.provider("openai", script=["ok"] * 10)
    client = openai.OpenAI(api_key="sk-test")
    got = []
    for _ in range(8):
        try:
            got.append(text_of(client))
        except BaseException as exc:  # noqa: BLE001 - the hostile agent under test
            got.append(type(exc).__name__)
    assert got == ["ok"] * 3 + ["BudgetExhausted"] * 5
    assert endpoint.calls == 3
    assert len(chaos.trace.of_type(ModelCall)) == 3
    ends_match(chaos)


def test_a_client_built_before_the_run_is_answered_by_it(make_chaos):
    client = openai.OpenAI(api_key="sk-test")  # module-level in a real agent
    async_client = openai.AsyncOpenAI(api_key="sk-test")
    chaos = make_chaos()
    chaos.provider("openai", script=["sync", "async"])
    assert text_of(client) == "sync"

    async def go() -> str:
        r = await async_client.chat.completions.create(model="m", messages=USER)
        return r.choices[0].message.content

    assert asyncio.run(go()) == "async"


def test_a_client_used_after_its_run_is_not_answered_by_the_dead_run(make_chaos):
    chaos = make_chaos()
    endpoint = chaos.provider("openai", script=["one", "two"], base_url=DEAD_BASE)
    client = openai.OpenAI(api_key="sk-test", base_url=DEAD_BASE, max_retries=0, timeout=5)
    assert text_of(client) == "one"
    chaos.session.end()
    chaos.close()
    with pytest.raises(openai.APIConnectionError):  # the real transport: nothing listens
        text_of(client)
    assert endpoint.calls == 1 and len(endpoint.requests) == 1
    assert _httpx2_transports() == REAL_HTTPX2


@pytest.mark.xfail(
    strict=True,
    reason="a straggler thread of an ended run is answered by the next run's endpoint and "
    "uses up its script turns (httpx2 patches are class-wide, not bound to their run)",
)
def test_a_straggler_of_an_ended_run_does_not_eat_the_next_runs_script(make_chaos):
    first = make_chaos()
    first.provider("openai", script=["first run"])
    client = openai.OpenAI(api_key="sk-test", max_retries=0)  # the agent's module client
    go, got = threading.Event(), []

    def straggler() -> None:  # started in the first run, still running after it
        go.wait(10)
        try:
            got.append(text_of(client))
        except BaseException as exc:  # noqa: BLE001
            got.append(type(exc).__name__)

    thread = threading.Thread(target=straggler, daemon=True)
    thread.start()
    first.session.end()
    first.close()
    second = make_chaos()
    endpoint = second.provider("openai", script=["second run"])
    go.set()
    thread.join(10)
    assert endpoint.calls == 0, f"the first run's straggler was answered {got}"


def test_streams_abandoned_closed_early_or_read_twice_do_not_upset_the_next_call(make_chaos):
    chaos = make_chaos()
    chaos.provider("openai", script=[ANSWER, ANSWER, ANSWER, "next"])
    client = openai.OpenAI(api_key="sk-test")
    abandoned = iter(ask(client, stream=True))
    next(abandoned)
    next(abandoned)
    del abandoned  # never closed
    gc.collect()
    with ask(client, stream=True) as closed_early:
        for i, _ in enumerate(closed_early):
            if i == 2:
                break
    twice = ask(client, stream=True)
    assert len(list(twice)) > 2
    assert list(twice) == []  # consumed, as the SDK says of a real stream
    assert text_of(client) == "next"
    ends_match(chaos)


def test_an_abandoned_async_stream_does_not_upset_the_next_call(make_chaos):
    chaos = make_chaos()
    chaos.provider("anthropic", script=[ANSWER, "next"])

    async def go() -> str:
        client = anthropic.AsyncAnthropic(api_key="k")
        stream = await client.messages.create(model="c", max_tokens=50, messages=USER, stream=True)
        async for _ in stream:
            break  # never closed
        answer = await client.messages.create(model="c", max_tokens=50, messages=USER)
        return answer.content[0].text

    assert asyncio.run(go()) == "next"


def test_a_run_that_ends_while_a_stream_is_read_still_delivers_what_was_sent(make_chaos):
    chaos = make_chaos()
    chaos.provider("openai", script=[ANSWER])
    stream = iter(ask(openai.OpenAI(api_key="sk-test"), stream=True))
    first = next(stream).choices[0].delta.content or ""
    chaos.session.end()
    chaos.close()
    rest = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert first + rest == ANSWER
    assert _httpx2_transports() == REAL_HTTPX2


# == hostile scripts and respond functions ====================================================


def test_a_huge_answer_goes_through_whole_and_the_trace_stays_bounded(make_chaos):
    chaos = make_chaos(max_value=2000)
    huge = "x" * (20 * 1024 * 1024)
    chaos.provider("openai", script=[{"content": huge, "tool_calls": [
        {"name": "lookup", "arguments": {"blob": "y" * (5 * 1024 * 1024)}}]}])  # fmt: skip
    started = time.perf_counter()
    message = ask(openai.OpenAI(api_key="sk-test"), tools=[_tool("lookup")]).choices[0].message
    assert time.perf_counter() - started < 30
    assert message.content == huge
    assert len(json.loads(message.tool_calls[0].function.arguments)["blob"]) == 5 * 1024 * 1024
    assert len(chaos.trace.to_json()) < 20_000


class _Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("repr boom")

    __str__ = __repr__


def _circular() -> dict[str, Any]:
    d: dict[str, Any] = {}
    d["self"] = d
    return d


@pytest.mark.parametrize(
    ("turn", "message"),
    [
        (_Unprintable(), r"script\[0\]: a turn is a str or a dict"),
        ({"content": _Unprintable()}, r"script\[0\]: content: must be a str"),
        ({"tool_calls": [{"name": "t", "arguments": {"a": _Unprintable()}}]}, "not JSON"),
        ({"tool_calls": [{"name": "t", "arguments": {"a": {1, 2}}}]}, "not JSON"),
        ({"tool_calls": [{"name": "t", "arguments": {"a": b"raw"}}]}, "not JSON"),
        ({"tool_calls": [{"name": "t", "arguments": {"a": float("nan")}}]}, "not JSON"),
        ({"tool_calls": [{"name": "t", "arguments": _circular()}]}, "Circular"),
        ({"content": [_circular()]}, "Circular"),
        ({"content": "lone \ud800 surrogate"}, "surrogate"),
        ({"tool_calls": [{"name": "", "arguments": {}}]}, "name"),
        ({"content": "x", "usage": {"input_tokens": -1, "output_tokens": 1}}, "input_tokens"),
    ],
    ids=lambda v: type(v).__name__,
)
def test_a_script_turn_that_cannot_go_on_the_wire_is_one_clear_error(make_chaos, turn, message):
    chaos = make_chaos()
    with pytest.raises(ChaosConfigError, match=message) as caught:
        chaos.provider("openai", script=[turn])
    assert "\n" not in str(caught.value)


def test_deeply_nested_arguments_are_one_clear_error(make_chaos):
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(50_000):
        node["a"] = {}
        node = node["a"]
    chaos = make_chaos()
    with pytest.raises(ChaosConfigError, match=r"script\[0\]"):
        chaos.provider("openai", script=[{"tool_calls": [{"name": "t", "arguments": deep}]}])


@pytest.mark.parametrize(
    "value",
    [None, 5, (x for x in ["a"]), b"bytes", ["a"], {"content": None}, {"contents": "typo"}],
    ids=["None", "int", "generator", "bytes", "list", "empty", "typo"],
)
def test_a_respond_that_returns_no_turn_stops_the_run_naming_the_call(make_chaos, value):
    chaos = make_chaos()
    endpoint = chaos.provider("openai", respond=lambda request: value)
    with pytest.raises(ProviderScriptError, match=r"respond\(\) on call 1: "):
        ask(openai.OpenAI(api_key="sk-test"))
    assert chaos.session.halted is not None
    assert len(endpoint.requests) == 1  # the SDK did not retry a hard halt


def test_an_async_respond_is_awaited_or_refused_up_front(make_chaos):
    import warnings

    async def respond(request: Any) -> str:
        return "from a coroutine"

    chaos = make_chaos()
    try:
        chaos.provider("openai", respond=respond)
    except (TypeError, ValueError) as exc:  # refused where it is written: fine
        assert "async" in str(exc)
        return

    async def go() -> str:
        client = openai.AsyncOpenAI(api_key="sk-test", max_retries=0)
        r = await client.chat.completions.create(model="m", messages=USER)
        return r.choices[0].message.content

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            got = asyncio.run(go())
        except ProviderScriptError as exc:
            got = str(exc)
            exc.__context__ = exc.__cause__ = None  # the frames that hold the coroutine
            exc.with_traceback(None)
        gc.collect()
    assert got == "from a coroutine"
    assert not [w for w in seen if "never awaited" in str(w.message)]


def test_a_respond_that_raises_a_keyboard_interrupt_lets_it_through(make_chaos):
    chaos = make_chaos()

    def respond(request: Any) -> str:
        raise KeyboardInterrupt

    endpoint = chaos.provider("openai", respond=respond)
    with pytest.raises(KeyboardInterrupt):
        ask(openai.OpenAI(api_key="sk-test"))
    assert len(endpoint.requests) == 1  # not retried, not wrapped


def _raise_kbi(request: Any) -> str:
    raise KeyboardInterrupt


def _raise_exit(request: Any) -> str:
    raise SystemExit(3)


@pytest.mark.parametrize(
    "how",
    ["respond KeyboardInterrupt", "respond SystemExit", "respond raises", "script ran out",
     "max_seconds in latency", "cancelled in latency"],
)  # fmt: skip
def test_every_provider_call_has_its_end_in_the_trace(make_chaos, how):
    faults: list[dict[str, Any]] = []
    kw: dict[str, Any] = {}
    if "latency" in how:
        faults = [{"kind": "latency", "seconds": 50, "channels": ["model"]}]
        kw = {"virtual_sleep": True}
    if how == "max_seconds in latency":
        kw["budgets"] = Budgets(max_seconds=10)
    chaos = make_chaos(*faults, **kw)
    respond: Callable[[Any], Any] | None = {
        "respond KeyboardInterrupt": _raise_kbi,
        "respond SystemExit": _raise_exit,
        "respond raises": lambda request: 1 / 0,
    }.get(how)
    if respond is not None:
        chaos.provider("openai", respond=respond)
    else:
        chaos.provider("openai", script=[] if how == "script ran out" else ["x"])
    if how == "cancelled in latency":

        async def go() -> None:
            client = openai.AsyncOpenAI(api_key="sk-test", max_retries=0)
            await asyncio.wait_for(client.chat.completions.create(model="m", messages=USER), 5)

        with pytest.raises(TimeoutError):
            asyncio.run(go())
    else:
        with pytest.raises(BaseException):  # noqa: B017, PT011 - each case its own
            ask(openai.OpenAI(api_key="sk-test", max_retries=0))
    assert chaos.trace.of_type(ModelCall)
    ends_match(chaos)


def test_a_respond_that_calls_the_sdk_itself_is_answered_in_order(make_chaos):
    chaos = make_chaos()
    client = openai.OpenAI(api_key="sk-test", max_retries=0)
    depth = [0]

    def respond(request: Any) -> str:
        depth[0] += 1
        if depth[0] == 1:
            return "outer saw " + text_of(client)  # a judge model inside the fake model
        return "inner"

    chaos.provider("openai", respond=respond)
    assert text_of(client) == "outer saw inner"
    ends_match(chaos)
    assert [r.output for r in chaos.trace.of_type(ModelResult)] == ["inner", "outer saw inner"]


WEIRD = "你好 🌍 \x00 nul \u2028 sep \r\n\r\ndata: [DONE]\n\nevent: error\ndata: {}\n\n end"
WEIRD_ARGS = {"q": "é\x00🌍", "data: [DONE]": "\n\n"}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
def test_unicode_nul_and_sse_lookalikes_survive_the_wire(make_chaos, api, stream):
    chaos = make_chaos()
    turn = {"content": WEIRD, "tool_calls": [{"name": "look_up", "arguments": WEIRD_ARGS}]}
    chaos.provider("anthropic" if api == "anthropic" else "openai", script=[turn])
    text, args = _text_and_args(api, stream)
    assert text == WEIRD
    assert json.loads(args) == WEIRD_ARGS if isinstance(args, str) else args == WEIRD_ARGS
    ends_match(chaos)


def _text_and_args(api: str, stream: bool) -> tuple[str, Any]:
    if api == "chat":
        client = openai.OpenAI(api_key="k")
        if stream:
            with client.chat.completions.stream(
                model="m", messages=USER, tools=[_tool("look_up")]
            ) as s:
                message = s.get_final_completion().choices[0].message
        else:
            message = ask(client, tools=[_tool("look_up")]).choices[0].message
        return message.content, message.tool_calls[0].function.arguments
    if api == "responses":
        client = openai.OpenAI(api_key="k")
        tool = {"type": "function", "name": "look_up", "parameters": {"type": "object"}}
        if stream:
            with client.responses.stream(model="m", input="hi", tools=[tool]) as s:
                response = s.get_final_response()
        else:
            response = client.responses.create(model="m", input="hi", tools=[tool])
        call = next(o for o in response.output if o.type == "function_call")
        return response.output_text, call.arguments
    client_a = anthropic.Anthropic(api_key="k")
    tool_a = {"name": "look_up", "input_schema": {"type": "object"}}
    if stream:
        with client_a.messages.stream(model="c", max_tokens=50, messages=USER, tools=[tool_a]) as s:
            message_a = s.get_final_message()
    else:
        message_a = client_a.messages.create(
            model="c", max_tokens=50, messages=USER, tools=[tool_a]
        )
    text = "".join(b.text for b in message_a.content if b.type == "text")
    (use,) = [b for b in message_a.content if b.type == "tool_use"]
    return text, use.input


def test_a_tool_name_the_api_refuses_is_refused_as_the_api_would(make_chaos):
    chaos = make_chaos()
    chaos.provider("openai", script=["x"])
    with pytest.raises(ProviderScriptError, match="tools.0.*function.name"):
        ask(openai.OpenAI(api_key="k"), tools=[_tool("查找_🔍")])


def test_an_empty_script_stops_at_the_first_call(make_chaos):
    chaos = make_chaos()
    endpoint = chaos.provider("openai", script=[])
    with pytest.raises(ProviderScriptError, match=r"the script has 0 turn\(s\)"):
        ask(openai.OpenAI(api_key="k"))
    assert endpoint.calls == 1 and chaos.session.halted is not None


# == wrong user input ==========================================================================


@pytest.mark.parametrize(
    ("kwargs", "shown"),
    [
        ({"provider": "OpenAI"}, "'OpenAI'"),
        ({"provider": " openai"}, "' openai'"),
        ({"provider": ""}, "''"),
        ({"provider": "openai", "base_url": ""}, "chaos.provider(): base_url: "),
        ({"provider": "openai", "base_url": "llm.internal/v1"}, "chaos.provider(): base_url: "),
        ({"provider": "openai", "base_url": "http:///v1"}, "chaos.provider(): base_url: "),
        ({"provider": "openai", "base_url": b"http://x/v1"}, "chaos.provider(): base_url: "),
        ({"provider": "openai", "name": 5}, "chaos.provider(): name: "),
        ({"provider": "openai", "name": "  "}, "chaos.provider(): name: "),
    ],
    ids=lambda v: repr(v) if isinstance(v, dict) else "",
)
def test_a_bad_argument_is_one_error_naming_it(make_chaos, kwargs, shown):
    chaos = make_chaos()
    with pytest.raises((TypeError, ValueError)) as caught:
        chaos.provider(script=["x"], **kwargs)
    assert shown in str(caught.value)
    assert "\n" not in str(caught.value)
    assert _httpx2_transports() == REAL_HTTPX2 or chaos._httpx2_routed


def test_an_unknown_provider_is_named_as_chaos_provider_s_argument(make_chaos):
    chaos = make_chaos()
    with pytest.raises(ValueError, match=r"^chaos\.provider\(\): provider: .*'OpenAI'"):
        chaos.provider("OpenAI", script=["x"])


@pytest.mark.parametrize(
    "base_url", ["http://llm.internal/v1?api-version=1", "http://llm.internal/v1#x"]
)
def test_a_base_url_with_a_query_or_fragment_is_refused(make_chaos, base_url):
    chaos = make_chaos()
    with pytest.raises(ValueError, match="base_url"):
        chaos.provider("openai", script=["x"], base_url=base_url)


def test_a_base_url_with_an_impossible_port_is_refused(make_chaos):
    chaos = make_chaos()
    with pytest.raises(ValueError, match="base_url"):
        chaos.provider("openai", script=["x"], base_url="http://llm.internal:99999/v1")


@pytest.mark.parametrize(
    ("declared", "used"),
    [
        ("http://llm.internal/v1/", "http://llm.internal/v1"),
        ("http://llm.internal/v1", "http://llm.internal/v1/"),
        ("http://LLM.Internal:80/v1", "http://llm.internal/v1"),
        ("https://llm.internal:443/v1", "https://llm.internal/v1"),
        ("http://[::1]:8000/v1", "http://[::1]:8000/v1"),
    ],
)
def test_equivalent_base_urls_are_served(make_chaos, declared, used):
    chaos = make_chaos()
    chaos.provider("openai", script=["served"], base_url=declared)
    assert text_of(openai.OpenAI(api_key="k", base_url=used)) == "served"


def test_a_base_url_serves_its_path_only_not_a_longer_one(make_chaos):
    chaos = make_chaos()
    chaos.provider("openai", script=["x"], base_url="http://llm.internal/v1")
    with pytest.raises(NetworkBlocked, match="/v10/chat/completions"):
        ask(openai.OpenAI(api_key="k", base_url="http://llm.internal/v10", max_retries=0))


def test_the_sdk_configured_by_environment_reaches_the_endpoint(make_chaos, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://llm.internal:8000/v1")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://claude.internal:8001")
    chaos = make_chaos()
    chaos.provider("openai", script=["from env"], base_url="http://llm.internal:8000/v1")
    chaos.provider("anthropic", script=["claude env"], base_url="http://claude.internal:8001/v1")
    assert text_of(openai.OpenAI(api_key="k")) == "from env"
    message = anthropic.Anthropic(api_key="k").messages.create(
        model="c", max_tokens=5, messages=USER
    )
    assert message.content[0].text == "claude env"


def test_a_second_endpoint_on_the_same_url_is_refused_or_answers(make_chaos):
    chaos = make_chaos()
    first = chaos.provider("openai", script=["first"], name="a")
    try:
        second = chaos.provider("openai", script=["second"], name="b")
    except (TypeError, ValueError):
        return  # refused where it is written: fine
    client = openai.OpenAI(api_key="k", max_retries=0)
    got = []
    for _ in range(2):
        try:
            got.append(text_of(client))
        except ProviderScriptError:
            got.append("halted")
    assert second.calls > 0, (got, first.calls, second.calls)


def test_an_endpoint_answers_before_a_route_on_the_same_url(make_chaos):
    """The documented precedence (ChaosRouter.endpoints answer before any route)."""
    chaos = make_chaos()
    route = chaos.http.post("https://api.openai.com/v1/chat/completions").respond(json={})
    chaos.provider("openai", script=["endpoint"])
    assert text_of(openai.OpenAI(api_key="k")) == "endpoint"
    assert route.call_count == 0


def test_other_paths_of_the_provider_host_go_to_routes_or_are_refused(make_chaos):
    chaos = make_chaos()
    chaos.provider("openai", script=["x"])
    chaos.http.get("https://api.openai.com/v1/models").respond(
        json={"object": "list", "data": [{"id": "gpt", "object": "model", "created": 0,
                                          "owned_by": "me"}]}
    )  # fmt: skip
    client = openai.OpenAI(api_key="k", max_retries=0)
    assert [m.id for m in client.models.list()] == ["gpt"]
    with pytest.raises(NetworkBlocked, match="GET https://api.openai.com/v1/files"):
        client.files.list()


def test_two_live_runs_refuse_an_undeclared_request_cleanly(make_chaos):
    outer, inner = make_chaos(), make_chaos()
    outer.provider("openai", script=["outer"])
    inner.provider("anthropic", script=["inner"])
    try:
        with pytest.raises(NetworkBlocked):
            httpx2.get("https://nowhere.test/")
    finally:  # last in, first out: each run's undo finds its own patch
        inner.close()
        outer.close()


def test_chaos_provider_on_a_closed_run_is_refused_and_patches_nothing(make_chaos):
    chaos = make_chaos()
    chaos.session.end()
    chaos.close()
    try:
        with pytest.raises((RunClosed, RuntimeError, ValueError)):
            chaos.provider("openai", script=["x"])
        assert _httpx2_transports() == REAL_HTTPX2
    finally:
        chaos.close()  # what it installed (its cleanups ran late)
        assert _httpx2_transports() == REAL_HTTPX2


def test_a_client_on_its_own_mock_transport_is_left_alone_beside_the_endpoint(make_chaos):
    chaos = make_chaos()
    chaos.provider("openai", script=["endpoint"])
    body = {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "mine"}}
    ]}  # fmt: skip
    mock = httpx2.MockTransport(lambda request: httpx2.Response(200, json=body))
    own = openai.OpenAI(api_key="k", http_client=httpx2.Client(transport=mock))
    assert text_of(own) == "mine"
    assert text_of(openai.OpenAI(api_key="k")) == "endpoint"
    assert len(chaos.trace.of_type(ModelCall)) == 1


def test_the_users_own_respx_router_answers_what_the_run_does_not(make_chaos):
    chaos = make_chaos()
    chaos.provider("openai", script=["endpoint"])
    with respx.mock(assert_all_called=True) as mine:
        route = mine.get("https://tools.test/weather").respond(json={"t": 20})
        assert text_of(openai.OpenAI(api_key="k")) == "endpoint"
        assert httpx2.get("https://tools.test/weather").json() == {"t": 20}
        assert httpx.get("https://tools.test/weather").json() == {"t": 20}
    assert route.call_count == 2


# == other fixtures patching the same functions (under the plugin) ============================

PATCHING_SUITE = """
import httpx2, openai, pytest, respx

ORIGINAL = (httpx2.HTTPTransport.handle_request, httpx2.AsyncHTTPTransport.handle_async_request)
USER = [{"role": "user", "content": "hi"}]
URL = "https://api.openai.com/v1/chat/completions"


@pytest.fixture
def spy(monkeypatch):
    seen = []
    real = httpx2.HTTPTransport.handle_request
    def spying(self, request):
        seen.append(str(request.url))
        return real(self, request)
    monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", spying)
    return seen


def ask():
    client = openai.OpenAI(api_key="k")
    return client.chat.completions.create(model="m", messages=USER).choices[0].message.content


@pytest.mark.chaos
def test_spy_set_after_the_run_sees_the_request(chaos, spy):
    chaos.provider("openai", script=["x"])
    assert ask() == "x"
    assert spy == [URL]


@pytest.mark.chaos
def test_spy_set_in_the_body(chaos, monkeypatch):
    chaos.provider("openai", script=["x"])
    real = httpx2.HTTPTransport.handle_request
    seen = []
    monkeypatch.setattr(
        httpx2.HTTPTransport, "handle_request", lambda s, r: (seen.append(1), real(s, r))[1]
    )
    assert ask() == "x"
    assert seen == [1]


@respx.mock
@pytest.mark.chaos
def test_respx_decorator_beside_the_run(chaos):
    respx.get("https://tools.test/weather").respond(json={"t": 20})
    chaos.provider("openai", script=["x"])
    assert ask() == "x"
    assert httpx2.get("https://tools.test/weather").json() == {"t": 20}


@pytest.mark.chaos
def test_spy_set_before_the_run(spy, chaos):
    chaos.provider("openai", script=["x"])
    assert ask() == "x"


def test_nothing_is_left_patched():
    assert (
        httpx2.HTTPTransport.handle_request, httpx2.AsyncHTTPTransport.handle_async_request
    ) == ORIGINAL
"""


def test_other_fixtures_patching_the_transports_work_and_nothing_is_left(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_patching=PATCHING_SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=5)


# == bad calls under the plugin: the user's line, no plugin frames ============================

BAD_CALLS = {
    "provider": 'chaos.provider("OpenAI", script=["x"])',
    "script": 'chaos.provider("openai", script=[{"contents": "x"}])',
    "base_url": 'chaos.provider("openai", script=["x"], base_url="ftp://x")',
    "respond": 'chaos.provider("openai", respond="not callable")',
    "both": 'chaos.provider("openai", script=["x"], respond=lambda r: "x")',
}
_FRAMES = "frames of providers.registry / the script's list comprehension and turns.parse_turn"


@pytest.mark.parametrize(
    "what",
    [
        "provider",
        "script",
        "base_url",
        "respond",
        "both",
    ],
)
def test_a_bad_call_fails_at_the_users_line_without_plugin_frames(
    pytester: pytest.Pytester, what: str
) -> None:
    import re

    pytester.makepyfile(
        test_bad=f"""
import pytest

@pytest.mark.chaos
def test_it(chaos):
    {BAD_CALLS[what]}
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--assert=plain")
    result.assert_outcomes(failed=1)
    output = "\n".join(result.outlines)
    assert "INTERNALERROR" not in output
    frames = [line for line in result.outlines if re.search(r"pytest_agentchaos[/\\]\S+\.py", line)]
    assert not frames, "\n".join(frames)
    assert "test_bad.py:5: " in output  # the user's own line


# == faults on the wire: every kind, both SDKs, streamed or not, sync and async ================

WIRE_ONLY = ("stream_cut", "no_finish_reason", "slow_first_token", "bad_tool_arguments",
             "empty_completion")  # fmt: skip
FAULTS = [
    {"kind": "timeout", "seconds": 5},
    {"kind": "http_error", "status": 400},
    {"kind": "http_error", "status": 401},
    {"kind": "http_error", "status": 404},
    {"kind": "http_error", "status": 500},
    {"kind": "http_error", "status": 529},
    {"kind": "rate_limit", "retry_after": 0},
    {"kind": "rate_limit", "retry_after": 0.3},
    {"kind": "rate_limit", "retry_after": 1e6},
    {"kind": "connection_error"},
    {"kind": "latency", "seconds": 3},
    {"kind": "repeated_output"},
    {"kind": "stale_output"},
    {"kind": "paraphrased_output"},
    {"kind": "garbled_output", "mode": "truncate"},
    {"kind": "garbled_output", "mode": "non_json"},
    {"kind": "stream_cut", "mode": "reset"},
    {"kind": "stream_cut", "mode": "end"},
    {"kind": "no_finish_reason"},
    {"kind": "slow_first_token", "seconds": 40},
    {"kind": "bad_tool_arguments", "mode": "truncated"},
    {"kind": "bad_tool_arguments", "mode": "not_json"},
    {"kind": "empty_completion"},
]
TURN = {
    "content": "The answer is forty two, my friend",
    "tool_calls": [{"name": "lookup", "arguments": {"q": "x"}}],
}
TOOLS = {
    "chat": [{"type": "function", "function": {
        "name": "lookup",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}],
    "responses": [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}],
    "anthropic": [{"name": "lookup", "input_schema": {"type": "object"}}],
}  # fmt: skip


def _tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


def _create(client: Any, api: str, stream: bool) -> Any:
    if api == "chat":
        return client.chat.completions.create(
            model="m", messages=USER, tools=TOOLS[api], stream=stream
        )
    if api == "responses":
        return client.responses.create(model="m", input="hi", tools=TOOLS[api], stream=stream)
    return client.messages.create(
        model="c", max_tokens=50, messages=USER, tools=TOOLS[api], stream=stream
    )


def _sync_calls(api: str, stream: bool) -> None:
    cls = anthropic.Anthropic if api == "anthropic" else openai.OpenAI
    client = cls(api_key="k")
    for _ in range(2):
        answer = _create(client, api, stream)
        if stream:
            list(answer)


def _async_calls(api: str, stream: bool) -> None:
    cls = anthropic.AsyncAnthropic if api == "anthropic" else openai.AsyncOpenAI

    async def go() -> None:
        client = cls(api_key="k")
        for _ in range(2):
            answer = await _create(client, api, stream)
            if stream:
                [e async for e in answer]

    asyncio.run(go())


@pytest.mark.parametrize("how", ["sync", "async"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: "-".join(str(v) for v in f.values()))
def test_every_model_fault_reaches_the_sdk_as_its_own_error_on_virtual_time(
    make_chaos, fault, api, stream, how
):
    spec = fault if fault["kind"] in WIRE_ONLY else {**fault, "channels": ["model"]}
    chaos = make_chaos(spec, virtual_sleep=True)
    endpoint = chaos.provider("anthropic" if api == "anthropic" else "openai", script=[TURN] * 6)
    started = time.perf_counter()
    try:
        (_async_calls if how == "async" else _sync_calls)(api, stream)
    except BaseException as exc:  # noqa: BLE001 - its type is the point
        module = type(exc).__module__.split(".")[0]
        if (api, stream, fault.get("mode")) == ("anthropic", True, "reset"):
            # anthropic 2.x does not wrap an error raised while a stream is read: the
            # httpx2 error (not httpx's, not ours) is what the real SDK raises
            assert isinstance(exc, httpx2.RemoteProtocolError)
        else:
            assert module == ("anthropic" if api == "anthropic" else "openai"), repr(exc)
    assert time.perf_counter() - started < 3  # retries waited on virtual time
    calls = chaos.trace.of_type(ModelCall)
    assert len(calls) == len(endpoint.requests)  # each wire attempt is one model call
    ends_match(chaos)
    for result in chaos.trace.of_type(ModelResult):
        if not result.ok:
            assert result.error_type


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("status", "attempts"),
    [(400, 1), (401, 1), (403, 1), (404, 1), (422, 1), (408, 3), (409, 3), (429, 3), (500, 3),
     (503, 3)],
)  # fmt: skip
def test_the_sdk_retries_exactly_the_statuses_it_retries(make_chaos, provider, status, attempts):
    chaos = make_chaos({"kind": "http_error", "status": status, "channels": ["model"]},
                       virtual_sleep=True)  # fmt: skip
    endpoint = chaos.provider(provider, script=["never"])
    error = anthropic.APIStatusError if provider == "anthropic" else openai.APIStatusError
    with pytest.raises(error) as caught:
        if provider == "anthropic":
            anthropic.Anthropic(api_key="k").messages.create(model="c", max_tokens=5, messages=USER)
        else:
            ask(openai.OpenAI(api_key="k"))
    assert caught.value.status_code == status
    assert len(endpoint.requests) == attempts and endpoint.calls == 0
    assert [r.ok for r in chaos.trace.of_type(ModelResult)] == [False] * attempts


def test_each_retry_is_its_own_call_in_the_trace_on_virtual_time(make_chaos):
    chaos = make_chaos(
        {"kind": "timeout", "seconds": 7, "first": 2, "channels": ["model"]}, virtual_sleep=True
    )
    endpoint = chaos.provider("anthropic", script=["at last"])
    started = time.perf_counter()
    message = anthropic.Anthropic(api_key="k").messages.create(
        model="claude-x", max_tokens=5, messages=USER
    )
    assert time.perf_counter() - started < 2
    assert message.content[0].text == "at last"
    assert [c.index for c in chaos.trace.of_type(ModelCall)] == [1, 2, 3]
    results = chaos.trace.of_type(ModelResult)
    assert [(r.ok, r.error_type) for r in results] == [
        (False, "ReadTimeout"), (False, "ReadTimeout"), (True, None)
    ]  # fmt: skip
    assert chaos.clock.now() >= 14 and len(endpoint.requests) == 3


@pytest.mark.parametrize("kind", ["latency", "slow_first_token", "timeout"])
def test_a_wait_longer_than_the_clients_timeout_is_its_timeout(make_chaos, kind):
    chaos = make_chaos({"kind": kind, "seconds": 50, "channels": ["model"]}, virtual_sleep=True)
    chaos.provider("openai", script=["late"])
    client = openai.OpenAI(api_key="k", max_retries=0, timeout=5)
    with pytest.raises(openai.APITimeoutError):
        answer = ask(client, stream=kind == "slow_first_token")
        if kind == "slow_first_token":
            list(answer)
    assert chaos.clock.now() == pytest.approx(5)  # the client gave up after its 5 s


@pytest.mark.parametrize("stream", [False, True])
def test_max_tokens_counts_the_scripted_usage_and_stops_the_run(make_chaos, stream):
    chaos = make_chaos(budgets=Budgets(max_tokens=100))
    turn = {"content": "a", "usage": {"input_tokens": 60, "output_tokens": 10}}
    endpoint = chaos.provider("openai", script=[turn] * 3)
    client = openai.OpenAI(api_key="k")
    first = ask(client, stream=stream)
    if stream:
        list(first)
    with pytest.raises(BudgetExhausted, match="max_tokens"):
        ask(client, stream=stream)
    with pytest.raises(BudgetExhausted):
        ask(client, stream=stream)
    assert chaos.session.tokens == 140 and endpoint.calls == 2
    ends_match(chaos)


def test_a_huge_retry_after_is_honoured_by_anthropic_on_virtual_time_only(make_chaos):
    chaos = make_chaos(
        {"kind": "rate_limit", "retry_after": 1e6, "first": 1, "channels": ["model"]},
        virtual_sleep=True,
    )
    chaos.provider("anthropic", script=["patient"])
    started = time.perf_counter()
    message = anthropic.Anthropic(api_key="k").messages.create(
        model="c", max_tokens=5, messages=USER
    )
    assert time.perf_counter() - started < 2
    assert message.content[0].text == "patient"
    assert chaos.clock.now() == pytest.approx(1e6)


def test_faults_selected_by_the_endpoints_name_hit_only_it(make_chaos):
    chaos = make_chaos({"kind": "http_error", "status": 500, "tools": ["local"]})
    chaos.provider("openai", script=["public"] * 3)
    chaos.provider("openai", script=["local"] * 3, base_url="http://llm.internal/v1", name="local")
    assert text_of(openai.OpenAI(api_key="k", max_retries=0)) == "public"
    with pytest.raises(openai.InternalServerError):
        ask(openai.OpenAI(api_key="k", max_retries=0, base_url="http://llm.internal/v1"))
    assert {f.target for f in chaos.trace.of_type(FaultInjected)} == {"local"}


# == replay ===================================================================================

SEQUENTIAL = """
import openai, pytest

USER = [{"role": "user", "content": "hi"}]

@pytest.mark.chaos(
    faults=[
        {"kind": "rate_limit", "retry_after": 2, "probability": 0.5, "channels": ["model"]},
        {"kind": "timeout", "seconds": 3, "probability": 0.3, "channels": ["model"]},
        {"kind": "stream_cut", "probability": 0.5},
    ],
    virtual_sleep=True,
)
def test_agent(chaos):
    chaos.provider("openai", script=[f"answer {i}" for i in range(40)])
    client = openai.OpenAI(api_key="sk-test", max_retries=1)
    got = []
    for i in range(8):
        try:
            if i % 2:
                chunks = client.chat.completions.create(model="m", messages=USER, stream=True)
                got.append("".join(c.choices[0].delta.content or "" for c in chunks if c.choices))
            else:
                r = client.chat.completions.create(model="m", messages=USER)
                got.append(r.choices[0].message.content)
        except openai.APIError as exc:
            got.append(type(exc).__name__)
    assert all(g.startswith("answer") for g in got), got
"""

CONCURRENT = """
import asyncio, anthropic, pytest

USER = [{"role": "user", "content": "hi"}]

@pytest.mark.chaos(
    faults=[
        {"kind": "timeout", "seconds": 3, "probability": 0.6, "channels": ["model"]},
        {"kind": "connection_error", "probability": 0.3, "channels": ["model"]},
    ],
    virtual_sleep=True,
)
def test_agent(chaos):
    chaos.provider("anthropic", script=[f"answer {i}" for i in range(80)])
    client = anthropic.AsyncAnthropic(api_key="sk-test", max_retries=2)

    async def one():
        try:
            r = await client.messages.create(model="c", max_tokens=5, messages=USER)
            return r.content[0].text
        except anthropic.APIError as exc:
            return type(exc).__name__

    async def go():
        return await asyncio.gather(*[one() for _ in range(16)])

    got = asyncio.run(go())
    assert all(g.startswith("answer") for g in got), got
"""


def _errors(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith("E       AssertionError")]


def test_a_provider_failure_replays_the_same(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent=SEQUENTIAL)
    recorded = pytester.runpytest("-p", "no:cacheprovider", "--chaos-seed=5",
                                  "--chaos-report-dir=out")  # fmt: skip
    recorded.assert_outcomes(failed=1)
    replayed = pytester.runpytest("-p", "no:cacheprovider", "--chaos-replay=out")
    replayed.assert_outcomes(failed=1)
    assert _errors(replayed) == _errors(recorded) and _errors(recorded)
    assert "diverged" not in replayed.stdout.str()
    again = pytester.runpytest("-p", "no:cacheprovider", "--chaos-seed=5")
    assert _errors(again) == _errors(recorded)


def test_concurrent_provider_calls_replay_the_same(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent=CONCURRENT)
    recorded = pytester.runpytest("-p", "no:cacheprovider", "--chaos-seed=7",
                                  "--chaos-report-dir=out")  # fmt: skip
    recorded.assert_outcomes(failed=1)
    for _ in range(2):
        replayed = pytester.runpytest("-p", "no:cacheprovider", "--chaos-replay=out")
        assert _errors(replayed) == _errors(recorded)
        again = pytester.runpytest("-p", "no:cacheprovider", "--chaos-seed=7")
        assert _errors(again) == _errors(recorded)


# == xdist ====================================================================================

XDIST_SUITE = """
import anthropic, openai, pytest

USER = [{"role": "user", "content": "hi"}]

@pytest.mark.chaos(
    faults=[{"kind": "rate_limit", "retry_after": 5, "first": 1, "channels": ["model"]}],
    virtual_sleep=True,
)
@pytest.mark.parametrize("i", range(3))
def test_openai(chaos, i):
    endpoint = chaos.provider("openai", script=[f"o{i}"])
    r = openai.OpenAI(api_key="k").chat.completions.create(model="m", messages=USER)
    assert r.choices[0].message.content == f"o{i}"
    assert len(endpoint.requests) == 2 and chaos.clock.now() == 5

@pytest.mark.chaos(faults=[{"kind": "stream_cut", "mode": "end"}])
@pytest.mark.parametrize("i", range(3))
def test_anthropic(chaos, i):
    answer = f"a{i} is a long enough answer to be cut in the middle"
    chaos.provider("anthropic", script=[answer])
    client = anthropic.Anthropic(api_key="k")
    with client.messages.stream(model="c", max_tokens=5, messages=USER) as stream:
        text = "".join(stream.text_stream)
    assert answer.startswith(text) and 0 < len(text) < len(answer)
"""


def test_provider_tests_run_under_xdist(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_xd=XDIST_SUITE)
    not_needed = [f"-pno:{n}" for n in ("hypothesispytest", "faker", "anyio", "asyncio")]
    result = pytester.runpytest_subprocess(
        "-n", "2", "-p", "xdist", *not_needed, "--chaos-report-dir=out"
    )
    result.assert_outcomes(passed=6)
    index = json.loads((pytester.path / "out" / "index.json").read_text(encoding="utf-8"))
    assert sorted(t["outcome"] for t in index["tests"]) == ["passed"] * 6


@pytest.fixture(autouse=True)
def _no_httpx2_left_patched() -> Iterator[None]:
    yield
    assert _httpx2_transports() == REAL_HTTPX2, "httpx2 left patched after the test"
