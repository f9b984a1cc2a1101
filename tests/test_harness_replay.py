"""``harness.replay``: reading what ``--chaos-replay`` names (:func:`load_source`), a recorded
run (:meth:`ReplaySource.recorded`) and where a replay's calls leave the recorded ones
(:class:`Divergence`)."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.harness.replay import Divergence, Recorded, load_source
from pytest_agentchaos.inject import Chaos
from pytest_agentchaos.profiles import Budgets
from pytest_agentchaos.trace import Trace
from pytest_agentchaos.trace.events import (
    Event,
    FaultInjected,
    ModelCall,
    ModelResult,
    RunStarted,
    Step,
    ToolCall,
    ToolResult,
)

TEST = "test_agent.py::test_agent"
META = {"seed": 11, "profile": "flaky", "test": TEST, "budgets": {"max_tool_calls": 9}}


def events() -> list[Event]:
    """A small recorded run: two tool calls (the second timed out), an HTTP call, a model call."""
    return [
        RunStarted(step=0, t=0.0, test=TEST, seed=11, profile="flaky"),
        ToolCall(step=1, t=0.0, tool="search", index=1, args={"q": "a"}),
        ToolResult(step=1, t=0.0, tool="search", index=1, output="found a"),
        ToolCall(step=2, t=0.0, tool="search", index=2, args={"q": "b"}),
        FaultInjected(
            step=2, t=0.0, kind="timeout", target="search", index=2, detail={"seconds": 30.0}
        ),
        ToolResult(step=2, t=30.0, tool="search", index=2, ok=False, error_type="InjectedTimeout"),
        ToolCall(step=3, t=30.0, tool="GET https://api.x/y", index=1, args={}, channel="http"),
        ToolResult(step=3, t=30.0, tool="GET https://api.x/y", index=1, channel="http"),
        ModelCall(step=4, t=30.0, model="llm", index=1, input=[{"role": "user", "content": "hi"}]),
        ModelResult(step=4, t=30.0, model="llm", index=1, output="hello"),
    ]


def write_trace(path: Path, evs: list[Event] | None = None, **meta: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Trace(events() if evs is None else evs, meta={**META, **meta}).write(path)
    return path


def write_json(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def report_dir(root: Path) -> Path:
    """A report dir as ``--chaos-report-dir`` writes it: two traces named by the index (and a
    plain test without one)."""
    out = root / "out"
    write_trace(out / "traces" / "a.json")
    write_trace(out / "traces" / "b.json", test="test_agent.py::test_b", seed=12)
    write_json(
        out / "index.json",
        {
            "format": 1,
            "session_seed": 5,
            "profile_option": None,
            "runs": 3,
            "tests": [
                {"node_id": TEST, "trace": "traces/a.json"},
                {"node_id": "test_agent.py::test_b", "trace": "traces/b.json"},
                {"node_id": "test_agent.py::test_plain", "trace": None},
            ],
        },
    )
    return out


def error(exc: pytest.ExceptionInfo[ChaosConfigError]) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


# -- load_source -------------------------------------------------------------------------------


def test_a_trace_file_is_a_source_of_its_one_test(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.json", session_seed=3, profile_option="flaky,none", runs=2)
    source = load_source("t.json", tmp_path)
    assert source.path == path
    assert source.traces == {TEST: path}
    assert source.meta == {"session_seed": 3, "profile_option": "flaky,none", "runs": 2}
    assert TEST in source and "test_agent.py::test_b" not in source


def test_a_report_dir_and_its_index_are_the_same_source(tmp_path: Path) -> None:
    out = report_dir(tmp_path)
    for raw in ("out", "out/index.json", str(out), str(out / "index.json")):
        source = load_source(raw, tmp_path)
        assert source.path == out / "index.json"
        assert source.traces == {
            TEST: out / "traces" / "a.json",
            "test_agent.py::test_b": out / "traces" / "b.json",
        }
        assert source.meta == {"session_seed": 5, "runs": 3}  # a None profile option is left out
        assert "test_agent.py::test_plain" not in source


def test_a_path_under_the_home_directory_is_expanded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    out = report_dir(tmp_path)
    assert load_source("~/out", tmp_path / "elsewhere").path == out / "index.json"
    assert load_source("~/out/index.json", tmp_path / "elsewhere").path == out / "index.json"
    # only a leading ~ is the home directory
    write_json(tmp_path / "elsewhere" / "a~" / "out.json", {"a": 1})
    with pytest.raises(ChaosConfigError) as exc:
        load_source("a~/out.json", tmp_path / "elsewhere")
    assert error(exc).startswith(f"--chaos-replay: {tmp_path}/elsewhere/a~/out.json: "), exc


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("object.json", {"a": 1}, "neither a pytest-agentchaos trace nor a report index"),
        ("list.json", [], "neither a pytest-agentchaos trace nor a report index"),
        ("null.json", None, "neither a pytest-agentchaos trace nor a report index"),
        ("tests.json", {"tests": "all"}, "neither a pytest-agentchaos trace nor a report index"),
        ("v2.json", {**Trace().to_dict(), "meta": META, "format": 2}, "trace format 2 is not "
         "supported (expected 1)"),
        ("index.json", {"format": "1", "tests": []}, "index format '1' is not supported "
         "(expected 1)"),
        ("true.json", {**Trace().to_dict(), "meta": META, "format": True}, "trace format True "
         "is not supported (expected 1)"),
        ("float.json", {**Trace().to_dict(), "meta": META, "format": 1.0}, "trace format 1.0 "
         "is not supported (expected 1)"),
        ("index-true.json", {"format": True, "tests": []}, "index format True is not "
         "supported (expected 1)"),
        ("no-traces.json", {"tests": [{"node_id": TEST}]}, "the index names no trace file "
         "(traces not written)"),
        ("empty-trace.json", {"tests": [{"node_id": TEST, "trace": ""}]}, "the index names no "
         "trace file (traces not written)"),
        ("no-id.json", {"tests": [{"trace": "a.json"}]}, "tests[0] is not a test entry with a "
         "node_id"),
        ("no-test.json", {"events": [], "meta": {"seed": 1}}, "the trace names no test "
         "(meta.test)"),
        ("empty-test.json", {"events": [], "meta": {"test": ""}}, "the trace names no test "
         "(meta.test)"),
        ("no-meta.json", {"events": []}, "the trace names no test (meta.test)"),
    ],
)  # fmt: skip
def test_a_foreign_file_is_one_line_naming_it(
    tmp_path: Path, name: str, content: object, problem: str
) -> None:
    path = write_json(tmp_path / name, content)
    with pytest.raises(ChaosConfigError) as exc:
        load_source(name, tmp_path)
    assert error(exc) == f"--chaos-replay: {path}: {problem}"


def test_a_path_that_cannot_be_read_as_json_is_one_line_naming_it(tmp_path: Path) -> None:
    cases = {
        "": "--chaos-replay: expected a trace file or a report dir, got an empty path",
        "  ": "--chaos-replay: expected a trace file or a report dir, got an empty path",
        "gone.json": f"--chaos-replay: {tmp_path}/gone.json: no such file",
        "gone/index.json": f"--chaos-replay: {tmp_path}/gone/index.json: no such file",
        "dir": f"--chaos-replay: {tmp_path}/dir: a directory without index.json (not a report dir)",
        "bad.json": f"--chaos-replay: {tmp_path}/bad.json: not JSON (line 3, column 1: "
        "Expecting ',' delimiter)",
        "latin1.json": f"--chaos-replay: {tmp_path}/latin1.json: cannot read it: 'utf-8' codec "
        "can't decode byte 0xe9 in position 4: invalid continuation byte",
    }
    (tmp_path / "dir").mkdir()
    (tmp_path / "bad.json").write_text('{"events": [],\n "meta": {}\n')
    (tmp_path / "latin1.json").write_bytes(b'"caf\xe9"')
    for raw, expected in cases.items():
        with pytest.raises(ChaosConfigError) as exc:
            load_source(raw, tmp_path)
        assert error(exc) == expected, raw


def test_the_traces_of_an_index_are_read_only_when_their_test_runs(tmp_path: Path) -> None:
    out = report_dir(tmp_path)
    (out / "traces" / "b.json").write_text("garbage")
    source = load_source("out", tmp_path)
    assert source.recorded(TEST).seed == 11
    with pytest.raises(ChaosConfigError) as exc:
        source.recorded("test_agent.py::test_b")
    assert error(exc).startswith(f"--chaos-replay: {out}/traces/b.json: not JSON (line 1, ")


def test_a_source_reads_from_the_dirs_holding_its_files(tmp_path: Path) -> None:
    out = report_dir(tmp_path)
    source = load_source("out", tmp_path)
    assert source.reads_from(out) and source.reads_from(tmp_path)
    assert source.reads_from(out / "traces")  # a trace dir holding its traces
    assert not source.reads_from(tmp_path / "other")
    single = load_source("out/traces/a.json", tmp_path)
    assert single.reads_from(out) and single.reads_from(out / "traces")
    assert not single.reads_from(tmp_path / "out2")
    (tmp_path / "link").symlink_to(out)
    assert load_source("link", tmp_path).reads_from(out)  # the same dir by another name


# -- ReplaySource.recorded ---------------------------------------------------------------------


def test_a_recorded_run_holds_its_seed_profile_budgets_schedule_and_calls(
    tmp_path: Path,
) -> None:
    path = write_trace(tmp_path / "t.json")
    recorded = load_source(str(path), tmp_path).recorded(TEST)
    assert recorded == Recorded(
        test=TEST,
        seed=11,
        profile="flaky",
        budgets=Budgets(max_tool_calls=9),
        schedule=[
            {
                "channel": "tool",
                "target": "search",
                "index": 2,
                "kind": "timeout",
                "fault": 0,
                "detail": {"seconds": 30.0},
            }
        ],
        calls={
            ("tool", "search", 1): '{"q": "a"}',
            ("tool", "search", 2): '{"q": "b"}',
            ("http", "GET https://api.x/y", 1): "{}",
            ("model", "llm", 1): '[{"content": "hi", "role": "user"}]',
        },
        order=[
            ("tool", "search", 1),
            ("tool", "search", 2),
            ("http", "GET https://api.x/y", 1),
            ("model", "llm", 1),
        ],
        source=path,
    )


def test_a_trace_without_budgets_replays_without_them(tmp_path: Path) -> None:
    meta = {k: v for k, v in META.items() if k != "budgets"}
    path = tmp_path / "t.json"
    Trace(events(), meta=meta).write(path)
    assert load_source(str(path), tmp_path).recorded(TEST).budgets is None
    write_trace(path, budgets={})
    assert load_source(str(path), tmp_path).recorded(TEST).budgets == Budgets()


def bad_trace(tmp_path: Path, data: dict[str, Any]) -> str:
    """The one-line error of replaying ``data`` (an index names it as TEST's trace)."""
    write_json(tmp_path / "traces" / "t.json", data)
    write_json(tmp_path / "index.json", {"tests": [{"node_id": TEST, "trace": "traces/t.json"}]})
    source = load_source(str(tmp_path), tmp_path)
    with pytest.raises(ChaosConfigError) as exc:
        source.recorded(TEST)
    return error(exc)


GOOD = Trace(events(), meta=META).to_dict()


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"meta": META}, "not a pytest-agentchaos trace (no 'events')"),
        ({**GOOD, "format": 3}, "unsupported trace format 3 (expected 1)"),
        ({**GOOD, "events": [{"step": 0}]}, "trace event #0 is not an object with a 'type'"),
        ({**GOOD, "events": ["RunStarted"]}, "trace event #0 is not an object with a 'type'"),
        (
            {**GOOD, "events": [{"type": "Nope"}]},
            "trace event #0 has unknown type 'Nope'; known: *",
        ),
        (
            {**GOOD, "events": [{"type": "Step", "step": 1, "t": 0, "color": "red"}]},
            "trace event #0 (Step) has unknown keys ['color']",
        ),
        ({**GOOD, "events": [{"type": "Step"}]}, "trace event #0 (Step): *missing*"),
        (
            {**GOOD, "meta": {k: v for k, v in META.items() if k != "seed"}},
            "the trace's meta has no seed and profile",
        ),
        ({**GOOD, "meta": {**META, "seed": True}}, "the trace's meta has no seed and profile"),
        ({**GOOD, "meta": {**META, "seed": "11"}}, "the trace's meta has no seed and profile"),
        ({**GOOD, "meta": {**META, "profile": None}}, "the trace's meta has no seed and profile"),
        (
            {**GOOD, "meta": {**META, "budgets": {"max_steps": 0}}},
            "meta: budgets: max_steps: must be > 0, got 0",
        ),
        (
            {**GOOD, "meta": {**META, "budgets": {"max_naps": 1}}},
            "meta: budgets: unknown budget 'max_naps'; allowed: *",
        ),
    ],
)
def test_a_corrupt_trace_is_one_line_naming_it(
    tmp_path: Path, data: dict[str, Any], problem: str
) -> None:
    import fnmatch

    text = bad_trace(tmp_path, data)
    prefix = f"--chaos-replay: {tmp_path}/traces/t.json: "
    assert text.startswith(prefix), text
    assert fnmatch.fnmatchcase(text[len(prefix) :], problem.replace("[", "[[]")), text


