"""The repair stack's strategies and diagnosis, module by module (repairer.py is tested
elsewhere): a strategy fixes what keeps the value's meaning and declines, naming the cause,
what it cannot tell."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import os
import subprocess
import sys
import time
import types
import uuid
from typing import Annotated, Any, Literal, Optional, TypedDict

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.repair.coerce import convert
from pytest_agentchaos.repair.date_layouts import fix_date
from pytest_agentchaos.repair.dates import read_date
from pytest_agentchaos.repair.diagnose import diagnose, error_problems
from pytest_agentchaos.repair.enums import match_enum
from pytest_agentchaos.repair.fixes import Context, Decline, Fix
from pytest_agentchaos.repair.infer import InferenceRequest, LLMInferer, RuleInferer, loads_lenient
from pytest_agentchaos.repair.mechanical import clamp, fix_format, fix_length, fix_pattern
from pytest_agentchaos.repair.spec import ToolSpec

NOW = dt.datetime(2024, 10, 22, 9, 0)  # a Tuesday
CTX, NOW_CTX = Context(), Context(now=NOW)
INT, NUM, STR, BOOL = ({"type": t} for t in ("integer", "number", "string", "boolean"))
ARRAY, OBJECT, NULLABLE_INT = {"type": "array"}, {"type": "object"}, {"type": ["integer", "null"]}
CABINS = ["economy", "premium_economy", "business", "first"]
DATE, DATE_TIME = {"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}
UUID = "12345678-1234-5678-1234-567812345678"


def fixed(result: Any, strategy: str) -> Any:
    """The value of ``result``, which must be a Fix by ``strategy``."""
    assert isinstance(result, Fix), result
    assert result.strategy == strategy, result
    assert 0 < result.confidence <= 1 and result.reason
    return result.value


def declined(result: Any, strategy: str, *words: str) -> None:
    """``result`` is a Decline by ``strategy`` whose reason names each of ``words``."""
    assert isinstance(result, Decline), result
    assert result.strategy == strategy, result
    for word in words:
        assert word.lower() in result.reason.lower(), result.reason


# -- coerce.convert ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "schema", "want"),
    [("3", INT, 3), ("1,200", INT, 1200), ("$45", NUM, 45), ("1.200,50", NUM, 1200.5)]
    + [("€ 1,200.50", NUM, 1200.5), ("two", INT, 2), ("-3", INT, -3), ("3.0", INT, 3)]
    + [("yes", BOOL, True), ("Off", BOOL, False), ("enabled", BOOL, True), (1, BOOL, True)]
    + [('["a", "b"]', ARRAY, ["a", "b"]), ('{"a": 1}', OBJECT, {"a": 1})]
    + [("null", NULLABLE_INT, None), ("None", NULLABLE_INT, None), ("", NULLABLE_INT, None)],
)
def test_conversions_that_keep_the_meaning(value: Any, schema: Any, want: Any) -> None:
    got = fixed(convert(value, schema, CTX), "schema_type_conversion")
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize(
    ("value", "schema", "cause"),
    [(2.5, INT, "rounding"), ("2.5", INT, "rounding"), ("50%", NUM, "percentage")]
    + [("5 kg", NUM, "unit"), ("1,5", NUM, "separator"), ("1e400", NUM, "finite")]
    + [(True, INT, "yes/no"), ("maybe", BOOL, "neither yes nor no"), (None, STR, "guess")]
    + [("[1,", ARRAY, "not valid JSON"), ("two and a half", NUM, "not a number")]
    + [pytest.param("1.200", NUM, "separator")],
)
def test_conversions_that_would_change_the_value_decline(value: Any, schema: Any, cause: str):
    declined(convert(value, schema, CTX), "schema_type_conversion", cause)


def test_whole_float_becomes_an_integer() -> None:
    assert type(fixed(convert(3.0, INT, CTX), "schema_type_conversion")) is int


def test_numbers_become_strings_surely_where_text_is_digits() -> None:
    digits = Context(name="flight_number")
    got = [fixed(convert(v, STR, digits), "schema_type_conversion") for v in (3, 4.0, 2.5)]
    assert got == ["3", "4", "2.5"]
    assert convert(3, STR, Context(name="origin")).confidence < convert(3, STR, digits).confidence


def test_a_value_of_the_right_type_or_an_untyped_schema_is_left_alone() -> None:
    assert convert("null", {"type": ["string", "null"]}, CTX) is None
    assert convert(3, INT, CTX) is convert("x", {}, CTX) is None


def test_wrap_in_list() -> None:
    assert fixed(convert("Paris", ARRAY, Context(name="cities")), "wrap_in_list") == ["Paris"]
    other_count = Context(name="cities", task="weather for 2 days in Paris")
    assert fixed(convert("Paris", ARRAY, other_count), "wrap_in_list") == ["Paris"]
    declined(convert("Paris", {**ARRAY, "minItems": 2}, CTX), "wrap_in_list", "at least 2")


@pytest.mark.parametrize(
    "task",
    ["compare two cities", "weather in 3 cities", "both cities"]
    + [pytest.param("compare two big cities")],
)
def test_wrap_in_list_declines_when_the_task_names_several(task: str) -> None:
    declined(convert("Paris", ARRAY, Context(name="cities", task=task)), "wrap_in_list", "names")


def test_unwrap_one_item_list_and_decline_several() -> None:
    assert fixed(convert(["Paris"], STR, CTX), "unwrap_list") == "Paris"
    assert fixed(convert(["3"], NUM, CTX), "unwrap_list") == 3
    assert fixed(convert([{"a": 1}], OBJECT, CTX), "unwrap_list") == {"a": 1}
    assert isinstance(convert(["Paris", "Rome"], STR, CTX), Decline)
    assert isinstance(convert(["1", "2"], INT, CTX), Decline)


def test_unwrap_into_an_integer_is_reported_as_unwrap_list() -> None:
    assert fixed(convert(["3"], INT, CTX), "unwrap_list") == 3


def test_unwrap_list_decline_says_several_values() -> None:
    declined(convert(["Paris", "Rome"], STR, CTX), "unwrap_list", "2 values")


@given(st.integers(-(10**12), 10**12))
@settings(max_examples=60, deadline=None)
def test_any_integer_written_plain_or_grouped_reads_back(n: int) -> None:
    for text in (str(n), f"{n:,}"):
        assert fixed(convert(text, INT, CTX), "schema_type_conversion") == n


# -- enums.match_enum -------------------------------------------------------------------------

BY_FIELD = {"cabin": {"coach": "economy"}}


@pytest.mark.parametrize(
    ("value", "want"),
    [("Business", "business"), ("premium-economy", "premium_economy"), ("econmy", "economy")]
    + [("PREMIUM ECONOMY", "premium_economy"), ("business class", "business")]
    + [("first class please", "first"), ("premium economy seat", "premium_economy")]
    + [pytest.param("buisness", "business")],
)
def test_enum_value_matched(value: str, want: str) -> None:
    assert fixed(match_enum(value, CABINS, CTX), "enum_value_correction") == want


@pytest.mark.parametrize("table", [{"coach": "economy"}, {"economy": ["std", "coach"]}, BY_FIELD])
def test_synonyms_in_every_table_shape(table: dict[str, Any]) -> None:
    ctx = Context(name="cabin", synonyms=table)
    assert fixed(match_enum("Coach", CABINS, ctx), "enum_value_correction") == "economy"
    elsewhere = Context(name="seat", synonyms=BY_FIELD)
    declined(match_enum("coach", CABINS, elsewhere), "enum_value_correction", "none of")
    not_allowed = Context(synonyms={"coach": "steerage"})
    declined(match_enum("coach", CABINS, not_allowed), "enum_value_correction", "none of")


def test_enum_declines_naming_the_candidates() -> None:
    assert match_enum("business", CABINS, CTX) is None
    several = match_enum("economy or business", CABINS, CTX)
    declined(several, "enum_value_correction", "several", "'economy'", "'business'")
    close = match_enum("deluxe suite x", ["deluxe_suite_a", "deluxe_suite_b", "basic"], CTX)
    declined(close, "enum_value_correction", "could be", "deluxe_suite_a", "deluxe_suite_b")
    for nonsense in ("xyzzy", "", None, ["business"]):
        declined(match_enum(nonsense, CABINS, CTX), "enum_value_correction", "none of", "first")


def test_fuzzy_score_is_the_policys() -> None:
    # two typos in seven letters: past the one-typo rule, so the policy's score decides
    lenient, strict = Context(fuzzy_score=70), Context(fuzzy_score=95)
    assert fixed(match_enum("ecomony", CABINS, lenient), "enum_value_correction") == "economy"
    declined(match_enum("ecomony", CABINS, strict), "enum_value_correction", "none of")


@pytest.mark.parametrize(
    ("typo", "value"),
    [("frist", "first"), ("buisness", "business"), ("prmeium economy", "premium_economy"),
     ("econmy", "economy"), ("bussiness", "business")],
)  # fmt: skip
def test_one_typo_away_from_one_value_is_that_value(typo: str, value: str) -> None:
    assert (
        fixed(match_enum(typo, CABINS, Context(fuzzy_score=99)), "enum_value_correction") == value
    )


def test_enum_numbers() -> None:
    assert fixed(match_enum("2", [1, 2, 3], CTX), "enum_value_correction") == 2
    assert match_enum(2.0, [1, 2, 3], CTX) is None
    declined(match_enum("5", [1, 2, 3], CTX), "enum_value_correction", "none of 1, 2, 3")
    declined(match_enum(True, [1, 0], CTX), "enum_value_correction", "none of")


@given(st.sampled_from(CABINS), st.sampled_from([str.upper, str.title, str.swapcase]))
@settings(max_examples=30, deadline=None)
def test_any_allowed_value_in_another_case_is_matched(value: str, write: Any) -> None:
    text = write(value).replace("_", " ")
    assert fixed(match_enum(text, CABINS, CTX), "enum_value_correction") == value


# -- dates.read_date / fix_date ---------------------------------------------------------------

D = "2024-10-26"


@pytest.mark.parametrize(
    ("text", "want"),
    [("Oct 26, 2024", D), ("26 October 2024", D), ("Saturday, October 26, 2024", D)]
    + [("2024/10/26", D), ("2024.10.26", D), ("20241026", D), ("2024年10月26日", D)]
    + [("26/10/2024", D), ("10/26/2024", D), ("03/03/2024", "2024-03-03")]
    + [("today", "2024-10-22"), ("tomorrow", "2024-10-23"), ("yesterday", "2024-10-21")]
    + [("in 3 days", "2024-10-25"), ("2 weeks ago", "2024-10-08"), ("明天", "2024-10-23")]
    + [("this Friday", "2024-10-25"), ("next Tuesday", "2024-10-29")]
    + [("next Monday", "2024-10-28"), ("last Sunday", "2024-10-20")]
    + [("last Wednesday", "2024-10-16"), ("tomorrow 12:30", "2024-10-23")],
)
def test_dates_read(text: str, want: str) -> None:
    assert read_date(text, NOW)[0].isoformat() == want
    assert fixed(fix_date(text, DATE, NOW_CTX), "date_format_correction") == want


@pytest.mark.parametrize(
    ("text", "cause"),
    [("Tuesday", "today or a week from today"), ("03/04/2024", "day/month or month/day")]
    + [("Oct 20", "year"), ("the 20th", "month and year"), ("soon", "span")]
    + [("Feb 30, 2024", "not a day of the calendar"), ("2024-02-30", "not a day of the")]
    + [("Friday, October 26, 2024", "is a Saturday, not a Friday"), ("next week", "span")]
    # said on a Tuesday: this week's Friday, or next week's? yesterday, or eight days ago?
    + [("next Friday", "this week's Friday or next week's")]
    + [("last Monday", "this week's Monday or last week's")],
)
def test_dates_that_cannot_be_told_decline(text: str, cause: str) -> None:
    # said on 22 October: Oct 20 and the 20th were two days ago, nearer than next year's
    with pytest.raises(ValueError, match="(?i)" + cause.replace("/", ".")):
        read_date(text, NOW)
    declined(fix_date(text, DATE, NOW_CTX), "date_format_correction", cause)


def test_a_day_without_its_year_is_the_next_one_when_that_is_the_nearer() -> None:
    assert fixed(fix_date("Oct 26", DATE, NOW_CTX), "date_format_correction") == "2024-10-26"
    assert fixed(fix_date("the 26th", DATE, NOW_CTX), "date_format_correction") == "2024-10-26"
    declined(fix_date("Oct 26", DATE, CTX), "date_format_correction", "year")  # no clock


@pytest.mark.parametrize("text", ["today", "in 3 days", "next Monday", "明天"])
def test_relative_date_without_a_clock_declines(text: str) -> None:
    declined(fix_date(text, DATE, CTX), "date_format_correction", "no clock")


def test_date_time_needs_a_time_and_a_zone() -> None:
    for text, want in [
        ("Oct 26, 2024 3pm UTC", "2024-10-26T15:00:00Z"),
        ("2024/10/26 15:30Z", "2024-10-26T15:30:00Z"),
        ("2024-10-26 15:30 +02:00", "2024-10-26T15:30:00+02:00"),
    ]:
        assert fixed(fix_date(text, DATE_TIME, CTX), "date_format_correction") == want
    for text in ("Oct 26, 2024", "tomorrow"):
        declined(fix_date(text, DATE_TIME, NOW_CTX), "date_format_correction", "no time of day")
    declined(fix_date("Oct 26, 2024 3pm", DATE_TIME, CTX), "date_format_correction", "time zone")


@pytest.mark.parametrize(
    ("schema", "want"),
    [
        ({"type": "string", "description": "Departure date, DD/MM/YYYY"}, "26/10/2024"),
        ({"type": "string", "description": "use mm-dd-yyyy"}, "10-26-2024"),
        ({"type": "string", "pattern": r"^\d{2}\.\d{2}\.\d{4}$"}, "26.10.2024"),
        ({"type": "string", "pattern": r"^\d{8}$"}, "20241026"),
    ],
)
def test_layout_from_description_or_pattern(schema: dict[str, Any], want: str) -> None:
    assert fixed(fix_date("Oct 26, 2024", schema, CTX), "date_format_correction") == want


def test_no_layout_to_write_leaves_the_value_to_others() -> None:
    assert fix_date(D, DATE, CTX) is None  # already right
    assert fix_date("Oct 26, 2024", STR, CTX) is None
    assert fix_date("Oct 26, 2024", {"pattern": "(["}, CTX) is None
    assert fix_date("Oct 26, 2024", {"pattern": r"^\d\d/\d\d/\d{4}$"}, CTX) is None  # 2 layouts
    assert fix_date(20241026, DATE, CTX) is None


@pytest.fixture
def machine_zone() -> Any:
    """Sets the process's local time zone (TZ, tzset); restores it after the test."""
    if not hasattr(time, "tzset"):
        pytest.skip("time.tzset is Unix-only")
    old = os.environ.get("TZ")

    def use(zone: str) -> None:
        os.environ["TZ"] = zone
        time.tzset()

    yield use
    os.environ.pop("TZ", None)
    os.environ.update({} if old is None else {"TZ": old})
    time.tzset()


