"""The halt monitor's interventions: nudge, roll back (Phoenix), summarise-and-restart,
escalate, terminate; alone and in a chaos run's trace."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_agentchaos.halt import HaltMonitor, HaltPolicy, Responder
from pytest_agentchaos.phoenix import MemorySnapshotStore
from pytest_agentchaos.trace.events import Halt, Intervention
from pytest_agentchaos.verdicts import must_halt

STUCK = "I could not find the invoice. Let me search for the invoice again."


def lexical(task: str = "Find the March invoice of ACME", **policy: Any) -> HaltMonitor:
    return HaltMonitor(task=task, embedder="lexical", policy=HaltPolicy(**policy))


def run(responder: Responder, outputs: list[str]) -> list[str]:
    """Feed ``outputs`` until an action stops; the kinds of the actions taken."""
    kinds = []
    for text in outputs:
        action = responder.observe(text)
        kinds.append(action.kind)
        if action.stop:
            break
    return kinds


def test_a_rising_risk_is_nudged_before_the_halt_terminates():
    responder = Responder(lexical())
    kinds = run(responder, ["Searching the billing system for ACME."] + [STUCK] * 8)
    assert kinds[-1] == "terminate"
    assert "nudge" in kinds
    assert kinds.index("nudge") < kinds.index("terminate")
    nudge = next(a for a in responder.actions if a.kind == "nudge")
    assert "repeat" in nudge.message
    assert "change your approach" in nudge.message
    # one nudge per heuristic within the window, not one per step
    assert kinds.count("nudge") <= 2
    assert responder.actions[-1].stop


def test_a_healthy_run_is_never_answered():
    responder = Responder(lexical(task="Import the customer list"))
    pages = [f"Imported page {n}: customers {n * 50 - 49} to {n * 50}." for n in range(1, 12)]
    assert set(run(responder, pages)) == {"continue"}
    assert responder.actions == []


def test_a_halt_rolls_back_to_the_latest_snapshot_then_terminates():
    store = MemorySnapshotStore()
    store.save({"page": 1}, step=1)
    store.save({"page": 2}, step=2)
    restored: list[Any] = []
    responder = Responder(lexical(), store=store, restore=restored.append, nudge=False)
    kinds = run(responder, [STUCK] * 20)
    assert kinds.count("rollback") == 1
    assert restored == [{"page": 2}]
    assert kinds[-1] == "terminate"
    rollback = responder.actions[0]
    assert rollback.kind == "rollback" and rollback.detail["to_step"] == 2
    # after the rollback the monitor starts over: the halt needs three strikes again
    first = kinds.index("rollback")
    assert kinds.index("terminate") - first >= 3


def test_no_snapshot_to_roll_back_to_falls_through_to_the_next_rung():
    restored: list[Any] = []
    responder = Responder(lexical(), store=MemorySnapshotStore(), restore=restored.append)
    assert run(responder, [STUCK] * 10)[-1] == "terminate"
    assert restored == []


def test_restart_gets_a_summary_and_escalation_gets_the_history():
    summaries: list[str] = []
    reports: list[dict[str, Any]] = []
    responder = Responder(lexical(), restart=summaries.append, escalate=reports.append, nudge=False)
    kinds = run(responder, ["Looked in the March folder: nothing."] + [STUCK] * 20)
    assert kinds.count("restart") == 1
    assert kinds[-1] == "escalate"
    (summary,) = summaries
    assert summary.startswith("Task: Find the March invoice of ACME")
    assert "Stopped because: " in summary and "repetition" in summary
    assert STUCK in summary
    (report,) = reports
    assert report["task"] == "Find the March invoice of ACME"
    assert report["interventions"] == ["restart"]
    assert report["strikes"] and STUCK in report["outputs"]


def test_a_hard_limit_terminates_at_once_even_with_a_snapshot():
    store = MemorySnapshotStore()
    store.save({"s": 1}, step=1)
    responder = Responder(lexical(max_steps=3), store=store, restore=lambda state: None)
    kinds = run(responder, [f"step {i} found {i} rows" for i in range(10)])
    assert kinds[-1] == "terminate"
    assert responder.actions[-1].detail == {"limit": True}
    assert responder.rollbacks == 0


def test_a_decision_is_answered_once():
    responder = Responder(lexical())
    kinds = run(responder, [STUCK] * 5)
    assert kinds[-1] == "terminate"
    assert responder.respond().kind == "continue"  # the same decision again: already answered
    assert len(responder.actions) == len([k for k in kinds if k != "continue"])


def test_a_chinese_task_is_nudged_in_chinese():
    responder = Responder(lexical(task="查询订单 8812 的物流状态"))
    run(responder, ["抱歉，我暂时无法查询到订单的物流信息。"] * 6)
    nudge = next(a for a in responder.actions if a.kind == "nudge")
    assert "重复" in nudge.message


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"store": MemorySnapshotStore()}, ValueError, "both store="),
        ({"restart": "yes"}, TypeError, "restart= must be callable"),
        ({"escalate": 3}, TypeError, "escalate= must be callable"),
        ({"max_rollbacks": -1}, ValueError, "max_rollbacks"),
        ({"nudge_at": 0}, ValueError, "nudge_at"),
    ],
)
def test_bad_arguments_say_what_is_wrong(kwargs, error, match):
    with pytest.raises(error, match=match):
        Responder(lexical(), **kwargs)


def test_one_responder_per_monitor():
    monitor = lexical()
    Responder(monitor)
    with pytest.raises(ValueError, match="already has a Responder"):
        Responder(monitor)
    with pytest.raises(TypeError, match="needs a HaltMonitor"):
        Responder("monitor")  # type: ignore[arg-type]


def test_in_a_chaos_run_the_trace_shows_each_intervention_and_the_final_halt(make_chaos):
    chaos = make_chaos({"kind": "repeated_output", "first": 100})
    monitor = HaltMonitor.for_run(chaos, task="Find the March invoice of ACME", embedder="lexical")
    restarts: list[str] = []
    responder = Responder(monitor, restart=restarts.append)
    llm = chaos.model(lambda prompt: STUCK)
    for turn in range(40):
        llm(f"turn {turn}")
        if responder.respond().stop:
            break
    actions = [e.action for e in chaos.trace.of_type(Intervention)]
    assert "restart" in actions and actions[-1] == "terminate"
    halts = chaos.trace.of_type(Halt)
    assert len(halts) == 1  # the halt that a restart answered did not stop the run
    assert halts[0].detail["action"] == "terminate"
    assert not halts[0].hard
    verdict = must_halt(chaos.trace, by=("repetition", "novelty"))
    assert verdict.ok, verdict.explanation
    assert "halt monitor at step" in verdict.explanation
    assert "interventions before: nudge, restart" in verdict.explanation
