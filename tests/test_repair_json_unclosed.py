"""Arguments sent as JSON text whose closing brackets are missing at its end (a model's cut
of the last ``}``): read with them closed, only where the text stops right after a whole
value (a closing bracket or a closed string), never inside a string or after a number or a
literal that may itself be cut short."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.repair.json_text import closing_brackets

SCHEMA = {
    "type": "object",
    "properties": {
        "meal": {"type": "string"},
        "items": {"type": "array", "items": {"type": "object"}},
    },
    "required": ["meal", "items"],
}


def test_a_text_missing_its_last_brace_is_read() -> None:
    text = '{"meal": "lunch", "items": [{"food_id": "fdc:1", "grams": 150.0}]'
    result = ParamRepairer(ToolSpec.from_schema("log_meal", SCHEMA)).repair(text, None, "lunch")
    assert result.ok, result.reason
    assert result.args == {"meal": "lunch", "items": [{"food_id": "fdc:1", "grams": 150.0}]}


def test_a_text_cut_after_a_number_or_inside_a_string_is_not_read() -> None:
    repairer = ParamRepairer(ToolSpec.from_schema("log_meal", SCHEMA))
    for text in ('{"meal": "lunch", "items": [], "limit": 1', '{"meal": "lun'):
        assert closing_brackets(text) is None
        assert not repairer.repair(text, None, "lunch").ok


def test_nothing_is_added_to_a_whole_text_or_one_closed_early() -> None:
    assert closing_brackets('{"a": 1}') is None
    assert closing_brackets('{"a": 1}, {"b": "x"') is None
    assert closing_brackets('{"a": "x"]') is None
    assert closing_brackets('{"a": "}"') == '{"a": "}"}'


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=st.dictionaries(st.text(max_size=6), _VALUES, min_size=1, max_size=4),
    cut=st.integers(1, 400),
)
def test_closing_a_cut_text_gives_back_the_object_or_nothing(
    value: dict[str, Any], cut: int
) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert closing_brackets(text) is None  # a whole text lacks nothing
    head = text[: max(1, len(text) - cut)]
    closed = closing_brackets(head)
    if closed is not None:  # only closers are added, never anything read into the text
        assert closed.startswith(head.strip())
        assert set(closed[len(head.strip()) :]) <= {"}", "]"}
    if text.endswith(('"}', "]}", "}}")):  # the last brace dropped after a whole value
        assert closing_brackets(text[:-1]) == text


def test_a_text_cut_inside_a_list_is_not_closed() -> None:
    # review: '"tags": ["a", "b"' may have lost items past the cut; closing it would send a
    # shorter list than the model wrote
    assert closing_brackets('{"query": "cats", "tags": ["a", "b"') is None
    assert closing_brackets('{"query": "cats", "tags": [{"k": "a"}') is None
    assert closing_brackets('{"query": "cats", "tags": ["a", "b"]') == (
        '{"query": "cats", "tags": ["a", "b"]}'
    )
