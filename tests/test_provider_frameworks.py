"""The frameworks' real provider model classes, built as a team builds them (no HTTP client
injected, the key from the environment), talk to `chaos.provider` under the network guard:
a tool call and an answer each, after a 429 their own SDK retries."""

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

from pytest_agentchaos.trace import ModelCall, ModelResult

RATE_LIMIT = {"kind": "rate_limit", "retry_after": 20, "first": 1, "channels": ["model"]}


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


def retried_once(chaos: Any, endpoint: Any) -> None:
    results = chaos.trace.of_type(ModelResult)
    assert [r.ok for r in results] == [False, True, True]  # the 429, then two answers
    assert len(endpoint.requests) == 3 and endpoint.calls == 2
    calls = chaos.trace.of_type(ModelCall)
    assert calls[1].t - calls[0].t == pytest.approx(20)  # the Retry-After, virtual


@pytest.mark.parametrize("responses_api", [False, True])
def test_langchain_chat_openai(make_chaos: Any, responses_api: bool) -> None:
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    chaos = make_chaos(RATE_LIMIT, virtual_sleep=True)
    endpoint = chaos.provider("openai", respond=answer_from_tool)
    agent = create_agent(
        ChatOpenAI(model="gpt-4o-mini", use_responses_api=responses_api), [population]
    )
    state = agent.invoke({"messages": [("user", "How many people live in Bern?")]})
    assert state["messages"][-1].text == "Bern: 134794 people."
    assert endpoint.requests[0].api == ("openai.responses" if responses_api else "openai.chat")
    retried_once(chaos, endpoint)


def test_langchain_chat_anthropic(make_chaos: Any) -> None:
    from langchain.agents import create_agent
    from langchain_anthropic import ChatAnthropic

    chaos = make_chaos(RATE_LIMIT, virtual_sleep=True)
    endpoint = chaos.provider("anthropic", respond=answer_from_tool)
    agent = create_agent(ChatAnthropic(model="claude-sonnet-5-5", max_tokens=1024), [population])
    state = agent.invoke({"messages": [("user", "How many people live in Bern?")]})
    assert state["messages"][-1].text == "Bern: 134794 people."
    retried_once(chaos, endpoint)


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("openai-chat:gpt-4o-mini", "openai"),
        ("openai-responses:gpt-4o-mini", "openai"),
        ("anthropic:claude-sonnet-5-5", "anthropic"),
    ],
)
def test_pydantic_ai_models(make_chaos: Any, model: str, provider: str) -> None:
    from pydantic_ai import Agent

    chaos = make_chaos(RATE_LIMIT, virtual_sleep=True)
    endpoint = chaos.provider(provider, respond=answer_from_tool)
    agent = Agent(model, tools=[population])
    result = agent.run_sync("How many people live in Bern?")
    assert result.output == "Bern: 134794 people."
    retried_once(chaos, endpoint)


@pytest.mark.parametrize("chat_completions", [False, True])
def test_openai_agents_sdk_models(make_chaos: Any, chat_completions: bool) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner
    from agents import function_tool as tool
    from openai import AsyncOpenAI

    chaos = make_chaos(RATE_LIMIT, virtual_sleep=True)
    endpoint = chaos.provider("openai", respond=answer_from_tool)
    kind = OpenAIChatCompletionsModel if chat_completions else OpenAIResponsesModel
    agent = Agent(
        name="Census",
        instructions="Answer with the population tool.",
        model=kind(model="gpt-4o-mini", openai_client=AsyncOpenAI()),
        tools=[tool(population)],
    )
    result = asyncio.run(Runner.run(agent, "How many people live in Bern?"))
    assert result.final_output == "Bern: 134794 people."
    retried_once(chaos, endpoint)
