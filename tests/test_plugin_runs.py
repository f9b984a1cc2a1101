"""pass^k and the profile matrix as a user sees them (issue 16, item 5): ``--chaos-runs=K`` and
``@pytest.mark.chaos(runs=K, min_pass_rate=R)`` run each chaos test under K seeds, each its own
test id; ``--chaos-profile=a,b`` runs each unpinned chaos test under each profile. Ids, outcomes,
exit codes, summary lines, replay commands and index.json; the same ids under xdist."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

import hypothesis.internal.observability  # noqa: F401 - keeps in-process runs fast
import jsonschema
import pytest

from pytest_agentchaos.harness.variants import run_seed
from pytest_agentchaos.report.artifacts import schema_path

SEED = 7
USAGE = pytest.ExitCode.USAGE_ERROR
FAILED = pytest.ExitCode.TESTS_FAILED

# The inner tests print what they ran as: "RAN <function> <seed> <profile>".
KINDS = """
import pytest

@pytest.fixture
def agent(chaos):
    return chaos

def report(name, chaos):
    print("RAN", name, chaos.seed, chaos.profile.name)

def test_fixture(chaos):
    report("test_fixture", chaos)

@pytest.mark.chaos(runs=2)
def test_marker(chaos):
    report("test_marker", chaos)

def test_indirect(agent):
    report("test_indirect", agent)

@pytest.mark.must_halt(max_steps=5)
def test_verdict_only():
    pass

@pytest.mark.parametrize("x", ["a", "b"])
def test_params(chaos, x):
    report("test_params", chaos)

class TestAgent:
    def test_method(self, chaos):
        report("TestAgent::test_method", chaos)

@pytest.mark.chaos("flaky")
def test_pinned_profile(chaos):
    report("test_pinned_profile", chaos)

@pytest.mark.chaos(seed=5)
def test_pinned_seed(chaos):
    report("test_pinned_seed", chaos)

def test_plain():
    pass
"""

#: test_k fails under the seeds of the runs listed in FAIL, and prints the seed it ran with.
FLAKY = """
import pytest
from pytest_agentchaos.harness.variants import run_seed

FAIL = {fail!r}
BAD = {{run_seed({seed}, "test_agent.py::test_k", run) for run in FAIL}}

@pytest.mark.chaos({marker})
def test_k(chaos):
    print("RAN test_k", chaos.seed, chaos.profile.name)
    assert chaos.seed not in BAD, f"bad seed {{chaos.seed}}"
