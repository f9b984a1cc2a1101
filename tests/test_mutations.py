"""Malformed parameters: every mutation really breaks the schema and replays from its detail."""

from __future__ import annotations

import copy
import datetime as dt
import json
import random
import re

import dateutil.parser
import jsonschema
import pytest
from faker import Faker
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.faults import MUTATIONS, apply_mutation, parameters_schema
from pytest_agentchaos.faults import mutations as mut

CABINS = ["economy", "premium_economy", "business", "first"]
FLIGHT_SCHEMA = {
    "type": "object",
    "properties": {
        "origin": {"type": "string"},
        "destination": {"type": "string"},
        "date": {"type": "string", "format": "date"},
        "passengers": {"type": "integer", "minimum": 1, "maximum": 9},
        "cabin": {"type": "string", "enum": CABINS},
    },
    "required": ["origin", "destination", "date", "passengers"],
    "additionalProperties": False,
}
VALIDATOR = jsonschema.Draft202012Validator(FLIGHT_SCHEMA)
DATE_VALIDATOR = jsonschema.Draft202012Validator(
    FLIGHT_SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

_fake = Faker()
_fake.seed_instance(20250314)
CITIES = sorted({_fake.city() for _ in range(80)})

cities = st.sampled_from(CITIES)
iso_dates = st.dates(dt.date(2024, 1, 1), dt.date(2030, 12, 31)).map(dt.date.isoformat)
bookings = st.fixed_dictionaries(
    {
        "origin": cities,
        "destination": cities,
        "date": iso_dates,
        "passengers": st.integers(1, 9),
        "cabin": st.sampled_from(CABINS),
    }
)
seeds = st.integers(0, 2**32)


def _changed_keys(before: dict, after: dict) -> set[str]:
    return {
        k for k in set(before) | set(after) if before.get(k, object()) != after.get(k, object())
    }


# -- each mutation breaks the flight-booking schema ------------------------------------


#: The mutations a flight booking (no list, no large number, no amount) gives a key to.
BOOKING_MUTATIONS = tuple(m for m in MUTATIONS if m not in ("scalar_for_list", "formatted_number"))


@pytest.mark.parametrize("mutation", BOOKING_MUTATIONS)
@settings(max_examples=40, deadline=None)
@given(args=bookings, seed=seeds)
def test_each_mutation_violates_the_schema(mutation, args, seed):
    assert DATE_VALIDATOR.is_valid(args)
    before = copy.deepcopy(args)

    detail = mut.decide(random.Random(seed), (mutation,), args, FLIGHT_SCHEMA)
    assert detail is not None
    assert detail["mutation"] == mutation
    assert json.loads(json.dumps(detail)) == detail  # it goes into the trace as-is

    mutated = apply_mutation(args, detail)
    assert args == before  # the input is never modified
    if mutation == "reformat_date":
        assert not DATE_VALIDATOR.is_valid(mutated)
    else:
        assert not VALIDATOR.is_valid(mutated)

    changed = _changed_keys(args, mutated)
    assert changed == {detail["key"]}


@settings(max_examples=40, deadline=None)
@given(args=bookings, seed=seeds)
def test_wrong_type_changes_the_json_type(args, seed):
    detail = mut.decide(random.Random(seed), ("wrong_type",), args, FLIGHT_SCHEMA)
    key = detail["key"]
    assert detail["original"] == args[key]
    value = detail["value"]
    if FLIGHT_SCHEMA["properties"][key]["type"] == "integer":
        assert not isinstance(value, int)
    else:
        assert not isinstance(value, str)


@settings(max_examples=40, deadline=None)
@given(args=bookings, seed=seeds)
def test_reformat_date_keeps_the_date_but_not_the_iso_format(args, seed):
    detail = mut.decide(random.Random(seed), ("reformat_date",), args, FLIGHT_SCHEMA)
    assert detail["key"] == "date"
    value = detail["value"]
    assert isinstance(value, str) and not ISO_DATE.match(value)
    original = dt.date.fromisoformat(args["date"])
    readings = {
        dateutil.parser.parse(value).date(),
        dateutil.parser.parse(value, dayfirst=True).date(),
    }
    assert original in readings


@settings(max_examples=40, deadline=None)
@given(args=bookings, seed=seeds)
def test_out_of_range_respects_minimum_and_maximum(args, seed):
    detail = mut.decide(random.Random(seed), ("out_of_range",), args, FLIGHT_SCHEMA)
    assert detail["key"] == "passengers"
    value = detail["value"]
    assert isinstance(value, int) and not isinstance(value, bool)
    assert value < 1 or value > 9


@settings(max_examples=40, deadline=None)
@given(args=bookings, seed=seeds)
def test_invalid_enum_is_a_plausible_near_miss(args, seed):
    detail = mut.decide(random.Random(seed), ("invalid_enum",), args, FLIGHT_SCHEMA)
    assert detail["key"] == "cabin"
    assert isinstance(detail["value"], str) and detail["value"] not in CABINS


@settings(max_examples=40, deadline=None)
@given(args=bookings, seed=seeds)
def test_missing_required_drops_only_required_keys(args, seed):
    detail = mut.decide(random.Random(seed), ("missing_required",), args, FLIGHT_SCHEMA)
    assert detail["key"] in FLIGHT_SCHEMA["required"]
    assert detail["original"] == args[detail["key"]]
    assert detail["key"] not in apply_mutation(args, detail)


@settings(max_examples=40, deadline=None)
@given(args=bookings, seed=seeds)
def test_unknown_key_is_a_misspelling_carrying_the_original_value(args, seed):
    detail = mut.decide(random.Random(seed), ("unknown_key",), args, FLIGHT_SCHEMA)
    new_key = detail["key"]
    assert new_key not in FLIGHT_SCHEMA["properties"]
    # "destination" -> "destnation": one inner letter dropped, the real value kept.
    sources = [k for k in args if new_key in {k[:i] + k[i + 1 :] for i in range(1, len(k) - 1)}]
    assert sources, new_key
    assert detail["value"] in [args[k] for k in sources]


@settings(max_examples=30, deadline=None)
@given(args=bookings, seed=seeds)
def test_any_mix_of_mutations_violates_the_schema(args, seed):
    detail = mut.decide(random.Random(seed), MUTATIONS, args, FLIGHT_SCHEMA)
    assert not DATE_VALIDATOR.is_valid(apply_mutation(args, detail))


def test_decide_is_deterministic_for_a_seed():
    args = {"origin": "Oslo", "destination": "Lima", "date": "2026-05-01", "passengers": 3}
    a = [mut.decide(random.Random(s), MUTATIONS, args, FLIGHT_SCHEMA) for s in range(30)]
    b = [mut.decide(random.Random(s), MUTATIONS, args, FLIGHT_SCHEMA) for s in range(30)]
    assert a == b
    assert len({d["mutation"] for d in a}) >= 4


# -- when nothing applies ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("allowed", "args", "schema"),
    [
        (("invalid_enum",), {"origin": "Oslo"}, FLIGHT_SCHEMA),  # no enum value present
        (("invalid_enum",), {"cabin": "economy"}, None),  # no schema, no enums
        (("reformat_date",), {"origin": "Oslo", "date": "next friday"}, FLIGHT_SCHEMA),
        (("out_of_range",), {"origin": "Oslo", "ok": True}, None),  # bools are not numbers
        (("missing_required",), {"cabin": "first"}, FLIGHT_SCHEMA),  # no required key present
        (("wrong_type",), {"a": None}, None),
        (("wrong_type", "missing_required", "out_of_range"), {}, None),
    ],
)
def test_decide_returns_none_when_nothing_applies(allowed, args, schema):
    assert mut.decide(random.Random(0), allowed, args, schema) is None


