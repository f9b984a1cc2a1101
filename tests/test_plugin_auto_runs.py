"""``--chaos-runs=auto:MAX`` as a user runs it (issue 31, item 6): each chaos test runs under up
to MAX seeds and its remaining runs are skipped once its pass rate is decided against
``min_pass_rate`` (or, without one, at its first failure); the summary, the skip reasons,
index.json and the HTML report say after how many runs."""

from __future__ import annotations

import json

import hypothesis.internal.observability  # noqa: F401 - keeps in-process runs fast
import jsonschema
import pytest

from pytest_agentchaos.harness.variants import run_seed
from pytest_agentchaos.report.artifacts import schema_path

SEED = 11
FAILED = pytest.ExitCode.TESTS_FAILED

#: test_k fails under the seeds of the runs listed in FAIL (or every run with FAIL_ALL).
FLAKY = """
import pytest
from pytest_agentchaos.harness.variants import run_seed

FAIL = {fail!r}
BAD = {{run_seed({seed}, "test_agent.py::test_k", run) for run in FAIL}}

@pytest.mark.chaos({marker})
def test_k(chaos):
    assert {fail_all} is False and chaos.seed not in BAD, "bad seed"
"""


def source(fail: list[int] = [], marker: str = "", fail_all: bool = False) -> str:  # noqa: B006
    return FLAKY.format(fail=fail, marker=marker, seed=SEED, fail_all=fail_all)


def run(pytester: pytest.Pytester, text: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_agent=text)
    return pytester.runpytest(f"--chaos-seed={SEED}", "-p", "no:randomly", "-rs", *args)


def test_a_reliable_agent_stops_once_the_exact_test_puts_it_above_min_pass_rate(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, source(marker="min_pass_rate=0.8"), "--chaos-runs=auto:100")
    # 0.8**35 <= 5%/100 < 0.8**34: the 35th passing run decides
    result.assert_outcomes(passed=35, skipped=65)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        f"agentchaos: profile=none seed={SEED} runs=auto:100 (replay with *",
        "test_agent.py::test_k@none: 35/35 runs passed (100%, Wilson 95% 90%-100%): "
        "min_pass_rate 80% ok; decided after 35 of at most 100 runs: pass rate above 80% by an "
        "exact binomial test at 5%/100",
        "SKIPPED [[]65[]] test_agent.py:*: agentchaos: test_agent.py::test_k: decided after 35 "
        "of at most 100 runs: pass rate above 80% by an exact binomial test at 5%/100",
    ])  # fmt: skip


def test_a_broken_agent_stops_after_a_few_runs_and_fails_the_session(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester, source(marker="min_pass_rate=0.8", fail_all=True), "--chaos-runs=auto:100"
    )
    result.assert_outcomes(xfailed=5, skipped=95)  # 0.2**5 <= 5%/100 < 0.2**4
    assert result.ret == FAILED
    result.stdout.fnmatch_lines([
        "test_agent.py::test_k@none: 0/5 runs passed (0%, Wilson 95% 0%-43%): min_pass_rate 80% "
        "FAIL; decided after 5 of at most 100 runs: pass rate below 80% by an exact binomial "
        "test at 5%/100",
        "agentchaos: 1 test(s) below their pass rate rule: the session fails",
    ])  # fmt: skip


def test_with_few_runs_the_outcome_becomes_certain_first(pytester: pytest.Pytester) -> None:
    result = run(pytester, source([2], marker="min_pass_rate=0.8"), "--chaos-runs=auto:10")
    # 8 of 10 must pass: after run 9 (8 passed) the outcome of all 10 is certain
    result.assert_outcomes(passed=8, xfailed=1, skipped=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        "test_agent.py::test_k@none: 8/9 runs passed *: min_pass_rate 80% ok; decided after 9 "
        "of at most 10 runs: certain to reach min_pass_rate 80% in all 10"
    ])  # fmt: skip
    result = run(pytester, source([1, 2, 3], marker="min_pass_rate=0.8"), "--chaos-runs=auto:10")
    result.assert_outcomes(xfailed=3, skipped=7)  # three failures: 8 of 10 is out of reach
    result.stdout.fnmatch_lines(["*decided after 3 of at most 10 runs: certain to miss *"])


