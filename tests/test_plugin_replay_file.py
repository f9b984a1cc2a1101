"""``--chaos-replay=PATH``: a failure recorded with ``--chaos-report-dir`` (or
``--chaos-trace-dir``) reproduces from its trace after the profile changed; a replay whose
calls differ from the recorded ones says where; bad replay files are one line (issue 16,
item 3)."""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hypothesis.internal.observability  # noqa: F401 - keeps in-process runs fast
import pytest

USAGE = pytest.ExitCode.USAGE_ERROR

SHAKY = """
description = "search times out half the time"

[[faults]]
kind = "timeout"
tools = ["search"]
probability = 0.5
"""

FIXED = """
description = "search was fixed: no faults any more"
"""

SUITE = """
import pytest

def agent(chaos, queries):
    search = chaos.wrap(lambda q: f"found {q}", name="search")
    got = []
    for q in queries:
        try:
            got.append(search(q=q))
        except Exception as exc:
            got.append(f"error {type(exc).__name__}")
    return got

@pytest.mark.chaos("shaky")
def test_one(chaos):
    got = agent(chaos, ["a", "b", "c", "d", "e", "f"])
    assert all(g.startswith("found") for g in got), got

@pytest.mark.chaos("shaky")
def test_two(chaos):
    got = agent(chaos, ["u", "v", "w", "x", "y", "z"])
    assert all(g.startswith("found") for g in got), got

def test_plain():
    pass
"""

#: an agent whose calls come from a file read when it runs: the replay's input may differ
DIVERGING = """
import pathlib
import pytest

@pytest.mark.chaos(faults=[{"kind": "timeout", "tools": ["search"], "nth": [2]}])
def test_agent(chaos):
    search = chaos.wrap(lambda q: f"found {q}", name="search")
    here = pathlib.Path(__file__).parent
    for q in (here / "queries.txt").read_text().split():
        try:
            search(q=q)
        except Exception:
            pass
    assert not (here / "fail").exists(), "asked to fail"
"""


def profile(pytester: pytest.Pytester, name: str, text: str) -> Path:
    path = pytester.path / "chaos_profiles" / f"{name}.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def errors_of(result: pytest.RunResult) -> list[str]:
    """The failing assertions' messages (the agent's results)."""
    return [line for line in result.outlines if line.startswith("E       AssertionError")]


def faults_of(result: pytest.RunResult) -> list[str]:
    """The fault events the failure sections show, with their steps and virtual times."""
    return [line.strip() for line in result.outlines if "FaultInjected(" in line]


def rows_of(result: pytest.RunResult) -> list[str]:
    """The agentchaos summary rows of the failed tests (profile, test seed, faults ...)."""
    return [line for line in result.outlines if line.startswith("FAILED  ")]


def no_traceback(result: pytest.RunResult) -> None:
    text = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in text and "INTERNALERROR" not in text, text


