"""A framework seam over a scripted provider endpoint of the same run (``chaos_agent`` /
``chaos_model`` with ``chaos.provider``): each model call is one call, recorded once and
faulted once on the wire (where the SDK's own retry meets the fault), filed under the agent
that made it."""

from __future__ import annotations

import asyncio
import importlib.util
import os
from typing import Any

import pytest

if any(
    importlib.util.find_spec(m) is None
    for m in ("langchain_openai", "langchain_anthropic", "pydantic_ai", "agents")
):
    if os.environ.get("AGENTCHAOS_REQUIRE_FRAMEWORKS") == "1":
        raise RuntimeError("the frameworks extra is required here")
    pytest.skip("the frameworks extra is not installed", allow_module_level=True)

from pydantic_ai import RunContext  # noqa: E402 - the tool's annotation is read at run time

from pytest_agentchaos.trace import FaultInjected, ModelCall, ModelResult

RATE_LIMIT = {"kind": "rate_limit", "retry_after": 20, "first": 1, "channels": ["model"]}
QUESTION = "How many people live in Bern?"
ANSWER = "Bern: 134794 people."


def answer_from_tool(request: Any) -> dict[str, Any]:
    """Call the tool first, then answer from what it returned."""
    results = [m["content"] for m in request.messages if m["role"] == "tool"]
    if not results:
        return {"tool_calls": [{"name": "population", "arguments": {"city": "Bern"}}]}
    return {"content": f"Bern: {results[-1]} people."}


def population(city: str) -> str:
    """How many people live in a city."""
    return "134794"


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")


def once_on_the_wire(chaos: Any, endpoint: Any, agent: str) -> None:
    """Every wire attempt is one model call of ``agent``; the 429 was the SDK's to retry."""
    calls = chaos.trace.of_type(ModelCall)
    assert len(calls) == len(endpoint.requests) == 3  # the 429, then two answers
    assert [(c.model, c.agent) for c in calls] == [(agent, agent)] * 3
    assert [r.ok for r in chaos.trace.of_type(ModelResult)] == [False, True, True]
    assert endpoint.calls == 2
    assert calls[1].t - calls[0].t == pytest.approx(20)  # the SDK waited the Retry-After
    (fault,) = chaos.trace.of_type(FaultInjected)
    assert (fault.target, fault.index) == (agent, 1)
    assert chaos.session.model_calls == 3


# -- pydantic-ai ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("openai-chat:gpt-4o-mini", "openai"),
        ("openai-responses:gpt-4o-mini", "openai"),
        ("anthropic:claude-sonnet-5-5", "anthropic"),
    ],
)
@pytest.mark.parametrize("how", ["run_sync", "run_stream"])
def test_pydantic_ai_chaos_agent(make_chaos: Any, model: str, provider: str, how: str) -> None:
    from pydantic_ai import Agent

    from pytest_agentchaos.adapters.pydantic_ai import chaos_agent

    chaos = make_chaos(RATE_LIMIT, virtual_sleep=True)
    endpoint = chaos.provider(provider, respond=answer_from_tool)
    agent = Agent(model, name="census", tools=[population])

    async def streamed() -> str:
        async with agent.run_stream(QUESTION) as result:
            return await result.get_output()

    with chaos_agent(chaos, agent):
        output = agent.run_sync(QUESTION).output if how == "run_sync" else asyncio.run(streamed())
    assert output == ANSWER
    if how == "run_stream":  # (pydantic-ai's AnthropicModel may stream a run_sync too)
        assert all(r.stream for r in endpoint.requests)
    once_on_the_wire(chaos, endpoint, "census")


