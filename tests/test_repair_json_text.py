"""Arguments sent as JSON text the tool could not read: once the text is read leniently, the
tool's complaint about its syntax says nothing more (it is not a parameter error to decline
on), whatever parser wrote it; a text that is valid JSON never has its error dropped; a CJK
input method's full-width delimiters between values read as JSON's own, never inside a string."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.repair.json_text import about_the_syntax, ascii_delimiters

RUN = ToolSpec.from_schema(
    "run_pipeline",
    {
        "type": "object",
        "properties": {
            "project": {"type": "string"},
            "ref": {"type": "string"},
            "environment": {"type": "string", "enum": ["dev", "staging", "production"]},
        },
        "required": ["project", "ref", "environment"],
        "additionalProperties": False,
    },
)
WANT = {"project": "shop/api", "ref": "main", "environment": "staging"}
TASK = "Run shop/api on main for staging."


def _own_error(text: str) -> str:
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(text)
    return str(caught.value)


@pytest.mark.parametrize(
    "text",
    [
        '{"project": "shop/api", "ref": "main", "environment": "staging",}',
        "{'project': 'shop/api', 'ref': 'main', 'environment': 'staging'}",
        '{"project": "shop/api"，"ref": "main"，"environment": "staging"}',
    ],
    ids=["trailing comma", "single quotes", "full-width commas"],
)
def test_a_text_the_tool_could_not_parse_is_repaired_not_declined(text: str) -> None:
    result = ParamRepairer(RUN).repair(text, _own_error(text), TASK)
    assert result.ok, result.reason
    assert result.args == WANT


@pytest.mark.parametrize(
    "error",
    [
        "Invalid JSON: trailing comma at line 1 column 66 [type=json_invalid, input_value='{...}']",
        "SyntaxError: Unexpected token } in JSON at position 65",
        "400 Bad Request: malformed JSON in request body",
    ],
)
def test_other_parsers_messages_about_the_syntax_are_read_as_such(error: str) -> None:
    text = '{"project": "shop/api", "ref": "main", "environment": "staging",}'
    assert about_the_syntax(text, error)
    assert ParamRepairer(RUN).repair(text, error, TASK).args == WANT


def test_a_valid_json_texts_error_is_about_its_values() -> None:
    text = json.dumps({"project": "shop/api", "ref": "main", "environment": "qa"})
    error = "Invalid JSON value for environment: must be one of dev, staging, production"
    assert not about_the_syntax(text, error)
    assert not about_the_syntax(text, json.JSONDecodeError("x", text, 0))
    # the error still counts: 'qa' is none of the allowed values and the task does not say
    assert not ParamRepairer(RUN).repair(text, error, "Run shop/api on main.").ok


def test_an_error_about_something_else_is_kept() -> None:
    text = '{"project": "shop/api", "ref": "main", "environment": "staging",}'
    assert not about_the_syntax(text, "403 Forbidden: you may not run pipelines of shop/api")
    assert not ParamRepairer(RUN).repair(text, "403 Forbidden: no access to shop/api", TASK).ok


_WIDE = st.text(alphabet=st.sampled_from(list("ab，：｛｝［］,:'\\\" ")), max_size=12)


@given(st.dictionaries(_WIDE, _WIDE, max_size=5))
def test_full_width_delimiters_are_never_rewritten_inside_strings(value: dict[str, str]) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert json.loads(ascii_delimiters(text)) == value