@pytest.mark.parametrize("version", [True, 1.0], ids=["true", "float"])
def test_a_trace_an_index_names_with_a_non_integer_format_is_refused(
    tmp_path: Path, version: object
) -> None:
    text = bad_trace(tmp_path, {**GOOD, "format": version})
    assert text.startswith(f"--chaos-replay: {tmp_path}/traces/t.json: "), text
    assert f"format {version!r} " in text, text


@pytest.mark.parametrize(
    ("fault", "problem"),
    [
        ({"kind": "gremlin"}, "kind: unknown fault kind 'gremlin'; allowed: *, timeout"),
        (
            {"kind": "timeout", "detail": {"seconds": "soon"}},
            "detail.seconds: expected a finite number, got 'soon'",
        ),
        ({"kind": "timeout", "index": 0}, "index: must be >= 1, got 0"),
    ],
    ids=["unknown-kind", "bad-detail", "index-0"],
)
def test_a_recorded_fault_that_cannot_be_replayed_is_one_line_naming_it(
    tmp_path: Path, fault: dict[str, Any], problem: str
) -> None:
    import fnmatch

    evs = [e.to_dict() for e in events()]
    (i,) = [n for n, e in enumerate(evs) if e["type"] == "FaultInjected"]
    evs[i] = {**evs[i], **fault}
    text = bad_trace(tmp_path, {**GOOD, "events": evs})
    prefix = f"--chaos-replay: {tmp_path}/traces/t.json: its recorded faults: schedule[0]: "
    assert text.startswith(prefix), text
    assert fnmatch.fnmatchcase(text[len(prefix) :], problem), text


