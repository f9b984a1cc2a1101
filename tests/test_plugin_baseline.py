"""Regression baselines the way a user runs them: ``--chaos-baseline=FILE`` (ini ``chaos_baseline``,
relative to the rootdir) compared with a session, ``--chaos-baseline-save`` writing (merging)
it, ini ``chaos_baseline_tolerances`` loosening the comparison. A regression fails the session
even when every test passed; a bad file or ini line is one usage line before any test runs."""

from __future__ import annotations

import json
import re
from typing import Any

import hypothesis.internal.observability  # noqa: F401 - keeps in-process runs fast
import pytest

SEED = 4
USAGE = pytest.ExitCode.USAGE_ERROR
FAILED = pytest.ExitCode.TESTS_FAILED
ONE = "test_agent.py::test_one@none"
TWO = "test_agent.py::test_two@none"

# AGENT_CALLS: how many tool calls test_one's agent makes (a worse agent makes more);
# AGENT_BREAK=two: test_two fails.
SUITE = """
import os
import pytest

@pytest.mark.chaos(faults=[{"kind": "timeout", "tools": ["s"], "nth": 2}])
def test_one(chaos):
    s = chaos.wrap(lambda: 1, name="s")
    for _ in range(int(os.environ.get("AGENT_CALLS", "3"))):
        try:
            s()
        except TimeoutError:
            pass

def test_two(chaos):
    s = chaos.wrap(lambda: 1, name="s")
    s()
    assert os.environ.get("AGENT_BREAK") != "two", "broken"

def test_plain():
    pass
"""

# test_k fails under the seeds of the runs FAIL_RUNS lists (1-based, comma separated)
FLAKY = """
import os
import pytest
from pytest_agentchaos.harness.variants import run_seed

@pytest.mark.chaos({marker})
def test_k(chaos):
    fail = [int(n) for n in os.environ.get("FAIL_RUNS", "").split(",") if n]
    bad = {{run_seed({seed}, "test_agent.py::test_k", n) for n in fail}}
    assert chaos.seed not in bad, f"bad seed {{chaos.seed}}"
"""


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AGENT_CALLS", "AGENT_BREAK", "FAIL_RUNS"):
        monkeypatch.delenv(name, raising=False)


def run(pytester: pytest.Pytester, *args: str, source: str = SUITE) -> pytest.RunResult:
    pytester.makepyfile(test_agent=source)
    return pytester.runpytest(f"--chaos-seed={SEED}", "-p", "no:randomly", *args)


def save(pytester: pytest.Pytester, *args: str, source: str = SUITE) -> pytest.RunResult:
    result = run(pytester, "--chaos-baseline=baseline.json", "--chaos-baseline-save", *args,
                 source=source)  # fmt: skip
    assert "agentchaos: baseline" in result.stdout.str(), result.stdout.str()
    return result


def cases(pytester: pytest.Pytester, name: str = "baseline.json") -> dict[str, Any]:
    data = json.loads((pytester.path / name).read_text(encoding="utf-8"))
    assert data["kind"] == "pytest-agentchaos baseline" and data["format"] == 1
    found: dict[str, Any] = data["cases"]
    return found


def compare(pytester: pytest.Pytester, *args: str, source: str = SUITE) -> pytest.RunResult:
    return run(pytester, "--chaos-baseline=baseline.json", *args, source=source)


def usage_line(result: pytest.RunResult) -> str:
    """The one line a usage error prints, checked to be alone, with no traceback and no test
    run."""
    assert result.ret == USAGE, result.stdout.str()
    lines = [line for line in result.stderr.lines if line.strip()]
    assert len(lines) == 1, lines
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert not re.search(r"\d+ (passed|failed)", result.stdout.str())
    return lines[0]


def table(result: pytest.RunResult) -> list[list[str]]:
    """The rows of the regressions table (after its header), split into cells."""
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if line.split()[:5] == [
        "case", "metric", "baseline", "now", "limit"])  # fmt: skip
    rows = []
    for line in lines[start + 1 :]:
        if not line.startswith("test_agent.py::"):
            break
        rows.append(line.split(None, 5))
    return rows


# -- save, then compare ----------------------------------------------------------------------


