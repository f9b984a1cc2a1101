"""An airline's customer-service app on the OpenAI Agents SDK, after the SDK's own example:
a triage agent hands the customer off to an FAQ agent or a seat booking agent; the booking
agent asks a seat map agent (used as a tool) whether a seat is free before it moves the
passenger; the FAQ agent hands a question it cannot answer back to triage.

Every agent's model calls are retried by the SDK's own retry runtime with its stock
policies: dropped connections and timeouts (``network_error()``), rate limits and server
errors (``http_status([...])``), whatever the provider advises (``provider_suggested()``),
waiting the Retry-After the provider sends. The FAQ lookup is a network call with the SDK's
own tool timeout.

The models are scripted (:class:`Playbook`: offline, deterministic) but read their
conversation like a model would: a tool error is retried a couple of times, then the agent
apologises. ``ask(chaos, question)`` runs the whole app under chaos in one line
(``chaos_agent``), every agent its own model target.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from agents import (
    Agent,
    MaxTurnsExceeded,
    Model,
    ModelResponse,
    ModelSettings,
    Runner,
    function_tool,
    handoff,
    set_tracing_disabled,
)
from agents.retry import ModelRetryBackoffSettings, ModelRetrySettings, retry_policies
from agents.testing import assistant_message, function_call
from agents.usage import Usage

from pytest_agentchaos import Chaos
from pytest_agentchaos.adapters.openai_agents import chaos_agent

set_tracing_disabled(True)

TRIAGE, FAQ, BOOKING, SEAT_MAP = "Triage Agent", "FAQ Agent", "Seat Booking Agent", "Seat Map Agent"
AGENTS = (TRIAGE, FAQ, BOOKING, SEAT_MAP)

#: The customers' questions and the answers the app gives when nothing goes wrong.
ANSWERS = {
    "How many bags can I bring on board?": "You may bring one carry-on bag and one personal item.",
    "Please move me to seat 12A.": "Done: your seat is now 12A.",
    "Is there wifi on the Mars shuttle?": "Sorry, I cannot help with that question.",
}
#: What the app says when a step keeps failing: honest, not a crash.
APOLOGIES = (
    "Sorry, the FAQ is unavailable right now.",
    "Sorry, I could not change your seat right now.",
    "Sorry, the seat map is unavailable right now.",
)
#: How often an agent tries a failing tool before it apologises.
TOOL_TRIES = 3

#: The seats booked, by passenger (what ``update_seat`` changed).
SEATS: dict[str, str] = {}

RETRY = ModelSettings(
    retry=ModelRetrySettings(
        max_retries=5,
        backoff=ModelRetryBackoffSettings(initial_delay=1.0, max_delay=8.0, multiplier=2.0),
        policy=retry_policies.any(
            retry_policies.provider_suggested(),
            retry_policies.network_error(),
            retry_policies.http_status([408, 429, 500, 502, 503, 504]),
        ),
    )
)


# -- tools ---------------------------------------------------------------------------------------


@function_tool(timeout=10)
async def faq_lookup(question: str) -> str:
    """Look a question up in the airline's FAQ."""
    if "bag" in question.lower():
        return "Answer: You may bring one carry-on bag and one personal item."
    return "No answer in the FAQ."


@function_tool
def seat_map(seat: str) -> str:
    """Whether a seat is free on the passenger's flight."""
    return f"Seat {seat} is free."


@function_tool
def update_seat(seat: str) -> str:
    """Move the passenger to a seat."""
    SEATS["passenger"] = seat
    return f"Seat change to {seat} confirmed."


# -- the scripted models ---------------------------------------------------------------------------

Items = list[dict[str, Any]]


def _items(input: Any) -> Items:
    if isinstance(input, str):
        return [{"role": "user", "content": input}]
    return [i if isinstance(i, dict) else i.model_dump() for i in input]


def _question(items: Items) -> str:
    for item in items:
        if item.get("role") == "user" and isinstance(item.get("content"), str):
            return str(item["content"])
    return ""


def _last_output(items: Items) -> tuple[str | None, str]:
    """(tool, output) of the conversation's last item when it is a tool's output."""
    if not items or items[-1].get("type") != "function_call_output":
        return None, ""
    names = {i.get("call_id"): i.get("name") for i in items if i.get("type") == "function_call"}
    return names.get(items[-1].get("call_id")), str(items[-1].get("output"))


def _tries(items: Items, tool: str) -> int:
    return sum(1 for i in items if i.get("type") == "function_call" and i.get("name") == tool)


