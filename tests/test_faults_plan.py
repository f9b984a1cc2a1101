"""FaultPlan: seeded, deterministic, one fault per call, and replayable from a trace."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.faults import CallInfo, FaultPlan, parse_fault, parse_faults
from pytest_agentchaos.trace import FaultInjected, Trace

BOOKING_SCHEMA = {
    "type": "object",
    "properties": {
        "origin": {"type": "string"},
        "date": {"type": "string", "format": "date"},
        "passengers": {"type": "integer", "minimum": 1, "maximum": 9},
    },
    "required": ["origin", "date", "passengers"],
}


def call(
    target: str,
    index: int,
    channel: str = "tool",
    t: float = 0.0,
    args: dict[str, Any] | None = None,
    has_previous: bool | None = None,
    schema: dict[str, Any] | None = None,
) -> CallInfo:
    return CallInfo(
        channel,
        target,
        index,
        t,
        args if args is not None else {},
        schema,
        index > 1 if has_previous is None else has_previous,
    )


def plan_of(*faults: dict[str, Any], seed: int = 0) -> FaultPlan:
    return FaultPlan(parse_faults(list(faults), "test"), seed=seed)


def outcome(decision):
    return None if decision is None else (decision.fault, decision.kind.name, decision.detail)


def run(plan: FaultPlan, calls: list[CallInfo]) -> list[Any]:
    return [outcome(plan.decide(c)) for c in calls]


def numbered(targets: list[str], channel: str = "tool") -> list[CallInfo]:
    """Calls in the given order, each tool's calls numbered 1, 2, 3 ... as the injectors do."""
    counts: dict[str, int] = {}
    out = []
    for name in targets:
        counts[name] = counts.get(name, 0) + 1
        out.append(call(name, counts[name], channel, args={"q": name, "n": counts[name]}))
    return out


MIXED = (
    {"kind": "timeout", "seconds": [1, 10], "probability": 0.2, "tools": ["search*"]},
    {"kind": "http_error", "status": [500, 502, 503], "probability": 0.3},
    {"kind": "latency", "seconds": [0.1, 3], "probability": 0.4},
    {"kind": "garbled_output", "probability": 0.2},
)


# -- determinism ------------------------------------------------------------------------


def test_same_seed_and_calls_give_identical_decisions():
    calls = numbered(["search", "book", "search", "weather", "book"] * 20)
    first = run(plan_of(*MIXED, seed=1234), calls)
    second = run(plan_of(*MIXED, seed=1234), calls)
    assert first == second
    assert any(d is not None for d in first) and any(d is None for d in first)


def test_different_seeds_differ_somewhere():
    calls = numbered(["search", "book"] * 50)
    decisions = {tuple(map(repr, run(plan_of(*MIXED, seed=s), calls))) for s in range(5)}
    assert len(decisions) == 5


@settings(max_examples=40, deadline=None)
@given(
    order=st.lists(st.sampled_from(["search_flights", "book", "weather"]), min_size=1, max_size=40),
    seed=st.integers(0, 2**32),
)
def test_per_tool_decisions_do_not_depend_on_interleaving(order, seed):
    interleaved: dict[str, list[Any]] = {}
    plan = plan_of(*MIXED, seed=seed)
    for c in numbered(order):
        interleaved.setdefault(c.target, []).append(outcome(plan.decide(c)))

    for tool, decisions in interleaved.items():
        alone = run(plan_of(*MIXED, seed=seed), numbered([tool] * len(decisions)))
        assert decisions == alone, tool


@pytest.mark.parametrize("seed", [0, 1, 99])
def test_probability_matches_over_many_calls(seed):
    plan = plan_of({"kind": "timeout", "probability": 0.3}, seed=seed)
    n = 5000
    fired = sum(plan.decide(call("search", i)) is not None for i in range(1, n + 1))
    assert abs(fired / n - 0.3) <= 0.03
    assert plan.fired() == [fired]


def test_probability_zero_never_fires_and_one_always_fires():
    never = plan_of({"kind": "timeout", "probability": 0})
    always = plan_of({"kind": "timeout", "probability": 1})
    calls = [call("x", i) for i in range(1, 301)]
    assert all(never.decide(c) is None for c in calls)
    assert all(always.decide(c) is not None for c in calls)


# -- one fault per call, plan order ----------------------------------------------------


