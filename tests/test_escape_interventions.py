"""Loop interventions: Supervisor.visit/check climbs retry -> explore -> rollback -> escalate
-> stop while a loop persists; the ring agent of seed 000 escapes with it and not without."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_agentchaos.errors import ChaosConfigError, HardHalt
from pytest_agentchaos.escape import EscapePolicy, Supervisor
from pytest_agentchaos.escape.interventions import EmergencyStop, Escalated
from pytest_agentchaos.inject import Chaos
from pytest_agentchaos.trace import Intervention

RING = {"A": ["B"], "B": ["C"], "C": ["A", "D"], "D": ["E"], "E": []}


def circle(supervisor: Supervisor, laps: int, start: str = "A") -> list[str]:
    """Walk the ring A -> B -> C for ``laps`` laps, checking at every node."""
    actions = []
    for node in "ABC" * laps:
        supervisor.visit(node)
        actions.append(supervisor.check().kind)
    return actions


def test_no_loop_no_intervention() -> None:
    supervisor = Supervisor(graph=RING)
    for node in "ABCDE":
        supervisor.visit(node)
        assert supervisor.check().kind == "continue"


def test_the_ladder_is_climbed_one_rung_per_check_while_the_loop_persists() -> None:
    rolled_back: list[int] = []
    escalated: list[dict[str, Any]] = []
    with Chaos.create() as chaos:
        supervisor = Supervisor.for_run(
            chaos,
            graph={"A": ["B"], "B": ["C"], "C": ["A"]},  # no way out: explore is skipped
            rollback=lambda: rolled_back.append(1),
            escalate=escalated.append,
        )
        with pytest.raises(EmergencyStop):
            circle(supervisor, 4)
    actions = [i.action for i in chaos.trace.of_type(Intervention) if i.action != "backoff"]
    assert actions == ["retry", "rollback", "escalate", "stop"]
    assert rolled_back == [1] and "repeated" in escalated[0]["loop"]
    assert issubclass(EmergencyStop, HardHalt) and not issubclass(EmergencyStop, Exception)


def test_explore_takes_the_edge_out_of_the_cycle_at_the_node_that_has_one() -> None:
    supervisor = Supervisor(graph=RING)
    kinds = circle(supervisor, 3)
    assert kinds[-1] == "retry"  # the loop A B C is detected at the third C
    assert kinds[:-1] == ["continue"] * 8
    supervisor.visit("A")
    assert supervisor.check().kind == "continue"  # A has no exit: explore waits for C
    supervisor.visit("B")
    assert supervisor.check().kind == "continue"
    supervisor.visit("C")
    action = supervisor.check()
    assert (action.kind, action.to) == ("explore", "D")


def test_without_hooks_escalation_raises_a_clear_error() -> None:
    supervisor = Supervisor(
        graph={"A": ["B"], "B": ["A"]},
        policy=EscapePolicy(interventions=("escalate",)),
    )
    with pytest.raises(Escalated, match="loop not broken, handed to a human: @A -> @B repeated"):
        for node in "ABABAB":
            supervisor.visit(node)
            supervisor.check()


def test_a_new_loop_starts_at_the_bottom_of_the_ladder() -> None:
    supervisor = Supervisor(
        graph={"A": ["B"], "B": ["A"], "X": ["Y"], "Y": ["X"]},
        policy=EscapePolicy(interventions=("retry",)),
    )
    first = [k for k in circle_pairs(supervisor, "AB", 3) if k != "continue"]
    second = [k for k in circle_pairs(supervisor, "XY", 3) if k != "continue"]
    assert first == ["retry"] and second == ["retry"]


def circle_pairs(supervisor: Supervisor, pair: str, laps: int) -> list[str]:
    kinds = []
    for node in pair * laps:
        supervisor.visit(node)
        kinds.append(supervisor.check().kind)
    return kinds


def test_interventions_are_configurable_and_validated() -> None:
    assert EscapePolicy.from_dict({"interventions": ["explore", "stop"]}).interventions == (
        "explore",
        "stop",
    )
    with pytest.raises(
        ChaosConfigError,
        match=r"^\[escape\]: interventions\[0\]: 'pray' is not one of retry, explore, rollback",
    ):
        EscapePolicy.from_dict({"interventions": ["pray"]})
    with pytest.raises(ChaosConfigError, match=r"interventions: must not be an empty list"):
        EscapePolicy.from_dict({"interventions": []})
    with pytest.raises(ChaosConfigError, match=r"interventions: expected a list of retry, explore"):
        EscapePolicy.from_dict({"interventions": "stop"})
    with pytest.raises(ChaosConfigError, match=r"^EscapePolicy: interventions\[1\]: 'pray' is not"):
        EscapePolicy(interventions=("stop", "pray"))


RING_DIR = Path(__file__).resolve().parents[1] / "examples" / "ring"


def test_must_escape_fails_on_the_naive_ring_agent_and_explains(pytester: pytest.Pytester) -> None:
    shutil.copy(RING_DIR / "ring_agent.py", pytester.path / "ring_agent.py")
    pytester.makepyfile(
        test_ring="""
        import pytest
        from ring_agent import GRAPH, fetch_data, naive_agent, supervised_agent
        from pytest_agentchaos.escape import Supervisor

        DOWN = {"kind": "http_error", "status": 503, "tools": ["fetch_data"], "first": 12}

        @pytest.mark.chaos(faults=[DOWN])
        @pytest.mark.must_escape(within_steps=20)
        def test_naive(chaos):
            naive_agent(chaos.wrap(fetch_data), chaos.step)

        @pytest.mark.chaos(faults=[DOWN])
        @pytest.mark.must_escape(within_steps=20)
        def test_supervised(chaos):
            supervised_agent(chaos.wrap(fetch_data), Supervisor.for_run(chaos, graph=GRAPH))
        """
    )
    result = pytester.runpytest("-v", "--chaos-seed=7", "--chaos-profile=outage")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_naive _*",
            "must_escape failed: the agent did not escape its loop",
            "  - hard budget max_steps=500 stopped the run at step 500: it did not finish",
            "  - loop #1 [[]repeat[]]: @A -> @B -> fetch_data(source='B') -> "
            "error:InjectedHTTPError:503 -> @C repeated 3x (period 4); began at step 1, "
            "detected at step 12; never broken",
            "  interventions tried: none recorded (is the agent running an escape stack?)",
            "  the run ended halted at step 500*",
            "replay: pytest test_ring.py::test_naive --chaos-seed=7 --chaos-profile=outage",
            "*PASSED  test_ring.py::test_supervised  profile=outage *verdict=must_escape=ok",
        ]
    )