"""


def flaky(fail: list[int], marker: str = "", seed: int = SEED) -> str:
    return FLAKY.format(fail=fail, marker=marker, seed=seed)


def run(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_agent=source)
    return pytester.runpytest(f"--chaos-seed={SEED}", "-p", "no:randomly", *args)


def collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:randomly", *args)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    return [line for line in result.stdout.lines if "::" in line]


def ids(*runs: int, fn: str = "test_k", seed: int = SEED, params: str = "") -> list[str]:
    """The node ids of runs of test_agent.py::<fn> (params: the user's, after ours)."""
    return [
        f"test_agent.py::{fn}[seed{run_seed(seed, f'test_agent.py::{fn}', r)}{params}]"
        for r in runs
    ]


def match(lines: pytest.LineMatcher, *patterns: str) -> None:
    """fnmatch_lines with "[" taken literally (test ids have brackets; "*" stays a wildcard)."""
    lines.fnmatch_lines([p.replace("[", "[[]") for p in patterns])


def ran(result: pytest.RunResult) -> list[tuple[str, int, str]]:
    """What the inner tests printed (run with -s): (function, seed, profile)."""
    found = re.findall(r"RAN (\S+) (\d+) (\S+)", result.stdout.str())
    return [(name, int(seed), profile) for name, seed, profile in found]


def replays(result: pytest.RunResult) -> list[str]:
    """The replay commands the agentchaos sections and xfail reasons show."""
    return re.findall(r"(pytest '[^']+' --chaos-seed=\d+(?: --chaos-\S+)*)", result.stdout.str())


def summary_rows(result: pytest.RunResult) -> list[tuple[str, int]]:
    """The summary's (node id, test seed) of each passed chaos test (shown with -v)."""
    found = re.findall(r"^PASSED  (\S+)  profile=\S+ test_seed=(\d+) ", result.stdout.str(), re.M)
    return sorted((node_id, int(seed)) for node_id, seed in found)


# --- which tests run how often, under which ids -----------------------------------------------


def test_chaos_runs_gives_every_chaos_test_k_ids_showing_their_seeds(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_agent=KINDS)
    found = collected(pytester, f"--chaos-seed={SEED}", "--chaos-runs=3")
    runs = (1, 2, 3)
    assert found == [
        *ids(*runs, fn="test_fixture"),
        *ids(1, 2, fn="test_marker"),  # the marker's runs= wins over the option
        *ids(*runs, fn="test_indirect"),  # chaos through another fixture
        *ids(*runs, fn="test_verdict_only"),  # a verdict marker alone makes a chaos test
        *[i for r in runs for x in "ab" for i in ids(r, fn="test_params", params=f"-{x}")],
        *ids(*runs, fn="TestAgent::test_method"),
        *ids(*runs, fn="test_pinned_profile"),  # a pinned profile still runs k times
        "test_agent.py::test_pinned_seed",  # a pinned seed runs once
        "test_agent.py::test_plain",
    ]


def test_each_run_runs_under_its_own_seed_and_the_header_shows_runs(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, KINDS, "--chaos-runs=3", "-s")
    result.assert_outcomes(passed=25)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([f"agentchaos: profile=none seed={SEED} runs=3 (replay with *"])
    by_test: dict[str, list[int]] = {}
    for name, seed, profile in ran(result):
        by_test.setdefault(name, []).append(seed)
        assert profile == ("flaky" if name == "test_pinned_profile" else "none")
    for name in ("test_fixture", "test_indirect", "TestAgent::test_method"):
        fid = f"test_agent.py::{name}"
        assert by_test[name] == [run_seed(SEED, fid, r) for r in (1, 2, 3)]
    # the user's params run under the same seeds: run r of [a] and of [b] share one
    fid = "test_agent.py::test_params"
    assert by_test["test_params"] == [run_seed(SEED, fid, r) for r in (1, 1, 2, 2, 3, 3)]
    assert by_test["test_pinned_seed"] == [5]


def test_the_summary_shows_a_rate_per_case_and_the_users_params_stay_apart(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, KINDS, "--chaos-runs=3")
    match(
        result.stdout,
        "test_agent.py::TestAgent::test_method@none: 3/3 runs passed "
        "(100%, Wilson 95% 44%-100%): pass^3 ok",
        "test_agent.py::test_fixture@none: 3/3 runs passed*pass^3 ok",
        "test_agent.py::test_indirect@none: 3/3 runs passed*",
        "test_agent.py::test_marker@none: 2/2 runs passed (100%, Wilson 95% 34%-100%): pass^2 ok",
        "test_agent.py::test_params[a]@none: 3/3 runs passed*",
        "test_agent.py::test_params[b]@none: 3/3 runs passed*",
        "test_agent.py::test_pinned_profile@flaky: 3/3 runs passed*",
        "test_agent.py::test_verdict_only@none: 3/3 runs passed*",
        f"session seed {SEED}: replay with --chaos-seed={SEED}",
    )
    assert "test_pinned_seed@" not in result.stdout.str()  # run once: no rate


def test_one_run_is_no_variant(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent=KINDS)
    found = collected(pytester, f"--chaos-seed={SEED}", "--chaos-runs=1")
    assert "test_agent.py::test_fixture" in found and "test_agent.py::test_plain" in found
    assert len(found) == 11  # test_marker's two runs, test_params' two params
    result = pytester.runpytest("--chaos-seed=7", "--chaos-runs=1", "-k", "test_fixture")
    result.stdout.fnmatch_lines(["agentchaos: profile=none seed=7 (replay with --chaos-seed=7)"])


def test_a_marker_with_runs_1_runs_once_under_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent=flaky([], "runs=1"))
    assert collected(pytester, "--chaos-runs=5") == ["test_agent.py::test_k"]


def test_a_pinned_seed_runs_once_with_its_seed(pytester: pytest.Pytester) -> None:
    result = run(pytester, KINDS, "--chaos-runs=4", "-s", "-k", "pinned_seed")
    result.assert_outcomes(passed=1)
    assert ran(result) == [("test_pinned_seed", 5, "none")]


def test_runs_from_a_module_or_class_marker_apply_to_its_tests(
    pytester: pytest.Pytester,
) -> None:
    source = (
        "import pytest\npytestmark = pytest.mark.chaos(runs=2)\n\n"
        "def test_k(chaos):\n    pass\n\n"
        "@pytest.mark.chaos(runs=3)\nclass TestC:\n    def test_m(self, chaos):\n        pass\n"
    )
    pytester.makepyfile(test_agent=source)
    found = collected(pytester, f"--chaos-seed={SEED}")
    assert found == [*ids(1, 2), *ids(1, 2, 3, fn="TestC::test_m")]


# --- outcomes and exit status -----------------------------------------------------------------


