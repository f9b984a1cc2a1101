"""The online loop detector agrees with a brute-force reference, event by event."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.escape.history import ActionKey, History, action_key, digest, outcome_of
from pytest_agentchaos.escape.loops import LoopDetector, LoopPolicy

POLICY = LoopPolicy(max_period=5, node_visits=4, node_window_events=10, node_window_seconds=30)


def ref_repeat(keys: list[str], i: int, policy: LoopPolicy) -> tuple[int, int, int] | None:
    """(period, repeats, first index) of the smallest period repeating at the end of keys[:i+1]."""
    for p in range(policy.min_period, policy.max_period + 1):
        k = policy.repeats_for(p)
        if i + 1 < k * p:
            continue
        block = keys[i - p + 1 : i + 1]
        primitive = all(block != block[:d] * (p // d) for d in range(1, p) if p % d == 0)
        if primitive and keys[i - k * p + 1 : i + 1] == block * k:
            run = 0
            while i - run - p >= 0 and keys[i - run] == keys[i - run - p]:
                run += 1
            return p, run // p + 1, i - run - p + 1
    return None


def ref_node(nodes: list[str | None], times: list[float], i: int, policy: LoopPolicy) -> bool:
    node = nodes[i]
    if node is None:
        return False
    visits = [j for j in range(i + 1) if nodes[j] == node]
    if len(visits) < policy.node_visits:
        return False
    first = visits[-policy.node_visits]
    return (
        i - first < policy.node_window_events
        or times[i] - times[first] <= policy.node_window_seconds
    )


def ref_state(states: list[str | None], i: int, policy: LoopPolicy) -> bool:
    if states[i] is None:
        return False
    seen = [s for s in states[: i + 1] if s is not None][-policy.state_window :]
    return seen.count(states[i]) >= policy.state_repeats


alphabet = st.sampled_from("ABCDE")


@st.composite
def streams(draw: st.DrawFn) -> list[str]:
    """Random actions with planted loops: blocks of 1-6 actions repeated 1-6 times."""
    out: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        block = draw(st.lists(alphabet, min_size=1, max_size=6))
        out.extend(block * draw(st.integers(1, 6)))
    return out


@settings(max_examples=300, deadline=None)
@given(streams(), st.data())
def test_online_detector_agrees_with_brute_force(keys: list[str], data: st.DataObject) -> None:
    nodes = [data.draw(st.sampled_from([None, "n1", "n2", "n3"])) for _ in keys]
    states = [data.draw(st.sampled_from([None, "s1", "s2", "s3", "s4"])) for _ in keys]
    times = [float(sum(data.draw(st.integers(0, 10)) for _ in range(1))) for _ in keys]
    for j in range(1, len(times)):
        times[j] += times[j - 1]
    detector = LoopDetector(POLICY)
    previous_repeat = False
    for i, k in enumerate(keys):
        alarms = detector.observe(ActionKey(tool=k), i, times[i], state=states[i], node=nodes[i])
        by_kind = {a.kind: a for a in alarms}
        expected = ref_repeat(keys, i, POLICY)
        got = by_kind.get("repeat")
        assert ((got.period, got.repeats, got.began_step) if got else None) == expected
        if got:
            assert got.new == (not previous_repeat)
            assert [b.tool for b in got.keys] == keys[i - got.period + 1 : i + 1]
        previous_repeat = got is not None
        assert ("node" in by_kind) == ref_node(nodes, times, i, POLICY)
        assert ("state" in by_kind) == ref_state(states, i, POLICY)


@given(st.lists(st.integers(0, 10**6), unique=True, max_size=200))
def test_no_loop_in_a_stream_that_never_repeats(values: list[int]) -> None:
    detector = LoopDetector()
    for i, v in enumerate(values):
        assert detector.observe(ActionKey(tool=str(v)), i, float(i)) == []


def test_polling_that_makes_progress_is_not_a_loop_but_stale_polling_is() -> None:
    detector = LoopDetector()

    def poll(result: str) -> ActionKey:
        return action_key(tool="status", args={"job": 1}, outcome=outcome_of(True), result=result)

    progress = [
        detector.observe(poll(p), i, i)
        for i, p in enumerate(["queued", "running", "running 50%", "running 90%", "done"])
    ]
    assert all(a == [] for a in progress)
    stale = [detector.observe(poll("running"), i, i) for i in range(5, 10)]
    assert [bool(a) for a in stale] == [False, False, False, True, True]
    assert stale[3][0].keys[0].describe() == "status(job=1) -> ok"


def test_alarm_stops_when_the_agent_stops_repeating() -> None:
    detector = LoopDetector()
    seen = [bool(detector.observe(ActionKey(tool=c), i, i)) for i, c in enumerate("ABABABXYZW")]
    assert seen == [False, False, False, True, True, True, False, False, False, False]


def test_outcome_keys_and_digests() -> None:
    assert outcome_of(False, "TimeoutError") == "error:TimeoutError"
    assert outcome_of(False, "HTTPStatusError", 503) == "error:HTTPStatusError:503"
    assert outcome_of(True) == "ok"
    same = action_key(tool="t", args={"a": 1, "b": 2}, outcome="ok", result=[1])
    assert same == action_key(tool="t", args={"b": 2, "a": 1}, outcome="ok", result=[1])
    assert same != action_key(tool="t", args={"a": 1, "b": 2}, outcome="ok", result=[2])
    assert digest({"a": 1}) != digest({"a": 2})


def test_history_is_bounded() -> None:
    history = History(maxlen=3)
    for i in range(10):
        history.append(ActionKey(tool=str(i)), i, float(i))
    assert [e.key.tool for e in history] == ["7", "8", "9"] and history.total == 10
    assert [e.step for e in history.last(2)] == [8, 9]


def test_policy_from_dict_validates() -> None:
    assert LoopPolicy.from_dict({"max_period": 12}).max_period == 12
    with pytest.raises(ChaosConfigError, match=r"\[escape.loops\]: unknown key 'max_perod'"):
        LoopPolicy.from_dict({"max_perod": 12})
    with pytest.raises(
        ChaosConfigError, match=r"allowed: min_period, max_period, repeats_period_1"
    ):
        LoopPolicy.from_dict({"max_perod": 12})
    with pytest.raises(ChaosConfigError, match=r"^\[escape.loops\]: repeats: must be >= 2, got 1$"):
        LoopPolicy.from_dict({"repeats": 1})
    with pytest.raises(
        ChaosConfigError, match=r"^\[escape.loops\]: max_period: expected an integer >= 1, got '8'$"
    ):
        LoopPolicy.from_dict({"max_period": "8"})
    with pytest.raises(ChaosConfigError, match=r"node_window_seconds: must be > 0 seconds, got 0"):
        LoopPolicy.from_dict({"node_window_seconds": 0})
    with pytest.raises(
        ChaosConfigError, match=r"^p: min_period: must be <= max_period \(8\), got 9$"
    ):
        LoopPolicy.from_dict({"min_period": 9}, "p")
    with pytest.raises(ChaosConfigError, match=r"^LoopPolicy: min_period: must be <= max_period"):
        LoopPolicy(min_period=3, max_period=2)
    with pytest.raises(ChaosConfigError, match=r"^LoopPolicy: state_window: must be >= 1, got 0$"):
        LoopPolicy(state_window=0)
    # seconds are normalised to float; inf means "no time limit", as it always did
    assert LoopPolicy.from_dict({"node_window_seconds": 30}).node_window_seconds == 30.0
    assert LoopPolicy.from_dict({"node_window_seconds": math.inf}).node_window_seconds == math.inf