@pytest.mark.parametrize("zone", ["UTC", "Europe/London", "America/New_York", "Asia/Tokyo"])
def test_utc_and_gmt_are_utc_whatever_the_machines_zone(machine_zone: Any, zone: str) -> None:
    machine_zone(zone)
    for text in ("Oct 26, 2024 3pm UTC", "Jan 5, 2024 3pm GMT", "Oct 26, 2024 3pm GMT"):
        got = fixed(fix_date(text, DATE_TIME, CTX), "date_format_correction")
        assert got.endswith("T15:00:00Z"), (zone, text, got)


def test_other_zone_names_read_the_same_on_every_machine(machine_zone: Any) -> None:
    results = []
    for zone in ("UTC", "America/New_York"):
        machine_zone(zone)
        if zone != "UTC" and time.tzname[0] != "EST":
            pytest.skip("no time zone database on this machine")
        results.append(fix_date("Oct 26, 2024 3pm EST", DATE_TIME, CTX))
    assert results[0] == results[1]


RENDERINGS = ("%B %d, %Y", "%Y/%m/%d", "%d %b %Y", "%Y%m%d", "%A, %B %d, %Y", "%Y年%m月%d日")


@given(st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2090, 12, 31)))
@settings(max_examples=150, deadline=None)
def test_every_rendering_of_a_date_reads_back(day: dt.date) -> None:
    for layout in RENDERINGS:
        text = day.strftime(layout)
        assert read_date(text)[0] == day, text
        assert fixed(fix_date(text, DATE, CTX), "date_format_correction") == day.isoformat()


