"""Numbers in the writing of most of Europe (thousands grouped by "." or a space, a decimal
comma: "1.428,00 €", "4 280,00 $") are the same values as "1,428.00": a total restated in
another locale's writing is no new value. Without the decimal comma the writing is left as
it reads in English ("1.428" is one point four two eight)."""

from __future__ import annotations

import pytest
from halt_scaffold import halt_at, say
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentchaos.halt.values import values


def _english(units: int, cents: int) -> str:
    return f"{units:,}.{cents:02d}"


def _european(units: int, cents: int, sep: str) -> str:
    return f"{units:,}".replace(",", sep) + f",{cents:02d}"


@given(
    st.integers(min_value=1000, max_value=999_999),
    st.integers(min_value=0, max_value=99),
    st.sampled_from([".", " ", "\u00a0", "\u202f"]),
)
def test_a_grouped_number_with_a_decimal_comma_is_its_english_writing(
    units: int, cents: int, sep: str
) -> None:
    assert values(f"the total is {_european(units, cents, sep)} EUR") == values(
        f"the total is {_english(units, cents)} EUR"
    )


@given(st.integers(min_value=1000, max_value=99_999), st.sampled_from([".", " "]))
def test_a_whole_amount_in_european_writing_is_one_whole_number(units: int, sep: str) -> None:
    assert values(f"{_european(units, 0, sep)} €") == {str(units)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("version 1.428", {"1.428"}),  # no decimal comma: an English decimal point
        ("1.2.3", {"1.2.3"}),  # a version, not a grouped number
        ("rows 4 280", {"4", "280"}),  # two numbers, no decimal comma
    ],
)
def test_without_a_decimal_comma_the_writing_reads_as_english(
    text: str, expected: set[str]
) -> None:
    assert values(text) == expected


def test_a_total_restated_in_european_writings_is_no_news() -> None:
    task = "What is the total of invoice INV-2291 including VAT?"
    steps = [
        say("The total of INV-2291 is EUR 1,428.00."),
        say("So the gross amount payable on that invoice is 1.428,00 €."),
        say("In other words, 1 428,00 EUR gross."),
        say("Put plainly: 1.428,00 euro is what the customer owes."),
        say("To repeat: the invoice comes to 1 428,00 € with VAT."),
    ]
    assert halt_at(steps, task) is not None