def record(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """Run the suite under ``shaky`` with session seed 1 into ``out``, then fix the profile."""
    profile(pytester, "shaky", SHAKY)
    pytester.makepyfile(test_agent=SUITE)
    recorded = pytester.runpytest("--chaos-seed=1", "--chaos-report-dir=out", *args)
    recorded.assert_outcomes(failed=2, passed=1)
    assert len(faults_of(recorded)) >= 2
    profile(pytester, "shaky", FIXED)
    return recorded


def trace_of(pytester: pytest.Pytester, node_id: str, out: str = "out") -> Path:
    index = json.loads((pytester.path / out / "index.json").read_text(encoding="utf-8"))
    (entry,) = [t for t in index["tests"] if t["node_id"] == node_id]
    return pytester.path / out / str(entry["trace"])


# -- the headline: a recorded failure reproduces after the profile changed -------------------


def test_a_changed_profile_no_longer_fails_but_the_replay_of_its_dir_does(
    pytester: pytest.Pytester,
) -> None:
    recorded = record(pytester)
    again = pytester.runpytest("--chaos-seed=1")
    again.assert_outcomes(passed=3)
    assert not faults_of(again)

    replay = pytester.runpytest("--chaos-replay=out")
    replay.assert_outcomes(failed=2, deselected=1)
    assert errors_of(replay) == errors_of(recorded)
    assert faults_of(replay) == faults_of(recorded)
    assert rows_of(replay) == rows_of(recorded)
    replay.stdout.fnmatch_lines(
        [
            "agentchaos: profile=none seed=1",
            f"agentchaos: replaying the fault decisions recorded in {pytester.path}/out/index.json",
        ]
    )
    # --chaos-seed would draw today's faults: the replay says how to replay it instead
    assert "--chaos-seed" not in replay.stdout.str()
    replay.stdout.fnmatch_lines(
        [f"replayed {pytester.path}/out/index.json: replay with --chaos-replay=*/out/index.json"]
    )
    assert "ReplayDiverged" not in replay.stdout.str()
    assert "diverged" not in replay.stdout.str()
    # a replay's own report dir replays the same again
    pytester.runpytest("--chaos-replay=out", "--chaos-report-dir=again")
    again = pytester.runpytest("--chaos-replay=again")
    again.assert_outcomes(failed=2, deselected=1)
    assert errors_of(again) == errors_of(recorded)
    assert rows_of(again) == rows_of(recorded)


@pytest.mark.parametrize("how", ["trace", "index", "node id"])
def test_a_trace_an_index_or_a_node_id_replays_the_recorded_failure(
    pytester: pytest.Pytester, how: str
) -> None:
    recorded = record(pytester)
    two = "test_agent.py::test_two"
    if how == "trace":
        trace = trace_of(pytester, two).relative_to(pytester.path)
        replay = pytester.runpytest(f"--chaos-replay={trace}")
        replay.assert_outcomes(failed=1, deselected=2)  # the trace records test_two only
    elif how == "index":
        replay = pytester.runpytest(two, "--chaos-replay=out/index.json")
        replay.assert_outcomes(failed=1)
    else:
        replay = pytester.runpytest(two, "--chaos-replay=out")
        replay.assert_outcomes(failed=1)
    (recorded_row,) = [r for r in rows_of(recorded) if two in r]
    assert rows_of(replay) == [recorded_row]
    (error,) = errors_of(replay)
    assert error in errors_of(recorded)
    assert set(faults_of(replay)) <= set(faults_of(recorded))
    assert "diverged" not in replay.stdout.str()


def test_a_replay_path_under_the_home_directory_is_expanded(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = record(pytester)
    monkeypatch.setenv("HOME", str(pytester.path))
    replay = pytester.runpytest("--chaos-replay=~/out")
    replay.assert_outcomes(failed=2, deselected=1)
    assert errors_of(replay) == errors_of(recorded)
    replay.stdout.fnmatch_lines(
        [f"agentchaos: replaying the fault decisions recorded in {pytester.path}/out/index.json"]
    )


def test_the_replay_command_of_a_replayed_failure_reproduces_it(pytester: pytest.Pytester) -> None:
    recorded = record(pytester)
    replay = pytester.runpytest("--chaos-replay=out")
    trace = trace_of(pytester, "test_agent.py::test_one")
    command = f"replay: pytest test_agent.py::test_one --chaos-replay={trace}"
    assert command in replay.outlines
    argv = shlex.split(command.removeprefix("replay: "))
    assert argv[0] == "pytest"
    again = pytester.runpytest(*argv[1:])
    again.assert_outcomes(failed=1)
    assert errors_of(again) == errors_of(recorded)[:1]


def test_the_recorded_budgets_are_replayed_not_the_profiles_new_ones(
    pytester: pytest.Pytester,
) -> None:
    profile(pytester, "tight", "[budgets]\nmax_tool_calls = 2\n")
    pytester.makepyfile(
        test_budget="""
        import pytest

        @pytest.mark.chaos("tight")
        def test_three_calls(chaos):
            tool = chaos.wrap(lambda: 1, name="tool")
            for _ in range(3):
                tool()
        """
    )
    pytester.runpytest("--chaos-report-dir=out").assert_outcomes(failed=1)
    profile(pytester, "tight", "[budgets]\nmax_tool_calls = 10\n")
    pytester.runpytest().assert_outcomes(passed=1)
    replay = pytester.runpytest("--chaos-replay=out")
    replay.assert_outcomes(failed=1)
    replay.stdout.fnmatch_lines(["*hard budget max_tool_calls=2 exhausted*"])


def test_a_budget_the_profile_gained_since_does_not_apply_to_the_replay(
    pytester: pytest.Pytester,
) -> None:
    profile(pytester, "p", '[[faults]]\nkind = "timeout"\ntools = ["search"]\nnth = [1]\n')
    pytester.makepyfile(
        test_b="""
        import pytest

        @pytest.mark.chaos("p")
        def test_b(chaos):
            search = chaos.wrap(lambda q: q, name="search")
            for q in "abcde":
                try:
                    search(q)
                except Exception:
                    pass
        """
    )
    pytester.runpytest("--chaos-report-dir=out").assert_outcomes(passed=1)
    profile(pytester, "p", "[budgets]\nmax_tool_calls = 2\n")
    pytester.runpytest().assert_outcomes(failed=1)  # the new budget stops a normal run
    replay = pytester.runpytest("--chaos-replay=out")
    replay.assert_outcomes(passed=1)
    assert "hard budget" not in replay.stdout.str()
    # the recorded fault fires again, and the harness halts nothing
    replay.stdout.fnmatch_lines(
        ["*survived 1/1; faults fired: timeout:1; halted by the harness: 0"]
    )


def ran(result: pytest.RunResult) -> list[str]:
    """The ids of the tests a ``-v`` run ran."""
    return sorted(re.findall(r"^(test_\S+) (?:PASSED|FAILED)", result.stdout.str(), re.M))


def test_a_replay_of_runs_and_a_matrix_collects_the_recorded_ids(
    pytester: pytest.Pytester,
) -> None:
    profile(pytester, "shaky", SHAKY)
    pytester.makepyfile(
        test_runs="""
        def test_r(chaos):
            search = chaos.wrap(lambda q: q, name="search")
            for q in "abcdef":
                search(q)
        """
    )
    options = ("--chaos-runs=2", "--chaos-profile=shaky,none", "--chaos-seed=5")
    recorded = pytester.runpytest(*options, "--chaos-report-dir=out", "-v")
    ids = ran(recorded)
    assert len(ids) == 4 and any("shaky" in i for i in ids)
    failed = recorded.parseoutcomes().get("failed", 0)
    assert failed >= 1
    profile(pytester, "shaky", FIXED)
    # the session seed, profile option and runs come from the index: the same four ids
    replay = pytester.runpytest("--chaos-replay=out", "-v")
    assert ran(replay) == ids
    assert replay.parseoutcomes().get("failed", 0) == failed
    assert rows_of(replay) == rows_of(recorded)
    # a single run's trace replays that run alone
    one = next(i for i in ids if "shaky" in i)
    single = pytester.runpytest(f"--chaos-replay={trace_of(pytester, one)}", "-v")
    assert ran(single) == [one]
    assert single.parseoutcomes()["deselected"] == 3


GONE = '[[faults]]\nkind = "timeout"\ntools = ["search"]\nnth = [1]\n'
TEST_G = """
def test_g(chaos):
    search = chaos.wrap(lambda q: q, name="search")
    assert search("a") == "a"
"""


def test_a_recording_under_a_since_deleted_profile_option_still_replays(
    pytester: pytest.Pytester,
) -> None:
    gone = profile(pytester, "gone", GONE)
    pytester.makepyfile(test_g=TEST_G)
    recorded = pytester.runpytest("--chaos-profile=gone", "--chaos-report-dir=out")
    recorded.assert_outcomes(failed=1)
    (seed,) = re.findall(r"^profile=gone test seed=(\d+) ", recorded.stdout.str(), re.M)
    gone.unlink()
    replay = pytester.runpytest("--chaos-replay=out")
    assert replay.ret == pytest.ExitCode.TESTS_FAILED, replay.stderr.str()
    no_traceback(replay)
    assert not [line for line in replay.errlines if "pytest-agentchaos" in line]
    replay.assert_outcomes(failed=1)
    # the option is not adopted: the replay falls back to `none`, the recorded fault still fires
    replay.stdout.fnmatch_lines(
        [
            "agentchaos: profile=none seed=*",
            "E       pytest_agentchaos.inject.errors.InjectedTimeout: search timed out after 30s",
            f"profile=none test seed={seed} faults fired=1 budgets=none",
        ]
    )


def test_a_recorded_matrix_with_a_since_deleted_profile_still_replays(
    pytester: pytest.Pytester,
) -> None:
    gone = profile(pytester, "gone", GONE)
    pytester.makepyfile(test_g=TEST_G)
    recorded = pytester.runpytest("--chaos-profile=gone,none", "--chaos-report-dir=out")
    recorded.assert_outcomes(failed=1, passed=1)
    gone.unlink()
    replay = pytester.runpytest("--chaos-replay=out")
    assert replay.ret != USAGE, replay.stderr.str()
    replay.stdout.fnmatch_lines(["*InjectedTimeout: search timed out after 30s"])


# -- divergence --------------------------------------------------------------------------------


def diverging(pytester: pytest.Pytester) -> Path:
    pytester.makepyfile(test_div=DIVERGING)
    queries = pytester.path / "queries.txt"
    queries.write_text("a b c")
    pytester.runpytest("--chaos-report-dir=out").assert_outcomes(passed=1)
    return queries


def warning_of(result: pytest.RunResult) -> str:
    found = [line.strip() for line in result.outlines if "ReplayDiverged:" in line]
    assert len(found) == 1, result.stdout.str()
    return found[0]


def test_a_replay_making_the_recorded_calls_does_not_warn(pytester: pytest.Pytester) -> None:
    diverging(pytester)
    replay = pytester.runpytest(
        "--chaos-replay=out", "-W", "error::pytest_agentchaos.errors.ReplayDiverged"
    )
    replay.assert_outcomes(passed=1)
    assert "diverged" not in replay.stdout.str()
    replay.stdout.fnmatch_lines(["*faults fired: timeout:1*"])


@pytest.mark.parametrize(
    ("queries", "where"),
    [
        (
            "z b c",
            "at step 1: call 1 of tool 'search' had other arguments: "
            'recorded {"q": "a"}, now {"q": "z"}',
        ),
        (
            "a b x",
            "at step 3: call 3 of tool 'search' had other arguments: "
            'recorded {"q": "c"}, now {"q": "x"}',
        ),
        ("a", "it ended without 2 recorded call(s), the first: call 2 of tool 'search'"),
        ("a b c d", "at step 4: call 4 of tool 'search' was not made in the recorded run"),
    ],
    ids=["first-call-other-args", "last-call-other-args", "fewer-calls", "extra-call"],
)
def test_a_replay_making_other_calls_warns_where(
    pytester: pytest.Pytester, queries: str, where: str
) -> None:
    diverging(pytester).write_text(queries)
    replay = pytester.runpytest("--chaos-replay=out")
    replay.assert_outcomes(passed=1)
    trace = trace_of(pytester, "test_div.py::test_agent")
    assert warning_of(replay) == (
        "test_div.py:4: ReplayDiverged: pytest-agentchaos: test_div.py::test_agent: "
        f"the replay diverged from {trace}: {where}"
    )


def test_a_diverged_failure_says_so_in_its_section_and_its_new_trace(
    pytester: pytest.Pytester,
) -> None:
    diverging(pytester).write_text("a x c")
    (pytester.path / "fail").write_text("")
    replay = pytester.runpytest("--chaos-replay=out", "--chaos-report-dir=again")
    replay.assert_outcomes(failed=1)
    trace = trace_of(pytester, "test_div.py::test_agent")
    where = (
        "at step 2: call 2 of tool 'search' had other arguments: "
        'recorded {"q": "b"}, now {"q": "x"}'
    )
    replay.stdout.fnmatch_lines(
        [
            "*- agentchaos -*",
            f"the replay diverged from {trace}: {where}",
            "profile=none test seed=* faults fired=1 budgets=none",
            f"replay: pytest test_div.py::test_agent --chaos-replay={trace}",
        ]
    )
    assert where in warning_of(replay)
    written = json.loads(trace_of(pytester, "test_div.py::test_agent", "again").read_text())
    assert written["meta"]["replay_diverged"] == where
    assert written["meta"]["replay_of"] == str(trace)


LATER = """
import pytest

@pytest.mark.chaos
def test_later(chaos):
    pass
"""


def test_a_divergence_turned_into_an_error_fails_the_test_not_the_session(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_later=LATER)  # recorded too; it runs after test_div.py
    queries = pytester.path / "queries.txt"
    pytester.makepyfile(test_div=DIVERGING)
    queries.write_text("a b c")
    pytester.runpytest("--chaos-report-dir=out", "-p", "no:randomly").assert_outcomes(passed=2)
    queries.write_text("a x c")
    for how in (("-W", "error::pytest_agentchaos.errors.ReplayDiverged"), ("-W", "error")):
        replay = pytester.runpytest("--chaos-replay=out", "-p", "no:randomly", "-rA", *how)
        no_traceback(replay)
        assert replay.ret == pytest.ExitCode.TESTS_FAILED
        replay.assert_outcomes(failed=1, passed=1)  # the session goes on
        trace = trace_of(pytester, "test_div.py::test_agent")
        where = (
            "at step 2: call 2 of tool 'search' had other arguments: "
            'recorded {"q": "b"}, now {"q": "x"}'
        )
        replay.stdout.fnmatch_lines(
            [
                "E   *ReplayDiverged: pytest-agentchaos: test_div.py::test_agent: "
                f"the replay diverged from {trace}: {where}",
                "*- agentchaos -*",
                f"the replay diverged from {trace}: {where}",
                "FAILED test_div.py::test_agent - *ReplayDiverged*",
            ]
        )
        assert "PASSED test_later.py::test_later" in replay.outlines
        assert "warnings summary" not in replay.stdout.str()


def test_a_divergence_under_w_error_of_a_test_that_failed_keeps_its_own_error(
    pytester: pytest.Pytester,
) -> None:
    diverging(pytester).write_text("a x c")
    (pytester.path / "fail").write_text("")
    replay = pytester.runpytest(
        "--chaos-replay=out", "-W", "error::pytest_agentchaos.errors.ReplayDiverged"
    )
    no_traceback(replay)
    replay.assert_outcomes(failed=1)
    replay.stdout.fnmatch_lines(
        [
            "E       AssertionError: asked to fail",
            "*- agentchaos -*",
            "the replay diverged from *: at step 2: call 2 of tool 'search' had other arguments:*",
        ]
    )
    assert "ReplayDiverged" not in replay.stdout.str()


# -- bad input: one line, exit code 4 -------------------------------------------------------------


def one_usage_line(result: pytest.RunResult, expected: str) -> None:
    assert result.ret == USAGE, result.stdout.str()
    no_traceback(result)
    errors = [line for line in result.errlines if line.strip()]
    assert errors == [f"ERROR: pytest-agentchaos: --chaos-replay: {expected}"]


def write(pytester: pytest.Pytester, name: str, data: object) -> Path:
    path = pytester.path / name
    text = data if isinstance(data, str) else json.dumps(data)
    path.write_text(text, encoding="utf-8")
    return path


TRACE = {
    "format": 1,
    "meta": {"seed": 7, "profile": "none", "test": "test_x.py::test_x", "budgets": {}},
    "events": [{"type": "RunStarted", "step": 0, "t": 0.0}],
}
INDEX = {"format": 1, "session_seed": 1, "tests": [{"node_id": "test_x.py::test_x"}]}
TRACES = {**INDEX, "tests": [{"node_id": "test_x.py::test_x", "trace": "t.json"}]}


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("not.json", '{"meta": 1,\n  "events": [}', "not JSON (line 2, column 14: *)"),
        ("empty.json", "", "not JSON (line 1, column 1: Expecting value)"),
        ("object.json", {"a": 1}, "neither a pytest-agentchaos trace nor a report index"),
        ("list.json", [], "neither a pytest-agentchaos trace nor a report index"),
        ("tests-not-a-list.json", {"tests": {}}, "neither *"),
        ("trace-v2.json", {**TRACE, "format": 2}, "trace format 2 is not supported (expected 1)"),
        ("index-v9.json", {**INDEX, "format": 9}, "index format 9 is not supported (expected 1)"),
        (
            "trace-true.json",
            {**TRACE, "format": True},
            "trace format True is not supported (expected 1)",
        ),
        (
            "index-true.json",
            {**INDEX, "format": True},
            "index format True is not supported (expected 1)",
        ),
        (
            "no-trace-files.json",
            INDEX,
            "the index names no trace file (traces not written)",
        ),
        (
            "bad-entry.json",
            {"format": 1, "tests": [{"node_id": "a"}, "b"]},
            "tests[1] is not a test entry with a node_id",
        ),
        (
            "no-test.json",
            {**TRACE, "meta": {"seed": 7, "profile": "none"}},
            "the trace names no test (meta.test)",
        ),
        ("meta-not-a-table.json", {**TRACE, "meta": []}, "the trace names no test (meta.test)"),
        # recorded numbers are range-checked like the options that set them (issue 26)
        ("deep.json", "[" * 100_000 + "]" * 100_000, "nested too deeply to be a recording"),
        (
            "digits.json",
            '{"format": 1, "session_seed": ' + "9" * 5000 + ', "tests": []}',
            "not readable JSON: Exceeds the limit (4300 digits) for integer string conversion*",
        ),
        ("runs-lots.json", {**TRACES, "runs": "lots"}, "runs is 'lots', not 1 to 10000"),
        ("runs-huge.json", {**TRACES, "runs": 100_000_000}, "runs is 100000000, not 1 to 10000"),
        ("runs-zero.json", {**TRACES, "runs": 0}, "runs is 0, not 1 to 10000"),
        ("runs-true.json", {**TRACES, "runs": True}, "runs is True, not 1 to 10000"),
        ("runs-float.json", {**TRACES, "runs": 2.0}, "runs is 2.0, not 1 to 10000"),
        (
            "seed-abc.json",
            {**TRACES, "session_seed": "abc"},
            "session_seed is 'abc', not a non-negative integer",
        ),
        (
            "seed-negative.json",
            {**TRACES, "session_seed": -1},
            "session_seed is -1, not a non-negative integer",
        ),
        (
            "seed-float.json",
            {**TRACES, "session_seed": 1.5},
            "session_seed is 1.5, not a non-negative integer",
        ),
        (
            "trace-seed-abc.json",
            {**TRACE, "meta": {**TRACE["meta"], "session_seed": "abc"}},
            "session_seed is 'abc', not a non-negative integer",
        ),
        (
            "trace-runs-huge.json",
            {**TRACE, "meta": {**TRACE["meta"], "runs": 10_001}},
            "runs is 10001, not 1 to 10000",
        ),
        (
            "profile-option.json",
            {**TRACES, "profile_option": 7},
            "profile_option is 7, not a profile name",
        ),
        (
            "nul.json",
            {**INDEX, "tests": [{"node_id": "test_x.py::test_x", "trace": "t\u0000.json"}]},
            "tests[0].trace is not a file name (a NUL byte)",
        ),
    ],
)
def test_a_foreign_replay_file_is_one_line(
    pytester: pytest.Pytester, name: str, content: object, problem: str
) -> None:
    path = write(pytester, name, content)
    result = pytester.runpytest(f"--chaos-replay={name}")
    assert result.ret == USAGE
    no_traceback(result)
    errors = [line for line in result.errlines if line.strip()]
    assert len(errors) == 1, errors
    expected = f"ERROR: pytest-agentchaos: --chaos-replay: {path}: {problem}"
    result.stderr.fnmatch_lines([expected.replace("[", "[[]")])