def test_pydantic_ai_two_agents_on_one_endpoint(make_chaos: Any) -> None:
    """A router that delegates to a specialist: each agent's calls are its own target on the
    wire, and a fault on the specialist's first call hits the specialist only."""
    from pydantic_ai import Agent

    from pytest_agentchaos.adapters.pydantic_ai import chaos_agent

    chaos = make_chaos(dict(RATE_LIMIT, tools=["specialist"]), virtual_sleep=True)
    endpoint = chaos.provider(
        "openai",
        script=[
            {"tool_calls": [{"name": "ask", "arguments": {"question": "Bern?"}}]},
            {"content": "134794"},
            {"content": ANSWER},
        ],
    )
    specialist = Agent("openai:gpt-4o-mini", name="specialist", instructions="Answer.")
    router = Agent("openai:gpt-4o-mini", name="router", instructions="Route.")

    @router.tool
    async def ask(ctx: RunContext[None], question: str) -> str:
        result = await specialist.run(question, usage=ctx.usage)
        return result.output

    with chaos_agent(chaos, router, specialist):
        output = router.run_sync(QUESTION).output
    assert output == ANSWER
    calls = chaos.trace.of_type(ModelCall)
    assert len(calls) == len(endpoint.requests) == 4
    assert [(c.model, c.agent) for c in calls] == [
        ("router", "router"),
        ("specialist", "specialist"),  # the 429, which the SDK retries
        ("specialist", "specialist"),
        ("router", "router"),
    ]
    (fault,) = chaos.trace.of_type(FaultInjected)
    assert (fault.target, fault.index) == ("specialist", 1)


def test_pydantic_ai_model_the_endpoint_does_not_serve_stays_at_the_framework_seam(
    make_chaos: Any,
) -> None:
    """An endpoint elsewhere changes nothing for a model it does not answer: the framework
    seam records and faults its calls, with pydantic-ai's own error."""
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import ModelHTTPError
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    from pytest_agentchaos.adapters.pydantic_ai import chaos_agent

    chaos = make_chaos(RATE_LIMIT, virtual_sleep=True)
    endpoint = chaos.provider("openai", respond=answer_from_tool)
    local = Agent(FunctionModel(lambda m, i: ModelResponse(parts=[TextPart("hi")])), name="local")
    with chaos_agent(chaos, local), pytest.raises(ModelHTTPError) as caught:
        local.run_sync("hello")
    assert caught.value.status_code == 429
    assert [(c.model, c.agent) for c in chaos.trace.of_type(ModelCall)] == [("local", "local")]
    assert endpoint.requests == []


def test_must_halt_max_steps_passes_a_fault_free_run(pytester: pytest.Pytester) -> None:
    """Two model turns and one tool call are three steps, not five."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        test_budget="""
        import pytest
        from pydantic_ai import Agent
        from pytest_agentchaos.adapters.pydantic_ai import chaos_agent

        def population(city: str) -> str:
            return "134794"

        @pytest.mark.chaos("none")
        @pytest.mark.must_halt(max_steps=3)
        def test_budget(chaos, monkeypatch):
            monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
            chaos.provider("openai", script=[
                {"tool_calls": [{"name": "population", "arguments": {"city": "Bern"}}]},
                {"content": "Bern: 134794 people."},
            ])
            agent = Agent("openai:gpt-4o-mini", name="census", tools=[population])
            with chaos_agent(chaos, agent):
                assert agent.run_sync("Bern?").output == "Bern: 134794 people."
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1)


# -- the OpenAI Agents SDK --------------------------------------------------------------------


@pytest.mark.parametrize("chat_completions", [False, True])
@pytest.mark.parametrize("streamed", [False, True])
def test_openai_agents_chaos_agent(make_chaos: Any, chat_completions: bool, streamed: bool) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner
    from agents import function_tool as tool
    from openai import AsyncOpenAI

    from pytest_agentchaos.adapters.openai_agents import chaos_agent

    chaos = make_chaos(RATE_LIMIT, virtual_sleep=True)
    endpoint = chaos.provider("openai", respond=answer_from_tool)
    kind = OpenAIChatCompletionsModel if chat_completions else OpenAIResponsesModel
    agent = Agent(
        name="Census",
        instructions="Answer with the population tool.",
        model=kind(model="gpt-4o-mini", openai_client=AsyncOpenAI()),
        tools=[tool(population)],
    )

    async def run() -> Any:
        under = chaos_agent(chaos, agent)
        if not streamed:
            return (await Runner.run(under, QUESTION)).final_output
        result = Runner.run_streamed(under, QUESTION)
        async for _ in result.stream_events():
            pass
        return result.final_output

    assert asyncio.run(run()) == ANSWER
    assert all(r.stream == streamed for r in endpoint.requests)
    once_on_the_wire(chaos, endpoint, "Census")


