"""ParamRepairer: the repair graph end to end, its loops around a tool, and its properties
(never ok with invalid arguments, a valid call unchanged, repairable corruptions undone)."""

from __future__ import annotations

import asyncio
import datetime as dt
import random
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.escape import TraceRecorder
from pytest_agentchaos.faults.mutations import MUTATIONS, apply_mutation, decide
from pytest_agentchaos.repair import (
    ErrorPattern,
    LLMInferer,
    ParamRepairer,
    RepairError,
    RepairPolicy,
    ToolSpec,
)
from pytest_agentchaos.trace import Repair

NOW = dt.datetime(2024, 10, 22, 9, 0, tzinfo=dt.timezone.utc)


class Ge:
    def __init__(self, ge: int) -> None:
        self.ge = ge


class Le:
    def __init__(self, le: int) -> None:
        self.le = le


def book_flight(
    origin: str,
    destination: str,
    departure_date: dt.date,
    passengers: Annotated[int, Ge(1), Le(9)],
    cabin_class: Literal["economy", "premium_economy", "business", "first"] = "economy",
    meal: str | None = None,
) -> dict[str, Any]:
    """Book a flight."""
    return {}


FLIGHT = ToolSpec.from_function(book_flight)
TASK = "Book 2 passengers in business class from LIS to OSL on October 26, 2024"
VALID = {
    "origin": "LIS",
    "destination": "OSL",
    "departure_date": "2024-10-26",
    "passengers": 2,
    "cabin_class": "business",
}
ITINERARY = ToolSpec.from_schema(
    "plan_trip",
    {
        "type": "object",
        "properties": {
            "travellers": {"type": "array", "items": {"type": "integer"}, "minItems": 1},
            "legs": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "to": {"type": "string", "pattern": "^[A-Z]{3}$"},
                        "on": {"type": "string", "format": "date"},
                    },
                    "required": ["to", "on"],
                    "additionalProperties": False,
                },
            },
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
        },
        "required": ["legs"],
        "additionalProperties": False,
    },
)


def repairer(spec: ToolSpec = FLIGHT, **kw: Any) -> ParamRepairer:
    return ParamRepairer(spec, **kw)


# -- the graph, case by case -----------------------------------------------------------------


def test_a_valid_call_is_left_as_it_is() -> None:
    result = repairer().repair(VALID, task=TASK, now=NOW)
    assert (result.ok, result.strategy, result.args, result.changed) == (True, "none", VALID, False)


def test_the_seed_scenarios_are_repaired_and_say_how() -> None:
    r = repairer()
    missing = {k: v for k, v in VALID.items() if k != "passengers"}
    result = r.repair(missing, task=TASK, now=NOW)
    assert result.ok and result.args == VALID and result.strategy == "infer_missing_param"
    result = r.repair({**VALID, "departure_date": "October 26, 2024"}, now=NOW)
    assert result.args == VALID and result.strategy == "date_format_correction"
    result = r.repair({**VALID, "cabin_class": "business class"})
    assert result.args == VALID and result.strategy == "enum_value_correction"
    assert "cabin_class: 'business class' names 'business'" in result.reason
    assert 0.8 <= result.confidence <= 1.0


def test_several_problems_are_fixed_together_and_the_confidence_is_the_least() -> None:
    bad = {**VALID, "passengers": "2", "cabin_class": "Business", "departure_date": "2024/10/26"}
    result = repairer().repair(bad)
    assert result.args == VALID
    assert {s.strategy for s in result.steps} == {
        "schema_type_conversion",
        "enum_value_correction",
        "date_format_correction",
    }
    assert result.confidence == min(s.confidence for s in result.steps)


def test_a_transient_error_is_declined_as_a_retry_and_a_missing_tool_is_another_route() -> None:
    r = repairer()
    for error in (TimeoutError("timed out"), 503, 429, "Rate limit exceeded (status 400)"):
        result = r.repair(VALID, error)  # no parameter error: nothing repaired, retried as is
        assert (result.ok, result.strategy, result.args) == (False, "retry", None), error
    result = r.repair(VALID, "Unknown tool: book_flights")
    assert (result.ok, result.strategy, result.args) == (False, "alternative_route", None)