@given(st.integers(1990, 2090), st.integers(1, 12), st.integers(1, 12), st.sampled_from("/.-"))
@settings(max_examples=100, deadline=None)
def test_day_and_month_that_could_swap_always_decline(y: int, d: int, m: int, sep: str) -> None:
    assume(d != m)
    with pytest.raises(ValueError, match="day/month or month/day"):
        read_date(f"{d:02d}{sep}{m:02d}{sep}{y}", NOW)


# -- mechanical -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "pattern", "want"),
    [("lis", "^[A-Z]{3}$", "LIS"), (" LIS ", "^[A-Z]{3}$", "LIS")]
    + [("555-123-4567", r"^\d{10}$", "5551234567"), ("ab-12 34", "^[A-Z0-9]{6}$", "AB1234")],
)
def test_fix_pattern(value: str, pattern: str, want: str) -> None:
    assert fixed(fix_pattern(value, pattern, CTX), "pattern_correction") == want


@pytest.mark.parametrize(
    ("value", "pattern", "cause"),
    [("aBcDe", "^[A-Z]{5}$|^[a-z]{5}$", "could become 'ABCDE' or 'abcde'")]
    + [("a b", "([", "does not compile")]
    + [("Lisbon", "^[A-Z]{3}$", "no mechanical change fits"), (3, "^x$", "not text")],
)
def test_fix_pattern_declines(value: Any, pattern: str, cause: str) -> None:
    declined(fix_pattern(value, pattern, CTX), "pattern_correction", cause)


