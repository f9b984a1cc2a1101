"""Kinds the fifth independent dev batch showed the repairer getting wrong, each written as a
user of the repairer meets it (not in the batch's words)."""

from __future__ import annotations

import datetime as dt

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

NOW = dt.datetime(2026, 11, 28, 9, 0, tzinfo=dt.timezone.utc)

STOCK = ToolSpec.from_schema("adjust_stock", {
    "type": "object",
    "properties": {"item": {"type": "string"},
                   "mode": {"type": "string", "enum": ["set", "add", "subtract"]},
                   "amount": {"type": "integer", "minimum": 0}},
    "required": ["item", "mode", "amount"],
})  # fmt: skip


def test_a_sign_a_choice_beside_may_carry_is_not_dropped_as_a_slip() -> None:
    call = {"item": "bolt", "mode": "set", "amount": -4}
    result = ParamRepairer(STOCK).repair(call, task="Take 4 bolts out of stock.")
    assert not result.ok, result.args  # "set 4" would be another request than "take 4 out"
    # the task settles the choice beside it: the sign is then a slip
    told = ParamRepairer(STOCK).repair(call, task="Set the bolt stock to 4 please.")
    assert told.ok and told.args == {"item": "bolt", "mode": "set", "amount": 4}


PAY = ToolSpec.from_schema("pay", {
    "type": "object",
    "properties": {"pay_on": {"type": "string", "format": "date"}}, "required": ["pay_on"],
})  # fmt: skip


def test_a_past_day_the_task_names_without_a_year_is_not_moved_a_year_ahead() -> None:
    error = "pay_on 2026-11-20 is in the past"
    result = ParamRepairer(PAY).repair(
        {"pay_on": "2026-11-20"}, error, "Pay it on 20 November.", NOW
    )
    assert not result.ok, result.args
    # a day of early next year the model dated this year is the next one
    soon = ParamRepairer(PAY).repair({"pay_on": "2026-01-05"}, "pay_on 2026-01-05 is in the past",
                                     "Pay it on 5 January.", NOW)  # fmt: skip
    assert soon.ok and soon.args == {"pay_on": "2027-01-05"}, soon.reason


def test_a_compact_date_number_the_task_does_not_give_is_declined() -> None:
    result = ParamRepairer(PAY).repair({"pay_on": 20261206}, task="Pay the invoice.", now=NOW)
    assert not result.ok, result.args
    for task in ("Pay it on 2026-12-06.", "Pay it on December 6, 2026.", "Pay it 20261206."):
        given = ParamRepairer(PAY).repair({"pay_on": 20261206}, task=task, now=NOW)
        assert given.ok and given.args == {"pay_on": "2026-12-06"}, (task, given.reason)


GRID = ToolSpec.from_schema("write_cells", {
    "type": "object",
    "properties": {"cells": {"type": "array", "items": {"type": "array",
                                                        "items": {"type": "string"}}}},
    "required": ["cells"],
})  # fmt: skip


def test_a_flat_list_where_rows_are_asked_for_is_one_row() -> None:
    result = ParamRepairer(GRID).repair({"cells": ["a", "b", "c"]})
    assert result.ok and result.args == {"cells": [["a", "b", "c"]]}, result.reason
    # nested already: nothing to wrap
    rows = ParamRepairer(GRID).repair({"cells": [["a"], ["b"]]})
    assert rows.ok and rows.args == {"cells": [["a"], ["b"]]}


LISTING = ToolSpec.from_schema("list_objects", {
    "type": "object",
    "properties": {"Bucket": {"type": "string"}, "Prefix": {"type": "string"}},
    "required": ["Bucket"],
})  # fmt: skip


def test_a_value_is_not_completed_with_what_another_field_holds() -> None:
    error = (
        'Parameter validation failed:\nInvalid bucket name "s3://team-photos": Bucket name '
        'must match the regex "^[a-zA-Z0-9.\\-_]{1,255}$"'
    )
    call = {"Bucket": "s3://team-photos", "Prefix": "raw/"}
    result = ParamRepairer(LISTING).repair(call, error, "Show what is in s3://team-photos/raw/.")
    assert not result.ok or result.args["Bucket"] == "team-photos", result.args


TRANSFER = ToolSpec.from_schema("transfer", {
    "type": "object",
    "properties": {"amount": {"type": "number", "description": "Amount in US dollars."},
                   "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
                   "fee_usd_cents": {"type": "integer"},
                   "buy_amount": {"type": "number"}, "buy_currency": {"type": "string"},
                   "sell_currency": {"type": "string"}},
})  # fmt: skip


