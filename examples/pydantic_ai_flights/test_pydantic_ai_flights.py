"""The pydantic-ai flight agent's chaos suite: its stubborn model's four malformed calls are
repaired before pydantic-ai validates them, then the same agent runs under the `malformed`
profile (30% of the tool's calls corrupted on the way). The agent runs whole under chaos in
one line (`chaos_agent`): its model and its tool go through the run.

Without the repair loop, pydantic-ai's retry prompts do not help this model: the run ends in
`UnexpectedModelBehavior` (an expected failure, below).
"""

from __future__ import annotations

import pytest
from pa_flight_agent import BOOKINGS, SCENARIOS, make_agent, repairer_for
from pydantic_ai.exceptions import UnexpectedModelBehavior

from pytest_agentchaos import Chaos
from pytest_agentchaos.adapters.pydantic_ai import chaos_agent
from pytest_agentchaos.trace import ToolResult


@pytest.fixture(autouse=True)
def _fresh_bookings() -> None:
    BOOKINGS.clear()


def book(chaos: Chaos, task: str, *, repair: bool = True) -> str:
    agent = make_agent()
    repairers = {"book_flight": repairer_for(task)} if repair else None
    with chaos_agent(chaos, agent, repair=repairers):
        return agent.run_sync(task).output


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
@pytest.mark.chaos(profile="none")
@pytest.mark.must_repair
def test_each_malformed_call_is_repaired_before_pydantic_ai_rejects_it(
    chaos: Chaos, scenario: str
) -> None:
    task, _, asked = SCENARIOS[scenario]
    assert book(chaos, task) == "Booked: PNR0001."
    assert [asked] == BOOKINGS
    # repaired in place: one tool call, no validation error, no retry round trip
    assert [(r.ok, r.error_type) for r in chaos.trace.of_type(ToolResult)] == [(True, None)]
    assert chaos.session.counters()["model_calls"] == 2


# not searched: its last assertion checks that the profile's own draws corrupted a call
@pytest.mark.chaos(profile="malformed", seed=11, explore=False)
@pytest.mark.must_repair
def test_under_the_malformed_profile_every_booking_is_the_one_asked_for(chaos: Chaos) -> None:
    task, _, asked = SCENARIOS["business_class"]
    for _ in range(12):
        assert book(chaos, task).startswith("Booked: PNR")
    assert [asked] * 12 == BOOKINGS
    assert chaos.trace.faults(), "the profile corrupted no call: the test proves nothing"


@pytest.mark.xfail(
    raises=UnexpectedModelBehavior,
    strict=True,
    reason="without the repair loop the stubborn model exhausts the tool's retries",
)
@pytest.mark.chaos(profile="none")
def test_without_the_repair_loop_the_model_never_gets_it_right(chaos: Chaos) -> None:
    task, _, _ = SCENARIOS["date_in_words"]
    book(chaos, task, repair=False)