def test_fix_length() -> None:
    assert fixed(fix_length("  abc  ", {"maxLength": 3}, CTX), "length_correction") == "abc"
    declined(fix_length("abcdef", {"maxLength": 3}, CTX), "length_correction", "cutting")
    declined(fix_length("ab", {"minLength": 3}, CTX), "length_correction", "3 are needed")
    declined(fix_length([1, 2, 3], {"maxItems": 2}, CTX), "length_correction", "items")


@pytest.mark.parametrize(
    ("value", "fmt", "want"),
    [("Jane Doe <Jane@Example.COM>", "email", "Jane@example.com")]
    + [("mailto:jane@example.com", "email", "jane@example.com")]
    + [("{" + UUID + "}", "uuid", UUID), ("urn:uuid:" + UUID, "uuid", UUID)]
    + [(UUID.replace("-", ""), "uuid", UUID), ("<https://a.io/b>", "uri", "https://a.io/b")]
    + [(' "https://a.io" ', "uri", "https://a.io")],
)
def test_fix_format(value: str, fmt: str, want: str) -> None:
    assert fixed(fix_format(value, fmt, CTX), "format_correction") == want


def test_fix_format_declines_or_passes() -> None:
    declined(fix_format("localhost", "uri", CTX), "format_correction", "scheme")
    declined(fix_format("/docs/index.html", "url", CTX), "format_correction", "scheme")
    declined(fix_format("10.0.0.7/status", "uri", CTX), "format_correction", "scheme")
    declined(fix_format("not an email", "email", CTX), "format_correction", "no email")
    declined(fix_format(UUID[:-1] + "Z", "uuid", CTX), "format_correction", "not a UUID")
    assert fix_format(UUID, "uuid", CTX) is fix_format("x", "hostname", CTX) is None


def test_a_bare_web_address_gets_https_unless_the_tool_sends_data_there() -> None:
    fixed = fix_format("docs.python.org/3/library/re.html", "uri", CTX)
    assert isinstance(fixed, Fix) and fixed.value == "https://docs.python.org/3/library/re.html"
    assert fix_format("www.example.org:8443/a?b=c", "url", CTX).value == (  # type: ignore[union-attr]
        "https://www.example.org:8443/a?b=c"
    )
    # a callback or webhook: http or https decides where the user's data goes
    hook = Context(name="webhook_url", description="Where we POST the results")
    declined(fix_format("hooks.example.net/build", "uri", hook), "format_correction", "sends")
    notify = Context(name="target", description="The URL we send delivery notifications to")
    declined(fix_format("api.example.net/in", "uri", notify), "format_correction", "sends")


@pytest.mark.parametrize(
    ("name", "value", "schema"),
    [("percentage", 150, {"minimum": 0, "maximum": 100}), ("temperature", 2.5, {"maximum": 2})]
    + [("limit", 500, {"minimum": 1, "maximum": 100}), ("page_size", 0, {"minimum": 1})],
)
def test_clamp_always_declines(name: str, value: float, schema: Any) -> None:
    # another scale, or (for a page size) other results than were asked for
    declined(clamp(value, schema, Context(name=name)), "clamp_value", "another scale")


@given(st.integers(101, 10**9))
@settings(max_examples=30, deadline=None)
def test_no_out_of_range_value_is_clamped(value: int) -> None:
    declined(clamp(value, {"maximum": 100}, Context(name="limit")), "clamp_value", "clamping")


# -- diagnose ---------------------------------------------------------------------------------

CABIN_VALUES = ["economy", "business", "first"]
PROPS = {"cabin_class": {"type": "string", "enum": CABIN_VALUES}, "count": INT, "to": STR}
PROPS |= {"passengers": INT | {"minimum": 1}, "limit": INT | {"maximum": 100}, "temperature": NUM}
PROPS |= {"departure_date": DATE}
BOOK = {"type": "object", "properties": PROPS, "required": ["passengers"]}
SPEC = ToolSpec.from_schema("book", BOOK | {"additionalProperties": False})
OK = {"passengers": 1}


class HTTPError(Exception):
    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


@pytest.mark.parametrize(
    "error",
    [TimeoutError("read timed out"), 503, 429, "rate limit exceeded", HTTPError("x", 502)]
    + [HTTPError("rate limit exceeded", 400)],
)
def test_transient_errors_are_retried_as_is(error: Any) -> None:
    diagnosis = diagnose(SPEC, OK, error)
    assert (diagnosis.kind, diagnosis.problems) == ("transient", ())


@pytest.mark.parametrize("error", [404, "Unknown tool: x", HTTPError("Not found", 404)])
def test_missing_tool_needs_another_route(error: Any) -> None:
    diagnosis = diagnose(SPEC, OK, error)
    assert (diagnosis.kind, diagnosis.problems) == ("route", ())


def test_schema_problems_and_valid_args() -> None:
    assert diagnose(SPEC, OK).kind == "valid"
    diagnosis = diagnose(SPEC, {"passengers": "two", "foo": 1})
    assert diagnosis.kind == "parameter"
    got = [(p.kind, p.path) for p in diagnosis.problems]
    assert got == [("unknown", ("foo",)), ("type", ("passengers",))]
    assert "passengers" in diagnosis.reason and "foo" in diagnosis.reason


def test_an_error_repeating_a_schema_problem_adds_nothing() -> None:
    diagnosis = diagnose(SPEC, {}, "Missing required parameter: passengers")
    got = [(p.kind, p.path, p.source) for p in diagnosis.problems]
    assert got == [("missing", ("passengers",), "schema")]


def test_an_error_naming_no_parameter_is_unknown() -> None:
    diagnosis = diagnose(SPEC, OK, ValueError("something went wrong"))
    assert diagnosis.kind == "unknown" and "names no parameter" in diagnosis.reason