def test_first_matching_fault_in_plan_order_wins():
    plan = plan_of(
        {"kind": "timeout", "tools": "search"},
        {"kind": "http_error", "status": 503},
        {"kind": "latency"},
    )
    assert outcome(plan.decide(call("search", 1))) == (0, "timeout", {"seconds": 30.0})
    d = plan.decide(call("book", 1))
    assert (d.fault, d.kind.name, d.detail["status"]) == (1, "http_error", 503)
    assert plan.fired() == [1, 1, 0]  # latency matched every call but never got a turn


def test_at_most_one_fault_per_call_and_later_faults_fill_in():
    plan = plan_of({"kind": "timeout", "probability": 0.5}, {"kind": "connection_error"})
    decisions = [plan.decide(call("x", i)) for i in range(1, 401)]
    assert all(d is not None for d in decisions)
    timeouts = sum(d.fault == 0 for d in decisions)
    assert 120 < timeouts < 280
    assert plan.fired() == [timeouts, 400 - timeouts]


def test_max_count_caps_a_fault_across_all_tools():
    plan = plan_of({"kind": "http_error", "max_count": 3}, {"kind": "latency", "seconds": 1})
    kinds = [plan.decide(c).kind.name for c in numbered(["a", "b", "a", "c", "b", "a"])]
    assert kinds == ["http_error"] * 3 + ["latency"] * 3
    assert plan.fired() == [3, 3]


def test_max_count_with_probability_fires_exactly_max_count_times_over_many_calls():
    plan = plan_of({"kind": "rate_limit", "probability": 0.4, "max_count": 20})
    fired = [plan.decide(call("api", i)) for i in range(1, 1001)]
    assert sum(d is not None for d in fired) == 20


def test_repeated_output_needs_a_previous_output():
    plan = plan_of({"kind": "repeated_output"}, {"kind": "latency", "seconds": 1})
    assert outcome(plan.decide(call("search", 1, has_previous=False))) == (
        1,
        "latency",
        {"seconds": 1.0},
    )
    assert outcome(plan.decide(call("search", 2, has_previous=True))) == (0, "repeated_output", {})

    alone = plan_of({"kind": "repeated_output"})
    assert alone.decide(call("other", 5, has_previous=False)) is None
    assert alone.fired() == [0]


# -- channels ---------------------------------------------------------------------------


def test_malformed_params_never_hits_the_model_channel():
    plan = plan_of({"kind": "malformed_params"})
    args = {"origin": "Oslo", "date": "2025-03-14", "passengers": 2}
    for i in range(1, 50):
        assert plan.decide(call("llm", i, "model", args=args)) is None
    assert plan.decide(call("book", 1, "tool", args=args)).kind.name == "malformed_params"
    assert plan.decide(call("api.example.com", 1, "http", args=args)) is not None


def test_malformed_params_on_model_channel_is_a_config_error():
    with pytest.raises(ChaosConfigError, match=r"cannot apply to channels \['model'\].*tool, http"):
        parse_fault({"kind": "malformed_params", "channels": "model"}, "faults[0]")


def test_channels_selector_limits_the_fault():
    plan = plan_of({"kind": "timeout", "channels": ["http"]})
    assert plan.decide(call("x", 1, "tool")) is None
    assert plan.decide(call("x", 1, "model")) is None
    assert plan.decide(call("x", 1, "http")) is not None


def test_malformed_listed_with_model_channel_still_skips_model():
    spec = parse_fault({"kind": "malformed_params", "channels": ["tool", "model"]}, "f")
    assert spec.applies_to("tool")
    assert not spec.applies_to("model")
    assert not spec.applies_to("http")


# -- specs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    MIXED
    + (
        {"kind": "rate_limit", "retry_after": [5, 30], "max_count": 2, "nth": [1, 3]},
        {
            "kind": "malformed_params",
            "mutations": ["wrong_type"],
            "channels": "tool",
            "window": [0, 5],
        },
        {"kind": "repeated_output", "every": 2, "first": 10},
    ),
)
def test_fault_spec_to_dict_parses_back_to_the_same_spec(raw):
    spec = parse_fault(raw, "f")
    again = parse_fault(spec.to_dict(), "f")
    assert again == spec
    assert spec.to_dict()["kind"] == raw["kind"]


def test_parse_faults_requires_a_list_and_names_the_bad_entry():
    assert parse_faults(None, "p") == ()
    with pytest.raises(ChaosConfigError, match="'faults' must be a list"):
        parse_faults({"kind": "timeout"}, "p")
    with pytest.raises(ChaosConfigError, match=r"p\[1\]: kind: unknown fault kind 'boom'"):
        parse_faults([{"kind": "timeout"}, {"kind": "boom"}], "p")


