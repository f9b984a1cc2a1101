"""The online loop detector agrees with a brute-force reference, event by event."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.escape.history import ActionKey, History, digest
from pytest_agentchaos.escape.keys import action_key, outcome_of
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


def ref_progress(items: list[list[object]], first: int, i: int) -> bool:
    """Something new that stayed new: an item first seen after ``first`` and never again."""
    seen: dict[object, list[int]] = {}
    for j in range(i + 1):
        for item in items[j]:
            seen.setdefault(item, []).append(j)
    return any(len(at) == 1 and at[0] > first for at in seen.values())


def ref_node(
    nodes: list[str | None], times: list[float], items: list[list[object]], i: int,
    policy: LoopPolicy,
) -> bool:  # fmt: skip
    """The node rule: ``node_visits`` visits in the window (seconds when time moved between
    the first and the last, else events), nothing new in between."""
    node = nodes[i]
    if node is None:
        return False
    visits = [j for j in range(i + 1) if nodes[j] == node]
    if len(visits) < policy.node_visits:
        return False
    first = visits[-policy.node_visits]
    if times[i] > times[first]:
        recent = times[i] - times[first] <= policy.node_window_seconds
    else:
        recent = i - first < policy.node_window_events
    return recent and not ref_progress(items, first, i)


def entries(states: list[str]) -> list[int]:
    """Where the reported state changes: staying in a state is one sighting."""
    return [i for i, x in enumerate(states) if i == 0 or states[i - 1] != x]


def ref_state(states: list[str], i: int, policy: LoopPolicy) -> set[str] | None:
    """The state rule at ``i``: the state entered ``state_repeats`` times in the window with
    nothing new since the first of them, and every state entered since then entered as often
    (three laps); returns the cycle's states, or None."""
    k, window = policy.state_repeats, policy.state_window
    at = [j for j in entries(states) if j <= i]
    if not at or at[-1] != i:
        return None
    mine = [j for j in at if states[j] == states[i]]
    if len(mine) < k or i - mine[-k] > window:
        return None
    first = mine[-k]
    if ref_progress([[("state", states[j])] if j in at else [] for j in range(i + 1)], first, i):
        return None
    cycle = {states[j] for j in at if j >= first}
    for other in cycle:
        seen = [j for j in at if states[j] == other]
        if len(seen) < k or i - seen[-k] > window:
            return None
    return cycle


def ref_held(
    found: list[bool], items: list[list[object]], window: int,
    leaves: list[bool] | None = None,
) -> list[bool]:  # fmt: skip
    """Episodes: a state or node loop holds from a finding until something new happens after
    its latest finding, the agent leaves the cycle (``leaves``), or ``window`` actions pass."""
    holds, last = [], None
    for i, now in enumerate(found):
        if now:
            last = i
        elif last is not None and (
            ref_progress(items, last, i) or i - last > window or (leaves and leaves[i])
        ):
            last = None
        holds.append(last is not None)
    return holds


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
@given(streams())
def test_repeat_rule_agrees_with_brute_force(keys: list[str]) -> None:
    detector = LoopDetector(POLICY)
    previous = False
    for i, k in enumerate(keys):
        alarms = detector.observe(ActionKey(tool=k), i, float(i))
        got = next((a for a in alarms if a.kind == "repeat"), None)
        expected = ref_repeat(keys, i, POLICY)
        assert ((got.period, got.repeats, got.began_step) if got else None) == expected
        if got:
            assert [b.tool for b in got.keys] == keys[i - got.period + 1 : i + 1]
            assert got.new == (not previous)  # an episode begins once
        previous = got is not None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["n1", "n1", "n2", "n3", "n4", "n5"]), max_size=80), st.data())
def test_node_rule_agrees_with_brute_force(nodes: list[str], data: st.DataObject) -> None:
    gaps = [data.draw(st.sampled_from([0, 0, 1, 5, 20])) for _ in nodes]
    times = [float(sum(gaps[: j + 1])) for j in range(len(nodes))]
    items: list[list[object]] = [[("node", n)] for n in nodes]
    found = [ref_node(list(nodes), times, items, i, POLICY) for i in range(len(nodes))]
    holds = ref_held(found, items, POLICY.node_window_events)
    detector = LoopDetector(POLICY)
    previous = False
    for i, n in enumerate(nodes):
        alarms = detector.observe(ActionKey(node=n), i, times[i])
        got = [a for a in alarms if a.kind == "node"]
        assert bool(got) == holds[i]
        if got:
            assert got[0].new == (not previous)
        previous = bool(got)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["s1", "s2", "s3", "s4", "s5"]), max_size=60))
def test_state_rule_agrees_with_brute_force(states: list[str]) -> None:
    at = set(entries(states))
    items: list[list[object]] = [[("state", x)] if i in at else [] for i, x in enumerate(states)]
    cycles = [ref_state(states, i, POLICY) for i in range(len(states))]
    found = [c is not None for c in cycles]
    cycle: set[str] = set()
    leaves = []
    for i, x in enumerate(states):
        leaves.append(i in at and cycle != set() and x not in cycle)
        cycle = cycles[i] if cycles[i] is not None else cycle
    holds = ref_held(found, items, POLICY.state_window, leaves)
    detector = LoopDetector(POLICY)
    previous = False
    for i, x in enumerate(states):
        alarms = detector.observe(ActionKey(digest=x), i, float(i), state=x)
        got = [a for a in alarms if a.kind == "state"]
        assert bool(got) == holds[i], i
        if got:
            assert got[0].new == (not previous)
        previous = bool(got)


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
    assert [bool(a) for a in stale] == [False, False, True, True, True]  # at the third
    assert stale[2][0].keys[0].describe() == "status(job=1) -> ok"


def test_alarm_stops_when_the_agent_stops_repeating() -> None:
    detector = LoopDetector()
    seen = [bool(detector.observe(ActionKey(tool=c), i, i)) for i, c in enumerate("ABABABXYZW")]
    assert seen == [False, False, False, False, False, True, False, False, False, False]


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
