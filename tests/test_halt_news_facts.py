"""A value of several words (a quoted text, a thing counted) is news by a fact it brings: a
word with a digit or a name the run has not said. The same words said again around one new
plain word ("env | sort" after "env") are new wording, not a new fact."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.halt.monitor import HaltMonitor

WORDS = st.sampled_from(["sort", "grep", "tidy", "again", "listing", "filter", "check"])


@given(WORDS)
@settings(max_examples=20, deadline=None)
def test_a_quoted_text_with_only_a_new_plain_word_is_no_news(word: str) -> None:
    monitor = HaltMonitor(embedder="lexical")
    monitor.observe("`env` lists DATABASE_URL=postgres://stg-db:5432/app")
    monitor.observe(f"`env {word}` lists DATABASE_URL=postgres://stg-db:5432/app too")
    assert not monitor.watch.history[-1].new_info


@given(st.integers(min_value=100, max_value=10**6))
@settings(max_examples=20, deadline=None)
def test_a_quoted_text_with_a_new_number_is_news(value: int) -> None:
    monitor = HaltMonitor(embedder="lexical")
    monitor.observe("`env` lists DATABASE_URL=postgres://stg-db:5432/app")
    monitor.observe(f"`env port{value}` lists DATABASE_URL=postgres://stg-db:5432/app too")
    assert monitor.watch.history[-1].new_info