FASTAPI = {"detail": [{"type": "missing", "loc": ["body", "passengers"], "msg": "Field required"}]}
OPENAI = {"message": "Invalid type", "param": "temperature", "code": "invalid_type"}
ZOD = {"code": "invalid_type", "expected": "number", "received": "string", "path": ["count"]}
ZOD_ISSUES = [{**ZOD, "message": "Expected number, received string"}]
EXPECTED = "'economy', 'business' or 'first'"  # pydantic's literal_error, in ctx.expected
LITERAL = {"type": "literal_error", "loc": ["body", "cabin_class"], "ctx": {"expected": EXPECTED}}
ONE_OF = "Invalid value for 'cabin_class': must be one of economy, business, first"
MISSING, UNEXPECTED = "missing 1 required positional argument", "got an unexpected keyword argument"
DATE_LAYOUT = "Invalid date format for departure_date, expected DD/MM/YYYY"
LAYOUT = "departure_date must be in the format YYYY-MM-DD"
EXTRA = "Additional properties are not allowed ('foo' was unexpected)"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (f"book() {MISSING}: 'passengers'", ("missing", ("passengers",), None)),
        (f"book() {UNEXPECTED} 'passenger'", ("unknown", ("passenger",), None)),
        ("'x' is a required property", ("missing", ("x",), None)),
        ("Missing required parameter: passengers", ("missing", ("passengers",), None)),
        (ONE_OF, ("enum", ("cabin_class",), CABIN_VALUES)),
        (LAYOUT, ("format", ("departure_date",), "YYYY-MM-DD")),
        ("limit must be at most 100", ("range", ("limit",), 100)),
        ("passengers must be at least 1", ("range", ("passengers",), 1)),
        ("count must be an integer", ("type", ("count",), "integer")),
        (EXTRA, ("unknown", ("foo",), None)),
        ("HTTP 422: " + json.dumps(FASTAPI), ("missing", ("passengers",), None)),
        (json.dumps({"detail": [LITERAL]}), ("enum", ("cabin_class",), CABIN_VALUES)),
        (json.dumps({"error": OPENAI}), ("type", ("temperature",), None)),
        (json.dumps({"issues": ZOD_ISSUES}), ("type", ("count",), "number")),
        pytest.param(json.dumps(ZOD_ISSUES), ("type", ("count",), "number")),
        pytest.param(DATE_LAYOUT, ("format", ("departure_date",), "DD/MM/YYYY")),
        pytest.param(f"send() {MISSING}: 'to'", ("missing", ("to",), None)),
    ],
)
def test_error_texts_name_the_problem(text: str, want: tuple[Any, ...]) -> None:
    assert [(p.kind, p.path, p.expected) for p in error_problems(text, SPEC)] == [want]


def test_error_problems_carry_the_schema_a_strategy_needs() -> None:
    (date,) = error_problems(LAYOUT, SPEC)
    assert date.schema["format"] == "date" and date.source == "error"
    (limit,) = error_problems("limit must be at most 100", SPEC)
    assert limit.keyword == "maximum" and limit.schema["maximum"] == 100
    two = error_problems("book() missing 2 required positional arguments: 'cc' and 'bcc'", SPEC)
    assert [(p.kind, p.path) for p in two] == [("missing", ("cc",)), ("missing", ("bcc",))]
    body = {"detail": [{"type": "missing", "loc": ["body", "legs", 0, "date"], "msg": "required"}]}
    (nested,) = error_problems(json.dumps(body), SPEC)
    assert nested.path == ("legs", 0, "date") and nested.field == "legs[0].date"


def test_openai_param_with_an_index() -> None:
    body = {"error": {"message": "Invalid type", "param": "messages[0].content", "code": "x"}}
    assert [p.path for p in error_problems(json.dumps(body))] == [("messages", 0, "content")]


def test_ten_megabytes_of_prose_returns() -> None:
    text = "Bad request: the payload could not be processed. " * 200_000
    assert diagnose(SPEC, OK, text).kind == "unknown"


def test_ten_megabytes_of_brackets_do_not_crash() -> None:
    assert diagnose(SPEC, OK, "[" * 10_000_000).kind == "unknown"


def test_ten_megabytes_in_one_token_return() -> None:
    # in a child process, so the suite cannot hang: reading 8000 characters takes milliseconds
    code = "from pytest_agentchaos.repair.diagnose import diagnose as d\n"
    code += "print(d(None, {}, 'Invalid request body: ' + 'A' * 10_000_000).kind)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=120
    )  # a guard against a hang, not a speed test
    assert done.stdout.strip() == b"unknown"


# -- infer ------------------------------------------------------------------------------------

INFER_PROPS = {"passengers": INT, "departure_date": DATE, "city": STR}
INFER_PROPS |= {"cabin_class": {"enum": ["economy", "premium_economy", "business"]}}
INFER_PROPS |= {"size": {"type": "string", "enum": ["s", "xs", "m"]}}
INFER_SPEC = ToolSpec.from_schema("book_flight", {"type": "object", "properties": INFER_PROPS})


def rules(task: str, field: str) -> Any:
    found = RuleInferer().infer(InferenceRequest(INFER_SPEC, {}, (field,), task=task, now=NOW))
    return fixed(found[field], "infer_missing_param") if field in found else None


@pytest.mark.parametrize(
    ("field", "task", "want"),  # want None: the task leaves it open, nothing is inferred
    [
        ("passengers", "Book a flight for 3 passengers to Lisbon", 3),
        ("passengers", "passengers: 2", 2),
        ("passengers", "two passengers please", 2),
        ("passengers", "book for 2 passengers, no wait, 3 passengers", None),
        ("passengers", "Book 2 seats", None),
        ("cabin_class", "fly business class", "business"),
        ("cabin_class", "premium economy please", "premium_economy"),
        ("cabin_class", "economy or business", None),
        ("departure_date", "fly on Oct 26, 2024", D),
        ("departure_date", "leaving tomorrow", "2024-10-23"),
        ("departure_date", "out on 2024-10-26, back on 2024-10-30", None),
        ("departure_date", "fly on 03/04/2024", None),
        ("city", "the city 'Lisbon'", "Lisbon"),
        ("city", 'city is "Porto"', "Porto"),
        ("city", "city 'Lisbon' or city 'Porto'", None),
        pytest.param("size", "size s or xs", None),
    ],
)
def test_rule_inferer_reads_only_what_the_task_states(field: str, task: str, want: Any) -> None:
    assert rules(task, field) == want


