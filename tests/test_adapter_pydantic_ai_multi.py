"""The pydantic-ai adapter against the real package, offline, for the faults a real stack
recognises and for multi-agent apps: an injected model failure is what pydantic-ai raises
there (the SDK's own error mapped by pydantic-ai's own code for OpenAI and Anthropic models,
pydantic-ai's categories for the others), so a ``FallbackModel`` falls back; a tool timeout
is pydantic-ai's own; every agent is its own target, also when agents share a model or one
delegates to another; streamed requests go through the plan like the others."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import importlib.util
import itertools
import json
import os
import sys
import types
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack
from typing import Annotated, Any

import pytest
from pydantic import Strict

if importlib.util.find_spec("pydantic_ai") is None:
    if os.environ.get("AGENTCHAOS_REQUIRE_FRAMEWORKS") == "1":
        raise RuntimeError("AGENTCHAOS_REQUIRE_FRAMEWORKS=1 but pydantic-ai is not installed")
    pytest.skip("pydantic-ai is not installed", allow_module_level=True)

import pydantic_ai.models
from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.exceptions import (
    FallbackExceptionGroup,
    ModelAPIError,
    ModelConnectionError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    PartStartEvent,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.usage import RequestUsage

from pytest_agentchaos import Chaos, ProfileRegistry
from pytest_agentchaos.adapters.pydantic_ai import chaos_agent, chaos_model
from pytest_agentchaos.errors import ChaosConfigError, NetworkBlocked
from pytest_agentchaos.faults.paraphrase import paraphrase_value
from pytest_agentchaos.inject import AllowList, InjectedFault, InjectedTimeout, NetworkGuard
from pytest_agentchaos.trace import FaultInjected, ModelCall, ModelResult, ToolCall, ToolResult
from pytest_agentchaos.trace.events import Halt

httpx2 = pytest.importorskip("httpx2")


def make(*faults: dict[str, Any], **kwargs: Any) -> Chaos:
    return Chaos.create(faults=list(faults), **kwargs)


def say(text: str, tokens: int = 0) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        usage = RequestUsage(input_tokens=tokens, output_tokens=tokens)
        return ModelResponse(parts=[TextPart(text)], usage=usage)

    return model


def streams(text: str) -> Callable[..., AsyncIterator[str]]:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for word in text.split(" "):
            yield word + " "

    return stream


def speaking(text: str) -> FunctionModel:
    return FunctionModel(say(text), stream_function=streams(text))


def outputs(chaos: Chaos, target: str | None = None) -> list[tuple[str, bool, str | None]]:
    return [
        (r.model, r.ok, r.error_type)
        for r in chaos.trace.of_type(ModelResult)
        if target is None or r.model == target
    ]


async def stream_output(agent: Agent[Any, Any], prompt: str = "hi") -> Any:
    async with agent.run_stream(prompt) as run:
        return await run.get_output()


# -- FallbackModel falls back on injected failures of its first model ------------------------

FAILURES: dict[str, tuple[dict[str, Any], type[BaseException]]] = {
    "503": ({"kind": "http_error", "status": [502, 503]}, ModelServerError),
    "429": ({"kind": "rate_limit", "retry_after": [1, 90]}, ModelRateLimitError),
    "timeout": ({"kind": "timeout", "seconds": [1, 60]}, ModelTimeoutError),
    "connection": ({"kind": "connection_error"}, ModelConnectionError),
}


@pytest.mark.parametrize("streamed", [False, True], ids=["request", "stream"])
@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_a_fallback_model_falls_back_on_every_injected_failure_of_its_first_model(
    failure: str, streamed: bool
) -> None:
    fault, native = FAILURES[failure]
    for seed in range(20):
        primary, backup = speaking("from primary"), speaking("from backup")
        agent = Agent(FallbackModel(primary, backup), name="router")
        with make({**fault, "tools": ["router"], "channels": ["model"]}, seed=seed) as chaos:
            with chaos_agent(chaos, agent):
                out = asyncio.run(stream_output(agent)) if streamed else agent.run_sync("hi").output
            assert out.strip() == "from backup"
            failed, answered = chaos.trace.of_type(ModelResult)
            assert (failed.model, failed.ok) == ("router", False)
            assert (answered.model, answered.ok) == ("router/fallback1", True)
            assert failed.error_type == native.__name__ or (
                native is ModelServerError and failed.error_type == "ModelUnavailableError"
            )
            assert [c.agent for c in chaos.trace.of_type(ModelCall)] == ["router", "router"]


def test_the_teams_own_fallback_on_decides(chaos_run: Chaos) -> None:
    """Only what ``fallback_on`` names falls back: an injected 503 under a fallback on rate
    limits only propagates, as a real one would."""
    agent = Agent(
        FallbackModel(speaking("a"), speaking("b"), fallback_on=(ModelRateLimitError,)),
        name="picky",
    )
    with chaos_agent(chaos_run, agent), pytest.raises(ModelUnavailableError) as caught:
        agent.run_sync("hi")
    assert isinstance(caught.value, InjectedFault) and caught.value.status_code == 503
    assert outputs(chaos_run) == [("picky", False, "ModelUnavailableError")]


@pytest.fixture
def chaos_run() -> Iterator[Chaos]:
    with make({"kind": "http_error", "status": 503, "tools": ["picky"]}) as chaos:
        yield chaos


def test_fallback_members_are_each_their_own_target_named_after_the_agent() -> None:
    a, b, c = speaking("a"), speaking("b"), speaking("c")

    def only_rate_limits(exc: Exception) -> bool:
        return isinstance(exc, ModelRateLimitError)

    original = FallbackModel(a, b, c, fallback_on=only_rate_limits)
    with make() as chaos:
        wrapped = chaos_model(chaos, original, name="x")
        assert type(wrapped) is FallbackModel and wrapped is not original
        assert original.models == [a, b, c]  # the original is untouched
        assert [m.chaos_target for m in wrapped.models] == ["x", "x/fallback1", "x/fallback2"]  # type: ignore[attr-defined]
        assert [m.wrapped for m in wrapped.models] == [a, b, c]  # type: ignore[attr-defined]
        assert wrapped._predicates == original._predicates  # the team's fallback_on
        with pytest.raises(ChaosConfigError, match="under chaos already"):
            chaos_model(chaos, wrapped)
        per_agent = chaos_model(chaos, FallbackModel(a, b))
        Agent(per_agent, name="triage").run_sync("hi")
        Agent(per_agent, name="billing").run_sync("hi")
        assert [(c.model, c.agent) for c in chaos.trace.of_type(ModelCall)] == [
            ("triage", "triage"),
            ("billing", "billing"),
        ]
        assert chaos.trace.meta["agents"] == {"triage": "triage", "billing": "billing"}


# -- the exceptions are pydantic-ai's own ----------------------------------------------------

CHAT = {
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "hello"}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
}  # fmt: skip
OPENAI_429 = {
    "error": {"message": "Rate limit reached for requests. Please try again later.",
              "type": "requests", "param": None, "code": "rate_limit_exceeded"}
}  # fmt: skip


def openai_model(handler: Callable[[Any], Any], sent: list[Any] | None = None) -> Model:
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    def handle(request: Any) -> Any:
        if sent is not None:
            sent.append(request)
        return handler(request)

    client = AsyncOpenAI(
        api_key="sk-test",
        base_url="https://llm.example.com/v1",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handle)),
    )
    return OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))


def raised(agent: Agent[Any, Any]) -> BaseException:
    with pytest.raises(ModelAPIError) as caught:
        agent.run_sync("hi")
    return caught.value


def native_class(exc: BaseException) -> type[BaseException]:
    """The class pydantic-ai raised (the injected one's native base)."""
    cls = type(exc)
    return getattr(cls, "__chaos_native__", cls)


def same_error(injected: BaseException, real: BaseException) -> None:
    assert isinstance(injected, InjectedFault) and not isinstance(real, InjectedFault)
    assert native_class(injected) is native_class(real)
    assert type(injected).__name__ == type(real).__name__
    for attr in ("status_code", "retry_after", "body", "model_name", "phase", "message"):
        assert getattr(injected, attr, None) == getattr(real, attr, None), attr
    assert type(injected.__cause__) is type(real.__cause__)
    assert str(injected.__cause__) == str(real.__cause__)
    deeper = injected.__cause__.__cause__ if injected.__cause__ is not None else None
    real_deeper = real.__cause__.__cause__ if real.__cause__ is not None else None
    assert type(deeper) is type(real_deeper)


@pytest.mark.parametrize("kind", ["429", "503", "timeout", "connection"])
def test_an_injected_openai_error_is_the_one_a_real_response_raises(kind: str) -> None:
    def real(request: Any) -> Any:
        if kind == "timeout":
            raise httpx2.ReadTimeout("timed out", request=request)
        if kind == "connection":
            raise httpx2.ConnectError("[Errno 111] Connection refused", request=request)
        if kind == "429":
            headers = {"retry-after": "2", "retry-after-ms": "1500"}
            return httpx2.Response(429, headers=headers, json=OPENAI_429)
        message = "The engine is currently overloaded, please try again later."
        body = {"error": {"message": message, "type": "server_error", "param": None, "code": None}}
        return httpx2.Response(503, json=body)

    truth = raised(Agent(openai_model(real)))
    fault = {
        "429": {"kind": "rate_limit", "retry_after": 1.5},
        "503": {"kind": "http_error", "status": 503},
        "timeout": {"kind": "timeout", "seconds": 10},
        "connection": {"kind": "connection_error"},
    }[kind]
    sent: list[Any] = []
    agent = Agent(openai_model(lambda request: httpx2.Response(200, json=CHAT), sent), name="oa")
    with make({**fault, "nth": [1]}) as chaos, chaos_agent(chaos, agent):
        injected = raised(agent)
        assert sent == []  # failed before the request was sent
        assert agent.run_sync("again").output == "hello"  # the next one is real
        assert len(sent) == 1
    same_error(injected, truth)
    if kind == "429":
        assert isinstance(injected, ModelRateLimitError) and isinstance(injected, ModelHTTPError)
        assert injected.retry_after == 1.5 and injected.headers["retry-after"] == "2"
    assert outputs(chaos) == [("oa", False, type(truth).__name__), ("oa", True, None)]


@pytest.mark.parametrize("kind", ["429", "529", "timeout"])
def test_an_injected_anthropic_error_is_the_one_a_real_response_raises(kind: str) -> None:
    anthropic = pytest.importorskip("anthropic")
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    def model(handler: Callable[[Any], Any]) -> Model:
        client = anthropic.AsyncAnthropic(
            api_key="sk-ant",
            base_url="https://anthropic.example.com",
            max_retries=0,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
        )
        return AnthropicModel(
            "claude-sonnet-4-6", provider=AnthropicProvider(anthropic_client=client)
        )

    def real(request: Any) -> Any:
        if kind == "timeout":
            raise httpx2.ReadTimeout("timed out", request=request)
        too_many = "Number of request tokens has exceeded your per-minute rate limit."
        kinds = {"429": ("rate_limit_error", too_many), "529": ("overloaded_error", "Overloaded")}
        error_type, message = kinds[kind]
        body = {"type": "error", "error": {"type": error_type, "message": message}}
        headers = {"retry-after": "2"} if kind == "429" else {}
        return httpx2.Response(int(kind), headers=headers, json=body)

    truth = raised(Agent(model(real)))
    fault = {
        "429": {"kind": "rate_limit", "retry_after": 2},
        "529": {"kind": "http_error", "status": 529},
        "timeout": {"kind": "timeout", "seconds": 10},
    }[kind]
    agent = Agent(model(lambda request: pytest.fail("the request was sent")))
    with make({**fault, "nth": [1]}) as chaos, chaos_agent(chaos, agent):
        injected = raised(agent)
    same_error(injected, truth)


@pytest.mark.parametrize(
    ("fault", "native", "status"),
    [
        ({"kind": "rate_limit", "retry_after": 12.5}, ModelRateLimitError, 429),
        ({"kind": "http_error", "status": 503}, ModelUnavailableError, 503),
        ({"kind": "http_error", "status": 500}, ModelServerError, 500),
        ({"kind": "http_error", "status": 418}, ModelHTTPError, 418),
        ({"kind": "timeout", "seconds": 5}, ModelTimeoutError, None),
        ({"kind": "connection_error"}, ModelConnectionError, None),
    ],
)
def test_a_model_without_a_provider_sdk_raises_pydantic_ais_categories(
    fault: dict[str, Any], native: type[Exception], status: int | None
) -> None:
    agent = Agent(FunctionModel(say("hi")), name="plain")
    with make({**fault, "nth": [1, 2]}) as chaos, chaos_agent(chaos, agent):
        first, second = raised(agent), raised(agent)
    assert first is not second  # a copy per call: each its own traceback
    for exc in (first, second):
        assert isinstance(exc, native) and isinstance(exc, InjectedFault)
        assert type(exc).__name__ == native.__name__
        assert getattr(exc, "status_code", None) == status
        assert exc.model_name == "function:model:"
    if status == 429:
        assert first.retry_after == 12.5 and first.headers["retry-after"] == "13"  # type: ignore[attr-defined]
    assert outputs(chaos) == [("plain", False, native.__name__)] * 2


def test_without_pydantic_ais_private_mapping_the_errors_are_still_its_public_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """If a later pydantic-ai moves the private helpers, the seam degrades to its public
    exceptions instead of breaking."""
    agent = Agent(openai_model(lambda request: httpx2.Response(200, json=CHAT)), name="oa")
    # the model's modules are loaded (as in any app that built one); only the helpers go
    monkeypatch.setitem(sys.modules, "pydantic_ai.models.openai._errors", None)
    monkeypatch.setitem(sys.modules, "pydantic_ai._model_errors", None)
    monkeypatch.delattr(pydantic_ai, "_model_errors", raising=False)
    with (
        make({"kind": "rate_limit", "retry_after": 3, "nth": [1]}) as chaos,
        chaos_agent(chaos, agent),
    ):
        exc = raised(agent)
    assert native_class(exc) is ModelHTTPError and exc.status_code == 429  # type: ignore[attr-defined]
    assert exc.retry_after == 3 and isinstance(exc, InjectedFault)  # type: ignore[attr-defined]


def test_timeouts_keep_the_whole_cause_chain_on_every_raise() -> None:
    agent = Agent(openai_model(lambda request: httpx2.Response(200, json=CHAT)), name="oa")
    with (
        make({"kind": "timeout", "seconds": 3, "nth": [1, 2, 3]}) as chaos,
        chaos_agent(chaos, agent),
    ):
        errors = [raised(agent) for _ in range(3)]
    for exc in errors:
        assert type(exc).__name__ == "ModelTimeoutError" and exc.phase == "read"  # type: ignore[attr-defined]
        assert type(exc.__cause__).__name__ == "APITimeoutError"
        assert type(exc.__cause__.__cause__).__name__ == "ReadTimeout"  # type: ignore[union-attr]
    assert len({id(e.__cause__) for e in errors}) == 3


# -- tool timeouts are pydantic-ai's own ----------------------------------------------------


def lookup(q: str) -> str:
    """Look something up."""
    return f"found {q}"


class Asker:
    """A model that calls ``lookup`` until it gets a result; ``seen`` keeps what it was told."""

    def __init__(self) -> None:
        self.seen: list[tuple[str | None, Any]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        for part in messages[-1].parts:
            if isinstance(part, ToolReturnPart):
                self.seen.append((part.outcome, part.content))
                if part.outcome == "success":
                    return ModelResponse(parts=[TextPart(f"got {part.content}")])
        return ModelResponse(parts=[ToolCallPart("lookup", {"q": "x"})])


def timed_agent(how: str, model: Model, retries: int = 2) -> Agent[None, str]:
    if how == "Tool(timeout=)":
        return Agent(model, tools=[Tool(lookup, timeout=2, max_retries=retries)], name="a")
    if how == "agent.tool(timeout=)":
        agent: Agent[None, str] = Agent(model, name="a")
        agent.tool_plain(timeout=2, retries=retries)(lookup)
        return agent
    if how == "FunctionToolset(timeout=)":
        toolset = FunctionToolset([Tool(lookup, max_retries=retries)], timeout=2)
        return Agent(model, toolsets=[toolset], name="a")
    return Agent(model, tools=[Tool(lookup, max_retries=retries)], tool_timeout=2, name="a")


TIMEOUTS = [
    "Tool(timeout=)",
    "agent.tool(timeout=)",
    "FunctionToolset(timeout=)",
    "Agent(tool_timeout=)",
]


@pytest.mark.parametrize("virtual_sleep", [False, True], ids=["real-loop", "virtual-loop"])
@pytest.mark.parametrize("how", TIMEOUTS)
@pytest.mark.parametrize("fault", ["timeout", "latency"])
def test_a_hang_past_a_tools_timeout_is_pydantic_ais_timeout_retry(
    how: str, fault: str, virtual_sleep: bool
) -> None:
    asker = Asker()
    agent = timed_agent(how, FunctionModel(asker))
    spec = {"kind": fault, "seconds": 30, "tools": ["lookup"], "nth": [1]}
    with make(spec, virtual_sleep=virtual_sleep) as chaos, chaos_agent(chaos, agent):
        assert agent.run_sync("go").output == "got found x"
        # the tool's timeout, not the 30 s hang
    assert chaos.clock.now() == 2.0
    assert asker.seen == [("retried", "Timed out after 2 seconds."), ("success", "found x")]
    failed, ok = chaos.trace.of_type(ToolResult)
    assert (failed.ok, failed.error_type, ok.ok) == (False, "InjectedTimeout", True)
    assert "cut after 2s of a 30s hang" in str(failed.message)


@pytest.mark.parametrize("how", TIMEOUTS)
def test_on_a_real_loop_a_hang_is_cut_at_the_tools_timeout_however_long_the_call_took_to_start(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a real event loop pydantic-ai's deadline is real: by the time the hang starts, the
    real milliseconds the framework took since arming it are gone (tens of them on a loaded
    machine). Virtual time must not lose them: the hang ends at the tool's timeout, exactly."""
    from pytest_agentchaos.adapters.pydantic_ai import deadlines

    real_left = deadlines._deadline_left
    monkeypatch.setattr(deadlines, "_deadline_left", lambda: (real_left() or 0.0) - 0.08)
    asker = Asker()
    agent = timed_agent(how, FunctionModel(asker))
    spec = {"kind": "timeout", "seconds": 30, "tools": ["lookup"], "nth": [1]}
    with make(spec) as chaos, chaos_agent(chaos, agent):
        assert agent.run_sync("go").output == "got found x"
    assert chaos.clock.now() == 2.0
    assert "cut after 2s of a 30s hang" in str(chaos.trace.of_type(ToolResult)[0].message)


def test_a_nearer_deadline_than_the_tools_timeout_cuts_the_hang_where_it_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A deadline that is not the tool's own (an enclosing one, nearer) is cut where it ends."""
    from pytest_agentchaos.adapters.pydantic_ai import deadlines

    monkeypatch.setattr(deadlines, "_deadline_left", lambda: 1.25)
    asker = Asker()
    agent = timed_agent("Tool(timeout=)", FunctionModel(asker))
    spec = {"kind": "timeout", "seconds": 30, "tools": ["lookup"], "nth": [1]}
    with make(spec) as chaos, chaos_agent(chaos, agent):
        assert agent.run_sync("go").output == "got found x"
    assert chaos.clock.now() == 1.25


def test_a_timeout_shorter_than_the_tools_is_its_own_and_counts_against_the_retries() -> None:
    asker = Asker()
    agent = timed_agent("Tool(timeout=)", FunctionModel(asker), retries=1)
    with make({"kind": "timeout", "seconds": 0.5, "tools": ["lookup"]}) as chaos:
        with chaos_agent(chaos, agent), pytest.raises(UnexpectedModelBehavior, match="max retries"):
            agent.run_sync("go")
        assert chaos.clock.now() == pytest.approx(1.0)  # two hangs of 0.5 s
    assert asker.seen == [("retried", "Timed out after 2 seconds.")]


def test_a_tool_without_a_timeout_keeps_the_builtin_timeout_error() -> None:
    agent = Agent(FunctionModel(Asker()), tools=[Tool(lookup)], name="a")
    with make({"kind": "timeout", "seconds": 30, "tools": ["lookup"]}) as chaos:
        with chaos_agent(chaos, agent), pytest.raises(InjectedTimeout):
            agent.run_sync("go")
        assert chaos.clock.now() == 30


# -- every agent its own target --------------------------------------------------------------


HOLDER: dict[str, Agent[Any, Any]] = {}


def test_chaos_agent_names_the_target_after_the_agent() -> None:
    named = Agent(FunctionModel(say("n")), name="Triage")
    helper = Agent(FunctionModel(say("h")))  # named after this variable, as pydantic-ai does
    HOLDER["anon"] = Agent(FunctionModel(say("x")))  # nothing to name it after
    twin = Agent(FunctionModel(say("t")), name="Triage")
    with make() as chaos:
        with chaos_agent(chaos, named, helper, HOLDER["anon"], twin):
            assert helper.name is None  # named in the trace only: the agent is left as it was
            for agent in (named, helper, HOLDER["anon"], twin):
                agent.run_sync("hi")
        with chaos_agent(chaos, named, name="explicit"):
            named.run_sync("hi")
        calls = [(c.model, c.agent) for c in chaos.trace.of_type(ModelCall)]
    assert calls == [
        ("Triage", "Triage"),
        ("helper", "helper"),
        ("model", "model"),
        ("Triage#2", "Triage#2"),
        ("explicit", "explicit"),
    ]
    assert chaos.trace.meta["agents"]["Triage#2"] == "Triage"


def test_a_model_shared_by_two_agents_keeps_their_calls_and_replays_apart() -> None:
    shared_calls: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = messages[-1].parts[0].content  # type: ignore[union-attr]
        shared_calls.append(str(prompt))
        return ModelResponse(parts=[TextPart(f"answer to {prompt}")])

    with make({"kind": "repeated_output", "channels": ["model"], "nth": [2]}) as chaos:
        shared = chaos_model(chaos, FunctionModel(model))
        triage, billing = Agent(shared, name="triage"), Agent(shared, name="billing")
        assert triage.run_sync("t1").output == "answer to t1"
        assert billing.run_sync("b1").output == "answer to b1"
        assert billing.run_sync("b2").output == "answer to b1"  # billing's own, repeated
        assert triage.run_sync("t2").output == "answer to t1"  # triage's own, never billing's
    assert shared_calls == ["t1", "b1"]
    assert [(c.model, c.agent) for c in chaos.trace.of_type(ModelCall)] == [
        ("triage", "triage"),
        ("billing", "billing"),
        ("billing", "billing"),
        ("triage", "triage"),
    ]


def test_model_and_tool_calls_name_their_agent() -> None:
    asker = Asker()
    agent = Agent(FunctionModel(asker), tools=[Tool(lookup)], name="searcher")
    with make() as chaos:
        with chaos_agent(chaos, agent):
            agent.run_sync("go")
        plain = Agent(FunctionModel(Asker()), tools=[chaos.wrap(Tool(lookup))], name="other")
        plain.run_sync("go")  # a tool wrapped on its own names the agent that runs it
    assert {(c.model, c.agent) for c in chaos.trace.of_type(ModelCall)} == {
        ("searcher", "searcher")
    }
    assert [(c.tool, c.agent) for c in chaos.trace.of_type(ToolCall)] == [
        ("lookup", "searcher"),
        ("lookup", "other"),
    ]


# -- delegation ------------------------------------------------------------------------------


def delegating_team() -> tuple[Agent[None, str], Agent[None, str]]:
    def router_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        for part in messages[-1].parts:
            if isinstance(part, ToolReturnPart):
                return ModelResponse(parts=[TextPart(f"router: {part.content}")])
        return ModelResponse(parts=[ToolCallPart("ask", {"question": "why"})])

    specialist = Agent(FunctionModel(say("specialist: because")), name="specialist")
    router = Agent(FunctionModel(router_model), name="router")

    @router.tool
    async def ask(ctx: RunContext[None], question: str) -> str:
        """Ask the specialist."""
        return (await specialist.run(question, usage=ctx.usage)).output

    return router, specialist


def test_chaos_agent_covers_the_agent_a_tool_delegates_to() -> None:
    router, specialist = delegating_team()
    with make({"kind": "http_error", "status": 503, "tools": ["specialist"]}) as chaos:
        with chaos_agent(chaos, router, specialist) as agents:
            assert agents == (router, specialist)
            with pytest.raises(ModelUnavailableError):  # from inside the router's tool
                router.run_sync("hi")
        assert router.run_sync("hi").output == "router: specialist: because"  # undone
        calls = [(c.model, c.agent) for c in chaos.trace.of_type(ModelCall)]
        tools = [(c.tool, c.agent) for c in chaos.trace.of_type(ToolCall)]
    assert calls == [("router", "router"), ("specialist", "specialist")]
    assert tools == [("ask", "router")]


def test_nothing_stays_overridden_after_the_block_also_when_it_raises() -> None:
    router, specialist = delegating_team()
    before = [list(a.toolsets) for a in (router, specialist)]
    with make() as chaos:
        with pytest.raises(KeyError), chaos_agent(chaos, router, specialist):
            router.run_sync("hi")
            raise KeyError("the body failed")
        n = len(chaos.trace.of_type(ModelCall))
        assert router.run_sync("hi").output == "router: specialist: because"
        assert len(chaos.trace.of_type(ModelCall)) == n  # not recorded: not under chaos
    assert [list(a.toolsets) for a in (router, specialist)] == before
    assert router._override_model.get() is None and specialist._override_tools.get() is None


def test_chaos_agent_refuses_wrong_arguments_clearly() -> None:
    router, specialist = delegating_team()
    with make() as chaos:
        wrong: list[tuple[type[Exception], str, Callable[[], Any]]] = [
            (TypeError, "agent 2 is not a pydantic-ai Agent", lambda: (router, "specialist")),
            (ChaosConfigError, "agent 2 is given twice", lambda: (router, router)),
        ]
        for error, message, agents in wrong:
            with pytest.raises(error, match=message), chaos_agent(chaos, *agents()):
                pass
        with (
            pytest.raises(TypeError, match="model= and name= are for one agent"),
            chaos_agent(chaos, router, specialist, name="x"),
        ):
            pass
        with pytest.raises(ChaosConfigError, match="name"), chaos_agent(chaos, router, name=""):
            pass
        with (
            chaos_agent(chaos, router),
            pytest.raises(ChaosConfigError, match="under chaos already"),
            chaos_agent(chaos, router),
        ):
            pass
        with pytest.raises(TypeError, match="expected a pydantic-ai Model"):
            chaos_model(chaos, 42)  # type: ignore[arg-type]


def test_odd_names_still_get_a_target_and_pydantic_ais_errors() -> None:
    class Odd(FunctionModel):
        @property
        def model_name(self) -> str:
            return "odd[name]*\n"

    holder = {"agent": Agent(Odd(say("x")), name="")}  # no name, nothing to infer one from
    wrapped = Agent(FunctionModel(say("y")), name="wrapped")
    with make({"kind": "http_error", "status": 503, "nth": [1]}) as chaos:
        with chaos_agent(chaos, holder["agent"]):
            exc = raised(holder["agent"])
            assert holder["agent"].run_sync("again").output == "x"
        wrapped_model = Agent(chaos_model(chaos, FunctionModel(say("z"))))
        with (
            pytest.raises(ChaosConfigError, match="under chaos already"),
            chaos_agent(chaos, wrapped_model),
        ):
            pass
        with chaos_agent(chaos, wrapped), pytest.raises(ChaosConfigError, match="already"):
            chaos_model(chaos, wrapped._override_model.get().value)  # type: ignore[union-attr]
    assert isinstance(exc, ModelUnavailableError) and exc.model_name == "odd[name]*\n"
    assert {c.model for c in chaos.trace.of_type(ModelCall)} == {"model"}


def test_agents_that_delegate_in_a_cycle_and_swallow_errors_stay_apart() -> None:
    """Two agents that ask each other (bounded by depth), each swallowing the other's
    failures: the faults are still recorded where they hit, each agent's calls its own."""
    depth: list[int] = []

    def asking(other: str) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
        def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            for part in messages[-1].parts:
                if isinstance(part, ToolReturnPart):
                    return ModelResponse(parts=[TextPart(f"{other} said {part.content}")])
            return ModelResponse(parts=[ToolCallPart("ask_other", {})])

        return model

    ping = Agent(FunctionModel(asking("pong")), name="ping")
    pong = Agent(FunctionModel(asking("ping")), name="pong")

    def asks(other: Agent[None, str]) -> Callable[..., Any]:
        async def ask_other(ctx: RunContext[None]) -> str:
            """Ask the other agent."""
            if len(depth) >= 3:
                return "enough"
            depth.append(1)
            try:
                return (await other.run("ask", usage=ctx.usage)).output
            except Exception as exc:  # a hostile agent swallows everything
                return f"failed: {type(exc).__name__}"

        return ask_other

    ping.tool(asks(pong))
    pong.tool(asks(ping))
    fault = {"kind": "connection_error", "tools": ["pong"], "nth": [2]}
    with make(fault) as chaos, chaos_agent(chaos, ping, pong):
        out = ping.run_sync("go").output
    assert "failed: ModelConnectionError" in out
    owners: dict[str, set[str | None]] = {}
    for call in chaos.trace.of_type(ModelCall):
        owners.setdefault(call.model, set()).add(call.agent)
    assert owners == {"ping": {"ping"}, "pong": {"pong"}}
    assert outputs(chaos, "pong")[1] == ("pong", False, "ModelConnectionError")


# -- fifty seeds of a delegating app: no cross-agent replay --------------------------------

REPLAYS = {"repeated_output", "stale_output", "paraphrased_output"}


def rephrased(recorded: str, variant: int) -> str:
    """A recorded model turn (text, then ``-> tool(...)`` lines) as ``paraphrased_output``
    with ``variant`` records it when it replays that turn: the text paraphrased, calls kept."""
    lines = recorded.split("\n")
    calls = [line for line in lines if line.startswith("-> ")]
    text = "\n".join(line for line in lines if not line.startswith("-> "))
    new = paraphrase_value(text, variant) if text else text
    if not isinstance(new, str) or new == text:
        new = text
    return "\n".join(([new] if new else []) + calls)


def cross_agent_replays(chaos: Chaos) -> list[str]:
    """What in the trace shows one agent's model call answered with another agent's output:
    a model target whose calls name two agents, or a replayed output (repeated, stale,
    paraphrased) that is not one of the calling agent's own earlier outputs."""
    problems: list[str] = []
    agent_of: dict[tuple[str, int], str | None] = {}
    owner: dict[str, str | None] = {}
    for call in chaos.trace.of_type(ModelCall):
        agent_of[(call.model, call.index)] = call.agent
        if owner.setdefault(call.model, call.agent) != call.agent:
            problems.append(
                f"target {call.model!r} took calls of {owner[call.model]!r} and {call.agent!r}"
            )
    replays = {
        (f.target, f.index): f
        for f in chaos.trace.of_type(FaultInjected)
        if f.channel == "model" and f.kind in REPLAYS
    }
    earlier: dict[str | None, list[Any]] = {}
    for result in chaos.trace.of_type(ModelResult):
        if not result.ok:
            continue
        key = (result.model, result.index)
        agent = agent_of[key]
        own = earlier.setdefault(agent, [])
        fault = replays.get(key)
        if fault is not None:
            if fault.kind == "paraphrased_output":
                variant = fault.detail["variant"]
                mine = any(rephrased(o, variant) == result.output for o in own)
            else:
                mine = result.output in own
            if not mine:
                problems.append(f"{agent}'s call {key} replayed {result.output!r}, not its own")
        own.append(result.output)
    return problems


def team_with_an_openai_specialist() -> tuple[Agent[None, str], Agent[None, str], list[Any]]:
    """A router (a scripted model) whose tool asks a specialist: an ``OpenAIChatModel`` over a
    real SDK client, on a scripted endpoint. Each agent's words are its own."""
    sent: list[Any] = []
    ids = itertools.count(1)

    def specialist_endpoint(request: Any) -> Any:
        question = json.loads(request.content)["messages"][-1]["content"]
        n = next(ids)
        message = {"role": "assistant", "content": f"specialist #{n} on {question}"}
        choice = {"index": 0, "finish_reason": "stop", "message": message}
        return httpx2.Response(200, json={**CHAT, "id": f"c{n}", "choices": [choice]})

    specialist = Agent(openai_model(specialist_endpoint, sent), name="specialist")
    turns = itertools.count(1)

    def router_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = next(turns)
        for part in messages[-1].parts:
            if isinstance(part, ToolReturnPart):
                return ModelResponse(parts=[TextPart(f"router #{n} relays: {part.content}")])
        return ModelResponse(parts=[ToolCallPart("consult", {"topic": f"topic {n}"})])

    router = Agent(FunctionModel(router_model), name="router")

    @router.tool
    async def consult(ctx: RunContext[None], topic: str) -> str:
        """Consult the specialist."""
        return (await specialist.run(topic, usage=ctx.usage)).output

    return router, specialist, sent


def fifty_seeds(profile: str, *, shared_target: bool = False) -> tuple[list[str], list[Chaos]]:
    """The team under ``profile`` for 50 seeds, behind a network guard; (problems, runs)."""
    refused: list[str] = []

    def refuse(target: str, via: str) -> BaseException:
        refused.append(target)
        return NetworkBlocked(f"refused {target} ({via})")

    guard = NetworkGuard(AllowList(), refuse)
    guard.install()
    runs: list[Chaos] = []
    problems: list[str] = []
    try:
        for seed in range(50):
            router, specialist, _ = team_with_an_openai_specialist()
            with (
                Chaos.create(ProfileRegistry.default().get(profile), seed=seed) as chaos,
                ExitStack() as stack,
            ):
                if shared_target:  # the old behaviour: both agents' calls on one target
                    for agent in (router, specialist):
                        model = chaos_model(chaos, agent.model, name="model")  # type: ignore[arg-type]
                        stack.enter_context(agent.override(model=model))
                else:
                    stack.enter_context(chaos_agent(chaos, router, specialist))
                for question in ("first", "second"):
                    # a run the faults ended: its trace is what is judged
                    with contextlib.suppress(Exception):
                        router.run_sync(question)
                problems += [f"seed {seed}: {p}" for p in cross_agent_replays(chaos)]
                runs.append(chaos)
    finally:
        guard.uninstall()
    assert refused == []
    return problems, runs


@pytest.mark.parametrize("profile", ["spiral", "flaky"])
def test_fifty_seeds_of_a_delegating_app_have_no_cross_agent_replay(profile: str) -> None:
    problems, runs = fifty_seeds(profile)
    assert problems == []
    agents = set()
    for chaos in runs:
        assert not chaos.trace.of_type(Halt) and chaos.session.halted is None
        for call in chaos.trace.of_type(ModelCall):
            assert call.agent == call.model  # every model call names its agent: its target
            agents.add(call.agent)
    assert agents == {"router", "specialist"}
    faults = [f for chaos in runs for f in chaos.trace.of_type(FaultInjected)]
    assert {f.target for f in faults if f.channel == "model"} == {"router", "specialist"}
    if profile == "spiral":
        assert {f.kind for f in faults if f.channel == "model"} >= {
            "repeated_output",
            "paraphrased_output",
        }


def test_the_checker_fails_the_old_shared_target_behaviour() -> None:
    problems, _ = fifty_seeds("spiral", shared_target=True)
    assert any("took calls of" in p for p in problems)
    assert any("not its own" in p for p in problems)  # one agent got the other's answer


# -- streaming -------------------------------------------------------------------------------


def tool_then_text() -> FunctionModel:
    """Calls ``lookup``, then says what it found (streamed or not)."""

    def reply(messages: list[ModelMessage]) -> ModelResponse:
        for part in messages[-1].parts:
            if isinstance(part, ToolReturnPart):
                return ModelResponse(parts=[TextPart(f"it is {part.content}")])
        return ModelResponse(parts=[ToolCallPart("lookup", {"q": "x"})])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        part = reply(messages).parts[0]
        if isinstance(part, TextPart):
            for word in part.content.split(" "):
                yield word + " "
        else:
            yield {0: DeltaToolCall(name="lookup", json_args='{"q": "x"}')}

    return FunctionModel(lambda m, i: reply(m), stream_function=stream)


@pytest.mark.parametrize("how", ["run_stream", "event_stream_handler", "iter"])
def test_streamed_runs_are_recorded_turn_by_turn(how: str) -> None:
    agent = Agent(tool_then_text(), tools=[Tool(lookup)], name="streamer")
    events: list[Any] = []

    async def handler(ctx: RunContext[None], stream: AsyncIterator[Any]) -> None:
        async for event in stream:
            events.append(event)

    async def run() -> str:
        if how == "run_stream":
            return str(await stream_output(agent, "go"))
        if how == "event_stream_handler":
            return (await agent.run("go", event_stream_handler=handler)).output
        async with agent.iter("go") as graph:
            async for node in graph:
                if Agent.is_model_request_node(node):
                    async with node.stream(graph.ctx) as streamed:
                        async for event in streamed:
                            events.append(event)
        assert graph.result is not None
        return graph.result.output

    with make() as chaos:
        with chaos_agent(chaos, agent):
            assert asyncio.run(run()).strip() == "it is found x"
        results = chaos.trace.of_type(ModelResult)
    assert [r.output.strip() for r in results] == ['-> lookup({"q": "x"})', "it is found x"]
    assert all(r.tokens for r in results) and chaos.session.tokens == sum(r.tokens for r in results)  # type: ignore[misc]
    assert [c.tool for c in chaos.trace.of_type(ToolCall)] == ["lookup"]
    if how != "run_stream":
        assert any(isinstance(e, PartStartEvent) for e in events)


def test_an_injected_error_is_raised_before_the_stream_opens() -> None:
    opened: list[int] = []

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        opened.append(1)
        yield "never"

    agent = Agent(FunctionModel(stream_function=stream), name="s")
    with (
        make({"kind": "rate_limit", "retry_after": 4}) as chaos,
        chaos_agent(chaos, agent),
        pytest.raises(ModelRateLimitError) as caught,
    ):
        asyncio.run(stream_output(agent))
    assert opened == [] and caught.value.retry_after == 4
    assert outputs(chaos) == [("s", False, "ModelRateLimitError")]


def test_a_replayed_turn_streams_as_the_earlier_response() -> None:
    model = tool_then_text()
    asked: list[int] = []
    original = model.stream_function
    assert original is not None

    async def counting(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        asked.append(1)
        async for chunk in original(messages, info):
            yield chunk

    model.stream_function = counting
    agent = Agent(model, tools=[Tool(lookup, max_retries=3)], name="s")
    events: list[Any] = []

    async def handler(ctx: RunContext[None], stream: AsyncIterator[Any]) -> None:
        async for event in stream:
            events.append(event)

    fault = {"kind": "repeated_output", "channels": ["model"], "nth": [2]}
    with make(fault) as chaos, chaos_agent(chaos, agent):
        out = asyncio.run(agent.run("go", event_stream_handler=handler)).output
    assert out.strip() == "it is found x"
    assert len(asked) == 2  # the replayed turn did not ask the model
    starts = [e.part for e in events if isinstance(e, PartStartEvent)]
    assert [type(p).__name__ for p in starts] == ["ToolCallPart", "ToolCallPart", "TextPart"]
    assert [c.tool for c in chaos.trace.of_type(ToolCall)] == ["lookup", "lookup"]


def test_a_stream_that_fails_midway_is_recorded_and_not_fallen_back_from() -> None:
    async def breaks(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "partial "
        raise ModelUnavailableError("x", "dropped mid-stream")

    primary = FunctionModel(stream_function=breaks)
    agent = Agent(FallbackModel(primary, speaking("backup")), name="s")
    with (
        make() as chaos,
        chaos_agent(chaos, agent),
        pytest.raises((ModelAPIError, FallbackExceptionGroup)),
    ):
        asyncio.run(stream_output(agent))
    assert outputs(chaos) == [("s", False, "ModelUnavailableError")]  # the primary's failure


# -- what a new user ran into ----------------------------------------------------------------


def test_a_module_level_agent_is_named_by_its_global_whatever_ran_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pydantic-ai names an unnamed agent on its first run, from the code that runs it: a
    target taken from that name would depend on which test ran first (and the replay seed
    with it). The module global that holds the agent names it from the start."""
    home = types.ModuleType("support_agents")
    home.billing = Agent(speaking("paid"))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "support_agents", home)
    targets = []
    for _ in range(2):  # reached as home.billing: no variable of this frame holds it
        with make() as chaos, chaos_agent(chaos, home.billing):
            home.billing.run_sync("hi")
        targets.append(chaos.trace.of_type(ModelCall)[0].model)
        home.billing.name = "billing"  # as pydantic-ai names it when its module runs it
    assert targets == ["billing", "billing"]


def test_an_active_override_of_the_model_is_the_model_put_under_chaos() -> None:
    own = openai_model(lambda request: pytest.fail("the agent's own model was asked"))
    agent = Agent(own, name="support")
    with agent.override(model=speaking("scripted")), make() as chaos, chaos_agent(chaos, agent):
        assert agent.run_sync("hi").output == "scripted"
    assert [c.model for c in chaos.trace.of_type(ModelCall)] == ["support"]


def test_an_override_inside_the_block_stays_under_chaos() -> None:
    """An inner ``agent.override(model=...)`` wins over the block's: it is put under chaos as
    the agent's own model, not let through unrecorded."""
    agent = Agent(speaking("own"), name="support")
    with (
        make({"kind": "repeated_output", "channels": ["model"]}) as chaos,
        chaos_agent(chaos, agent),
        agent.override(model=speaking("inner")),
    ):
        agent.run_sync("first")
        agent.run_sync("second")
    calls = chaos.trace.of_type(ModelCall)
    assert [c.model for c in calls] == ["support", "support"]
    assert [f.kind for f in chaos.trace.faults()] == ["repeated_output"]
    assert "override" not in vars(agent)  # the block's patch is gone


def test_a_bare_model_and_an_agent_named_model_are_not_one_target() -> None:
    bare = speaking("I am the bare model")
    with make() as chaos:
        wrapped = chaos_model(chaos, bare)
        agent = Agent(wrapped, name="model")
        asyncio.run(
            wrapped.request(
                [pydantic_ai.messages.ModelRequest.user_text_prompt("hi")],
                None,
                pydantic_ai.models.ModelRequestParameters(),
            )
        )
        agent.run_sync("hi")
    assert len({c.model for c in chaos.trace.of_type(ModelCall)}) == 2


def when(at: Annotated[dt.datetime, Strict()], ref: uuid.UUID) -> str:
    """When it happens."""
    return f"at {at:%Y} for {str(ref)[:4]}"


def _asks(args_json: str) -> FunctionModel:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts
        if any(isinstance(p, (ToolReturnPart, RetryPromptPart)) for p in last):
            return ModelResponse(parts=[TextPart(" | ".join(str(p.content)[:60] for p in last))])
        return ModelResponse(parts=[ToolCallPart("when", args_json, tool_call_id="c1")])

    return FunctionModel(fn)


@pytest.mark.parametrize("how", ["tool", "toolset", "chaos_agent"])
def test_arguments_sent_as_json_are_validated_in_json_mode_as_pydantic_ai_does(how: str) -> None:
    """Strict fields accept JSON strings only in JSON mode: an unfaulted wrapped call must not
    fail where the real one passes."""
    args = '{"at": "2024-01-02T03:04:05", "ref": "12345678-1234-5678-1234-567812345678"}'
    plain = Agent(_asks(args), tools=[Tool(when)])
    expected = plain.run_sync("go").output
    assert expected == "at 2024 for 1234"
    with make() as chaos:
        if how == "tool":
            agent = Agent(_asks(args), tools=[chaos.wrap(Tool(when))])
        elif how == "toolset":
            agent = Agent(_asks(args), toolsets=[chaos.wrap(FunctionToolset([when]))])
        else:
            agent = Agent(_asks(args), tools=[Tool(when)], name="planner")
        with chaos_agent(chaos, agent) if how == "chaos_agent" else contextlib.nullcontext():
            assert agent.run_sync("go").output == expected
        assert chaos.trace.of_type(ToolResult)[0].ok


def test_corrupted_json_arguments_meet_the_json_mode_validation() -> None:
    args = '{"at": "2024-01-02T03:04:05", "ref": "12345678-1234-5678-1234-567812345678"}'
    fault = {"kind": "malformed_params", "mutations": ["reformat_date"], "tools": ["when"]}
    with make(fault) as chaos:
        agent = Agent(_asks(args), tools=[chaos.wrap(Tool(when))])
        output = agent.run_sync("go").output
    (fired,) = chaos.trace.faults()
    assert fired.detail["mutation"] == "reformat_date"
    assert "datetime" in output.lower()  # pydantic-ai's own retry prompt about the date
