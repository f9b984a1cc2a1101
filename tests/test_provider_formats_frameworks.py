"""Agent frameworks' own model classes parse what the provider formats render: one round trip
with a tool call each, through the real SDK clients on an ``httpx2.MockTransport``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_fake import (
    FakeProvider,
    anthropic_client,
    async_anthropic_client,
    async_openai_client,
    openai_client,
)

CALL = {"content": "Checking.", "tool_calls": [{"name": "lookup", "arguments": {"q": "Bern"}}]}


def lookup(q: str) -> str:
    """Look a city up."""
    return f"{q}: 134794 inhabitants"


def test_langchain_chat_openai_both_apis() -> None:
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    for api, responses in (("openai.chat", False), ("openai.responses", True)):
        fake = FakeProvider(api, [CALL, "Bern has 134794 inhabitants."])
        model = ChatOpenAI(
            model="gpt-4o",
            api_key="sk-test",
            use_responses_api=responses,
            max_retries=0,
            http_client=openai_client(fake)._client,  # an httpx2 client on the mock transport
        )
        bound = model.bind_tools([lookup])
        first = bound.invoke("How many people live in Bern?")
        assert first.tool_calls[0]["name"] == "lookup"
        assert first.tool_calls[0]["args"] == {"q": "Bern"}
        from langchain_core.messages import HumanMessage, ToolMessage

        history = [
            HumanMessage("How many people live in Bern?"),
            first,
            ToolMessage(lookup("Bern"), tool_call_id=first.tool_calls[0]["id"]),
        ]
        second = bound.invoke(history)
        assert "134794" in second.text, api
        assert not fake.rejected, fake.rejected[0].message if fake.rejected else ""
        assert fake.requests[1].messages[-1]["role"] == "tool"


def test_langchain_chat_openai_streams() -> None:
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    fake = FakeProvider("openai.chat", [CALL])
    model = ChatOpenAI(
        model="gpt-4o",
        api_key="sk-test",
        max_retries=0,
        http_client=openai_client(fake)._client,
        streaming=True,
    )
    chunks = list(model.bind_tools([lookup]).stream("Bern?"))
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged = merged + chunk
    assert merged.text == "Checking."
    assert merged.tool_calls[0]["args"] == {"q": "Bern"}


def test_langchain_chat_anthropic() -> None:
    """``ChatAnthropic`` takes no HTTP client: its SDK client is set in place."""
    pytest.importorskip("langchain_anthropic")
    from langchain_anthropic import ChatAnthropic

    fake = FakeProvider("anthropic.messages", [CALL])
    model = ChatAnthropic(
        model="claude-sonnet-5-5", api_key="sk-ant-test", max_retries=0, max_tokens=1024
    )
    model.__dict__["_client"] = anthropic_client(fake)
    message = model.bind_tools([lookup]).invoke("Bern?")
    assert message.tool_calls[0]["name"] == "lookup"
    assert message.tool_calls[0]["args"] == {"q": "Bern"}
    assert not fake.rejected


def _pydantic_agent(model: Any) -> Any:
    from pydantic_ai import Agent

    agent = Agent(model)
    agent.tool_plain(lookup)
    return agent


async def test_pydantic_ai_models() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.providers.openai import OpenAIProvider

    cases: list[tuple[FakeProvider, Any]] = []
    for api, cls in (("openai.chat", OpenAIChatModel), ("openai.responses", OpenAIResponsesModel)):
        fake = FakeProvider(api, [CALL, "Bern has 134794 inhabitants."])
        provider = OpenAIProvider(openai_client=async_openai_client(fake))
        cases.append((fake, cls("gpt-4o", provider=provider)))
    fake = FakeProvider("anthropic.messages", [CALL, "Bern has 134794 inhabitants."])
    provider = AnthropicProvider(anthropic_client=async_anthropic_client(fake))
    cases.append((fake, AnthropicModel("claude-sonnet-5-5", provider=provider)))
    for fake, model in cases:
        result = await _pydantic_agent(model).run("How many people live in Bern?")
        assert "134794" in result.output, fake.api
        assert fake.calls == 2 and not fake.rejected, fake.api
        assert fake.requests[1].messages[-1]["role"] == "tool" or any(
            m["role"] == "tool" for m in fake.requests[1].messages
        )


async def test_pydantic_ai_streams() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.providers.openai import OpenAIProvider

    # run_stream ends at the first text: the call turn has none
    call = {"tool_calls": CALL["tool_calls"]}
    chat = FakeProvider("openai.chat", [call, "Bern has 134794 inhabitants."])
    claude = FakeProvider("anthropic.messages", [call, "Bern has 134794 inhabitants."])
    models = [
        OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=async_openai_client(chat))),
        AnthropicModel(
            "claude-sonnet-5-5",
            provider=AnthropicProvider(anthropic_client=async_anthropic_client(claude)),
        ),
    ]
    for model in models:
        async with _pydantic_agent(model).run_stream("Bern?") as run:
            text = await run.get_output()
        assert "134794" in text
    assert all(r.stream for r in chat.requests + claude.requests)


@pytest.mark.parametrize("api", ["openai.responses", "openai.chat"])
async def test_openai_agents_sdk_models(api: str) -> None:
    pytest.importorskip("agents")
    from agents import Agent, Runner, function_tool
    from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
    from agents.models.openai_responses import OpenAIResponsesModel

    fake = FakeProvider(api, [CALL, "Bern has 134794 inhabitants."])
    cls = OpenAIResponsesModel if api == "openai.responses" else OpenAIChatCompletionsModel
    model = cls(model="gpt-4o", openai_client=async_openai_client(fake))
    agent = Agent(name="a", instructions="Answer.", model=model, tools=[function_tool(lookup)])
    result = await Runner.run(agent, "How many people live in Bern?")
    assert "134794" in result.final_output
    assert fake.calls == 2 and not fake.rejected
    tool_results = [m for m in fake.requests[1].messages if m["role"] == "tool"]
    assert json.loads(json.dumps(tool_results[0]["content"])) == lookup("Bern")


@pytest.mark.parametrize("api", ["openai.responses", "openai.chat"])
async def test_openai_agents_sdk_streams(api: str) -> None:
    pytest.importorskip("agents")
    from agents import Agent, Runner, function_tool
    from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
    from agents.models.openai_responses import OpenAIResponsesModel

    fake = FakeProvider(api, [CALL, "Bern has 134794 inhabitants."])
    cls = OpenAIResponsesModel if api == "openai.responses" else OpenAIChatCompletionsModel
    model = cls(model="gpt-4o", openai_client=async_openai_client(fake))
    agent = Agent(name="a", instructions="Answer.", model=model, tools=[function_tool(lookup)])
    run = Runner.run_streamed(agent, "How many people live in Bern?")
    async for _ in run.stream_events():
        pass
    assert "134794" in run.final_output
    assert fake.calls == 2 and not fake.rejected
