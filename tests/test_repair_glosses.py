"""Numbered glosses a description lists ("0 不返回下级行政区；1 返回下一级", "1 = one level"):
a value written as the gloss, or as a fragment of exactly one gloss, is the number it
glosses; a fragment of a gloss that says no, or of several, is not."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

CN = "子级行政区：0 不返回下级行政区；1 返回下一级；2 返回下两级；3 返回下三级"
EN = "How deep to go: 0 = no children; 1 = one level; 2 = two levels"


def depth(description: str) -> ToolSpec:
    return ToolSpec.from_schema("districts", {
        "type": "object",
        "properties": {"keywords": {"type": "string"},
                       "depth": {"type": "integer", "minimum": 0, "maximum": 3,
                                 "description": description}},
        "required": ["keywords"],
        "additionalProperties": False,
    })  # fmt: skip


@pytest.mark.parametrize(
    ("description", "sent", "want"),
    [(CN, "下一级", 1), (CN, "返回下两级", 2), (CN, "下三级", 3), (EN, "one level", 1),
     (EN, "two levels", 2), (EN, "Two Levels", 2)],
)  # fmt: skip
def test_a_glossed_value_is_its_number(description: str, sent: str, want: int) -> None:
    result = ParamRepairer(depth(description)).repair({"keywords": "浙江省", "depth": sent})
    assert result.ok and result.args == {"keywords": "浙江省", "depth": want}


@pytest.mark.parametrize(
    ("description", "sent"),
    [(CN, "下级"), (CN, "返回"), (CN, "级"), (EN, "level"), (EN, "children"), (EN, "deep")],
)
def test_a_fragment_of_a_negated_or_of_several_glosses_is_declined(
    description: str, sent: Any
) -> None:
    result = ParamRepairer(depth(description)).repair({"keywords": "浙江省", "depth": sent})
    assert not result.ok, result.args


def test_a_description_with_one_numbered_item_lists_no_glosses() -> None:
    result = ParamRepairer(depth("Depth: 1 returns the children")).repair(
        {"keywords": "x", "depth": "the children"}
    )
    assert not result.ok


# -- units named in another script (CLDR's names, through babel) ------------------------------


def radius(description: str, kind: str = "integer") -> ToolSpec:
    return ToolSpec.from_schema("regeo", {
        "type": "object",
        "properties": {"radius": {"type": kind, "description": description}},
        "required": ["radius"],
    })  # fmt: skip


@pytest.mark.parametrize(
    ("description", "sent", "want"),
    [("搜索半径，单位：米，取值范围 0~3000", "3公里", 3000),
     ("搜索半径，单位：米", "500米", 500),
     ("Search radius in meters", "3公里", 3000),
     ("搜索半径，单位：公里", "3000米", 3)],
)  # fmt: skip
def test_a_unit_written_in_chinese_converts_into_the_field_s(
    description: str, sent: str, want: int
) -> None:
    result = ParamRepairer(radius(description)).repair({"radius": sent})
    assert result.ok and result.args == {"radius": want}


@pytest.mark.parametrize(
    ("description", "sent"),
    [("搜索半径", "3公里"),  # the field states no unit
     ("搜索半径，单位：米", "3小时"),  # another kind of measure
     ("搜索半径，单位：米", "3里")],  # a unit nobody standard names so
)  # fmt: skip
def test_a_unit_in_chinese_nothing_settles_is_declined(description: str, sent: str) -> None:
    assert not ParamRepairer(radius(description)).repair({"radius": sent}).ok
