"""A choice written only in a description as "one <thing>: a, b or c" (issue 30, kind D),
and a value that joins two allowed values with a separator (a decline, never one of them)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec, rules_for

_VALUES = st.lists(
    st.sampled_from(["tolls", "highways", "ferries", "indoor", "weekly", "monthly", "premium"]),
    min_size=3,
    max_size=3,
    unique=True,
)
_HEADS = st.sampled_from(["One route restriction", "One option", "One billing cycle"])


def _spec(description: str) -> ToolSpec:
    return ToolSpec.from_schema(
        "plan",
        {
            "type": "object",
            "properties": {
                "origin": {"type": "string"},
                "choice": {"type": "string", "description": description},
            },
            "required": ["origin"],
            "additionalProperties": False,
        },
    )


@settings(max_examples=30, deadline=None)
@given(values=_VALUES, head=_HEADS)
def test_one_thing_then_a_colon_lists_the_allowed_values(values: list[str], head: str) -> None:
    description = f"{head}: {values[0]}, {values[1]} or {values[2]}."
    assert rules_for({"type": "string", "description": description}).enum == tuple(values)
    spec = _spec(description)
    plural = values[1]
    # a value sent in another inflection is the listed one; a listed value passes unchanged
    singular = plural[:-1] if plural.endswith("s") else plural + "s"
    result = ParamRepairer(spec).repair({"origin": "Lyon", "choice": singular}, task=None)
    assert result.ok and result.args == {"origin": "Lyon", "choice": plural}
    same = ParamRepairer(spec).repair({"origin": "Lyon", "choice": values[2]}, task=None)
    assert same.ok and same.args == {"origin": "Lyon", "choice": values[2]}


@pytest.mark.parametrize(
    "description",
    [
        "One address: street, city and zip code.",  # the parts of one value, not a choice
        "One line of text: the greeting shown first or last.",  # prose, not values
        "One of the labels, e.g. bug, docs or help.",  # an open list
    ],
)
def test_prose_that_is_no_choice_is_no_enum(description: str) -> None:
    assert rules_for({"type": "string", "description": description}).enum == ()
    result = ParamRepairer(_spec(description)).repair({"origin": "Lyon", "choice": "anything"})
    assert result.ok and result.args == {"origin": "Lyon", "choice": "anything"}


@pytest.mark.parametrize("separator", ["|", ",", "+", "&", ";"])
@pytest.mark.parametrize(
    "enum", [["tolls", "highways", "ferries"], ["asc", "desc"], ["read", "write", "admin"]]
)
def test_two_allowed_values_joined_are_declined_not_cut_to_one(
    separator: str, enum: list[str]
) -> None:
    spec = ToolSpec.from_schema(
        "t",
        {
            "type": "object",
            "properties": {"x": {"type": "string", "enum": enum}},
            "required": ["x"],
        },
    )
    joined: Any = f"{enum[0]}{separator}{enum[1]}"
    result = ParamRepairer(spec).repair({"x": joined}, task=f"both {enum[0]} and {enum[1]}")
    assert not result.ok, result.args
