"""Run diff (issue 31, item 5): ``python -m pytest_agentchaos diff A.json B.json`` and the pure
functions under it. A run against itself is empty; a planted divergence is found at its event
with the events around it and the fault decisions that differ; traces two real runs wrote
compare; hostile files are one line and exit code 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import hypothesis.internal.observability  # noqa: F401 - keeps in-process runs fast
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.cli import main
from pytest_agentchaos.report.diff import (
    FaultChange,
    TraceFileError,
    describe,
    diff_data,
    diff_lines,
    diff_traces,
    read_trace_file,
)
from pytest_agentchaos.trace.events import (
    FaultInjected,
    RunEnded,
    RunStarted,
    ToolCall,
    ToolResult,
)
from pytest_agentchaos.trace.trace import Trace

ROOT = Path(__file__).resolve().parents[1]


def run_trace(seed: int, fault_on: int | None = None, calls: int = 4) -> dict[str, Any]:
    """A run of an agent that calls ``search`` ``calls`` times; with ``fault_on``, that call
    times out (a fault fires before it) and the agent gives up."""
    events: list[Any] = [RunStarted(0, 0.0, test=f"t.py::test[seed{seed}]", seed=seed,
                                    profile="flaky")]  # fmt: skip
    t = 0.0
    for call in range(1, calls + 1):
        events.append(ToolCall(call, t, tool="search", index=call, args={"q": f"q{call}"}))
        if call == fault_on:
            events.append(FaultInjected(call, t, kind="timeout", target="search", index=call,
                                        detail={"seconds": 30}))  # fmt: skip
            t += 30
            events.append(ToolResult(call, t, tool="search", index=call, ok=False,
                                     error_type="TimeoutError", message="timed out"))  # fmt: skip
            events.append(RunEnded(call, t, status="error", detail={"error": {
                "type": "TimeoutError", "message": "timed out", "where": "t.py:3"}}))  # fmt: skip
            break
        t += 1
        events.append(ToolResult(call, t, tool="search", index=call, output=f"r{call}"))
    else:
        events.append(RunEnded(calls, t))
    meta = {"test": f"t.py::test[seed{seed}]", "seed": seed, "profile": "flaky"}
    return Trace(events, meta=meta).to_dict()


def write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


# --- the pure functions ---------------------------------------------------------------------


def test_a_run_against_itself_is_empty() -> None:
    doc = run_trace(1, fault_on=3)
    found = diff_traces(doc, doc)
    assert found.identical and found.divergence is None and found.faults == []
    assert diff_lines(found)[-1] == "no divergence: the same events and fault decisions"
    assert diff_data(found)["identical"] is True


def test_two_seeds_of_the_same_run_differ_by_nothing_but_their_header() -> None:
    assert diff_traces(run_trace(1), run_trace(2)).identical


def test_a_planted_divergence_is_found_at_its_event_with_its_fault() -> None:
    passing, failing = run_trace(1), run_trace(2, fault_on=3)
    found = diff_traces(passing, failing)
    d = found.divergence
    assert d is not None and d.at == 6  # RunStarted, 2 x (call, result), the 3rd call: 5
    assert d.a is not None and d.a["type"] == "ToolResult" and d.a["ok"] is True
    assert d.b is not None and d.b["type"] == "FaultInjected" and d.b["kind"] == "timeout"
    assert [i for i, _ in d.before] == [3, 4, 5]
    assert [e["type"] for _, e in d.before] == ["ToolCall", "ToolResult", "ToolCall"]
    assert [e["type"] for _, e in d.after_b] == ["ToolResult", "RunEnded"]
    assert found.faults == [
        FaultChange("tool", "search", 3, [], [{"kind": "timeout", "detail": {"seconds": 30}}])
    ]
    assert (found.end_a, found.end_b) == ("completed", "error (TimeoutError: timed out)")
    lines = diff_lines(found, ("pass", "fail"))
    assert lines[0] == ("pass: t.py::test[seed1] seed=1 profile=flaky: 10 events, ended completed")
    assert lines[1] == (
        "fail: t.py::test[seed2] seed=2 profile=flaky: 9 events, ended error (TimeoutError: "
        "timed out)"
    )
    assert lines[2] == "first divergence at event 6:"
    assert lines[3].startswith("  both     3  #2    t=    1.000s ToolCall(")
    assert lines[6] == (
        "> pass     6  #3    t=    3.000s ToolResult(tool='search', index=3, ok=True, "
        "output='r3', channel='tool')"
    )
    assert lines[7].startswith("> fail     6  #3    t=    2.000s FaultInjected(kind='timeout'")
    assert lines[-2:] == [
        "fault decisions that differ (1):",
        "  call 3 of tool 'search': pass no fault; fail timeout {'seconds': 30}",
    ]


def test_a_run_cut_short_diverges_where_it_ended() -> None:
    whole, cut = run_trace(1), run_trace(1)
    cut["events"] = cut["events"][:4]
    d = diff_traces(whole, cut).divergence
    assert d is not None and d.at == 4 and d.b is None
    assert diff_lines(diff_traces(whole, cut))[7] == "> B        4  (the run ended before it)"
    assert diff_traces(whole, cut).end_b == "no RunEnded event (cut short)"


def test_other_decisions_on_the_same_call_are_listed_though_the_events_match() -> None:
    a, b = run_trace(1, fault_on=2), run_trace(1, fault_on=2)
    b["events"][4]["detail"] = {"seconds": 60}
    found = diff_traces(a, b)
    assert found.divergence is not None and found.divergence.at == 4
    assert found.faults[0].a[0]["detail"] == {"seconds": 30}


def test_virtual_time_and_memory_addresses_do_not_make_a_difference() -> None:
    a, b = run_trace(1), run_trace(1)
    for event in b["events"]:
        event["t"] = event["t"] + 0.5
    a["events"][1]["args"] = {"db": "<Db object at 0x7f3e2a1b4c10>"}
    b["events"][1]["args"] = {"db": "<Db object at 0x7f00deadbeef>"}
    assert diff_traces(a, b).identical
    b["events"][1]["args"] = {"db": "<Other object at 0x7f00deadbeef>"}
    assert diff_traces(a, b).divergence is not None


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 6), st.integers(1, 6), st.integers(0, 10))
def test_the_divergence_is_the_first_differing_event(fault: int, calls: int, seed: int) -> None:
    a, b = run_trace(seed, calls=calls), run_trace(seed + 1, fault_on=fault or None, calls=calls)
    found = diff_traces(a, b)
    firsts = [i for i, (x, y) in enumerate(zip(a["events"], b["events"], strict=False))
              if i > 0 and {**x, "t": 0} != {**y, "t": 0}]  # fmt: skip
    if 1 <= fault <= calls:
        assert found.divergence is not None and found.divergence.at == firsts[0]
        assert len(found.faults) == 1
    else:
        assert found.identical and not firsts
    assert diff_traces(b, b).identical


def test_hostile_values_are_shown_as_text_on_one_line() -> None:
    event = {"type": "ToolResult\n<script>", "step": "x", "t": float("nan"),
             "output": "a\nb" * 500, "deep": [[[[[]]]]]}  # fmt: skip
    line = describe(event)
    assert "\n" not in line and len(line) <= 400
    assert line.startswith("#?    t=        ?s 'ToolResult\\n<script>'(output='a\\nb")


# --- files and the command line -------------------------------------------------------------


def test_the_command_prints_the_diff_and_exits_1_or_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write(tmp_path / "a.json", run_trace(1))
    b = write(tmp_path / "b.json", run_trace(2, fault_on=3))
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "first divergence at event 6:" in out
    assert "call 3 of tool 'search': A no fault; B timeout {'seconds': 30}" in out
    assert main(["diff", str(a), str(a)]) == 0
    assert capsys.readouterr().out.endswith("no divergence: the same events and fault decisions\n")
    assert main(["diff", "--json", "--context=1", str(a), str(b)]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["identical"] is False
    assert data["a"] == {"file": str(a), "test": "t.py::test[seed1]", "seed": 1,
                         "profile": "flaky", "events": 10, "ended": "completed"}  # fmt: skip
    assert data["divergence"]["at"] == 6 and data["divergence"]["b"]["kind"] == "timeout"
    assert [e["at"] for e in data["divergence"]["before"]] == [5]
    assert data["faults"] == [{"channel": "tool", "target": "search", "index": 3, "a": [],
                               "b": [{"kind": "timeout", "detail": {"seconds": 30}}]}]  # fmt: skip


def test_python_dash_m_runs_it(tmp_path: Path) -> None:
    a = write(tmp_path / "a.json", run_trace(1))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest_agentchaos", "diff", str(a), str(a)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert "no divergence" in done.stdout
    done = subprocess.run([sys.executable, "-m", "pytest_agentchaos", "diff", str(a)],
                          capture_output=True, text=True, env=env, check=False)  # fmt: skip
    assert done.returncode == 2 and "B.json" in done.stderr  # argparse's usage error


BAD = [
    (b"not json", "not JSON (line 1, column 1: Expecting value)"),
    (b"", "empty, not a trace"),
    (b"   \n", "empty, not a trace"),
    (b"\xff\xfe{}", "not UTF-8 text (byte 0)"),
    (b"[1, 2]", "not a pytest-agentchaos trace (expected an object with 'events', found list)"),
    (b'{"meta": {}}', "not a pytest-agentchaos trace (expected an object with 'events', "
                      "found an object without events)"),
    (b'{"events": {}}', "not a pytest-agentchaos trace (expected an object with 'events', "
                        "found an object without events)"),
    (b'{"format": 2, "events": []}', "trace format 2 is not supported (expected 1)"),
    (b'{"format": "1", "events": []}', "trace format '1' is not supported (expected 1)"),
    (b'{"events": [{"step": 1}]}', "event #0 is not an object with a 'type'"),
    (b'{"events": [1]}', "event #0 is not an object with a 'type'"),
    (b'{"events": [], "meta": 3}', "'meta' is int, expected an object"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply to be a trace"),
    (b'{"events": [], "n": ' + b"9" * 5000 + b"}", "not readable JSON: *"),
]  # fmt: skip


@pytest.mark.parametrize(("content", "problem"), BAD)
def test_a_file_that_is_no_trace_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, problem: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    good = write(tmp_path / "good.json", run_trace(1))
    assert main(["diff", str(good), str(bad)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1
    from fnmatch import fnmatch

    assert fnmatch(lines[0], f"python -m pytest_agentchaos diff: {bad}: {problem}"), lines[0]


def test_missing_files_directories_devices_and_huge_files_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path / "good.json", run_trace(1))
    big = tmp_path / "big.json"
    with big.open("wb") as fh:  # sparse: 3 GiB on paper, nothing on disk
        fh.truncate(3 * 2**30)
    cases = [
        (tmp_path / "nope.json", "no such file"),
        (tmp_path, "is a directory, not a trace file"),
        (Path("/dev/zero"), "is not a regular file"),
        (big, "3.0 GiB is more than a trace may be (256.0 MiB; --max-bytes raises it)"),
    ]
    for path, problem in cases:
        assert main(["diff", str(path), str(good)]) == 2
        err = capsys.readouterr().err
        assert err == f"python -m pytest_agentchaos diff: {path}: {problem}\n"
    assert main(["diff", "--max-bytes=100", str(good), str(good)]) == 2
    assert "more than a trace may be (100 bytes;" in capsys.readouterr().err
    with pytest.raises(TraceFileError, match="NUL|cannot read"):
        read_trace_file("a\0b.json")


def test_bad_options_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["diff", "--context=-1", "a", "b"])
    assert info.value.code == 2
    assert "expected a whole number >= 0, got '-1'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2


def test_a_lone_surrogate_in_an_agents_output_is_escaped_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = run_trace(1)
    b = run_trace(1)
    b["events"][2]["output"] = "\ud800 broken"
    pa, pb = write(tmp_path / "a.json", a), tmp_path / "b.json"
    pb.write_text(json.dumps(b), encoding="utf-8")  # json escapes it as \\ud800
    assert main(["diff", str(pa), str(pb)]) == 1
    assert "broken" in capsys.readouterr().out
    assert main(["diff", "--json", str(pa), str(pb)]) == 1
    assert "\\ud800" in capsys.readouterr().out


# --- two real runs ----------------------------------------------------------------------------


def test_the_traces_of_a_passing_and_a_failing_run_compare(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest
        from pytest_agentchaos.harness.variants import run_seed

        BAD = run_seed(3, "test_agent.py::test_k", 2)

        @pytest.mark.chaos(faults=[{"kind": "timeout", "tools": ["search"], "nth": 2}], runs=2)
        def test_k(chaos):
            search = chaos.wrap(lambda q: "r", name="search")
            search("a")
            if chaos.seed == BAD:  # only run 2 calls again, and times out
                search("b")
        """
    )
    result = pytester.runpytest("--chaos-seed=3", "-p", "no:randomly", "--chaos-report-dir=r")
    result.assert_outcomes(passed=1, failed=1)
    index = json.loads((pytester.path / "r" / "index.json").read_text(encoding="utf-8"))
    by_run = {t["run"]: str(pytester.path / "r" / t["trace"]) for t in index["tests"]}
    assert main(["diff", by_run[1], by_run[1]]) == 0
    found = diff_traces(read_trace_file(by_run[1]), read_trace_file(by_run[2]))
    d = found.divergence
    assert d is not None and d.a is not None and d.b is not None
    assert (d.a["type"], d.b["type"], d.b["index"]) == ("RunEnded", "ToolCall", 2)
    assert [(f.target, f.index, f.a, [x["kind"] for x in f.b]) for f in found.faults] == [
        ("search", 2, [], ["timeout"])
    ]
    assert found.end_b.startswith("error (")


