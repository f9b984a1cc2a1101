"""The trace: events round-trip through JSON, query helpers answer what users ask of a run."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.trace import (
    EVENT_TYPES,
    BudgetExhaustedEvent,
    Detection,
    Event,
    FaultInjected,
    Halt,
    Intervention,
    ModelCall,
    ModelResult,
    Repair,
    RunEnded,
    RunStarted,
    Snapshot,
    Step,
    ToolCall,
    ToolResult,
    Trace,
)

# One event of every type, with every field set away from its default.
SAMPLES: dict[str, Event] = {
    "RunStarted": RunStarted(
        0, 0.0, test="tests/test_agent.py::test_books", seed=42, profile="flaky"
    ),
    "RunEnded": RunEnded(9, 61.5, status="halted", detail={"reason": "budget", "n": [1, 2]}),
    "Step": Step(3, 4.25, label="plan"),
    "ToolCall": ToolCall(
        1, 0.5, tool="search_flights", index=2, args={"origin": "Oslo", "pax": 2}, channel="http"
    ),
    "ToolResult": ToolResult(
        1,
        30.5,
        tool="search_flights",
        index=2,
        ok=False,
        output=None,
        error_type="TimeoutError",
        message="timed out",
        status=504,
        channel="http",
    ),
    "ModelCall": ModelCall(
        2, 31.0, model="gpt", index=1, input=[{"role": "user", "content": "hi"}]
    ),
    "ModelResult": ModelResult(
        2,
        32.0,
        model="gpt",
        index=1,
        ok=False,
        output={"text": "x"},
        tokens=17,
        error_type="RateLimitError",
        message="429",
    ),
    "FaultInjected": FaultInjected(
        1,
        0.5,
        kind="rate_limit",
        channel="http",
        target="api.example.com",
        index=2,
        fault=1,
        detail={"status": 429, "retry_after": 12.5},
    ),
    "Detection": Detection(4, 40.0, detector="loop", kind="repeat", detail={"window": 3}),
    "Intervention": Intervention(4, 41.0, action="backoff", detail={"seconds": 2.0}),
    "Repair": Repair(
        5,
        42.0,
        tool="book",
        strategy="coerce",
        ok=False,
        before={"pax": "2"},
        after={"pax": 2},
        detail={"why": "type"},
    ),
    "Snapshot": Snapshot(6, 43.0, snapshot_id="s-1", action="restored", detail={"from": 3}),
    "Halt": Halt(7, 44.0, reason="stagnation", hard=True, detail={"steps": 7}),
    "BudgetExhausted": BudgetExhaustedEvent(8, 45.0, budget="max_steps", limit=8, count=9),
}


def test_every_registered_event_type_has_a_sample():
    # A new event type must be added to SAMPLES so its round-trip is pinned down too.
    assert set(EVENT_TYPES) == set(SAMPLES)
    for name, event in SAMPLES.items():
        assert type(event) is EVENT_TYPES[name]
        assert event.type_name == name


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_event_type_round_trips_through_json(name):
    event = SAMPLES[name]
    trace = Trace([event], meta={"seed": 42, "test": "t"})
    text = trace.to_json()
    back = Trace.from_json(text)
    assert back == trace
    assert type(back[0]) is type(event)
    assert json.loads(text)["events"][0]["type"] == name


def test_budget_exhausted_event_is_written_under_its_public_name():
    data = json.loads(Trace([SAMPLES["BudgetExhausted"]]).to_json())
    assert data["events"][0]["type"] == "BudgetExhausted"
    assert data["format"] == 1


def test_whole_trace_round_trips_and_bytes_input_is_accepted():
    trace = Trace(list(SAMPLES.values()), meta={"profile": "flaky", "seed": 7})
    text = trace.to_json(indent=2)
    assert Trace.from_json(text) == trace
    assert Trace.from_json(text.encode("utf-8")) == trace


def test_non_json_values_are_written_as_repr():
    class Opaque:
        def __repr__(self) -> str:
            return "<Opaque thing>"

    trace = Trace(
        [
            ToolResult(
                1,
                0.0,
                tool="x",
                output={"when": dt.date(2025, 3, 14), "obj": Opaque(), "raw": b"caf\xc3\xa9"},
            )
        ]
    )
    out = json.loads(trace.to_json())["events"][0]["output"]
    assert out["when"] == "datetime.date(2025, 3, 14)"
    assert out["obj"] == "<Opaque thing>"
    assert out["raw"] == "café"  # bytes are decoded, not repr'd
    # And the written trace still reads back (the values stay strings).
    assert Trace.from_json(trace.to_json())[0].output["obj"] == "<Opaque thing>"


def test_dict_output_with_tuple_keys_is_still_written():
    trace = Trace([ToolResult(1, 0.0, tool="stats", output={("oslo", "bergen"): 3})])
    text = trace.to_json()
    assert "oslo" in text


# -- from_json errors ---------------------------------------------------------------------


def _doc(*events):
    return json.dumps({"format": 1, "meta": {}, "events": list(events)})


def test_from_json_rejects_unknown_event_type_and_lists_known_ones():
    with pytest.raises(ValueError) as exc:
        Trace.from_json(_doc({"type": "Teleport", "step": 0, "t": 0}))
    msg = str(exc.value)
    assert "#0" in msg and "'Teleport'" in msg
    assert "ToolCall" in msg and "FaultInjected" in msg


def test_from_json_rejects_unknown_keys_and_names_them():
    with pytest.raises(ValueError) as exc:
        Trace.from_json(
            _doc(
                {"type": "Step", "step": 0, "t": 0},
                {"type": "Step", "step": 1, "t": 0, "colour": 1},
            )
        )
    msg = str(exc.value)
    assert "#1" in msg and "Step" in msg and "colour" in msg


@pytest.mark.parametrize("version", [0, 2, "1"])
def test_from_json_rejects_other_format_versions(version):
    with pytest.raises(ValueError, match=r"unsupported trace format .* \(expected 1\)"):
        Trace.from_json(json.dumps({"format": version, "events": []}))


@pytest.mark.parametrize("doc", ["[]", '{"meta": {}}', '"trace"'])
def test_from_json_rejects_documents_that_are_not_traces(doc):
    with pytest.raises(ValueError, match="not a pytest-agentchaos trace"):
        Trace.from_json(doc)


def test_from_json_rejects_event_without_type():
    with pytest.raises(ValueError, match=r"#0 is not an object with a 'type'"):
        Trace.from_json(_doc({"step": 0, "t": 0}))


def test_from_json_event_missing_step_is_a_clear_value_error():
    with pytest.raises(ValueError, match="#0"):
        Trace.from_json(_doc({"type": "Step", "t": 0}))


# -- queries ------------------------------------------------------------------------------


@pytest.fixture
def run_trace() -> Trace:
    t = Trace(meta={"seed": 1})
    t.append(RunStarted(0, 0.0, test="t", seed=1, profile="flaky"))
    t.append(ToolCall(1, 0.0, tool="search", index=1, args={"q": "a"}))
    t.append(
        FaultInjected(
            1, 0.0, kind="timeout", target="search", index=1, fault=0, detail={"seconds": 30.0}
        )
    )
    t.append(ToolResult(1, 30.0, tool="search", index=1, ok=False, error_type="TimeoutError"))
    t.append(ToolCall(2, 30.0, tool="api.example.com", index=1, args={}, channel="http"))
    t.append(
        FaultInjected(
            2,
            30.0,
            kind="rate_limit",
            channel="http",
            target="api.example.com",
            index=1,
            fault=1,
            detail={"status": 429, "retry_after": 5.0},
        )
    )
    t.append(
        ToolResult(2, 30.0, tool="api.example.com", index=1, ok=False, status=429, channel="http")
    )
    t.append(ToolCall(3, 35.0, tool="search", index=2, args={"q": "b"}))
    t.append(ToolResult(3, 35.5, tool="search", index=2, ok=True, output=["r"]))
    t.append(ModelCall(4, 36.0, model="m", index=1, input="hi"))
    t.append(
        FaultInjected(
            4,
            36.0,
            kind="timeout",
            channel="model",
            target="m",
            index=1,
            fault=0,
            detail={"seconds": 2.0},
        )
    )
    t.append(ModelResult(4, 38.0, model="m", index=1, ok=False, error_type="TimeoutError"))
    t.append(ModelCall(5, 38.0, model="m", index=2, input="hi"))
    t.append(ModelResult(5, 39.0, model="m", index=2, ok=True, output="done", tokens=5))
    t.append(RunEnded(5, 39.5, status="completed"))
    return t


def test_tool_calls_filter_by_tool_and_channel(run_trace):
    assert [(c.tool, c.index) for c in run_trace.tool_calls()] == [
        ("search", 1),
        ("api.example.com", 1),
        ("search", 2),
    ]
    assert [c.index for c in run_trace.tool_calls("search")] == [1, 2]
    assert [c.tool for c in run_trace.tool_calls(channel="http")] == ["api.example.com"]
    assert [c.index for c in run_trace.tool_calls(channel="tool")] == [1, 2]
    assert run_trace.tool_calls("search", channel="http") == []
    assert run_trace.tool_calls("nope") == []


def test_tool_results_model_calls_and_results(run_trace):
    assert [r.ok for r in run_trace.tool_results("search")] == [False, True]
    assert len(run_trace.tool_results()) == 3
    assert [c.index for c in run_trace.model_calls()] == [1, 2]
    assert [r.tokens for r in run_trace.model_results()] == [None, 5]


def test_faults_filter_by_kind_and_fault_counts_in_first_seen_order(run_trace):
    assert [f.target for f in run_trace.faults("timeout")] == ["search", "m"]
    assert [f.kind for f in run_trace.faults()] == ["timeout", "rate_limit", "timeout"]
    assert run_trace.faults("latency") == []
    assert list(run_trace.fault_counts().items()) == [("timeout", 2), ("rate_limit", 1)]


def test_errors_are_failed_tool_http_and_model_results(run_trace):
    errors = run_trace.errors()
    assert [type(e).__name__ for e in errors] == ["ToolResult", "ToolResult", "ModelResult"]
    assert all(not e.ok for e in errors)


def test_tail_steps_and_elapsed(run_trace):
    assert run_trace.tail(2) == list(run_trace.events[-2:])
    assert run_trace.tail(100) == list(run_trace.events)
    assert run_trace.tail(0) == []
    assert run_trace.tail(-3) == []
    assert run_trace.steps == 5
    assert run_trace.elapsed == 39.5
    assert len(run_trace) == 15
    assert isinstance(run_trace[-1], RunEnded)
    assert Trace().steps == 0 and Trace().elapsed == 0.0 and Trace().tail() == []


def test_of_type_and_budget_exhausted():
    t = Trace([Step(1, 0.0), BudgetExhaustedEvent(2, 1.0, budget="max_steps", limit=1, count=2)])
    assert [e.step for e in t.of_type(Step)] == [1]
    assert [b.budget for b in t.budget_exhausted()] == ["max_steps"]


def test_schedule_lists_each_fault_as_plain_data(run_trace):
    assert run_trace.schedule() == [
        {
            "channel": "tool",
            "target": "search",
            "index": 1,
            "kind": "timeout",
            "fault": 0,
            "detail": {"seconds": 30.0},
        },
        {
            "channel": "http",
            "target": "api.example.com",
            "index": 1,
            "kind": "rate_limit",
            "fault": 1,
            "detail": {"status": 429, "retry_after": 5.0},
        },
        {
            "channel": "model",
            "target": "m",
            "index": 1,
            "kind": "timeout",
            "fault": 0,
            "detail": {"seconds": 2.0},
        },
    ]
    # The schedule is a copy: editing it cannot rewrite the recorded trace.
    run_trace.schedule()[0]["detail"]["seconds"] = 1.0
    assert run_trace.faults()[0].detail == {"seconds": 30.0}
    # It survives the JSON round-trip unchanged.
    assert Trace.from_json(run_trace.to_json()).schedule() == run_trace.schedule()


def test_append_returns_the_event_and_events_is_a_snapshot():
    t = Trace()
    e = Step(1, 0.0, label="a")
    assert t.append(e) is e
    events = t.events
    t.append(Step(2, 1.0))
    assert len(events) == 1 and len(t) == 2
    assert list(t) == [e, Step(2, 1.0)]


def test_describe_is_one_line_without_empty_fields():
    line = ToolCall(3, 1.5, tool="search", index=2, args={}).describe()
    assert line.startswith("#3")
    assert "ToolCall(" in line and "tool='search'" in line and "index=2" in line
    assert "args" not in line and "\n" not in line


# -- hypothesis: arbitrary event sequences round-trip ------------------------------------

_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_json = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
_json_dicts = st.dictionaries(st.text(max_size=6), _json, max_size=3)

_BY_ANNOTATION = {
    "int": st.integers(min_value=0, max_value=10**6),
    "float": st.floats(min_value=0, max_value=1e6, allow_nan=False),
    "str": st.text(max_size=10),
    "bool": st.booleans(),
    "str | None": st.none() | st.text(max_size=10),
    "int | None": st.none() | st.integers(min_value=0, max_value=10**6),
    "dict[str, Any]": _json_dicts,
    "Any": _json,
}


def _event_strategy(cls: type[Event]) -> st.SearchStrategy[Event]:
    kwargs = {name: _BY_ANNOTATION[kind] for name, kind in cls.field_types.items()}
    return st.builds(cls, **kwargs)


_any_event = st.one_of([_event_strategy(cls) for _, cls in sorted(EVENT_TYPES.items())])


@settings(max_examples=60, deadline=None)
@given(events=st.lists(_any_event, max_size=12), meta=_json_dicts)
def test_arbitrary_event_sequences_round_trip(events, meta):
    trace = Trace(events, meta=meta)
    back = Trace.from_json(trace.to_json())
    assert back == trace
    assert [type(e) for e in back] == [type(e) for e in events]


def test_subscribers_see_each_event_as_it_is_appended_and_can_leave():
    from pytest_agentchaos.trace import Detection, Step

    trace = Trace()
    seen: list[str] = []

    def detector(event):
        seen.append(event.type_name)
        if isinstance(event, Step) and event.label == "loop":
            trace.append(Detection(event.step, event.t, detector="test", kind="loop"))

    unsubscribe = trace.subscribe(detector)
    trace.append(Step(1, 0.0, label="loop"))
    assert seen == ["Step", "Detection"]
    assert [e.type_name for e in trace] == ["Step", "Detection"]
    unsubscribe()
    trace.append(Step(2, 0.0))
    assert seen == ["Step", "Detection"] and len(trace) == 3
