"""A number written in words with "and" after a scale ("four thousand two hundred and
eighty") is one value, the same as its digits: a total restated in words is no new value."""

from __future__ import annotations

import pytest

from pytest_agentchaos.halt.values import values


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("you get four thousand two hundred and eighty dollars", "4280"),
        ("one hundred and five items", "105"),
        ("Three Million And Twelve rows", "3000012"),
        ("two thousand and nine", "2009"),
    ],
)
def test_and_after_a_scale_joins_one_number(text: str, value: str) -> None:
    assert values(text) == {value}


def test_and_between_plain_numbers_still_separates_two() -> None:
    assert values("two and three") == {"2", "3"}
    assert values("seventy-five and twenty") == {"20", "75"}
