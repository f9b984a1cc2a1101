"""A currency-conversion assistant on LangChain, as a team ships it: ``create_agent`` with
OpenAI's ``gpt-4o-mini`` through ``langchain_openai.ChatOpenAI`` and two ``@tool`` tools.

Nothing here knows about tests: the model is built as in production (the API key read from
``OPENAI_API_KEY`` by the SDK, the SDK's own retry loop, no HTTP client injected) and the
tools are plain functions. ``max_retries`` is a parameter because the team has a second
configuration: a "fail fast" client (``max_retries=0``) for the latency-sensitive path.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

MODEL = "gpt-4o-mini"

SYSTEM_PROMPT = (
    "You convert amounts between currencies. Always look the rate up with get_rate, "
    "compute with convert, and answer in one sentence."
)

#: Today's reference rates (EUR base), as the team's rates service returns them.
RATES = {"EUR": 1.0, "USD": 1.08, "GBP": 0.85, "JPY": 162.5, "CHF": 0.95}


@tool
def get_rate(base: str, quote: str) -> float:
    """How many units of ``quote`` one unit of ``base`` buys (ISO 4217 codes)."""
    return round(RATES[quote.upper()] / RATES[base.upper()], 6)


@tool
def convert(amount: float, rate: float) -> float:
    """``amount`` converted at ``rate``, rounded to cents."""
    return round(amount * rate, 2)


def currency_model(max_retries: int | None = None) -> ChatOpenAI:
    """The team's chat model. ``max_retries=None``: the openai SDK's default (2 retries)."""
    if max_retries is None:
        return ChatOpenAI(model=MODEL, temperature=0)
    return ChatOpenAI(model=MODEL, temperature=0, max_retries=max_retries)


def currency_agent(max_retries: int | None = None) -> Any:
    """The agent: the model, the two tools and the system prompt."""
    return create_agent(
        currency_model(max_retries), [get_rate, convert], system_prompt=SYSTEM_PROMPT
    )


def ask(agent: Any, question: str) -> str:
    """Run the agent on one question; its final answer."""
    state = agent.invoke({"messages": [HumanMessage(question)]})
    return str(state["messages"][-1].content)