def test_save_then_compare_with_the_same_seed_finds_no_regressions(
    pytester: pytest.Pytester,
) -> None:
    result = save(pytester)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [f"agentchaos: baseline {pytester.path / 'baseline.json'}: saved 2 case(s)"]
    )
    saved = cases(pytester)
    assert sorted(saved) == [ONE, TWO]
    assert saved[ONE] | {"seconds": 0} == {
        "runs": 1, "passed": 1, "pass_rate": 100, "steps": 3, "tool_calls": 3,
        "model_calls": 0, "seconds": 0, "tokens": 0, "steps_to_escape": None, "loops": 0,
        "escaped": 0, "repairs_ok": 0, "repairs_declined": 0, "repairs_failed": 0,
    }  # fmt: skip
    data = json.loads((pytester.path / "baseline.json").read_text(encoding="utf-8"))
    assert data["saved_with"] == {"session_seed": SEED, "profile_option": None}

    result = compare(pytester)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        f"agentchaos: no regressions against baseline {pytester.path / 'baseline.json'} "
        "(2 cases compared)"
    ])  # fmt: skip
    assert cases(pytester) == saved  # comparing never writes the file
    assert "note: the baseline was saved under session seed" not in result.stdout.str()


def test_a_comparison_under_another_seed_says_so(pytester: pytest.Pytester) -> None:
    save(pytester)
    pytester.makepyfile(test_agent=SUITE)
    result = pytester.runpytest(
        f"--chaos-seed={SEED + 1}", "-p", "no:randomly", "--chaos-baseline=baseline.json"
    )
    result.stdout.fnmatch_lines([
        f"note: the baseline was saved under session seed {SEED}, this session's is {SEED + 1}: "
        f"other faults fire, so metrics move (compare with --chaos-seed={SEED})"
    ])  # fmt: skip


def test_a_worse_agent_fails_the_session_though_every_test_passed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    save(pytester)
    monkeypatch.setenv("AGENT_CALLS", "9")
    result = compare(pytester)
    result.assert_outcomes(passed=3)
    assert result.ret == FAILED
    result.stdout.fnmatch_lines([
        f"agentchaos: 2 regressions against baseline {pytester.path / 'baseline.json'} "
        "(2 cases compared)",
        "case * metric * baseline * now * limit * change",
    ])  # fmt: skip
    assert table(result) == [
        [ONE, "steps", "3", "9", "4", "+6 (+200%)"],
        [ONE, "tool_calls", "3", "9", "4", "+6 (+200%)"],
    ]


def test_a_test_that_starts_failing_once_is_inconclusive_for_the_gate(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    save(pytester)
    monkeypatch.setenv("AGENT_BREAK", "two")
    result = compare(pytester)
    result.assert_outcomes(passed=2, failed=1)
    assert result.ret == FAILED  # by the failing test: one run proves no regression
    result.stdout.fnmatch_lines([
        "agentchaos: no regressions against baseline * (2 cases compared)",
        f"pass rate INCONCLUSIVE: {TWO}: 0/1 (0%) vs baseline 1/1 (100%): -100pt, Fisher exact "
        "p=0.5; about 3 runs of each would decide at these rates",
    ])  # fmt: skip


K = "test_agent.py::test_k@none"


def test_the_gate_regresses_a_significant_fall_and_calls_a_chance_one_inconclusive(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = FLAKY.format(marker="runs=12, min_pass_rate=0.5", seed=SEED)
    save(pytester, source=source)
    assert (cases(pytester)[K]["runs"], cases(pytester)[K]["passed"]) == (12, 12)
    monkeypatch.setenv("FAIL_RUNS", "3,7")  # 10/12: within chance of 12/12
    result = compare(pytester, source=source)
    result.assert_outcomes(passed=10, xfailed=2)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        "agentchaos: no regressions against baseline * (1 case compared)",
        f"pass rate INCONCLUSIVE: {K}: 10/12 (83%) vs baseline 12/12 (100%): -16.7pt, Fisher "
        "exact p=0.239; about * runs of each would decide at these rates",
    ])  # fmt: skip
    monkeypatch.setenv("FAIL_RUNS", "1,2,3,4,5,6")  # 6/12: no chance
    result = compare(pytester, source=source)
    assert result.ret == FAILED  # the tests met min_pass_rate; the gate fails the session
    assert table(result) == [[K, "pass_rate", "100%", "50%", "95%", "-50pt"]]
    result.stdout.fnmatch_lines([
        f"pass rate REGRESSED: {K}: 6/12 (50%) vs baseline 12/12 (100%): -50pt, Fisher exact "
        "p=0.00686"
    ])  # fmt: skip


def test_cases_not_run_and_new_cases_are_named_not_compared(
    pytester: pytest.Pytester,
) -> None:
    save(pytester, "-k", "one")
    result = compare(pytester)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        "agentchaos: no regressions against baseline * (1 case compared)",
        f"new, not compared (1): {TWO}",
    ])  # fmt: skip
    save(pytester)
    result = compare(pytester, "-k", "two")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        "agentchaos: no regressions against baseline * (1 case compared)",
        f"not run, not compared (1): {ONE}",
    ])  # fmt: skip