def test_llm_inferer_repairs_the_answer_and_keeps_only_missing_fields() -> None:
    prompts: list[str] = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return "Sure!\n```json\n{'passengers': 3, 'vip': True, 'city': None, 'x': 1,}\n```"

    missing = ("passengers", "vip", "city")
    request = InferenceRequest(INFER_SPEC, {}, missing, task="Book 3 seats", error="no pax")
    found = LLMInferer(llm, confidence=0.7).infer(request)
    got = {k: fixed(v, "llm_infer_missing_param") for k, v in found.items()}
    assert got == {"passengers": 3, "vip": True} and found["passengers"].confidence == 0.7
    (prompt,) = prompts
    for part in ("book_flight", "Book 3 seats", "passengers, vip, city", "no pax"):
        assert part in prompt


@pytest.mark.parametrize("answer", [None, 42, "[1, 2]", "I cannot tell"])
def test_llm_inferer_ignores_answers_that_are_no_object(answer: Any) -> None:
    request = InferenceRequest(INFER_SPEC, {}, ("passengers",), task="t")
    assert LLMInferer(lambda prompt: answer).infer(request) == {}
    with pytest.raises(TypeError, match="callable"):
        LLMInferer("not callable")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "want"),
    [('{"a": 1}', {"a": 1}), ('```\n{"a": [1, 2,],}\n```', {"a": [1, 2]})]
    + [("Answer: {'a': True, 'b': None, 'c': False}", {"a": True, "b": None, "c": False})]
    + [('{"a": "True story"}', {"a": "True story"}), ("", None), ("no json here", None)]
    + [("{broken", None), ("[1, 2]", None), ("} {", None)]
    + [pytest.param("{'t': 'None of it'}", {"t": "None of it"})],
)
def test_loads_lenient(text: str, want: Any) -> None:
    assert loads_lenient(text) == want


# -- spec.ToolSpec.from_schema / problems -----------------------------------------------------

PARAMS = {"type": "object", "properties": {"q": STR}, "required": ["q"]}
FIND = {"name": "search", "description": "Find"}


@pytest.mark.parametrize(
    "definition",
    [{"type": "function", "function": FIND | {"parameters": PARAMS}}]
    + [FIND | {"parameters": PARAMS}, FIND | {"input_schema": PARAMS}],
)
def test_from_schema_reads_tool_formats(definition: dict[str, Any]) -> None:
    spec = ToolSpec.from_schema(None, definition)
    assert (spec.name, spec.description, dict(spec.parameters)) == ("search", "Find", PARAMS)


def test_from_schema_plain_and_errors() -> None:
    spec = ToolSpec.from_schema("search", {**PARAMS, "description": "plain"})
    assert (spec.name, spec.description, spec.problems({"q": "x"})) == ("search", "plain", [])
    with pytest.raises(ValueError, match="no name"):
        ToolSpec.from_schema(None, PARAMS)
    bad = {"type": "object", "properties": {"q": {"type": "strin"}}}
    with pytest.raises(ChaosConfigError, match="ToolSpec 'broken'.*not a valid JSON Schema"):
        ToolSpec.from_schema("broken", bad)


FORMATS = {
    f: {"type": "string", "format": f} for f in ("date", "date-time", "email", "uuid", "uri")
}
LEG = {"type": "object", "properties": {"date": DATE}, "required": ["date"]}
LEGS = {"type": "array", "items": LEG}
NESTED = ToolSpec.from_schema(
    "t",
    {
        "type": "object",
        "properties": {"a": STR, "b": INT, "legs": LEGS} | FORMATS,
        "required": ["a", "b"],
        "allOf": [{"required": ["a"]}, {"required": ["b"]}],  # each missing key reported twice
        "additionalProperties": False,
    },
)


def test_problems_one_per_missing_or_unknown_key() -> None:
    got = [(p.kind, p.path) for p in NESTED.problems({"zz": 1, "yy": 2})]
    assert got == [
        ("missing", ("a",)),
        ("missing", ("b",)),
        ("unknown", ("yy",)),
        ("unknown", ("zz",)),
    ]


def test_problems_at_nested_paths() -> None:
    args = {"a": "x", "b": 1, "legs": [{"date": D}, {}, {"date": "Oct 26"}]}
    got = [(p.kind, p.path, p.field) for p in NESTED.problems(args)]
    assert got == [
        ("missing", ("legs", 1, "date"), "legs[1].date"),
        ("format", ("legs", 2, "date"), "legs[2].date"),
    ]
    assert NESTED.schema_at(("legs", 0, "date")) == DATE


@pytest.mark.parametrize(
    ("key", "bad", "good"),
    [("date", "26/10/2024", D), ("date", "2024-02-30", "2024-02-29"), ("uuid", "nope", UUID)]
    + [("date-time", "2024-10-26T10:00:00", "2024-10-26T10:00:00Z")]
    + [("email", "not an email", "a@b.co"), ("uri", "example.com", "https://example.com")],
)
def test_formats_are_checked(key: str, bad: str, good: str) -> None:
    base = {"a": "x", "b": 1}
    assert [(p.kind, p.path) for p in NESTED.problems({**base, key: bad})] == [("format", (key,))]
    assert NESTED.is_valid({**base, key: good})


# -- spec.ToolSpec.from_function (signature) --------------------------------------------------


class Bound(types.SimpleNamespace):
    """Stands in for annotated_types' Ge, Le, MinLen: an object with bound attributes."""


Cabin = enum.Enum("Cabin", {"ECONOMY": "economy", "BUSINESS": "business"})
Leg = dataclasses.make_dataclass("Leg", [("origin", str), ("date", dt.date), ("note", str, "")])


