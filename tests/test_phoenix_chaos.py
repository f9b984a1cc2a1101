"""The rebirth runner inside a chaos run: crash and corrupt_snapshot faults reach it through the
run's plan, are recorded like every fault, replay from the trace, and change nothing outside a
chaos run. Hostile agents and states included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_agentchaos.errors import HardHalt
from pytest_agentchaos.faults import parse_faults
from pytest_agentchaos.inject import Chaos
from pytest_agentchaos.phoenix import (
    MemorySnapshotStore,
    PhoenixPolicy,
    PhoenixRunner,
    RebirthsExhausted,
    SnapshotError,
    SnapshotStore,
    StepReport,
)
from pytest_agentchaos.trace.events import Halt, Intervention
from pytest_agentchaos.verdicts import must_recover_state


class Collector:
    """One item per step until ``goal``; remembers which steps it was asked to run."""

    def __init__(self, goal: int = 10) -> None:
        self.goal = goal
        self.items: list[int] = []
        self.ran: list[int] = []

    def step(self, n: int) -> StepReport:
        self.ran.append(n)
        self.items.append(len(self.items))
        return StepReport(
            output=f"item {len(self.items)}",
            progress=len(self.items),
            done=len(self.items) >= self.goal,
        )

    def to_state(self) -> dict[str, Any]:
        return {"items": list(self.items)}

    def from_state(self, state: dict[str, Any]) -> None:
        self.items = list(state["items"])


def chaos_with(*faults: dict[str, Any], seed: int = 7, **kwargs: Any) -> Chaos:
    return Chaos.create(faults=parse_faults(list(faults), "faults"), seed=seed, **kwargs)


def runner_in(chaos: Chaos, agent: Any, store: Any = None, **kwargs: Any) -> PhoenixRunner:
    if store is None:  # the run's clock stamps the files: the same run writes the same bytes
        store = MemorySnapshotStore(keep=10, recorder=chaos.session, clock=chaos.clock)
    kwargs.setdefault("policy", PhoenixPolicy(interval=2, backoff=1.0, max_rebirths=5))
    return PhoenixRunner.for_run(chaos, agent, store, **kwargs)


def events(chaos: Chaos, action: str) -> list[dict[str, Any]]:
    return [e.detail for e in chaos.trace.of_type(Intervention) if e.action == action]


def test_a_crash_fault_crashes_the_chosen_step_before_it_runs() -> None:
    chaos = chaos_with({"kind": "crash", "nth": [5], "message": "worker lost"})
    agent = Collector()
    outcome = runner_in(chaos, agent).run()
    assert outcome.done and outcome.rebirths == 1 and agent.items == list(range(10))
    [trouble] = outcome.troubles
    assert (trouble.kind, trouble.step) == ("crash", 5)
    assert trouble.reason == "InjectedCrash: worker lost (step 5 of Collector)"
    assert agent.ran == list(range(1, 11))  # reborn at 4: step 5 had not run before the crash
    [fault] = chaos.trace.faults()
    assert (fault.kind, fault.channel, fault.target, fault.index) == (
        "crash",
        "step",
        "Collector",
        5,
    )
    assert fault.detail == {"message": "worker lost"}
    [rebirth] = events(chaos, "rebirth")
    assert rebirth["to_step"] == 4 and rebirth["trigger"] == "crash"
    assert chaos.trace.fault_counts() == {"crash": 1}
    assert must_recover_state(chaos.trace).ok


MODE_REASONS = {
    "truncate": ("truncated", "empty", "not JSON"),
    "bitflip": (
        "checksum mismatch",
        "not UTF-8",
        "not JSON",
        "truncated",
        "not a snapshot envelope",
    ),
    "version": ("unknown version 0", "unknown version 2"),
}


@pytest.mark.parametrize("mode", sorted(MODE_REASONS))
@pytest.mark.parametrize("where", ["disk", "memory"])
def test_corrupt_snapshot_damages_the_newest_file_and_the_load_skips_it(
    mode: str, where: str, tmp_path: Path
) -> None:
    chaos = chaos_with({"kind": "crash", "nth": [7]}, {"kind": "corrupt_snapshot", "mode": mode})
    store: Any = (
        SnapshotStore(tmp_path, keep=10, recorder=chaos.session, clock=chaos.clock, fsync=False)
        if where == "disk"
        else MemorySnapshotStore(keep=10, recorder=chaos.session)
    )
    agent = Collector()
    outcome = runner_in(chaos, agent, store).run()
    assert outcome.done and agent.items == list(range(10))
    [rebirth] = events(chaos, "rebirth")
    newest = "snap-000000000004-step-000006.json"
    [skipped] = rebirth["skipped"]
    assert skipped["snapshot"] == newest and skipped["reason"].startswith(MODE_REASONS[mode])
    assert rebirth["snapshot"] == "snap-000000000003-step-000004.json"
    assert rebirth["to_step"] == 4
    [corrupt] = chaos.trace.faults("corrupt_snapshot")
    assert (corrupt.channel, corrupt.target, corrupt.index) == ("snapshot", "Collector", 1)
    assert corrupt.detail["mode"] == mode
    [info] = [i for i in store.list() if i.file == newest]
    with pytest.raises(SnapshotError, match=newest):
        store.load(info)  # really damaged, on disk or in memory
    verdict = must_recover_state(chaos.trace)
    assert verdict.ok, verdict.explanation


class SpyStore(MemorySnapshotStore):
    def __init__(self) -> None:
        super().__init__(keep=10)
        self.raw_reads = 0

    def newest_raw(self) -> Any:
        self.raw_reads += 1
        return super().newest_raw()


class CrashOnce(Collector):
    def step(self, n: int) -> StepReport:
        if n == 5 and 5 not in self.ran:
            self.ran.append(n)
            raise RuntimeError("its own crash")
        return super().step(n)


def test_outside_a_chaos_run_nothing_is_injected_or_consulted() -> None:
    store = SpyStore()
    plain = PhoenixRunner(CrashOnce(), store, policy=PhoenixPolicy(interval=2))
    outcome = plain.run()
    assert plain.session is None and outcome.done and outcome.rebirths == 1
    assert store.raw_reads == 0
    # a chaos run without runner faults behaves the same; only the load is asked about
    chaos = chaos_with({"kind": "timeout", "probability": 1.0})
    spy = SpyStore()
    same = runner_in(chaos, CrashOnce(), spy, policy=PhoenixPolicy(interval=2)).run()
    assert (same.done, same.step, same.steps_run, same.rebirths) == (
        outcome.done,
        outcome.step,
        outcome.steps_run,
        outcome.rebirths,
    )
    assert chaos.trace.faults() == []


def test_a_store_without_raw_access_is_not_corrupted() -> None:
    class Wrapper:  # a user's own store around ours: no raw access
        def __init__(self) -> None:
            self.inner = MemorySnapshotStore(keep=10)
            self.last_skipped = ()

        def save(self, *args: Any, **kwargs: Any) -> Any:
            return self.inner.save(*args, **kwargs)

        def load_latest(self, health_check: Any = None) -> Any:
            return self.inner.load_latest(health_check)

        def mark_bad(self, info: Any) -> None:
            self.inner.mark_bad(info)

    chaos = chaos_with({"kind": "crash", "nth": [5]}, {"kind": "corrupt_snapshot"})
    outcome = runner_in(chaos, Collector(), Wrapper()).run()
    assert outcome.done and chaos.trace.fault_counts() == {"crash": 1}


def run_record(chaos: Chaos, seed_store: int = 10) -> tuple[Any, ...]:
    agent = Collector(goal=25)
    outcome = runner_in(chaos, agent, policy=PhoenixPolicy(interval=3, max_rebirths=30)).run()
    faults = [(f.kind, f.channel, f.target, f.index, f.detail) for f in chaos.trace.faults()]
    return faults, events(chaos, "rebirth"), (outcome.step, outcome.steps_run, outcome.rebirths)


FLAKY_RUNNER = (
    {"kind": "crash", "probability": 0.15},
    {"kind": "corrupt_snapshot", "probability": 0.6},
)


def test_runs_are_seeded_and_replay_exactly_from_the_trace_schedule() -> None:
    first = chaos_with(*FLAKY_RUNNER, seed=3)
    recorded = run_record(first)
    faults, rebirths, _ = recorded
    assert {f[0] for f in faults} == {"crash", "corrupt_snapshot"} and len(rebirths) >= 2
    assert run_record(chaos_with(*FLAKY_RUNNER, seed=3)) == recorded  # same seed, same run
    assert run_record(chaos_with(*FLAKY_RUNNER, seed=4)) != recorded
    replay = Chaos.create(schedule=first.trace.schedule())  # no faults: the schedule alone
    assert replay.plan.replaying
    assert run_record(replay) == recorded


def test_tools_globs_choose_the_runner() -> None:
    chaos = chaos_with({"kind": "crash", "tools": ["checkout*"]})
    outcome = runner_in(chaos, Collector()).run()
    assert outcome.rebirths == 0 and chaos.trace.faults() == []
    chaos = chaos_with({"kind": "crash", "tools": ["checkout*"], "nth": [2]})
    outcome = runner_in(chaos, Collector(), name="checkout-7").run()
    assert outcome.rebirths == 1 and chaos.trace.faults()[0].target == "checkout-7"


def test_crashing_on_every_step_exhausts_rebirths_and_halts_the_run_for_good() -> None:
    chaos = chaos_with({"kind": "crash"})
    runner = runner_in(chaos, Collector(), policy=PhoenixPolicy(max_rebirths=2))
    with pytest.raises(RebirthsExhausted) as caught:
        runner.run()
    assert isinstance(caught.value, HardHalt)
    assert "after 2 rebirths" in str(caught.value) and "injected crash" in str(caught.value)
    assert chaos.session.halted is caught.value
    [halt] = chaos.trace.of_type(Halt)
    assert halt.reason == "max_rebirths" and halt.hard
    with pytest.raises(RebirthsExhausted):  # swallowing it does not help: the run stays halted
        chaos.step("again")
    text = must_recover_state(chaos.trace).explanation
    assert (
        "crash at step 1 (InjectedCrash: injected crash (step 1 of Collector)): not "
        "reborn: the runner's max_rebirths=2 was used up and it escalated" in text
    )
    assert "hard halt 'max_rebirths': the agent kept failing after 2 rebirths" in text


class Swallower(Collector):
    """Its step swallows everything its tool raises, BaseException included."""

    def __init__(self, tool: Any) -> None:
        super().__init__()
        self.tool = tool
        self.swallowed = 0

    def step(self, n: int) -> StepReport:
        try:
            self.tool(n)
        except BaseException:  # noqa: BLE001 - the hostile agent under test
            self.swallowed += 1
        return super().step(n)


def test_an_agent_that_swallows_base_exception_still_crashes_and_halts() -> None:
    chaos = chaos_with(
        {"kind": "crash", "every": 4}, {"kind": "timeout", "tools": ["fetch"], "probability": 0.5}
    )
    agent = Swallower(chaos.wrap(lambda n: n, name="fetch"))
    outcome = runner_in(chaos, agent).run()
    assert outcome.done and outcome.rebirths >= 2 and agent.swallowed > 0
    assert agent.items == list(range(10))
    chaos = chaos_with({"kind": "crash"})
    agent = Swallower(chaos.wrap(lambda n: n, name="fetch"))
    with pytest.raises(RebirthsExhausted):
        runner_in(chaos, agent).run()
    assert agent.ran == []  # no step ever ran: the crash comes before the agent's code


def test_a_corrupt_start_snapshot_is_a_reset_to_the_start_state_that_loses_nothing() -> None:
    chaos = chaos_with({"kind": "crash", "nth": [3]}, {"kind": "corrupt_snapshot"})
    agent = Collector()
    outcome = runner_in(chaos, agent, policy=PhoenixPolicy(interval=100)).run()
    assert outcome.done and agent.items == list(range(10))  # started over from scratch
    [rebirth] = events(chaos, "rebirth")
    assert rebirth["snapshot"] is None and rebirth["to_step"] == 0
    [skipped] = rebirth["skipped"]
    assert skipped["snapshot"] == "snap-000000000001-step-000000.json" and skipped["step"] == 0
    # the only snapshot was the start's: the soft reset gives the agent what it held
    verdict = must_recover_state(chaos.trace)
    assert verdict.ok, verdict.explanation
    assert verdict.facts["healthy"] == 1


def test_crashes_and_corruption_walk_back_through_every_snapshot() -> None:
    chaos = chaos_with({"kind": "crash", "nth": list(range(7, 200))}, {"kind": "corrupt_snapshot"})
    told: list[dict[str, Any]] = []
    runner = runner_in(
        chaos, Collector(), policy=PhoenixPolicy(interval=2, max_rebirths=6), escalate=told.append
    )
    outcome = runner.run()
    assert outcome.escalated and not outcome.done and told
    rebirths = events(chaos, "rebirth")
    assert [r["to_step"] for r in rebirths] == [4, 0, 0, 0, 0, 0]
    last = rebirths[-1]
    assert last["snapshot"] is None
    assert [s["snapshot"][:17] for s in last["skipped"]] == [
        f"snap-00000000000{n}" for n in (4, 3, 2, 1)
    ]  # every snapshot, each damaged by a fault or marked bad by a relapse
    assert {s["reason"] for s in last["skipped"]} & {"marked bad"}
    assert len(chaos.trace.faults("corrupt_snapshot")) == 2  # no intact one left after that
    text = must_recover_state(chaos.trace, max_rebirths=10).explanation
    assert (
        "no healthy snapshot to resume from; skipped snap-000000000004-step-000006.json (" in text
    )
    assert "not reborn: the runner's max_rebirths=6 was used up and it escalated" in text
    assert "the agent did not reach its goal: runner Collector: escalated" in text


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")

    __str__ = __repr__


class HostileState(Unprintable):
    """A state object whose repr raises, but which knows its own JSON form."""

    def __init__(self, items: list[int]) -> None:
        self.items = items

    def to_state(self) -> dict[str, Any]:
        return {"items": self.items}


class HostileAgent(Collector, Unprintable):
    def to_state(self) -> Any:
        return HostileState(list(self.items))


def test_a_state_and_an_agent_whose_repr_raises() -> None:
    chaos = chaos_with({"kind": "crash", "nth": [5]}, {"kind": "corrupt_snapshot", "nth": [1]})
    agent = HostileAgent()
    outcome = runner_in(chaos, agent).run()
    assert outcome.done and agent.items == list(range(10))
    assert must_recover_state(chaos.trace).ok
    assert "HostileAgent" in repr(chaos.trace.faults()[0])

    class NotData(Collector):
        def to_state(self) -> Any:
            return {"items": self.items, "cursor": Unprintable()}

    with pytest.raises(SnapshotError) as caught:
        runner_in(chaos_with(), NotData()).run()
    assert "cursor" in str(caught.value) and "Unprintable" in str(caught.value)


def test_the_runner_s_name_and_the_session_s_channels_are_checked() -> None:
    chaos = chaos_with()
    assert runner_in(chaos, Collector()).name == "Collector"
    for bad in ("", 7):
        with pytest.raises(ValueError, match="name must be a non-empty str"):
            runner_in(chaos, Collector(), name=bad)
    with pytest.raises(ValueError, match="channel must be one of step, snapshot"):
        chaos.session.inject("tool", "search")


class Checkout(Collector):
    """Charges at step 3 through the runner's ledger, with its wrapped ``charge`` tool."""

    def __init__(self, charge: Any) -> None:
        super().__init__(goal=6)
        self.charge = charge
        self.runner: PhoenixRunner | None = None

    def step(self, n: int) -> StepReport:
        if n == 3:
            assert self.runner is not None
            self.runner.effect("order-5", self.charge, order="5", idempotency_key="order-5")
        return super().step(n)


