"""The shrinker and the search over pure predicates: deterministic, minimal, within budget."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.faults import parse_faults
from pytest_agentchaos.search.explore import explore, space_of
from pytest_agentchaos.search.shrink import Shrinker, canonical, schedule_key

KINDS = ("rate_limit", "timeout", "latency")


def _decision(target: str, index: int, kind: str, severity: float) -> dict[str, Any]:
    key = "retry_after" if kind == "rate_limit" else "seconds"
    return {"channel": "tool", "target": target, "index": index, "kind": kind,
            "detail": {key: float(severity)}}  # fmt: skip


schedules = st.lists(
    st.builds(
        _decision,
        st.sampled_from(("search", "book")),
        st.integers(1, 20),
        st.sampled_from(KINDS),
        st.integers(0, 60),
    ),
    min_size=1,
    max_size=20,
    unique_by=lambda d: (d["target"], d["index"]),
)


def burst_of_two(schedule: Any) -> bool:
    """Fails on two rate limits in a row on ``search``."""
    idx = sorted(
        d["index"] for d in schedule if (d["target"], d["kind"]) == ("search", "rate_limit")
    )
    return any(b == a + 1 for a, b in zip(idx, idx[1:], strict=False))


def slow(schedule: Any) -> bool:
    """Fails on a latency above 7 seconds."""
    return any(d["kind"] == "latency" and d["detail"]["seconds"] > 7 for d in schedule)


@settings(max_examples=60, deadline=None)
@given(schedules, st.sampled_from((burst_of_two, slow)))
def test_shrinking_is_deterministic_minimal_and_still_failing(schedule: Any, fails: Any) -> None:
    if not fails(schedule):
        return
    one = Shrinker(fails, 500).shrink(schedule)
    two = Shrinker(fails, 500).shrink(list(reversed(schedule)))
    assert one == two  # the same result whatever the order it was given in
    assert fails(one.schedule) and not one.exhausted
    for i in range(len(one.schedule)):  # 1-minimal: no fault can go
        assert not fails(one.schedule[:i] + one.schedule[i + 1 :])
    if fails is burst_of_two:
        assert [(d["index"], d["detail"]["retry_after"]) for d in one.schedule] == [(1, 0), (2, 0)]
    else:
        (d,) = one.schedule
        assert d["index"] == 1 and 7 < d["detail"]["seconds"] <= 7.35


def test_shrinking_stops_at_its_budget_with_the_best_schedule_so_far() -> None:
    schedule = canonical([_decision("search", i, "rate_limit", 30) for i in range(5, 15)])
    shrunk = Shrinker(burst_of_two, 3).shrink(schedule)
    assert shrunk.exhausted and shrunk.attempts == 3
    assert burst_of_two(shrunk.schedule) and len(shrunk.schedule) < len(schedule)


@dataclass
class Outcome:
    failure: Any


FAULTS = parse_faults(
    [{"kind": "rate_limit", "retry_after": [1, 60]}, {"kind": "latency", "seconds": [0.5, 20]}],
    "f",
)


def test_the_search_finds_a_burst_and_the_space_is_what_the_first_run_called() -> None:
    space = space_of(FAULTS, {("tool", "search"): 10, ("tool", "book"): 10})
    assert {(o.target, o.spec.kind.name) for o in space.options} == {
        (t, k) for t in ("search", "book") for k in ("rate_limit", "latency")
    }
    found = explore(space, lambda s: Outcome("x" if burst_of_two(s) else None), budget=100, seed=3)
    assert found.shrunk is not None and found.search_attempts <= 100
    assert [(d["target"], d["index"]) for d in found.shrunk] == [("search", 1), ("search", 2)]


def test_known_schedules_are_tried_first() -> None:
    space = space_of(FAULTS, {("tool", "search"): 10})
    known = [[_decision("search", 4, "rate_limit", 9), _decision("search", 5, "rate_limit", 9)]]
    found = explore(
        space, lambda s: Outcome("x" if burst_of_two(s) else None), budget=50, seed=1, known=known
    )
    assert found.known and found.search_attempts == 1


def test_nothing_found_within_the_budget() -> None:
    space = space_of(FAULTS, {("tool", "search"): 3})
    found = explore(space, lambda s: Outcome(None), budget=20, seed=1)
    assert found.found is None and found.shrunk is None and found.search_attempts <= 20


@pytest.mark.parametrize("budget", [1, 2, 5, 20, 31, 32, 33, 100])
def test_a_budget_of_n_tries_n_distinct_schedules(budget: int) -> None:
    space = space_of(FAULTS, {("tool", "search"): 10, ("tool", "book"): 10})
    tried: list[str] = []

    def attempt(schedule: Any) -> Outcome:
        tried.append(schedule_key(schedule))
        return Outcome(None)

    found = explore(space, attempt, budget=budget, seed=1)
    assert len(tried) == len(set(tried)) == budget == found.search_attempts


def test_a_space_smaller_than_the_budget_is_tried_whole_and_the_search_ends() -> None:
    fixed = parse_faults([{"kind": "timeout", "seconds": 30}], "f")
    space = space_of(fixed, {("tool", "search"): 1})
    tried: list[str] = []

    def attempt(schedule: Any) -> Outcome:
        tried.append(schedule_key(schedule))
        return Outcome(None)

    found = explore(space, attempt, budget=100_000, seed=1)
    assert len(tried) == len(set(tried)) == found.search_attempts < 100_000
    # every subset of calls 1 to 4 but the empty one can be drawn (a fault on one of them,
    # bursts, a fault after a recovery, and up to three such episodes together)
    assert len(tried) >= 15