# -- tolerances ------------------------------------------------------------------------------


def test_ini_tolerances_loosen_the_comparison(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nchaos_baseline_tolerances =\n    steps = +500%\n")
    save(pytester)
    monkeypatch.setenv("AGENT_CALLS", "9")
    result = compare(pytester)
    assert result.ret == FAILED  # the other metrics keep their defaults
    assert [row[1] for row in table(result)] == ["tool_calls"]
    pytester.makeini(
        "[pytest]\nchaos_baseline_tolerances =\n    # the agent may take longer now\n"
        "    steps = +500%\n\n    tool-calls: +6\n"
    )
    result = compare(pytester)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["agentchaos: no regressions against baseline * (2 cases compared)"]
    )


def test_pass_rate_off_lets_a_pass_rate_drop_within_min_pass_rate(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = FLAKY.format(marker="runs=12, min_pass_rate=0.5", seed=SEED)
    save(pytester, source=source)
    assert cases(pytester)[K]["pass_rate"] == 100
    monkeypatch.setenv("FAIL_RUNS", "1,2,3,4,5,6")
    result = compare(pytester, source=source)
    result.assert_outcomes(passed=6, xfailed=6)  # failed runs are judged by the pass rate
    assert result.ret == FAILED
    pytester.makeini("[pytest]\nchaos_baseline_tolerances = pass_rate = off\n")
    result = compare(pytester, source=source)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["agentchaos: no regressions against baseline * (1 case compared)"])
    assert "pass rate" not in result.stdout.str()
    pytester.makeini("[pytest]\nchaos_baseline_tolerances = pass_rate = -50pt\n")
    assert compare(pytester, source=source).ret == pytest.ExitCode.OK


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("steps = 20%", "expected +N%, +N or off"),
        ("steps = -20%", "expected +N%, +N or off"),
        ("pass_rate = +5pt", "expected -Npt or off"),
        ("bogus = off", "expected 'metric = value' for a metric of pass_rate, steps"),
        ("steps", "expected 'metric = value'"),
    ],
)
def test_a_bad_tolerance_line_is_a_usage_error(
    pytester: pytest.Pytester, line: str, problem: str
) -> None:
    save(pytester)  # a good baseline: the ini line alone is wrong
    pytester.makeini(f"[pytest]\nchaos_baseline_tolerances =\n    tokens = off\n    {line}\n")
    text = usage_line(compare(pytester))
    assert text.startswith(f"ERROR: pytest-agentchaos: ini chaos_baseline_tolerances: {line!r}: ")
    assert problem in text


def test_a_tolerance_set_twice_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nchaos_baseline_tolerances =\n    steps = +5%\n    steps = +6\n")
    text = usage_line(run(pytester, "--chaos-baseline=baseline.json", "--chaos-baseline-save"))
    assert text == (
        "ERROR: pytest-agentchaos: ini chaos_baseline_tolerances: 'steps = +6': steps is set twice"
    )
    assert not (pytester.path / "baseline.json").exists()


# -- saving merges ---------------------------------------------------------------------------