# -- LangChain --------------------------------------------------------------------------------


@pytest.mark.parametrize("responses_api", [False, True])
@pytest.mark.parametrize("how", ["invoke", "ainvoke", "stream"])
def test_langchain_chaos_model(make_chaos: Any, responses_api: bool, how: str) -> None:
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    from pytest_agentchaos.adapters.langchain import chaos_model

    chaos = make_chaos(RATE_LIMIT, virtual_sleep=True)
    endpoint = chaos.provider("openai", respond=answer_from_tool)
    model = ChatOpenAI(
        model="gpt-4o-mini", use_responses_api=responses_api, streaming=how == "stream"
    )
    agent = create_agent(chaos_model(chaos, model), [population], name="census")
    question = {"messages": [("user", QUESTION)]}
    state = asyncio.run(agent.ainvoke(question)) if how == "ainvoke" else agent.invoke(question)
    assert state["messages"][-1].text == ANSWER
    assert all(r.stream == (how == "stream") for r in endpoint.requests)
    once_on_the_wire(chaos, endpoint, "census")


def test_langchain_chat_anthropic(make_chaos: Any) -> None:
    from langchain.agents import create_agent
    from langchain_anthropic import ChatAnthropic

    from pytest_agentchaos.adapters.langchain import chaos_model

    chaos = make_chaos(RATE_LIMIT, virtual_sleep=True)
    endpoint = chaos.provider("anthropic", respond=answer_from_tool)
    model = ChatAnthropic(model="claude-sonnet-5-5", max_tokens=1024)
    agent = create_agent(chaos_model(chaos, model), [population], name="census")
    state = agent.invoke({"messages": [("user", QUESTION)]})
    assert state["messages"][-1].text == ANSWER
    once_on_the_wire(chaos, endpoint, "census")


def test_a_call_that_never_reaches_the_endpoint_is_said_in_the_trace(make_chaos: Any) -> None:
    """A model whose client has a transport of its own answers by itself: the run says that
    those calls are in no record, rather than losing them without a word."""
    import httpx2
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from pytest_agentchaos.adapters.pydantic_ai import chaos_agent

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json={
            "id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "hi"}}],
        })  # fmt: skip

    client = AsyncOpenAI(http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(answer)))
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(openai_client=client))
    chaos = make_chaos()
    endpoint = chaos.provider("openai", script=["unused"])
    agent = Agent(model, name="own")
    with chaos_agent(chaos, agent):
        assert agent.run_sync("hello").output == "hi"
    assert endpoint.requests == []
    assert any("'own'" in n and "never saw it" in n for n in chaos.trace.meta["notes"])


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
def test_langchain_chaos_middleware(make_chaos: Any, how: str) -> None:
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    from pytest_agentchaos.adapters.langchain import chaos_middleware

    chaos = make_chaos(RATE_LIMIT, virtual_sleep=True)
    endpoint = chaos.provider("openai", respond=answer_from_tool)
    agent = create_agent(
        ChatOpenAI(model="gpt-4o-mini"),
        [population],
        middleware=[chaos_middleware(chaos)],
        name="census",
    )
    question = {"messages": [("user", QUESTION)]}
    state = asyncio.run(agent.ainvoke(question)) if how == "ainvoke" else agent.invoke(question)
    assert state["messages"][-1].text == ANSWER
    once_on_the_wire(chaos, endpoint, "census")
    assert chaos.session.steps == 4  # three model calls and the tool call
