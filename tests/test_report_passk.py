"""pass^k in the summary (issue 16, item 5): the Wilson 95% interval, the pass rate of each
case run several times (``case_rates``) and its summary line."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentchaos.report.passk import CaseRate, case_rates, rate_lines, wilson

runs_ = st.integers(min_value=1, max_value=10_000)


@st.composite
def trials(draw: st.DrawFn) -> tuple[int, int]:
    runs = draw(runs_)
    return draw(st.integers(min_value=0, max_value=runs)), runs


# --- wilson ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("passed", "runs", "low", "high"),
    [
        (9, 10, 0.5958, 0.9821),
        (5, 10, 0.2366, 0.7634),
        (2, 3, 0.2077, 0.9385),
        (0, 10, 0.0, 0.2775),
        (1, 1, 0.2065, 1.0),
        (0, 1, 0.0, 0.7935),
    ],
)
def test_known_intervals(passed: int, runs: int, low: float, high: float) -> None:
    assert wilson(passed, runs) == pytest.approx((low, high), abs=1e-4)


def test_no_runs_is_the_whole_interval_and_impossible_counts_are_refused() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    for passed in (-1, 4):
        with pytest.raises(ValueError, match="passed must be within 0..3"):
            wilson(passed, 3)


@given(trials())
def test_the_interval_lies_within_zero_and_one(t: tuple[int, int]) -> None:
    low, high = wilson(*t)
    assert 0.0 <= low <= high <= 1.0


@given(trials())
def test_the_interval_contains_the_rate(t: tuple[int, int]) -> None:
    passed, runs = t
    low, high = wilson(passed, runs)
    p = passed / runs
    assert low <= p <= high  # exactly, the ends too (0.0 at 0/n, 1.0 at n/n)
    if 0 < passed < runs:
        assert low < p < high


@given(trials(), st.integers(min_value=2, max_value=10))
def test_more_runs_at_the_same_rate_narrow_the_interval(t: tuple[int, int], times: int) -> None:
    passed, runs = t
    low, high = wilson(passed, runs)
    low2, high2 = wilson(passed * times, runs * times)
    assert high2 - low2 < high - low


@given(runs_)
def test_all_failed_starts_at_zero_and_all_passed_ends_at_one(runs: int) -> None:
    low, high = wilson(0, runs)
    assert low == 0.0 and 0.0 < high < 1.0
    low, high = wilson(runs, runs)
    assert high == 1.0 and 0.0 < low < 1.0


@given(runs_)
def test_the_interval_is_symmetric_about_one_half(runs: int) -> None:
    for passed in {0, runs // 3, runs // 2, runs}:
        low, high = wilson(passed, runs)
        low2, high2 = wilson(runs - passed, runs)
        assert (low, high) == pytest.approx((1 - high2, 1 - low2), abs=1e-12)


@pytest.mark.parametrize(("passed", "runs"), [(0, 3), (0, 7), (10, 10), (13, 13)])
def test_the_bounds_at_zero_and_all_are_exact(passed: int, runs: int) -> None:
    # centre -/+ half alone rounds to 5.6e-17 and 0.9999999999999999 here
    low, high = wilson(passed, runs)
    p = passed / runs
    assert low <= p <= high
    assert (low == 0.0) if passed == 0 else (high == 1.0)
    assert 0.0 < (high if passed == 0 else low) < 1.0


# --- CaseRate --------------------------------------------------------------------------------


def test_pass_k_needs_every_run() -> None:
    assert CaseRate("t.py::test", "none", runs=3, passed=3).ok
    assert not CaseRate("t.py::test", "none", runs=3, passed=2).ok


@pytest.mark.parametrize(
    ("passed", "runs", "min_pass_rate", "ok"),
    [
        (7, 10, 0.7, True),
        (6, 10, 0.7, False),
        (2, 3, 2 / 3, True),
        (1, 3, 2 / 3, False),
        (0, 4, 0.0, True),
        (4, 4, 1.0, True),
        (3, 4, 1.0, False),
    ],
)
def test_min_pass_rate_is_met_at_or_above_it(
    passed: int, runs: int, min_pass_rate: float, ok: bool
) -> None:
    assert CaseRate("t.py::test", "none", runs, passed, min_pass_rate).ok is ok


def test_the_line_names_case_profile_rate_interval_and_rule() -> None:
    assert CaseRate("t.py::test", "flaky", 10, 9).line() == (
        "t.py::test@flaky: 9/10 runs passed (90%, Wilson 95% 60%-98%): pass^10 FAIL"
    )
    assert CaseRate("t.py::test[a]", "none", 3, 3).line() == (
        "t.py::test[a]@none: 3/3 runs passed (100%, Wilson 95% 44%-100%): pass^3 ok"
    )
    assert CaseRate("t.py::test", "none", 10, 9, 0.8).line() == (
        "t.py::test@none: 9/10 runs passed (90%, Wilson 95% 60%-98%): min_pass_rate 80% ok"
    )


@given(trials(), st.none() | st.floats(0, 1))
def test_rate_and_interval_agree(t: tuple[int, int], min_pass_rate: float | None) -> None:
    passed, runs = t
    rate = CaseRate("t.py::test", "none", runs, passed, min_pass_rate)
    assert rate.rate == passed / runs
    assert rate.interval == wilson(passed, runs)
    assert rate.line().endswith(" ok" if rate.ok else " FAIL")
    if min_pass_rate is None:
        assert rate.ok is (passed == runs)


# --- case_rates and rate_lines ---------------------------------------------------------------


def row(test: str, outcome: str, **kw: Any) -> dict[str, Any]:
    return {"test": test, "outcome": outcome, "profile": kw.pop("profile", "none"), **kw}


def test_rows_group_by_case_and_profile_and_only_passed_counts() -> None:
    rows = [
        row("t.py::test_a[seed1]", "passed", case="t.py::test_a", run=1),
        row("t.py::test_a[seed2]", "failed", case="t.py::test_a", run=2),
        row("t.py::test_a[seed3]", "xfailed", case="t.py::test_a", run=3),  # not judged
        row("t.py::test_a[seed4]", "error", case="t.py::test_a", run=4),
        row("t.py::test_a[flaky-seed1]", "passed", case="t.py::test_a", run=1, profile="flaky"),
        row("t.py::test_b[x-seed1]", "passed", case="t.py::test_b[x]", run=1),
        row("t.py::test_single", "failed"),  # run once: no rate
        row("t.py::test_c[flaky]", "failed", case="t.py::test_c", run=None, profile="flaky"),
    ]
    rates = case_rates(rows)
    assert [(r.case, r.profile, r.passed, r.runs) for r in rates] == [
        ("t.py::test_a", "flaky", 1, 1),
        ("t.py::test_a", "none", 1, 3),
        ("t.py::test_b[x]", "none", 1, 1),
    ]


@pytest.mark.parametrize("outcome", ["skipped", "xfailed", "xpassed"])
def test_runs_that_are_not_judged_are_left_out(outcome: str) -> None:
    rows = [
        row("t.py::t[seed1]", "passed", case="t.py::t", run=1),
        row("t.py::t[seed2]", outcome, case="t.py::t", run=2),
        row("t.py::t[seed3]", "passed", case="t.py::t", run=3),
        row("t.py::u[seed1]", outcome, case="t.py::u", run=1),
        row("t.py::u[seed2]", outcome, case="t.py::u", run=2),
    ]
    (rate,) = case_rates(rows)  # t.py::u has no judged run: no rate at all
    assert (rate.case, rate.passed, rate.runs, rate.ok) == ("t.py::t", 2, 2, True)
    assert rate.line() == "t.py::t@none: 2/2 runs passed (100%, Wilson 95% 34%-100%): pass^2 ok"


def test_the_strictest_min_pass_rate_of_a_case_applies() -> None:
    rows = [
        row("t.py::t[seed1]", "passed", case="t.py::t", run=1, min_pass_rate=0.5),
        row("t.py::t[seed2]", "failed", case="t.py::t", run=2, min_pass_rate=0.9),
        row("t.py::t[seed3]", "passed", case="t.py::t", run=3),
    ]
    (rate,) = case_rates(rows)
    assert rate.min_pass_rate == 0.9 and not rate.ok


def test_a_row_without_a_case_is_its_own_case() -> None:
    (rate,) = case_rates([row("t.py::t[seed1]", "passed", run=1)])
    assert rate.case == "t.py::t[seed1]"


def test_rate_lines_put_failing_cases_first() -> None:
    rates = [
        CaseRate("t.py::a", "none", 2, 2),
        CaseRate("t.py::b", "none", 2, 1),
        CaseRate("t.py::c", "none", 2, 2),
        CaseRate("t.py::d", "none", 4, 1, 0.5),
    ]
    lines = rate_lines(rates)
    assert [line.split("@")[0] for line in lines] == ["t.py::b", "t.py::d", "t.py::a", "t.py::c"]
    assert rate_lines([]) == []


@given(
    st.lists(
        st.tuples(st.sampled_from(["t.py::a", "t.py::b"]), st.sampled_from(["none", "flaky"]),
                  st.sampled_from(["passed", "failed", "error", "skipped", "xfailed"])),
        max_size=30,
    )
)  # fmt: skip
def test_case_rates_count_every_judged_run_once(runs: list[tuple[str, str, str]]) -> None:
    rows = [
        row(f"{case}[seed{i}]", outcome, case=case, run=i + 1, profile=profile)
        for i, (case, profile, outcome) in enumerate(runs)
    ]
    rates = case_rates(rows)
    judged = {"passed", "failed", "error"}
    assert sum(r.runs for r in rates) == sum(o in judged for _, _, o in runs)
    assert sum(r.passed for r in rates) == sum(o == "passed" for _, _, o in runs)
    keys = [(r.case, r.profile) for r in rates]
    assert keys == sorted(set(keys))
    assert all(r.runs >= 1 for r in rates)