def test_declines_say_why_and_return_no_arguments() -> None:
    r = repairer()
    cases = {
        "departure_date": ("03/04/2024", "the order is not for us to guess"),
        "passengers": (2.5, "rounding it would change it"),
        "cabin_class": ("deluxe", "'deluxe' is none of"),
    }
    for key, (value, why) in cases.items():
        result = r.repair({**VALID, key: value}, now=NOW)
        assert not result.ok and result.args is None, key
        assert why in result.reason and result.reason.startswith(f"{key}: "), result.reason
        assert result.steps[-1].ok is False


def test_an_out_of_range_value_is_not_clamped() -> None:
    result = repairer().repair({**VALID, "passengers": 12})
    assert not result.ok and result.strategy == "clamp_value"
    assert "another scale" in result.reason


def test_required_values_the_task_does_not_state_are_not_invented() -> None:
    result = repairer().repair({"origin": "LIS"}, task="fly somewhere nice")
    assert not result.ok and result.strategy == "infer_missing_param"
    assert "'departure_date', 'destination', 'passengers'" in result.reason
    assert "the task does not state them" in result.reason
    result = repairer().repair({"origin": "LIS"})
    assert "no task was given" in result.reason


def test_defaults_fill_missing_keys_and_unknown_keys_are_renamed_or_dropped() -> None:
    spec = ITINERARY
    result = repairer(spec).repair({"legs": [], "limt": 5})
    assert result.ok and result.args == {"legs": [], "limit": 5}
    assert result.strategy == "rename_key"
    result = repairer(spec).repair({"legs": [], "colour": "red"})
    assert result.args == {"legs": []} and result.strategy == "drop_unknown_key"
    result = repairer().repair({**VALID, "passenger": 2, "passengers": 2})
    assert result.args == VALID


def test_an_unknown_key_is_kept_when_dropping_it_may_lose_a_missing_value() -> None:
    missing = {k: v for k, v in VALID.items() if k not in ("destination", "origin")}
    result = repairer().repair({**missing, "arrival_city": "OSL", "leaving_from": "LIS"})
    assert not result.ok and "dropping it may lose what was meant" in result.reason


def test_the_one_unknown_key_is_renamed_to_the_one_missing_parameter_it_fits() -> None:
    missing = {k: v for k, v in VALID.items() if k != "destination"}
    result = repairer().repair({**missing, "arrival_city": "OSL"})  # by elimination
    assert result.ok and result.args == VALID, result.reason


def test_nested_values_and_list_items_are_repaired_where_they_are() -> None:
    bad = {"legs": [{"to": "osl", "on": "Oct 26, 2024"}, {"to": "LIS", "on": "2024-11-02"}]}
    result = repairer(ITINERARY).repair(bad)
    assert result.ok
    assert result.args == {
        "legs": [{"to": "OSL", "on": "2024-10-26"}, {"to": "LIS", "on": "2024-11-02"}]
    }
    assert {s.field for s in result.steps} == {"legs[0].to", "legs[0].on"}


def test_a_single_value_is_wrapped_in_a_list_unless_the_task_names_several() -> None:
    r = repairer(ITINERARY)
    assert r.repair({"legs": [], "travellers": "3"}).args == {"legs": [], "travellers": [3]}
    result = r.repair({"legs": [], "travellers": 3}, task="three travellers, ages 3, 7, 40")
    assert not result.ok and "the task names three of them" in result.reason


def test_an_optional_value_is_repaired_into_the_one_branch_it_fits() -> None:
    declined = repairer().repair({**VALID, "meal": 3})  # a number says nothing of a meal
    assert not declined.ok and "in a field not made of digits" in declined.reason
    assert repairer().repair({**VALID, "meal": ["veg"]}).args == {**VALID, "meal": "veg"}
    assert repairer().repair({**VALID, "meal": "null"}).strategy == "none"  # a string: valid


