"""A revision counter in a graph agent's state (issue 29, loops): a planner proposing the same
plan and a critic rejecting it for the same reason, round after round, while only a
``revision`` (``版本``) number rises, is looping: the number counts the rounds of revising, not
a new revision. A plan that really changes each round is progress whatever the counter does."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_agentchaos.escape.volatility import Volatility, _counts_rounds

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loop_alarms import alarms  # noqa: E402


def rounds(counter: str, plans: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"step": "ingest", "state": {"request": "add a replica"}}]
    for n, plan in enumerate(plans, start=1):
        out.append({"step": "planner", "state": {"plan": plan, counter: n, "approved": False}})
        critic = {"verdict": "reject", counter: n, "reason": f"approval missing for {plan}"}
        out.append({"step": "critic", "state": critic})
    return out


@pytest.mark.parametrize("counter", ["revision", "version", "rev_no", "版本", "修订号"])
def test_the_same_plan_rejected_while_a_revision_number_rises_is_a_loop(counter: str) -> None:
    assert alarms(rounds(counter, ["terraform apply plan.out"] * 5))


@pytest.mark.parametrize("counter", ["revision", "版本"])
def test_a_plan_that_changes_each_round_is_progress(counter: str) -> None:
    plans = [f"terraform apply -target=module.db_{i} plan.out" for i in "abcde"]
    assert not alarms(rounds(counter, plans))


def test_a_revision_counts_rounds_and_a_position_does_not() -> None:
    assert _counts_rounds("revision") and _counts_rounds("revision_count")
    assert _counts_rounds("版本号")
    assert not _counts_rounds("revision_index") and not _counts_rounds("processed")


@pytest.mark.parametrize("name", ["_version", "revision", "step", "轮次"])
def test_a_round_counter_is_one_from_its_first_rise(name: str) -> None:
    """A state whose only change is a round counter rising by a lap's length keys as before
    at its first rise already: the name is the evidence (a count of work is not)."""
    states = Volatility(fields=False)
    keys = [states.key("critic", "", f'{{"{name}":{n},"verdict":"reject"}}') for n in (1, 3, 5)]
    assert len(set(keys)) == 1
    work = Volatility(fields=False)
    keys = [work.key("critic", "", f'{{"processed":{n},"verdict":"reject"}}') for n in (1, 3, 5)]
    assert len(set(keys)) == 3


@pytest.mark.parametrize(
    "name",
    ["checkpoint_v", "state_version", "draftRev", "save_ver", "ckpt_v", "草稿版本", "检查点版本号"],
)
def test_the_version_of_a_named_thing_counts_saves(name: str) -> None:
    assert _counts_rounds(name)
    assert not _counts_rounds("processed") and not _counts_rounds("v")  # a bare "v": no name


@pytest.mark.parametrize(
    "field",
    ["schema_version", "firmware_v", "api_ver", "target_version", "数据库版本", "固件版本号"],
)
def test_the_version_of_the_thing_worked_on_is_progress(field: str) -> None:
    """A migration or an upgrade raises the version of what it works on: each step applied
    and verified is progress, not a save counted."""
    assert not _counts_rounds(field)
    out: list[dict[str, Any]] = [{"step": "ingest", "state": {"request": "upgrade to 9"}}]
    for n in range(3, 10):
        out.append({"step": "migrate", "state": {"db": "main", field: n, "result": "applied"}})
        out.append({"step": "verify", "state": {"db": "main", field: n, "checks": "passed"}})
    assert not alarms(out)


def test_a_waiting_state_saved_again_under_a_rising_checkpoint_version_is_a_loop() -> None:
    report = {"job": "nightly_build", "status": "waiting_on_upstream", "upstream": "deps"}
    actions = [
        {"state": {**report, "updated_at": f"2026-03-01T10:0{n}:12Z", "checkpoint_v": 40 + n},
         "dt": 60}
        for n in range(6)
    ]  # fmt: skip
    assert alarms(actions)


def test_a_waiting_draft_saved_again_under_a_rising_cjk_draft_version_is_a_loop() -> None:
    report = {"任务": "周报", "状态说明": "等待审批", "审批人": "张三"}
    actions = [
        {"state": {**report, "更新时间": f"2026-03-01T10:0{n}:12Z", "草稿版本": 40 + n}, "dt": 60}
        for n in range(6)
    ]
    assert alarms(actions)


def test_a_processed_count_rising_under_a_checkpoint_version_is_progress() -> None:
    actions = [
        {"state": {"job": "backfill", "processed": 100 * n, "checkpoint_v": 40 + n}, "dt": 60}
        for n in range(6)
    ]
    assert not alarms(actions)


def test_a_save_stamp_is_a_report_counter_once_it_rose_between_two_states() -> None:
    """A checkpointer's version rises at every save: from the task's state to the plan's at
    the first rise, then on the same plan saved again and again. The first rise came between
    two states, so it counts reports, not work."""
    from pytest_agentchaos.escape.ticks import ReportCounters

    counters = ReportCounters()
    plan = {"plan": ["dedupe", "merge"], "approved": False}
    reports = [{"task": "clean up CRM"}, plan, plan, plan, plan]
    seen = [counters.mask({**r, "_version": n + 1}) for n, r in enumerate(reports)]
    assert [s["_version"] for s in seen[2:]] == ["<tick>"] * 3
    assert seen[2] == seen[3] == seen[4]


def test_a_count_that_rises_only_in_its_own_state_is_no_report_counter() -> None:
    """A try number logged at every other report (a check, then a clear, then a check) rose
    between two reports of the same check: it counts that check's tries, read as before."""
    from pytest_agentchaos.escape.ticks import ReportCounters

    counters = ReportCounters()
    check, clear = {"task": "fetch", "state": "up_for_retry"}, {"task": "fetch", "cleared": 1}
    for n in range(1, 5):
        shown = counters.mask({**check, "try_number": n})
        assert shown["try_number"] == n
        counters.mask(clear)