# -- Divergence --------------------------------------------------------------------------------


def recorded_run(tmp_path: Path, evs: list[Event] | None = None) -> Recorded:
    path = write_trace(tmp_path / "rec.json", evs)
    return load_source(str(path), tmp_path).recorded(TEST)


def watch(recorded: Recorded, evs: Sequence[Event]) -> str | None:
    live = Trace()
    divergence = Divergence(recorded, live.subscribe)
    for event in evs:
        live.append(event)
    return divergence.finish()


def test_the_same_calls_do_not_diverge_whatever_the_results(tmp_path: Path) -> None:
    recorded = recorded_run(tmp_path)
    assert watch(recorded, events()) is None
    calls = [e for e in events() if isinstance(e, (ToolCall, ModelCall))]
    assert watch(recorded, calls) is None  # results, faults and times do not matter
    steps = [Step(step=9, t=1.0, label="think"), *reversed(calls)]
    assert watch(recorded, steps) is None  # nor the order of calls to different targets


def test_other_arguments_diverge_at_that_call(tmp_path: Path) -> None:
    recorded = recorded_run(tmp_path)
    evs = events()
    evs[3] = ToolCall(step=2, t=0.0, tool="search", index=2, args={"q": "B"})
    assert watch(recorded, evs) == (
        "at step 2: call 2 of tool 'search' had other arguments: "
        'recorded {"q": "b"}, now {"q": "B"}'
    )
    evs = events()
    evs[8] = ModelCall(step=7, t=0.0, model="llm", index=1, input="hi")
    assert watch(recorded, evs) == (
        "at step 7: call 1 of model 'llm' had other arguments: "
        'recorded [{"content": "hi", "role": "user"}], now "hi"'
    )