def test_arguments_sent_as_malformed_json_text_are_read() -> None:
    text = (
        "```json\n{'origin': 'LIS', 'destination': 'OSL', 'departure_date': '2024-10-26', "
        "'passengers': 2,}\n```"
    )
    result = repairer().repair(text)
    assert result.ok and result.args == {k: v for k, v in VALID.items() if k != "cabin_class"}
    assert result.steps[0].strategy == "json_repair"
    bad = repairer().repair("not json at all")
    assert not bad.ok and bad.strategy == "json_repair"
    assert not repairer().repair(["a", "list"]).ok


def test_errors_the_tool_names_are_repaired_with_what_the_error_says() -> None:
    spec = ToolSpec.from_schema(
        "search", {"type": "object", "properties": {"sort": {"type": "string"}}}
    )
    error = "Invalid value for 'sort': must be one of relevance, date, price"
    result = repairer(spec).repair({"sort": "Price"}, error)
    assert result.ok and result.args == {"sort": "price"}
    result = repairer(spec).repair({"sort": "cheapest"}, error)
    assert not result.ok and "'cheapest' is none of 'relevance', 'date', 'price'" in result.reason


def test_the_policy_threshold_and_switches_turn_fixes_into_declines() -> None:
    strict = repairer(policy=RepairPolicy(threshold=0.99))
    result = strict.repair({**VALID, "cabin_class": "business class"})
    assert not result.ok and "below the threshold 0.99" in result.reason
    off = repairer(policy=RepairPolicy(strategies={"date_format_correction": False}))
    result = off.repair({**VALID, "departure_date": "Oct 26, 2024"})
    assert not result.ok and "turned off by the policy" in result.reason
    synonyms = repairer(policy=RepairPolicy(synonyms={"cabin_class": {"coach": "economy"}}))
    assert synonyms.repair({**VALID, "cabin_class": "Coach"}).args == {
        **VALID,
        "cabin_class": "economy",
    }