class Address(TypedDict):
    street: str
    zip: int


def book_flight(
    passengers: Annotated[int, Bound(ge=1), Bound(le=9)],
    cabin: Literal["economy", "business"],
    name: Annotated[str, Bound(min_length=2)],
    when: dt.date,
    at: dt.datetime,
    ref: uuid.UUID,
    klass: Cabin,
    leg: Leg,
    address: Address,
    note: Optional[str] = None,  # noqa: UP045 - Optional is what is read here
    seats: int = 1,
    **extra: Any,
) -> str:
    """Book a flight.

    Args:
        passengers: How many people fly.
        cabin (str): The cabin class.
    """
    return ""


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("passengers", INT | {"minimum": 1, "maximum": 9, "description": "How many people fly."}),
        ("cabin", STR | {"enum": ["economy", "business"], "description": "The cabin class."}),
        ("name", STR | {"minLength": 2}),
        ("when", DATE),
        ("at", DATE_TIME),
        ("ref", STR | {"format": "uuid"}),
        ("klass", STR | {"enum": ["economy", "business"]}),
        ("note", {"anyOf": [STR, {"type": "null"}], "default": None}),
        ("seats", INT | {"default": 1}),
    ],
)
def test_from_function_parameter_schemas(name: str, want: dict[str, Any]) -> None:
    assert ToolSpec.from_function(book_flight).properties[name] == want


def test_from_function_objects_required_and_extra_keys() -> None:
    spec = ToolSpec.from_function(book_flight)
    assert (spec.name, spec.description) == ("book_flight", "Book a flight.")
    leg, address = spec.properties["leg"], spec.properties["address"]
    assert leg["required"] == ["origin", "date"] and leg["properties"]["date"] == DATE
    assert address["properties"] == {"street": STR, "zip": INT}
    assert address["required"] == ["street", "zip"]
    assert {"note", "seats"}.isdisjoint(spec.parameters["required"])
    assert spec.parameters["additionalProperties"] is True  # **extra
    assert ToolSpec.from_function(lambda q: q, name="f").parameters["additionalProperties"] is False