def test_a_call_not_recorded_diverges(tmp_path: Path) -> None:
    recorded = recorded_run(tmp_path)
    extra = [
        *events(),
        ToolCall(step=5, t=30.0, tool="search", index=3, args={"q": "a"}),
    ]
    assert watch(recorded, extra) == (
        "at step 5: call 3 of tool 'search' was not made in the recorded run"
    )
    other = [ToolCall(step=1, t=0.0, tool="search", index=1, args={"q": "a"}, channel="http")]
    assert watch(recorded, [*events(), *other]) == (
        "at step 1: call 1 of http 'search' was not made in the recorded run"
    )


def test_fewer_calls_diverge_when_the_replay_ends(tmp_path: Path) -> None:
    recorded = recorded_run(tmp_path)
    assert watch(recorded, events()[:3]) == (
        "it ended without 3 recorded call(s), the first: call 2 of tool 'search'"
    )
    assert watch(recorded, []) == (
        "it ended without 4 recorded call(s), the first: call 1 of tool 'search'"
    )


def test_only_the_first_divergence_is_kept(tmp_path: Path) -> None:
    recorded = recorded_run(tmp_path)
    evs = [
        ToolCall(step=1, t=0.0, tool="search", index=1, args={"q": "x"}),
        ToolCall(step=2, t=0.0, tool="search", index=2, args={"q": "y"}),
    ]  # and then fewer calls: still the first difference
    assert watch(recorded, evs) == (
        "at step 1: call 1 of tool 'search' had other arguments: "
        'recorded {"q": "a"}, now {"q": "x"}'
    )


