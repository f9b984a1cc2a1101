"""Safety first: a repair that changes what the user asked is worse than none.

A bare number sent where a date, a time, a prefixed id or a code is due is repaired only from
evidence (the task writes the value; the number is part of a date the task gives), never read
as a count since 1970 or a day of the clock's month. And the intent audit, whatever proposed
the values: a value the task states is never dropped or replaced by a value the task does not
write, every changed value cites a step, and the repairer run on its own output changes
nothing."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import DROP, ParamRepairer, ToolSpec
from pytest_agentchaos.repair.audit import audit
from pytest_agentchaos.repair.results import RepairStep

NOW = dt.datetime(2025, 6, 3, 8, 0, tzinfo=dt.timezone.utc)
#: A virtual clock at its start: the run's "now" is 1970-01-01.
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def one_field(schema: dict[str, Any], name: str = "when") -> ToolSpec:
    return ToolSpec.from_schema(
        "tool",
        {"type": "object", "properties": {name: schema}, "required": [name],
         "additionalProperties": False},
    )  # fmt: skip


DATE_FIELDS = [
    {"type": "string", "format": "date"},
    {"type": "string", "format": "date-time"},
    {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
    {"type": "string", "description": "The day, YYYY-MM-DD."},
    {"type": "string", "description": "Day of travel as DD/MM/YYYY"},
]

# -- a bare number where a date is due -----------------------------------------------------


@pytest.mark.parametrize("schema", DATE_FIELDS)
@pytest.mark.parametrize("sent", [10, "10", 10.0, 3, 2025, "26"])
@pytest.mark.parametrize("now", [NOW, EPOCH, None])
@pytest.mark.parametrize("task", [None, "Book it for me.", "Book it for the morning flight."])
def test_a_bare_number_for_a_date_without_evidence_is_declined(
    schema: dict[str, Any], sent: Any, now: dt.datetime | None, task: str | None
) -> None:
    result = ParamRepairer(one_field(schema)).repair({"when": sent}, task=task, now=now)
    assert not result.ok, result.args
    assert "1970-01" not in result.reason


def test_the_flight_tool_under_a_virtual_clock_never_books_1970() -> None:
    """The schedule search's finding: 10 for ``departure_date``, on a run whose virtual clock
    starts at 0, was booked for 1970-01-10."""
    spec = ToolSpec.from_schema("book_flight", {
        "type": "object",
        "properties": {
            "origin": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "destination": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "departure_date": {"type": "string", "format": "date",
                               "description": "the day of the flight, YYYY-MM-DD."},
            "passengers": {"type": "integer", "minimum": 1, "maximum": 9},
        },
        "required": ["origin", "destination", "departure_date", "passengers"],
    })  # fmt: skip
    repairer = ParamRepairer(spec, clock=lambda: EPOCH)
    task = "Book 1 passenger from YUL to CDG on October 26, 2024."
    call = {"origin": "YUL", "destination": "CDG", "departure_date": 10, "passengers": 1}
    declined = repairer.repair(call, task=task)
    assert not declined.ok and "bare number" in declined.reason
    # the day of the one date the task gives is evidence of that date
    told = repairer.repair({**call, "departure_date": 26}, task=task)
    assert told.ok and told.args["departure_date"] == "2024-10-26"


@pytest.mark.parametrize("schema", DATE_FIELDS[:1] + DATE_FIELDS[2:])
@pytest.mark.parametrize(
    ("sent", "task", "want"),
    [
        (26, "Fly out on October 26, 2025 and back later.", "2025-10-26"),
        ("26", "Leave 26 October 2025.", "2025-10-26"),
        (2025, "Fly out on October 26, 2025.", "2025-10-26"),
        (12, "Meet on the 12th.", "2025-06-12"),
    ],
)
def test_a_bare_number_is_read_from_the_date_the_task_gives(
    schema: dict[str, Any], sent: Any, task: str, want: str
) -> None:
    result = ParamRepairer(one_field(schema)).repair({"when": sent}, task=task, now=NOW)
    assert result.ok, result.reason
    day = dt.date.fromisoformat(want)
    written = result.args["when"]
    assert written in (want, day.strftime("%d/%m/%Y"))


@pytest.mark.parametrize(
    "task",
    [
        "Out on October 26, 2025, back on November 26, 2025.",  # two dates whose day is 26
        "Fly on October 10, 2025.",  # 26 is no part of it
        "Fly in 26 days.",  # a count, not a day of the month
        "Seat 26, on October 10, 2025.",
    ],
)
def test_a_bare_number_that_is_no_one_task_date_is_declined(task: str) -> None:
    result = ParamRepairer(one_field(DATE_FIELDS[0])).repair({"when": 26}, task=task, now=NOW)
    assert not result.ok, result.args


def test_a_unix_timestamp_is_read_only_where_the_field_says_it_takes_one() -> None:
    stamp = int(dt.datetime(2024, 6, 10, tzinfo=dt.timezone.utc).timestamp())
    for schema in DATE_FIELDS[:2]:
        result = ParamRepairer(one_field(schema)).repair({"when": stamp}, now=NOW)
        assert not result.ok, result.args
    described = {"type": "integer", "description": "Unix timestamp (seconds since epoch)."}
    result = ParamRepairer(one_field(described)).repair({"when": "2024-06-10T00:00:00Z"})
    assert result.ok and result.args == {"when": stamp}


@pytest.mark.parametrize("sent", [9, "9", 930, 21])
def test_a_bare_number_for_a_time_of_day_is_declined(sent: Any) -> None:
    schema = {"type": "string", "format": "time"}
    result = ParamRepairer(one_field(schema)).repair({"when": sent}, task="call me", now=NOW)
    assert not result.ok, result.args


# -- a bare number where a prefixed id or a code is due --------------------------------------

ORDER_FIELDS = [
    {"type": "string", "pattern": r"^ORD-\d{4}$"},
    {"type": "string", "description": "The order id, e.g. ORD-0001."},
    {"type": "string", "description": "The order id."},
]


@pytest.mark.parametrize("schema", ORDER_FIELDS)
def test_a_number_for_a_prefixed_id_is_the_id_the_task_writes(schema: dict[str, Any]) -> None:
    result = ParamRepairer(one_field(schema, "order_id")).repair(
        {"order_id": 7}, task="Cancel order ORD-0007, it was a mistake."
    )
    assert result.ok and result.args == {"order_id": "ORD-0007"}


@pytest.mark.parametrize("schema", ORDER_FIELDS[:2])
@pytest.mark.parametrize(
    "task", [None, "Cancel my last order.", "Cancel order ORD-0070.", "Cancel ORD-0007 and ORD-7"]
)
def test_a_number_for_a_prefixed_id_without_its_id_in_the_task_is_declined(
    schema: dict[str, Any], task: str | None
) -> None:
    result = ParamRepairer(one_field(schema, "order_id")).repair({"order_id": 7}, task=task)
    assert not result.ok or result.args == {"order_id": "ORD-0007"} and "ORD-0007" in (task or "")
    if task is None or "ORD-0007" not in task:
        assert not result.ok, result.args


@pytest.mark.parametrize(
    ("schema", "sent"),
    [
        ({"type": "string", "pattern": "^[A-Z]{3}$", "description": "ISO 4217 code"}, 978),
        ({"type": "string", "pattern": "^[A-Z]{2}$", "description": "Country code"}, 49),
        ({"type": "string", "enum": ["USD", "EUR", "GBP"]}, 1),
        ({"type": "string", "pattern": "^[A-Z]{3}$", "description": "IATA airport code"}, 10),
    ],
)
def test_a_number_for_a_code_is_declined(schema: dict[str, Any], sent: int) -> None:
    result = ParamRepairer(one_field(schema, "code")).repair(
        {"code": sent}, task="Pay the invoice."
    )
    assert not result.ok, result.args


# -- the intent audit, as properties -------------------------------------------------------

#: Rule strategies that put a value not derived from the one sent.
REPLACING = ("clamp_value", "length_correction", "rejected_value_correction",
             "infer_missing_param", "drop_unknown_key", "drop_exclusive_key")  # fmt: skip
#: Strategies that rewrite the value sent, none of which may make it vanish.
REWRITING = ("schema_type_conversion", "date_format_correction", "format_correction",
             "pattern_correction", "timezone_correction", "unit_conversion",
             "standard_code_correction", "split_compound", "wrap_in_object", "rename_key",
             *REPLACING)  # fmt: skip

WORDS = st.from_regex(r"[a-z]{3,8}", fullmatch=True)
STATED = st.one_of(
    st.from_regex(r"[A-Z][a-z]{2,9}", fullmatch=True),
    st.from_regex(r"[A-Z]{2,4}-[0-9]{2,5}", fullmatch=True),
    st.integers(11, 10**6),
)


def _step(field: str, strategy: str, before: Any, after: Any) -> RepairStep:
    return RepairStep(field, "type", strategy, before, after, 0.9, "a reason", True)


@settings(max_examples=300, deadline=None)
@given(
    key=WORDS, value=STATED, strategy=st.sampled_from(REPLACING), new=STATED,
    before=st.lists(WORDS, max_size=5), after=st.lists(WORDS, max_size=5),
)  # fmt: skip
def test_the_audit_never_passes_a_task_stated_value_replaced_by_one_the_task_does_not_write(
    key: str, value: Any, strategy: str, new: Any, before: list[str], after: list[str]
) -> None:
    task = " ".join([*before, str(value), *after])
    if str(new).casefold() in task.casefold() or str(new) == str(value):
        return
    original = {"q": "x", key: value}
    repaired = {"q": "x", key: new}
    assert audit(original, repaired, task, [_step(key, strategy, value, new)]) is not None


@settings(max_examples=300, deadline=None)
@given(
    key=WORDS, value=STATED, strategy=st.sampled_from(REWRITING),
    before=st.lists(WORDS, max_size=5), after=st.lists(WORDS, max_size=5),
)  # fmt: skip
def test_the_audit_never_passes_a_task_stated_value_that_vanished(
    key: str, value: Any, strategy: str, before: list[str], after: list[str]
) -> None:
    task = " ".join([*before, str(value), *after])
    original = {"q": "x", key: value}
    assert audit(original, {"q": "x"}, task, [_step(key, strategy, value, DROP)]) is not None


@settings(max_examples=300, deadline=None)
@given(
    call=st.dictionaries(WORDS, st.one_of(WORDS, st.integers(0, 999)), min_size=1, max_size=5),
    data=st.data(),
)
def test_a_value_changed_without_a_step_at_its_field_is_declined(
    call: dict[str, Any], data: st.DataObject
) -> None:
    key = data.draw(st.sampled_from(sorted(call)))
    new = data.draw(st.one_of(WORDS, st.integers(1000, 9999)).filter(
        lambda v: all(v != old for old in call.values())))  # fmt: skip
    others = [k for k in call if k != key]
    steps = [_step(k, "schema_type_conversion", call[k], call[k]) for k in others]
    steps.append(_step("(arguments)", "json_repair", "{...}", dict(call)))  # reading JSON text
    why = audit(call, {**call, key: new}, None, steps)
    assert why is not None and "cited by no step" in why


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    call=st.fixed_dictionaries(
        {
            "order_id": st.one_of(
                st.sampled_from(["ORD-0007", "ord-0007", " ORD-0007 "]), st.integers(1, 9999)
            )
        },
        optional={
            "day": st.one_of(
                st.integers(1, 2030),
                st.sampled_from(
                    ["2025-10-26", "26/10/2025", "Oct 26, 2025", "tomorrow", "the 5th"]
                ),
            ),
            "size": st.sampled_from(["small", "Large", "extra large", "LARGE ", "medium-ish"]),
            "count": st.one_of(st.integers(-3, 30), st.sampled_from(["two", "5", "7 items"])),
            "extra": st.sampled_from(["gift", "ORD-0007"]),
        },
    ),  # fmt: skip
    task=st.sampled_from(
        [
            None,
            "Reorder ORD-0007 for October 26, 2025, large, two of them.",
            "Reorder the 5th order, small size.",
            "Order 3 medium items for tomorrow.",
        ]
    ),  # fmt: skip
)
def test_the_repairer_run_on_its_own_output_changes_nothing(
    call: dict[str, Any], task: str | None
) -> None:
    spec = ToolSpec.from_schema("reorder", {
        "type": "object",
        "properties": {
            "order_id": {"type": "string", "pattern": r"^ORD-\d{4}$"},
            "day": {"type": "string", "format": "date"},
            "size": {"type": "string", "enum": ["small", "medium", "large"]},
            "count": {"type": "integer", "minimum": 1, "maximum": 10},
        },
        "required": ["order_id"],
        "additionalProperties": False,
    })  # fmt: skip
    repairer = ParamRepairer(spec)
    first = repairer.repair(call, task=task, now=NOW)
    if not first.ok:
        return
    assert spec.is_valid(first.args)
    again = repairer.repair(first.args, task=task, now=NOW)
    assert again.ok and again.args == first.args, again.reason
    assert again.strategy == "none"


# -- the issue's unsafe decisions, each as a kind ------------------------------------------


def two_fields(first: str, second: str, kind: str = "integer") -> ToolSpec:
    return ToolSpec.from_schema("tool", {
        "type": "object",
        "properties": {first: {"type": kind}, second: {"type": kind}},
        "required": [first, second],
        "additionalProperties": False,
    })  # fmt: skip


@settings(max_examples=120, deadline=None)
@given(
    pair=st.sampled_from([("adults", "children"), ("rooms", "nights"), ("pages", "copies"),
                          ("width", "height"), ("retries", "workers")]),
    number=st.integers(2, 99),
    joiner=st.sampled_from(["and", "with", "for", "plus some"]),
)  # fmt: skip
def test_one_task_number_never_fills_two_fields(
    pair: tuple[str, str], number: int, joiner: str
) -> None:
    first, second = pair
    task = f"Set {number} {first} {joiner} {second}, please."
    result = ParamRepairer(two_fields(first, second)).repair({first: number}, task=task)
    assert not result.ok or result.args[second] != number, result.reason
    # written twice, it may fill both
    twice = ParamRepairer(two_fields(first, second)).repair(
        {first: number}, task=f"Set {number} {first} and {number} {second}."
    )
    assert not twice.ok or twice.args == {first: number, second: number}


@pytest.mark.parametrize(("sent", "want"), [
    ("26", None), ("tomorrow-ish", None), (26, None),
    ("26/10/2025", "2025-10-26"), ("Oct 26", "2025-10-26"),  # the next Oct 26 is nearer
])  # fmt: skip
def test_a_date_layout_the_description_names_is_checked_in_a_list_item_too(
    sent: Any, want: str | None
) -> None:
    spec = ToolSpec.from_schema("tool", {
        "type": "object",
        "properties": {"days": {"type": "array",
                                "items": {"type": "string", "description": "A day, YYYY-MM-DD"}}},
        "required": ["days"],
    })  # fmt: skip
    result = ParamRepairer(spec).repair({"days": sent}, task="Book it.", now=NOW)
    if want is None:
        assert not result.ok, result.args
    else:
        assert result.ok and result.args == {"days": [want]}
    told = ParamRepairer(spec).repair({"days": sent}, task="Book it for 26 October 2025.", now=NOW)
    assert not told.ok or told.args == {"days": ["2025-10-26"]}


def test_a_text_that_is_no_date_in_the_described_layout_is_not_passed_as_valid() -> None:
    spec = one_field({"type": "string", "description": "The day of the trip, YYYY-MM-DD."})
    assert not ParamRepairer(spec).repair({"when": "26"}, now=NOW).ok
    fixed = ParamRepairer(spec).repair({"when": "26 October 2025"}, now=NOW)
    assert fixed.ok and fixed.args == {"when": "2025-10-26"}
    kept = ParamRepairer(spec).repair({"when": "2025-10-26"}, now=NOW)
    assert kept.ok and kept.strategy == "none"


# -- an object where a list of objects is due ------------------------------------------------

READINGS = ToolSpec.from_schema("record", {
    "type": "object",
    "properties": {"data": {"type": "array", "items": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
        "required": ["name", "value"],
    }}},
    "required": ["data"],
})  # fmt: skip


def test_an_object_of_entries_is_the_list_of_name_value_pairs() -> None:
    sent = {"data": {"blood_pressure": "120/80", "heart_rate": "80"}}
    result = ParamRepairer(READINGS).repair(sent)
    assert result.ok and result.args == {"data": [
        {"name": "blood_pressure", "value": "120/80"}, {"name": "heart_rate", "value": "80"},
    ]}  # fmt: skip
    one = ParamRepairer(READINGS).repair({"data": {"name": "pulse", "value": "80"}})
    assert one.ok and one.args == {"data": [{"name": "pulse", "value": "80"}]}


def test_an_object_whose_keys_are_none_of_the_items_fields_is_not_wrapped_whole() -> None:
    """Wrapped whole it validates (the items let other keys pass) and a model or a default
    filling the item's own fields would send a reading nobody took."""
    spec = ToolSpec.from_schema("record", {
        "type": "object",
        "properties": {"data": {"type": "array", "items": {
            "type": "object",
            "properties": {"metric": {"type": "string"}, "reading": {"type": "number"},
                           "unit": {"type": "string"}},
        }}},
        "required": ["data"],
    })  # fmt: skip
    result = ParamRepairer(spec).repair({"data": {"heart_rate": 80, "spo2": 97}})
    assert not result.ok, result.args