def test_pass_k_fails_the_test_when_one_run_fails(pytester: pytest.Pytester) -> None:
    result = run(pytester, flaky([2], "runs=3"))
    result.assert_outcomes(passed=2, failed=1)
    assert result.ret == FAILED
    failed, seed = ids(2)[0], run_seed(SEED, "test_agent.py::test_k", 2)
    match(
        result.stdout,
        f"FAILED  {failed}  profile=none test_seed={seed} *",
        "test_agent.py::test_k@none: 2/3 runs passed (67%, Wilson 95% 21%-94%): pass^3 FAIL",
        "agentchaos: 1 test(s) below their pass rate rule: the session fails",
        f"FAILED {failed} - *",
    )


def test_all_runs_passing_is_exit_status_0(pytester: pytest.Pytester) -> None:
    result = run(pytester, flaky([], "runs=4"))
    result.assert_outcomes(passed=4)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["test_agent.py::test_k@none: 4/4 runs passed*: pass^4 ok"])
    assert "below their pass rate" not in result.stdout.str()


def test_a_met_min_pass_rate_xfails_the_failed_run_and_passes(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, flaky([3], "runs=4, min_pass_rate=0.75"), "-rx", "-vv")
    result.assert_outcomes(passed=3, xfailed=1)
    assert result.ret == pytest.ExitCode.OK
    failed = ids(3)[0]
    match(
        result.stdout,
        "test_agent.py::test_k@none: 3/4 runs passed (75%, Wilson 95% 30%-95%): "
        "min_pass_rate 75% ok",
        f"XFAIL {failed} - agentchaos: this run failed; the test is judged by its pass rate "
        f"(min_pass_rate=0.75): pytest '{failed}' --chaos-seed={SEED}",
    )
    assert "below their pass rate" not in result.stdout.str()


def test_a_missed_min_pass_rate_fails_the_session(pytester: pytest.Pytester) -> None:
    result = run(pytester, flaky([1, 4], "runs=4, min_pass_rate=0.75"))
    result.assert_outcomes(passed=2, xfailed=2)  # no test failed ...
    assert result.ret == FAILED  # ... but the session did
    match(
        result.stdout,
        "test_agent.py::test_k@none: 2/4 runs passed (50%, Wilson 95% 15%-85%): "
        "min_pass_rate 75% FAIL",
        "agentchaos: 1 test(s) below their pass rate rule: the session fails",
    )


def test_min_pass_rate_0_never_fails(pytester: pytest.Pytester) -> None:
    result = run(pytester, flaky([1, 2, 3], "runs=3, min_pass_rate=0"))
    result.assert_outcomes(xfailed=3)
    assert result.ret == pytest.ExitCode.OK


