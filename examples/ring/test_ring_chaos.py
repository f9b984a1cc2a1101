"""The ring-graph agent's chaos suite: `pytest examples --chaos-profile=flaky` (or outage).

The marker's fault keeps the data tool down for its first 12 calls, so a loop arises in every
run whatever the session profile adds: must_escape then checks that the agent got out.
"""

from __future__ import annotations

import pytest
from ring_agent import GRAPH, fetch_data, naive_agent, supervised_agent

from pytest_agentchaos import Chaos
from pytest_agentchaos.escape import Supervisor

DOWN = {"kind": "http_error", "status": 503, "tools": ["fetch_data"], "first": 12}


# not searched: asserts the escape the endpoint it declares down forces
@pytest.mark.chaos(faults=[DOWN], explore=False)
@pytest.mark.must_escape(within_steps=20)
@pytest.mark.must_halt(max_steps=120)
def test_supervised_agent_escapes_the_ring(chaos: Chaos) -> None:
    supervisor = Supervisor.for_run(chaos, graph=GRAPH)
    supervised_agent(chaos.wrap(fetch_data), supervisor)
    interventions = [e.action for e in chaos.trace if e.type_name == "Intervention"]
    assert "retry" in interventions or "explore" in interventions


@pytest.mark.xfail(strict=True, reason="without the escape stack the agent circles the ring")
@pytest.mark.chaos(faults=[DOWN])
@pytest.mark.must_escape(within_steps=20)
def test_naive_agent_does_not_escape(chaos: Chaos) -> None:
    naive_agent(chaos.wrap(fetch_data), chaos.step)