def test_unknown_key_applies_even_to_empty_args():
    detail = mut.decide(random.Random(0), MUTATIONS, {}, None)
    assert detail == {
        "mutation": "unknown_key",
        "key": "extra_param",
        "value": "unexpected",
        "repairable": True,
    }
    assert apply_mutation({}, detail) == {"extra_param": "unexpected"}


def test_date_time_values_can_be_reformatted():
    detail = mut.decide(
        random.Random(1), ("reformat_date",), {"when": "2025-03-14T10:30:00Z"}, None
    )
    assert detail["key"] == "when" and not detail["value"].startswith("2025-03-14")


# -- generic behaviour without a schema -------------------------------------------------

_safe_text = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 _", max_size=12)
_scalars = (
    st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(-1e6, 1e6, allow_nan=False)
    | _safe_text
    | st.lists(st.integers(), max_size=3)
    | st.dictionaries(_safe_text, st.integers(), max_size=2)
)
_generic_args = st.dictionaries(
    st.text(alphabet="abcdefghij_", min_size=1, max_size=8), _scalars, min_size=1, max_size=5
)


def _json_type(value):
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


@settings(max_examples=60, deadline=None)
@given(args=_generic_args, seed=seeds)
def test_wrong_type_without_schema_changes_the_type(args, seed):
    before = copy.deepcopy(args)
    detail = mut.decide(random.Random(seed), ("wrong_type",), args, None)
    key = detail["key"]
    assert _json_type(detail["value"]) != _json_type(args[key])
    assert apply_mutation(args, detail)[key] == detail["value"]
    assert args == before


