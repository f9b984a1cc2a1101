"""Spans: a range sent backwards is swapped only where the task writes its bounds in order, and
a missing end is the other bound of a span of times the task writes from the start's time."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

NOW = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.timezone.utc)

BOOKING = ToolSpec.from_schema("create_booking", {
    "type": "object",
    "properties": {
        "room": {"type": "string"},
        "start": {"type": "string", "format": "date-time"},
        "end": {"type": "string", "format": "date-time"},
    },
    "required": ["room", "start", "end"],
})  # fmt: skip
PRICES = ToolSpec.from_schema("search", {
    "type": "object",
    "properties": {"min_price": {"type": "integer"}, "max_price": {"type": "integer"},
                   "first_name": {"type": "string"}, "last_name": {"type": "string"}},
})  # fmt: skip
RESCHEDULE = ToolSpec.from_schema("reschedule", {
    "type": "object",
    "properties": {
        "booking_id": {"type": "string"},
        "new_start": {"type": "string", "format": "date-time"},
        "new_end": {"type": "string", "format": "date-time"},
    },
    "required": ["booking_id", "new_start", "new_end"],
})  # fmt: skip

LATE, EARLY = "2026-03-12T15:00:00+00:00", "2026-03-12T14:00:00+00:00"


@pytest.mark.parametrize(
    "task",
    ["Book Fuji on March 12 from 2pm to 3pm UTC.", "Fuji, 14:00-15:00 UTC, March 12",
     "Fuji March 12, 2 pm until 3 pm UTC"],
)  # fmt: skip
def test_a_backward_span_is_swapped_where_the_task_writes_its_bounds_in_order(task: str) -> None:
    result = ParamRepairer(BOOKING).repair(
        {"room": "fuji", "start": LATE, "end": EARLY}, "end must be after start", task, NOW
    )
    assert result.ok and result.args == {"room": "fuji", "start": EARLY, "end": LATE}
    assert result.strategy == "range_order_correction"


@pytest.mark.parametrize(
    "task",
    [None, "Book Fuji on March 12 for an hour.", "Book Fuji on March 12 from 3pm to 2pm UTC.",
     "Book Fuji on March 12 from 2:30pm to 3pm UTC."],
)  # fmt: skip
def test_a_backward_span_without_the_task_s_order_is_not_swapped(task: str | None) -> None:
    call = {"room": "fuji", "start": LATE, "end": EARLY}
    result = ParamRepairer(BOOKING).repair(call, "end must be after start", task, NOW)
    assert not result.ok or result.args == call
    quiet = ParamRepairer(BOOKING).repair(call, None, task, NOW)  # no error: sent as it is
    assert quiet.ok and quiet.args == call


def test_numbers_and_days_bounding_a_span_are_swapped_by_the_task_s_order() -> None:
    result = ParamRepairer(PRICES).repair(
        {"min_price": 500, "max_price": 100}, task="homes between 100 and 500 dollars"
    )
    assert result.ok and result.args == {"min_price": 100, "max_price": 500}
    names = {"first_name": "Zoe", "last_name": "Adams"}  # texts bound no span
    assert ParamRepairer(PRICES).repair(names, task="Adams, Zoe").args == names


@settings(max_examples=100, deadline=None)
@given(
    low=st.integers(1, 400),
    high=st.integers(401, 999),
    words=st.sampled_from(
        ["at most {a}, at least {b}", "{a} is the ceiling and {b} the floor", "{a} then {b}"]
    ),
)
def test_a_span_is_never_swapped_against_the_order_the_task_writes(
    low: int, high: int, words: str
) -> None:
    task = words.format(a=high, b=low)  # the task writes the sent maximum first
    result = ParamRepairer(PRICES).repair({"min_price": high, "max_price": low}, task=task)
    assert not result.ok or result.args == {"min_price": high, "max_price": low}


@pytest.mark.parametrize(
    ("task", "end"),
    [
        ("Move BK-1 to 16:00-17:00 UTC on March 13.", "2026-03-13T17:00:00+00:00"),
        ("Move BK-1 to March 13, from 4pm to 5:30pm UTC.", "2026-03-13T17:30:00+00:00"),
        ("Move BK-1 to March 13, 4 to 6pm UTC.", "2026-03-13T18:00:00+00:00"),
    ],
)
def test_a_missing_end_is_the_other_bound_of_the_task_s_span(task: str, end: str) -> None:
    call: dict[str, Any] = {"booking_id": "BK-1", "new_start": "2026-03-13T16:00:00+00:00"}
    result = ParamRepairer(RESCHEDULE).repair(call, task=task, now=NOW)
    assert result.ok and result.args == {**call, "new_end": end}


@pytest.mark.parametrize(
    "task",
    [
        "Move BK-1 to March 13 at 16:00 UTC.",  # no span
        "Move BK-1 to 16:00-01:00 on March 13.",  # past midnight: which day?
        "Move BK-1 to 16:00-17:00 or 16:00-18:00 on March 13.",  # two spans
        "Move BK-1 to 15:00-17:00 on March 13.",  # the span starts elsewhere
    ],
)
def test_a_missing_end_without_one_span_from_the_start_is_declined(task: str) -> None:
    call = {"booking_id": "BK-1", "new_start": "2026-03-13T16:00:00+00:00"}
    assert not ParamRepairer(RESCHEDULE).repair(call, task=task, now=NOW).ok


PAYROLL = ToolSpec.from_schema("run_payroll", {
    "type": "object",
    "properties": {"group": {"type": "string"},
                   "pay_period_start": {"type": "string", "format": "date"},
                   "pay_period_end": {"type": "string", "format": "date"}},
    "required": ["group", "pay_period_start", "pay_period_end"],
    "additionalProperties": False,
})  # fmt: skip


@pytest.mark.parametrize(
    ("sent", "start", "end"),
    [("2026-11", "2026-11-01", "2026-11-30"), ("2024-02", "2024-02-01", "2024-02-29"),
     ("2026", "2026-01-01", "2026-12-31"), ("2026/12", "2026-12-01", "2026-12-31")],
)  # fmt: skip
def test_a_span_sent_under_its_bounds_shared_name_is_its_first_and_last_day(
    sent: str, start: str, end: str
) -> None:
    result = ParamRepairer(PAYROLL).repair({"group": "monthly", "pay_period": sent})
    assert result.ok and result.args == {
        "group": "monthly", "pay_period_start": start, "pay_period_end": end,
    }  # fmt: skip


@pytest.mark.parametrize("sent", ["November", "2026-13", "last month", "2026-11-15", "Q4 2026"])
def test_a_span_that_is_no_month_or_year_is_declined(sent: str) -> None:
    assert not ParamRepairer(PAYROLL).repair({"group": "monthly", "pay_period": sent}).ok