def test_saving_merges_the_cases_of_each_session(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    save(pytester, "-k", "one").stdout.fnmatch_lines(["agentchaos: baseline *: saved 1 case(s)"])
    first = cases(pytester)
    assert sorted(first) == [ONE]
    save(pytester, "-k", "two")
    both = cases(pytester)
    assert sorted(both) == [ONE, TWO] and both[ONE] == first[ONE]
    monkeypatch.setenv("AGENT_CALLS", "5")
    save(pytester, "-k", "one")  # a case run again is replaced, the others kept
    again = cases(pytester)
    assert again[ONE]["tool_calls"] == 5 and again[TWO] == both[TWO]


# -- where the file is -----------------------------------------------------------------------


def test_the_ini_file_is_relative_to_the_rootdir_the_option_to_the_invocation_dir(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nchaos_baseline = agent-baseline.json\n")
    pytester.makepyfile(test_agent=SUITE)
    elsewhere = pytester.mkdir("elsewhere")
    monkeypatch.chdir(elsewhere)
    target = str(pytester.path / "test_agent.py")
    result = pytester.runpytest(f"--chaos-seed={SEED}", "--chaos-baseline-save", target)
    assert result.ret == pytest.ExitCode.OK
    assert sorted(cases(pytester, "agent-baseline.json")) == [ONE, TWO]
    assert not (elsewhere / "agent-baseline.json").exists()
    result = pytester.runpytest(f"--chaos-seed={SEED}", target)
    result.stdout.fnmatch_lines([
        f"agentchaos: no regressions against baseline {pytester.path / 'agent-baseline.json'} *"
    ])  # fmt: skip
    # the option wins over the ini key, and is relative to where pytest runs
    result = pytester.runpytest(
        f"--chaos-seed={SEED}", "--chaos-baseline=mine.json", "--chaos-baseline-save", target
    )
    assert result.ret == pytest.ExitCode.OK
    assert (elsewhere / "mine.json").is_file()


def test_without_a_baseline_nothing_is_said_of_one(pytester: pytest.Pytester) -> None:
    result = run(pytester)
    assert result.ret == pytest.ExitCode.OK
    assert "agentchaos: baseline" not in result.stdout.str()
    assert "against baseline" not in result.stdout.str()


# -- bad files and options: usage errors before any test runs --------------------------------


def test_a_missing_baseline_is_a_usage_error_naming_it(pytester: pytest.Pytester) -> None:
    text = usage_line(compare(pytester))
    assert text == (
        f"ERROR: pytest-agentchaos: baseline {pytester.path / 'baseline.json'}: no such file "
        "(--chaos-baseline-save writes it)"
    )


def test_a_missing_ini_baseline_is_a_usage_error_naming_it(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nchaos_baseline = baselines/agent.json\n")
    text = usage_line(run(pytester))
    assert f"baseline {pytester.path / 'baselines' / 'agent.json'}: no such file" in text


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"not json\n", "not JSON: Expecting value (line 1 column 1)"),
        (b"", "not JSON: Expecting value (the file is empty)"),
        (b"[]\n", "expected a JSON object, found list"),
        (b'{"kind": "something else"}', "not a pytest-agentchaos baseline"),
        (b"\xff\xfe{}", "not JSON text (UnicodeDecodeError)"),
        (
            b'{"format": 1, "kind": "pytest-agentchaos baseline", "cases": {"t@none": {"runs": 0,'
            b' "pass_rate": 100}}}',
            "case 't@none': 'runs' is 0, expected a whole number from 1 to 10000",
        ),
        (  # an OverflowError and INTERNALERROR before every number was range-checked
            b'{"format": 1, "kind": "pytest-agentchaos baseline", "cases": {"t@none": {"runs": 1,'
            b' "pass_rate": 100, "steps": ' + b"4" * 400 + b"}}}",
            "case 't@none': 'steps' is 44444",
        ),
        (
            b'{"format": 1, "kind": "pytest-agentchaos baseline", "cases": {}, "saved_with": '
            b'{"session_seed": "abc"}}',
            "saved_with.session_seed is 'abc', expected a whole number from 0 to 2**64",
        ),
    ],
    ids=["not-json", "empty", "list", "other-kind", "not-utf8", "bad-case", "huge", "bad-seed"],
)
@pytest.mark.parametrize("saving", [True, False], ids=["save", "compare"])
def test_a_corrupt_baseline_is_a_usage_error_and_left_as_it_is(
    pytester: pytest.Pytester, content: bytes, problem: str, saving: bool
) -> None:
    path = pytester.path / "baseline.json"
    path.write_bytes(content)
    before = path.stat()
    args = ["--chaos-baseline-save"] if saving else []
    text = usage_line(compare(pytester, *args))
    assert text.startswith(f"ERROR: pytest-agentchaos: baseline {path}: ")
    assert problem in text
    assert path.read_bytes() == content
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    assert sorted(p.name for p in pytester.path.iterdir() if "baseline" in p.name) == [
        "baseline.json"
    ]


def test_saving_without_a_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    text = usage_line(run(pytester, "--chaos-baseline-save"))
    assert text == (
        "ERROR: pytest-agentchaos: --chaos-baseline-save: names no file: give "
        "--chaos-baseline=FILE or ini chaos_baseline"
    )


def test_an_empty_baseline_option_is_a_usage_error(pytester: pytest.Pytester) -> None:
    text = usage_line(run(pytester, "--chaos-baseline="))
    assert text == "ERROR: pytest-agentchaos: --chaos-baseline: expected a file, got an empty path"


def test_a_baseline_that_is_a_directory_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.mkdir("baseline.json")
    text = usage_line(compare(pytester, "--chaos-baseline-save"))
    assert text.endswith("baseline.json: cannot read it: Is a directory")


