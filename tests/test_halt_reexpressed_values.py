"""A paraphrase re-expresses the answer's values (issue 29, halt): digits, English number
words, Chinese numerals, thousands separators, a Chinese magnitude, the clauses reordered. Such
a restatement never counts as news; a value that was not said before always does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.halt import HaltMonitor

_ONES = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_TEENS = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
          "seventeen", "eighteen", "nineteen"]  # fmt: skip
_HAN = "零一二三四五六七八九"


def english(n: int) -> str:
    """``n`` (1..999) in English words."""
    hundreds, rest = divmod(n, 100)
    words = [f"{_ONES[hundreds]} hundred"] if hundreds else []
    if 10 <= rest < 20:
        words.append(_TEENS[rest - 10])
    elif rest:
        tens, ones = divmod(rest, 10)
        words.append("-".join(w for w in (_TENS[tens], _ONES[ones]) if w))
    return " and ".join(words) if len(words) == 2 else words[0]


def chinese(n: int) -> str:
    """``n`` (1..9999) in Chinese numerals, as it is said (一千零八, 三百二十)."""
    out, zero = "", False
    for value, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        digit = n // value % 10
        if digit:
            out += ("零" if zero and out else "") + _HAN[digit] + unit
            zero = False
        else:
            zero = bool(out)
    return out


def _new_info(first: str, second: str, task: str) -> frozenset[str]:
    monitor = HaltMonitor(task=task, embedder="lexical", cjk_embedder="lexical")
    monitor.observe(first)
    monitor.observe(second)
    return monitor.watch.history[-1].new_info


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=2, max_value=999), st.integers(min_value=2, max_value=999))
def test_english_values_re_expressed_are_no_news(seats: int, rows: int) -> None:
    first = f"The hall has {seats} seats in {rows} rows."
    second = f"In {english(rows)} rows, the hall seats {english(seats)}."
    assert not _new_info(first, second, "count the hall's seats")


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=11, max_value=9999), st.integers(min_value=11, max_value=9999))
def test_chinese_values_re_expressed_are_no_news(fee: int, people: int) -> None:
    first = f"报名费一共 {fee:,} 元，参加人数 {people} 人。"
    second = f"参加的有{chinese(people)}人，报名费合计{chinese(fee)}元。"
    assert not _new_info(first, second, "统计报名情况")


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=99))
def test_a_chinese_magnitude_re_expressed_is_no_news(tenths: int) -> None:
    amount = tenths * 100
    assert not _new_info(f"预算是 {amount:,} 元。", f"也就是{tenths / 10:g}千元。", "算预算")


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=10, max_value=949), st.integers(min_value=1, max_value=50))
def test_a_value_not_said_before_is_news(seats: int, more: int) -> None:
    # (from ten up: a small number in words, "my last two messages", is read as weak)
    first = f"The hall has {seats} seats."
    second = f"The hall seats {english(seats + more)}."
    assert _new_info(first, second, "count the hall's seats") == {str(seats + more)}


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=11, max_value=9999), st.integers(min_value=1, max_value=50))
def test_a_chinese_value_not_said_before_is_news(fee: int, more: int) -> None:
    first = f"报名费一共 {fee:,} 元。"
    second = f"报名费合计{chinese(fee + more)}元。"
    assert _new_info(first, second, "统计报名情况") == {str(fee + more)}
