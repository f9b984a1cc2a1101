"""Values written the Chinese way and stretches of a timeline, as the halt monitor reads them:
digits glued to a Chinese word before them still take their magnitude ("预算60w", "共3千元"); a
Chinese magnitude is how an amount is written, not a rounding ("1.2千元" after "1,150元" is a
new amount); the two ends of "between A and B" / "from A to B" on a timeline are positions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentchaos.halt.monitor import HaltMonitor
from pytest_agentchaos.halt.values import read, values


@pytest.mark.parametrize(
    ("text", "value"),
    [("预算60w", "600000"), ("共3千元", "3000"), ("合计1.5万元", "15000"), ("约2亿", "200000000")],
)
def test_digits_glued_to_a_chinese_word_keep_their_magnitude(text: str, value: str) -> None:
    assert value in values(text)
    assert not {"3", "1000", "60w"} & values(text)


@given(st.integers(min_value=1, max_value=99), st.sampled_from(["千", "万", "亿"]))
def test_a_chinese_magnitude_is_not_a_rounding(tenths: int, word: str) -> None:
    assert not read(f"合计 {tenths / 10:g}{word}元").approximate
    assert read(f"合计约 {tenths / 10:g}{word}元").approximate  # said to be rounded: rounded


def test_a_chinese_magnitude_near_an_earlier_amount_is_news() -> None:
    monitor = HaltMonitor(task="算一下能赔多少", embedder="lexical")
    monitor.observe("上限是 1,150元。")
    monitor.observe("重新核对后是 1.2千元。")
    assert monitor.watch.history[-1].new_info == {"1200"}


def test_the_chat_shorthand_still_rounds() -> None:
    assert read("budget is 1.2k").approximate == {"1200"}


@given(
    st.integers(min_value=1, max_value=9_999),
    st.integers(min_value=1, max_value=9),
    st.integers(min_value=1, max_value=9_999),
    st.sampled_from(["between {a} s and {b} s", "from {a} s to {b} s", "from {a}s - {b}s"]),
)
def test_both_ends_of_a_stretch_of_a_timeline_are_values(
    start: int, tenth: int, end: int, form: str
) -> None:
    a, b = f"{start}.{tenth}", f"{end}.{tenth}"
    read_values = values("the clicks sit " + form.format(a=a, b=b))
    for end_value in (a, b):  # kept, bare or as written ("12.5s")
        assert end_value in read_values or f"{end_value}s" in read_values, read_values


def test_a_measured_duration_beside_a_stretch_stays_left_out() -> None:
    assert values("scanned between 12.5 s and 14.2 s; the scan took 3.4 s") == {"12.5", "14.2"}
