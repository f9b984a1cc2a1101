"""Repairs the task's own words settle: what a value leaves open (a day/month order, a list
joined into one text, an abbreviated zone, a bound) is fixed only where the task says which,
and declined as before where it does not."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.repair.choose import for_value
from pytest_agentchaos.repair.coerce import convert
from pytest_agentchaos.repair.date_layouts import fix_date
from pytest_agentchaos.repair.fixes import DROP, Context, Decline, Fix
from pytest_agentchaos.repair.infer import InferenceRequest, RuleInferer
from pytest_agentchaos.repair.mechanical import clamp
from pytest_agentchaos.repair.zones import fix_zone, zones_named_in

NOW = dt.datetime(2024, 10, 22, 9, 0)
DATE = {"type": "string", "format": "date"}
LIST = {"type": "array", "items": {"type": "string"}}


def fixed(result: Any) -> Any:
    assert isinstance(result, Fix), result
    assert 0 < result.confidence <= 1 and result.reason
    return result.value


# -- a day/month order ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "task", "want"),
    [
        ("10/01/2024", "issues updated since October 1st, 2024", "2024-10-01"),
        ("10/01/2024", "issues updated since 10 January 2024", "2024-01-10"),
        ("03/04/2024", "flights on 2024-04-03 please", "2024-04-03"),
    ],
)
def test_an_order_the_task_states_is_taken(value: str, task: str, want: str) -> None:
    assert fixed(fix_date(value, DATE, Context(name="since", task=task, now=NOW))) == want


@pytest.mark.parametrize(
    "task",
    [None, "issues since the start of the month", "from 2024-10-01 to 2024-01-10"]
    + ["on 10/01/2024"],  # the task's own date is as ambiguous as the value
)
def test_an_order_the_task_leaves_open_is_declined(task: str | None) -> None:
    result = fix_date("10/01/2024", DATE, Context(name="since", task=task, now=NOW))
    assert isinstance(result, Decline) and "day/month" in result.reason


# -- a list joined into one text -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "task", "want"),
    [
        ("octocat, hubot", "assign it to octocat and hubot", ["octocat", "hubot"]),
        ("bug, ui, p1", "label it bug, ui, and p1", ["bug", "ui", "p1"]),
        ("a;b", "tags a & b", ["a", "b"]),
        ("Lyon, Nice", "either Lyon or Nice", ["Lyon", "Nice"]),
    ],
)
def test_a_joined_list_the_task_enumerates_is_split(value: str, task: str, want: Any) -> None:
    assert fixed(convert(value, LIST, Context(name="names", task=task))) == want


@pytest.mark.parametrize(
    "task",
    [None, "fly to Paris, France", "assign it to octocat", "octocat, hubot and more"]
    + ["assign it to hubot and octocat"],  # another order: not this text's parts as listed
)
def test_a_joined_text_the_task_does_not_enumerate_is_declined(task: str | None) -> None:
    value = "Paris, France" if task and "Paris" in task else "octocat, hubot"
    result = convert(value, LIST, Context(name="names", task=task))
    assert isinstance(result, Decline), result


# -- time zones -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "want"),
    [("Pacific Time", "America/Los_Angeles"), ("eastern standard time", "America/New_York")]
    + [("Central European Summer Time", "Europe/Paris"), ("Japan Standard Time", "Asia/Tokyo")],
)
def test_spoken_zone_names(value: str, want: str) -> None:
    assert fixed(fix_zone(value, Context())) == want


@pytest.mark.parametrize(
    ("value", "task", "want"),
    [
        ("PST", "What is 10am Pacific time in Berlin?", "America/Los_Angeles"),
        ("CST", "a call at 9 China Standard Time", "Asia/Shanghai"),
        ("CST", "a call at 9 Central time", "America/Chicago"),
    ],
)
def test_an_abbreviation_the_task_spells_out(value: str, task: str, want: str) -> None:
    assert fixed(fix_zone(value, Context(task=task))) == want


@pytest.mark.parametrize(
    "task", [None, "Convert 10:00 CST to London time.", "9 Central time, or China Standard Time"]
)
def test_an_abbreviation_the_task_does_not_settle_is_declined(task: str | None) -> None:
    result = fix_zone("CST", Context(task=task))
    assert isinstance(result, Decline) and "abbreviation" in result.reason


def test_zones_named_in_a_text_in_order_each_once() -> None:
    text = "From New York to Tokyo, then back to New York; Pacific Time for the call."
    assert zones_named_in(text) == ["America/New_York", "Asia/Tokyo", "America/Los_Angeles"]
    assert zones_named_in("Meet the Center team at the Troll hut") == []  # no place named


CONVERT = ToolSpec.from_schema(
    "convert_time",
    {
        "type": "object",
        "properties": {
            "source_timezone": {"type": "string", "description": "Source IANA timezone name"},
            "time": {"type": "string"},
            "target_timezone": {"type": "string", "description": "Target IANA timezone name"},
        },
        "required": ["source_timezone", "time", "target_timezone"],
    },
)


@pytest.mark.parametrize(
    ("task", "want"),
    [("What is 14:00 London time in Tokyo?", "Asia/Tokyo")]
    + [("14:00 London time in Tokyo and in Paris?", None), ("14:00 London time?", None)],
)
def test_the_inferer_takes_the_one_zone_no_field_holds(task: str, want: str | None) -> None:
    args = {"source_timezone": "Europe/London", "time": "14:00"}
    found = RuleInferer().infer(InferenceRequest(CONVERT, args, ("target_timezone",), task))
    assert (found["target_timezone"].value if found else None) == want


def test_a_zone_an_error_rejects_is_read_with_the_task() -> None:
    repairer = ParamRepairer(CONVERT)
    args = {"source_timezone": "PST", "time": "10:00", "target_timezone": "Europe/Berlin"}
    error = "Invalid timezone: 'No time zone found with key PST'"
    result = repairer.repair(args, error=error, task="What is 10am Pacific time in Berlin?")
    assert result.ok and result.args["source_timezone"] == "America/Los_Angeles"
    # the same error with a task that does not say which zone: declined
    alone = repairer.repair(args, error=error, task="What is 10:00 PST in Berlin?")
    assert not alone.ok and alone.args is None
    # an error that names no parameter vetoes nothing the call breaks by its descriptions
    # (an IANA name): the repair is the one made with no error at all
    other = repairer.repair(args, error="upstream failure", task="10am Pacific time in Berlin")
    assert other.ok and other.args == repairer.repair(args, task="10am Pacific time in Berlin").args
    # and on a call that breaks nothing, such an error stays unknown: declined
    fine = {**args, "source_timezone": "America/Los_Angeles"}
    assert not repairer.repair(fine, error="upstream failure", task="10am Pacific time").ok


def test_the_inferer_takes_the_one_enum_item_the_task_names_for_a_list() -> None:
    spec = ToolSpec.from_schema(
        "search",
        {"type": "object", "properties": {"q": {"type": "string"}, "type": {
            "type": "array", "items": {"type": "string", "enum": ["album", "artist", "track"]}}},
         "required": ["q", "type"]},
    )  # fmt: skip
    found = RuleInferer().infer(
        InferenceRequest(spec, {"q": "Kind of Blue"}, ("type",), "Find the album Kind of Blue")
    )
    assert found["type"].value == ["album"]
    both = InferenceRequest(spec, {"q": "x"}, ("type",), "Find the album or the artist x")
    assert RuleInferer().infer(both) == {}


# -- bounds -----------------------------------------------------------------------------------

PAGE = {"type": "integer", "minimum": 1, "maximum": 100}
BELOW_A_MILLION = {"type": "integer", "exclusiveMaximum": 10**6}


@pytest.mark.parametrize(
    ("name", "value", "schema", "task", "want"),
    [
        ("per_page", 500, PAGE, "as many per page as GitHub allows", 100),
        ("limit", 1000, PAGE, "the maximum allowed, please", 100),
        ("max_length", 10**6, BELOW_A_MILLION, "as much as it allows", 999999),
        ("page", 0, PAGE, "show the first page of results", 1),
        ("minutes", -60, {"type": "integer", "minimum": 0}, "email me 60 minutes before", 60),
    ],
)  # fmt: skip
def test_a_bound_the_task_asks_for(
    name: str, value: int, schema: Any, task: str, want: int
) -> None:
    assert fixed(clamp(value, schema, Context(name=name, task=task))) == want


@pytest.mark.parametrize(
    ("name", "value", "task"),
    [
        ("per_page", 500, "Show me 500 results on one page"),
        ("per_page", 150, "the first 150 issues"),  # "first" is not "the first page"
        ("page", 0, "show the first result"),
        ("start_index", -5000, "the part that got cut off at the end"),
        ("minutes", -60, "email me an hour before"),
    ],
)
def test_a_bound_the_task_does_not_ask_for_is_declined(name: str, value: int, task: str) -> None:
    schema = {"type": "integer", "minimum": 1, "maximum": 100}
    result = clamp(value, schema, Context(name=name, task=task))
    assert isinstance(result, Decline) and "clamping" in result.reason


@given(st.integers(-(10**6), 10**6).filter(lambda v: not 1 <= v <= 100), st.text(max_size=80))
@settings(max_examples=60, deadline=None)
def test_a_clamp_lands_in_bounds_or_declines(value: int, task: str) -> None:
    result = clamp(value, PAGE, Context(name="page", task=task))
    assert isinstance(result, Decline) or 1 <= result.value <= 100


# -- "all" for a filter that gives all when left out -----------------------------------------

STATE = {"type": "string", "enum": ["OPEN", "CLOSED"]}


def test_all_for_a_filter_whose_description_says_leaving_it_out_gives_all() -> None:
    described = STATE | {"description": "by default both open and closed issues are returned"}
    for value in ("all", "ALL", "both"):
        assert fixed(for_value("enum", value, described, Context(), None)) is DROP
    assert isinstance(for_value("enum", "all", STATE, Context(), None), Decline)
    assert isinstance(
        for_value("enum", "openish", described, Context(), None), (Decline, type(None))
    )
