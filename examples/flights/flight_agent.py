"""The flight-booking agent of seed 003 (the self-correction loop): a scripted model that gets
tool calls wrong the ways the lecture lists, and an agent that repairs them before they reach
the tool.

The model (a script standing in for an LLM) answers a task with one tool call. Its four
classic mistakes: it leaves out the number of passengers, writes the date as "October 26,
2024", writes the cabin as "business class", and calls a tool that does not exist
("book_flights"). The agent runs every call through a ``ParamRepairer`` (schema-driven, it
declines rather than guess) and routes a call for an unknown tool to the closest one it has.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

BOOKINGS: list[dict[str, Any]] = []


def book_flight(
    origin: str,
    destination: str,
    departure_date: dt.date,
    passengers: int,
    cabin_class: Literal["economy", "premium_economy", "business", "first"] = "economy",
) -> dict[str, Any]:
    """Book a flight.

    Args:
        origin: IATA code of the departure airport.
        destination: IATA code of the arrival airport.
        departure_date: the day of the flight, YYYY-MM-DD.
        passengers: how many people fly.
        cabin_class: economy, premium_economy, business or first.
    """
    # a strict API: it checks what it is given, as real booking APIs do
    day = dt.date.fromisoformat(str(departure_date))
    if not isinstance(passengers, int) or isinstance(passengers, bool) or not 1 <= passengers <= 9:
        raise ValueError(f"passengers must be an integer from 1 to 9, got {passengers!r}")
    if cabin_class not in ("economy", "premium_economy", "business", "first"):
        raise ValueError(
            f"Invalid value for 'cabin_class': must be one of economy, premium_economy, "
            f"business, first (got {cabin_class!r})"
        )
    booking = {
        "origin": origin,
        "destination": destination,
        "departure_date": day.isoformat(),
        "passengers": passengers,
        "cabin_class": cabin_class,
    }
    BOOKINGS.append(booking)
    return {"confirmation": f"PNR{len(BOOKINGS):04d}", **booking}


SPEC = ToolSpec.from_function(book_flight)

#: The tasks of the lecture's scenarios, and what the (scripted) model answers to each.
SCENARIOS: dict[str, tuple[str, dict[str, Any]]] = {
    "missing_passengers": (
        "Book an economy flight for 2 passengers from LIS to OSL on 2024-10-26.",
        {"tool": "book_flight", "args": {"origin": "LIS", "destination": "OSL",
                                         "departure_date": "2024-10-26"}},
    ),
    "date_in_words": (
        "Book 1 passenger from YUL to CDG on October 26, 2024.",
        {"tool": "book_flight", "args": {"origin": "YUL", "destination": "CDG",
                                         "departure_date": "October 26, 2024", "passengers": 1}},
    ),
    "business_class": (
        "Book business class for 1 passenger from NRT to SFO on 2024-11-02.",
        {"tool": "book_flight", "args": {"origin": "NRT", "destination": "SFO",
                                         "departure_date": "2024-11-02", "passengers": 1,
                                         "cabin_class": "business class"}},
    ),
    "unknown_tool": (
        "Book 3 passengers from OSL to LIS on 2024-12-20.",
        {"tool": "book_flights", "args": {"origin": "OSL", "destination": "LIS",
                                          "departure_date": "2024-12-20", "passengers": 3}},
    ),
}  # fmt: skip


def scripted_model(task: str) -> dict[str, Any]:
    """The model's tool call for ``task`` (a copy: the agent may change it)."""
    for known, answer in SCENARIOS.values():
        if known == task:
            return {"tool": answer["tool"], "args": dict(answer["args"])}
    raise ValueError(f"the script has no answer for {task!r}")


@dataclass
class FlightAgent:
    """Asks the model for a tool call and makes it; ``repair`` runs every call through the
    repairer (a missing value is read from the task) and routes an unknown tool to the
    closest known one."""

    tools: dict[str, Callable[..., Any]]
    model: Callable[[str], dict[str, Any]] = scripted_model
    routed: list[tuple[str, str]] = field(default_factory=list)

    def run(self, task: str) -> dict[str, Any]:
        call = self.model(task)
        name = call["tool"]
        if name not in self.tools:  # the seed's ALTERNATIVE_ROUTE
            close = difflib.get_close_matches(name, list(self.tools), n=1, cutoff=0.8)
            if not close:
                raise LookupError(f"no tool {name!r} and none like it")
            self.routed.append((name, close[0]))
            name = close[0]
        result: dict[str, Any] = self.tools[name](**call["args"])
        return result


def repairer_for(task: str) -> ParamRepairer:
    """The agent's repairer for one task (it reads missing values from the task's text)."""
    return ParamRepairer(SPEC, task=task)
