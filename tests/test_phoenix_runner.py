"""The rebirth runner: crash, loop and stagnation each end in a rebirth from the latest healthy
snapshot; a relapse goes one snapshot further back; side effects run once per idempotency key;
escalation after max_rebirths is a hard halt."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_agentchaos.clock.clock import VirtualClock
from pytest_agentchaos.errors import BudgetExhausted, ChaosConfigError, HardHalt
from pytest_agentchaos.escape.recorder import TraceRecorder
from pytest_agentchaos.phoenix import MemorySnapshotStore
from pytest_agentchaos.phoenix.policy import PhoenixPolicy
from pytest_agentchaos.phoenix.runner import PhoenixRunner, RebirthsExhausted, StepReport
from pytest_agentchaos.trace.events import Detection, Intervention


class Collector:
    """The seed's data collector: one item per page until ``goal`` items. ``poison`` maps a
    step to what goes wrong there the first time: "crash" raises, "cache" corrupts its
    scratch cache so it fetches the same page again and again (until reset), "state" puts a
    bad page into its state (it loops on it until an older state is restored)."""

    def __init__(self, goal: int = 12, poison: dict[int, str] | None = None) -> None:
        self.goal = goal
        self.items: list[int] = []
        self.bad_page = False
        self.cache: dict[str, Any] = {}
        self.poison = dict(poison or {})
        self.resets = 0

    def step(self, n: int) -> StepReport:
        trouble = self.poison.pop(n, None)
        if trouble == "crash":
            raise RuntimeError(f"parser blew up at step {n}")
        if trouble == "cache":
            self.cache["stuck"] = True
        if trouble == "state":
            self.bad_page = True
        if self.cache.get("stuck") or self.bad_page:
            return StepReport(output="page 7: same stale result", progress=len(self.items))
        self.items.append(len(self.items))
        return StepReport(output=f"page {len(self.items)}", progress=len(self.items),
                          done=len(self.items) >= self.goal)  # fmt: skip

    def to_state(self) -> dict[str, Any]:
        return {"items": list(self.items), "bad_page": self.bad_page}

    def from_state(self, state: dict[str, Any]) -> None:
        self.items = list(state["items"])
        self.bad_page = state["bad_page"]

    def reset(self) -> None:
        self.cache.clear()
        self.resets += 1


def runner(agent: Any, **kwargs: Any) -> tuple[PhoenixRunner, TraceRecorder, Any]:
    clock = VirtualClock()
    recorder = TraceRecorder(clock=clock)
    store = MemorySnapshotStore(keep=5, recorder=recorder)
    policy = kwargs.pop("policy", PhoenixPolicy(interval=5, backoff=1.0))
    run = PhoenixRunner(agent, store, policy=policy, clock=clock, recorder=recorder, **kwargs)
    return run, recorder, store


def rebirths(recorder: TraceRecorder) -> list[dict[str, Any]]:
    return [
        e.detail for e in recorder.trace if isinstance(e, Intervention) and e.action == "rebirth"
    ]


def test_a_healthy_agent_runs_to_its_goal_with_snapshots_and_no_rebirth() -> None:
    agent = Collector(goal=12)
    run, recorder, store = runner(agent)
    outcome = run.run()
    assert outcome.done and outcome.rebirths == 0 and outcome.step == 12
    assert [i.step for i in store.list()][:3] == [12, 10, 5]  # newest first: done, then every 5
    assert rebirths(recorder) == []


def test_a_crash_is_reborn_from_the_latest_snapshot() -> None:
    agent = Collector(goal=12, poison={8: "crash"})
    run, recorder, _ = runner(agent)
    outcome = run.run()
    assert outcome.done and outcome.rebirths == 1
    [reborn] = rebirths(recorder)
    assert reborn["trigger"] == "crash" and reborn["from_step"] == 8 and reborn["to_step"] == 5
    assert "RuntimeError: parser blew up" in reborn["reason"]
    assert agent.resets == 1 and agent.items == list(range(12))  # nothing lost, nothing twice
    kinds = [e.kind for e in recorder.trace if isinstance(e, Detection)]
    assert kinds == ["crash"]


def test_a_loop_in_scratch_memory_is_cleared_by_the_self_destruct() -> None:
    agent = Collector(goal=12, poison={7: "cache"})
    run, recorder, _ = runner(agent)
    outcome = run.run()
    assert outcome.done and outcome.rebirths == 1
    [reborn] = rebirths(recorder)
    assert reborn["trigger"] == "loop" and reborn["to_step"] == 5
    assert agent.items == list(range(12))


def test_a_relapse_marks_the_snapshot_bad_and_goes_one_further_back() -> None:
    # the bad page enters the state at step 4: the snapshot at step 5 holds it
    agent = Collector(goal=12, poison={4: "state"})
    run, recorder, _ = runner(agent, policy=PhoenixPolicy(interval=5, relapse_steps=10))
    outcome = run.run()
    assert outcome.done and outcome.rebirths == 2
    first, second = rebirths(recorder)
    assert first["to_step"] == 5 and second["to_step"] == 0  # the start, before the bad page
    assert agent.items == list(range(12))


def test_stagnation_is_progress_that_stops_rising_not_progress_unreported() -> None:
    class Flat(Collector):
        def __init__(self, report: bool) -> None:
            super().__init__(goal=30)
            self.report = report
            self.n = 0

        def step(self, n: int) -> StepReport:
            self.n += 1
            if self.n >= 40:
                return StepReport(output=n, done=True)
            # new output every step (no loop), progress stuck at 3 (or unreported)
            return StepReport(output=f"thinking {n}", progress=3 if self.report else None)

    stuck = Flat(report=True)
    run, recorder, _ = runner(stuck, policy=PhoenixPolicy(stagnation_rounds=6, max_rebirths=10))
    run.run(max_steps=60)
    assert [e.kind for e in recorder.trace if isinstance(e, Detection)][:1] == ["stagnation"]
    silent = Flat(report=False)
    run, recorder, _ = runner(silent, policy=PhoenixPolicy(stagnation_rounds=6))
    outcome = run.run(max_steps=60)
    assert outcome.done and outcome.rebirths == 0  # unknown progress is not zero progress


def test_max_rebirths_then_a_hard_halt_the_agent_cannot_swallow() -> None:
    class AlwaysCrashes(Collector):
        def step(self, n: int) -> StepReport:
            raise ValueError("broken for good")

    run, recorder, _ = runner(AlwaysCrashes(), policy=PhoenixPolicy(max_rebirths=2))
    with pytest.raises(RebirthsExhausted) as caught:
        run.run()
    assert isinstance(caught.value, HardHalt) and not isinstance(caught.value, Exception)
    assert "after 2 rebirths" in str(caught.value) and "broken for good" in str(caught.value)
    assert [e.action for e in recorder.trace if isinstance(e, Intervention)][-1] == "escalate"


def test_an_escalation_callback_ends_the_run_instead() -> None:
    class AlwaysCrashes(Collector):
        def step(self, n: int) -> StepReport:
            raise ValueError("broken for good")

    told: list[dict[str, Any]] = []
    run, _, _ = runner(AlwaysCrashes(), policy=PhoenixPolicy(max_rebirths=1), escalate=told.append)
    outcome = run.run()
    assert outcome.escalated and not outcome.done and outcome.rebirths == 2
    assert told and told[0]["max_rebirths"] == 1 and len(told[0]["troubles"]) == 2


def test_backoff_waits_on_the_run_s_clock() -> None:
    agent = Collector(goal=12, poison={3: "crash", 8: "crash"})
    run, _, _ = runner(agent, policy=PhoenixPolicy(backoff=2.0, backoff_factor=3.0))
    run.run()
    assert run.clock.now() == pytest.approx(2.0 + 6.0)


def test_a_hard_halt_from_the_agent_is_not_a_crash() -> None:
    class OverBudget(Collector):
        def step(self, n: int) -> StepReport:
            raise BudgetExhausted("tool_calls", 10, 11)

    run, recorder, _ = runner(OverBudget())
    with pytest.raises(BudgetExhausted):
        run.run()
    assert rebirths(recorder) == []


class Shop(Collector):
    """Charges the card at step 6 through the runner's effect ledger; crashes once at 7 (or
    inside the charge, after the money moved)."""

    def __init__(self, crash_inside: bool = False) -> None:
        super().__init__(goal=10, poison={7: "crash"} if not crash_inside else {})
        self.runner: PhoenixRunner | None = None
        self.charges: list[int] = []
        self.crash_inside = crash_inside

    def charge(self, amount: int) -> str:
        self.charges.append(amount)
        if self.crash_inside:
            self.crash_inside = False
            raise ConnectionError("the response was lost after the charge went through")
        return f"receipt-{len(self.charges)}"

    def step(self, n: int) -> StepReport:
        if n == 6:
            assert self.runner is not None
            self.runner.effect("order-17-charge", self.charge, 4500)
        return super().step(n)


def test_a_replayed_step_does_not_charge_twice() -> None:
    shop = Shop()
    run, recorder, _ = runner(shop)
    shop.runner = run
    outcome = run.run()
    assert outcome.done and outcome.rebirths == 1 and shop.charges == [4500]
    effects = [
        e.detail for e in recorder.trace if isinstance(e, Intervention) and e.action == "effect"
    ]
    assert [(e["key"], e["ran"]) for e in effects] == [
        ("order-17-charge", True),
        ("order-17-charge", False),
    ]


def test_a_call_cut_off_mid_way_is_reconciled_before_it_runs_again() -> None:
    asked: list[str] = []

    def reconcile(key: str) -> tuple[bool, Any]:
        asked.append(key)
        return True, "receipt-from-the-payment-provider"

    shop = Shop(crash_inside=True)
    run, _, _ = runner(shop, reconcile=reconcile)
    shop.runner = run
    assert run.run().done
    assert shop.charges == [4500] and asked == ["order-17-charge"]
    # without a reconcile hook the ledger cannot know: the call runs again
    again = Shop(crash_inside=True)
    run, _, _ = runner(again)
    again.runner = run
    assert run.run().done and again.charges == [4500, 4500]


@pytest.mark.parametrize("key", ["", None, 17])
def test_an_effect_needs_a_key(key: Any) -> None:
    run, _, _ = runner(Collector())
    with pytest.raises(ValueError, match="idempotency key"):
        run.effect(key, print)


def test_hostile_outputs_are_keyed_without_raising() -> None:
    class Unprintable:
        def __repr__(self) -> str:
            raise RuntimeError("no repr for you")

    class Hostile(Collector):
        def step(self, n: int) -> StepReport:
            report = super().step(n)
            return StepReport(output=Unprintable(), progress=report.progress, done=report.done)

    run, _, _ = runner(Hostile(goal=4), policy=PhoenixPolicy(max_rebirths=2))
    with pytest.raises(RebirthsExhausted) as caught:
        run.run(max_steps=50)
    # the same unprintable output every step reads as a loop; the runner itself never raises
    assert {t.kind for t in run.troubles} == {"loop"} and "no repr" not in str(caught.value)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"interval": 0}, "[phoenix]: interval"),
        ({"max_rebirths": -1}, "[phoenix]: max_rebirths"),
        ({"backoff_factor": 0.5}, "[phoenix]: backoff_factor"),
        ({"stagnation": 3}, "unknown key 'stagnation'"),
        ({"keep": True}, "[phoenix]: keep"),
    ],
)
def test_a_bad_phoenix_table_names_the_key(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ChaosConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        PhoenixPolicy.from_dict(table)


def test_max_steps_must_be_a_positive_int() -> None:
    run, _, _ = runner(Collector())
    with pytest.raises(ValueError, match="max_steps"):
        run.run(max_steps=0)


def test_a_chaos_run_wires_the_profile_s_phoenix_table(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".toml", **{"chaos_profiles/reborn": "[phoenix]\ninterval = 2\nbackoff = 7\n"}
    )
    pytester.makepyfile(
        test_agent="""
