"""An order-status assistant on the OpenAI Agents SDK, as a team ships it: one ``Agent`` on
``gpt-4o-mini`` (the SDK's default model class for it, ``OpenAIResponsesModel``, over the
Responses API) with one ``function_tool``.

Nothing here knows about tests: the model comes from the SDK's default provider (an
``AsyncOpenAI`` client that reads ``OPENAI_API_KEY``, with the openai SDK's own retry loop)
and the tool is a plain function. ``max_retries`` is a parameter because the team has a
second configuration: a "fail fast" client (``max_retries=0``) for the chat widget.
"""

from __future__ import annotations

from agents import Agent, Runner, function_tool
from agents.models.openai_responses import OpenAIResponsesModel
from openai import AsyncOpenAI

MODEL = "gpt-4o-mini"

INSTRUCTIONS = "You help customers with their orders. Look orders up with get_order_status."

#: The shop's order records, as its order service returns them.
ORDERS = {
    "A-1001": {"status": "shipped", "carrier": "DHL", "eta": "Thursday"},
    "A-1002": {"status": "processing", "carrier": None, "eta": "next week"},
}


@function_tool
def get_order_status(order_id: str) -> dict[str, str | None]:
    """The status, carrier and expected delivery day of an order."""
    return ORDERS.get(order_id.strip().upper(), {"status": "unknown"})


def order_agent(max_retries: int | None = None) -> Agent:
    """The agent. ``max_retries=None``: the SDK's default model for ``gpt-4o-mini`` (the
    openai SDK's default client, 2 retries); else a client with that many retries."""
    if max_retries is None:
        model: str | OpenAIResponsesModel = MODEL
    else:
        model = OpenAIResponsesModel(MODEL, openai_client=AsyncOpenAI(max_retries=max_retries))
    return Agent(
        name="Order assistant", instructions=INSTRUCTIONS, model=model, tools=[get_order_status]
    )


def ask(agent: Agent, question: str) -> str:
    """Run the agent on one question; its final answer."""
    return str(Runner.run_sync(agent, question).final_output)
