"""A LangChain ``create_agent`` ReAct agent that converts money, in two versions.

The agent has two tools: ``get_rates`` (the live rates service) and ``cached_rates``
(yesterday's rates from a local cache). A scripted policy model stands in for the LLM and
plays the naive ReAct loop: it asks for the live rates, asks again whenever a tool answers
with an error, and answers as soon as a tool succeeds.

- ``naive_agent``: LangChain's stock middleware only. ``ToolErrorMiddleware`` turns a tool's
  exception into an error message for the model, which asks for the same call again: while
  the rates service is down the agent loops until LangGraph's ``recursion_limit`` stops it.
- ``supervised_agent``: :class:`SupervisedCalls` routes every model and tool call through the
  escape stack's ``Supervisor``: retries with backoff on the injected clock, a circuit breaker
  per tool and the fallback ``get_rates -> cached_rates``, so the agent answers from the cache.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    ModelRetryMiddleware,
    ToolCallRequest,
    ToolErrorMiddleware,
)
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, tool

from pytest_agentchaos.escape import CallOutcome, Supervisor

LIVE = {"EUR": {"USD": 1.08, "GBP": 0.85}}
CACHED = {"EUR": {"USD": 1.07, "GBP": 0.85}}
TASK = "How much is 250 EUR in USD?"


@tool
def get_rates(base: str) -> dict[str, Any]:
    """Live exchange rates for a base currency (ISO code), from the rates service."""
    return {"base": base, "rates": LIVE[base], "source": "live"}


@tool
def cached_rates(base: str) -> dict[str, Any]:
    """Yesterday's exchange rates for a base currency (ISO code), from the local cache."""
    return {"base": base, "rates": CACHED[base], "source": "cached"}


class RatesPolicy(BaseChatModel):
    """A scripted chat model: it reads the last message and plays one ReAct turn."""

    amount: float = 250.0
    base: str = "EUR"
    quote: str = "USD"

    @property
    def _llm_type(self) -> str:
        return "rates-policy"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> RatesPolicy:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage) and last.status != "error":
            data = json.loads(str(last.content))
            total = self.amount * data["rates"][self.quote]
            text = (
                f"{self.amount:g} {self.base} is {total:.2f} {self.quote} ({data['source']} rates)"
            )
            message = AIMessage(content=text)
        else:  # the task, or an error: ask for the live rates (again)
            call = {"name": "get_rates", "args": {"base": self.base}, "id": f"call_{len(messages)}"}
            message = AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=message)])


class SupervisedCalls(AgentMiddleware):
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

        def run(**args: Any) -> Any:
            return handler(request.override(tool_call={**call, "args": args}))

        outcome = self.supervisor.call_outcome(call["name"], run, call["args"])
        return _as_message(outcome, call["id"])


def fallback_chain(cache: BaseTool, confidence: float = 0.6) -> dict[str, Any]:
    """``Supervisor`` arguments for the fallback ``get_rates -> cache`` (``cached_rates``)."""
    return {
        "tools": {cache.name: lambda **args: cache.invoke(args)},
        "fallbacks": {"get_rates": [(cache.name, confidence)]},
    }


def _as_message(outcome: CallOutcome, call_id: str | None) -> Any:
    """The tool node's answer as it is; a fallback tool's value as a message to this call."""
    if not outcome.fallback:
        return outcome.value
    return ToolMessage(
        content=json.dumps(outcome.value),
        name=outcome.tool,
        tool_call_id=call_id or "",
        artifact={"confidence": outcome.confidence},
    )


def naive_agent(model: BaseChatModel, tools: Sequence[BaseTool], *middleware: Any) -> Any:
    """Tool errors go back to the model as messages; model errors are retried at once
    (``initial_delay=0``: LangChain's own backoff would sleep on the real clock)."""
    stock = [
        ModelRetryMiddleware(max_retries=6, initial_delay=0, on_failure="error"),
        ToolErrorMiddleware(on_error=lambda exc, _: f"Error: {type(exc).__name__}: {exc}"),
    ]
    return create_agent(model, list(tools), middleware=[*stock, *middleware])


def supervised_agent(
    model: BaseChatModel, tools: Sequence[BaseTool], supervisor: Supervisor, *middleware: Any
) -> Any:
    """The same agent with its calls supervised (outermost, so it sees every failure)."""
    return create_agent(model, list(tools), middleware=[SupervisedCalls(supervisor), *middleware])


def ask(agent: Any, question: str = TASK, recursion_limit: int = 25) -> str:
    """Run the agent on one question; its final answer."""
    state = agent.invoke(
        {"messages": [HumanMessage(question)]}, {"recursion_limit": recursion_limit}
    )
    return str(state["messages"][-1].content)
