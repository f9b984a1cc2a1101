"""The travel agent's chaos suite: run it with `pytest examples --chaos-profile=flaky`.

Tests without a profile in their marker run under the session's profile (`--chaos-profile`),
so the same suite proves the agent survives `flaky`, `outage`, `rate_limited` ...
"""

from __future__ import annotations

import pytest
from travel_agent import GaveUp, TravelAgent

from pytest_agentchaos import Chaos


@pytest.mark.must_halt(max_steps=80, max_seconds=1800)
def test_plans_a_trip_under_the_session_profile(agent: TravelAgent, chaos: Chaos) -> None:
    itinerary = agent.run("YUL", "LIS", "2025-06-01")
    assert itinerary["flight"]["price"] == 180
    assert itinerary["weather"]["city"] == "LIS"
    # Every failure the agent saw was retried: one extra call per failure. (A failed
    # weather request shows twice, as its HTTP request and as the tool call around it.)
    seen = [e for e in chaos.trace.errors() if getattr(e, "channel", "model") != "http"]
    assert agent.retries == len(seen)


# not searched: asserts the two 30 s timeouts it declares on search_flights
@pytest.mark.chaos(
    faults=[{"kind": "timeout", "seconds": 30, "tools": ["search_flights"], "first": 2}],
    explore=False,
)
@pytest.mark.must_halt(max_steps=40)
def test_waits_out_two_timeouts_on_virtual_time(agent: TravelAgent, chaos: Chaos) -> None:
    agent.run("YUL", "LIS", "2025-06-01")
    timeouts = [f for f in chaos.trace.faults("timeout") if f.target == "search_flights"]
    assert [f.index for f in timeouts[:2]] == [1, 2]
    # 2 x 30 s hanging plus 1 s + 2 s of backoff: a minute of virtual time, no wall time.
    assert chaos.clock.now() >= 63


# not searched: asserts on the rate limits seed 7 draws from the profile
@pytest.mark.chaos(profile="rate_limited", seed=7, explore=False)
@pytest.mark.must_halt(max_seconds=3600)
def test_honours_retry_after(agent: TravelAgent, chaos: Chaos) -> None:
    agent.run("YUL", "LIS", "2025-06-01")
    limited = chaos.trace.faults("rate_limit")
    assert limited, "seed 7 rate-limits at least one call"
    assert chaos.clock.now() >= sum(f.detail["retry_after"] for f in limited)


# not searched: asserts the outage profile's two-minute window
@pytest.mark.chaos(profile="outage", explore=False)
@pytest.mark.must_halt(max_steps=80)
def test_rides_out_a_two_minute_outage(agent: TravelAgent, chaos: Chaos) -> None:
    agent.max_retries = 10
    agent.run("YUL", "LIS", "2025-06-01")
    assert chaos.clock.now() >= 120  # the outage window


# not searched: asserts the agent gives up on the 404 it declares on every weather request
@pytest.mark.chaos(
    faults=[{"kind": "http_error", "status": 404, "tools": ["get_weather"], "channels": "http"}],
    explore=False,
)
def test_gives_up_on_a_persistent_404(agent: TravelAgent, chaos: Chaos) -> None:
    with pytest.raises(GaveUp, match="404"):
        agent.run("YUL", "LIS", "2025-06-01")
    weather_404s = [f for f in chaos.trace.faults("http_error") if f.detail["status"] == 404]
    assert len(weather_404s) == 1  # not retried: a 404 is not transient


@pytest.mark.xfail(
    strict=True, reason="a naive agent retries forever: the max_steps budget must stop it"
)
@pytest.mark.chaos(faults=[{"kind": "http_error", "status": 503, "tools": ["search_flights"]}])
@pytest.mark.must_halt(max_steps=25)
def test_a_naive_agent_that_never_gives_up_is_stopped(agent: TravelAgent) -> None:
    agent.max_retries = 10**9
    agent.run("YUL", "LIS", "2025-06-01")
