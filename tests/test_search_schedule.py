"""Explicit schedules: a user's entries become the decisions a plan replays exactly, a bad
entry is one clear error, and the marker line and schedule file round-trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.faults import CallInfo, FaultPlan, parse_faults
from pytest_agentchaos.search.schedule import (
    entries,
    marker_line,
    parse_schedule,
    read_schedule_file,
    write_schedule_file,
)


def test_an_entry_takes_the_kinds_defaults_for_what_it_leaves_out() -> None:
    (decision,) = parse_schedule([{"target": "search", "call": 2, "kind": "rate_limit"}])
    assert decision == {
        "channel": "tool",
        "target": "search",
        "index": 2,
        "kind": "rate_limit",
        "detail": {"status": 429, "retry_after": 30.0},
    }


def test_the_plan_replays_exactly_the_scheduled_calls_and_leaves_the_rest_fault_free() -> None:
    schedule = parse_schedule(
        [
            {"target": "search", "call": 2, "kind": "timeout", "seconds": 5},
            {"target": "book", "call": 1, "kind": "http_error", "status": 503},
        ]
    )
    plan = FaultPlan.from_schedule(schedule, parse_faults([{"kind": "timeout"}], "p"))
    fired = {
        (t, i): d.detail if d else None
        for t in ("search", "book")
        for i in (1, 2, 3)
        for d in [plan.decide(CallInfo("tool", t, i, 0.0, {}))]
    }
    assert fired == {
        ("search", 1): None,
        ("search", 2): {"seconds": 5.0},
        ("search", 3): None,
        ("book", 1): {"status": 503, "body": None},
        ("book", 2): None,
        ("book", 3): None,
    }


def test_beyond_profile_draws_the_unnamed_calls_from_the_profiles_faults() -> None:
    schedule = parse_schedule([{"target": "search", "call": 1, "kind": "latency", "seconds": 1}])
    faults = parse_faults([{"kind": "timeout", "probability": 1.0}], "p")
    plan = FaultPlan.from_schedule(schedule, faults, beyond="profile", seed=1)
    first = plan.decide(CallInfo("tool", "search", 1, 0.0, {}))
    second = plan.decide(CallInfo("tool", "search", 2, 0.0, {}))
    other = plan.decide(CallInfo("tool", "book", 1, 0.0, {}))
    assert first is not None and first.kind.name == "latency"
    assert second is not None and second.kind.name == "timeout"
    assert other is not None and other.kind.name == "timeout"
    with pytest.raises(ChaosConfigError, match="beyond"):
        FaultPlan.from_schedule(schedule, faults, beyond="sometimes")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("search", "schedule: expected a list of schedule entries, got 'search'"),
        ([["search", 1]], r"schedule\[0\]: a schedule entry must be a dict"),
        ([{"target": "search", "kind": "timeout"}], r"schedule\[0\]: missing 'call'"),
        ([{"target": "s", "call": 0, "kind": "timeout"}], r"schedule\[0\]: call: must be >= 1"),
        ([{"target": "s", "call": 1, "kind": "nap"}], r"schedule\[0\]: kind: unknown fault kind"),
        (
            [{"target": "s", "call": 1, "kind": "timeout", "retry_after": 3}],
            r"schedule\[0\]: unknown key 'retry_after' for kind 'timeout'; allowed: target, "
            "call, kind, channel, seconds",
        ),
        (
            [{"target": "s", "call": 1, "kind": "timeout", "seconds": -1}],
            r"schedule\[0\]\.seconds: must be >= 0",
        ),
        (
            [{"target": "s", "call": 1, "kind": "timeout"}] * 2,
            r"schedule\[1\]: a second entry for call 1 of 's'",
        ),
        (
            [{"target": "s", "call": 1, "kind": "malformed_params", "mutation": "typo"}],
            r"schedule\[0\]\.mutation: ",
        ),
    ],
)
def test_a_malformed_entry_is_one_error_naming_it(raw: object, message: str) -> None:
    with pytest.raises(ChaosConfigError, match=message):
        parse_schedule(raw)


def test_the_marker_line_is_python_that_parses_back_to_the_same_decisions() -> None:
    schedule = parse_schedule(
        [
            {"target": "search", "call": 1, "kind": "rate_limit", "retry_after": 2},
            {"target": "chat", "call": 3, "kind": "timeout", "channel": "model", "seconds": 1.5},
        ]
    )
    line = marker_line(schedule, seed=7)
    assert line == (
        '@pytest.mark.chaos(schedule=[{"target": "search", "call": 1, "kind": "rate_limit", '
        '"retry_after": 2}, {"target": "chat", "call": 3, "kind": "timeout", "channel": '
        '"model", "seconds": 1.5}], seed=7)'
    )
    args = line[len("@pytest.mark.chaos(") : line.index("], seed=") + 1]
    assert parse_schedule(eval(args.split("=", 1)[1])) == schedule  # noqa: S307 - our own text
    assert parse_schedule(entries(schedule)) == schedule


def test_a_schedule_file_round_trips_and_a_bad_one_names_the_file(tmp_path: Path) -> None:
    schedule = parse_schedule([{"target": "search", "call": 2, "kind": "timeout"}])
    path = write_schedule_file(
        tmp_path / "s.json", test="t.py::test_x", schedule=schedule, seed=3, profile="flaky"
    )
    found = read_schedule_file(path)
    assert found.decisions == schedule
    assert (found["test"], found["seed"], found["profile"], found["beyond"]) == (
        "t.py::test_x", 3, "flaky", "none"
    )  # fmt: skip
    data = json.loads(path.read_text())
    data["schedule"][0]["call"] = "two"
    path.write_text(json.dumps(data))
    with pytest.raises(ChaosConfigError, match=r"s\.json: schedule\[0\]: call"):
        read_schedule_file(path)
    path.write_text("{")
    with pytest.raises(ChaosConfigError, match=r"s\.json: not JSON"):
        read_schedule_file(path)
    with pytest.raises(ChaosConfigError, match="no such schedule file"):
        read_schedule_file(tmp_path / "gone.json")