def test_a_policy_error_pattern_is_read_before_the_defaults() -> None:
    spec = ToolSpec.from_schema("s", {"type": "object", "properties": {"q": {"type": "string"}}})
    pattern = ErrorPattern("ours", r"E-17 (?P<field>\w+)", "missing")
    result = repairer(spec, policy=RepairPolicy(error_patterns=[pattern])).repair({}, "E-17 q")
    assert not result.ok and "no value for the required 'q'" in result.reason


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"threshold": 1.5}, "threshold must be within 0..1"),
        ({"max_attempts": -1}, "max_attempts must be >= 0"),
        ({"strategies": {"guess": True}}, "unknown strategy 'guess'"),
        ({"fuzzy_score": 120}, "fuzzy_score must be within 0..100"),
    ],
)
def test_a_bad_policy_is_refused_with_its_reason(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RepairPolicy(**kwargs)


def test_the_repairer_refuses_what_is_not_a_spec_or_an_inferer() -> None:
    with pytest.raises(TypeError, match="needs a ToolSpec"):
        ParamRepairer({"type": "object"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="an inferer has infer"):
        ParamRepairer(FLIGHT, inferer=lambda r: {})  # type: ignore[arg-type]


def test_an_inferer_that_raises_is_reported_and_nothing_is_invented() -> None:
    def broken(prompt: str) -> str:
        raise RuntimeError("model down")

    missing = {k: v for k, v in VALID.items() if k != "destination"}
    result = repairer(inferer=LLMInferer(broken)).repair(missing, task=TASK)
    assert not result.ok
    assert any("the inferer raised RuntimeError: model down" in s.reason for s in result.steps)


def test_every_repair_is_a_repair_event_with_the_call_index() -> None:
    recorder = TraceRecorder()
    r = repairer(recorder=recorder)
    r.repair({**VALID, "cabin_class": "Business"}, at=4)
    r.repair({**VALID, "passengers": 2.5}, at=5)
    r.repair(VALID, at=6)  # nothing to repair: no event
    events = recorder.trace.of_type(Repair)
    assert [(e.ok, e.strategy, e.detail["index"]) for e in events] == [
        (True, "enum_value_correction", 4),
        (False, "schema_type_conversion", 5),
    ]
    assert events[0].before["cabin_class"] == "Business"
    assert events[0].after["cabin_class"] == "business"
    assert events[1].after == {} and "rounding" in events[1].detail["reason"]


# -- the loop around a tool ------------------------------------------------------------------


def test_call_repairs_before_the_tool_runs_and_after_it_refuses() -> None:
    seen: list[dict[str, Any]] = []

    def tool(**kwargs: Any) -> str:
        seen.append(kwargs)
        if kwargs.get("cabin_class") == "first":
            raise ValueError("cabin_class must be one of economy, business")
        return "booked"

    r = repairer(task=TASK)
    assert r.call(tool, {**VALID, "departure_date": "Oct 26, 2024"}, now=NOW) == "booked"
    assert seen == [VALID]  # repaired before the tool ran: it ran once, with good arguments


def test_call_gives_up_with_the_tools_error_as_the_cause() -> None:
    def tool(**kwargs: Any) -> str:
        raise ValueError("cabin_class must be one of economy, business")

    with pytest.raises(
        RepairError,
        match=r"not repaired \(report_unrecoverable\): cabin_class: "
        "cabin_class must be one of economy, business$",
    ) as info:
        repairer().call(tool, VALID)
    assert isinstance(info.value.__cause__, ValueError)
    assert info.value.result.ok is False


def test_call_retries_transient_errors_within_its_attempts() -> None:
    calls = []

    def flaky(**kwargs: Any) -> str:
        calls.append(1)
        if len(calls) < 3:
            raise TimeoutError("slow")
        return "ok"

    assert repairer().call(flaky, VALID) == "ok" and len(calls) == 3
    calls.clear()
    # the attempts spent, a transient error is raised as it is: the caller's escape stack
    # still sees it transient (a RepairError would read as a persistent validation error)
    with pytest.raises(TimeoutError, match="slow"):
        repairer(policy=RepairPolicy(max_attempts=1)).call(flaky, VALID)
    assert len(calls) == 2


def test_call_does_not_run_the_tool_for_arguments_it_will_not_repair() -> None:
    ran = []
    with pytest.raises(RepairError, match="not repaired .schema_type_conversion."):
        repairer().call(lambda **kw: ran.append(kw), {**VALID, "passengers": 2.5})
    assert ran == []


def test_acall_is_the_same_loop_for_coroutines() -> None:
    async def tool(**kwargs: Any) -> dict[str, Any]:
        return kwargs

    out = asyncio.run(repairer().acall(tool, {**VALID, "passengers": "two"}))
    assert out == VALID


# -- properties ------------------------------------------------------------------------------

DATES = st.dates(dt.date(1990, 1, 1), dt.date(2089, 12, 31))
VALID_CALLS = st.fixed_dictionaries(
    {
        "origin": st.sampled_from(["LIS", "OSL", "YUL", "NRT"]),
        "destination": st.sampled_from(["LIS", "OSL", "YUL", "NRT"]),
        "departure_date": DATES.map(dt.date.isoformat),
        "passengers": st.integers(1, 9),
    },
    optional={
        "cabin_class": st.sampled_from(["economy", "premium_economy", "business", "first"]),
        "meal": st.none() | st.text(max_size=8),
    },
)
JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, 100),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


@settings(max_examples=150, deadline=None)
@given(VALID_CALLS)
def test_repairing_a_valid_call_changes_nothing(args: dict[str, Any]) -> None:
    result = repairer().repair(args, task=TASK, now=NOW)
    assert result.ok and result.strategy == "none" and result.args == args


@settings(max_examples=300, deadline=None)
@given(
    VALID_CALLS,
    st.dictionaries(st.sampled_from(sorted(FLIGHT.properties) + ["extra"]), JUNK, max_size=3),
    st.sets(st.sampled_from(sorted(FLIGHT.properties)), max_size=2),
)
def test_the_repairer_never_says_ok_with_arguments_that_do_not_validate(
    args: dict[str, Any], junk: dict[str, Any], removed: set[str]
) -> None:
    bad = {k: v for k, v in {**args, **junk}.items() if k not in removed}
    result = repairer().repair(bad, task=TASK, now=NOW)
    if result.ok:
        assert FLIGHT.is_valid(result.args), (bad, result)
        again = repairer().repair(result.args, task=TASK, now=NOW)
        assert again.strategy == "none"  # a repaired call needs no more repair
    else:
        assert result.args is None and result.reason


@settings(max_examples=300, deadline=None)
@given(VALID_CALLS.filter(lambda a: "cabin_class" in a), st.integers(0, 2**32))
def test_a_repairable_corruption_is_undone_exactly(args: dict[str, Any], seed: int) -> None:
    detail = decide(random.Random(seed), MUTATIONS, args, FLIGHT.parameters)
    assert detail is not None
    corrupted = apply_mutation(args, detail)
    result = repairer().repair(corrupted, task=None, now=NOW)
    if detail["repairable"]:
        assert result.ok, (detail, result.reason)
        assert result.args == args, (detail, result.args)
    elif result.ok:  # an unrepairable corruption is never "repaired" into another request
        assert result.args == args, (detail, result.args)


# -- the Supervisor repairs before it retries or falls back --------------------------------


def test_the_supervisor_repairs_parameter_errors_before_its_backoff_and_fallbacks() -> None:
    from pytest_agentchaos.escape import Supervisor

    recorder = TraceRecorder()
    booked: list[dict[str, Any]] = []

    def tool(**kwargs: Any) -> str:
        if kwargs["cabin_class"] not in ("economy", "business"):
            raise ValueError("Invalid value for 'cabin_class': must be one of economy, business")
        booked.append(kwargs)
        return "booked"

    sup = Supervisor(recorder=recorder, repairers={"book_flight": repairer(task=TASK)})
    bad = {**VALID, "departure_date": "Oct 26, 2024", "cabin_class": "Business"}
    assert sup.call("book_flight", tool, bad) == "booked"
    assert booked == [VALID]
    repairs = recorder.trace.of_type(Repair)
    assert len(repairs) == 1 and repairs[0].after == VALID  # both fixed before the one call
    assert {s["strategy"] for s in repairs[0].detail["steps"]} == {
        "date_format_correction",
        "enum_value_correction",
    }
    # a transient error is the backoff's: the repairer does not retry it itself
    flaky = iter([TimeoutError("slow"), None])

    def sometimes(**kwargs: Any) -> str:
        error = next(flaky)
        if error:
            raise error
        return "ok"

    assert sup.call("book_flight", sometimes, VALID) == "ok"
    with pytest.raises(TypeError, match="expected a ParamRepairer"):
        Supervisor(repairers={"x": object()})


def test_the_wrapper_writes_what_the_repairer_makes_of_the_agents_own_call() -> None:
    from pytest_agentchaos.faults import parse_fault
    from pytest_agentchaos.inject import Chaos

    fault = parse_fault(
        {"kind": "malformed_params", "mutations": ["invalid_enum"], "nth": [1]}, "test"
    )
    with Chaos.create(faults=[fault], seed=1) as chaos:
        tool = chaos.wrap(lambda **kw: kw, name="book_flight", repair=repairer(task=TASK))
        own = {**VALID, "cabin_class": "business class"}  # the agent's own, malformed
        assert tool(**own)["cabin_class"] == "business"  # corrupted, then repaired
        assert tool(**own)["cabin_class"] == "business"  # not corrupted, repaired
    first, second = chaos.trace.of_type(Repair)
    assert first.detail["intended"] == VALID  # the agent's call, as the repairer reads it
    assert "intended" not in second.detail  # no fault: the call is the agent's
    assert first.before["cabin_class"] != "business class"  # what the fault made of it


# -- misnamed keys and what the schema lets pass -----------------------------------------------

LOOSE = ToolSpec.from_schema(
    "search_files",
    {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "excludePatterns": {"type": "array", "items": {"type": "string"}},
            "query": {"type": "string"},
            "since": {"type": "string", "description": "Filter by date (ISO 8601 timestamp)"},
            "owner_email": {"type": "string", "format": "email"},
            "send_at": {"type": "integer", "description": "A unix timestamp"},
        },
        "required": ["path"],
    },  # no additionalProperties: false, as most MCP servers
)