def test_min_pass_rate_applies_to_the_runs_of_the_option(pytester: pytest.Pytester) -> None:
    result = run(pytester, flaky([2], "min_pass_rate=0.5"), "--chaos-runs=2")
    result.assert_outcomes(passed=1, xfailed=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*test_k@none: 1/2 runs passed*min_pass_rate 50% ok"])


def test_min_pass_rate_with_a_single_run_is_a_plain_failure(pytester: pytest.Pytester) -> None:
    result = run(pytester, flaky([], "min_pass_rate=0.5").replace("not in BAD", "< 0"))
    result.assert_outcomes(failed=1)
    assert result.ret == FAILED


def test_a_met_pass_rate_does_not_hide_an_ordinary_failure(pytester: pytest.Pytester) -> None:
    source = flaky([1], "runs=2, min_pass_rate=0.5") + "\ndef test_broken():\n    assert 0\n"
    result = run(pytester, source)
    result.assert_outcomes(passed=1, xfailed=1, failed=1)
    assert result.ret == FAILED


SKIPS = """
import pytest

@pytest.mark.chaos(runs=3)
def test_skips(chaos):
    pytest.skip("no API key here")
"""

XFAILS = """
import pytest

@pytest.mark.xfail(reason="known bad", strict=False)
@pytest.mark.chaos(runs=2)
def test_known_bad(chaos):
    assert 0
"""


def test_skipped_runs_do_not_fail_the_session(pytester: pytest.Pytester) -> None:
    result = run(pytester, SKIPS)
    result.assert_outcomes(skipped=3)
    assert result.ret == pytest.ExitCode.OK
    assert "below their pass rate" not in result.stdout.str()
    assert "runs passed" not in result.stdout.str()  # no judged run: no rate line


def test_user_xfailed_runs_do_not_fail_the_session(pytester: pytest.Pytester) -> None:
    result = run(pytester, XFAILS)
    result.assert_outcomes(xfailed=2)
    assert result.ret == pytest.ExitCode.OK
    assert "below their pass rate" not in result.stdout.str()
    assert "runs passed" not in result.stdout.str()


SOME_SKIPPED = """
import pytest
from pytest_agentchaos.harness.variants import run_seed

SKIP = run_seed({seed}, "test_agent.py::test_k", 2)

@pytest.mark.chaos(runs=3)
def test_k(chaos):
    if chaos.seed == SKIP:
        pytest.skip("not here")
"""


def test_a_skipped_run_is_left_out_of_the_rate(pytester: pytest.Pytester) -> None:
    result = run(pytester, SOME_SKIPPED.format(seed=SEED))
    result.assert_outcomes(passed=2, skipped=1)
    assert result.ret == pytest.ExitCode.OK
    lines = [line for line in result.stdout.lines if "runs passed" in line]
    assert lines == [
        "test_agent.py::test_k@none: 2/2 runs passed (100%, Wilson 95% 34%-100%): pass^2 ok"
    ]


COLLIDING = """
import pytest

@pytest.mark.chaos(runs=30)
def test_k(chaos):
    pass
"""


def test_thirty_runs_are_thirty_seeds_and_one_case(pytester: pytest.Pytester) -> None:
    # under session seed 1774507 runs 15 and 30 of test_agent.py::test_k hash to one seed
    fid = "test_agent.py::test_k"
    assert run_seed(1774507, fid, 15) == run_seed(1774507, fid, 30) == 190216706
    pytester.makepyfile(test_agent=COLLIDING)
    result = pytester.runpytest("--chaos-seed=1774507", "-p", "no:randomly", "-v")
    result.assert_outcomes(passed=30)
    passed = re.findall(r"^(test_agent\.py::test_k\[seed(\d+)\]) PASSED", result.stdout.str(), re.M)
    assert len(passed) == 30 and len({seed for _, seed in passed}) == 30, passed
    assert "test_agent.py::test_k[seed190216706]" in {node for node, _ in passed}
    assert not any("_0]" in node or "_1]" in node for node, _ in passed)  # no renamed ids
    lines = [line for line in result.stdout.lines if "runs passed" in line]
    assert lines == [
        "test_agent.py::test_k@none: 30/30 runs passed (100%, Wilson 95% 89%-100%): pass^30 ok"
    ]


# --- replay -----------------------------------------------------------------------------------


def replay(pytester: pytest.Pytester, command: str) -> pytest.RunResult:
    argv = shlex.split(command)
    assert argv[0] == "pytest"
    return pytester.runpytest(*argv[1:], "-s", "-p", "no:randomly")


def test_the_replay_command_of_a_failed_run_reruns_exactly_that_run(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, flaky([2], "runs=3"), "-s")
    failed_seed = ran(result)[1][1]
    assert failed_seed == run_seed(SEED, "test_agent.py::test_k", 2)
    (command,) = replays(result)
    assert command == f"pytest '{ids(2)[0]}' --chaos-seed={SEED}"
    again = replay(pytester, command)
    again.assert_outcomes(failed=1)
    assert ran(again) == [("test_k", failed_seed, "none")]


def test_the_replay_of_a_run_of_the_option_repeats_the_option(pytester: pytest.Pytester) -> None:
    result = run(pytester, flaky([3]), "--chaos-runs=3", "-s")
    failed_seed = ran(result)[2][1]
    (command,) = replays(result)
    assert command == f"pytest '{ids(3)[0]}' --chaos-seed={SEED} --chaos-runs=3"
    again = replay(pytester, command)
    again.assert_outcomes(failed=1)
    assert ran(again) == [("test_k", failed_seed, "none")]


def test_the_replay_in_a_min_pass_rate_reason_reruns_that_run(pytester: pytest.Pytester) -> None:
    result = run(pytester, flaky([2], "runs=3, min_pass_rate=0.5"), "-s", "-rx", "-vv")
    result.assert_outcomes(passed=2, xfailed=1)
    failed_seed = ran(result)[1][1]
    (command,) = set(replays(result))
    again = replay(pytester, command)
    assert ran(again) == [("test_k", failed_seed, "none")]
    again.assert_outcomes(xfailed=1)


def test_the_replay_of_a_matrix_run_repeats_the_profiles(pytester: pytest.Pytester) -> None:
    # run 2 fails under flaky only
    source = flaky([2], "runs=2").replace(
        "not in BAD", "not in BAD or chaos.profile.name != 'flaky'"
    )
    result = run(pytester, source, "--chaos-profile=none,flaky", "-s")
    result.assert_outcomes(passed=3, failed=1)
    failed_seed = run_seed(SEED, "test_agent.py::test_k", 2)
    (command,) = replays(result)
    assert command == (
        f"pytest 'test_agent.py::test_k[flaky-seed{failed_seed}]' --chaos-seed={SEED} "
        "--chaos-profile=none,flaky"
    )
    again = replay(pytester, command)
    again.assert_outcomes(failed=1)
    assert ran(again) == [("test_k", failed_seed, "flaky")]


# --- the profile matrix -----------------------------------------------------------------------


def test_the_matrix_runs_each_unpinned_chaos_test_under_each_profile(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, KINDS, "--chaos-profile=none,flaky", "-s", "-k", "not params")
    result.assert_outcomes(passed=16)
    result.stdout.fnmatch_lines([f"agentchaos: profile=none,flaky seed={SEED} (replay with *"])
    profiles: dict[str, list[str]] = {}
    for name, _, profile in ran(result):
        profiles.setdefault(name, []).append(profile)
    assert profiles == {
        "test_fixture": ["none", "flaky"],
        "test_marker": ["none", "none", "flaky", "flaky"],
        "test_indirect": ["none", "flaky"],
        "TestAgent::test_method": ["none", "flaky"],
        "test_pinned_profile": ["flaky"],  # pinned: out of the matrix
        "test_pinned_seed": ["none", "flaky"],
    }


def test_matrix_ids(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent=KINDS)
    found = collected(
        pytester, f"--chaos-seed={SEED}", "--chaos-profile=none,flaky", "-k", "not TestAgent"
    )
    marker = [run_seed(SEED, "test_agent.py::test_marker", r) for r in (1, 2)]
    assert found == [
        "test_agent.py::test_fixture[none]",
        "test_agent.py::test_fixture[flaky]",
        *[f"test_agent.py::test_marker[{p}-seed{s}]" for p in ("none", "flaky") for s in marker],
        "test_agent.py::test_indirect[none]",
        "test_agent.py::test_indirect[flaky]",
        "test_agent.py::test_verdict_only[none]",
        "test_agent.py::test_verdict_only[flaky]",
        "test_agent.py::test_params[none-a]",
        "test_agent.py::test_params[none-b]",
        "test_agent.py::test_params[flaky-a]",
        "test_agent.py::test_params[flaky-b]",
        "test_agent.py::test_pinned_profile",
        "test_agent.py::test_pinned_seed[none]",
        "test_agent.py::test_pinned_seed[flaky]",
        "test_agent.py::test_plain",
    ]


def test_the_matrix_with_runs_judges_each_profile_apart(pytester: pytest.Pytester) -> None:
    # run 1 fails under flaky only
    source = flaky([1], "runs=2").replace(
        "not in BAD", "not in BAD or chaos.profile.name == 'none'"
    )
    result = run(pytester, source, "--chaos-profile=flaky,none")
    result.assert_outcomes(passed=3, failed=1)
    assert result.ret == FAILED
    match(
        result.stdout,
        "test_agent.py::test_k@flaky: 1/2 runs passed*pass^2 FAIL",
        "test_agent.py::test_k@none: 2/2 runs passed*pass^2 ok",
    )


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("none,,flaky", "--chaos-profile: an empty profile name in 'none,,flaky'"),
        ("none,", "--chaos-profile: an empty profile name in 'none,'"),
        ("none,none", "--chaos-profile: profile 'none' named twice in 'none,none'"),
        ("flaky,none,flaky", "--chaos-profile: profile 'flaky' named twice in *"),
        ("none,nope", "--chaos-profile: chaos profile 'nope': not found; available: *"),
        ("none,../x", "--chaos-profile: '../x' is not a profile name *"),
    ],
)
def test_a_bad_matrix_is_a_one_line_usage_error(
    pytester: pytest.Pytester, option: str, message: str
) -> None:
    result = run(pytester, KINDS, f"--chaos-profile={option}")
    assert result.ret == USAGE
    result.stderr.fnmatch_lines([f"ERROR: pytest-agentchaos: {message}"])
    assert "Traceback" not in result.stderr.str()
    assert len([line for line in result.stderr.lines if line.strip()]) == 1


