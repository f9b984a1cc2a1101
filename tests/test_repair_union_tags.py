"""pydantic writes the member of a union an issue is in into its location
(``geometry.coordinates.Position2D``, ``must.`list[union[...,...]]`.0.FieldCondition.match``):
those tags are no keys. The repairer reads the value no member took as the problem (one
problem, not each member's fields to add), and a model proposer is asked about that value."""

from __future__ import annotations

import json

import pytest

from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.repair.error_bodies import structured_problems
from pytest_agentchaos.repair.proposers import scripted_model
from pytest_agentchaos.repair.reading import pydantic_issues

POINT = {
    "type": "object",
    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
    "required": ["x", "y"],
}
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "where": {
            "anyOf": [
                {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
                POINT,
            ]
        },
    },
    "required": ["name", "where"],
}
SENT = {"name": "depot", "where": "8.5, 47.3"}
ERROR = (
    "2 validation errors for AddPlace\n"
    "where.list[float]\n"
    "  Input should be a valid list [type=list_type, input_value='8.5, 47.3', input_type=str]\n"
    "where.Point\n"
    "  Input should be a valid dictionary or instance of Point [type=model_type, "
    "input_value='8.5, 47.3', input_type=str]\n"
)


def test_a_backticked_member_tag_is_one_part_of_the_location() -> None:
    text = (
        "1 validation error for Q\nfilter.must.`list[union[...,...]]`.0.Cond.match\n"
        "  Field required [type=missing, input_value={}, input_type=dict]\n"
    )
    assert pydantic_issues(text)[0]["loc"] == [
        "filter", "must", "`list[union[...,...]]`", 0, "Cond", "match"
    ]  # fmt: skip


def test_member_tags_make_one_problem_at_the_union() -> None:
    problems = structured_problems(ERROR, ToolSpec.from_schema("add_place", SCHEMA), SENT)
    assert {(p.kind, p.path) for p in problems} == {("union", ("where",))}


def test_a_field_named_like_a_class_that_the_schema_has_is_no_tag() -> None:
    schema = {"type": "object", "properties": {"Key": {"type": "string"}}, "required": ["Key"]}
    text = "1 validation error for Put\nKey\n  Field required [type=missing, input_value={}]\n"
    nested = {"type": "object", "properties": {"Meta": schema}}
    problems = structured_problems(
        text.replace("\nKey\n", "\nMeta.Key\n"), ToolSpec.from_schema("t", nested), {"Meta": {}}
    )
    assert [(p.kind, p.path) for p in problems] == [("missing", ("Meta", "Key"))]


def test_the_model_is_asked_for_the_value_no_member_took() -> None:
    want = {"name": "depot", "where": [8.5, 47.3]}
    asked: list[tuple[str | int, ...]] = []
    inner = scripted_model(want)

    def model(problem, call, context):  # type: ignore[no-untyped-def]
        asked.append(problem.path)
        return inner(problem, call, context)

    result = ParamRepairer(ToolSpec.from_schema("add_place", SCHEMA), model=model).repair(
        SENT, ERROR, "Add the depot at 8.5, 47.3"
    )
    assert result.ok, result.reason
    assert result.args == want
    assert all(path == ("where",) for path in asked)


@pytest.mark.parametrize("key", ["Authorization", "ID", "list"])
def test_a_missing_capitalised_key_of_a_free_form_object_is_a_missing_key(key: str) -> None:
    # a last location part is a union member's tag only where the schema there is a union
    from pytest_agentchaos.repair.error_bodies import json_problems

    spec = ToolSpec.from_schema(
        "t", {"type": "object", "properties": {"headers": {"type": "object"}}}
    )
    body = {
        "detail": [{"loc": ["body", "headers", key], "msg": "Field required", "type": "missing"}]
    }
    found = list(json_problems(json.dumps(body), spec, {"headers": {"accept": "x"}}))
    assert [(p.kind, p.path) for p in found] == [("missing", ("headers", key))]