# -- an error that names nothing -------------------------------------------------------------

SLOTS = ToolSpec.from_schema("find_slots", {
    "type": "object",
    "properties": {"room": {"type": "string"},
                   "day": {"type": "string", "description": "Day to search, YYYY-MM-DD"},
                   "minutes": {"type": "integer", "minimum": 15}},
    "required": ["room", "day"],
})  # fmt: skip


def test_an_error_naming_nothing_does_not_veto_what_the_call_breaks_by_its_descriptions() -> None:
    task = "Find a slot in fuji on 12 March 2026."
    result = ParamRepairer(SLOTS).repair(
        {"room": "fuji", "day": "12/03/2026"}, "Error executing tool find_slots", task, NOW
    )
    assert result.ok and result.args == {"room": "fuji", "day": "2026-03-12"}
    # the same error on a call that breaks nothing: nothing to repair, declined
    kept = ParamRepairer(SLOTS).repair(
        {"room": "fuji", "day": "2026-03-12"}, "Error executing tool find_slots", task, NOW
    )
    assert not kept.ok and "names no parameter" in kept.reason
    # and the day/month order still from the task only
    open_order = ParamRepairer(SLOTS).repair(
        {"room": "fuji", "day": "12/03/2026"}, "Error executing tool find_slots", None, NOW
    )
    assert not open_order.ok