@settings(max_examples=60, deadline=None)
@given(args=_generic_args, seed=seeds)
def test_missing_required_without_schema_drops_one_key(args, seed):
    detail = mut.decide(random.Random(seed), ("missing_required",), args, None)
    out = apply_mutation(args, detail)
    assert set(args) - set(out) == {detail["key"]}
    assert len(out) == len(args) - 1


@settings(max_examples=60, deadline=None)
@given(value=st.integers(-(10**6), 10**6) | st.floats(-1e6, 1e6, allow_nan=False), seed=seeds)
def test_out_of_range_needs_bounds_to_break(value, seed):
    # lat: float with no bounds: 51.5 -> 1051500.0 is a request no agent can tell from a real one
    unbounded = {"type": "object", "properties": {"n": {"type": "number"}}}
    for schema in (None, unbounded):
        assert mut.decide(random.Random(seed), ("out_of_range",), {"n": value}, schema) is None
    assert mut.candidates("out_of_range", {"n": value}, unbounded) == []


@pytest.mark.parametrize(
    ("prop", "value"),
    [
        ({"type": "integer", "exclusiveMinimum": 0}, 5),
        ({"type": "number", "exclusiveMaximum": 90}, 51.5),
        ({"type": "number", "exclusiveMinimum": -90, "exclusiveMaximum": 90}, -0.12),
        ({"type": "integer", "minimum": 1, "exclusiveMaximum": 10}, 3),
    ],
)
def test_out_of_range_breaks_exclusive_bounds_too(prop, value):
    schema = {"type": "object", "properties": {"x": prop}}
    validator = jsonschema.Draft202012Validator(schema)
    for seed in range(30):
        detail = mut.decide(random.Random(seed), ("out_of_range",), {"x": value}, schema)
        assert detail is not None and not validator.is_valid({"x": detail["value"]}), detail
        assert type(detail["value"]) is type(value)


#: The tool of the report: a weather lookup whose schema bounds nothing and allows extra keys.
LOOSE = {
    "type": "object",
    "properties": {
        "lat": {"type": "number"},
        "lon": {"type": "number"},
        "city": {"type": ["string", "integer"]},
        "tags": {},
    },
    "required": ["lat"],
}