# --- hostile input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "expected 1 to 10000 runs, got '0'"),
        ("10001", "expected 1 to 10000 runs, got '10001'"),
        ("-1", "expected 1 to 10000 runs, got '-1'"),
        ("abc", "expected 1 to 10000 runs, got 'abc'"),
        ("2.5", "expected 1 to 10000 runs, got '2.5'"),
        ("", "expected 1 to 10000 runs, got ''"),
        ("3x", "expected 1 to 10000 runs, got '3x'"),
        ("1e1", "expected 1 to 10000 runs, got '1e1'"),
        # what int() lets through
        ("3_0", "expected 1 to 10000 runs, got '3_0'"),
        ("+3", "expected 1 to 10000 runs, got '+3'"),
        (" 3", "expected 1 to 10000 runs, got ' 3'"),
        ("\u0663", "expected 1 to 10000 runs, got '\u0663'"),
        ("auto:0", "auto:MAX: expected MAX from 2 to 10000, got 'auto:0'"),
        ("auto:-2", "auto:MAX: expected MAX from 2 to 10000, got 'auto:-2'"),
        ("auto: 3", "auto:MAX: expected MAX from 2 to 10000, got 'auto: 3'"),
        ("auto:3_0", "auto:MAX: expected MAX from 2 to 10000, got 'auto:3_0'"),
        ("auto:2.5", "auto:MAX: expected MAX from 2 to 10000, got 'auto:2.5'"),
    ],
)
def test_a_bad_chaos_runs_is_a_one_line_usage_error(
    pytester: pytest.Pytester, value: str, message: str
) -> None:
    result = run(pytester, KINDS, f"--chaos-runs={value}")
    assert result.ret == USAGE
    assert result.stderr.lines[0] == f"ERROR: pytest-agentchaos: --chaos-runs: {message}"
    assert len([line for line in result.stderr.lines if line.strip()]) == 1


