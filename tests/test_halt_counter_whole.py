"""A loop counter counts in whole numbers: a fraction that rises from step to step (an
agreement score, a ratio, a rate) is a measurement, news each time it moves, not a counter."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_agentchaos.halt.values import Counters, read


def _dropped(texts: list[str]) -> list[frozenset[str]]:
    counters = Counters()
    return [counters.drop(i, read(t).numbers) for i, t in enumerate(texts)]


def test_a_rising_score_is_news_each_time() -> None:
    assert _dropped(["kappa 0.71", "kappa 0.78", "kappa 0.84"]) == [frozenset()] * 3


def test_a_whole_counter_rising_by_one_is_still_a_counter() -> None:
    assert _dropped(["attempt 3", "attempt 4", "attempt 5"])[1:] == [{"4"}, {"5"}]


@given(
    st.integers(min_value=0, max_value=97),
    st.lists(st.integers(min_value=1, max_value=9), min_size=2, max_size=5),
)
def test_a_fraction_rising_by_hundredths_is_never_a_counter(start: int, steps: list[int]) -> None:
    value, texts = start, []
    for step in steps:
        value += step
        texts.append(f"score 0.{value:02d}" if value < 100 else "score 0.99")
    assert all(not dropped for dropped in _dropped(texts))
