"""Budgets: validation of limits and how two sets of limits combine."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.errors import BudgetExhausted, ChaosConfigError, HardHalt
from pytest_agentchaos.profiles import BUDGET_KEYS, Budgets, parse_budgets

INT_KEYS = [k for k in BUDGET_KEYS if k != "max_seconds"]


def test_budget_keys():
    assert BUDGET_KEYS == (
        "max_steps",
        "max_tool_calls",
        "max_model_calls",
        "max_seconds",
        "max_tokens",
    )


def test_parse_none_and_empty_is_unlimited():
    assert parse_budgets(None, "b") == Budgets()
    assert parse_budgets({}, "b") == Budgets()
    assert not Budgets()
    assert Budgets().as_dict() == {}


def test_parse_all_keys():
    b = parse_budgets(
        {
            "max_steps": 10,
            "max_tool_calls": 5,
            "max_model_calls": 3,
            "max_seconds": 90.5,
            "max_tokens": 1000,
        },
        "b",
    )
    assert b == Budgets(10, 5, 3, 90.5, 1000)
    assert b


def test_max_seconds_accepts_int_and_float_and_is_stored_as_float():
    assert parse_budgets({"max_seconds": 60}, "b").max_seconds == 60.0
    assert isinstance(parse_budgets({"max_seconds": 60}, "b").max_seconds, float)
    assert parse_budgets({"max_seconds": 0.25}, "b").max_seconds == 0.25


def test_none_values_mean_unset():
    assert parse_budgets({"max_steps": None, "max_seconds": 5}, "b") == Budgets(max_seconds=5.0)


@pytest.mark.parametrize("key", INT_KEYS)
@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (0, "must be > 0, got 0"),
        (-3, "must be > 0, got -3"),
        (True, "expected an integer, got True"),
        (False, "expected an integer, got False"),
        (2.5, "expected an integer, got 2.5"),
        (10.0, "expected an integer, got 10.0"),
        ("10", "expected an integer, got '10'"),
    ],
)
def test_integer_budgets_reject_bad_values(key, value, fragment):
    with pytest.raises(ChaosConfigError) as exc:
        parse_budgets({key: value}, "profile.toml: budgets")
    assert str(exc.value) == f"profile.toml: budgets: {key}: {fragment}"


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (0, "must be > 0"),
        (0.0, "must be > 0"),
        (-1.5, "must be > 0"),
        (True, "expected a finite number of seconds"),
        ("60", "expected a finite number of seconds"),
        (float("nan"), "expected a finite number of seconds"),
    ],
)
def test_max_seconds_rejects_bad_values(value, fragment):
    with pytest.raises(ChaosConfigError, match=rf"^b: max_seconds: {fragment}"):
        parse_budgets({"max_seconds": value}, "b")


def test_unknown_budget_lists_allowed():
    with pytest.raises(ChaosConfigError) as exc:
        parse_budgets({"max_step": 3}, "marker chaos")
    msg = str(exc.value)
    assert msg.startswith("marker chaos: unknown budget 'max_step'; allowed:")
    for key in BUDGET_KEYS:
        assert key in msg


def test_budgets_must_be_a_table():
    with pytest.raises(ChaosConfigError, match="budgets must be a table/dict, got 5"):
        parse_budgets(5, "b")


# -- combining --------------------------------------------------------------------------


def test_override_takes_the_other_limits_where_set():
    base = Budgets(max_steps=100, max_seconds=600.0, max_tokens=5000)
    marker = Budgets(max_steps=10, max_tool_calls=4)
    assert base.override(marker) == Budgets(
        max_steps=10, max_tool_calls=4, max_seconds=600.0, max_tokens=5000
    )
    # override can loosen a limit, unlike tighten
    assert Budgets(max_steps=5).override(Budgets(max_steps=50)).max_steps == 50
    assert base.override(Budgets()) == base


def test_tighten_takes_the_stricter_limit_key_by_key():
    a = Budgets(max_steps=100, max_seconds=30.0)
    b = Budgets(max_steps=10, max_seconds=60.0, max_model_calls=7)
    assert a.tighten(b) == Budgets(max_steps=10, max_seconds=30.0, max_model_calls=7)
    assert b.tighten(a) == a.tighten(b)
    assert a.tighten(Budgets()) == a
    assert Budgets().tighten(a) == a


def test_as_dict_has_only_set_limits():
    assert Budgets(max_steps=3, max_seconds=1.5).as_dict() == {"max_steps": 3, "max_seconds": 1.5}


_limits = st.none() | st.integers(1, 10_000)
budgets = st.builds(
    Budgets,
    max_steps=_limits,
    max_tool_calls=_limits,
    max_model_calls=_limits,
    max_seconds=st.none() | st.floats(0.001, 1e6),
    max_tokens=_limits,
)


@settings(max_examples=80, deadline=None)
@given(a=budgets, b=budgets)
def test_tighten_and_override_properties(a, b):
    t = a.tighten(b)
    for key in BUDGET_KEYS:
        va, vb, vt = getattr(a, key), getattr(b, key), getattr(t, key)
        if va is None or vb is None:
            assert vt == (vb if va is None else va)
        else:
            assert vt == min(va, vb)
        vo = getattr(a.override(b), key)
        assert vo == (va if vb is None else vb)
    assert parse_budgets(t.as_dict(), "b") == t


def test_budget_exhausted_is_a_hard_halt_agents_cannot_swallow():
    exc = BudgetExhausted("max_steps", 10, 11)
    assert isinstance(exc, HardHalt) and not isinstance(exc, Exception)
    assert str(exc) == "budget max_steps exhausted: 11 > limit 10"
    assert exc.detail == {"budget": "max_steps", "limit": 10, "count": 11}
    assert str(BudgetExhausted("max_seconds", 60.0, 61.25)) == (
        "budget max_seconds exhausted: 61.250 > limit 60"
    )