def test_a_valid_call_sending_the_task_s_amount_in_another_currency_is_declined() -> None:
    other = ParamRepairer(TRANSFER).repair({"amount": 800, "currency": "EUR"}, task="Send 800 GBP.")
    assert not other.ok and "GBP" in other.reason, other.args
    # the call's own currency says what the amount is in, whatever the description's wording
    same = ParamRepairer(TRANSFER).repair({"amount": 800, "currency": "GBP"}, task="Send 800 GBP.")
    assert same.ok and same.strategy == "none"
    # a currency in the field's name, an amount in its smallest unit
    fee = ParamRepairer(TRANSFER).repair({"fee_usd_cents": 250}, task="Charge a fee of €2.50.")
    assert not fee.ok, fee.args
    assert ParamRepairer(TRANSFER).repair({"fee_usd_cents": 250}, task="Charge a 2.50 USD fee.").ok
    # the currency field beside it by name: buy_amount is in buy_currency
    pair = {"buy_amount": 1000, "buy_currency": "EUR", "sell_currency": "CHF"}
    assert not ParamRepairer(TRANSFER).repair(pair, task="Buy 1,000 CHF with euros.").ok
    assert ParamRepairer(TRANSFER).repair(pair, task="Buy 1,000 EUR with francs.").ok


QUEUE = ToolSpec.from_schema("send", {
    "type": "object",
    "properties": {"body": {"type": "string"}, "delay_seconds": {"type": "integer"},
                   "weight": {"type": "number", "description": "Weight in kilograms."}},
})  # fmt: skip


def test_a_valid_call_sending_the_task_s_measure_in_another_unit_is_declined() -> None:
    late = ParamRepairer(QUEUE).repair({"delay_seconds": 5}, task="Send it 5 minutes from now.")
    assert not late.ok and "minute" in late.reason, late.args
    assert ParamRepairer(QUEUE).repair({"delay_seconds": 5}, task="Send it in 5 seconds.").ok
    heavy = ParamRepairer(QUEUE).repair({"weight": 3}, task="Ship 3 lb of flour.")
    assert not heavy.ok, heavy.args
    assert ParamRepairer(QUEUE).repair({"weight": 3}, task="Ship 3 kg of flour.").ok
    # a number the task counts things with is no measure
    assert ParamRepairer(QUEUE).repair({"weight": 3}, task="Ship 3 boxes, 3 kg.").ok


OBJECTS = ToolSpec.from_schema("list_items", {
    "type": "object",
    "properties": {"Store": {"type": "string"}, "Prefix": {"type": "string"},
                   "Limit": {"type": "integer"}, "After": {"type": "string"}},
    "required": ["Store"], "additionalProperties": False,
})  # fmt: skip
UNKNOWN = (
    'Unknown parameter in input: "{key}", must be one of: Store, Delimiter, Prefix, Limit, '
    "After, Token, Owner, Payer"
)


def test_an_error_listing_the_tool_s_keys_is_no_list_of_values_for_them() -> None:
    call = {"Store": "files", "Prefx": "2026/"}
    result = ParamRepairer(OBJECTS).repair(
        call, UNKNOWN.format(key="Prefx"), "List 2026/ in files."
    )
    assert result.ok and result.args == {"Store": "files", "Prefix": "2026/"}, result.reason


def test_an_unknown_key_holding_a_day_the_task_writes_in_words_is_not_dropped() -> None:
    call = {"Store": "files", "ChangedSince": "2026-11-01"}
    error = UNKNOWN.format(key="ChangedSince")
    for task in ("List files changed after 1 November.", "List files changed since Nov 1st."):
        result = ParamRepairer(OBJECTS).repair(call, error, task)
        assert not result.ok, (task, result.args)
    other = ParamRepairer(OBJECTS).repair(call, error, "List what is in files.")
    assert other.ok and other.args == {"Store": "files"}


PLOT = ToolSpec.from_schema("plot", {
    "type": "object", "properties": {"cells": {"type": "string"}}, "required": ["cells"],
})  # fmt: skip
REFUSED = "Invalid cells '{v}': expected a block like B3:F7"


def test_a_refused_value_is_written_as_the_error_s_example_writes_its_kind() -> None:
    for sent in ("c4:e10", "C4-E10", "c4 : e10"):
        result = ParamRepairer(PLOT).repair({"cells": sent}, REFUSED.format(v=sent), "Plot it.")
        assert result.ok and result.args == {"cells": "C4:E10"}, (sent, result.reason)
    # other letters or digits, or another shape than the example's: not this rule's to fix
    for sent in ("C4", "C4:E10:G2", "sheet C4:E10"):
        result = ParamRepairer(PLOT).repair({"cells": sent}, REFUSED.format(v=sent), "Plot it.")
        assert not result.ok, (sent, result.args)
