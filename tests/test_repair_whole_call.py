"""An error that names no parameter goes to a supplied model proposer as a problem of the
whole call (issue 30): the model may answer the call the refusal asks for, audited strictly
(fits the schema, keeps the call's keys, replaces no value the task writes as sent unless
the error quotes it back); with no model the decline stands."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.repair.proposers import scripted_model

ISSUES = {
    "type": "object",
    "properties": {
        "owner": {"type": "string"},
        "repo": {"type": "string"},
        "title": {"type": "string"},
    },
    "required": ["owner", "repo", "title"],
}
NOT_FOUND = '{"message": "Not Found", "status": "404"}'
SENT = {"owner": "acme", "repo": "widget", "title": "Typo"}
TASK = "Open 'Typo' in acme/widgets."


def _repair(model: Any, sent: Any = SENT, error: str = NOT_FOUND, task: str = TASK) -> Any:
    return ParamRepairer(ToolSpec.from_schema("create_issue", ISSUES), model=model).repair(
        sent, error, task
    )


def test_without_a_model_an_error_naming_nothing_is_declined() -> None:
    result = _repair(None)
    assert not result.ok
    assert "names no parameter" in result.reason


def test_the_model_is_asked_for_the_whole_call_and_its_answer_taken() -> None:
    asked: list[Any] = []
    want = {"owner": "acme", "repo": "widgets", "title": "Typo"}
    script = scripted_model(want)

    def model(problem: Any, call: Any, context: Any) -> Any:
        asked.append((problem.path, problem.kind))
        return script(problem, call, context)

    result = _repair(model)
    assert result.ok, result.reason
    assert result.args == want
    assert result.strategy == "model_proposal"
    assert asked == [((), "refused")]
    assert [s.field for s in result.steps] == ["repo"]


def test_a_translation_of_a_value_the_error_quotes_is_taken() -> None:
    # the task writes the carrier's name as sent; the error quotes it back as refused
    schema = {
        "type": "object",
        "properties": {"company": {"type": "string"}, "number": {"type": "string"}},
        "required": ["company", "number"],
    }
    sent = {"company": "中通", "number": "78612345678901"}
    want = {"company": "zhongtong", "number": "78612345678901"}
    error = '{"result": false, "message": "快递公司编码不正确：中通"}'
    result = ParamRepairer(
        ToolSpec.from_schema("track", schema), model=scripted_model(want)
    ).repair(sent, error, "查一下中通快递 78612345678901 到哪了")
    assert result.ok, result.reason
    assert result.args == want


def test_a_value_the_task_states_and_the_error_does_not_refuse_is_kept() -> None:
    # "acme" is the user's; a model that changes it is not taken
    answer = {"owner": "acme-inc", "repo": "widgets", "title": "Typo"}
    result = _repair(scripted_model(answer))
    assert not result.ok


def test_an_answer_that_drops_a_key_is_not_taken() -> None:
    # the title is optional here: the schema alone would let the answer through
    schema = {**ISSUES, "required": ["owner", "repo"]}

    def model(problem: Any, call: Any, context: Any) -> Any:
        return [{"owner": "acme", "repo": "widgets"}]

    result = ParamRepairer(ToolSpec.from_schema("create_issue", schema), model=model).repair(
        SENT, NOT_FOUND, TASK
    )
    assert not result.ok


def test_an_answer_that_breaks_the_schema_is_not_taken() -> None:
    def model(problem: Any, call: Any, context: Any) -> Any:
        return [{"owner": "acme", "repo": 7, "title": "Typo"}]

    assert not _repair(model).ok


def test_an_answer_that_is_the_call_again_or_no_object_is_not_taken() -> None:
    for answer in ([dict(SENT)], ["widgets"], [None]):
        assert not _repair(lambda p, c, x, a=answer: a).ok


def test_a_model_that_raises_leaves_the_decline() -> None:
    def model(problem: Any, call: Any, context: Any) -> Any:
        raise RuntimeError("down")

    result = _repair(model)
    assert not result.ok
    assert "names no parameter" in result.reason


_WORD = st.text(alphabet="abcdefghij", min_size=3, max_size=8)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(owner=_WORD, repo=_WORD, other=_WORD, new_owner=_WORD)
def test_a_value_the_task_states_is_never_replaced_when_the_error_quotes_nothing(
    owner: str, repo: str, other: str, new_owner: str
) -> None:
    sent = {"owner": owner, "repo": repo, "title": "Typo"}
    task = f"Open 'Typo' in {owner}/{repo}."
    answer = {"owner": new_owner, "repo": other, "title": "Typo"}
    result = _repair(scripted_model(answer), sent, NOT_FOUND, task)
    if result.ok:
        assert result.args is not None
        assert result.args["owner"] == owner
        assert result.args["repo"] == repo


WRITE = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "content": {"type": "string"},
        "mode": {"type": "string", "enum": ["create", "append", "overwrite"]},
        "create_dirs": {"type": "boolean", "default": False},
    },
    "required": ["path", "content"],
}
WRITE_SENT = {"path": "reports/q1.md", "content": "Q1", "mode": "create"}
WRITE_ERROR = "FileNotFoundError: [Errno 2] No such file or directory: 'reports/q1.md'"
WRITE_TASK = "Write 'Q1' to reports/q1.md, create the folders if they don't exist."


def _write(model: Any) -> Any:
    return ParamRepairer(ToolSpec.from_schema("write_file", WRITE), model=model).repair(
        WRITE_SENT, WRITE_ERROR, WRITE_TASK
    )


def test_an_error_pinning_a_valid_field_offers_the_model_the_call() -> None:
    # the error names the path, whose value is right; what the call lacks is another field
    want = {**WRITE_SENT, "create_dirs": True}
    asked: list[Any] = []
    script = scripted_model(want)

    def model(problem: Any, call: Any, context: Any) -> Any:
        asked.append(problem.path)
        return script(problem, call, context)

    result = _write(model)
    assert result.ok, result.reason
    assert result.args == want
    assert asked[-1] == ()
    assert len(asked) == len(set(asked))


def test_a_call_offered_for_a_pinned_field_keeps_what_the_task_states() -> None:
    answer = {**WRITE_SENT, "content": "Q2", "create_dirs": True}
    assert not _write(scripted_model(answer)).ok


def test_without_a_model_a_pinned_valid_field_is_still_declined() -> None:
    result = _write(None)
    assert not result.ok
    assert not any(s.strategy == "model_proposal" for s in result.steps)


def test_a_language_model_proposer_answers_the_whole_call_through_its_prompt() -> None:
    from pytest_agentchaos.repair.proposers import ModelProposer

    prompts: list[str] = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return '{"value": {"owner": "acme", "repo": "widgets", "title": "Typo"}}'

    result = _repair(ModelProposer(llm, tool="create_issue"))
    assert result.ok, result.reason
    assert result.args == {"owner": "acme", "repo": "widgets", "title": "Typo"}
    assert len(prompts) == 1
    assert "(arguments)" in prompts[0] and "Not Found" in prompts[0]


def test_a_value_neither_the_task_nor_the_error_gives_is_not_taken() -> None:
    # review: "Not Found" quotes nothing, so a model moving the issue to another owner and
    # repository invents both; the decline stands
    answer = {"owner": "evil-corp", "repo": "secrets", "title": "Typo"}
    result = _repair(
        scripted_model(answer), task="Open an issue titled 'Typo' in our widgets repo."
    )
    assert not result.ok
    assert result.args is None


def test_values_the_call_sent_swapped_or_retyped_are_grounded() -> None:
    schema = {
        "type": "object",
        "properties": {
            "date_from": {"type": "string", "format": "date"},
            "date_to": {"type": "string", "format": "date"},
            "amount_fen": {"type": "integer"},
        },
        "required": ["date_from", "date_to"],
    }
    sent = {"date_from": "2026-11-20", "date_to": "2026-11-10", "amount_fen": 20000.0}
    want = {"date_from": "2026-11-10", "date_to": "2026-11-20", "amount_fen": 20000}
    result = ParamRepairer(
        ToolSpec.from_schema("invoices", schema), model=scripted_model(want)
    ).repair(sent, '{"detail": "起始日期不能晚于结束日期"}', "查 11 月 10 日到 20 日的票")
    assert result.ok, result.reason
    assert result.args == want


def test_a_number_the_error_states_glued_to_words_is_grounded() -> None:
    schema = {
        "type": "object",
        "properties": {"permit": {"type": "string"}, "amount_fen": {"type": "integer"}},
        "required": ["permit", "amount_fen"],
    }
    sent = {"permit": "C60812345", "amount_fen": 15}
    error = '{"code":40033,"msg":"缴费金额不符：应缴1500分，实付15分"}'
    spec = ToolSpec.from_schema("pay", schema)
    good = ParamRepairer(spec, model=scripted_model({**sent, "amount_fen": 1500}))
    assert good.repair(sent, error, "通行证C60812345，付15元").args == {**sent, "amount_fen": 1500}
    made_up = ParamRepairer(spec, model=scripted_model({**sent, "amount_fen": 1600}))
    assert not made_up.repair(sent, error, "通行证C60812345，付15元").ok
