"""Fixtures for the travel agent's chaos suite: tools wrapped by the `chaos` fixture."""

from __future__ import annotations

import httpx
import pytest
from travel_agent import FLIGHT_SCHEMA, WEATHER_URL, TravelAgent, get_weather, scripted_planner

from pytest_agentchaos import Chaos


def _weather(request: httpx.Request) -> httpx.Response:
    city = request.url.params.get("city", "?")
    return httpx.Response(200, json={"city": city, "temp_c": 21, "sky": "clear"})


@pytest.fixture
def agent(chaos: Chaos) -> TravelAgent:
    """The agent with every tool, the weather API and the planner under chaos."""
    chaos.http.get(WEATHER_URL, name="get_weather").mock(side_effect=_weather)
    client = httpx.Client()
    tools = chaos.wrap_tools(
        {
            "search_flights": __import__("travel_agent").search_flights,
            "get_weather": lambda city: get_weather(client, city),
        },
        schemas={"search_flights": FLIGHT_SCHEMA},
    )
    # get_weather is traced twice: as a tool (Python) and as its HTTP request.
    return TravelAgent(
        tools=tools, planner=chaos.model(scripted_planner, name="planner"), clock=chaos.clock
    )