def test_a_missing_or_empty_path_is_one_line(pytester: pytest.Pytester) -> None:
    one_usage_line(
        pytester.runpytest("--chaos-replay=nowhere/out"),
        f"{pytester.path}/nowhere/out: no such file",
    )
    one_usage_line(
        pytester.runpytest("--chaos-replay= "),
        "expected a trace file or a report dir, got an empty path",
    )


@pytest.mark.parametrize("name", ["reports", "x.json"])
def test_a_directory_that_is_not_a_report_dir_is_one_line(
    pytester: pytest.Pytester, name: str
) -> None:
    (pytester.path / name / "traces").mkdir(parents=True)
    one_usage_line(
        pytester.runpytest(f"--chaos-replay={name}"),
        f"{pytester.path / name}: a directory without index.json (not a report dir)",
    )


def test_an_unreadable_file_is_one_line(pytester: pytest.Pytester) -> None:
    (pytester.path / "latin1.json").write_bytes(b'{"events": ["caf\xe9"]}')
    one_usage_line(
        pytester.runpytest("--chaos-replay=latin1.json"),
        f"{pytester.path}/latin1.json: cannot read it: 'utf-8' codec can't decode byte 0xe9 "
        "in position 16: invalid continuation byte",
    )
    os.symlink("loop.json", pytester.path / "loop.json")  # a link to itself: ELOOP
    result = pytester.runpytest("--chaos-replay=loop.json")
    assert result.ret == USAGE
    no_traceback(result)
    errors = [line for line in result.errlines if line.strip()]
    assert errors == [
        f"ERROR: pytest-agentchaos: --chaos-replay: {pytester.path}/loop.json: cannot read it: "
        "Too many levels of symbolic links"
    ]


