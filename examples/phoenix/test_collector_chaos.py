"""The data collector of seed 001 under chaos: the `flaky` profile on its page fetches, crashes
of its steps and corrupted snapshots, on top of the stale page that traps it in a loop.

The collector fetches through the escape stack's Supervisor (retries with backoff on the
virtual clock), so a flaky fetch is retried, not a crash; the `crash` faults crash its steps
outright and the runner brings it back from its latest healthy snapshot, skipping the ones a
`corrupt_snapshot` fault damaged. `must_recover_state` checks every rebirth; the test checks
that the collector ends with every item, in order, each once.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from collector_agent import ALL_ITEMS, DataCollector, PagedSource

from pytest_agentchaos import Chaos
from pytest_agentchaos.escape import Supervisor
from pytest_agentchaos.escape.policy import EscapePolicy
from pytest_agentchaos.phoenix import (
    MemorySnapshotStore,
    PhoenixPolicy,
    PhoenixRunner,
    SnapshotStore,
)
from pytest_agentchaos.trace import Detection, Intervention

#: The 14th step the runner runs crashes, and one of the 16th to 40th may crash too (10%
#: each, once at most); the newest snapshot is damaged before the first rebirth's load
#: (truncated, bit-flipped or given another format version: the seed decides).
FAULTS = [
    {"kind": "crash", "nth": [14]},
    {"kind": "crash", "nth": list(range(16, 41)), "probability": 0.1, "max_count": 1},
    {"kind": "corrupt_snapshot", "nth": [1]},
]


#: Patient with a flaky source: up to 8 attempts a fetch, and 10 failures in a row before the
#: source counts as down (the defaults, 5, give up on `flaky` about once in a hundred runs).
PATIENT = EscapePolicy.from_dict(
    {
        "backoff": {"max_attempts": 8},
        "classifier": {"escalate_after": 10},
        "breaker": {"failure_threshold": 10},
    }
)


def collector_for(chaos: Chaos) -> tuple[DataCollector, PagedSource]:
    """A collector whose fetches go through a chaos-wrapped source and a Supervisor."""
    source = PagedSource()
    fetch = chaos.wrap(source.fetch_page, name="fetch_page")
    supervisor = Supervisor.for_run(chaos, policy=PATIENT)
    return DataCollector(lambda page: supervisor.call("fetch_page", fetch, {"page": page})), source


def rebirths(chaos: Chaos) -> list[dict]:
    return [e.detail for e in chaos.trace.of_type(Intervention) if e.action == "rebirth"]


# not searched: asserts the crashes and damaged snapshot it declares
@pytest.mark.chaos("flaky", faults=FAULTS, explore=False)
@pytest.mark.must_recover_state(max_rebirths=3)
def test_the_collector_is_reborn_from_disk_and_loses_nothing(chaos: Chaos, tmp_path: Path) -> None:
    agent, source = collector_for(chaos)
    store = SnapshotStore(tmp_path / "snapshots", keep=3, recorder=chaos.session, clock=chaos.clock)
    runner = PhoenixRunner.for_run(
        chaos, agent, store, policy=PhoenixPolicy(interval=3, max_rebirths=5)
    )
    outcome = runner.run(max_steps=200)
    assert outcome.done
    assert agent.items == ALL_ITEMS  # nothing lost, nothing twice
    troubles = {e.kind for e in chaos.trace.of_type(Detection) if e.detector == "phoenix"}
    assert {"loop", "crash"} <= troubles
    first = rebirths(chaos)[0]
    assert first["skipped"] and first["snapshot"]  # the damaged one skipped, an older restored
    assert source.fetches[7] >= 2  # the stale page, fetched afresh after the self-destruct


@pytest.mark.chaos("flaky", faults=FAULTS)
@pytest.mark.must_recover_state(max_rebirths=3)
def test_the_collector_is_reborn_from_memory(chaos: Chaos) -> None:
    agent, _ = collector_for(chaos)
    store = MemorySnapshotStore(keep=3, recorder=chaos.session, clock=chaos.clock)
    runner = PhoenixRunner.for_run(
        chaos, agent, store, policy=PhoenixPolicy(interval=3, max_rebirths=5)
    )
    assert runner.run(max_steps=200).done
    assert agent.items == ALL_ITEMS


@pytest.mark.xfail(strict=True, reason="without the Phoenix pattern it never leaves the stale page")
@pytest.mark.chaos("flaky")
def test_the_collector_without_rebirth_loops_on_the_stale_page(chaos: Chaos) -> None:
    agent, _ = collector_for(chaos)
    for n in range(1, 60):  # the same collector, stepped by a plain loop
        if agent.step(n).done:
            break
    assert agent.items == ALL_ITEMS