def test_a_charge_an_injected_fault_failed_did_not_happen() -> None:
    chaos = chaos_with({"kind": "timeout", "tools": ["charge"], "nth": [1]})
    charged: list[str] = []
    agent = Checkout(
        chaos.wrap(lambda order, idempotency_key: charged.append(order), name="charge")
    )
    agent.runner = runner = runner_in(chaos, agent, reconcile=lambda key: (False, None))
    assert runner.run().done and charged == ["5"]
    assert [(e["ran"], e["why"][:40]) for e in events(chaos, "effect")] == [
        (False, "failed before it ran: InjectedTimeout: c"),
        (True, "run"),
    ]
    assert must_recover_state(chaos.trace).ok


def test_a_lost_response_without_reconciliation_is_a_double_charge() -> None:
    chaos = chaos_with()
    charged: list[str] = []

    def charge(order: str, idempotency_key: str) -> str:
        charged.append(order)
        if len(charged) == 1:
            raise ConnectionError("reset after the charge went through")
        return "ok"

    agent = Checkout(chaos.wrap(charge, name="charge"))
    agent.runner = runner = runner_in(chaos, agent)
    assert runner.run().done and charged == ["5", "5"]
    [first, second] = events(chaos, "effect")
    assert first["ran"] and first["why"].startswith("raised ConnectionError: reset after")
    assert second == {"key": "order-5", "ran": True, "why": "run"}
    verdict = must_recover_state(chaos.trace)
    assert not verdict.ok
    assert verdict.explanation.splitlines()[1] == (
        "  - duplicate effect: idempotency key 'order-5' ran 2 times through the runner's "
        "effect ledger (before any rebirth; after rebirth 1 (crash at step 3))"
    )