# -- kinds the fourth dev batch showed ---------------------------------------------------------

DUE = {"type": "string", "format": "date", "description": "Due date (YYYY-MM-DD)."}
LATE_NOV = dt.datetime(2026, 11, 28, 1, 40, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize(
    ("task", "want"),
    [("Set the due date to December 10.", "2026-12-10"), ("12月10日上门取件。", "2026-12-10"),
     ("Due 10 Dec, please.", "2026-12-10")],
)  # fmt: skip
def test_a_bare_number_is_the_day_of_a_yearless_date_the_task_gives(task: str, want: str) -> None:
    result = ParamRepairer(one_field(DUE)).repair({"when": 10}, task=task, now=LATE_NOV)
    assert result.ok and result.args == {"when": want}


@pytest.mark.parametrize(
    "task",
    ["Due 10 days after the go-live.", "Due December 10 or January 10.",
     "Due November 10."],  # the last November 10 is nearer than the next: which year is open
)  # fmt: skip
def test_a_bare_number_without_one_task_day_is_declined(task: str) -> None:
    assert not ParamRepairer(one_field(DUE)).repair({"when": 10}, task=task, now=LATE_NOV).ok


SENSOR = ToolSpec.from_schema("read_sensor", {
    "type": "object",
    "properties": {"sensor_id": {"type": "string", "description": "Sensor id, e.g. 'SNS-000231'."}},
    "required": ["sensor_id"],
})  # fmt: skip


def test_a_kind_word_refused_is_the_id_shaped_like_the_description_s_example() -> None:
    error = "Sensor not found: co2 sensor"
    task = "Read the CO2 sensor SNS-000231 for me."
    result = ParamRepairer(SENSOR).repair({"sensor_id": "co2 sensor"}, error, task)
    assert result.ok and result.args == {"sensor_id": "SNS-000231"}
    # never the task's own case of the refused words: the tool does not have them either
    alone = ParamRepairer(SENSOR).repair({"sensor_id": "co2 sensor"}, error, "Read the CO2 sensor.")
    assert not alone.ok, alone.args


TICKET = ToolSpec.from_schema("create_ticket", {
    "type": "object",
    "properties": {"subject": {"type": "string"},
                   "type": {"type": "string", "enum": ["question", "task"]},
                   "due_at": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}],
                              "default": None}},
    "required": ["subject"],
})  # fmt: skip
_NEEDS = "Value error, due_at is required when type is 'task'"
NEEDS_DUE = json.dumps({"detail": [{"type": "value_error", "loc": ["body"], "msg": _NEEDS}]})


