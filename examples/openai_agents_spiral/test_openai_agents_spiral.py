"""An Agents SDK agent that spirals (parcel_agent.py): watched by a halt monitor it stops by
itself, well before the SDK's ``max_turns``; left alone, the SDK's cap is what stops it, and
``must_halt`` says so.

The scripted spiral pins ``profile="none"``: its spiral is its own, not a fault's. The last
test runs under the session's profile (``flaky`` in the main job): the SDK's own model retries
ride out the injected errors, on virtual time, and the monitor still stops the spiral.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

# `agents` must be the openai-agents package (another top-level `agents` has no `agents.run`)
if importlib.util.find_spec("agents") is None or importlib.util.find_spec("agents.run") is None:
    if os.environ.get("AGENTCHAOS_REQUIRE_FRAMEWORKS") == "1":
        raise RuntimeError("the openai-agents extra is required here")
    pytest.skip("the openai-agents extra is not installed", allow_module_level=True)

from agents import MaxTurnsExceeded
from parcel_agent import MAX_TURNS, StuckModel, run

from pytest_agentchaos import Chaos
from pytest_agentchaos.trace import Halt, ModelCall


@pytest.mark.chaos(profile="none")
@pytest.mark.must_halt(by=("repetition",), max_model_calls=MAX_TURNS - 1, not_before=3)
def test_the_monitored_agent_stops_its_spiral_before_max_turns(chaos: Chaos) -> None:
    model = StuckModel()
    outcome = run(chaos, model)
    assert outcome.status == "halted" and "repetition" in outcome.reason
    assert model.calls < MAX_TURNS // 2  # long before the SDK's cap
    (halt,) = chaos.trace.of_type(Halt)
    assert halt.detail["by"] == "halt_monitor" and not halt.hard


@pytest.mark.chaos(profile="none")
@pytest.mark.must_halt(by=("repetition",), max_model_calls=MAX_TURNS + 1)
@pytest.mark.xfail(
    strict=True,
    reason="without the monitor the SDK's max_turns stops the spiral: must_halt fails",
)
def test_the_naive_agent_is_stopped_by_max_turns(chaos: Chaos) -> None:
    model = StuckModel()
    try:
        run(chaos, model, watched=False)
    finally:
        assert model.calls == MAX_TURNS  # it spiralled until the cap
    pytest.fail("unreachable: the SDK raises MaxTurnsExceeded")  # pragma: no cover


def test_max_turns_raises_without_the_monitor() -> None:
    """What the xfail above stands on: the naive run ends in the SDK's own exception, which
    the harness records as the framework's hard halt."""
    from pytest_agentchaos.adapters.caps import record_cap

    with Chaos.create() as chaos:
        with pytest.raises(MaxTurnsExceeded) as info:
            run(chaos, StuckModel(), watched=False)
        halt = record_cap(chaos, info.value)
    assert halt is not None and halt.detail["by"] == "framework"
    assert halt.detail["limit"] == MAX_TURNS
    assert len(chaos.trace.of_type(ModelCall)) == MAX_TURNS


@pytest.mark.chaos(virtual_sleep=True)
@pytest.mark.must_halt(by=("repetition", "novelty", "tool_failure"), max_model_calls=60)
def test_under_the_session_profile_the_monitor_still_stops_the_spiral(chaos: Chaos) -> None:
    """Whatever the profile's faults, the SDK retries the model's transient errors (backoff
    on virtual time), tool errors reach the model as the SDK's message, and the monitor
    stops the spiral: by its repetition, or by the tool failing the same way again."""
    outcome = run(chaos, StuckModel())
    assert outcome.status == "halted"
