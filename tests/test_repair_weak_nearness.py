"""A refused value read as the task's span one edit away (issue 30 item 2) is chosen by
nearness alone: its fix says so (weak evidence), so a supplied model answers first; a span
the task writes otherwise related (its case, its separators) is no guess."""

from __future__ import annotations

from pytest_agentchaos.repair.fixes import WEAK_EVIDENCE, Context, Fix
from pytest_agentchaos.repair.reconcile import reconcile

SCHEMA = {"type": "string"}


def _fix(value: str, task: str) -> Fix:
    outcome = reconcile(value, SCHEMA, Context("city", {"city": value}, task))
    assert isinstance(outcome, Fix), outcome
    return outcome


def test_a_span_one_character_away_is_weak_evidence() -> None:
    fix = _fix("Lodnon", "Fly to London tomorrow.")
    assert fix.value == "London"
    assert fix.evidence in WEAK_EVIDENCE


def test_a_span_in_the_tasks_case_is_not_weak() -> None:
    fix = _fix("lyon", "Walk to Lyon station tomorrow.")
    assert fix.value == "Lyon"
    assert fix.evidence == ""


def test_a_supplied_model_is_asked_before_the_near_span_is_taken() -> None:
    from typing import Any

    from pytest_agentchaos.repair import ParamRepairer, ToolSpec

    schema = {"type": "object", "properties": {"city": SCHEMA}, "required": ["city"]}
    asked: list[Any] = []

    def model(problem: Any, call: Any, context: Any) -> list[Any]:
        asked.append(problem.path)
        return ["London"]

    spec = ToolSpec.from_schema("book", schema)
    result = ParamRepairer(spec, model=model).repair(
        {"city": "Lodnon"}, "Unknown city: 'Lodnon'", "Fly to London tomorrow."
    )
    assert result.ok, result.reason
    assert result.args == {"city": "London"}
    assert asked == [("city",)]
    alone = ParamRepairer(spec).repair(
        {"city": "Lodnon"}, "Unknown city: 'Lodnon'", "Fly to London tomorrow."
    )
    assert alone.ok and alone.args == {"city": "London"}  # no model: the rule's fix stands