def test_a_trace_of_a_test_not_collected_here_lists_what_it_has(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_here="def test_here(chaos):\n    pass\n")
    path = write(pytester, "trace.json", TRACE)
    result = pytester.runpytest("--chaos-replay=trace.json")
    one_usage_line(
        result,
        f"{path}: none of the tests collected here has a recorded run in it (it has 1: "
        "test_x.py::test_x); run pytest from the rootdir the recording ran from",
    )


def test_an_index_of_many_tests_not_collected_here_lists_three(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_here="def test_here(chaos):\n    pass\n")
    tests = [{"node_id": f"t.py::test_{i}", "trace": f"traces/{i}.json"} for i in range(5)]
    path = write(pytester, "index.json", {"format": 1, "tests": tests})
    result = pytester.runpytest(f"--chaos-replay={pytester.path}")
    one_usage_line(
        result,
        f"{path}: none of the tests collected here has a recorded run in it (it has 5: "
        "t.py::test_0, t.py::test_1, t.py::test_2, ...); run pytest from the rootdir the "
        "recording ran from",
    )


def corrupt(
    pytester: pytest.Pytester, change: Callable[[dict[str, Any]], None]
) -> tuple[pytest.RunResult, Path]:
    """Record the suite, corrupt test_one's trace with ``change(data)``, replay the dir."""
    recorded = record(pytester)
    trace = trace_of(pytester, "test_agent.py::test_one")
    data = json.loads(trace.read_text(encoding="utf-8"))
    change(data)
    trace.write_text(json.dumps(data), encoding="utf-8")
    replay = pytester.runpytest("--chaos-replay=out")
    no_traceback(replay)
    # the session goes on: test_two reproduces its recorded failure
    assert errors_of(recorded)[1] in errors_of(replay)
    outcomes = replay.parseoutcomes()
    assert outcomes.get("failed", 0) + outcomes.get("errors", 0) == 2, outcomes
    return replay, trace


