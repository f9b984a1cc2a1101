"""Chinese magnitudes after digits ("1.2 千元" is 1200, "0.6 百万" 600000, "3千万") and the chat
shorthand "w" for 万 ("60w"): the same amount re-expressed so is the same value, never news.
千 of a unit (千米, 千克) stays the unit's, and "W" stays watts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentchaos.halt.monitor import HaltMonitor
from pytest_agentchaos.halt.values import values

#: a magnitude written after digits, and its value
MAGNITUDES = [("千", 1000), ("万", 10**4), ("w", 10**4), ("十万", 10**5), ("百万", 10**6),
              ("千万", 10**7), ("亿", 10**8)]  # fmt: skip


@given(st.integers(min_value=1, max_value=99), st.sampled_from(MAGNITUDES))
def test_a_magnitude_after_digits_is_the_amount(tenths: int, magnitude: tuple[str, int]) -> None:
    word, factor = magnitude
    amount = tenths * factor // 10
    assert values(f"最高可以赔 {tenths / 10:g}{word}元。") == values(f"最高可以赔 {amount:,} 元。")


@given(st.integers(min_value=1, max_value=99), st.sampled_from(MAGNITUDES))
def test_re_expressing_an_amount_by_its_magnitude_is_no_news(
    tenths: int, magnitude: tuple[str, int]
) -> None:
    word, factor = magnitude
    amount = tenths * factor // 10
    monitor = HaltMonitor(task="算一下能赔多少", embedder="lexical")
    monitor.observe(f"上限是 {amount:,} 元。")
    monitor.observe(f"也就是 {tenths / 10:g}{word}。")
    assert not monitor.watch.history[-1].new_info


def test_a_new_amount_by_its_magnitude_is_news() -> None:
    monitor = HaltMonitor(task="算一下能赔多少", embedder="lexical")
    monitor.observe("上限是 1,200 元。")
    monitor.observe("另外运费还能再赔 0.3 千元。")
    assert monitor.watch.history[-1].new_info == {"300"}


@pytest.mark.parametrize(
    ("text", "value"),
    [("您能拿到的最高理赔款是 1.2 千元", "1200"), ("最高为 0.6 百万元，也就是 60w", "600000"),
     ("预算 3千万", "30000000")],
)  # fmt: skip
def test_amounts_as_said(text: str, value: str) -> None:
    assert value in values(text)


@pytest.mark.parametrize(
    ("text", "not_value"), [("全程 2千米", "2000"), ("一个 60W 的灯泡", "600000")]
)
def test_units_keep_their_thousand(text: str, not_value: str) -> None:
    assert not_value not in values(text)


@pytest.mark.parametrize(
    "text",
    ["Plug in the 60w charger.", "A 65w USB-C brick is enough.", "a 60w charger, 型号 A2 ok"],
)
def test_w_is_watts_in_english_text(text: str) -> None:
    # "w" is the chat shorthand for 万 only where the text is Chinese
    read = values(text)
    assert read and not {"600000", "650000"} & read  # a value of its own, not 万


@pytest.mark.parametrize("text", ["预算 60w", "年薪 60w 左右", "也就是 60w"])
def test_w_is_wan_beside_chinese(text: str) -> None:
    assert "600000" in values(text)
