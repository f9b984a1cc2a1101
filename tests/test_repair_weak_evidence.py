"""A rule's fix chosen from weak evidence (a near spelling, a value holding an allowed one, a
cue word) is a guess among plausible values: with a model proposer the model answers first,
and the rule's fix stands only where the model has no usable answer; without a model the
rule's fix is what it was."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.repair.enums import match_enum
from pytest_agentchaos.repair.fixes import WEAK_EVIDENCE, Context, Fix

SCHEMA = {
    "type": "object",
    "properties": {"speed": {"type": "string", "enum": ["standard", "express", "economy"]}},
    "required": ["speed"],
}
SPEC = ToolSpec.from_schema("ship", SCHEMA)
ALLOWED = ["standard", "express", "economy"]


@pytest.mark.parametrize(
    ("value", "evidence"),
    [("standart", "similarity"), ("express delivery", "containment")],
)
def test_a_rule_marks_the_evidence_it_chose_from(value: str, evidence: str) -> None:
    fix = match_enum(value, ALLOWED, Context(name="speed"))
    assert isinstance(fix, Fix) and fix.evidence == evidence
    assert evidence in WEAK_EVIDENCE


def test_the_same_value_written_differently_is_no_weak_evidence() -> None:
    fix = match_enum("EXPRESS", ALLOWED, Context(name="speed"))
    assert isinstance(fix, Fix) and fix.evidence not in WEAK_EVIDENCE


@pytest.mark.parametrize("value", ["standart", "express delivery"])
def test_the_model_answers_a_weak_rule_fix_first(value: str) -> None:
    asked: list[Any] = []

    def model(problem: Any, call: Any, context: Any) -> list[Any]:
        asked.append(problem.path)
        return ["economy"]

    result = ParamRepairer(SPEC, model=model).repair({"speed": value}, None, "ship it cheaply")
    assert result.ok, result.reason
    assert result.args == {"speed": "economy"}
    assert asked == [("speed",)]


@pytest.mark.parametrize(
    ("value", "rule"), [("standart", "standard"), ("express delivery", "express")]
)
def test_without_a_model_or_an_answer_the_rule_fix_stands(value: str, rule: str) -> None:
    alone = ParamRepairer(SPEC).repair({"speed": value}, None, "ship it")
    assert alone.ok and alone.args == {"speed": rule}
    silent = ParamRepairer(SPEC, model=lambda p, c, x: []).repair({"speed": value}, None, "ship it")
    assert silent.ok and silent.args == {"speed": rule}