# --- the HTML report's section ----------------------------------------------------------------


def entry(run: int, outcome: str, case: str = "t.py::test", trace: str | None = None) -> Any:
    return {"node_id": f"{case}[seed{run}]", "case": case, "run": run, "profile": "flaky",
            "outcome": outcome, "trace": trace or f"{run}.json", "verdicts": [],
            "metrics": {}}  # fmt: skip


def test_the_html_report_compares_a_cases_first_passing_and_failing_runs() -> None:
    from pytest_agentchaos.report.html import render_html

    docs = {"1.json": run_trace(1), "2.json": run_trace(2, fault_on=3), "3.json": run_trace(3)}
    docs["2.json"]["events"][5]["args"] = {"q": "<script>alert(1)</script>"}
    tests = [entry(3, "passed"), entry(2, "failed"), entry(1, "passed"),
             entry(1, "passed", case="t.py::steady")]  # fmt: skip
    page = render_html({"tests": tests}, lambda e: docs[e["trace"]])
    assert page.count('<details class="run-diff">') == 1  # steady has no failing run
    assert (
        '<span class="node-id">t.py::test</span>@flaky: first divergence at event 5; 1 fault '
        "decision(s) differ</summary><p>pass: <code>t.py::test[seed1]</code> \u00b7 fail: "
        "<code>t.py::test[seed2]</code>"
    ) in page
    assert "call 3 of tool &#x27;search&#x27;: pass no fault; fail timeout" in page
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)" in page

    def broken(e: Any) -> Any:
        if e["trace"] == "2.json":
            raise ValueError("bad\nthing")
        return docs[e["trace"]]

    page = render_html({"tests": tests}, broken)
    assert "@flaky: not compared: ValueError: bad</summary>" in page
    assert "Passing and failing runs compared" not in render_html(
        {"tests": [entry(1, "passed"), entry(2, "passed")]}, lambda e: docs[e["trace"]]
    )