def drop_type(data: dict[str, Any]) -> None:
    del data["events"][1]["type"]


def unknown_kind(data: dict[str, Any]) -> None:
    fault = next(e for e in data["events"] if e["type"] == "FaultInjected")
    fault["kind"] = "gremlin"


def test_a_trace_with_an_event_without_type_fails_its_test_naming_the_file(
    pytester: pytest.Pytester,
) -> None:
    replay, trace = corrupt(pytester, drop_type)
    replay.stdout.fnmatch_lines(
        [
            f"*pytest-agentchaos: --chaos-replay: {trace}: "
            "trace event #1 is not an object with a 'type'"
        ]
    )


def one_line_error(replay: pytest.RunResult, line: str) -> None:
    """test_one fails at setup with ``line`` alone: no chained message, no traceback."""
    text = replay.stdout.str()
    assert "During handling of the above exception" not in text
    lines = replay.outlines
    start = lines.index(next(x for x in lines if "ERROR at setup of test_one" in x))
    assert lines[start + 1] == line
    assert lines[start + 2].startswith("====="), lines[start : start + 5]  # its section ends
    # said once; the short summary line repeats it after its own prefix (cut or not by the
    # terminal's width), never as a line of its own
    assert [x for x in lines if x.startswith("pytest-agentchaos:")] == [line]
    replay.stdout.fnmatch_lines(
        ["ERROR test_agent.py::test_one - Failed: pytest-agentchaos: --chaos-replay: *"]
    )