def _say(text: str) -> list[Any]:
    return [assistant_message(text)]


def _call(tool: str, args: dict[str, Any], call_id: str) -> list[Any]:
    return [function_call(tool, args, call_id=call_id)]


def triage(items: Items, n: int) -> list[Any]:
    if _tries(items, "transfer_to_triage_agent"):  # the FAQ agent could not answer
        return _say(ANSWERS["Is there wifi on the Mars shuttle?"])
    if "seat" in _question(items).lower():
        return _call("transfer_to_seat_booking_agent", {}, f"triage-{n}")
    return _call("transfer_to_faq_agent", {}, f"triage-{n}")


def faq(items: Items, n: int) -> list[Any]:
    tool, out = _last_output(items)
    if tool == "faq_lookup":
        if out.startswith("Answer: "):
            return _say(out.removeprefix("Answer: "))
        if out.startswith("No answer"):
            return _call("transfer_to_triage_agent", {}, f"faq-{n}")
        if _tries(items, "faq_lookup") >= TOOL_TRIES:
            return _say(APOLOGIES[0])
    return _call("faq_lookup", {"question": _question(items)}, f"faq-{n}")


def booking(items: Items, n: int) -> list[Any]:
    tool, out = _last_output(items)
    if tool == "check_seat_map" and "is free" in out:
        return _call("update_seat", {"seat": "12A"}, f"booking-{n}")
    if tool == "update_seat" and "confirmed" in out:
        return _say(ANSWERS["Please move me to seat 12A."])
    if tool is not None and _tries(items, tool) >= TOOL_TRIES:
        return _say(APOLOGIES[1])
    if tool == "update_seat":
        return _call("update_seat", {"seat": "12A"}, f"booking-{n}")
    return _call("check_seat_map", {"input": "Is seat 12A free?"}, f"booking-{n}")


def seat_map_reader(items: Items, n: int) -> list[Any]:
    tool, out = _last_output(items)
    if tool == "seat_map" and "is free" in out:
        return _say(out)
    if tool == "seat_map" and _tries(items, "seat_map") >= TOOL_TRIES:
        return _say(APOLOGIES[2])
    return _call("seat_map", {"seat": "12A"}, f"map-{n}")


class Playbook(Model):
    """A scripted model: ``decide(conversation, n)`` is its ``n``-th answer. ``calls``: how
    often it was really asked."""

    def __init__(self, decide: Callable[[Items, int], Sequence[Any]]) -> None:
        self.decide = decide
        self.calls = 0

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        n, self.calls = self.calls, self.calls + 1
        usage = Usage(requests=1, input_tokens=120, output_tokens=20, total_tokens=140)
        return ModelResponse(
            output=list(self.decide(_items(input), n)), usage=usage, response_id=None
        )

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("this example does not stream")
        yield  # pragma: no cover


def build_app() -> Agent[Any]:
    """The app's entry point (the triage agent), with fresh models."""
    seat_map_agent = Agent(
        name=SEAT_MAP,
        instructions="Say whether the seat asked about is free.",
        model=Playbook(seat_map_reader),
        model_settings=RETRY,
        tools=[seat_map],
    )
    faq_agent = Agent(
        name=FAQ,
        handoff_description="Answers questions about baggage, wifi and the like.",
        instructions="Answer from the FAQ; hand anything else back to triage.",
        model=Playbook(faq),
        model_settings=RETRY,
        tools=[faq_lookup],
    )
    booking_agent = Agent(
        name=BOOKING,
        handoff_description="Changes a passenger's seat.",
        instructions="Check the seat map, then move the passenger.",
        model=Playbook(booking),
        model_settings=RETRY,
        tools=[seat_map_agent.as_tool("check_seat_map", "Ask the seat map agent."), update_seat],
    )
    triage_agent = Agent(
        name=TRIAGE,
        instructions="Hand the customer to the agent that can help.",
        model=Playbook(triage),
        model_settings=RETRY,
        handoffs=[faq_agent, handoff(booking_agent)],
    )
    faq_agent.handoffs.append(triage_agent)
    booking_agent.handoffs.append(triage_agent)
    return triage_agent


def ask(chaos: Chaos, question: str, *, max_turns: int = 12) -> str:
    """The app's answer to ``question``, with every agent under ``chaos`` (one line); a run
    that the SDK's turn cap stops says so."""
    app = chaos_agent(chaos, build_app())
    try:
        return str(Runner.run_sync(app, question, max_turns=max_turns).final_output)
    except MaxTurnsExceeded:
        return "(stopped by max_turns)"