def test_finish_stops_watching(tmp_path: Path) -> None:
    recorded = recorded_run(tmp_path)
    live = Trace()
    divergence = Divergence(recorded, live.subscribe)
    for event in events():
        live.append(event)
    assert divergence.finish() is None
    live.append(ToolCall(step=9, t=0.0, tool="search", index=3))
    assert divergence.first is None
    assert divergence.finish() is None


def test_long_arguments_are_cut_in_the_message(tmp_path: Path) -> None:
    recorded = recorded_run(
        tmp_path, [ToolCall(step=1, t=0.0, tool="write", index=1, args={"text": "a" * 500})]
    )
    text = watch(
        recorded, [ToolCall(step=1, t=0.0, tool="write", index=1, args={"text": "b" * 500})]
    )
    assert text is not None
    recorded_part, now_part = text.split(", now ")
    assert recorded_part.endswith('{"text": "' + "a" * 147 + "...")
    assert now_part == '{"text": "' + "b" * 147 + "..."


def nothing(**kw: Any) -> None:
    return None


def test_arguments_compare_after_a_json_round_trip(tmp_path: Path) -> None:
    """What a run records (tuples, key order, non-ASCII) equals what its trace file reads back."""
    with Chaos.create(test_id=TEST) as chaos:
        tool = chaos.wrap(nothing, name="tool")
        tool(b={"z": 1, "a": (1, 2)}, a="café ☕", c=None)
        path = tmp_path / "t.json"
        chaos.trace.write(path)
    recorded = load_source(str(path), tmp_path).recorded(TEST)
    with Chaos.create(test_id=TEST, schedule=recorded.schedule) as chaos:
        divergence = Divergence(recorded, chaos.trace.subscribe)
        tool = chaos.wrap(nothing, name="tool")
        tool(a="café ☕", c=None, b={"a": [1, 2], "z": 1})
        assert divergence.finish() is None


def test_an_object_argument_does_not_diverge_by_its_address(tmp_path: Path) -> None:
    class Db:
        pass

    def query(db: Db, sql: str) -> int:
        return 1

    kept = [Db()]  # alive: the replay's Db cannot reuse its address
    with Chaos.create(test_id=TEST) as chaos:
        chaos.wrap(query, name="query")(kept[0], "select 1")
        chaos.trace.write(tmp_path / "t.json")
    assert " object at 0x" in (tmp_path / "t.json").read_text()  # recorded by its repr
    recorded = load_source("t.json", tmp_path).recorded(TEST)
    with Chaos.create(test_id=TEST, schedule=recorded.schedule) as chaos:
        divergence = Divergence(recorded, chaos.trace.subscribe)
        chaos.wrap(query, name="query")(Db(), "select 1")
        assert divergence.finish() is None
    with Chaos.create(test_id=TEST, schedule=recorded.schedule) as chaos:
        divergence = Divergence(recorded, chaos.trace.subscribe)
        chaos.wrap(query, name="query")(Db(), "select 2")  # the rest still counts
        assert (divergence.finish() or "").startswith(
            "at step 1: call 1 of tool 'query' had other arguments: recorded "
        )


