"""A LangChain ``create_agent`` agent with one httpx tool: the current weather in a city.

``weather_tool(client)`` is a ``@tool`` that GETs the weather API with httpx and raises on an
HTTP error (``raise_for_status``). A scripted policy model stands in for the LLM: it asks for
the weather, then answers from the tool's JSON. :class:`PatientCalls` runs every model and tool
call through the escape stack's ``Supervisor`` with :data:`PATIENT`, a policy for an API known
to rate-limit and to go down for minutes: a 429's Retry-After is honoured, 5xx errors are
retried with backoff (and a circuit breaker) for a few minutes, all on the injected clock.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import httpx
from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, tool

from pytest_agentchaos.escape import BackoffPolicy, ClassifierPolicy, EscapePolicy, Supervisor

WEATHER_URL = "https://api.weather.example/v2/current"

#: Up to 12 attempts per call, waiting 1-2 s, 2-4 s, 4-8 s ... at most 30-60 s in between
#: (3.5 to 7 minutes in all, longer for a Retry-After); a breaker wait of up to 60 s counts as
#: one; 12 transient failures in a row before the classifier calls an error persistent.
PATIENT = EscapePolicy(
    backoff=BackoffPolicy(base=2.0, max_delay=60.0, jitter="equal", max_attempts=12),
    classifier=ClassifierPolicy(escalate_after=12, window=12),
)


def weather_tool(client: httpx.Client) -> BaseTool:
    """The ``get_weather`` tool, calling the weather API through ``client``."""

    @tool
    def get_weather(city: str) -> dict[str, Any]:
        """Current temperature (Celsius) and sky in a city."""
        response = client.get(WEATHER_URL, params={"city": city})
        response.raise_for_status()
        data: dict[str, Any] = response.json()
        return data

    return get_weather


class WeatherPolicy(BaseChatModel):
    """A scripted chat model: asks for the weather in ``city``, then reports it."""

    city: str = "Lisbon"

    @property
    def _llm_type(self) -> str:
        return "weather-policy"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> WeatherPolicy:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            message = AIMessage(content=_report(self.city, last))
        else:
            call = {"name": "get_weather", "args": {"city": self.city}, "id": "call_weather"}
            message = AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=message)])


def _report(city: str, message: ToolMessage) -> str:
    """The answer to the user, from the tool's message."""
    if message.status == "error":
        return f"Sorry, I could not get the weather in {city}."
    data = json.loads(str(message.content))
    return f"{data['temp_c']}°C and {data['sky']} in {city}."


class PatientCalls(AgentMiddleware):
    """Every model call and tool call of the agent through a :class:`Supervisor`."""

    def __init__(self, supervisor: Supervisor) -> None:
        super().__init__()
        self.supervisor = supervisor

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        return self.supervisor.call("model", lambda: handler(request))  # type: ignore[no-any-return]

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]
    ) -> Any:
        call = request.tool_call
        return self.supervisor.call(call["name"], lambda: handler(request))


def weather_agent(
    model: BaseChatModel, client: httpx.Client, supervisor: Supervisor, *middleware: Any
) -> Any:
    """The agent: ``PatientCalls`` outermost, so it sees every failure of the layers inside."""
    tools = [weather_tool(client)]
    return create_agent(model, tools, middleware=[PatientCalls(supervisor), *middleware])


def ask(agent: Any, question: str) -> str:
    """Run the agent on one question; its final answer."""
    state = agent.invoke({"messages": [HumanMessage(question)]})
    return str(state["messages"][-1].content)
