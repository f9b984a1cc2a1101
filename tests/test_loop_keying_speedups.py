"""The loop pipeline's speed-ups (issue 29) compute what the plain form computes: each rewritten
piece is checked against the form it replaced, on generated inputs."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.escape import provenance, volatility

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
            assert list(fast._issued.items()) == list(plain._issued.items())
