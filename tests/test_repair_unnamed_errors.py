"""Errors that name no parameter: the field is found by evidence (the one value of the call
whose field's own words the error speaks of), and repaired only from the task's own
spelling of that value; several values one error refuses are narrowed to those the task does
not write as sent."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

WEATHER = {
    "type": "object",
    "properties": {
        "q": {"type": "string", "description": "City name, state code and country code"},
        "units": {"type": "string", "enum": ["standard", "metric", "imperial"]},
    },
    "required": ["q"],
}
STOCK = {
    "type": "object",
    "properties": {
        "stock_code": {"type": "string", "description": "The stock code"},
        "date": {"type": "string", "description": "The date, YYYY-MM-DD"},
    },
    "required": ["stock_code", "date"],
}
NOT_FOUND = '{"cod":"404","message":"city not found"}'


def _repair(schema: dict, args: dict, error: str, task: str):
    return ParamRepairer(ToolSpec.from_schema("tool", schema)).repair(args, error, task)


def test_city_not_found_points_at_the_field_described_as_a_city() -> None:
    result = _repair(WEATHER, {"q": "Reykjavk"}, NOT_FOUND, "weather in Reykjavik today?")
    assert result.ok and result.args == {"q": "Reykjavik"}
    accents = _repair(WEATHER, {"q": "Krakow", "units": "metric"}, NOT_FOUND, "Kraków, metric")
    assert accents.ok and accents.args["q"] == "Kraków"


def test_a_value_the_task_writes_as_sent_is_genuinely_not_found() -> None:
    result = _repair(WEATHER, {"q": "Atlantis"}, NOT_FOUND, "weather in Atlantis")
    assert not result.ok


def test_an_error_whose_words_speak_of_no_field_is_declined() -> None:
    result = _repair(WEATHER, {"q": "Reykjavk"}, '{"message": "upstream said no"}', "Reykjavik")
    assert not result.ok and "names no parameter" in result.reason


def test_of_two_values_refused_together_the_one_the_task_writes_otherwise_is_repaired() -> None:
    error = "The stock code or date is not in the database."
    args = {"stock_code": "aapl", "date": "2023-03-04"}
    result = _repair(STOCK, args, error, "price of AAPL on 2023-03-04?")
    assert result.ok and result.args == {"stock_code": "AAPL", "date": "2023-03-04"}
    both_as_sent = _repair(STOCK, {"stock_code": "NVDA", "date": "2023-03-04"}, error,
                           "price of NVDA on 2023-03-04")  # fmt: skip
    assert not both_as_sent.ok


def test_a_span_another_field_holds_is_not_taken_for_this_one() -> None:
    schema = {
        "type": "object",
        "properties": {"check_in": {"type": "string"}, "check_out": {"type": "string"}},
    }
    args = {"check_in": "2026-12-03", "check_out": "2026-12-02"}
    result = _repair(schema, args, '{"detail":"check_out must be after check_in"}',
                     "check in on 2026-12-03 for 2 nights")  # fmt: skip
    assert not result.ok or result.args["check_out"] != "2026-12-03"


@settings(max_examples=60, deadline=None)
@given(
    city=st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=5, max_size=12),
    noise=st.sampled_from(["not found", "is unknown", "no such place", "does not exist"]),
)
def test_a_city_the_task_writes_exactly_as_sent_is_never_changed(city: str, noise: str) -> None:
    name = city.title()
    result = _repair(WEATHER, {"q": name}, f"city {noise}", f"What's the weather in {name}?")
    assert not result.ok or result.args["q"] == name


def test_a_name_the_tool_does_not_have_is_not_stripped_of_the_sigil_the_task_writes() -> None:
    schema = {
        "type": "object",
        "properties": {"channel_id": {"type": "string", "description": "The channel's ID"}},
    }
    error = '{"ok":false,"error":"channel_not_found"}'
    result = _repair(schema, {"channel_id": "#eng-alerts"}, error, "reply in #eng-alerts")
    assert not result.ok
