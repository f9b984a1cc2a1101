"""Countries, currencies and languages written in another standard form (CLDR's tables via
Babel): the repairer moves a value between a name, a code and an alias only where the field
says which form it takes and exactly one form fits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("babel")

from babel import Locale  # noqa: E402

from pytest_agentchaos.repair import ParamRepairer, ToolSpec  # noqa: E402
from pytest_agentchaos.repair.codes import entity_of, sign_currencies, table_of  # noqa: E402

MARKET = {
    "type": "object",
    "properties": {
        "q": {"type": "string"},
        "market": {
            "type": "string",
            "pattern": "^[A-Z]{2}$",
            "description": "An ISO 3166-1 alpha-2 country code.",
        },
    },
    "required": ["q"],
}
SHIPPING = {
    "type": "object",
    "properties": {
        "country": {"type": "string", "description": "Destination country, English name"},
        "kg": {"type": "number"},
    },
    "required": ["country", "kg"],
}
PAYMENT = {
    "type": "object",
    "properties": {
        "amount": {"type": "integer"},
        "currency": {
            "type": "string",
            "pattern": "^[a-z]{3}$",
            "description": "Three-letter ISO currency code, in lowercase",
        },
    },
    "required": ["amount"],
}
TRANSLATE = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "target_lang": {"type": "string", "description": "Target language, e.g. 'en'"},
    },
    "required": ["text"],
}

_EN = Locale("en")
_COUNTRIES = sorted(c for c in _EN.territories if len(c) == 2 and c.isalpha())


def _repair(schema: dict, args: dict, error: str | None = None, task: str | None = None):
    return ParamRepairer(ToolSpec.from_schema("tool", schema)).repair(args, error, task)


def test_a_country_name_where_the_pattern_wants_its_code() -> None:
    result = _repair(MARKET, {"q": "Kraftwerk", "market": "Germany"})
    assert result.ok and result.args == {"q": "Kraftwerk", "market": "DE"}
    assert "CLDR" in result.reason


def test_a_retired_alias_the_tool_refused_becomes_the_standard_code() -> None:
    result = _repair(MARKET, {"q": "x", "market": "UK"}, '{"message": "Invalid market code"}')
    assert result.ok and result.args["market"] == "GB"


def test_a_code_the_tool_refused_becomes_the_english_name_its_description_asks_for() -> None:
    args = {"country": "DE", "kg": 1.2}
    result = _repair(SHIPPING, args, "ValueError: invalid country: 'DE'", "ship 1.2kg to DE")
    assert result.ok and result.args == {"country": "Germany", "kg": 1.2}


def test_currency_sign_and_plural_name_become_the_iso_code_in_the_patterns_case() -> None:
    assert _repair(PAYMENT, {"amount": 350, "currency": "€"}).args == {
        "amount": 350,
        "currency": "eur",
    }
    assert _repair(PAYMENT, {"amount": 350, "currency": "euros"}).args["currency"] == "eur"


def test_a_sign_several_currencies_write_is_declined() -> None:
    # "$" is the US dollar's sign in English, and ends A$, CA$, NZ$...: no one currency
    assert len(sign_currencies("$")) > 1
    result = _repair(PAYMENT, {"amount": 350, "currency": "$"})
    assert not result.ok


def test_a_language_name_the_tool_refused_becomes_its_code_in_the_examples_case() -> None:
    args = {"text": "good morning", "target_lang": "French"}
    result = _repair(TRANSLATE, args, "ValueError: invalid language: 'French'", "to French")
    assert result.ok and result.args["target_lang"] == "fr"


def test_a_field_that_names_no_table_is_left_to_the_other_strategies() -> None:
    assert table_of("city", "City name") is None
    assert table_of("currency_pair", "a country and its currency") is None  # two tables
    schema = {"type": "object", "properties": {"city": {"type": "string", "pattern": "^[A-Z]{2}$"}}}
    assert not _repair(schema, {"city": "Germany"}).ok


def test_a_name_that_is_no_entity_of_the_table_is_declined() -> None:
    result = _repair(MARKET, {"q": "x", "market": "Atlantis"})
    assert not result.ok


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_COUNTRIES))
def test_every_country_name_is_repaired_into_its_own_code(code: str) -> None:
    name = _EN.territories[code]
    found = entity_of(name, "country")
    if found is None:  # an English name two territories share: no repair may pick one
        assert not _repair(MARKET, {"q": "x", "market": name}).ok
        return
    assert found.code == code
    result = _repair(MARKET, {"q": "x", "market": name})
    assert result.ok and result.args["market"] == code
    # and the repaired call is left as it is: nothing more to repair
    again = _repair(MARKET, result.args)
    assert again.ok and again.args == result.args and again.strategy == "none"


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_COUNTRIES), st.sampled_from(["lower", "title"]))
def test_a_code_in_another_case_is_never_turned_into_another_country(code: str, case: str) -> None:
    written = code.lower() if case == "lower" else code.title()
    result = _repair(MARKET, {"q": "x", "market": written})
    assert not result.ok or result.args["market"] == code


CENTS_LINK = {
    "type": "object",
    "properties": {
        "amount": {"type": "integer", "description": "Amount in cents"},
        "currency": {"type": "string"},
    },
    "required": ["amount"],
}


def test_an_amount_with_its_currencys_code_in_the_calls_currency_is_the_number() -> None:
    schema = {
        "type": "object",
        "properties": {"amount": {"type": "number"}, "from_currency": {"type": "string"}},
    }
    assert _repair(schema, {"amount": "CHF 250", "from_currency": "CHF"}).args["amount"] == 250
    refused = _repair(schema, {"amount": "CHF 250", "from_currency": "EUR"})
    assert not refused.ok and "CHF" in refused.reason


def test_whole_units_the_task_states_become_the_smallest_unit_by_the_currencys_digits() -> None:
    task = "a link for the plan at $19.99"
    result = _repair(CENTS_LINK, {"amount": 19.99, "currency": "usd"}, None, task)
    assert result.ok and result.args["amount"] == 1999
    yen = _repair(CENTS_LINK, {"amount": 19.99, "currency": "jpy"}, None, "at ¥19.99")
    assert not yen.ok  # yen has no minor unit: 19.99 yen is no amount


def test_a_signed_amount_without_decimals_is_scaled_only_where_the_task_states_it() -> None:
    assert _repair(CENTS_LINK, {"amount": "$25"}, None, "refund $25").args["amount"] == 2500
    assert not _repair(CENTS_LINK, {"amount": "$25"}, None, "refund it").ok


@settings(max_examples=80, deadline=None)
@given(st.integers(min_value=1, max_value=10**6), st.integers(min_value=0, max_value=99))
def test_cents_of_a_stated_amount_are_exact(units: int, cents: int) -> None:
    written = f"{units}.{cents:02d}"
    task = f"charge ${written} please"
    result = _repair(CENTS_LINK, {"amount": float(written), "currency": "usd"}, None, task)
    if cents == 0:  # a whole float is the whole number as it is
        assert result.args["amount"] == units
    else:
        assert result.ok and result.args["amount"] == units * 100 + cents