def test_a_corrupt_trace_is_reported_in_one_line(pytester: pytest.Pytester) -> None:
    replay, trace = corrupt(pytester, drop_type)
    replay.assert_outcomes(errors=1, failed=1, deselected=1)
    one_line_error(
        replay,
        f"pytest-agentchaos: --chaos-replay: {trace}: trace event #1 is not an object with a "
        "'type'",
    )


def test_a_trace_with_an_unknown_fault_kind_fails_its_test_naming_the_file(
    pytester: pytest.Pytester,
) -> None:
    replay, trace = corrupt(pytester, unknown_kind)
    replay.assert_outcomes(errors=1, failed=1, deselected=1)
    one_line_error(
        replay,
        f"pytest-agentchaos: --chaos-replay: {trace}: its recorded faults: schedule[0]: kind: "
        "unknown fault kind 'gremlin'; allowed: bad_tool_arguments, connection_error, "
        "corrupt_snapshot, crash, empty_completion, empty_output, error_in_body, garbled_output, "
        "http_error, injected_instruction, latency, lost_reply, malformed_params, "
        "no_finish_reason, paraphrased_output, partial_output, protocol_error, rate_limit, "
        "repeated_output, slow_first_token, stale_output, stream_cut, timeout",
    )


def test_a_trace_file_an_index_names_that_is_gone_or_unreadable_fails_its_test(
    pytester: pytest.Pytester,
) -> None:
    record(pytester)
    one = trace_of(pytester, "test_agent.py::test_one")
    two = trace_of(pytester, "test_agent.py::test_two")
    one.unlink()
    two.write_bytes(b"\xff\xfe")
    replay = pytester.runpytest("--chaos-replay=out")
    no_traceback(replay)
    assert replay.ret == pytest.ExitCode.TESTS_FAILED
    replay.stdout.fnmatch_lines(
        [
            f"*pytest-agentchaos: --chaos-replay: {one}: no such file",
            f"*pytest-agentchaos: --chaos-replay: {two}: cannot read it: 'utf-8' codec *",
        ],
        consecutive=False,
    )