@pytest.mark.parametrize(
    ("text", "want"),
    [("7pm", "19:00"), ("9:30 am", "09:30"), ("3 PM", "15:00"), ("15:00", None)]
    + [("noon", "12:00"), ("12am", "00:00"), ("12:30 p.m.", "12:30")],
)
def test_times_of_day_for_an_hh_mm_field(text: str, want: str | None) -> None:
    schema = {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"}
    result = fix_date(text, schema, CTX)
    if want is None:
        assert result is None  # already right
    else:
        assert fixed(result, "date_format_correction") == want
    described = {"type": "string", "description": "Time in 24-hour format (HH:MM)"}
    if want is not None:
        assert fixed(fix_date(text, described, CTX), "date_format_correction") == want


@pytest.mark.parametrize("text", ["7", "7 o'clock", "25:00", "13pm", "quarter past"])
def test_a_time_that_cannot_be_told_declines(text: str) -> None:
    schema = {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"}
    declined(fix_date(text, schema, CTX), "date_format_correction", "not a time of day")


def test_date_times_take_the_layout_their_pattern_accepts() -> None:
    optional_zone = {
        "type": "string",
        "pattern": "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(Z|[+-]\\d{2}:\\d{2})?$",
    }
    for text, want in [
        ("2024-10-25 09:30", "2024-10-25T09:30:00"),
        ("tomorrow 12:30", "2024-10-23T12:30:00"),
        ("10/30/2024 2:00 PM", "2024-10-30T14:00:00"),
        ("2024-10-28T15:00:00.000Z", "2024-10-28T15:00:00Z"),
        ("2024-11-30T23:59:59+0100", "2024-11-30T23:59:59+01:00"),
    ]:
        assert fixed(fix_date(text, optional_zone, NOW_CTX), "date_format_correction") == want
    declined(fix_date("tomorrow", optional_zone, NOW_CTX), "date_format_correction", "no time")
    iso = {"type": "string", "description": "Filter by date (ISO 8601 timestamp)"}
    assert fixed(fix_date("October 1, 2024", iso, CTX), "date_format_correction") == "2024-10-01"
    assert fixed(fix_date("yesterday", iso, NOW_CTX), "date_format_correction") == "2024-10-21"


# -- what a description settles ---------------------------------------------------------------

CENTS = {"type": "integer", "description": "Amount in the smallest currency unit (cents)."}
RATE = {"type": "number", "description": "The annual interest rate. Enter as a decimal."}
METERS = {"type": "number", "description": "Search radius in meters"}


def test_amounts_follow_the_fields_currency_and_unit() -> None:
    usd = Context(name="amount", args={"currency": "usd"})
    assert fixed(convert("$45.50", CENTS, usd), "schema_type_conversion") == 4550
    declined(convert("1500.00", CENTS, usd), "schema_type_conversion", "dollars or cents")
    declined(convert("$20", CENTS, usd), "schema_type_conversion", "dollars or cents")
    declined(convert("500 EUR", NUM, usd), "schema_type_conversion", "EUR", "USD")
    assert fixed(convert("$45", NUM, usd), "schema_type_conversion") == 45


def test_percentages_and_units_the_description_settles() -> None:
    assert fixed(convert("5%", RATE, CTX), "schema_type_conversion") == 0.05
    declined(convert("5%", NUM, CTX), "schema_type_conversion", "percentage")
    assert fixed(convert("1500m", METERS, CTX), "schema_type_conversion") == 1500
    declined(convert("1500 ft", METERS, CTX), "schema_type_conversion", "unit")
    declined(convert("2 miles", METERS, CTX), "schema_type_conversion", "unit")


def test_enum_abbreviations_by_standard_data_and_parts_of_one_value() -> None:
    units = ["celsius", "fahrenheit"]
    assert fixed(match_enum("F", units, CTX), "enum_value_correction") == "fahrenheit"
    assert fixed(match_enum("°C", units, CTX), "enum_value_correction") == "celsius"  # CLDR
    assert fixed(match_enum("deg. F", units, CTX), "enum_value_correction") == "fahrenheit"
    sizes = ["small", "medium", "large"]
    assert fixed(match_enum("L", sizes, CTX), "enum_value_correction") == "large"
    declined(match_enum("S", ["small", "slim", "large"], CTX), "enum_value_correction", "")
    # a domain's words are the user's own table, not the library's: "car" means driving only
    # where the user says so
    modes = ["driving", "walking", "bicycling", "transit"]
    declined(match_enum("car", modes, CTX), "enum_value_correction", "none of")
    told = Context(synonyms={"driving": ["car", "by car"]})
    assert fixed(match_enum("car", modes, told), "enum_value_correction") == "driving"
    airlines = ["Delta Airlines", "United Airlines", "Air Canada"]
    assert fixed(match_enum("Delta", airlines, CTX), "enum_value_correction") == "Delta Airlines"
    declined(match_enum("Airlines", airlines, CTX), "enum_value_correction", "none of")
    reasons = ["duplicate", "fraudulent", "requested_by_customer"]
    got = fixed(match_enum("customer requested", reasons, CTX), "enum_value_correction")
    assert got == "requested_by_customer"


# -- time zones -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "want"),
    [("europe/paris", "Europe/Paris"), ("New York", "America/New_York"), ("Tokyo", "Asia/Tokyo")]
    + [("America/New_York", None), ("utc", "UTC")],
)
def test_time_zones_written_another_way(text: str, want: str | None) -> None:
    from pytest_agentchaos.repair.zones import fix_zone

    result = fix_zone(text, CTX)
    assert (result is None) if want is None else fixed(result, "timezone_correction") == want


@pytest.mark.parametrize(
    ("text", "cause"),
    [("CST", "abbreviation"), ("IST", "abbreviation"), ("Lunar Time", "no IANA time zone")],
)
def test_time_zones_that_cannot_be_told_decline(text: str, cause: str) -> None:
    from pytest_agentchaos.repair.zones import fix_zone

    declined(fix_zone(text, CTX), "timezone_correction", cause)


def test_the_inferer_does_not_reuse_a_date_another_field_holds() -> None:
    spec = ToolSpec.from_schema(
        "forecast",
        {"type": "object", "properties": {"start_date": DATE, "end_date": DATE},
         "required": ["start_date", "end_date"]},
    )  # fmt: skip
    request = InferenceRequest(
        spec, {"start_date": "2024-10-25"}, ("end_date",), "Forecast from Oct 25, 2024", None, NOW
    )
    assert RuleInferer().infer(request) == {}
    alone = InferenceRequest(spec, {}, ("start_date",), "Forecast from Oct 25, 2024", None, NOW)
    assert RuleInferer().infer(alone)["start_date"].value == "2024-10-25"


def test_a_lone_value_becomes_the_one_field_of_an_object() -> None:
    attendee = {
        "type": "object",
        "properties": {"email": {"type": "string", "format": "email"}, "optional": {}},
        "required": ["email"],
    }
    got = fixed(convert("bo@example.com", attendee, CTX), "wrap_in_object")
    assert got == {"email": "bo@example.com"}
    declined(convert("Bo", attendee, CTX), "schema_type_conversion", "not an object")
    two = {"type": "object", "properties": {"a": STR, "b": STR}, "required": ["a", "b"]}
    declined(convert("x", two, CTX), "schema_type_conversion", "not an object")
    typed = {"type": "object", "properties": {"n": INT}}
    declined(convert("x", typed, CTX), "schema_type_conversion", "not an object")


@pytest.mark.parametrize(
    ("task", "want"),
    [("Merge PR 17 using rebase", 17), ("Close #42, it is a duplicate", 42)]
    + [("Merge PR 17 after PR 18", None), ("Close #4 and #5", None)],
)
def test_the_inferer_reads_a_pull_request_number_as_tasks_write_it(
    task: str, want: int | None
) -> None:
    spec = ToolSpec.from_schema(
        "merge", {"type": "object", "properties": {"pull_number": INT}, "required": ["pull_number"]}
    )
    found = RuleInferer().infer(InferenceRequest(spec, {}, ("pull_number",), task=task))
    assert (found["pull_number"].value if found else None) == want


@pytest.mark.parametrize(
    ("text", "want"),
    [('{source: "Europe/London", when: "14:00"}', {"source": "Europe/London", "when": "14:00"})]
    + [('"{\\"path\\": \\"/tmp/notes.txt\\"}"', {"path": "/tmp/notes.txt"})]
    + [("{'note': 'true story', ok: true}", {"note": "true story", "ok": True})],
)
def test_loads_lenient_reads_bare_keys_and_objects_encoded_twice(text: str, want: Any) -> None:
    assert loads_lenient(text) == want


def test_a_list_joined_as_the_comma_separated_text_a_field_describes() -> None:
    codes = {"type": "string", "description": "Airline codes, comma-separated, e.g. 6X,7X"}
    assert fixed(convert(["TP", "BA"], codes, CTX), "schema_type_conversion") == "TP,BA"
    declined(convert(["TP", "BA"], STR, CTX), "unwrap_list", "2 values")


def test_plural_words_name_an_enum_value_inside_a_phrase() -> None:
    avoid = ["tolls", "highways", "ferries"]
    assert fixed(match_enum("toll roads", avoid, CTX), "enum_value_correction") == "tolls"


def test_a_bare_day_in_a_search_windows_bound_is_its_first_or_last_second() -> None:
    no_zone = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$"}
    low = fix_date("tomorrow", no_zone, Context(name="timeMin", now=NOW))
    high = fix_date("tomorrow", no_zone, Context(name="timeMax", now=NOW))
    assert fixed(low, "date_format_correction") == "2024-10-23T00:00:00"
    assert fixed(high, "date_format_correction") == "2024-10-23T23:59:59"
    # an event's start on a bare day is an all-day event, which a date-time cannot say
    event = fix_date("2024-11-01", no_zone, Context(name="start", now=NOW))
    declined(event, "date_format_correction", "no time of day")
