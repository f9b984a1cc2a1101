"""Values written the Chinese way, as the halt monitor reads them: digits glued to a Chinese
word before them still take their magnitude ("共3千元", "合计1.5万元"), but not the chat
shorthand "w", which glued to a Chinese word is as likely watts ("功率65w") as 万; 千 as the SI
prefix of a unit (千焦, 千卡, 千帕) is no magnitude; a Chinese magnitude is how an amount is
written, not a rounding ("1.2千元" after "1,150元" is a new amount). Measured times in decimal
seconds stay left out, also as the two ends of "from A s to B s" (a measurement that moves is
no news; which stretches are positions on a timeline is not told apart, so none is read)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentchaos.halt.monitor import HaltMonitor
from pytest_agentchaos.halt.values import read, values


@pytest.mark.parametrize(
    ("text", "value"),
    [("共3千元", "3000"), ("合计1.5万元", "15000"), ("约2亿", "200000000"), ("预算 60w", "600000")],
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


@pytest.mark.parametrize("text", ["充电器功率65w", "热量300千焦", "气压101千帕", "大小512千字节"])
def test_a_unit_glued_to_a_chinese_word_is_no_magnitude(text: str) -> None:
    read_values = values(text)
    assert not any(v.startswith(("650000", "300000", "101000", "512000")) for v in read_values)


def test_a_measured_time_that_moves_from_step_to_step_is_no_news() -> None:
    # review: "went from 3.41 s to 3.87 s" each step with other decimals is the same rebuild
    monitor = HaltMonitor(task="make the build faster", embedder="lexical")
    halted = False
    for a, b in [(3.41, 3.87), (3.52, 3.91), (3.44, 3.80), (3.47, 3.95), (3.43, 3.89)]:
        text = f"Rebuilt again: build time went from {a} s to {b} s. Trying the same flags again."
        halted = monitor.observe(text).halt or halted
    assert halted