def test_an_error_about_the_whole_call_naming_a_missing_parameter_is_about_it() -> None:
    call = {"subject": "Rotate the certificates", "type": "task"}
    task = "Create a task 'Rotate the certificates', due Friday 4 December."
    result = ParamRepairer(TICKET).repair(call, NEEDS_DUE, task, LATE_NOV)
    assert result.ok and result.args == {**call, "due_at": "2026-12-04"}
    # a weekday the date is not: which one is meant is open
    wrong_day = "Create a task 'Rotate the certificates', due Monday 4 December."
    assert not ParamRepairer(TICKET).repair(call, NEEDS_DUE, wrong_day, LATE_NOV).ok


def test_a_call_refused_for_its_parameters_is_never_sent_back_unchanged() -> None:
    call = {"subject": "Rotate the certificates", "type": "task"}
    result = ParamRepairer(TICKET).repair(call, NEEDS_DUE, "Create a task, no due date.")
    assert not result.ok and result.args is None


def test_the_audit_judges_a_renamed_value_where_it_was_moved() -> None:
    spec = ToolSpec.from_schema("bonus", {
        "type": "object",
        "properties": {"amount": {"type": "number"},
                       "pay_date": {"type": "string", "format": "date"}},
        "required": ["amount", "pay_date"],
        "additionalProperties": False,
    })  # fmt: skip
    result = ParamRepairer(spec).repair(
        {"amount": 250, "paydate": "15/12/2026"}, task="250 with the 15/12/2026 payroll"
    )
    assert result.ok and result.args == {"amount": 250, "pay_date": "2026-12-15"}