@pytest.mark.parametrize(
    ("given", "want", "how"),
    [
        ({"path": "/r", "exclude_patterns": ["dist"]}, {"path": "/r", "excludePatterns": ["dist"]},
         "in another case or style"),
        ({"file_path": "/r"}, {"path": "/r"}, "sharing a word with it"),
        ({"path": "/r", "q": "todo"}, {"path": "/r", "query": "todo"}, "an abbreviation of it"),
    ],
)  # fmt: skip
def test_misnamed_keys_are_renamed_even_where_the_schema_lets_them_pass(
    given: dict[str, Any], want: dict[str, Any], how: str
) -> None:
    result = repairer(LOOSE).repair(given)
    assert result.ok and result.args == want and result.strategy == "rename_key"
    assert how in result.reason


def test_a_key_that_names_no_parameter_is_left_to_the_schema() -> None:
    result = repairer(LOOSE).repair({"path": "/r", "colour": "red"})
    assert (
        result.ok and result.strategy == "none" and result.args == {"path": "/r", "colour": "red"}
    )
    both = {"from_city": {}, "from_date": {}}
    two = ToolSpec.from_schema(
        "t", {"type": "object", "properties": both, "required": ["from_city", "from_date"]}
    )
    assert not repairer(two).repair({"from": "LIS"}).changed  # two parameters: not ours to pick


