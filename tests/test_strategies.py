"""pytest_agentchaos.strategies: valid calls that validate, malformed ones labelled truly."""

from __future__ import annotations

import datetime as dt
import random
from typing import Literal

import jsonschema
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_agentchaos.faults.mutations import MUTATIONS, apply_mutation, decide
from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.strategies import Malformed, malformed_args, valid_args


def send_invoice(
    customer_email: str,
    amount: int,
    currency: Literal["usd", "eur", "gbp"],
    due_date: dt.date,
    items: list[str],
    note: str | None = None,
) -> None:
    """Send an invoice."""


SPEC = ToolSpec.from_function(send_invoice)
RICH = {
    "type": "function",
    "function": {
        "name": "create_event",
        "parameters": {
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 3, "maxLength": 40},
                "start": {"type": "string", "format": "date-time"},
                "room": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"},
                "attendees": {
                    "type": "array",
                    "items": {"type": "string", "format": "email"},
                    "minItems": 1,
                    "maxItems": 3,
                },
                "priority": {"type": "integer", "minimum": 1, "maximum": 5},
                "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "meta": {
                    "type": "object",
                    "properties": {"id": {"type": "string", "format": "uuid"}},
                    "required": ["id"],
                },
                "kind": {"anyOf": [{"const": "call"}, {"type": "null"}]},
            },
            "required": ["title", "start", "room", "attendees", "meta"],
        },
    },
}


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_valid_args_validate_against_the_schema(data: st.DataObject) -> None:
    for spec in (SPEC, ToolSpec.from_schema(None, RICH)):
        args = data.draw(valid_args(spec))
        checker = jsonschema.Draft202012Validator(
            spec.parameters, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )
        assert checker.is_valid(args), list(checker.iter_errors(args))


@settings(max_examples=80, deadline=None)
@given(malformed_args(send_invoice))
def test_malformed_args_are_invalid_and_say_what_was_changed(call: Malformed) -> None:
    assert SPEC.is_valid(call.original)
    assert call.args != call.original
    changed = {k for k in call.args.keys() | call.original.keys()
               if call.args.get(k, ...) != call.original.get(k, ...)}  # fmt: skip
    assert changed == {call.key}


@settings(max_examples=150, deadline=None)
@given(malformed_args(SPEC))
def test_our_repairer_never_changes_a_call_into_another(call: Malformed) -> None:
    # a corruption the schema cannot see (a number still in range) is passed on as it is:
    # must_repair reports that one; here only what the repairer changes is judged
    assume(not SPEC.is_valid(call.args))
    result = ParamRepairer(SPEC).repair(call.args)
    assert not result.ok or result.args == call.original, (call, result.reason)


def test_our_repairer_brings_back_most_repairable_calls() -> None:
    rng = random.Random(7)
    calls = [
        {"customer_email": f"buyer{i}@example.com", "amount": amount, "currency": currency,
         "due_date": f"2025-0{1 + i % 9}-1{i % 10}", "items": items[: 1 + i % 3],
         **({"note": "net 30"} if i % 2 else {})}
        for i, (amount, currency) in enumerate(
            [(1200, "usd"), (45, "eur"), (99999, "gbp"), (3, "usd"), (250000, "eur")] * 4
        )
        for items in [["design", "hosting", "support"]]
    ]  # fmt: skip
    assert all(SPEC.is_valid(c) for c in calls)
    restored = tried = 0
    for i in range(400):
        args = calls[i % len(calls)]
        detail = decide(rng, MUTATIONS, args, SPEC.parameters)
        if detail is None or not detail["repairable"]:
            continue
        corrupted = apply_mutation(args, detail)
        if SPEC.is_valid(corrupted):
            continue
        tried += 1
        result = ParamRepairer(SPEC).repair(corrupted)
        assert not result.ok or result.args == args, (detail, result.args)
        restored += result.ok
    assert tried > 100 and restored / tried >= 0.8, (restored, tried)


def test_a_mutation_list_is_checked() -> None:
    with pytest.raises(ValueError, match="unknown mutation 'typo'"):
        malformed_args(SPEC, mutations=("typo",))
    with pytest.raises(TypeError, match="expected a ToolSpec, a JSON Schema or a function"):
        valid_args(3)
