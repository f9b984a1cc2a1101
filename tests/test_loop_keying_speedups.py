"""The loop pipeline's speed-ups (issue 29) compute what the plain form computes: each rewritten
piece is checked against the form it replaced, on generated inputs."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.escape import normalize, provenance, volatility

CASED = st.text(st.sampled_from("aZbY_-9 éÉ中\n"), max_size=24)


@settings(max_examples=500, deadline=None)
@given(CASED)
def test_the_case_change_probe_finds_what_the_plain_pattern_finds(text: str) -> None:
    """A lower-case letter before an upper-case one, found from the upper-case letter back."""
    plain = re.compile(r"[a-z][A-Z]")
    assert (volatility._CASE_CHANGE.search(text) is None) == (plain.search(text) is None)


def _issue_as_before(table: provenance.Provenance, value: Any, limit: int) -> None:
    """What ``_issue`` recorded before its no-overflow path: the fresh values listed first,
    then added (starting over when the table is full)."""
    found: list[str] = []
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            found += provenance._candidates(item)
        elif isinstance(item, list):
            todo.extend(item)
        elif isinstance(item, int):
            found.append(str(item))
    issued, given = table._issued, table._given
    fresh = [text for text in found if text not in issued and text not in given]
    for text in fresh:
        if text not in issued:
            if len(issued) >= limit:
                issued.clear()
            issued[text] = table._tick


RESULTS = st.lists(
    st.lists(st.one_of(st.integers(0, 30), st.sampled_from(["a1", "b2 c3", "x/4", "d5"]))),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(RESULTS)
def test_results_issue_the_same_values_near_and_at_the_tables_bound(results: list[Any]) -> None:
    """However full the table of issued values is, each result records the same values with
    the same ticks as listing the fresh ones first did (the table starts over alike)."""
    limit = 8
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(provenance, "_MAX_VALUES", limit)
        fast, plain = provenance.Provenance(), provenance.Provenance()
        for tick, result in enumerate(results, 1):
            fast._tick = plain._tick = tick
            fast._issue(result, [provenance._LEAVES])
            _issue_as_before(plain, result, limit)
            assert fast._issued == plain._issued  # a table looked up, never read in order


ARG_TEXTS = st.text(st.sampled_from("ab 7٣_-/:"), max_size=12)


@settings(max_examples=300, deadline=None)
@given(ARG_TEXTS, st.integers(0, 3))
def test_an_argument_text_read_again_is_masked_as_it_was_the_first_time(
    text: str, issued: int
) -> None:
    """Whether an argument's text holds a digit is remembered per text: the second call with
    it (read from memory) passes the same handles as the first (read by the search)."""
    provenance._DIGITS_IN.pop(text, None)
    calls = []
    for _ in range(2):
        table = provenance.Provenance()
        table.result({"ids": [f"a{i}" for i in range(issued)], "text": text})
        calls.append(table.args("tool", {"q": text, "id": "a1"}))
    assert calls[0] == calls[1]
    assert provenance._DIGITS_IN.get(text, None) in (
        None,
        provenance._DIGIT.search(text) is not None,
    )


ROWS = st.lists(
    st.one_of(
        st.dictionaries(st.sampled_from(["sku", "request_id", "took", "price"]), st.text("a1:0 ")),
        st.text("a1-9 "),
        st.integers(0, 2 * 10**9),
    ),
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(ROWS)
def test_a_list_in_a_record_is_masked_item_by_item(rows: list[Any]) -> None:
    """A record's list (rows, hits) is masked as masking each item on its own does."""
    assert normalize.mask({"rows": rows}) == {"rows": [normalize.mask(row) for row in rows]}
    ignored = {"price"}
    assert normalize.mask({"rows": rows}, ignored) == {
        "rows": [normalize.mask(row, ignored) for row in rows]
    }
    assert normalize.mask_args({"rows": rows}) == {
        "rows": [normalize.mask_args(row) for row in rows]
    }


WORDS = st.text(st.sampled_from('ab_Z09 -":\n٣éⅷ²中'), max_size=30)


@settings(max_examples=500, deadline=None)
@given(WORDS)
def test_a_text_splits_at_the_words_holding_a_digit_as_the_plain_pattern_splits_it(
    text: str,
) -> None:
    """The possessive split finds the same positions and skeleton as ``\\b\\w*\\d\\w*``, in
    Unicode text (a Roman numeral or a superscript is a word character, not a digit) and in
    ASCII text."""
    plain = re.compile(r"(\b\w*\d\w*)")
    assert volatility._DIGITS.split(text) == plain.split(text)
    ascii_text = text.encode("ascii", "ignore").decode()
    ascii_plain = re.compile(plain.pattern, re.ASCII)
    assert volatility._ASCII_DIGITS.split(ascii_text) == ascii_plain.split(ascii_text)


class _Label(str):
    """A text of another type than ``str`` (an enum's value, a framework's string)."""


LEAVES = st.one_of(
    st.sampled_from(["a1", "b2 c3", "x/4", "job:5", "plain", "", "d5"]),
    st.integers(0, 40),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.builds(_Label, st.sampled_from(["e6", "f"])),
)
JSONISH = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(["k", "id", "rows", "n"]), inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(st.lists(JSONISH, max_size=8), st.integers(1, 12), st.integers(4, 12))
def test_a_result_read_container_by_container_issues_what_reading_it_in_order_does(
    results: list[Any], budget: int, limit: int
) -> None:
    """Whatever the result holds (other types than JSON's, more leaves than the budget) and
    however full the table is, it records the same values with the same ticks as the reading
    in order (last item first) does."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(provenance, "_MAX_VALUES", limit)
        fast, plain = provenance.Provenance(), provenance.Provenance()
        for tick, result in enumerate(results, 1):
            fast._tick = plain._tick = tick
            fast._issue(result, [budget])
            plain._issue_in_order(result, [budget])
            assert fast._issued == plain._issued