@pytest.mark.parametrize("value", ["0", "-1", "x", "3_0", "+3", "1.5", "100001"])
def test_a_bad_chaos_explore_is_a_one_line_usage_error(
    pytester: pytest.Pytester, value: str
) -> None:
    result = run(pytester, KINDS, f"--chaos-explore={value}")
    assert result.ret == USAGE
    assert result.stderr.lines[0] == (
        f"ERROR: pytest-agentchaos: --chaos-explore: expected 1 to 100000 schedules, got {value!r}"
    )
    assert len([line for line in result.stderr.lines if line.strip()]) == 1


def test_the_largest_chaos_runs_is_accepted(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent="def test_plain():\n    pass\n")
    result = pytester.runpytest("--chaos-runs=10000", "-q")
    result.assert_outcomes(passed=1)


BAD_MARKERS = """
import pytest

@pytest.mark.chaos(runs=0)
def test_zero(chaos): pass

@pytest.mark.chaos(runs=True)
def test_bool(chaos): pass

@pytest.mark.chaos(runs=2.5)
def test_float(chaos): pass

@pytest.mark.chaos(runs="3")
def test_text(chaos): pass

@pytest.mark.chaos(runs=10001)
def test_many(chaos): pass

@pytest.mark.chaos(runs=3, min_pass_rate=1.5)
def test_rate_high(chaos): pass

@pytest.mark.chaos(runs=3, min_pass_rate=-0.1)
def test_rate_low(chaos): pass

@pytest.mark.chaos(runs=3, min_pass_rate="x")
def test_rate_text(chaos): pass

@pytest.mark.chaos(runs=3, min_pass_rate=float("nan"))
def test_rate_nan(chaos): pass

@pytest.mark.chaos(runs=3, min_pass_rate=True)
def test_rate_bool(chaos): pass

@pytest.mark.chaos(runs=3, seed=5)
def test_pinned(chaos): pass

def test_plain(): pass
"""


def test_bad_runs_and_min_pass_rate_markers_fail_collection_naming_each(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, BAD_MARKERS, "--chaos-runs=2")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "pytest-agentchaos: bad chaos marker",
            "test_agent.py::test_zero: @pytest.mark.chaos: runs: must be >= 1, got 0",
            "test_agent.py::test_bool: @pytest.mark.chaos: runs: expected an integer*got True",
            "test_agent.py::test_float: @pytest.mark.chaos: runs: expected an integer*got 2.5",
            "test_agent.py::test_text: @pytest.mark.chaos: runs: expected an integer*got '3'",
            "test_agent.py::test_many: @pytest.mark.chaos: runs: must be <= 10000, got 10001",
            "test_agent.py::test_rate_high: @pytest.mark.chaos: min_pass_rate: must be <= 1*",
            "test_agent.py::test_rate_low: @pytest.mark.chaos: min_pass_rate: must be >= 0*",
            "test_agent.py::test_rate_text: @pytest.mark.chaos: min_pass_rate: *'x'",
            "test_agent.py::test_rate_nan: @pytest.mark.chaos: min_pass_rate: *nan*",
            "test_agent.py::test_rate_bool: @pytest.mark.chaos: min_pass_rate: *True",
            "test_agent.py::test_pinned: @pytest.mark.chaos: runs: runs > 1 with a pinned seed*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


PARAM_MARK = """
import pytest

@pytest.mark.parametrize("x", [1, pytest.param(2, marks=pytest.mark.chaos(runs=3))])
def test_p(chaos, x):
    pass
"""


