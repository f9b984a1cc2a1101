"""Traces recorded by earlier runs (fixtures/traces) stay readable, judgeable and replayable.

The travel-agent traces were written by `pytest examples --chaos-profile=flaky --chaos-seed=8
--chaos-trace-dir=...`. Replaying a trace's schedule through the same agent must reproduce
the run event for event: a failure can be replayed from its trace alone.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_agentchaos.inject import Chaos
from pytest_agentchaos.trace import RunEnded, RunStarted, Trace
from pytest_agentchaos.verdicts import must_halt

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "fixtures" / "traces"


def load(name: str) -> Trace:
    return Trace.from_json((TRACES / name).read_text(encoding="utf-8"))


@pytest.fixture
def travel() -> Any:
    sys.path.insert(0, str(ROOT / "examples" / "travel"))
    try:
        import travel_agent

        yield travel_agent
    finally:
        sys.path.remove(str(ROOT / "examples" / "travel"))


def test_recorded_traces_still_parse_with_their_queries() -> None:
    flaky = load("travel_flaky_seed8.json")
    assert flaky.meta["profile"] == "flaky" and flaky.meta["session_seed"] == 8
    assert flaky.fault_counts() == {"timeout": 2, "connection_error": 1, "http_error": 1}
    assert {c.tool for c in flaky.tool_calls()} == {"search_flights", "get_weather"}
    runaway = load("travel_runaway_seed8.json")
    assert [(b.budget, b.limit) for b in runaway.budget_exhausted()] == [("max_steps", 25)]


def test_verdicts_judge_recorded_traces() -> None:
    assert must_halt(load("travel_flaky_seed8.json"), max_steps=80, max_seconds=1800).ok
    verdict = must_halt(load("travel_runaway_seed8.json"), max_steps=25)
    assert not verdict.ok
    assert "hard budget max_steps=25 stopped it at step 25" in verdict.explanation


def _events(trace: Trace) -> list[dict[str, Any]]:
    skip = (RunStarted, RunEnded)
    return [
        json.loads(json.dumps(e.to_dict(), default=repr)) for e in trace if not isinstance(e, skip)
    ]


def test_replaying_a_recorded_schedule_reproduces_the_run(travel: Any) -> None:
    recorded = load("travel_flaky_seed8.json")
    with Chaos.create(schedule=recorded.schedule()) as chaos:

        def weather(request: httpx.Request) -> httpx.Response:
            city = request.url.params.get("city", "?")
            return httpx.Response(200, json={"city": city, "temp_c": 21, "sky": "clear"})

        chaos.http.get(travel.WEATHER_URL, name="get_weather").mock(side_effect=weather)
        client = httpx.Client()
        tools = chaos.wrap_tools(
            {
                "search_flights": travel.search_flights,
                "get_weather": lambda city: travel.get_weather(client, city),
            },
            schemas={"search_flights": travel.FLIGHT_SCHEMA},
        )
        agent = travel.TravelAgent(
            tools=tools,
            planner=chaos.model(travel.scripted_planner, name="planner"),
            clock=chaos.clock,
        )
        agent.run("YUL", "LIS", "2025-06-01")
    assert _events(chaos.trace) == _events(recorded)
