"""What a tool's error says beyond its schema, and what the task settles about it: a date the
tool finds past, two parameters it will not take together, a value it refuses without a
reason, an amount it finds too small in a field counted in cents; and the task's own spelling
of a number, an end given as a length, a web address without its scheme, phone numbers. Each
repair with the declines that limit it."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.repair.coerce import convert
from pytest_agentchaos.repair.diagnose import error_problems
from pytest_agentchaos.repair.fixes import Context, Decline, Fix
from pytest_agentchaos.repair.infer import InferenceRequest, RuleInferer
from pytest_agentchaos.repair.mechanical import clamp
from pytest_agentchaos.repair.phones import fix_phone, is_phone_address
from pytest_agentchaos.repair.refused import fix_past, fix_rejected
from pytest_agentchaos.repair.spans import end_from_length

NOW = dt.datetime(2025, 6, 10, 8, 0)


def fixed(result: Any) -> Any:
    assert isinstance(result, Fix), result
    assert 0 < result.confidence <= 1 and result.reason
    return result.value


def declines(result: Any, *words: str) -> None:
    assert isinstance(result, Decline), result
    for word in words:
        assert word in result.reason, result.reason


def spec(name: str, properties: dict[str, Any], required: list[str]) -> ToolSpec:
    schema = {"type": "object", "properties": properties, "required": required}
    return ToolSpec.from_schema(name, schema)


# -- what the error names ---------------------------------------------------------------------


def test_json_api_errors_point_at_their_parameter() -> None:
    body = {"errors": [{"status": "400", "title": "INVALID FORMAT",
                        "detail": "bad value", "source": {"parameter": "checkIn"}}]}  # fmt: skip
    assert [p.path for p in error_problems(json.dumps(body))] == [("checkIn",)]
    body = {
        "errors": [{"detail": "is not a number", "source": {"pointer": "/data/attributes/qty"}}]
    }
    (problem,) = error_problems(json.dumps(body))
    assert problem.path == ("qty",) and problem.message == "is not a number"


@pytest.mark.parametrize(
    ("text", "pair"),
    [
        ("Cannot specify both since_id and max_id", ["since_id", "max_id"]),
        ("You can't use 'query' together with 'ids'.", ["query", "ids"]),
        ("limit and cursor are mutually exclusive", ["limit", "cursor"]),
    ],
)
def test_an_error_naming_two_parameters_that_exclude_each_other(text: str, pair: list[str]) -> None:
    (problem,) = error_problems(text)
    assert problem.kind == "exclusive" and problem.expected == pair


@pytest.mark.parametrize(
    "text",
    ["check_in is in the past", "'due' must be in the future", "startDate cannot be a past date"],
)
def test_an_error_saying_a_date_is_past(text: str) -> None:
    (problem,) = error_problems(text)
    assert problem.kind == "past"


# -- a date the tool finds past -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "task", "want"),
    [
        ("2024-07-04", "book the venue for the 4th of July", "2025-07-04"),
        ("2024-03-02T19:30:00", "a table for two on March 2nd at 7:30pm", "2026-03-02T19:30:00"),
        ("2025-06-10", "check in on 10 June", "2025-06-10"),  # today is not past
    ],
)
def test_a_past_date_moves_to_the_next_day_the_task_names(value: str, task: str, want: str) -> None:
    if value[:10] == want[:10]:
        declines(fix_past(value, Context(task=task, now=NOW)), "already")
    else:
        assert fixed(fix_past(value, Context(task=task, now=NOW))) == want


@pytest.mark.parametrize(
    ("value", "task", "why"),
    [
        ("2024-07-04", "book the venue for July 4, 2024", "gives its year"),
        ("2024-07-04", "book the venue for next month", "does not name"),
        ("2024-07-04", None, "does not name"),
        ("04/07/2024", "book it for 4 July", "no ISO date"),
        ("2024-02-29", "renew on 29 February", "not in the coming year"),
    ],
)
def test_a_past_date_is_declined_where_the_task_does_not_settle_it(
    value: str, task: str | None, why: str
) -> None:
    declines(fix_past(value, Context(task=task, now=NOW)), why)
    declines(fix_past(value, Context(task=task, now=None)))  # no clock: nothing is next


@settings(max_examples=200, deadline=None)
@given(
    st.dates(dt.date(2001, 1, 1), dt.date(2090, 12, 31)),
    st.dates(dt.date(2001, 1, 1), dt.date(2090, 12, 31)),
)
def test_the_next_day_is_never_before_today_and_within_a_year(day: dt.date, today: dt.date) -> None:
    task = f"on {day.day} {day.strftime('%B')}"
    result = fix_past(
        f"{day.year - 1}-{day:%m-%d}", Context(task=task, now=dt.datetime.combine(today, dt.time()))
    )
    if isinstance(result, Fix):
        moved = dt.date.fromisoformat(result.value)
        assert today <= moved <= today + dt.timedelta(days=366)
        assert (moved.month, moved.day) == (day.month, day.day)


def test_the_repairer_moves_a_past_date_after_the_tools_error() -> None:
    tool = spec("reserve", {"day": {"type": "string", "format": "date"}}, ["day"])
    repairer = ParamRepairer(tool)
    error = json.dumps(
        {"errors": [{"detail": "date is in the past", "source": {"parameter": "day"}}]}
    )
    result = repairer.repair({"day": "2024-09-12"}, error, "reserve for 12 September", NOW)
    assert result.ok and result.args == {"day": "2025-09-12"}
    assert result.strategy == "date_year_correction"
    result = repairer.repair({"day": "2024-09-12"}, error, "reserve for 12 September 2024", NOW)
    assert not result.ok and "gives its year" in result.reason


# -- two parameters the tool will not take together ----------------------------------------------

SEARCH = spec(
    "find_records",
    {
        "ids": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Fetch exactly these records by their ID",
        },
        "query": {"type": "string", "description": "Full-text search terms"},
    },
    [],
)


@pytest.mark.parametrize(
    ("task", "kept"),
    [
        ("search for invoices that mention a late fee", "query"),
        ("fetch records R-1 and R-7 by ID", "ids"),
    ],
)
def test_of_two_exclusive_parameters_the_one_the_task_speaks_of_stays(task: str, kept: str) -> None:
    args = {"ids": ["R-1", "R-7"], "query": "late fee"}
    result = ParamRepairer(SEARCH).repair(args, "Cannot specify both ids and query", task)
    assert result.ok and result.args == {kept: args[kept]}
    assert result.strategy == "drop_exclusive_key"


@pytest.mark.parametrize(
    "task",
    [None, "show me what you find", "search for R-1 by ID"],  # neither, or both
)
def test_exclusive_parameters_the_task_does_not_choose_between_are_declined(
    task: str | None,
) -> None:
    args = {"ids": ["R-1"], "query": "R-1"}
    result = ParamRepairer(SEARCH).repair(args, "ids and query are mutually exclusive", task)
    assert not result.ok and result.args is None
    assert "ids" in result.reason and "query" in result.reason


# -- a value the tool refused without saying why ---------------------------------------------------


@pytest.mark.parametrize(
    ("value", "task", "want"),
    [
        ("#deploys", "post the summary in #deploys", "deploys"),
        ("@mona", "ask @mona to review", "mona"),
        ("upstream/hotfix-2", "open a PR from hotfix-2", "hotfix-2"),
        (["@mona", "hubot"], "assign @mona and hubot", ["mona", "hubot"]),
    ],
)
def test_a_decoration_the_task_does_not_write_is_taken_off(
    value: Any, task: str, want: Any
) -> None:
    assert fixed(fix_rejected(value, {}, Context(name="x", task=task))) == want


@pytest.mark.parametrize(
    ("value", "task"),
    [
        ("upstream/hotfix-2", "push to upstream/hotfix-2"),  # the task writes it so
        ("upstream/hotfix-2", "open a PR from upstream and hotfix-2"),  # the prefix is the task's
        ("release", "ship the release"),  # nothing to take off, no cue
        ("x", None),
        (17, "issue 17"),
    ],
)
def test_a_refused_value_the_task_does_not_settle_is_declined(value: Any, task: str | None) -> None:
    declines(fix_rejected(value, {}, Context(name="x", task=task)), "refused")


BRANCHES = {"type": "string", "description": "The branch to merge the changes into"}


def test_a_refused_value_the_task_never_says_gives_way_to_the_one_it_ties_to_the_field() -> None:
    ctx = Context(name="target", args={"target": "develop", "source": "fix-12"},
                  task="merge fix-12 into release-3.1")  # fmt: skip
    assert fixed(fix_rejected("develop", BRANCHES, ctx)) == "release-3.1"


@pytest.mark.parametrize(
    ("value", "task", "schema"),
    [
        ("develop", "merge fix-12 into develop", BRANCHES),  # the task says it: not ours to change
        ("develop", "merge fix-12 into release-3.1", {"type": "string"}),  # no cue described
        ("develop", "merge fix-12 into release-3.1 and fix-13 into release-3.2", BRANCHES),
        ("develop", "merge fix-12 into it", BRANCHES),
    ],
)
def test_a_cue_that_does_not_settle_the_value_is_declined(
    value: str, task: str, schema: dict[str, Any]
) -> None:
    ctx = Context(name="target", args={"target": value}, task=task)
    declines(fix_rejected(value, schema, ctx), "refused")


def test_the_repairer_reads_a_validation_failure_naming_only_the_field() -> None:
    tool = spec("merge", {"source": {"type": "string"}, "target": BRANCHES}, ["source", "target"])
    issue = {"resource": "Merge", "field": "target", "code": "invalid"}
    error = json.dumps({"message": "Validation Failed", "errors": [issue]})
    result = ParamRepairer(tool).repair({"source": "fix-12", "target": "develop"}, error,
                                        "merge fix-12 into release-3.1")  # fmt: skip
    assert result.ok and result.args == {"source": "fix-12", "target": "release-3.1"}
    assert result.strategy == "rejected_value_correction"


@pytest.mark.parametrize(
    ("task", "want"),
    [
        ("send it from ops@example.com please", "ops@example.com"),
        ("send it from my work account", None),  # a word of a longer name
        ("send it from here", None),
        ("send it from a@example.com or b@example.com", None),  # which?
    ],
)
def test_a_cue_gives_a_value_only_where_its_phrase_ends(task: str, want: str | None) -> None:
    tool = spec("mail", {"body": {"type": "string"},
                         "sender": {"type": "string", "description": "Address to send from"}},
                ["body", "sender"])  # fmt: skip
    found = RuleInferer().infer(InferenceRequest(tool, {"body": "hi"}, ("sender",), task))
    assert (found["sender"].value if "sender" in found else None) == want


def test_the_inferer_fills_a_missing_value_from_the_words_its_description_uses() -> None:
    tool = spec("translate", {
        "text": {"type": "string"},
        "source_lang": {"type": "string", "description": "Language to translate from"},
        "target_lang": {"type": "string", "description": "Language to translate the text into"},
    }, ["text", "source_lang", "target_lang"])  # fmt: skip
    request = InferenceRequest(tool, {"text": "bonjour"}, ("source_lang", "target_lang"),
                               "translate 'bonjour' from French into Norwegian")  # fmt: skip
    found = RuleInferer().infer(request)
    assert {k: v.value for k, v in found.items()} == {
        "source_lang": "French", "target_lang": "Norwegian"
    }  # fmt: skip


# -- an amount in whole units where the field counts cents -----------------------------------

CENTS = {"type": "integer", "minimum": 1, "description": "Amount in cents to charge"}


@pytest.mark.parametrize(
    ("task", "currency", "want"),
    [("charge the customer €40", "eur", 4000), ("refund 12 USD", "usd", 1200)],
)
def test_an_amount_the_task_gives_in_whole_units_is_scaled(
    task: str, currency: str, want: int
) -> None:
    value = int(want / 100)
    ctx = Context(name="amount", args={"amount": value, "currency": currency}, task=task,
                  description=CENTS["description"])  # fmt: skip
    result = clamp(value, {**CENTS, "minimum": 50}, ctx)
    assert fixed(result) == want and result.strategy == "unit_conversion"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("value", "task", "currency"),
    [
        (40, "charge ¥40", "jpy"),  # a currency with no cents
        (40, "charge $40 now and $55 later", "usd"),  # which amount?
        (40, "charge forty dollars", "usd"),  # the task's number is not written
        (4000000, "charge $4000000", "usd"),  # over the bound once scaled
    ],
)
def test_an_amount_the_task_does_not_settle_is_not_scaled(
    value: int, task: str, currency: str
) -> None:
    ctx = Context(name="amount", args={"amount": value, "currency": currency}, task=task,
                  description=CENTS["description"])  # fmt: skip
    declines(clamp(value, {**CENTS, "minimum": 50, "maximum": 99_999_999}, ctx), "another scale")


# -- the task's spelling of a number ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "task", "want"),
    [
        (2134, "ship it to zip 02134", "02134"),
        (1.1, "pin the package to version 1.10", "1.10"),
    ],
)
def test_a_number_becomes_the_text_the_task_writes(value: float, task: str, want: str) -> None:
    assert fixed(convert(value, {"type": "string"}, Context(name="ref", task=task))) == want


def test_a_number_the_task_writes_two_ways_keeps_its_own_text() -> None:
    ctx = Context(name="zip", task="between 02134 and 2134.0 either way")
    assert fixed(convert(2134, {"type": "string"}, ctx)) == "2134"


# -- an end given as a length ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "task", "want"),
    [
        ("2025-03-03T14:00:00Z", "a 30-minute standup", "2025-03-03T14:30:00Z"),
        ("2025-03-03T23:30:00+02:00", "book the hall for 2 hours", "2025-03-04T01:30:00+02:00"),
        ({"dateTime": "2025-03-03T09:00:00", "timeZone": "Europe/Oslo"},
         "an hour-long sync; remind me 10 minutes before",
         {"dateTime": "2025-03-03T10:00:00", "timeZone": "Europe/Oslo"}),
    ],
)  # fmt: skip
def test_an_end_is_the_start_plus_the_length_the_task_gives(
    start: Any, task: str, want: Any
) -> None:
    text = isinstance(start, str)
    found = end_from_length(
        "end_time" if text else "end", task, {"start_time" if text else "start": start}
    )
    assert found is not None and found[0] == want


@pytest.mark.parametrize(
    ("name", "args", "task"),
    [
        ("end", {"start": "2025-03-03T09:00:00"}, "a 2-hour workshop with a 15-minute break"),
        ("end", {"start": "2025-03-03"}, "a one-hour call"),  # a day alone
        ("end", {}, "a one-hour call"),  # no start
        ("deadline", {"start": "2025-03-03T09:00:00"}, "a one-hour call"),  # no end field
        ("end", {"start": "2025-03-03T09:00:00"}, "the usual call"),
    ],
)
def test_an_end_the_task_does_not_give_is_not_made_up(name: str, args: Any, task: str) -> None:
    assert end_from_length(name, task, args) is None


def test_the_repairer_fills_a_missing_end_from_the_length() -> None:
    tool = spec("schedule", {"title": {"type": "string"},
                             "startTime": {"type": "string", "format": "date-time"},
                             "endTime": {"type": "string", "format": "date-time"}},
                ["title", "startTime", "endTime"])  # fmt: skip
    args = {"title": "Retro", "startTime": "2025-05-05T15:00:00Z"}
    result = ParamRepairer(tool).repair(args, task="schedule a 45 minute retro at 15:00 UTC")
    assert result.ok and result.args == {**args, "endTime": "2025-05-05T15:45:00Z"}


# -- phone numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "ok"),
    [("+4791234567", True), ("whatsapp:+15552229999", True), ("74747", True), ("MyShop", True),
     ("(212) 555-0143", False), ("0912 345 678", False), ("+47 912 34 567", False), (47, True)],
)  # fmt: skip
def test_the_phone_number_format(value: Any, ok: bool) -> None:
    assert is_phone_address(value) is ok
    tool = spec("sms", {"to": {"type": "string", "format": "phone-number"}}, ["to"])
    assert tool.is_valid({"to": value}) is (ok and isinstance(value, str))


@pytest.mark.parametrize(
    ("value", "task", "want"),
    [
        ("+47 912 34 567", None, "+4791234567"),
        ("0047 912 34 567", None, "+4791234567"),
        ("(212) 555-0143", "text my US colleague at (212) 555-0143", "+12125550143"),
        ("06 12 34 56 78", "call the FR office", "+33612345678"),
        ("(212) 555-0143", "text the US or CA office", "+12125550143"),  # one number either way
    ],
)
def test_a_phone_number_is_written_in_e164(value: str, task: str | None, want: str) -> None:
    assert fixed(fix_phone(value, Context(name="to", task=task))) == want


@pytest.mark.parametrize(
    ("value", "task"),
    [
        ("(212) 555-0143", "text my colleague"),  # which country?
        ("06 12 34 56 78", "call the FR or NL office"),  # a number in both: which?
        ("+1 555", None),  # not a valid number
        ("call me maybe", None),
        ("1" * 5000, "US"),
    ],
)
def test_a_phone_number_without_its_country_is_declined(value: str, task: str | None) -> None:
    declines(fix_phone(value, Context(name="to", task=task)))


# -- hostile input -----------------------------------------------------------------------------


def test_huge_values_are_declined_quickly() -> None:
    big = "a/" * 5_000_000
    task = " ".join(f"word{i}/x" for i in range(800))
    declines(fix_rejected(big, {}, Context(name="x", task=task)), "too long")
    declines(fix_rejected([big], {}, Context(name="x", task=task)), "too long")
    declines(fix_past("2024-01-01" + "x" * 10_000_000, Context(task="1 January", now=NOW)))
    assert end_from_length("end", "1 hour " * 100_000, {"start": "2025-01-01T10:00:00"}) is not None
    tool = spec("merge", {"target": BRANCHES}, ["target"])
    error = json.dumps({"errors": [{"field": "target", "code": "invalid"}]}) + "x" * 10_000_000
    result = ParamRepairer(tool).repair({"target": big}, error, task)
    assert not result.ok
