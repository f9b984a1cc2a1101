"""Wrong repairs on unseen tools: generated schemas of made-up names, tasks, malformed calls and
tool errors (``bench/repair_adversary.py``), and the kinds of wrong repair they found.

A repair either declines or leaves in each field the value sent, or a value tied to the task,
the schema or the sent value itself; never one chosen by nearness alone (a tool's "did you
mean" id a digit away, one of two ids the task writes alike, a leftover key's word moved into
a field the task gives another value).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from repair_adversary import NOW, judge, scenario  # noqa: E402

from pytest_agentchaos.repair import ParamRepairer, ToolSpec, audit  # noqa: E402
from pytest_agentchaos.repair.results import RepairStep  # noqa: E402


def _tool(props: dict[str, Any], required: list[str]) -> ToolSpec:
    schema = {"type": "object", "properties": props, "required": required}
    return ToolSpec.from_schema("tool", {**schema, "additionalProperties": False})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_a_repair_on_an_unseen_tool_is_tied_to_evidence_or_declined(seed: int) -> None:
    case = scenario(seed)
    result = ParamRepairer(ToolSpec.from_schema("tool", case.schema)).repair(
        case.call, case.error, task=case.task, now=NOW
    )
    assert judge(case, result.args if result.ok else None) == [], (case, result.reason)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_repairing_the_repairer_s_own_output_changes_nothing(seed: int) -> None:
    case = scenario(seed)
    repairer = ParamRepairer(ToolSpec.from_schema("tool", case.schema))
    first = repairer.repair(case.call, case.error, task=case.task, now=NOW)
    if not first.ok:
        return
    again = repairer.repair(first.args, task=case.task, now=NOW)
    assert again.ok and again.args == first.args and again.strategy == "none", again.reason


_WORDS = st.text("bdfgklmnprstvz", min_size=2, max_size=3).map(lambda w: w + "ax")


#: Strategies that put in a value not derived from the one sent (a bound, a cut, a reading
#: of the task or the error): a task-stated value they replace must reappear as the task writes
#: it. Any strategy may drop a key, but none may drop a value the task states, save one whose
#: field's description says leaving it out means that value (not drawn here).
_REPLACING = ["drop_unknown_key", "drop_exclusive_key", "clamp_value", "length_correction",
              "rejected_value_correction", "infer_missing_param"]  # fmt: skip
_OTHERS = ["schema_type_conversion", "format_correction", "pattern_correction", "rename_key",
           "wrap_in_list", "date_format_correction", "json_repair"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(_WORDS, min_size=1, max_size=4, unique=True),
    data=st.data(),
)
def test_the_audit_never_passes_a_call_that_drops_or_replaces_a_task_stated_value(
    values: list[str], data: st.DataObject
) -> None:
    original = {f"f{i}": v for i, v in enumerate(values)}
    task = "Please use " + " and ".join(values) + "."
    gone = data.draw(st.sampled_from(sorted(original)))
    how = data.draw(st.sampled_from(["drop", "replace", "uncited"]))
    repaired = dict(original)
    after: Any = None
    if how == "drop":
        del repaired[gone]
        strategy = data.draw(st.sampled_from(_REPLACING + _OTHERS))
    else:
        after = "zz" + original[gone][::-1] + "q"  # a value the task writes nowhere
        repaired[gone] = after
        strategy = data.draw(st.sampled_from(_REPLACING))
    step = RepairStep(gone, "other", strategy, original[gone], after, 0.9, "a rule", True)
    steps = [] if how == "uncited" else [step]
    assert audit(original, repaired, task, steps) is not None


# -- the kinds the sweep found ---------------------------------------------------------------


def test_a_tool_s_suggested_id_a_digit_away_is_no_typo_fix() -> None:
    # "did you mean GGPS-907?" for GGPS-917: a number is not misspelt; nothing says 907
    spec = _tool({"ref": {"type": "string", "pattern": r"^GGPS-\d{3}$"}}, ["ref"])
    error = '{"error": {"code": 404, "message": "No item GGPS-917; did you mean GGPS-907?"}}'
    result = ParamRepairer(spec).repair({"ref": "GGPS-917"}, error, now=NOW)
    assert not result.ok, result.args


def test_a_task_s_id_a_digit_away_is_declined_when_it_writes_another_of_that_shape() -> None:
    spec = _tool({"ref": {"type": "string", "pattern": r"^RLT-\d{3}$"}}, ["ref"])
    task = "Please ship the order RLT-381 (last time it was RLT-380)."
    result = ParamRepairer(spec).repair({"ref": "RLT-390"}, "Order RLT-390 not found", task=task)
    assert not result.ok, result.args
    # the task's one id of that shape, a character away: still its spelling
    alone = ParamRepairer(spec).repair(
        {"ref": "RLT-38"}, "Order RLT-38 not found", task="Please ship the order RLT-380."
    )
    assert alone.ok and alone.args == {"ref": "RLT-380"}, alone.reason


def test_a_leftover_key_is_not_moved_into_a_free_text_field_the_task_quotes_otherwise() -> None:
    spec = _tool({"nafa": {"type": "string"}}, ["nafa"])
    task = 'Please file the ticket with the nafa "Volu fefa kimi vudu".'
    result = ParamRepairer(spec).repair({"lodaza": "volu"}, task=task, now=NOW)
    assert not (result.ok and result.args == {"nafa": "volu"}), result.reason
    # the task quoting that very value after the field's name: moved
    same = ParamRepairer(spec).repair({"lodaza": "Volu fefa"}, task='with the nafa "Volu fefa"')
    assert same.ok and same.args == {"nafa": "Volu fefa"}, same.reason


def test_a_leftover_key_the_task_never_writes_is_not_moved_into_a_free_text_field() -> None:
    # any text fits a free-text field, and a length says nothing of which: only the task can
    # tie the key's value to it, and here it writes another
    spec = _tool({"lefa": {"type": "string", "minLength": 4, "maxLength": 12}}, ["lefa"])
    result = ParamRepairer(spec).repair(
        {"fupama": "dole"}, task="Please file the ticket labelled zeva-kigo."
    )
    assert not result.ok, result.args
    written = ParamRepairer(spec).repair({"fupama": "dole"}, task="Please file it as dole.")
    assert written.ok and written.args == {"lefa": "dole"}, written.reason


def test_a_length_alone_does_not_make_an_optional_field_the_one_a_leftover_value_fits() -> None:
    spec = _tool({"noke": {"type": "string", "minLength": 4, "maxLength": 12},
                  "punu": {"type": "integer"}}, ["punu"])  # fmt: skip
    result = ParamRepairer(spec).repair({"punu": 2, "soneda": "pika"}, task="Tag it pika.")
    assert not (result.ok and "noke" in result.args), result.args


def test_a_schema_default_does_not_stand_in_for_the_allowed_value_the_task_names() -> None:
    spec = _tool({"tuto": {"type": "string", "enum": ["bofu", "foru", "kima"], "default": "bofu"},
                  "n": {"type": "integer"}}, ["tuto", "n"])  # fmt: skip
    result = ParamRepairer(spec).repair({"n": 2}, task="Please ship it with tuto foru.")
    assert not (result.ok and result.args["tuto"] == "bofu"), result.reason
    # the task naming none of them: the default is what nobody gave
    quiet = ParamRepairer(spec).repair({"n": 2}, task="Please ship it.")
    assert quiet.ok and quiet.args == {"n": 2, "tuto": "bofu"}, quiet.reason


def test_a_slip_in_the_short_word_that_tells_two_values_apart_is_no_typo() -> None:
    # duze_ba is one letter from duze_na, and as near duze_mu in kind: another option
    spec = _tool({"tier": {"type": "string", "enum": ["duze", "duze_mu", "duze_na", "kolo"]}},
                 ["tier"])  # fmt: skip
    result = ParamRepairer(spec).repair({"tier": "duze_ba"})
    assert not result.ok, result.args
    # a slip in a word of four letters or more is still one
    typo = ParamRepairer(spec).repair({"tier": "kolox"})
    assert typo.ok and typo.args == {"tier": "kolo"}, typo.reason


def test_a_value_the_task_writes_only_to_refuse_it_is_never_filled_in() -> None:
    spec = _tool({"boke": {"type": "string", "enum": ["dapu", "gina", "sila"]},
                  "n": {"type": "integer"}}, ["boke", "n"])  # fmt: skip
    result = ParamRepairer(spec).repair({"n": 1}, task="Please ship it (not dapu).")
    assert not (result.ok and result.args.get("boke") == "dapu"), result.reason
    kept = ParamRepairer(spec).repair({"n": 1}, task="Please ship it as dapu.")
    assert kept.ok and kept.args == {"n": 1, "boke": "dapu"}, kept.reason


def test_a_field_that_holds_what_is_not_wanted_takes_the_task_s_refusals() -> None:
    spec = _tool({"avoid": {"type": "array", "items": {"type": "string",
                                                       "enum": ["tolls", "highways", "ferries"]}},
                  "start": {"type": "string"}}, ["start"])  # fmt: skip
    result = ParamRepairer(spec).repair(
        {"start": "Oslo", "avoid": "highways, ferries"}, task="From Oslo, no highways or ferries."
    )
    assert result.ok and result.args["avoid"] == ["highways", "ferries"], result.reason


@settings(max_examples=200, deadline=None)
@given(
    word=_WORDS,
    refusal=st.sampled_from(
        ["not", "no", "without", "instead of", "except", "other than", "rather than", "don't want"]
    ),
)
def test_the_audit_declines_a_new_value_the_task_refuses(word: str, refusal: str) -> None:
    task = f"Please do it, {refusal} {word}."
    step = RepairStep("pick", "missing", "infer_missing_param", None, word, 0.9, "read", True)
    assert audit({}, {"pick": word}, task, [step]) is not None


def test_an_allowed_value_two_fields_list_is_not_filled_into_one_by_the_task_naming_it() -> None:
    # 'revo_ve' is a value of both kozo and laba: the task naming it names either
    spec = _tool({"kozo": {"type": "string", "enum": ["revo_ri", "revo_ve", "tumo"]},
                  "laba": {"type": "string", "enum": ["revo_ve", "sika"]},
                  "n": {"type": "integer"}}, ["kozo", "n"])  # fmt: skip
    result = ParamRepairer(spec).repair({"n": 1}, task="Please ship it, revo_ve.")
    assert not result.ok, result.args
    alone = ParamRepairer(spec).repair({"n": 1}, task="Please ship it, tumo.")
    assert alone.ok and alone.args == {"n": 1, "kozo": "tumo"}, alone.reason


def _lines_tool() -> ToolSpec:
    item = {"type": "object", "properties": {"sku": {"type": "string", "pattern": r"^RP-\d{3}$"},
                                             "qty": {"type": "integer", "minimum": 1}},
            "required": ["sku", "qty"], "additionalProperties": False}  # fmt: skip
    return _tool({"lines": {"type": "array", "items": item}}, ["lines"])


def test_one_item_is_not_wrapped_as_the_list_when_the_task_writes_another_item() -> None:
    task = "Please order 2 of RP-817 and 3 of RP-407."
    result = ParamRepairer(_lines_tool()).repair({"lines": {"sku": "RP-817", "qty": 2}}, task=task)
    assert not result.ok, result.args
    alone = ParamRepairer(_lines_tool()).repair(
        {"lines": {"sku": "RP-817", "qty": 2}}, task="Please order 2 of RP-817."
    )
    assert alone.ok and alone.args == {"lines": [{"sku": "RP-817", "qty": 2}]}, alone.reason


def test_a_sign_put_right_by_the_task_s_number_another_field_holds_is_declined() -> None:
    count = {"type": "integer", "minimum": 1, "maximum": 9}
    spec = _tool({"bodi": count, "nefa": count}, ["bodi", "nefa"])
    result = ParamRepairer(spec).repair({"bodi": -2, "nefa": 2}, task="Please book 2 robes.")
    assert not result.ok, result.args


def test_a_value_the_error_quotes_as_refused_is_not_sent_again_under_a_renamed_key() -> None:
    spec = _tool({"vegi": {"type": "string"}}, ["vegi"])
    error = "Invalid vegi: 'Lite dike' (expected something like zomo-vumo)"
    result = ParamRepairer(spec).repair({"VEGI": "Lite dike"}, error, task='vegi "Lite dike"')
    assert not result.ok, result.args
    # with no error, the same key in another case is only renamed
    plain = ParamRepairer(spec).repair({"VEGI": "Lite dike"}, task='vegi "Lite dike"')
    assert plain.ok and plain.args == {"vegi": "Lite dike"}, plain.reason


def test_a_schema_value_the_tool_s_narrower_list_refuses_is_no_misspelling_of_its_neighbour() -> (
    None
):
    spec = _tool({"zika": {"type": "string", "enum": ["kibo", "libo", "tebi"]}}, ["zika"])
    error = (
        '[{"code": "invalid_enum_value", "options": ["tebi", "kibo"], "path": ["zika"], '
        "\"message\": \"Invalid enum value. Expected 'tebi' | 'kibo', received 'libo'\"}]"
    )
    result = ParamRepairer(spec).repair({"zika": "libo"}, error)
    assert not result.ok, result.args
    # the task naming the tool's value: that one
    named = ParamRepairer(spec).repair({"zika": "libo"}, error, task="Use kibo please.")
    assert named.ok and named.args == {"zika": "kibo"}, named.reason
