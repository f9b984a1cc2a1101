"""Dates written without their year (or month and year): the next such day on the run's
clock, said so in the reason, only when it is nearer than the last one; else declined."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair.date_layouts import fix_date
from pytest_agentchaos.repair.fixes import Context, Decline, Fix

DATE = {"type": "string", "format": "date"}
NOW = dt.datetime(2026, 11, 27, 9, 30, tzinfo=dt.timezone.utc)
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _at(now: dt.datetime | None) -> Context:
    return Context(name="date", now=now)


def test_a_month_and_day_ahead_is_this_years_and_the_reason_says_so() -> None:
    fix = fix_date("Dec 10", DATE, _at(NOW))
    assert isinstance(fix, Fix) and fix.value == "2026-12-10"
    assert "no year given" in fix.reason
    assert isinstance(fix_date("12/24", DATE, _at(NOW)), Fix)
    assert fix_date("the 5th", DATE, _at(NOW)).value == "2026-12-05"  # type: ignore[union-attr]


def test_without_a_clock_an_open_order_or_a_nearer_past_day_it_is_declined() -> None:
    assert isinstance(fix_date("Dec 10", DATE, _at(None)), Decline)
    assert isinstance(fix_date("03/04", DATE, _at(NOW)), Decline)  # 3 April or 4 March
    assert isinstance(fix_date("Nov 20", DATE, _at(NOW)), Decline)  # a week ago, or next year
    assert isinstance(fix_date("the 20th", DATE, _at(NOW)), Decline)


@settings(max_examples=200, deadline=None)
@given(
    st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2090, 12, 31)),
    st.integers(min_value=0, max_value=11),
    st.integers(min_value=1, max_value=31),
)
def test_a_yearless_day_is_never_moved_into_the_past_nor_past_half_a_year(
    today: dt.date, month: int, day: int
) -> None:
    now = dt.datetime.combine(today, dt.time(12), dt.timezone.utc)
    result = fix_date(f"{_MONTHS[month]} {day}", DATE, _at(now))
    if isinstance(result, Fix):
        got = dt.date.fromisoformat(result.value)
        assert (got.month, got.day) == (month + 1, day)
        assert today <= got <= today + dt.timedelta(days=184)
    else:
        assert isinstance(result, Decline)