# -- the recording is never overwritten --------------------------------------------------------


def snapshot(directory: Path) -> dict[str, bytes]:
    """The recording's files: what is in ``directory`` but not in its ``replay/`` folder."""
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in directory.rglob("*")
        if p.is_file() and p.relative_to(directory).parts[0] != "replay"
    }


def node_ids(index: Path) -> list[str]:
    return sorted(t["node_id"] for t in json.loads(index.read_text())["tests"])


def test_a_replay_does_not_write_into_the_report_dir_it_reads(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nchaos_report_dir = out\n")
    profile(pytester, "shaky", SHAKY)
    pytester.makepyfile(test_agent=SUITE)
    pytester.runpytest("--chaos-seed=1").assert_outcomes(failed=2, passed=1)
    before = snapshot(pytester.path / "out")
    assert len(before) == 3  # index.json and two traces
    profile(pytester, "shaky", FIXED)
    replay = pytester.runpytest("--chaos-replay=out")
    replay.assert_outcomes(failed=2, deselected=1)
    assert snapshot(pytester.path / "out") == before
    # its own report: the replay/ folder of the report dir, and the summary says so
    own = pytester.path / "out" / "replay"
    replay.stdout.fnmatch_lines(
        [f"agentchaos: replaying {pytester.path / 'out'}*: its report is in {own}"]
    )
    assert node_ids(own / "index.json") == ["test_agent.py::test_one", "test_agent.py::test_two"]
    assert len(list((own / "traces").iterdir())) == 2
    # a trace of it, or the index itself, protects the dir as well
    trace = trace_of(pytester, "test_agent.py::test_one")
    pytester.runpytest(f"--chaos-replay={trace}").assert_outcomes(failed=1, deselected=2)
    assert node_ids(own / "index.json") == ["test_agent.py::test_one"]
    pytester.runpytest("--chaos-replay=out/index.json", "--chaos-report-dir=out")
    assert snapshot(pytester.path / "out") == before
    # replaying the replay's own report: nowhere of its own to write, so nothing is written
    kept = (own / "index.json").read_bytes()
    again = pytester.runpytest("--chaos-replay=out/replay")
    again.stdout.fnmatch_lines(["agentchaos: replaying *: no report written (it would *"])
    assert (own / "index.json").read_bytes() == kept
    assert not (own / "replay").exists()


def files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file()) if directory.exists() else []


