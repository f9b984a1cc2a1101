"""The repairer that generalises: the error reading and its policy per kind, problems re-judged
against the current call, the effective schema, the intent audit, the proposer interface, the
reconciliation of a refused value with the task, numbers with labels and units; property tests
(the audit never passes a call that drops a task-stated value, a repair is idempotent) and
hostile inputs."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import (
    DROP,
    ERROR_POLICY,
    ModelProposer,
    ParamRepairer,
    RepairStep,
    ToolSpec,
    audit,
    read_error,
    rules_for,
    scripted_model,
)
from pytest_agentchaos.repair.fixes import Context
from pytest_agentchaos.repair.numbers import labelled_number
from pytest_agentchaos.repair.reconcile import reconcile, spoken_email

NOW = dt.datetime(2026, 11, 27, 9, 0, tzinfo=dt.timezone.utc)

SEARCH = ToolSpec.from_schema(
    "search",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "maxResults": {"type": "integer", "minimum": 1, "maximum": 50},
            "filters": {
                "type": "object",
                "properties": {"data": {"type": "string"}, "lang": {"type": "string"}},
            },
            "sort": {"type": "string", "description": "Sort order. Allowed: date, rating, views"},
            "part": {"type": "string", "description": "Resource parts. Default: snippet,id"},
            "priority": {"type": "integer", "description": "0 = None, 1 = Urgent, 2 = High"},
            "radius": {"type": "number", "description": "Search radius in meters"},
        },
        "required": ["query", "part"],
        "additionalProperties": False,
    },
)


def kinds(text: str, args: dict[str, Any], spec: ToolSpec = SEARCH) -> list[tuple[str, Any]]:
    reading = read_error(text, spec, args)
    return [(p.kind, p.path) for p in reading.problems]


# -- the error reading -------------------------------------------------------------------------


def test_a_pydantic_error_printed_as_text_is_read_by_its_locations() -> None:
    text = (
        "Error executing tool search: 2 validation errors for searchArguments\n"
        "maxResults\n  Input should be a valid integer, unable to parse string as an integer "
        "[type=int_parsing, input_value='ten', input_type=str]\n"
        "filters.lang\n  Field required [type=missing, input_value={}, input_type=dict]\n"
    )
    reading = read_error(text, SEARCH, {"query": "x", "maxResults": "ten", "filters": {}})
    assert reading.kind == "parameter" and reading.structured
    assert [(p.kind, p.path) for p in reading.problems] == [
        ("type", ("maxResults",)),
        ("missing", ("filters", "lang")),
    ]


def test_only_a_leading_http_location_is_dropped_from_a_path() -> None:
    body = {"detail": [{"type": "string_type", "loc": ["body", "filters", "data"], "msg": "x"}]}
    assert kinds(json.dumps(body), {"query": "x", "filters": {"data": 3}}) == [
        ("type", ("filters", "data"))
    ]
    query = {"detail": [{"type": "missing", "loc": ["query", "query"], "msg": "Field required"}]}
    assert kinds(json.dumps(query), {}) == [("missing", ("query",))]


def test_zod_received_undefined_is_a_missing_key_not_a_type_error() -> None:
    issues = [{"code": "invalid_type", "expected": "string", "received": "undefined",
               "path": ["query"], "message": "Required"}]  # fmt: skip
    assert kinds(json.dumps(issues), {"part": "id"}) == [("missing", ("query",))]


@pytest.mark.parametrize(
    "text",
    [
        "max results must be at most 50",  # words apart, any case
        "Invalid value for MaxResults",
        "the maxResults parameter is out of range",
    ],
)
def test_a_parameter_named_in_plain_words_is_tied_to_its_field(text: str) -> None:
    reading = read_error(text, SEARCH, {"query": "x", "maxResults": 90})
    assert [p.path for p in reading.problems] == [("maxResults",)], reading


def test_a_nested_key_is_tied_to_its_path() -> None:
    reading = read_error("invalid filters.lang: unknown code", SEARCH,
                         {"query": "x", "filters": {"lang": "xx"}})  # fmt: skip
    assert [p.path for p in reading.problems] == [("filters", "lang")]


def test_a_value_of_the_call_quoted_back_points_at_its_field() -> None:
    reading = read_error("KeyError: 'Frnace'", SEARCH, {"query": "Frnace", "part": "id"})
    assert reading.kind == "not_found"
    assert [(p.kind, p.path) for p in reading.problems] == [("rejected", ("query",))]
    found = read_error("User 'bob' not found", SEARCH, {"query": "bob"})
    assert found.kind == "not_found" and found.problems[0].path == ("query",)


def test_between_a_and_b_gives_both_bounds() -> None:
    reading = read_error('{"error": "maxResults must be between 1 and 30."}', SEARCH,
                         {"query": "x", "maxResults": 100})  # fmt: skip
    (problem,) = reading.problems
    assert problem.kind == "range" and problem.schema["minimum"] == 1
    assert problem.schema["maximum"] == 30


def test_a_name_that_is_no_field_is_no_phantom_missing_value() -> None:
    reading = read_error("search() missing 1 required positional argument: 'zzz'", SEARCH, {})
    assert reading.problems == () and reading.kind == "unknown"


def test_a_word_ending_a_sentence_is_not_a_dotted_path() -> None:
    reading = read_error("The query.Try again later", SEARCH, {"query": "x"})
    assert all(p.path == ("query",) for p in reading.problems)


@pytest.mark.parametrize(
    ("error", "kind", "strategy"),
    [
        ("401 Unauthorized: invalid api key", "auth", "report_unrecoverable"),
        ("Permission denied to access this repository", "auth", "report_unrecoverable"),
        ("Insufficient funds for this transfer", "business", "report_unrecoverable"),
        ("Booking conflict: the room is already booked", "business", "report_unrecoverable"),
        ("Rate limit exceeded, slow down", "transient", "retry"),
        ("Unknown tool: searchh", "route", "alternative_route"),
    ],
)
def test_each_kind_of_error_has_its_own_decline(error: str, kind: str, strategy: str) -> None:
    result = ParamRepairer(SEARCH).repair({"query": "x", "part": "id"}, error)
    assert not result.ok and result.strategy == strategy
    assert result.diagnosis is not None and result.diagnosis.kind == kind
    assert ERROR_POLICY[kind][0] in ("decline", "retry")


# -- one loop: problems re-judged against the current call -------------------------------------


def test_an_error_about_a_key_a_rename_already_fixed_is_gone_not_declined() -> None:
    args = {"query": "x", "part": "id", "max_results": 5}
    error = "search() got an unexpected keyword argument 'max_results'"
    result = ParamRepairer(SEARCH).repair(args, error)
    assert result.ok and result.args == {"query": "x", "part": "id", "maxResults": 5}


# -- the effective schema ----------------------------------------------------------------------


def test_descriptions_compile_into_rules_with_their_provenance() -> None:
    rules = rules_for(SEARCH.schema_at(("sort",)), "sort")
    assert rules.enum == ("date", "rating", "views") and "Allowed" in rules.provenance["enum"]
    assert rules_for(SEARCH.schema_at(("part",)), "part").default == "snippet,id"
    assert rules_for(SEARCH.schema_at(("priority",)), "priority").glosses["high"] == 2
    assert rules_for(SEARCH.schema_at(("radius",)), "radius").unit == "meter"
    ranged = rules_for({"type": "integer", "description": "How many. Must be between 1 and 30."})
    assert (ranged.minimum, ranged.maximum) == (1, 30)
    assert rules_for({"type": "string", "description": "Options: 'a', 'b', etc."}).enum == ()


def test_the_call_is_checked_against_what_descriptions_state() -> None:
    repairer = ParamRepairer(SEARCH)
    fixed = repairer.repair({"query": "x", "sort": "Rating", "priority": "high"})
    assert fixed.ok and fixed.args == {
        "query": "x", "sort": "rating", "priority": 2, "part": "snippet,id",
    }  # fmt: skip
    declined = repairer.repair({"query": "x", "part": "id", "sort": "popularity"})
    assert not declined.ok


# -- the intent audit --------------------------------------------------------------------------


def test_an_undeclared_filter_the_task_states_is_not_dropped() -> None:
    result = ParamRepairer(SEARCH).repair(
        {"query": "bugs", "part": "id", "state": "open"}, task="open bugs please"
    )
    assert not result.ok and "task states 'open'" in result.reason
    dropped = ParamRepairer(SEARCH).repair(
        {"query": "bugs", "part": "id", "state": "open"}, task="bugs please"
    )
    assert dropped.ok and "state" not in dropped.args


def _drop_step(field: str) -> RepairStep:
    return RepairStep(field, "unknown", "drop_unknown_key", "v", DROP, 0.9, "not a parameter", True)


@settings(max_examples=200, deadline=None)
@given(
    key=st.from_regex(r"[a-z]{2,8}", fullmatch=True),
    value=st.one_of(
        st.from_regex(r"[A-Za-z][a-z0-9]{1,10}", fullmatch=True), st.integers(10, 10**6)
    ),  # fmt: skip
    words=st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), max_size=6),
)
def test_the_audit_never_passes_a_call_that_drops_a_task_stated_value(
    key: str, value: Any, words: list[str]
) -> None:
    task = " ".join([*words, str(value), *words])
    original = {"query": "x", key: value}
    repaired = {"query": "x"}
    assert audit(original, repaired, task, [_drop_step(key)]) is not None
    # the repairer as a whole: never ok with the value gone
    result = ParamRepairer(SEARCH).repair({"query": "x", "part": "id", key: value}, task=task)
    assert not result.ok or value in result.args.values()


def test_every_changed_value_must_cite_a_step() -> None:
    why = audit({"query": "x"}, {"query": "y"}, "find x", [])
    assert why is not None and "cited by no step" in why


def test_a_value_in_another_currency_is_not_stripped_to_a_number() -> None:
    spec = ToolSpec.from_schema("budget", {
        "type": "object",
        "properties": {"limit": {"type": "number", "description": "Monthly limit in euros"}},
        "required": ["limit"],
    })  # fmt: skip
    result = ParamRepairer(spec).repair({"limit": "$500"}, task="cap it at $500 a month")
    assert not result.ok and "euro" in result.reason


# -- the proposer interface --------------------------------------------------------------------

NESTED = ToolSpec.from_schema(
    "event",
    {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "reminders": {
                "type": "object",
                "properties": {"useDefault": {"type": "boolean"}, "minutes": {"type": "integer"}},
                "required": ["useDefault"],
            },
        },
        "required": ["title", "reminders"],
    },
)


def test_a_scripted_model_fills_a_nested_missing_value_the_rules_decline() -> None:
    args = {"title": "Flight", "reminders": {"minutes": 30}}
    want = {"title": "Flight", "reminders": {"useDefault": False, "minutes": 30}}
    assert not ParamRepairer(NESTED).repair(args).ok
    result = ParamRepairer(NESTED, model=scripted_model(want)).repair(args)
    assert result.ok and result.args == want
    assert any(s.strategy == "model_proposal" for s in result.steps)


def test_a_model_answer_that_breaks_the_schema_is_not_used() -> None:
    def wrong(problem: Any, call: Any, context: Context) -> list[Any]:
        return ["not a boolean"]

    result = ParamRepairer(NESTED, model=wrong).repair({"title": "x", "reminders": {}})
    assert not result.ok


def test_a_model_that_raises_is_recorded_and_nothing_is_invented() -> None:
    def broken(problem: Any, call: Any, context: Context) -> list[Any]:
        raise RuntimeError("provider down")

    result = ParamRepairer(NESTED, model=broken).repair({"title": "x", "reminders": {}})
    assert not result.ok
    assert any("provider down" in s.reason for s in result.steps)


def test_a_language_model_client_plugs_in_through_model_proposer() -> None:
    prompts: list[str] = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return '```json\n{"value": true}\n```'

    model = ModelProposer(llm, tool="event")
    result = ParamRepairer(NESTED, model=model).repair(
        {"title": "x", "reminders": {}}, task="use my usual reminders"
    )
    assert result.ok and result.args["reminders"] == {"useDefault": True}
    assert "reminders.useDefault" in prompts[0] and "usual reminders" in prompts[0]
    with pytest.raises(TypeError):
        ModelProposer("not callable")  # type: ignore[arg-type]


def test_a_model_cannot_drop_a_value_the_task_states() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"],
              "additionalProperties": False}  # fmt: skip
    spec = ToolSpec.from_schema("s", schema)

    def dropper(problem: Any, call: Any, context: Context) -> list[Any]:
        return [DROP]

    result = ParamRepairer(spec, model=dropper).repair(
        {"q": "x", "state": "open"}, task="open ones only"
    )
    assert not result.ok


# -- a refused value reconciled with the task --------------------------------------------------


@pytest.mark.parametrize(
    ("value", "task", "want"),
    [
        ("aapl", "price of AAPL today", "AAPL"),
        ("sku 0042", "stock of SKU-0042 in Amsterdam", "SKU-0042"),
        ("Krakow", "weather in Kraków", "Kraków"),
        ("0107", "book htl_0107 for two nights", "htl_0107"),
        ("SKU-1180", "stock of SKU-1180-B", "SKU-1180-B"),
        ("Reykjavk", "weather in Reykjavik today", "Reykjavik"),
        ("issue", "close issue ENG-142 now", "ENG-142"),
        (77, "move ENG-77 to review", "ENG-77"),
    ],
)
def test_a_refused_value_takes_the_tasks_own_spelling(value: Any, task: str, want: str) -> None:
    fix = reconcile(value, {"type": "string"}, Context("id", {}, task))
    assert fix is not None and getattr(fix, "value", None) == want, fix


def test_a_value_the_task_writes_as_sent_is_genuinely_not_found() -> None:
    decline = reconcile("Atlantis", {"type": "string"}, Context("city", {}, "fly to Atlantis"))
    assert decline is not None and "does not have it" in decline.reason
    assert spoken_email("bob at example dot com") == "bob@example.com"
    assert reconcile("Closed", {"type": "string"}, Context("state", {}, "close it")) is None


# -- numbers with labels and units -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "name", "schema", "want"),
    [
        ("50 per page", "per_page", {"type": "integer"}, 50),
        ("3 lines", "context_lines", {"type": "integer"}, 3),
        ("10k", "max_length", {"type": "integer"}, 10_000),
        ("2 km", "radius", {"type": "integer", "description": "radius in meters"}, 2000),
        ("1 hour", "reminder_minutes", {"type": "integer"}, 60),
        ("2h", "duration_minutes", {"type": "integer"}, 120),
    ],
)
def test_a_number_with_a_label_or_unit_is_read(
    value: str, name: str, schema: dict[str, Any], want: Any
) -> None:
    fix = labelled_number(value, schema, Context(name))
    assert fix is not None and getattr(fix, "value", None) == want, fix


@pytest.mark.parametrize(
    ("value", "name", "schema"),
    [
        ("2 miles", "radius", {"type": "number", "description": "radius in meters"}),
        ("4 lbs", "weight_kg", {"type": "number"}),
        ("2 km", "radius", {"type": "number"}),  # the field states no unit
    ],
)
def test_a_unit_the_field_does_not_state_or_another_system_is_declined(
    value: str, name: str, schema: dict[str, Any]
) -> None:
    result = labelled_number(value, schema, Context(name))
    assert result is not None and not hasattr(result, "value"), result
    assert labelled_number("last 20", {"type": "integer"}, Context("head")) is None


# -- idempotence -------------------------------------------------------------------------------

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import repair_corpus  # noqa: E402


def test_running_the_repairer_on_its_own_output_changes_nothing() -> None:
    seen = 0
    for case in repair_corpus.load(split="dev"):
        repairer = ParamRepairer(ToolSpec.from_schema(case.tool, case.schema))
        first = repairer.repair(case.args, case.error, case.task, case.now)
        if not first.ok or first.args is None:
            continue
        again = repairer.repair(first.args, None, case.task, case.now)
        assert again.ok and again.args == first.args, (case.id, again.reason)
        seen += 1
    assert seen >= 100


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.fixed_dictionaries(
        {"query": st.text(max_size=20)},
        optional={
            "maxResults": st.one_of(st.integers(-5, 99), st.sampled_from(["10", "ten", "5k"])),
            "sort": st.sampled_from(["date", "Rating", "views", "VIEWS", "most viewed"]),
            "max_results": st.integers(1, 60),
            "priority": st.sampled_from([0, 1, "urgent", "High", "none"]),
        },
    ),
    st.sampled_from([None, "sort by rating", "top 10 results"]),
)
def test_a_repair_is_idempotent(args: dict[str, Any], task: str | None) -> None:
    repairer = ParamRepairer(SEARCH)
    first = repairer.repair(args, task=task, now=NOW)
    if first.ok and first.args is not None:
        assert SEARCH.is_valid(first.args)
        again = repairer.repair(first.args, task=task, now=NOW)
        assert again.ok and again.args == first.args


# -- hostile inputs ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: "maxResults must be between 1 and 50. " * 30_000,
        lambda: "1 validation error for X\n" + "a.b.c\n  Field required [type=missing]\n" * 30_000,
        lambda: json.dumps({"detail": [{"loc": ["body", "q"], "msg": "x"}] * 20_000}),
        lambda: "'" + "x" * 1_000_000 + "' not found",
    ],
)
def test_a_1mb_error_is_read_within_bounds(make: Any) -> None:
    error = make()
    assert len(error) >= 700_000
    result = ParamRepairer(SEARCH).repair({"query": "x", "part": "id", "maxResults": 90}, error)
    assert len(result.reason) <= 2_000
    assert not result.ok or SEARCH.is_valid(result.args)


def test_a_recursive_schema_is_compiled_and_used() -> None:
    tree = ToolSpec.from_schema("tree", {
        "type": "object",
        "$defs": {"node": {"type": "object", "properties": {
            "name": {"type": "string", "description": "Allowed: a, b"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
        "properties": {"root": {"$ref": "#/$defs/node"}},
        "required": ["root"],
    })  # fmt: skip
    result = ParamRepairer(tree).repair({"root": {"name": "A", "children": [{"name": "b"}]}})
    assert result.ok and result.args == {"root": {"name": "a", "children": [{"name": "b"}]}}
    odd = ToolSpec.from_schema("odd", {"type": "object", "properties": {"x": True, "y": {}}})
    assert ParamRepairer(odd).repair({"x": 1, "y": None}).ok


class _Evil(str):
    def __repr__(self) -> str:
        raise RuntimeError("repr raised")


def test_args_whose_repr_raises_are_handled() -> None:
    result = ParamRepairer(SEARCH).repair({"query": _Evil("x"), "part": _Evil("id"),
                                           "sort": _Evil("Views")}, "bad sort")  # fmt: skip
    assert isinstance(result.reason, str)
    assert not result.ok or SEARCH.is_valid(result.args)


def test_a_fixed_utc_offset_becomes_its_tz_database_zone() -> None:
    spec = ToolSpec.from_schema("now", {
        "type": "object",
        "properties": {"timezone": {"type": "string", "description": "IANA timezone name"}},
        "required": ["timezone"],
    })  # fmt: skip
    error = "Invalid timezone: 'No time zone found with key UTC+5'"
    result = ParamRepairer(spec).repair({"timezone": "UTC+5"}, error, task="time at UTC+5?")
    assert result.ok and result.args == {"timezone": "Etc/GMT-5"}  # POSIX sign