def test_chaos_html_with_runs_shows_the_comparison(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest
        from pytest_agentchaos.harness.variants import run_seed

        BAD = run_seed(3, "test_agent.py::test_k", 2)

        @pytest.mark.chaos(faults=[{"kind": "timeout", "tools": ["search"], "nth": 2}], runs=3)
        def test_k(chaos):
            search = chaos.wrap(lambda q: "r", name="search")
            search("a")
            if chaos.seed == BAD:
                search("b")
        """
    )
    result = pytester.runpytest("--chaos-seed=3", "-p", "no:randomly", "--chaos-html=r.html")
    result.assert_outcomes(passed=2, failed=1)
    page = (pytester.path / "r.html").read_text(encoding="utf-8")
    assert '<section id="run-diffs"><h2>Passing and failing runs compared</h2>' in page
    assert '<span class="node-id">test_agent.py::test_k</span>@none: first divergence at' in page
    assert "call 2 of tool &#x27;search&#x27;: pass no fault; fail timeout" in page


def test_values_nested_nearly_as_deep_as_json_allows_still_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = run_trace(1)
    deep["events"][2]["output"] = json.loads("[" * 900 + "]" * 900)
    other = run_trace(1)
    a = write(tmp_path / "a.json", deep)
    b = write(tmp_path / "b.json", other)
    assert main(["diff", str(a), str(a)]) == 0
    assert main(["diff", str(a), str(b)]) == 1
    assert "first divergence at event 2:" in capsys.readouterr().out
