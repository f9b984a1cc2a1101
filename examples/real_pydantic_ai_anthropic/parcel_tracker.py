"""A parcel-tracking assistant on pydantic-ai, as a team ships it: an ``Agent`` on Anthropic's
Claude (``AnthropicModel``), two tools and a structured answer (:class:`ParcelReport`).

Nothing here knows about tests: the model is built as in production (the ``anthropic``
SDK's ``AsyncAnthropic`` reads ``ANTHROPIC_API_KEY``; its own retry loop, no HTTP client
injected) and the tools are plain functions. ``max_retries`` is a parameter because the team
has a second configuration: a "fail fast" client (``max_retries=0``) for the status widget,
which would rather show nothing than keep a customer waiting.
"""

from __future__ import annotations

from typing import Literal

from anthropic import AsyncAnthropic
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

MODEL = "claude-haiku-4-5"

INSTRUCTIONS = (
    "You answer questions about parcels. Look the parcel up with track_parcel, ask "
    "delivery_window for its depot's next slot when it is out for delivery, and report."
)

#: The carrier's tracking records, as its API returns them.
PARCELS = {
    "PX-1042": {"status": "out_for_delivery", "depot": "Leeds", "last_scan": "07:42"},
    "PX-2230": {"status": "in_transit", "depot": "Bristol", "last_scan": "yesterday 21:10"},
}
#: The depots' next delivery windows.
WINDOWS = {"Leeds": "14:00-16:00", "Bristol": "tomorrow 09:00-11:00"}


class ParcelReport(BaseModel):
    """What the assistant tells the customer."""

    tracking_number: str
    status: Literal["in_transit", "out_for_delivery", "delivered", "unknown"]
    delivery_window: str | None = None
    message: str


def track_parcel(tracking_number: str) -> dict[str, str]:
    """The carrier's latest record of a parcel: status, depot and last scan."""
    record = PARCELS.get(tracking_number.strip().upper())
    return dict(record) if record else {"status": "unknown"}


def delivery_window(depot: str) -> str:
    """The next delivery window of a depot."""
    return WINDOWS.get(depot, "unknown")


def parcel_model(max_retries: int | None = None) -> AnthropicModel:
    """The team's Claude model. ``max_retries=None``: the anthropic SDK's default (2 retries)."""
    if max_retries is None:
        return AnthropicModel(MODEL)
    client = AsyncAnthropic(max_retries=max_retries)
    return AnthropicModel(MODEL, provider=AnthropicProvider(anthropic_client=client))


def parcel_agent(max_retries: int | None = None) -> Agent[None, ParcelReport]:
    """The agent: Claude, the two tools, the structured report."""
    return Agent(
        parcel_model(max_retries),
        instructions=INSTRUCTIONS,
        tools=[track_parcel, delivery_window],
        output_type=ParcelReport,
    )


def ask(agent: Agent[None, ParcelReport], question: str) -> ParcelReport:
    """Run the agent on one question; its report."""
    return agent.run_sync(question).output
