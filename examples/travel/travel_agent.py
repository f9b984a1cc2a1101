"""A small tool-using travel agent: the example that the chaos suite exercises.

A scripted planner (standing in for an LLM) chooses the next action; the agent calls
``search_flights`` (a Python tool) and ``get_weather`` (an HTTP API through httpx), and
retries transient failures with exponential backoff on an injectable clock, honouring
Retry-After. In production the clock is real; under pytest-agentchaos it is virtual, so a
30-second timeout and a minute of backoff cost no wall time.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from pytest_agentchaos.clock import Clock, RealClock

FLIGHT_SCHEMA = {
    "type": "object",
    "properties": {
        "origin": {"type": "string", "minLength": 3},
        "destination": {"type": "string", "minLength": 3},
        "date": {"type": "string", "format": "date"},
        "passengers": {"type": "integer", "minimum": 1, "maximum": 9},
    },
    "required": ["origin", "destination", "date"],
    "additionalProperties": False,
}

WEATHER_URL = "https://weather.example/v1/current"


def search_flights(
    origin: str, destination: str, date: str, passengers: int = 1
) -> list[dict[str, Any]]:
    """Find flights between two cities on a date (YYYY-MM-DD)."""
    if len(date) != 10 or date[4] != "-" or date[7] != "-":
        raise ValueError(f"date must be YYYY-MM-DD, got {date!r}")
    if not isinstance(passengers, int) or not 1 <= passengers <= 9:
        raise ValueError(f"passengers must be an integer from 1 to 9, got {passengers!r}")
    return [
        {
            "flight": f"AC{100 + i}",
            "from": origin,
            "to": destination,
            "date": date,
            "price": 180 + 45 * i,
        }
        for i in range(3)
    ]


def get_weather(client: httpx.Client, city: str) -> dict[str, Any]:
    """Current weather for a city, from the weather API."""
    response = client.get(WEATHER_URL, params={"city": city})
    response.raise_for_status()
    data = json.loads(response.text)  # a garbled body raises here, like any bad payload
    if not isinstance(data, dict) or "temp_c" not in data:
        raise ValueError(f"unexpected weather payload: {data!r}")
    return data


def scripted_planner(state: dict[str, Any]) -> dict[str, Any]:
    """Stands in for the LLM: the next action, given what the agent knows so far."""
    if "flights" not in state:
        return {
            "action": "search_flights",
            "args": {
                "origin": state["origin"],
                "destination": state["destination"],
                "date": state["date"],
            },
        }
    if "weather" not in state:
        return {"action": "get_weather", "args": {"city": state["destination"]}}
    return {"action": "finish"}


class GaveUp(Exception):
    """The agent stopped trying: a persistent error, or retries used up."""


@dataclass
class TravelAgent:
    """Plans a trip: flights, then weather, then an itinerary."""

    tools: dict[str, Callable[..., Any]]
    planner: Callable[[dict[str, Any]], dict[str, Any]] = scripted_planner
    clock: Clock = field(default_factory=RealClock)
    max_retries: int = 8
    base_delay: float = 1.0
    max_delay: float = 60.0
    max_turns: int = 20
    retries: int = 0

    def _with_retries(self, what: str, fn: Callable[[], Any]) -> Any:
        for attempt in range(self.max_retries + 1):
            try:
                return fn()
            except (TimeoutError, ConnectionError, httpx.TransportError, ValueError) as exc:
                delay = self._delay(attempt, getattr(exc, "retry_after", None))
            except httpx.HTTPStatusError as exc:
                status = exc.response.status_code
                if status != 429 and status < 500:
                    raise GaveUp(f"{what}: HTTP {status} is not retryable") from exc
                delay = self._delay(attempt, _retry_after(exc.response.headers))
            except Exception as exc:
                status = getattr(exc, "status", None)
                if not isinstance(status, int) or (status != 429 and status < 500):
                    raise GaveUp(f"{what}: {exc}") from exc
                delay = self._delay(attempt, getattr(exc, "retry_after", None))
            if attempt == self.max_retries:
                break
            self.retries += 1
            self.clock.sleep(delay)
        raise GaveUp(f"{what}: still failing after {self.max_retries} retries")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        backoff = min(self.max_delay, self.base_delay * 2**attempt)
        return max(backoff, float(retry_after)) if retry_after else backoff

    def run(self, origin: str, destination: str, date: str) -> dict[str, Any]:
        state: dict[str, Any] = {"origin": origin, "destination": destination, "date": date}
        for _ in range(self.max_turns):
            plan = self._with_retries("planner", lambda: self.planner(state))
            if plan["action"] == "finish":
                cheapest = min(state["flights"], key=lambda f: f["price"])
                return {"flight": cheapest, "weather": state["weather"], "retries": self.retries}
            tool, args = self.tools[plan["action"]], plan["args"]
            result = self._with_retries(plan["action"], lambda: tool(**args))  # noqa: B023
            if plan["action"] == "search_flights":
                if not isinstance(result, list) or not result:
                    raise GaveUp(f"search_flights returned no flights: {result!r}")
                state["flights"] = result
            else:
                state["weather"] = result
        raise GaveUp(f"no itinerary after {self.max_turns} turns")


def _retry_after(headers: httpx.Headers) -> float | None:
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