def test_without_min_pass_rate_the_first_failure_decides_pass_k(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, source([3]), "--chaos-runs=auto:10")
    result.assert_outcomes(passed=2, failed=1, skipped=7)
    assert result.ret == FAILED
    result.stdout.fnmatch_lines([
        "test_agent.py::test_k@none: 2/3 runs passed *: pass^3 FAIL; decided after 3 of at most "
        "10 runs: a run failed (pass^k)"
    ])  # fmt: skip
    result = run(pytester, source([]), "--chaos-runs=auto:10")
    result.assert_outcomes(passed=10)  # pass^k: every run must pass
    result.stdout.fnmatch_lines(["*10/10 runs passed*decided after 10 of at most 10 runs*"])


def test_a_tests_own_runs_are_not_automatic(pytester: pytest.Pytester) -> None:
    result = run(pytester, source([1], marker="runs=3"), "--chaos-runs=auto:50")
    result.assert_outcomes(passed=2, failed=1)  # runs=3 wins, and all three run
    assert "decided after" not in result.stdout.str()


def test_index_json_and_the_html_report_say_where_the_runs_were_decided(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester, source(marker="min_pass_rate=0.8"), "--chaos-runs=auto:100",
        "--chaos-report-dir=report", "--chaos-html=report.html",
    )  # fmt: skip
    result.assert_outcomes(passed=35, skipped=65)
    index = json.loads((pytester.path / "report" / "index.json").read_text(encoding="utf-8"))
    jsonschema.validate(index, json.loads(schema_path("index").read_text(encoding="utf-8")))
    [case] = index["cases"]
    assert (case["runs"], case["passed"], case["ok"]) == (35, 35, True)
    assert case["auto"] == {"max_runs": 100, "decided_after": 35, "certain": False}
    assert len(index["tests"]) == 35 and {t["auto_runs"] for t in index["tests"]} == {100}
    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert "min_pass_rate 80%; decided after 35 of at most 100 runs" in page


def test_the_skipped_runs_keep_their_ids_and_seeds(pytester: pytest.Pytester) -> None:
    result = run(pytester, source(marker="min_pass_rate=0.8"), "--chaos-runs=auto:40", "-v")
    first = f"test_agent.py::test_k[seed{run_seed(SEED, 'test_agent.py::test_k', 1)}] PASSED"
    last = f"test_agent.py::test_k[seed{run_seed(SEED, 'test_agent.py::test_k', 40)}] SKIPPED"
    result.stdout.fnmatch_lines([f"{first.replace('[', '[[]')}*", f"{last.replace('[', '[[]')}*"])


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("auto:1", "auto:MAX: expected MAX from 2 to 10000, got 'auto:1'"),
        ("auto:", "auto:MAX: expected MAX from 2 to 10000, got 'auto:'"),
        ("auto:x", "auto:MAX: expected MAX from 2 to 10000, got 'auto:x'"),
        ("auto:10001", "auto:MAX: expected MAX from 2 to 10000, got 'auto:10001'"),
        ("auto", "expected 1 to 10000 runs, got 'auto'"),
    ],
)
def test_a_bad_auto_is_a_usage_error(pytester: pytest.Pytester, value: str, message: str) -> None:
    result = run(pytester, source(), f"--chaos-runs={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0] == f"ERROR: pytest-agentchaos: --chaos-runs: {message}"
    assert len([line for line in result.stderr.lines if line.strip()]) == 1


def test_under_xdist_each_worker_stops_and_the_session_says_where_it_was_decided(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, source(marker="min_pass_rate=0.8"), "--chaos-runs=auto:100", "-n", "2")
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] >= 35 and outcomes["passed"] + outcomes["skipped"] == 100
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        "test_agent.py::test_k@none: */* runs passed *: min_pass_rate 80% ok; decided after 35 "
        "of at most 100 runs: *"
    ])  # fmt: skip
