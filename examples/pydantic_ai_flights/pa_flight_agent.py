"""A pydantic-ai flight-booking agent whose model gets the booking tool's arguments wrong, and
the repair loop that fixes them before pydantic-ai's validation rejects them.

The model is scripted (a ``FunctionModel``, offline and deterministic) and stubborn: for each
task it sends the same malformed call every time, however often pydantic-ai's retry prompt
tells it what is wrong (a date written in words, a number written as a word, a cabin class
that is not one of the enum's values, a missing number of passengers). Only a repairer
between the model and the tool gets the booking made: ``ParamRepairer`` over the tool's own
JSON Schema, reading what the call leaves out from the task.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import Field
from pydantic_ai import Agent, Tool
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pytest_agentchaos.adapters.pydantic_ai import tool_spec
from pytest_agentchaos.repair import ParamRepairer

BOOKINGS: list[dict[str, Any]] = []


def book_flight(
    origin: Annotated[str, Field(pattern="^[A-Z]{3}$")],
    destination: Annotated[str, Field(pattern="^[A-Z]{3}$")],
    departure_date: dt.date,
    passengers: Annotated[int, Field(ge=1, le=9)],
    cabin_class: Literal["economy", "premium_economy", "business", "first"] = "economy",
) -> dict[str, Any]:
    """Book a flight.

    Args:
        origin: IATA code of the departure airport.
        destination: IATA code of the arrival airport.
        departure_date: the day of the flight, YYYY-MM-DD.
        passengers: how many people fly, from 1 to 9.
        cabin_class: economy, premium_economy, business or first.
    """
    booking = {
        "origin": origin,
        "destination": destination,
        "departure_date": departure_date.isoformat(),
        "passengers": passengers,
        "cabin_class": cabin_class,
    }
    BOOKINGS.append(booking)
    return {"confirmation": f"PNR{len(BOOKINGS):04d}", **booking}


#: The booking tool as the agent has it: three retries, so a stubborn model gets a few tries.
BOOK_FLIGHT = Tool(book_flight, max_retries=3)

#: The tasks, the call the model makes for each (always the same, malformed), and the
#: booking that was asked for.
SCENARIOS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "date_in_words": (
        "Book 1 passenger from YUL to CDG on October 26, 2024.",
        {"origin": "YUL", "destination": "CDG", "departure_date": "October 26, 2024",
         "passengers": 1},
        {"origin": "YUL", "destination": "CDG", "departure_date": "2024-10-26",
         "passengers": 1, "cabin_class": "economy"},
    ),
    "number_in_words": (
        "Book two passengers from LIS to OSL on 2024-11-02.",
        {"origin": "LIS", "destination": "OSL", "departure_date": "2024-11-02",
         "passengers": "two"},
        {"origin": "LIS", "destination": "OSL", "departure_date": "2024-11-02",
         "passengers": 2, "cabin_class": "economy"},
    ),
    "business_class": (
        "Book business class for 1 passenger from NRT to SFO on 2024-12-20.",
        {"origin": "NRT", "destination": "SFO", "departure_date": "2024-12-20",
         "passengers": 1, "cabin_class": "business class"},
        {"origin": "NRT", "destination": "SFO", "departure_date": "2024-12-20",
         "passengers": 1, "cabin_class": "business"},
    ),
    "missing_passengers": (
        "Book an economy flight for 3 passengers from OSL to LIS on 2025-01-15.",
        {"origin": "OSL", "destination": "LIS", "departure_date": "2025-01-15"},
        {"origin": "OSL", "destination": "LIS", "departure_date": "2025-01-15",
         "passengers": 3, "cabin_class": "economy"},
    ),
}  # fmt: skip


def _task(messages: list[ModelMessage]) -> str:
    for message in messages:
        for part in getattr(message, "parts", ()):
            if part.part_kind == "user-prompt" and isinstance(part.content, str):
                return part.content
    raise ValueError("no task in the conversation")


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The stubborn model: the same call for its task until a booking comes back."""
    task = _task(messages)
    for part in messages[-1].parts:
        if isinstance(part, ToolReturnPart) and part.outcome == "success":
            return ModelResponse(parts=[TextPart(f"Booked: {part.content['confirmation']}.")])
    for known, call, _ in SCENARIOS.values():
        if known == task:
            return ModelResponse(parts=[ToolCallPart("book_flight", dict(call))])
    raise ValueError(f"the script has no answer for {task!r}")


def make_agent() -> Agent[None, str]:
    """The agent: the scripted model and the booking tool."""
    return Agent(FunctionModel(scripted_model), tools=[BOOK_FLIGHT])


def repairer_for(task: str) -> ParamRepairer:
    """The repair loop for one task: the booking tool's own schema, values it leaves out read
    from the task's text."""
    return ParamRepairer(tool_spec(BOOK_FLIGHT), task=task)