# -- replay from a trace's schedule ----------------------------------------------------


def _record(plan: FaultPlan, calls: list[CallInfo]) -> Trace:
    trace = Trace()
    for step, c in enumerate(calls, start=1):
        d = plan.decide(c)
        if d is not None:
            trace.append(
                FaultInjected(
                    step,
                    c.t,
                    kind=d.kind.name,
                    channel=c.channel,
                    target=c.target,
                    index=c.index,
                    fault=d.fault,
                    detail=d.detail,
                )
            )
    return trace


REPLAY_FAULTS = (
    {"kind": "malformed_params", "probability": 0.3, "tools": "book"},
    {"kind": "rate_limit", "retry_after": [1, 60], "probability": 0.2, "channels": "http"},
    {"kind": "repeated_output", "probability": 0.1},
    *MIXED,
)


def _replay_calls() -> list[CallInfo]:
    calls = []
    counts: dict[tuple[str, str], int] = {}
    for i in range(120):
        channel, target = [("tool", "book"), ("tool", "search"), ("http", "api"), ("model", "llm")][
            i % 4
        ]
        counts[(channel, target)] = n = counts.get((channel, target), 0) + 1
        args = {"origin": f"City{i}", "date": "2025-03-14", "passengers": 1 + i % 9}
        calls.append(call(target, n, channel, t=float(i), args=args, schema=BOOKING_SCHEMA))
    return calls


def test_from_schedule_replays_the_recorded_decisions_exactly():
    calls = _replay_calls()
    original = run(plan_of(*REPLAY_FAULTS, seed=77), calls)
    trace = _record(plan_of(*REPLAY_FAULTS, seed=77), calls)
    schedule = Trace.from_json(trace.to_json()).schedule()
    assert len(schedule) == sum(d is not None for d in original) > 10

    replay = FaultPlan.from_schedule(schedule)
    assert replay.replaying
    replayed = run(replay, calls)
    assert replayed == original


def test_replayed_decisions_have_the_same_effects():
    calls = _replay_calls()
    plan = plan_of(*REPLAY_FAULTS, seed=5)
    replay = FaultPlan.from_schedule(_record(plan_of(*REPLAY_FAULTS, seed=5), calls).schedule())
    compared = 0
    for c in calls:
        a, b = plan.decide(c), replay.decide(c)
        assert (a is None) == (b is None)
        if a is None:
            continue
        ea, eb = a.kind.effect(a.detail, c), b.kind.effect(b.detail, c)
        assert (ea.delay, ea.failure, ea.args, ea.replay) == (
            eb.delay,
            eb.failure,
            eb.args,
            eb.replay,
        )
        if ea.transform is not None:
            assert ea.transform({"ok": [1, 2, 3]}) == eb.transform({"ok": [1, 2, 3]})
        compared += 1
    assert compared > 10


def test_replay_does_not_draw_anything_new():
    schedule = [
        {
            "channel": "tool",
            "target": "search",
            "index": 2,
            "kind": "http_error",
            "fault": 0,
            "detail": {"status": 418, "body": "teapot"},
        }
    ]
    plan = FaultPlan.from_schedule(schedule, faults=parse_faults([{"kind": "timeout"}], "p"))
    assert plan.decide(call("search", 1)) is None
    assert plan.decide(call("search", 3)) is None
    assert plan.decide(call("search", 2, "http")) is None
    assert outcome(plan.decide(call("search", 2))) == (
        0,
        "http_error",
        {"status": 418, "body": "teapot"},
    )


def test_replay_skips_repeated_output_without_a_previous_output():
    plan = FaultPlan.from_schedule(
        [{"channel": "tool", "target": "s", "index": 1, "kind": "repeated_output", "detail": {}}]
    )
    assert plan.decide(call("s", 1, has_previous=False)) is None
    assert plan.decide(call("s", 1, has_previous=True)).kind.name == "repeated_output"


def test_from_schedule_errors_name_the_entry():
    with pytest.raises(ChaosConfigError, match=r"schedule\[1\]: missing 'index'"):
        FaultPlan.from_schedule(
            [
                {
                    "channel": "tool",
                    "target": "a",
                    "index": 1,
                    "kind": "latency",
                    "detail": {"seconds": 2},
                },
                {"channel": "tool", "target": "a", "kind": "latency"},
            ]
        )
    with pytest.raises(ChaosConfigError, match=r"schedule\[0\]: kind: unknown fault kind 'nope'"):
        FaultPlan.from_schedule([{"channel": "tool", "target": "a", "index": 1, "kind": "nope"}])
