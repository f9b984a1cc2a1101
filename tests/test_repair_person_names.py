"""A person's name whole where the tool takes its parts, or in parts where it takes it whole:
split only where the parts are plain, merged given name first unless the task writes it the
other way; two keys that name one parameter alike are never renamed into it one-sidedly."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

S = {"type": "string"}


def spec(props: dict[str, Any], required: list[str]) -> ToolSpec:
    schema = {"type": "object", "properties": props, "required": required}
    return ToolSpec.from_schema("contact", {**schema, "additionalProperties": False})


PARTS = spec({"first_name": S, "last_name": S, "email": S}, ["first_name", "last_name"])
CAMEL = spec({"givenName": S, "familyName": S}, ["givenName", "familyName"])
WHOLE = spec({"name": S, "email": S}, ["name"])


@pytest.mark.parametrize(
    ("tool", "sent", "want"),
    [
        (PARTS, {"name": "Grace Hopper"}, {"first_name": "Grace", "last_name": "Hopper"}),
        (PARTS, {"full_name": "Hopper, Grace"}, {"first_name": "Grace", "last_name": "Hopper"}),
        (CAMEL, {"fullName": "Ada Lovelace"}, {"givenName": "Ada", "familyName": "Lovelace"}),
    ],
)
def test_a_whole_name_is_split_into_the_parts_the_tool_takes(
    tool: ToolSpec, sent: dict[str, Any], want: dict[str, Any]
) -> None:
    result = ParamRepairer(tool).repair(sent, task="Add Grace Hopper and Ada Lovelace.")
    assert result.ok and result.args == want


@pytest.mark.parametrize("name", ["Mary Ann Evans", "Evans", "王伟", "Ludwig van Beethoven"])
def test_a_name_whose_parts_are_open_is_not_split(name: str) -> None:
    result = ParamRepairer(PARTS).repair({"name": name}, task=f"Add {name}.")
    assert not result.ok, result.args


@pytest.mark.parametrize(
    ("task", "want"),
    [(None, "Grace Hopper"), ("Add Grace Hopper", "Grace Hopper"),
     ("Add Hopper Grace", "Hopper Grace")],
)  # fmt: skip
def test_name_parts_are_merged_into_the_one_name_the_tool_takes(
    task: str | None, want: str
) -> None:
    result = ParamRepairer(WHOLE).repair({"first_name": "Grace", "last_name": "Hopper"}, task=task)
    assert result.ok and result.args == {"name": want}


def test_two_keys_naming_one_parameter_alike_are_not_renamed_one_sidedly() -> None:
    """The merge turned off: ``first_name`` renamed to ``name`` and ``last_name`` dropped
    would send half the name."""
    from pytest_agentchaos.repair import RepairPolicy

    policy = RepairPolicy(strategies={"person_name_correction": False})
    result = ParamRepairer(WHOLE, policy=policy).repair(
        {"first_name": "Grace", "last_name": "Hopper"}
    )
    assert not result.ok, result.args


@settings(max_examples=100, deadline=None)
@given(
    first=st.from_regex(r"[A-Z][a-z]{1,9}", fullmatch=True),
    last=st.from_regex(r"[A-Z][a-z]{1,9}", fullmatch=True),
)
def test_a_split_and_a_merge_keep_every_letter_of_the_name(first: str, last: str) -> None:
    split = ParamRepairer(PARTS).repair({"name": f"{first} {last}"})
    assert split.ok and split.args == {"first_name": first, "last_name": last}
    merged = ParamRepairer(WHOLE).repair({"first_name": first, "last_name": last})
    assert merged.ok and merged.args == {"name": f"{first} {last}"}