def test_a_replay_does_not_overwrite_the_trace_dir_it_reads(pytester: pytest.Pytester) -> None:
    queries = diverging(pytester)
    pytester.runpytest("--chaos-trace-dir=traces").assert_outcomes(passed=1)
    (trace,) = (pytester.path / "traces").iterdir()
    before = trace.read_bytes()
    queries.write_text("a x c")
    pytester.runpytest("--chaos-trace-dir=traces", f"--chaos-replay={trace}").assert_outcomes(
        passed=1, warnings=1
    )
    assert trace.read_bytes() == before
    # the trace dir it reads gives way to the report dir's traces/ folder
    replay = pytester.runpytest(
        "--chaos-trace-dir=traces", "--chaos-report-dir=out2", f"--chaos-replay={trace}"
    )
    replay.assert_outcomes(passed=1, warnings=1)
    assert files(pytester.path / "traces") == [trace] and trace.read_bytes() == before
    out2 = pytester.path / "out2"
    assert [p.relative_to(out2).parts[0] for p in files(out2)] == ["index.json", "traces"]
    # a report dir that holds the recording gives way to its replay/ folder, traces and all
    replay = pytester.runpytest(
        "--chaos-trace-dir=traces2", "--chaos-report-dir=.", f"--chaos-replay={trace}"
    )
    replay.assert_outcomes(passed=1, warnings=1)
    assert files(pytester.path / "traces2") == []
    assert not (pytester.path / "index.json").exists()
    assert trace.read_bytes() == before
    own = pytester.path / "replay"
    assert node_ids(own / "index.json") == ["test_div.py::test_agent"]
    assert len(files(own / "traces")) == 1


# -- pytest-xdist ----------------------------------------------------------------------------------


def test_a_replay_runs_under_xdist(pytester: pytest.Pytester) -> None:
    recorded = record(pytester)
    replay = pytester.runpytest_subprocess("-p", "xdist", "-n", "2", "--chaos-replay=out")
    replay.assert_outcomes(failed=2)
    assert sorted(errors_of(replay)) == sorted(errors_of(recorded))
    assert sorted(rows_of(replay)) == sorted(rows_of(recorded))
    assert "diverged" not in replay.stdout.str()
