"""An RFC 7807 / 9457 problem body whose ``errors`` name the field by a JSON pointer (a
FastAPI app's own handler around ``RequestValidationError``, as an EV-charging API writes it),
and an error that refuses a parameter without naming it: the repairer reads the pointer, and
never fails on an error that names no field."""

from __future__ import annotations

import json

import pytest

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

SCHEMA = {
    "type": "object",
    "properties": {
        "evse_id": {"type": "string"},
        "connector": {"type": "string", "enum": ["CCS2", "CHADEMO", "TYPE2"]},
        "max_energy_kwh": {"type": "number", "minimum": 1},
    },
    "required": ["evse_id", "connector"],
    "additionalProperties": False,
}
SENT = {"evse_id": "DE*ION*E1234567", "connector": "CCS2", "show_price": True}


def _problem(*errors: dict[str, str]) -> str:
    return json.dumps(
        {
            "type": "https://api.example-charge.eu/problems/validation",
            "title": "Your request is not valid.",
            "status": 422,
            "detail": f"{len(errors)} field(s) failed validation",
            "errors": list(errors),
        }
    )


@pytest.mark.parametrize("pointer", ["/show_price", "#/show_price"])
def test_an_extra_field_named_by_a_json_pointer_is_dropped(pointer: str) -> None:
    error = _problem({"pointer": pointer, "detail": "Extra inputs are not permitted"})
    result = ParamRepairer(ToolSpec.from_schema("ev_start_session", SCHEMA)).repair(SENT, error)
    assert result.ok, result.reason
    assert result.args == {"evse_id": "DE*ION*E1234567", "connector": "CCS2"}


def test_a_pointer_with_escaped_characters_names_the_field_as_written() -> None:
    schema = {"type": "object", "properties": {"a/b": {"type": "integer"}}}
    error = _problem({"pointer": "/a~1b", "detail": "Input should be a valid integer"})
    result = ParamRepairer(ToolSpec.from_schema("t", schema)).repair({"a/b": "7"}, error)
    assert result.ok, result.reason
    assert result.args == {"a/b": 7}


@pytest.mark.parametrize(
    "error",
    [
        _problem({"detail": "Extra inputs are not permitted"}),
        '{"errors": [{"message": "unrecognized key"}]}',
        '[{"code": "unrecognized_keys", "path": [], "message": "Unrecognized key"}]',
    ],
)
def test_a_refused_parameter_the_error_does_not_name_is_declined_not_a_crash(error: str) -> None:
    result = ParamRepairer(ToolSpec.from_schema("ev_start_session", SCHEMA)).repair(SENT, error)
    assert not result.ok
    assert result.args is None
    assert result.reason


def test_a_fragment_pointer_is_percent_decoded_then_unescaped() -> None:
    # RFC 6901 section 6: a pointer in a URI fragment is percent-encoded; decode, then ~1 / ~0
    schema = {"type": "object", "properties": {"a b/c~": {"type": "integer"}}}
    error = _problem({"pointer": "#/a%20b~1c~0", "detail": "Input should be a valid integer"})
    result = ParamRepairer(ToolSpec.from_schema("t", schema)).repair({"a b/c~": "7"}, error)
    assert result.ok, result.reason
    assert result.args == {"a b/c~": 7}


@pytest.mark.parametrize("pointer", ["#", "#anchor"])
def test_a_bare_fragment_names_no_field(pointer: str) -> None:
    from pytest_agentchaos.repair.error_bodies import json_problems

    spec = ToolSpec.from_schema("ev_start_session", SCHEMA)
    error = _problem({"pointer": pointer, "detail": "Extra inputs are not permitted"})
    problems = list(json_problems(error, spec, SENT))
    assert problems and all(p.path == () for p in problems), problems
