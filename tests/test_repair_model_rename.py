"""A model proposer can answer a key the tool does not have with a rename (issue 30): the
proposer interface carries :class:`Renamed`; it is taken only to a parameter the object
declares and lacks, with the value as sent, fitting that parameter's schema."""

from __future__ import annotations

from typing import Any

from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.repair.fixes import Context
from pytest_agentchaos.repair.proposers import ModelProposer, Renamed, scripted_model
from pytest_agentchaos.repair.spec import Problem

SMS = {
    "type": "object",
    "properties": {
        "to": {"type": "string"},
        "text": {"type": "string"},
        "client_ref": {"type": "string", "maxLength": 40},
    },
    "required": ["to", "text"],
}
SENT = {"to": "447700900444", "text": "Order shipped", "client_reference": "order-5512"}
TASK = "SMS 447700900444: 'Order shipped'. Tag it with our reference order-5512."
WANT = {"to": "447700900444", "text": "Order shipped", "client_ref": "order-5512"}


def _repair(model: Any, schema: Any = SMS, sent: Any = SENT) -> Any:
    return ParamRepairer(ToolSpec.from_schema("send_sms", schema), model=model).repair(
        sent, None, TASK
    )


def test_without_a_model_an_ignored_stated_key_is_declined() -> None:
    result = _repair(None)
    assert not result.ok
    assert "cannot be sent" in result.reason


def test_a_model_rename_of_an_ignored_key_is_taken() -> None:
    result = _repair(scripted_model(WANT))
    assert result.ok, result.reason
    assert result.args == WANT
    assert any(s.strategy == "rename_key" and s.after == "client_ref" for s in result.steps)


def test_a_rename_to_an_undeclared_or_present_key_is_not_taken() -> None:
    for target in ("reference_tag", "text"):

        def model(problem: Any, call: Any, context: Any, t: str = target) -> Any:
            return [Renamed(t, call.get(problem.path[0]))]

        assert not _repair(model).ok, target


def test_a_rename_that_changes_the_value_or_breaks_the_schema_is_not_taken() -> None:
    def changed(problem: Any, call: Any, context: Any) -> Any:
        return [Renamed("client_ref", "order-9999")]

    assert not _repair(changed).ok
    closed = {**SMS, "additionalProperties": False}
    long_sent = {**SENT, "client_reference": "order-5512 " + "x" * 50}
    result = _repair(
        scripted_model({**WANT, "client_ref": long_sent["client_reference"]}),
        schema=closed,
        sent=long_sent,
    )
    assert not result.ok or "client_ref" not in (result.args or {})


def test_a_model_rename_answers_an_unknown_key_the_schema_forbids() -> None:
    closed = {**SMS, "additionalProperties": False}
    sent = {"to": "447700900444", "text": "Order shipped", "tag": "order-5512"}
    result = _repair(scripted_model(WANT), schema=closed, sent=sent)
    assert result.ok, result.reason
    assert result.args == WANT


def test_the_model_proposer_reads_a_rename_answer() -> None:
    proposer = ModelProposer(lambda prompt: '{"rename": "client_ref"}', tool="send_sms")
    problem = Problem("unknown", ("client_reference",), "not a parameter")
    answer = proposer(problem, SENT, Context(task=TASK))
    assert answer == [Renamed("client_ref", "order-5512")]
    assert '"rename"' in proposer.prompt(problem, SENT, Context(task=TASK))


def test_the_scripted_model_renames_only_to_one_key_holding_the_same_value() -> None:
    problem = Problem("unknown", ("client_reference",), "not a parameter")
    assert scripted_model(WANT)(problem, SENT, Context()) == [Renamed("client_ref", "order-5512")]
    two = {**WANT, "note": "order-5512"}
    assert scripted_model(two)(problem, SENT, Context()) != [Renamed("client_ref", "order-5512")]


def test_dropping_an_unknown_key_beside_unsent_parameters_is_weak_evidence() -> None:
    from pytest_agentchaos.repair.choose import rename_or_drop
    from pytest_agentchaos.repair.fixes import WEAK_EVIDENCE, Fix

    spec = ToolSpec.from_schema("send_sms", {**SMS, "additionalProperties": False})
    problem = Problem("unknown", ("tag",), "not a parameter")
    lacking = {"to": "1", "text": "x", "tag": "a"}
    full = {"to": "1", "text": "x", "client_ref": "b", "tag": "a"}
    guess = rename_or_drop(problem, "a", lacking, spec, [])
    sure = rename_or_drop(problem, "a", full, spec, [])
    assert isinstance(guess, Fix) and guess.evidence in WEAK_EVIDENCE
    assert isinstance(sure, Fix) and sure.evidence == ""


def test_a_rename_into_a_parameter_nothing_ties_to_the_key_is_not_taken() -> None:
    # review: "lable" -> "assignee" fits by type alone; neither the names nor the task tie them
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "title": {"type": "string"},
            "assignee": {"type": "string"},
            "label": {"type": "string"},
        },
        "required": ["title"],
    }
    sent = {"title": "Crash on start", "lable": "bug"}
    spec = ToolSpec.from_schema("create_issue", schema)
    task = "File 'Crash on start' and label it bug"
    for target, taken in (("assignee", False), ("label", True)):
        model = ModelProposer(lambda prompt, t=target: f'{{"rename": "{t}"}}')
        result = ParamRepairer(spec, model=model).repair(sent, None, task)
        assert (result.ok and target in (result.args or {})) is taken, (target, result.reason)
