"""What a repair needs evidence for, kind by kind: each test is a kind of call that was once
"repaired" without the evidence (or fixed once the evidence was read), written as a user of
the repairer would meet it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, RepairStep, ToolSpec, audit
from pytest_agentchaos.repair.fixes import DROP, Context, Fix
from pytest_agentchaos.repair.reconcile import reconcile

BOOKING = ToolSpec.from_schema(
    "create_booking",
    {
        "type": "object",
        "properties": {
            "resource_id": {"type": "string"},
            "start": {"type": "string", "format": "date-time"},
            "title": {"type": "string"},
        },
        "required": ["resource_id", "start", "title"],
    },
)


# -- a type word is a word, and its id fills one field ------------------------------------------


@pytest.mark.parametrize(
    ("value", "args", "task"),
    [
        # an identifier of its own, written by the task as sent: not a type word
        ("rm-fuji", {}, "Book rm-fuji 2026-03-12 09:00-10:00 UTC"),
        ("desk_4", {}, "Book desk_4 B12 for the afternoon"),
        # a type word whose id is another field's value already: one task token, one field
        ("room", {"start": "2026-03-12T09:00:00Z"}, "Book the room 2026-03-12 at nine"),
    ],
)
def test_no_id_replaces_a_value_without_a_type_words_evidence(
    value: str, args: dict[str, Any], task: str
) -> None:
    fix = reconcile(value, {"type": "string"}, Context("resource_id", args, task))
    assert not isinstance(fix, Fix), fix


def test_a_type_word_still_gives_way_to_the_id_the_task_writes_beside_it() -> None:
    fix = reconcile(
        "pull request", {"type": "string"}, Context("id", {}, "merge pull request PR-17")
    )
    assert isinstance(fix, Fix) and fix.value == "PR-17"


def test_a_business_refusal_quoting_a_value_the_task_states_is_declined() -> None:
    args = {"resource_id": "rm-fuji", "start": "2026-03-12T09:00:00+00:00", "title": "Prep"}
    result = ParamRepairer(BOOKING).repair(
        args,
        "Error executing tool create_booking: Resource 'rm-fuji' seats 6, got 9 attendees",
        "Book rm-fuji 2026-03-12 09:00-10:00 UTC for 'Prep' with the whole team.",
    )
    assert not result.ok, result.args
    assert result.args is None


# -- a default the tool's error says is not enough --------------------------------------------

EXPRESS = ToolSpec.from_schema(
    "express_track",
    {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "company": {"type": "string"},
            "number": {"type": "string"},
            "phone_tail": {
                "anyOf": [{"type": "string", "pattern": "^\\d{4}$"}, {"type": "null"}],
                "default": None,
                "description": "Last four digits of the phone number, required for shunfeng",
            },
        },
        "required": ["company", "number"],
    },
)
PHONE_ERROR = '{"result": false, "message": "this carrier needs the last four digits (phone_tail)"}'


def test_an_error_asking_for_a_field_is_not_answered_with_a_null_default() -> None:
    # a null default is no value: the error asks for one the task does not give
    result = ParamRepairer(EXPRESS).repair(
        {"company": "shunfeng", "number": "SF140123456789"}, PHONE_ERROR, "track SF140123456789"
    )
    assert not result.ok, result.args


def test_a_default_still_fills_a_field_only_the_schema_asks_for() -> None:
    spec = ToolSpec.from_schema(
        "list",
        {
            "type": "object",
            "properties": {"page": {"type": "integer", "default": 1}},
            "required": ["page"],
        },
    )
    result = ParamRepairer(spec).repair({}, None, "list them")
    assert result.ok and result.args == {"page": 1}


# -- currencies by their ISO 4217 codes, amounts in minor units --------------------------------

PAYOUT = ToolSpec.from_schema(
    "create_payout",
    {
        "type": "object",
        "properties": {
            "amount": {"type": "number", "description": "Amount in euros, e.g. 1250.50"},
            "iban": {"type": "string"},
        },
        "required": ["amount", "iban"],
    },
)


@pytest.mark.parametrize("sent", ["500 USD", "USD 500", "$500", "500 GBP"])
def test_an_amount_in_a_currency_code_other_than_the_described_name_is_declined(
    sent: str,
) -> None:
    result = ParamRepairer(PAYOUT).repair(
        {"amount": sent, "iban": "DE89370400440532013000"}, None, "Pay out 500 to my account."
    )
    assert not result.ok and "converting it" in result.reason, result.args


@pytest.mark.parametrize("sent", ["500 EUR", "EUR 500", "€500"])
def test_an_amount_in_the_described_currency_is_read_as_its_number(sent: str) -> None:
    result = ParamRepairer(PAYOUT).repair(
        {"amount": sent, "iban": "DE89370400440532013000"}, None, "Pay out 500 euros."
    )
    assert result.ok and result.args["amount"] == 500, result.reason


def _drop(field: str) -> RepairStep:
    return RepairStep(field, "unknown", "drop_unknown_key", "v", DROP, 0.9, "not a parameter", True)


@settings(max_examples=100, deadline=None)
@given(
    amount=st.integers(1, 99_999),
    currency=st.sampled_from([("euros", 2), ("EUR", 2), ("USD", 2), ("yen", 0), ("JPY", 0)]),
    minor=st.booleans(),
)
def test_the_audit_never_drops_an_amount_the_task_states_in_either_unit(
    amount: int, currency: tuple[str, int], minor: bool
) -> None:
    name, digits = currency
    value = amount * 10**digits if minor else amount
    task = f"List charges over {amount} {name} this month."
    why = audit({"min_amount": value, "since": "2026-03-01"}, {"since": "2026-03-01"}, task,
                [_drop("min_amount")])  # fmt: skip
    assert why is not None and "task states" in why


def test_the_words_currency_unit_name_no_currency() -> None:
    spec = ToolSpec.from_schema(
        "charge",
        {
            "type": "object",
            "properties": {
                "amount": {
                    "type": "integer",
                    "description": "Amount in the smallest currency unit (2500 for 25.00 EUR).",
                },
                "currency": {"type": "string", "pattern": "^[a-z]{3}$"},
            },
            "required": ["amount", "currency"],
        },
    )
    result = ParamRepairer(spec).repair(
        {"amount": "€25.00", "currency": "eur"}, None, "Charge 25 euros for the invoice."
    )
    assert result.ok and result.args == {"amount": 2500, "currency": "eur"}, result.reason


# -- enum values: polarity, word order, words cut short ----------------------------------------


def _enum(value: str, allowed: list[str], name: str = "field") -> Any:
    from pytest_agentchaos.repair.enums import match_enum

    return match_enum(value, allowed, Context(name, {}, None))


@pytest.mark.parametrize(
    ("value", "allowed", "want"),
    [
        ("no", ["create_prorations", "none", "always_invoice"], "none"),
        ("false", ["auto", "off", "always"], "off"),
        ("y", ["yes", "no", "ask"], "yes"),
        ("tar.gz", ["zip", "tar", "gztar", "bztar"], "gztar"),
        ("ascending", ["asc", "desc"], "asc"),
        ("fraud", ["duplicate", "fraudulent", "requested_by_customer"], "fraudulent"),
        ("二等", ["商务座", "一等座", "二等座"], "二等座"),
    ],
)
def test_an_enum_value_written_another_way_is_found(
    value: str, allowed: list[str], want: str
) -> None:
    fix = _enum(value, allowed)
    assert isinstance(fix, Fix) and fix.value == want, fix


@pytest.mark.parametrize(
    ("value", "allowed"),
    [
        ("no", ["none", "never", "sometimes"]),  # two values say no
        ("tar.gz", ["zip", "tar"]),  # "gz" is no word naming what tar is: another format
        ("v2.1", ["v2", "v3"]),  # a version of its own
        ("ab", ["abc", "abd"]),  # too short to be a word cut short
        ("desc", ["descending", "description"]),  # cut short from two values
        ("openish", ["open", "closed"]),  # an ending that makes another word
        ("extra large", ["small", "large"]),  # a modifier before the value
    ],
)
def test_an_enum_value_without_one_reading_is_declined(value: str, allowed: list[str]) -> None:
    assert not isinstance(_enum(value, allowed), Fix)


# -- a fixed offset where the task names the zone ---------------------------------------------


@pytest.mark.parametrize(
    ("task", "want"),
    [
        ("show the times in Berlin time", "Europe/Berlin"),  # +1 in winter
        ("a call at 9 in Paris", "Europe/Paris"),
        ("show the slots", "Etc/GMT-1"),  # no zone named: the offset's own zone
        ("show the times in Tokyo time", None),  # +9: the call and the task disagree
    ],
)
def test_a_fixed_offset_is_the_zone_the_task_names_when_their_offsets_agree(
    task: str, want: str | None
) -> None:
    import datetime as dt

    from pytest_agentchaos.repair.zones import fix_zone

    now = dt.datetime(2026, 3, 10, 9, 30, tzinfo=dt.timezone.utc)
    fix = fix_zone("GMT+1", Context("timezone", {}, task, now))
    if want is None:
        assert not isinstance(fix, Fix), fix
    else:
        assert isinstance(fix, Fix) and fix.value == want, fix


# -- a refused list, item by item --------------------------------------------------------------

LABELS = {"type": "array", "items": {"type": "string"}}


@pytest.mark.parametrize(
    ("value", "task", "want"),
    [
        (["Bug"], "Create an issue with the bug label.", ["bug"]),
        (["good-first-issue"], "tag it good first issue.", ["good first issue"]),
        (["bug", "priority high"], "labels: bug and priority: high.", ["bug", "priority: high"]),
        (["mona lisa"], "assign it to mona-lisa.", ["mona-lisa"]),
    ],
)
def test_a_refused_list_takes_the_tasks_spelling_of_each_item(
    value: list[str], task: str, want: list[str]
) -> None:
    from pytest_agentchaos.repair.refused import fix_rejected

    fix = fix_rejected(value, LABELS, Context("labels", {}, task))
    assert isinstance(fix, Fix) and fix.value == want, fix


@pytest.mark.parametrize(
    ("value", "task"),
    [
        (["bug"], "Create an issue with the bug label."),  # as sent: the tool lacks it
        (["Bug"], "labels BUG and bug"),  # two spellings: which is meant is open
        (["wontfix"], "Create an issue about the crash."),  # nothing in the task
    ],
)
def test_a_refused_list_the_task_does_not_respell_is_declined(value: list[str], task: str) -> None:
    from pytest_agentchaos.repair.refused import fix_rejected

    assert not isinstance(fix_rejected(value, LABELS, Context("labels", {}, task)), Fix)


# -- the values an error body lists for the field ----------------------------------------------

SUBSCRIPTION = ToolSpec.from_schema(
    "update_subscription",
    {
        "type": "object",
        "properties": {
            "subscription": {"type": "string"},
            "plan": {"type": "string", "description": "Plan id"},
        },
        "required": ["subscription", "plan"],
    },
)
PLANS = ["plan_basic_monthly", "plan_basic_yearly", "plan_pro_monthly", "plan_pro_yearly"]


def _no_such_plan(listed_as: str) -> str:
    import json

    return json.dumps({
        "type": "https://api.example/problems/resource-missing", "title": "No such plan",
        "status": 404, "detail": "No such plan: 'pro yearly'", listed_as: PLANS,
    })  # fmt: skip


def test_a_refused_value_is_matched_to_the_values_the_error_body_lists_for_its_field() -> None:
    result = ParamRepairer(SUBSCRIPTION).repair(
        {"subscription": "sub_1", "plan": "pro yearly"},
        _no_such_plan("available_plans"),
        "Switch sub_1 to the Pro yearly plan.",
    )
    assert result.ok and result.args["plan"] == "plan_pro_yearly", result.reason


def test_a_list_in_the_error_body_that_names_another_thing_is_no_enum_of_the_field() -> None:
    result = ParamRepairer(SUBSCRIPTION).repair(
        {"subscription": "sub_1", "plan": "pro yearly"},
        _no_such_plan("recent_invoices"),
        "Switch sub_1 to the Pro yearly plan.",
    )
    assert not (result.ok and result.args["plan"] in PLANS), result.args


# -- full-width forms, and a value the error ends on -------------------------------------------


def test_full_width_forms_are_read_in_their_compatibility_form() -> None:
    from pytest_agentchaos.repair.mechanical import fix_pattern

    fix = fix_pattern("121.4737，31.2304", r"^-?\d+(\.\d+)?,-?\d+(\.\d+)?$", Context("location"))
    assert isinstance(fix, Fix) and fix.value == "121.4737,31.2304"


def test_an_error_ending_on_a_value_of_the_call_points_at_its_field() -> None:
    spec = ToolSpec.from_schema(
        "weather",
        {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City code (adcode)"}},
            "required": ["city"],
        },
    )
    error = '{"status": "0", "info": "城市编码不存在：３１００００", "infocode": "20003"}'
    result = ParamRepairer(spec).repair(
        {"city": "３１００００"}, error, "上海（310000）现在多少度？"
    )
    assert result.ok and result.args == {"city": "310000"}, result.reason
    # the same code written as sent in the task: the tool genuinely lacks it
    as_sent = error.replace("３１００００", "310000")
    assert not ParamRepairer(spec).repair({"city": "310000"}, as_sent, "上海（310000）多少度？").ok


# -- a time without its zone, where the task says UTC ------------------------------------------

DATETIME = {"type": "string", "format": "date-time"}


@pytest.mark.parametrize(
    ("value", "args", "task", "want"),
    [
        ("tomorrow 14:00", {}, "Book it tomorrow 2pm-6pm UTC.", "2026-03-11T14:00:00Z"),
        # the call writes UTC as +00:00 elsewhere: the repair writes it the same way
        ("tomorrow 14:00", {"end": "2026-03-11T18:00:00+00:00"}, "tomorrow 2pm-6pm UTC",
         "2026-03-11T14:00:00+00:00"),
        ("2026-03-01 09:00", {}, "updated since March 1, 9:00 GMT", "2026-03-01T09:00:00Z"),
    ],
)  # fmt: skip
def test_a_time_without_its_zone_is_utc_where_the_task_says_so(
    value: str, args: dict[str, Any], task: str, want: str
) -> None:
    import datetime as dt

    from pytest_agentchaos.repair.date_layouts import fix_date

    now = dt.datetime(2026, 3, 10, 9, 30, tzinfo=dt.timezone.utc)
    fix = fix_date(value, DATETIME, Context("start", args, task, now))
    assert isinstance(fix, Fix) and fix.value == want, fix


@pytest.mark.parametrize(
    "task", ["Book it tomorrow at 2pm.", "tomorrow 14:00 UTC+2", "at 14:00, that is 13:00 UTC+1"]
)
def test_a_time_without_its_zone_is_declined_where_the_task_does_not_say_utc(task: str) -> None:
    import datetime as dt

    from pytest_agentchaos.repair.date_layouts import fix_date

    now = dt.datetime(2026, 3, 10, 9, 30, tzinfo=dt.timezone.utc)
    assert not isinstance(
        fix_date("tomorrow 14:00", DATETIME, Context("start", {}, task, now)), Fix
    )


# -- a unit abbreviation the task spells out ---------------------------------------------------

TIMEOUT = {"type": "integer", "description": "Timeout in seconds"}


@pytest.mark.parametrize(
    ("task", "want"),
    [
        ("Run it with a 5 minute timeout.", 300),
        ("Run it with a 5-minute timeout.", 300),
    ],
)
def test_an_abbreviation_the_task_spells_out_is_read_as_the_tasks_unit(
    task: str, want: int
) -> None:
    from pytest_agentchaos.repair.numbers import labelled_number

    fix = labelled_number("5m", TIMEOUT, Context("timeout_seconds", {}, task))
    assert isinstance(fix, Fix) and fix.value == want, fix


@pytest.mark.parametrize(
    "task",
    [
        "Run it with a 5m timeout.",  # as sent: "m" stays metres, another dimension
        "Run it with a 6 minute timeout.",  # another number: not the same mention
        "Run it with a 5 metre timeout.",  # a unit of another dimension, spelt out
    ],
)
def test_an_abbreviation_the_task_does_not_spell_out_is_declined(task: str) -> None:
    from pytest_agentchaos.repair.numbers import labelled_number

    assert not isinstance(labelled_number("5m", TIMEOUT, Context("timeout_seconds", {}, task)), Fix)


# -- a missing value shaped by the field's own pattern -----------------------------------------


@pytest.mark.parametrize(
    ("task", "want"),
    [
        ("track SF140123456789, the phone ends in 8832", "8832"),
        ("顺丰单号 SF140123456789 查一下，收件人手机尾号 8832", "8832"),
    ],
)
def test_a_missing_value_is_the_one_task_token_the_fields_pattern_takes(
    task: str, want: str
) -> None:
    result = ParamRepairer(EXPRESS).repair(
        {"company": "shunfeng", "number": "SF140123456789"}, PHONE_ERROR, task
    )
    assert result.ok and result.args["phone_tail"] == want, result.reason


@pytest.mark.parametrize(
    "task",
    [
        "track SF140123456789 sent in 2025, the phone ends in 8832",  # two tokens fit
        "track SF140123456789",  # none fits
    ],
)
def test_a_pattern_that_takes_no_one_task_token_gives_no_value(task: str) -> None:
    result = ParamRepairer(EXPRESS).repair(
        {"company": "shunfeng", "number": "SF140123456789"}, PHONE_ERROR, task
    )
    assert not result.ok, result.args


# -- spoken addresses and zone keys one character off ------------------------------------------


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("li.wei at example dot cn", "li.wei@example.cn"),
        ("bob (at) mail dot example dot org", "bob@mail.example.org"),
    ],
)
def test_a_spoken_email_address_is_written_as_one(value: str, want: str) -> None:
    from pytest_agentchaos.repair.mechanical import fix_format

    fix = fix_format(value, "email", Context("email"))
    assert isinstance(fix, Fix) and fix.value == want, fix


@pytest.mark.parametrize("value", ["li wei at example", "meet at noon dot"])
def test_words_that_are_no_spoken_address_are_declined(value: str) -> None:
    from pytest_agentchaos.repair.mechanical import fix_format

    assert not isinstance(fix_format(value, "email", Context("email")), Fix)


@pytest.mark.parametrize(
    ("value", "want"),
    [("Europe/Londn", "Europe/London"), ("Asia/Tokoy", "Asia/Tokyo")],
)
def test_a_zone_key_one_character_off_is_the_databases_key(value: str, want: str) -> None:
    from pytest_agentchaos.repair.zones import fix_zone

    fix = fix_zone(value, Context("timezone"))
    assert isinstance(fix, Fix) and fix.value == want, fix


@pytest.mark.parametrize("value", ["Europe/Lndn", "America/Nowhere", "Etc/GMT+1x"])
def test_a_zone_key_further_off_or_between_two_is_declined(value: str) -> None:
    from pytest_agentchaos.repair.zones import fix_zone

    assert not isinstance(fix_zone(value, Context("timezone")), Fix)


def test_a_parameter_name_inside_an_issues_sentence_is_no_location() -> None:
    from pytest_agentchaos.repair.error_bodies import located_lines

    spec = ToolSpec.from_schema(
        "customer",
        {
            "type": "object",
            "properties": {"email": {"type": "string"}, "address": {"type": "object"}},
        },
    )
    text = "ValueError: email: value is not a valid email address: it must have an @-sign."
    assert [p.path for p in located_lines(text, spec)] == [("email",)]
    lines = "email: not an address\n- address: required"
    assert [p.path for p in located_lines(lines, spec)] == [("email",), ("address",)]