@pytest.mark.parametrize(
    ("recorded", "now", "diverges"),
    [
        ("at 0x7f3e2a1b4c50", "at 0x55d1c0ffee00", False),  # an address: masked
        ("id 0xabcdef", "id 0x123456", False),  # 6 hex digits are enough
        ("id 0xabcde", "id 0x12345", True),  # 5 are not
        ("0xABCDEF12", "0xabcdef99", False),
        ("x0x123456", "x0x654321", True),  # not a word of its own
        ("0x123456g", "0x654321g", True),
    ],
)
def test_memory_addresses_are_masked_in_argument_text(
    tmp_path: Path, recorded: str, now: str, diverges: bool
) -> None:
    rec = recorded_run(tmp_path, [ToolCall(step=1, t=0.0, tool="t", index=1, args={"a": recorded})])
    got = watch(rec, [ToolCall(step=1, t=0.0, tool="t", index=1, args={"a": now})])
    assert (got is not None) is diverges, got


# -- the property: a replay of the same calls never diverges, one changed call does ----------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
ARGS = st.dictionaries(st.from_regex(r"[a-z]{1,4}", fullmatch=True), JSON, max_size=3)
CALLS = st.lists(st.tuples(st.sampled_from(["search", "fetch", "book"]), ARGS), max_size=8)
FAULTS = [
    {"kind": "timeout", "probability": 0.3},
    {"kind": "connection_error", "probability": 0.3},
    {"kind": "latency", "seconds": [0.5, 2.0], "probability": 0.3},
]


def masked(args: dict[str, Any]) -> str:
    """Arguments as a replay compares them: memory addresses (0x + 6 or more hex) masked."""
    text = json.dumps(args, sort_keys=True, ensure_ascii=False)
    return re.sub(r"\b0x[0-9a-fA-F]{6,}\b", "0x?", text)


def run_calls(chaos: Chaos, calls: list[tuple[str, dict[str, Any]]]) -> None:
    tools = {name: chaos.wrap(lambda **kw: kw, name=name) for name in ("search", "fetch", "book")}
    for name, args in calls:
        with contextlib.suppress(Exception):  # an injected fault: the agent goes on
            tools[name](**args)


def record_calls(
    directory: Path, seed: int, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[Recorded, Trace]:
    with Chaos.create(seed=seed, faults=FAULTS, test_id=TEST) as chaos:
        run_calls(chaos, calls)
        path = directory / "trace.json"
        chaos.trace.write(path, indent=1)
        trace = chaos.trace
    return load_source(str(path), directory).recorded(TEST), trace


def replay_calls(
    recorded: Recorded, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[str | None, Trace]:
    # the replay draws nothing: another seed and no faults of its own change nothing
    with Chaos.create(seed=recorded.seed + 1, test_id=TEST, schedule=recorded.schedule) as chaos:
        divergence = Divergence(recorded, chaos.trace.subscribe)
        run_calls(chaos, calls)
        return divergence.finish(), chaos.trace


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1), calls=CALLS)
def test_replaying_the_recorded_calls_never_diverges_and_fires_the_same_faults(
    tmp_path: Path, seed: int, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    recorded, original = record_calls(tmp_path, seed, calls)
    diverged, replayed = replay_calls(recorded, calls)
    assert diverged is None
    assert replayed.schedule() == original.schedule()
    assert [(e.tool, e.index, e.ok, e.error_type) for e in replayed.tool_results()] == [
        (e.tool, e.index, e.ok, e.error_type) for e in original.tool_results()
    ]
    assert replayed.elapsed == original.elapsed


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1), calls=CALLS.filter(bool), data=st.data())
def test_changing_one_calls_arguments_diverges_at_exactly_that_call(
    tmp_path: Path, seed: int, calls: list[tuple[str, dict[str, Any]]], data: st.DataObject
) -> None:
    recorded, _ = record_calls(tmp_path, seed, calls)
    k = data.draw(st.integers(0, len(calls) - 1), label="changed call")
    name, args = calls[k]
    new = data.draw(ARGS, label="new arguments")
    assume(masked(new) != masked(args))  # a memory address in text is no difference
    changed = [*calls[:k], (name, new), *calls[k + 1 :]]
    diverged, _ = replay_calls(recorded, changed)
    index = sum(1 for n, _ in calls[: k + 1] if n == name)
    assert diverged is not None
    assert diverged.startswith(
        f"at step {k + 1}: call {index} of tool {name!r} had other arguments: recorded "
    ), diverged