@settings(max_examples=80, deadline=None)
@given(seed=seeds, lat=st.floats(-90, 90, allow_nan=False), tags=st.lists(st.text(), max_size=3))
def test_with_a_schema_only_corruptions_it_rejects_are_drawn(seed, lat, tags):
    args = {"lat": lat, "lon": -0.12, "city": "London", "tags": tags}
    validator = jsonschema.Draft202012Validator(
        LOOSE, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    detail = mut.decide(random.Random(seed), MUTATIONS, args, LOOSE)
    assert detail is not None  # wrong_type of lat / lon, missing lat: the schema rejects those
    assert not validator.is_valid(apply_mutation(args, detail)), detail
    # an extra key is allowed, "city" may be a number, "tags" anything, nothing is bounded
    assert detail["mutation"] not in ("unknown_key", "out_of_range")
    assert detail["key"] != "tags"
    if detail["key"] == "city":  # 'London' -> ['London'] breaks it; -> 6 (its length) does not
        assert detail["value"] == ["London"]


def test_with_a_schema_that_rejects_nothing_nothing_fires():
    anything = {"type": "object", "properties": {"q": {}}}
    for seed in range(40):
        assert mut.decide(random.Random(seed), MUTATIONS, {"q": "x", "n": 5}, anything) is None


def test_a_schema_jsonschema_cannot_use_draws_as_without_one():
    broken = {"type": "object", "properties": {"q": {"type": "string"}}, "$ref": "#/nowhere"}
    detail = mut.decide(random.Random(1), ("wrong_type",), {"q": "x"}, broken)
    assert detail is not None and detail["key"] == "q"


def test_a_corruption_is_judged_against_what_the_agent_sent():
    # the agent's own call already breaks the schema (no "date"): the corruption must add a
    # new reason, not ride on the old one
    args = {"origin": "Oslo", "destination": "Rome", "passengers": 2}
    for seed in range(40):
        detail = mut.decide(random.Random(seed), ("missing_required", "unknown_key"), args,
                            FLIGHT_SCHEMA)  # fmt: skip
        assert detail is not None
        errors = {e.message for e in VALIDATOR.iter_errors(apply_mutation(args, detail))}
        assert errors - {e.message for e in VALIDATOR.iter_errors(args)}, detail


@pytest.mark.parametrize(
    ("prop", "value", "check"),
    [
        ({"type": "integer", "minimum": 0}, 5, lambda v: v < 0),
        ({"type": "integer", "maximum": 100}, 5, lambda v: v > 100),
        ({"type": "number", "minimum": 0.5, "maximum": 1.5}, 1.0, lambda v: v < 0.5 or v > 1.5),
    ],
)
def test_out_of_range_uses_the_bounds_it_has(prop, value, check):
    schema = {"type": "object", "properties": {"x": prop}}
    for seed in range(20):
        detail = mut.decide(random.Random(seed), ("out_of_range",), {"x": value}, schema)
        assert check(detail["value"]), detail
        assert not jsonschema.Draft202012Validator(schema).is_valid({"x": detail["value"]})


def test_invalid_enum_with_numeric_enum():
    schema = {"type": "object", "properties": {"stops": {"enum": [0, 1, 2]}}}
    detail = mut.decide(random.Random(0), ("invalid_enum",), {"stops": 1}, schema)
    assert detail["value"] not in (0, 1, 2)


def test_apply_mutation_returns_a_new_dict():
    args = {"a": 1, "b": 2}
    out = apply_mutation(args, {"mutation": "wrong_type", "key": "a", "value": "1"})
    assert out == {"a": "1", "b": 2} and args == {"a": 1, "b": 2} and out is not args
    out = apply_mutation(args, {"mutation": "missing_required", "key": "b"})
    assert out == {"a": 1} and args == {"a": 1, "b": 2}


def test_candidates_rejects_unknown_mutation():
    with pytest.raises(ValueError, match="unknown mutation 'scramble'"):
        mut.candidates("scramble", {"a": 1}, {})


# -- bugs -------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["--5", "²"])
def test_wrong_type_never_crashes_on_digit_like_strings(value):
    detail = mut.decide(random.Random(0), ("wrong_type",), {"code": value}, None)
    assert not isinstance(detail["value"], str)


@pytest.mark.parametrize("required", [None, []])
def test_missing_required_only_drops_keys_the_schema_requires(required):
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}},
    }
    if required is not None:
        schema["required"] = required
    args = {"q": "flights", "limit": 5}
    detail = mut.decide(random.Random(0), ("missing_required",), args, schema)
    assert detail is None or not jsonschema.Draft202012Validator(schema).is_valid(
        apply_mutation(args, detail)
    )


def test_unknown_key_never_collides_with_an_existing_argument():
    args = {"models": ["gpt"], "modes": ["fast"]}
    for seed in range(40):
        detail = mut.decide(random.Random(seed), ("unknown_key",), args, None)
        assert detail["key"] not in args, (seed, detail)


# -- schema wrappers --------------------------------------------------------------------


def test_parameters_schema_unwraps_common_tool_formats():
    openai_chat = {"type": "function", "function": {"name": "book", "parameters": FLIGHT_SCHEMA}}
    openai_responses = {"type": "function", "name": "book", "parameters": FLIGHT_SCHEMA}
    anthropic = {"name": "book", "description": "Book a flight", "input_schema": FLIGHT_SCHEMA}
    for wrapped in (openai_chat, openai_responses, anthropic, FLIGHT_SCHEMA):
        assert parameters_schema(wrapped) == FLIGHT_SCHEMA
    assert parameters_schema(None) == {}
    assert parameters_schema({}) == {}


