"""Kinds the fourth dev batch showed, each with the declines that limit it: a key whose words
are the parameter's with one abbreviated, a percentage for a field counted in percent, an
error body whose ``error`` is a code and whose prose is beside it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.repair.reading import prose_of


def tool(props: dict[str, Any], required: list[str]) -> ToolSpec:
    schema = {"type": "object", "properties": props, "required": required}
    return ToolSpec.from_schema("t", {**schema, "additionalProperties": False})


WITHHOLD = tool({"employee_id": {"type": "string"},
                 "extra_withholding": {"type": "number", "minimum": 0},
                 "extra_allowance": {"type": "number", "minimum": 0}}, ["employee_id"])  # fmt: skip


@pytest.mark.parametrize(("sent", "want"), [("extra_wh", "extra_withholding"),
                                            ("extra_allw", "extra_allowance")])  # fmt: skip
def test_a_key_with_one_word_abbreviated_is_the_parameter(sent: str, want: str) -> None:
    result = ParamRepairer(WITHHOLD).repair({"employee_id": "E1", sent: 25})
    assert result.ok and result.args == {"employee_id": "E1", want: 25}


@pytest.mark.parametrize("sent", ["extra_w", "xtra_wh", "wh", "extra_a"])
def test_an_abbreviation_that_is_no_one_parameter_s_is_not_renamed(sent: str) -> None:
    result = ParamRepairer(WITHHOLD).repair({"employee_id": "E1", sent: 25})
    assert not result.ok or sent not in result.args and 25 not in result.args.values()
    assert not result.ok or set(result.args) == {"employee_id"}


PERCENT = {"type": "integer", "minimum": 0, "maximum": 100}
LIGHT = tool({"room": {"type": "string"}, "level_percent": PERCENT, "brightness": PERCENT,
              "opacity": {"type": "number", "description": "Opacity as a fraction, 0 to 1"}},
             ["room"])  # fmt: skip


@pytest.mark.parametrize(
    ("sent", "task", "want"),
    [({"level_percent": "75%"}, None, {"level_percent": 75}),
     ({"level_percent": 0.4}, "Set the lights to 40%.", {"level_percent": 40}),
     ({"level_percent": 0.4}, "Set the lights to 40 percent.", {"level_percent": 40})],
)  # fmt: skip
def test_a_percentage_for_a_field_in_percent(sent: dict[str, Any], task: str | None,
                                             want: dict[str, Any]) -> None:  # fmt: skip
    result = ParamRepairer(LIGHT).repair({"room": "4.12", **sent}, task=task)
    assert result.ok and result.args == {"room": "4.12", **want}


@pytest.mark.parametrize(
    ("sent", "task"),
    [({"level_percent": 0.4}, "Dim the lights a bit."),  # 0.4 of what? the task does not say
     ({"level_percent": 0.4}, "Set the lights to 4%."),
     ({"brightness": "75%"}, None),  # nothing says the field counts in percent
     ({"level_percent": "75.5%"}, None)],  # not whole for an integer
)  # fmt: skip
def test_a_percentage_nothing_settles_is_declined(sent: dict[str, Any], task: str | None) -> None:
    result = ParamRepairer(LIGHT).repair({"room": "4.12", **sent}, task=task)
    assert not result.ok, result.args


def test_a_fraction_field_keeps_its_fraction() -> None:
    result = ParamRepairer(LIGHT).repair({"room": "4.12", "opacity": "40%"})
    assert result.ok and result.args == {"room": "4.12", "opacity": 0.4}


def test_an_error_code_is_read_with_the_prose_beside_it() -> None:
    body = {"error": "RecordNotFound", "description": "Ticket TCK-0142 not found"}
    assert prose_of(body) == "RecordNotFound: Ticket TCK-0142 not found"
    assert prose_of({"error": "Ticket TCK-0142 not found", "code": "E404"}) == (
        "Ticket TCK-0142 not found"
    )
    spec = tool({"ticket_id": {"type": "string", "pattern": r"^TCK-\d{4}$"},
                 "reply": {"type": "string"}}, ["ticket_id"])  # fmt: skip
    call = {"ticket_id": "TCK-0142", "reply": "Fixed."}
    fixed = ParamRepairer(spec).repair(call, json.dumps(body), "Reply 'Fixed.' on TCK-1042.")
    assert fixed.ok and fixed.args == {"ticket_id": "TCK-1042", "reply": "Fixed."}
    as_sent = ParamRepairer(spec).repair(call, json.dumps(body), "Reply 'Fixed.' on TCK-0142.")
    assert not as_sent.ok  # the task writes it as sent: the ticket is genuinely not there


SIGNER = ToolSpec.from_schema("send", {
    "type": "object",
    "properties": {"signers": {"type": "array", "items": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "email_address": {"type": "string"}},
        "required": ["name", "email_address"],
    }}},
    "required": ["signers"],
})  # fmt: skip


@pytest.mark.parametrize(
    ("task", "want"),
    [("Send it to Jane Park (jane dot park at northwind dot com).", "jane.park@northwind.com"),
     ("Send it to Jane Park, jane.park@northwind.com.", "jane.park@northwind.com")],
)  # fmt: skip
def test_a_missing_address_is_the_one_the_task_gives_written_or_spoken(
    task: str, want: str
) -> None:
    result = ParamRepairer(SIGNER).repair({"signers": [{"name": "Jane Park"}]}, task=task)
    assert result.ok and result.args == {"signers": [{"name": "Jane Park", "email_address": want}]}


@pytest.mark.parametrize(
    "task",
    ["Send it to Jane Park.", "Send it to jane@a.io or jane@b.io.", "Meet at home dot com."],
)
def test_a_missing_address_the_task_does_not_give_once_is_declined(task: str) -> None:
    assert not ParamRepairer(SIGNER).repair({"signers": [{"name": "Jane Park"}]}, task=task).ok


ROOMS = tool({"room": {"type": "string", "description": "Room number as on the door, e.g. '4.12'."},
              "level": {"type": "integer"}}, ["room", "level"])  # fmt: skip


def test_a_missing_value_is_the_one_token_shaped_like_the_description_s_example() -> None:
    result = ParamRepairer(ROOMS).repair({"level": 30}, task="Dim meeting room 4.12 to 30 percent.")
    assert result.ok and result.args == {"room": "4.12", "level": 30}
    for task in ("Dim room 4.12 or 4.14 to 30.", "Dim the meeting room to 30.", "Dim 4 to 30."):
        assert not ParamRepairer(ROOMS).repair({"level": 30}, task=task).ok, task


COMMAND = tool({"command": {"type": "string", "description": "The command line"}}, ["command"])


def test_an_argv_where_a_command_line_is_due_is_one_line() -> None:
    result = ParamRepairer(COMMAND).repair({"command": ["wc", "-l", "README.md"]})
    assert result.ok and result.args == {"command": "wc -l README.md"}


@pytest.mark.parametrize("sent", [["git status", "git log"], ["ls", "my dir"], ["ls", ""]])
def test_a_list_that_may_hold_several_commands_is_not_joined(sent: list[str]) -> None:
    assert not ParamRepairer(COMMAND).repair({"command": sent}).ok


TRANSLATE = tool({"text": {"type": "string"},
                  "source_lang": {"type": "string", "description": "Language code, e.g. 'DE'"},
                  "target_lang": {"type": "string", "description": "Language code, e.g. 'EN'"}},
                 ["text", "source_lang", "target_lang"])  # fmt: skip


def test_a_missing_code_is_the_one_entity_the_task_names_that_no_field_holds() -> None:
    result = ParamRepairer(TRANSLATE).repair(
        {"text": "Hallo", "target_lang": "NL"}, task="Translate this German note into Dutch."
    )
    assert result.ok and result.args == {"text": "Hallo", "target_lang": "NL", "source_lang": "DE"}


@pytest.mark.parametrize(
    "task",
    ["Translate this note into Dutch.",  # the one language named is the target's
     "Translate this German or French note into Dutch.",  # two left: which is open
     "Polish the text, then into Dutch."],  # a verb first, not a language
)  # fmt: skip
def test_a_missing_code_the_task_does_not_settle_is_declined(task: str) -> None:
    result = ParamRepairer(TRANSLATE).repair({"text": "Hallo", "target_lang": "NL"}, task=task)
    assert not result.ok, result.args