import pytest
from pytest_agentchaos.phoenix import MemorySnapshotStore, PhoenixRunner, StepReport
from pytest_agentchaos.trace import Intervention, Snapshot


class Agent:
    def __init__(self):
        self.done, self.crashed = 0, False

    def step(self, n):
        if n == 5 and not self.crashed:
            self.crashed = True
            raise KeyError("lost the page")
        self.done += 1
        return StepReport(output=n, progress=self.done, done=self.done >= 8)

    def to_state(self):
        return {"done": self.done}

    def from_state(self, state):
        self.done = state["done"]


@pytest.mark.chaos(profile="reborn")
def test_reborn(chaos):
    store = MemorySnapshotStore(recorder=chaos.session)
    runner = PhoenixRunner.for_run(chaos, Agent(), store)
    assert runner.policy.interval == 2
    outcome = runner.run()
    assert outcome.done and outcome.rebirths == 1
    [rebirth] = [e for e in chaos.trace.of_type(Intervention) if e.action == "rebirth"]
    assert rebirth.detail["to_step"] == 4 and chaos.clock.now() == 7
    assert {e.action for e in chaos.trace.of_type(Snapshot)} >= {"saved", "restored"}
"""
    )
    result = pytester.runpytest("-p", "no:randomly", "-q")
    result.assert_outcomes(passed=1)
