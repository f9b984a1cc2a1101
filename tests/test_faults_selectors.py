"""Selectors: which calls a fault may hit (globs, counts, windows) and how bad input is reported."""

from __future__ import annotations

import fnmatch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.faults import CallInfo, FaultPlan, Selector, parse_faults, parse_selector


def call(target="search", index=1, channel="tool", t=0.0) -> CallInfo:
    return CallInfo(channel, target, index, t, {})


def sel(**raw) -> Selector:
    return parse_selector(raw, "faults[0]")


def hits(selector: Selector, indices, target="search") -> list[int]:
    return [i for i in indices if selector.matches(call(target, i))]


# -- tool globs -------------------------------------------------------------------------


def test_default_selector_matches_every_tool_and_call():
    s = Selector()
    assert all(
        s.matches(call(name, i)) for name in ["a", "search_flights", "api.x.com"] for i in (1, 7)
    )


@pytest.mark.parametrize(
    ("tools", "name", "expected"),
    [
        ("search_*", "search_flights", True),
        ("search_*", "search_", True),
        ("search_*", "research_flights", False),
        ("search", "search_flights", False),  # globs match the whole name
        ("book?", "book1", True),
        ("book?", "book12", False),
        ("[ab]*", "alpha", True),
        ("[!ab]*", "alpha", False),
        ("Search*", "search", False),  # case-sensitive, like fnmatchcase
        ("*.example.com", "api.example.com", True),
        ("*.example.com", "example.com", False),
        (["get_*", "book"], "get_weather", True),
        (["get_*", "book"], "book", True),
        (["get_*", "book"], "booking", False),
    ],
)
def test_tool_globs_use_fnmatch_semantics(tools, name, expected):
    assert sel(tools=tools).matches(call(name)) is expected


_glob_alphabet = st.text(alphabet="ab_*?", min_size=1, max_size=5)


@settings(max_examples=150, deadline=None)
@given(
    globs=st.lists(_glob_alphabet, min_size=1, max_size=3), name=st.text(alphabet="ab_", max_size=6)
)
def test_globs_agree_with_fnmatchcase(globs, name):
    expected = any(fnmatch.fnmatchcase(name, g) for g in globs)
    assert sel(tools=globs).matches_target(name) is expected


# -- counts and windows -----------------------------------------------------------------


def test_first_n_hits_calls_one_to_n():
    assert hits(sel(first=3), range(1, 10)) == [1, 2, 3]


def test_nth_hits_only_listed_calls():
    assert hits(sel(nth=[2, 5]), range(1, 10)) == [2, 5]
    assert hits(sel(nth=4), range(1, 10)) == [4]


def test_every_k_hits_multiples_of_k():
    assert hits(sel(every=3), range(1, 11)) == [3, 6, 9]
    assert hits(sel(every=1), range(1, 5)) == [1, 2, 3, 4]


def test_window_start_inclusive_end_exclusive():
    s = sel(window=[10, 20])
    at = {t: s.matches(call(t=t)) for t in (0.0, 9.999, 10.0, 15.0, 19.999, 20.0, 25.0)}
    assert at == {
        0.0: False,
        9.999: False,
        10.0: True,
        15.0: True,
        19.999: True,
        20.0: False,
        25.0: False,
    }


def test_all_conditions_must_hold():
    s = sel(tools="search*", first=6, every=2, channels="http")
    assert hits(s, range(1, 10)) == []  # wrong channel
    assert [i for i in range(1, 10) if s.matches(call("search_x", i, "http"))] == [2, 4, 6]
    assert not s.matches(call("book", 2, "http"))


def test_selector_conditions_apply_inside_a_plan():
    plan = FaultPlan(
        parse_faults([{"kind": "timeout", "tools": "search", "every": 2}], "p"), seed=3
    )
    fired = [
        (c, i)
        for c in ("search", "book")
        for i in range(1, 7)
        if plan.decide(call(c, i)) is not None
    ]
    assert fired == [("search", 2), ("search", 4), ("search", 6)]


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 12), indices=st.lists(st.integers(1, 500), max_size=30))
def test_every_k_fires_exactly_on_multiples(k, indices):
    s = sel(every=k)
    for i in indices:
        assert s.matches(call(index=i)) is (i % k == 0)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 50), indices=st.lists(st.integers(1, 200), max_size=30))