def test_what_a_description_or_a_weak_format_check_lets_pass_is_fixed() -> None:
    r = repairer(LOOSE)
    now = NOW
    assert r.repair({"path": "/r", "since": "October 1, 2024"}).args["since"] == "2024-10-01"
    assert r.repair({"path": "/r", "since": "yesterday"}, now=now).args["since"] == "2024-10-21"
    result = r.repair({"path": "/r", "since": "last Monday"}, now=now)
    assert not result.ok and "this week's Monday or last week's" in result.reason
    wrapped = r.repair({"path": "/r", "owner_email": "Bob <bob@Example.com>"})
    assert wrapped.args["owner_email"] == "bob@example.com"
    stamp = r.repair({"path": "/r", "send_at": "2024-10-23T08:00:00Z"})
    assert stamp.args["send_at"] == 1729670400
    assert not r.repair({"path": "/r", "send_at": "2024-10-23T08:00:00"}).ok  # no zone


def test_an_object_is_repaired_into_the_one_branch_of_a_union_it_fits() -> None:
    comment = {"path": {"type": "string"}, "body": {"type": "string"}}
    spec = ToolSpec.from_schema(
        "review",
        {
            "type": "object",
            "properties": {
                "comments": {
                    "type": "array",
                    "items": {
                        "anyOf": [
                            {"type": "object", "properties": {**comment, "position": INT_SCHEMA},
                             "required": ["path", "position", "body"]},
                            {"type": "object", "properties": {**comment, "line": INT_SCHEMA},
                             "required": ["path", "line", "body"]},
                        ]
                    },
                }
            },
        },
    )  # fmt: skip
    given = {"comments": [{"path": "a.py", "line": "42", "body": "off by one?"}]}
    result = repairer(spec).repair(given)
    assert result.ok and result.args == {
        "comments": [{"path": "a.py", "line": 42, "body": "off by one?"}]
    }
    both = {"comments": [{"path": "a.py", "body": "?"}]}  # fits neither: position or line?
    assert not repairer(spec).repair(both).ok


INT_SCHEMA = {"type": "integer"}


def test_abbreviated_keys_inside_an_object_are_renamed() -> None:
    spec = ToolSpec.from_schema(
        "places",
        {
            "type": "object",
            "properties": {
                "location": {
                    "type": "object",
                    "properties": {"latitude": {"type": "number"}, "longitude": {"type": "number"}},
                }
            },
        },
    )
    result = repairer(spec).repair({"location": {"lat": 48.8, "lng": 2.3}})
    assert result.args == {"location": {"latitude": 48.8, "longitude": 2.3}}
    assert {s.field for s in result.steps} == {"location.lat", "location.lng"}