PARAM_REFUSED = (
    "pytest-agentchaos: bad chaos marker: @pytest.mark.chaos: runs: a mark of one pytest.param "
    "cannot multiply its runs; put runs= on the test function, its class or module"
)


def test_runs_on_a_pytest_param_is_honoured_or_refused(pytester: pytest.Pytester) -> None:
    # refused: that param's item fails at setup (pytest_generate_tests cannot see a param's
    # marks), the other param runs as usual
    pytester.makepyfile(test_agent=PARAM_MARK)
    result = pytester.runpytest(f"--chaos-seed={SEED}", "-p", "no:randomly", "-rA")
    result.assert_outcomes(passed=1, errors=1)
    assert result.ret == FAILED
    result.stdout.fnmatch_lines(
        ["*_ ERROR at setup of test_p[[]2[]] _*", PARAM_REFUSED.replace("[", "[[]")]
    )
    # said once in the error section; the short summary repeats it only after its own prefix,
    # cut or not depending on the terminal's width
    assert [x for x in result.outlines if x.startswith("pytest-agentchaos:")] == [PARAM_REFUSED]
    match(result.stdout, "PASSED test_agent.py::test_p[1]")
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize("where", ["option", "function"])
def test_runs_on_a_pytest_param_is_refused_under_other_runs_too(
    pytester: pytest.Pytester, where: str
) -> None:
    source = PARAM_MARK
    if where == "function":
        source = source.replace(
            "@pytest.mark.parametrize", "@pytest.mark.chaos(runs=2)\n@pytest.mark.parametrize"
        )
    pytester.makepyfile(test_agent=source)
    options = ["--chaos-runs=2"] if where == "option" else []
    result = pytester.runpytest(f"--chaos-seed={SEED}", "-p", "no:randomly", *options)
    # honoured (3 runs of test_p[2]) or refused (its runs fail at setup)
    assert "test_p[2]@none: 3/3 runs passed" in result.stdout.str() or (
        "cannot multiply its runs" in result.stdout.str()
    ), result.stdout.str()


def test_a_pinned_seed_and_runs_across_markers_is_a_bad_marker(pytester: pytest.Pytester) -> None:
    source = (
        "import pytest\npytestmark = pytest.mark.chaos(runs=3)\n\n"
        "@pytest.mark.chaos(seed=5)\ndef test_k(chaos):\n    pass\n"
    )
    result = run(pytester, source)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["test_agent.py::test_k: @pytest.mark.chaos: runs: runs > 1 *"])


# --- the same ids in every process ------------------------------------------------------------


def test_the_same_session_seed_gives_the_same_ids_and_another_other_ids(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_agent=KINDS)
    args = ("--chaos-runs=3", "--chaos-profile=none,flaky")
    first = collected(pytester, "--chaos-seed=11", *args)
    assert collected(pytester, "--chaos-seed=11", *args) == first
    other = collected(pytester, "--chaos-seed=12", *args)
    assert len(other) == len(first) and other != first
    seeded = re.compile(r"seed\d")
    assert [i for i in first if not seeded.search(i)] == [i for i in other if not seeded.search(i)]


# Plugins the distributed run does not need: each worker would import them again.
NOT_NEEDED = [f"-pno:{name}" for name in ("hypothesispytest", "faker", "anyio", "asyncio", "respx")]


def test_xdist_workers_run_the_same_ids_and_seeds_as_a_serial_run(
    pytester: pytest.Pytester,
) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_agent=flaky([]))
    # no --chaos-seed: the controller's random seed must reach the workers' collection
    dist = pytester.runpytest_subprocess(
        "-v", "-n", "2", "-p", "xdist", "-p", "no:randomly", *NOT_NEEDED, "--chaos-runs=4"
    )
    dist.assert_outcomes(passed=4)
    header = re.search(r"^agentchaos: profile=none seed=(\d+) runs=4 ", dist.stdout.str(), re.M)
    assert header is not None, dist.stdout.str()
    seed = int(header[1])
    rows = summary_rows(dist)
    node_ids = ids(1, 2, 3, 4, seed=seed)
    expected = [(i, run_seed(seed, "test_agent.py::test_k", r)) for r, i in enumerate(node_ids, 1)]
    assert rows == sorted(expected)
    assert len({s for _, s in rows}) == 4
    match(dist.stdout, "test_agent.py::test_k@none: 4/4 runs passed*pass^4 ok")
    serial = pytester.runpytest("-v", f"--chaos-seed={seed}", "--chaos-runs=4")
    assert summary_rows(serial) == rows


# --- summary rows and index.json ---------------------------------------------------------------


