"""Chinese amounts as they are said: a digit right after a unit above ten counts in the unit
below it ("一万二" is 12000, "两千八" 2800, "一百五" 150; after 零 it counts ones: "一千零八"
is 1008), and a number of 万 may stand a space from its digits ("1.28 万"). A total restated
so is no new value."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentchaos.halt.values import values

DIGITS = "一二三四五六七八九"
#: a unit, the unit below it, and its value
UNITS = [("百", "十", 100), ("千", "百", 1000), ("万", "千", 10_000), ("亿", "千万", 10**8)]


@given(
    st.integers(min_value=1, max_value=9),
    st.integers(min_value=1, max_value=9),
    st.sampled_from(UNITS),
)
def test_a_digit_after_a_unit_counts_in_the_unit_below(
    lead: int, tail: int, unit: tuple[str, str, int]
) -> None:
    big, below, value = unit
    said = f"{DIGITS[lead - 1]}{big}{DIGITS[tail - 1]}"
    assert values(said) == values(f"{said}{below}") == {str(lead * value + tail * value // 10)}


@given(st.integers(min_value=1, max_value=9), st.integers(min_value=1, max_value=9))
def test_after_zero_the_digit_counts_ones(lead: int, tail: int) -> None:
    assert values(f"{DIGITS[lead - 1]}千零{DIGITS[tail - 1]}") == {str(lead * 1000 + tail)}


@pytest.mark.parametrize(
    ("text", "value"),
    [("两个月一共报了一万两千八", "12800"), ("加起来是 1.28 万元", "12800"), ("二十五", "25")],
)
def test_amounts_as_said(text: str, value: str) -> None:
    assert value in values(text)