def test_first_n_fires_exactly_on_the_first_n(n, indices):
    s = sel(first=n)
    for i in indices:
        assert s.matches(call(index=i)) is (i <= n)


@settings(max_examples=60, deadline=None)
@given(
    nth=st.lists(st.integers(1, 40), min_size=1, max_size=5), indices=st.lists(st.integers(1, 40))
)
def test_nth_fires_exactly_on_listed_indices(nth, indices):
    s = sel(nth=nth)
    for i in indices:
        assert s.matches(call(index=i)) is (i in nth)


@settings(max_examples=60, deadline=None)
@given(
    start=st.floats(0, 1000, allow_nan=False),
    length=st.floats(0.001, 1000, allow_nan=False),
    ts=st.lists(st.floats(0, 3000, allow_nan=False), max_size=20),
)
def test_window_fires_exactly_inside_start_to_end(start, length, ts):
    end = start + length
    if end <= start:
        return
    s = sel(window=[start, end])
    for t in ts + [start, end]:
        assert s.matches(call(t=t)) is (start <= t < end)


def test_selector_to_dict_round_trips_and_omits_defaults():
    s = sel(
        tools=["a*", "b"],
        channels=["tool", "http"],
        probability=0.25,
        first=4,
        nth=[1, 3],
        every=2,
        max_count=5,
        window=[1, 9.5],
    )
    assert parse_selector(s.to_dict(), "x") == s
    assert Selector().to_dict() == {"tools": ["*"]}


def test_parsed_values_are_normalised():
    s = sel(tools="x", channels="http", nth=3, window=[1, 2], probability=1)
    assert s.tools == ("x",)
    assert s.channels == ("http",)
    assert s.nth == (3,)
    assert s.window == (1.0, 2.0)
    assert s.probability == 1.0


# -- parse errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "fragments"),
    [
        ({"probability": 1.5}, ["faults[0]: probability", "<= 1", "1.5"]),
        ({"probability": -0.1}, ["faults[0]: probability", ">= 0"]),
        ({"probability": "often"}, ["faults[0]: probability", "expected a finite number"]),
        ({"probability": True}, ["faults[0]: probability", "expected a finite number"]),
        ({"first": 0}, ["faults[0]: first", ">= 1", "got 0"]),
        ({"every": -2}, ["faults[0]: every", ">= 1"]),
        ({"max_count": 0}, ["faults[0]: max_count", ">= 1"]),
        ({"first": 2.5}, ["faults[0]: first", "expected an integer"]),
        ({"nth": [1, 0]}, ["faults[0]: nth[1]", ">= 1"]),
        ({"nth": []}, ["faults[0]: nth", "must not be an empty list"]),
        ({"window": [5, 1]}, ["faults[0]: window", "end 1 must be after start 5"]),
        ({"window": [5, 5]}, ["faults[0]: window", "must be after start"]),
        ({"window": [5]}, ["faults[0]: window", "[start, end]"]),
        ({"window": [-1, 5]}, ["faults[0]: window", ">= 0"]),
        ({"tools": []}, ["faults[0]: tools", "must not be an empty list"]),
        ({"tools": ""}, ["faults[0]: tools", "non-empty string"]),
        ({"tools": ["ok", 3]}, ["faults[0]: tools[1]", "tool-name glob"]),
        ({"channels": "smtp"}, ["faults[0]: channels", "'smtp'", "tool, http, model"]),
        ({"channels": ["tool", "grpc"]}, ["faults[0]: channels[1]", "'grpc'", "tool, http, model"]),
    ],
)
def test_parse_errors_name_the_key_and_what_is_allowed(raw, fragments):
    with pytest.raises(ChaosConfigError) as exc:
        parse_selector(raw, "faults[0]")
    for fragment in fragments:
        assert fragment in str(exc.value)