ROWS_CONFTEST = """
import json

def pytest_runtest_logreport(report):
    row = getattr(report, "agentchaos", None)
    if row is not None:
        keys = ("test", "case", "run", "min_pass_rate", "outcome", "seed")
        print("ROW", json.dumps({k: row.get(k) for k in keys}))
"""


def test_summary_rows_carry_case_run_and_min_pass_rate(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(ROWS_CONFTEST)
    source = flaky([1], "runs=2, min_pass_rate=0.5") + (
        "\n@pytest.mark.parametrize('x', ['a'])\ndef test_p(chaos, x):\n    pass\n"
    )
    result = run(pytester, source, "-s", "--chaos-profile=none,flaky")
    result.assert_outcomes(passed=4, xfailed=2)
    rows = {}
    for found in re.findall(r"^\.?x?ROW (.*)$", result.stdout.str(), re.M):
        row = json.loads(found)
        rows[row.pop("test")] = row
    k = "test_agent.py::test_k"
    for profile in ("none", "flaky"):
        for r in (1, 2):
            seed = run_seed(SEED, k, r)
            assert rows.pop(f"{k}[{profile}-seed{seed}]") == {
                "case": k,
                "run": r,
                "min_pass_rate": 0.5,
                "seed": seed,
                "outcome": "failed" if r == 1 else "passed",  # the run's own outcome
            }
    # the matrix alone: a case (the user's params kept), no run number
    assert {t: (r["case"], r["run"], r["min_pass_rate"]) for t, r in rows.items()} == {
        "test_agent.py::test_p[none-a]": ("test_agent.py::test_p[a]", None, None),
        "test_agent.py::test_p[flaky-a]": ("test_agent.py::test_p[a]", None, None),
    }


def index(pytester: pytest.Pytester) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pytester.path / "out" / "index.json").read_text("utf-8"))
    schema = json.loads(schema_path("index").read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)
    return data


def test_index_json_carries_case_run_and_min_pass_rate(pytester: pytest.Pytester) -> None:
    source = flaky([2], "runs=3, min_pass_rate=0.6") + "\ndef test_once(chaos):\n    pass\n"
    result = run(pytester, source, "--chaos-report-dir=out", "--chaos-runs=2")
    result.assert_outcomes(passed=4, xfailed=1)  # test_once runs twice under the option
    data = index(pytester)
    assert data["runs"] == 2 and data["session_seed"] == SEED
    tests = {t["node_id"]: t for t in data["tests"]}
    for r, node_id in enumerate(ids(1, 2, 3), start=1):
        entry = tests[node_id]
        assert entry["case"] == "test_agent.py::test_k"
        assert entry["run"] == r and entry["min_pass_rate"] == 0.6
        assert entry["outcome"] == ("failed" if r == 2 else "passed")
        assert entry["replay"] == f"pytest '{node_id}' --chaos-seed={SEED} --chaos-runs=2"
    for r, node_id in enumerate(ids(1, 2, fn="test_once"), start=1):
        entry = tests[node_id]
        assert (entry["case"], entry["run"]) == ("test_agent.py::test_once", r)
        assert "min_pass_rate" not in entry
    cases = {c["case"]: c for c in data["cases"]}
    k = cases["test_agent.py::test_k"]
    assert (k["profile"], k["runs"], k["passed"], k["ok"]) == ("none", 3, 2, True)
    assert k["min_pass_rate"] == 0.6 and k["pass_rate"] == pytest.approx(2 / 3)
    assert k["wilson95"] == pytest.approx([0.2077, 0.9385], abs=1e-4)
    assert cases["test_agent.py::test_once"]["min_pass_rate"] is None


def test_index_json_of_a_matrix_names_each_runs_profile(pytester: pytest.Pytester) -> None:
    source = flaky([], "runs=2")
    result = run(pytester, source, "--chaos-report-dir=out", "--chaos-profile=none,flaky")
    result.assert_outcomes(passed=4)
    data = index(pytester)
    assert data["profile_option"] == "none,flaky" and data["runs"] == 1
    got = sorted((t["profile"], t["case"], t["run"]) for t in data["tests"])
    assert got == [(p, "test_agent.py::test_k", r) for p in ("flaky", "none") for r in (1, 2)]
    assert [(c["profile"], c["runs"]) for c in data["cases"]] == [("flaky", 2), ("none", 2)]


def test_index_json_of_a_single_run_session_has_no_cases(pytester: pytest.Pytester) -> None:
    run(pytester, flaky([]), "--chaos-report-dir=out").assert_outcomes(passed=1)
    data = index(pytester)
    assert data["runs"] == 1 and data["cases"] == []
    (entry,) = data["tests"]
    assert not {"case", "run", "min_pass_rate"} & set(entry)
