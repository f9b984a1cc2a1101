"""must_recover_state over hand-built traces: pure, no pytest in the verdict, every reason to
fail and the words a failure says."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import pytest

from pytest_agentchaos.trace import Trace
from pytest_agentchaos.trace.events import (
    BudgetExhaustedEvent,
    Detection,
    Event,
    FaultInjected,
    Halt,
    Intervention,
    RunEnded,
    ToolCall,
    ToolResult,
)
from pytest_agentchaos.verdicts import Expectations, judge, must_recover_state

SNAP5 = "snap-000000000002-step-000005.json"
SNAP10 = "snap-000000000003-step-000010.json"
START = "snap-000000000001-step-000000.json"


class Run:
    """Builds a trace the way the runner and the harness write one."""

    def __init__(self) -> None:
        self.trace = Trace()
        self.step = 0

    def add(self, event: Event) -> Run:
        self.trace.append(event)
        return self

    def crash(
        self, step: int, error: str = "RuntimeError: parser blew up", *, injected: bool = False
    ) -> Run:
        if injected:
            self.add(
                FaultInjected(
                    self.step,
                    0.0,
                    kind="crash",
                    channel="step",
                    target="Collector",
                    index=step,
                    detail={"message": error},
                )
            )
        return self.trouble("crash", step, error)

    def trouble(self, kind: str, step: int, reason: str) -> Run:
        return self.add(
            Detection(
                self.step,
                0.0,
                detector="phoenix",
                kind=kind,
                detail={"step": step, "reason": reason},
            )
        )

    def rebirth(
        self,
        to_step: int,
        snapshot: str | None,
        skipped: Sequence[tuple[str, str]] = (),
        number: int = 1,
        trigger: str = "crash",
        steps: Sequence[int] | None = None,
    ) -> Run:
        skips: list[dict[str, Any]] = [{"snapshot": s, "reason": r} for s, r in skipped]
        for skip, step in zip(skips, steps or (), strict=False):
            skip["step"] = step  # the runner records each skipped snapshot's step
        if snapshot is None:
            self.add(Intervention(self.step, 0.0, action="soft_reset", detail={"skipped": skips}))
        return self.add(
            Intervention(
                self.step,
                0.0,
                action="rebirth",
                detail={
                    "trigger": trigger,
                    "reason": "",
                    "from_step": 0,
                    "to_step": to_step,
                    "snapshot": snapshot,
                    "skipped": skips,
                    "rebirth": number,
                    "waited": 1.0,
                },
            )
        )

    def effect(self, key: str, ran: bool) -> Run:
        why = "run" if ran else "done before a rebirth: not run again"
        return self.add(
            Intervention(
                self.step, 0.0, action="effect", detail={"key": key, "ran": ran, "why": why}
            )
        )

    def call(self, tool: str, args: dict[str, Any], ok: bool = True) -> Run:
        self.step += 1
        index = sum(1 for e in self.trace if isinstance(e, ToolCall) and e.tool == tool) + 1
        self.add(ToolCall(self.step, 0.0, tool=tool, index=index, args=args))
        return self.add(
            ToolResult(
                self.step,
                0.0,
                tool=tool,
                index=index,
                ok=ok,
                error_type=None if ok else "ConnectionError",
            )
        )

    def outcome(
        self,
        done: bool = True,
        step: int = 12,
        rebirths: int = 1,
        reason: str = "the agent reached its goal",
    ) -> Run:
        return self.add(
            Intervention(
                self.step,
                0.0,
                action="outcome",
                detail={
                    "runner": "Collector",
                    "done": done,
                    "step": step,
                    "steps_run": step + 3,
                    "rebirths": rebirths,
                    "escalated": False,
                    "reason": reason,
                },
            )
        )

    def end(self, status: str = "completed") -> Trace:
        self.add(RunEnded(self.step, 7.0, status=status))
        return self.trace


def test_a_reset_to_the_start_state_loses_nothing_when_only_the_start_snapshot_was_skipped() -> (
    None
):
    # the start snapshot holds the start state: resetting to it is a rebirth from it
    trace = (
        Run()
        .crash(1, injected=True)
        .rebirth(0, None, [(START, "marked bad")], steps=[0])
        .outcome(step=20)
        .end()
    )
    verdict = must_recover_state(trace)
    assert verdict.ok, verdict.explanation
    assert verdict.facts["healthy"] == 1
    # a later snapshot skipped too: its progress is lost, the reset is no recovery
    trace = (
        Run()
        .crash(8, injected=True)
        .rebirth(0, None, [(SNAP5, "checksum mismatch"), (START, "marked bad")], steps=[5, 0])
        .outcome(step=20)
        .end()
    )
    verdict = must_recover_state(trace)
    assert not verdict.ok
    assert "soft reset to the start state" in verdict.explanation
    # a trace that does not say the skipped snapshot's step (an older runner's): no recovery
    trace = Run().crash(1).rebirth(0, None, [(START, "marked bad")]).outcome().end()
    assert not must_recover_state(trace).ok


def test_a_crash_reborn_from_a_healthy_snapshot_that_reaches_its_goal_passes() -> None:
    trace = (
        Run()
        .crash(8, injected=True)
        .rebirth(5, SNAP5, [(SNAP10, "checksum mismatch")])
        .outcome()
        .end()
    )
    verdict = must_recover_state(trace)
    assert verdict.ok and verdict.name == "must_recover_state"
    assert verdict.explanation == (
        "must_recover_state ok: 1 trouble(s), each resumed from a healthy snapshot or the start "
        "state; goal reached after 1 rebirth(s) (max_rebirths=3); no keyed side effects"
    )
    assert verdict.facts == {
        "troubles": 1,
        "rebirths": 1,
        "healthy": 1,
        "done": True,
        "duplicates": 0,
    }


def test_a_loop_and_a_stagnation_are_troubles_too() -> None:
    trace = (
        Run()
        .trouble("loop", 9, "phoenix.step/ok repeated 3x")
        .rebirth(5, SNAP5, trigger="loop")
        .trouble("stagnation", 14, "progress flat")
        .rebirth(10, SNAP10, number=2)
        .outcome(rebirths=2)
        .end()
    )
    assert must_recover_state(trace).ok
    verdict = must_recover_state(trace, max_rebirths=1)
    assert not verdict.ok
    assert verdict.explanation.splitlines()[:5] == [
        "must_recover_state failed: the agent did not recover its state",
        "  - 2 rebirths, more than max_rebirths=1",
        "  troubles and rebirths:",
        "    1. loop at step 9 (phoenix.step/ok repeated 3x): resumed at step 5 from " + SNAP5,
        "    2. stagnation at step 14 (progress flat): resumed at step 10 from " + SNAP10,
    ]


def test_no_healthy_snapshot_fails_naming_each_snapshot_skipped_and_why() -> None:
    trace = (
        Run()
        .crash(3, "InjectedCrash: injected crash (step 3 of Collector)")
        .rebirth(
            0,
            None,
            [
                (SNAP5, "truncated: Unterminated string"),
                (START, "unknown version 2 (this reader knows 1)"),
            ],
        )
        .outcome(step=20)
        .end()
    )
    verdict = must_recover_state(trace)
    assert not verdict.ok
    lines = verdict.explanation.splitlines()
    assert lines[1] == (
        "  - crash at step 3 (InjectedCrash: injected crash (step 3 of Collector)): no healthy "
        f"snapshot to resume from; skipped {SNAP5} (truncated: Unterminated string), {START} "
        "(unknown version 2 (this reader knows 1)); soft reset to the start state"
    )
    assert (
        "  runner Collector: the agent reached its goal at step 20 (23 steps run, 1 rebirth(s))"
        in lines
    )
    assert lines[-1] == "  faults fired: none; the run ended completed at t=7.000s"


def test_a_trouble_the_runner_gave_up_on_fails() -> None:
    trace = (
        Run()
        .crash(2)
        .rebirth(0, START)
        .crash(3, "ValueError: broken")
        .add(Intervention(0, 0.0, action="escalate", detail={"rebirths": 1, "max_rebirths": 1}))
        .add(
            Halt(
                0,
                0.0,
                reason="max_rebirths",
                hard=True,
                detail={"message": "the agent kept failing after 1 rebirths"},
            )
        )
        .end("halted")
    )
    text = must_recover_state(trace).explanation
    assert (
        "  - crash at step 3 (ValueError: broken): not reborn: the runner's max_rebirths=1 "
        "was used up and it escalated" in text
    )
    assert (
        "  - the rebirth runner never finished its run: stopped by hard halt 'max_rebirths': "
        "the agent kept failing after 1 rebirths\n" in text
    )
    assert text.endswith("  faults fired: none; the run ended halted at t=7.000s")


def test_a_goal_not_reached_fails_with_the_runner_s_reason() -> None:
    trace = Run().crash(4).rebirth(0, START).outcome(False, 50, 1, "max_steps (50) ran out").end()
    verdict = must_recover_state(trace)
    assert not verdict.ok and not verdict.facts["done"]
    assert (
        "  - the agent did not reach its goal: runner Collector: max_steps (50) ran out at "
        "step 50 (53 steps run, 1 rebirth(s))" in verdict.explanation
    )


def test_a_run_cut_by_a_budget_never_finished() -> None:
    trace = (
        Run()
        .crash(4)
        .rebirth(0, START)
        .add(BudgetExhaustedEvent(30, 0.0, budget="max_steps", limit=30, count=31))
        .end("halted")
    )
    text = must_recover_state(trace).explanation
    assert (
        "  - the rebirth runner never finished its run: stopped by hard budget max_steps=30\n"
        in text
    )
    cut = must_recover_state(Run().crash(4).rebirth(0, START).trace).explanation
    assert "  - the rebirth runner never finished its run: the run stopped at t=0.000s first" in cut


def test_a_crash_with_nothing_after_it_was_not_reborn() -> None:
    text = must_recover_state(Run().crash(4).end("error")).explanation
    assert (
        "  - crash at step 4 (RuntimeError: parser blew up): not reborn: the run stopped first"
        in text
    )


def test_a_ledger_key_run_twice_is_a_duplicate_effect() -> None:
    trace = (
        Run()
        .effect("order-17-charge", True)
        .crash(7)
        .rebirth(5, SNAP5)
        .effect("order-17-charge", True)
        .effect("order-17-mail", True)
        .outcome()
        .end()
    )
    verdict = must_recover_state(trace)
    assert not verdict.ok and verdict.facts["duplicates"] == 1
    assert verdict.explanation.splitlines()[1] == (
        "  - duplicate effect: idempotency key 'order-17-charge' ran 2 times through the "
        "runner's effect ledger (before any rebirth; after rebirth 1 (crash at step 7))"
    )
    assert must_recover_state(trace, no_duplicate_effects=False).explanation.endswith(
        "duplicate effects not judged (no_duplicate_effects=False)"
    )


def test_the_ledger_that_did_not_run_again_passes() -> None:
    trace = (
        Run()
        .effect("order-17-charge", True)
        .call("charge", {"idempotency_key": "order-17-charge"})
        .crash(7)
        .rebirth(5, SNAP5)
        .effect("order-17-charge", False)
        .outcome()
        .end()
    )
    verdict = must_recover_state(trace)
    assert verdict.ok, verdict.explanation
    assert verdict.explanation.endswith("2 side effect(s) keyed, none run twice")


@pytest.mark.parametrize(
    "args",
    [
        {"order": "17", "idempotency_key": "k-17"},
        {"order": "17", "Idempotency-Key": "k-17"},
        {"order": "17", "idempotencyKey": "k-17"},
        {"method": "POST", "url": "https://pay/charges", "json": {"idempotency_key": "k-17"}},
    ],
)
def test_a_keyed_tool_call_that_succeeded_twice_is_a_duplicate(args: dict[str, Any]) -> None:
    trace = (
        Run().call("charge", args).crash(7).rebirth(5, SNAP5).call("charge", args).outcome().end()
    )
    text = must_recover_state(trace).explanation
    assert (
        "  - duplicate effect: charge with idempotency key 'k-17' succeeded 2 times (before "
        "any rebirth; after rebirth 1 (crash at step 7))" in text
    )


def test_what_is_not_a_duplicate_call() -> None:
    key = {"idempotency_key": "k-17"}
    failed_first = (
        Run()
        .call("charge", key, ok=False)
        .crash(7)
        .rebirth(5, SNAP5)
        .call("charge", key)
        .outcome()
        .end()
    )
    two_tools = (
        Run().call("charge", key).crash(7).rebirth(5, SNAP5).call("refund", key).outcome().end()
    )
    unkeyed = (
        Run()
        .call("search", {"q": "x"})
        .crash(7)
        .rebirth(5, SNAP5)
        .call("search", {"q": "x"})
        .outcome()
        .end()
    )
    bool_key = (
        Run()
        .call("charge", {"idempotency_key": True})
        .crash(7)
        .rebirth(5, SNAP5)
        .call("charge", {"idempotency_key": True})
        .outcome()
        .end()
    )
    for trace in (failed_first, two_tools, unkeyed, bool_key):
        assert must_recover_state(trace).ok


def test_nothing_to_recover_from_is_not_exercised_unless_required() -> None:
    trace = (
        Run()
        .call("search", {"q": "x"})
        .add(FaultInjected(1, 0.0, kind="latency", target="search", index=1, detail={"seconds": 2}))
        .outcome(rebirths=0)
        .end()
    )
    verdict = must_recover_state(trace, require_problem=True)
    assert (verdict.ok, verdict.outcome) == (False, "fail")
    assert verdict.explanation == (
        "must_recover_state failed: nothing to recover from: no crash, loop or stagnation arose "
        "in this run (faults fired: latency:1; the run ended completed at t=7.000s). Run the "
        "agent with PhoenixRunner.for_run and inject crash or corrupt_snapshot faults, or pass "
        "require_problem=False."
    )
    allowed = must_recover_state(trace)  # the default: nothing went wrong is not exercised
    assert (allowed.ok, allowed.outcome) == (True, "not_exercised")
    assert allowed.explanation == (
        "must_recover_state not exercised: no crash, loop or stagnation arose in this run "
        "(faults fired: latency:1; the run ended completed at t=7.000s); no keyed side effects; "
        "require_problem=True fails such a run"
    )
    stuck = Run().outcome(False, 9, 0, "max_steps (9) ran out").end()
    assert not must_recover_state(stuck, require_problem=False).ok


def test_many_troubles_are_cut_short() -> None:
    run = Run()
    for i in range(1, 31):
        run.crash(i).rebirth(i - 1, SNAP5, number=i)
    text = must_recover_state(run.outcome(rebirths=30).end(), max_rebirths=40).explanation
    assert text.startswith("must_recover_state ok: 30 trouble(s)")
    text = must_recover_state(run.trace, max_rebirths=3).explanation
    assert "    ... and 18 more" in text and text.count("    1") >= 1


def test_hostile_details_do_not_break_the_verdict() -> None:
    trace = Trace()
    trace.append(Detection(0, 0.0, detector="phoenix", kind="crash", detail="not a dict"))  # type: ignore[arg-type]
    trace.append(
        Intervention(
            0,
            0.0,
            action="rebirth",
            detail={"snapshot": ["odd"], "skipped": ["x", {"snapshot": 1}]},
        )
    )
    trace.append(Intervention(0, 0.0, action="effect", detail={"key": {"a": 1}, "ran": True}))
    trace.append(ToolCall(0, 0.0, tool="t", index=1, args=["not", "a", "dict"]))  # type: ignore[arg-type]
    trace.append(Intervention(0, 0.0, action="outcome", detail=None))  # type: ignore[arg-type]
    verdict = must_recover_state(trace)
    assert not verdict.ok and "the agent did not reach its goal" in verdict.explanation


def test_the_verdict_reads_a_trace_read_back_from_json() -> None:
    trace = (
        Run()
        .effect("k", True)
        .crash(7, injected=True)
        .rebirth(5, SNAP5)
        .effect("k", True)
        .outcome()
        .end()
    )
    again = Trace.from_json(trace.to_json())
    assert must_recover_state(again) == must_recover_state(trace)
    assert "crash:1" in must_recover_state(again).explanation


def test_judge_runs_it_from_expectations() -> None:
    trace = Run().crash(8).rebirth(5, SNAP5).outcome().end()
    [verdict] = judge(trace, Expectations(recover={"max_rebirths": 0}))
    assert verdict.name == "must_recover_state" and not verdict.ok
    assert Expectations(recover={}) and not Expectations()


def test_the_verdict_imports_no_pytest() -> None:
    code = (
        "import sys; import pytest_agentchaos.verdicts.recover as r, pytest_agentchaos.phoenix; "
        "import pytest_agentchaos.faults.rebirth; "
        "assert not [m for m in sys.modules if m == 'pytest' or m.startswith(('_pytest', "
        "'hypothesis'))], sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