@settings(max_examples=20, deadline=None)
@given(args=bookings, seed=seeds)
def test_decide_sees_through_wrappers(args, seed):
    plain = mut.decide(random.Random(seed), MUTATIONS, args, FLIGHT_SCHEMA)
    for wrapped in (
        {"type": "function", "function": {"name": "book", "parameters": FLIGHT_SCHEMA}},
        {"name": "book", "input_schema": FLIGHT_SCHEMA},
    ):
        assert mut.decide(random.Random(seed), MUTATIONS, args, wrapped) == plain


@pytest.mark.parametrize(
    ("mutation", "original", "value", "expected"),
    [
        ("wrong_type", 2, "2", True),
        ("wrong_type", 2, "two", True),
        ("wrong_type", "2", 2, False),  # in free text a number says nothing of what was meant
        ("wrong_type", "Lisbon", 6, False),  # a string replaced by its length
        ("wrong_type", ["a", "b"], "a, b", False),
        ("reformat_date", "2024-10-26", "October 26, 2024", True),
        ("reformat_date", "2024-10-26", "26/10/2024", True),  # 26 cannot be a month
        ("reformat_date", "2024-03-04", "04/03/2024", False),  # day and month could swap
        ("reformat_date", "2024-03-03", "03/03/2024", True),
        ("out_of_range", 5, 5000, False),
        ("missing_required", 2, None, False),
        ("invalid_enum", "business", "BUSINESS", True),
        ("invalid_enum", 3, 4, False),
        ("unknown_key", None, "x", True),
    ],
)
def test_each_mutation_says_whether_a_repair_can_bring_back_the_request(
    mutation, original, value, expected
):
    assert mut.repairable(mutation, original, value, {}) is expected


def test_digits_sent_as_a_number_are_repairable_where_the_schema_checks_the_text():
    for checked in ({"pattern": "^[0-9]+$"}, {"format": "date"}, {"enum": ["0", "1"]}):
        assert mut.repairable("wrong_type", "0", 0, {"type": "string", **checked})
    assert not mut.repairable("wrong_type", "0", 0, {"type": ["string", "null"]})  # a meal


def test_every_decision_carries_its_repairability():
    rng = random.Random(5)
    args = {"origin": "LIS", "when": "2024-10-26", "n": 2, "cabin": "economy"}
    schema = {
        "type": "object",
        "properties": {"cabin": {"enum": ["economy", "business"]}, "n": {"maximum": 9}},
        "required": ["origin", "n"],
    }
    for _ in range(200):
        detail = mut.decide(rng, MUTATIONS, args, schema)
        assert isinstance(detail["repairable"], bool), detail


ORDER_SCHEMA = {
    "type": "object",
    "properties": {
        "amount": {"type": "integer"},
        "weight": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}
ORDER_VALIDATOR = jsonschema.Draft202012Validator(ORDER_SCHEMA)


@pytest.mark.parametrize(
    ("mutation", "args", "key", "value", "fixable"),
    [
        ("formatted_number", {"amount": 1200}, "amount", ("1,200", "$1,200"), True),
        ("formatted_number", {"amount": 12.5}, "amount", ("12.50", "$12.50"), True),
        ("unit_suffix", {"weight": 5}, "weight", None, False),
        ("scalar_for_list", {"tags": ["a"]}, "tags", ("a",), True),
        ("scalar_for_list", {"tags": ["a", "b"]}, "tags", ("a, b",), False),
    ],
)
def test_the_formatting_mutations(mutation, args, key, value, fixable):
    for seed in range(20):
        detail = mut.decide(random.Random(seed), (mutation,), args, ORDER_SCHEMA)
        assert detail["key"] == key and detail["repairable"] is fixable
        if value is not None:
            assert detail["value"] in value
        else:
            assert str(detail["value"]).startswith(f"{args[key]} ")
        assert not ORDER_VALIDATOR.is_valid(apply_mutation(args, detail))


def test_an_enum_value_can_be_misspelt_by_a_swap_of_two_letters():
    seen = {mut._not_in_enum(random.Random(i), CABINS, "business") for i in range(200)}
    swaps = {v for v in seen if sorted(v) == sorted("business") and v != "business"}
    assert swaps, seen