def test_a_baseline_that_cannot_be_saved_is_one_line_and_exit_code_3(
    pytester: pytest.Pytester,
) -> None:
    # its folder is made (as --chaos-html's is), but not under a regular file
    pytester.makefile(".txt", afile="not a folder")
    result = run(pytester, "--chaos-baseline=afile.txt/baseline.json", "--chaos-baseline-save")
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    lines = [line for line in result.stdout.lines if line.startswith("agentchaos: baseline")]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"agentchaos: baseline {pytester.path / 'afile.txt'}")
    assert "cannot write it" in lines[0]
    assert "Traceback" not in result.stdout.str()


def test_a_baseline_is_saved_into_a_folder_made_for_it(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--chaos-baseline=missing/baseline.json", "--chaos-baseline-save")
    assert result.ret == pytest.ExitCode.OK
    assert (pytester.path / "missing" / "baseline.json").is_file()


def test_a_failed_save_is_reported_even_when_the_index_fails_too(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "out" / "index.json").mkdir(parents=True)  # in the way of the file
    pytester.makefile(".txt", afile="not a folder")
    result = run(
        pytester, "--chaos-baseline=afile.txt/baseline.json", "--chaos-baseline-save",
        "--chaos-report-dir=out",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(["agentchaos: cannot write */out/index.json: Is a directory"])
    result.stdout.fnmatch_lines(
        ["agentchaos: baseline */afile.txt/baseline.json: cannot write it*"]
    )


def test_a_tilde_is_the_home_dir(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = pytester.mkdir("home")
    monkeypatch.setenv("HOME", str(home))
    run(pytester, "--chaos-baseline=~/baseline.json", "--chaos-baseline-save")
    assert not (pytester.path / "~").exists()
    assert (home / "baseline.json").is_file()


# -- runs and xdist --------------------------------------------------------------------------


def test_a_case_run_several_times_keeps_its_runs_and_pass_rate(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = (
        FLAKY.format(marker="min_pass_rate=0.5", seed=SEED) + SUITE.split("import pytest", 1)[1]
    )
    monkeypatch.setenv("FAIL_RUNS", "2")
    result = save(pytester, "--chaos-runs=3", source=source)
    result.assert_outcomes(passed=9, xfailed=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*test_k@none: 2/3 runs passed*min_pass_rate 50% ok"])
    saved = cases(pytester)
    assert sorted(saved) == ["test_agent.py::test_k@none", ONE, TWO]
    k = saved["test_agent.py::test_k@none"]
    assert (k["runs"], k["passed"], k["pass_rate"]) == (3, 2, 66.667)
    assert (saved[ONE]["runs"], saved[ONE]["pass_rate"]) == (3, 100)
    assert saved[ONE]["tool_calls"] == 3  # a median over the runs, not a sum
    # the same runs compared: no regression; one more failed run fails min_pass_rate, and
    # the gate, from the counts (not the rounded rates), calls the fall chance
    assert compare(pytester, "--chaos-runs=3", source=source).ret == pytest.ExitCode.OK
    monkeypatch.setenv("FAIL_RUNS", "2,3")
    result = compare(pytester, "--chaos-runs=3", source=source)
    assert result.ret == FAILED
    result.stdout.fnmatch_lines([
        "agentchaos: 1 test(s) below their pass rate rule: the session fails",
        "agentchaos: no regressions against baseline * (3 cases compared)",
        "pass rate INCONCLUSIVE: test_agent.py::test_k@none: 1/3 (33%) vs baseline 2/3 (67%): "
        "-33.3pt, Fisher exact p=0.5; about 16 runs of each would decide at these rates",
    ])  # fmt: skip


def test_under_xdist_the_saved_cases_are_the_same(pytester: pytest.Pytester) -> None:
    save(pytester)
    alone = cases(pytester)
    (pytester.path / "baseline.json").unlink()
    result = save(pytester, "-n", "2")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["agentchaos: baseline *: saved 2 case(s)"])
    assert cases(pytester) == alone


def test_an_interrupted_session_saves_no_baseline(pytester: pytest.Pytester) -> None:
    # Ctrl-C part-way: the few runs done would become the yardstick of every later comparison
    source = (
        SUITE
        + """

def test_three(chaos):
    raise KeyboardInterrupt
"""
    )
    pytester.makepyfile(test_agent=source)
    # in a subprocess: an in-process KeyboardInterrupt would reach this session (and xdist)
    result = pytester.runpytest_subprocess(
        f"--chaos-seed={SEED}", "-p", "no:randomly", "-p", "no:xdist",
        "--chaos-baseline=baseline.json", "--chaos-baseline-save",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*baseline.json: not saved: the session was interrupted*"])
    assert not (pytester.path / "baseline.json").exists()
