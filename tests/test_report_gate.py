"""The pass-rate gate's statistics (issue 31, item 6) against exact references: binomial and
hypergeometric tails summed over the whole distribution in ``fractions``, Fisher's test and
the gate's three decisions, and the sequential rule of ``--chaos-runs=auto:MAX``."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from pytest_agentchaos.report.exact import binom_ge, binom_le, binom_pmf, fisher_less, hypergeom_le
from pytest_agentchaos.report.gate import (
    INCONCLUSIVE,
    PASS,
    REGRESSED,
    Stop,
    needed_passes,
    rate_gate,
    runs_needed,
    stop_at,
    stop_point,
)

ALPHA = Fraction(1, 20)

# --- exact references: every term of the distribution, as fractions -------------------------


def ref_binom(n: int, p: Fraction) -> list[Fraction]:
    return [math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(n + 1)]


def ref_hypergeom(total: int, good: int, draws: int) -> dict[int, Fraction]:
    return {
        i: Fraction(
            math.comb(good, i) * math.comb(total - good, draws - i), math.comb(total, draws)
        )
        for i in range(draws + 1)
        if i <= good and draws - i <= total - good
    }


def ref_fisher(passed: int, runs: int, base_passed: int, base_runs: int) -> Fraction:
    dist = ref_hypergeom(runs + base_runs, passed + base_passed, runs)
    assert sum(dist.values()) == 1
    return sum((p for i, p in dist.items() if i <= passed), Fraction(0))


def ref_gate(passed: int, runs: int, base_passed: int, base_runs: int, tolerance: int) -> str:
    drop = 100 * (Fraction(base_passed, base_runs) - Fraction(passed, runs))
    if drop <= tolerance:
        return PASS
    return REGRESSED if ref_fisher(passed, runs, base_passed, base_runs) <= ALPHA else INCONCLUSIVE


def ref_stop(passed: int, runs: int, rate: Fraction, max_runs: int) -> tuple[bool, bool] | None:
    """(ok, certain) at this point by the documented rule, exactly; None: undecided."""
    needed = math.ceil(rate * max_runs)
    if passed >= needed:
        return True, True
    if passed + max_runs - runs < needed:
        return False, True
    dist = ref_binom(runs, rate)
    level = ALPHA / max_runs
    if sum(dist[passed:]) <= level:
        return True, False
    if sum(dist[: passed + 1]) <= level:
        return False, False
    return None


rates = st.integers(0, 20).map(lambda k: Fraction(k, 20))


@st.composite
def counts(draw: st.DrawFn, most: int = 30) -> tuple[int, int]:
    runs = draw(st.integers(1, most))
    return draw(st.integers(0, runs)), runs


def close(value: float, exact: Fraction) -> bool:
    return math.isclose(value, float(exact), rel_tol=1e-9, abs_tol=1e-300)


# --- the tails ------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 60), st.integers(-2, 62), rates | st.fractions(0, 1, max_denominator=97))
def test_binomial_tails_match_the_whole_distribution(n: int, k: int, p: Fraction) -> None:
    dist = ref_binom(n, p)
    assert sum(dist) == 1
    assert close(binom_le(k, n, float(p)), sum(dist[: max(0, k + 1)], Fraction(0)))
    assert close(binom_ge(k, n, float(p)), sum(dist[max(0, k) :], Fraction(0)))
    assert close(binom_pmf(k, n, float(p)), dist[k] if 0 <= k <= n else Fraction(0))


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 60).flatmap(lambda t: st.tuples(
    st.just(t), st.integers(0, t), st.integers(0, t), st.integers(-1, t + 1))))  # fmt: skip
def test_hypergeometric_tail_matches_the_whole_distribution(
    args: tuple[int, int, int, int],
) -> None:
    total, good, draws, k = args
    dist = ref_hypergeom(total, good, draws)
    want = sum((p for i, p in dist.items() if i <= k), Fraction(0))
    assert close(hypergeom_le(k, total, good, draws), want)


def test_far_tails_of_ten_thousand_runs_neither_overflow_nor_underflow_to_nonsense() -> None:
    assert binom_ge(10_000, 10_000, 0.5) == 0.0  # 2**-10000 is below a float's range
    assert binom_le(9_999, 10_000, 0.999) == pytest.approx(1 - 0.999**10_000, rel=1e-9)
    assert fisher_less(5_000, 10_000, 5_000, 10_000) == pytest.approx(0.5, abs=0.01)
    # the rate fell from 95% to 94% over 10,000 runs each: a real drop
    assert fisher_less(9_400, 10_000, 9_500, 10_000) < 0.002


@pytest.mark.parametrize(
    ("args", "p"),
    [
        ((0, 1, 1, 1), Fraction(1, 2)),
        ((18, 20, 20, 20), Fraction(math.comb(20, 2), math.comb(40, 2))),  # both fails here
        ((3, 4, 4, 4), Fraction(1, 2)),
        ((4, 4, 0, 4), Fraction(1)),  # it rose: nothing is as low or lower but all
    ],
)
def test_known_fisher_p_values(args: tuple[int, int, int, int], p: Fraction) -> None:
    assert ref_fisher(*args) == p
    assert fisher_less(*args) == pytest.approx(float(p), rel=1e-12)


# --- the baseline gate ----------------------------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(counts(), counts(), st.integers(0, 20))
@example((18, 20), (20, 20), 5)
@example((19, 20), (20, 20), 5)
@example((10, 20), (20, 20), 5)
def test_the_gate_decides_as_the_exact_reference(
    now: tuple[int, int], was: tuple[int, int], tolerance: int
) -> None:
    exact = ref_fisher(*now, *was)
    assume(abs(exact - ALPHA) > ALPHA * Fraction(1, 10**8))  # a float cannot split a tie
    gate = rate_gate(*now, *was, tolerance=tolerance)
    assert gate.decision == ref_gate(*now, *was, tolerance)
    if gate.drop > 0:
        assert close(gate.p_value, exact)
    assert (gate.runs_needed is not None) <= (gate.decision == INCONCLUSIVE)


def test_the_gate_on_twenty_runs_says_inconclusive_and_how_many_runs_would_decide() -> None:
    gate = rate_gate(18, 20, 20, 20)
    assert gate.decision == INCONCLUSIVE
    assert gate.summary() == (
        "18/20 (90%) vs baseline 20/20 (100%): -10pt, Fisher exact p=0.244; about 45 runs of "
        "each would decide at these rates"
    )
    # at 45 runs of each the same rates regress, at 44 (40/44 vs 44/44, rounded) not yet
    assert rate_gate(round(0.9 * 45), 45, 45, 45).decision == REGRESSED
    assert rate_gate(round(0.9 * 44), 44, 44, 44).decision == INCONCLUSIVE
    assert rate_gate(19, 20, 20, 20).decision == PASS  # within the 5pt tolerance
    assert rate_gate(10, 20, 20, 20).decision == REGRESSED
    assert rate_gate(20, 20, 10, 20).decision == PASS  # better never regresses


@settings(max_examples=100, deadline=None)
@given(counts(40), counts(40), st.integers(0, 20))
def test_runs_needed_is_where_the_projected_rates_first_regress(
    now: tuple[int, int], was: tuple[int, int], tolerance: int
) -> None:
    rate, base = now[0] / now[1], was[0] / was[1]
    start = max(now[1], was[1])
    found = runs_needed(rate, base, tolerance, start=start)
    if found is None:
        return
    assert found > start
    assert rate_gate(round(rate * found), found, round(base * found), found, tolerance).decision \
        == REGRESSED  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(counts(40), counts(40), st.integers(0, 20))
def test_runs_needed_is_the_fewest_that_decide(
    now: tuple[int, int], was: tuple[int, int], tolerance: int
) -> None:
    rate, base = now[0] / now[1], was[0] / was[1]
    found = runs_needed(rate, base, tolerance)
    if found is None or found > 256:
        return
    for n in range(2, found):  # none fewer decides (the rounding makes it jump about)
        gate = rate_gate(round(rate * n), n, round(base * n), n, tolerance)
        assert gate.decision != REGRESSED, n


def test_the_runs_that_decide_may_be_fewer_than_either_side_has() -> None:
    # 1 of 2 against 20 of 20: 4 of 8 against 8 of 8 already regresses (Fisher p = 0.038)
    assert rate_gate(1, 2, 20, 20).runs_needed == 8
    assert rate_gate(4, 8, 8, 8).decision == REGRESSED
    assert rate_gate(1, 10, 16, 38).runs_needed == 14


def test_a_small_drop_needs_many_runs_and_a_tiny_one_more_than_allowed() -> None:
    gate = rate_gate(99, 100, 100, 100, tolerance=0.5)
    assert (gate.decision, gate.runs_needed) == (INCONCLUSIVE, 451)
    assert rate_gate(446, 451, 451, 451, tolerance=0.5).decision == REGRESSED
    assert runs_needed(0.499, 0.5, 0.05, start=10) is None  # 4990 vs 5000 of 10,000: chance
    gate = rate_gate(499, 1000, 500, 1000, 0.05)
    assert (gate.decision, gate.runs_needed) == (INCONCLUSIVE, None)
    assert gate.summary().endswith("more than 10000 runs of each would be needed to decide")


@pytest.mark.parametrize("bad", [(0, 0, 1, 1), (2, 1, 1, 1), (1, 1, -1, 1)])
def test_the_gate_refuses_impossible_counts(bad: tuple[int, int, int, int]) -> None:
    with pytest.raises(ValueError):
        rate_gate(*bad)


@pytest.mark.parametrize("tolerance", [-0.5, -150, 100.5, 250, float("nan"), float("inf")])
def test_the_gate_refuses_a_tolerance_outside_0_to_100_points(tolerance: float) -> None:
    with pytest.raises(ValueError, match="tolerance"):
        rate_gate(5, 10, 10, 10, tolerance)
    with pytest.raises(ValueError, match="tolerance"):
        runs_needed(0.5, 1.0, tolerance)


def test_a_tolerance_of_all_100_points_never_regresses() -> None:
    assert rate_gate(0, 50, 50, 50, 100).decision == PASS


# --- the sequential rule of --chaos-runs=auto:MAX -----------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40).flatmap(lambda m: st.tuples(
    st.just(m), st.integers(1, m).flatmap(lambda k: st.tuples(st.just(k), st.integers(0, k))))),
    rates)  # fmt: skip
def test_each_stop_matches_the_exact_rule(
    point: tuple[int, tuple[int, int]], rate: Fraction
) -> None:
    max_runs, (runs, passed) = point
    dist = ref_binom(runs, rate)
    level = ALPHA / max_runs
    for tail in (sum(dist[passed:]), sum(dist[: passed + 1])):
        assume(abs(tail - level) > level * Fraction(1, 10**8))
    found = stop_at(passed, runs, float(rate), max_runs)
    want = ref_stop(passed, runs, rate, max_runs)
    assert (None if found is None else (found.ok, found.certain)) == want
    if found is not None:
        assert found.after == runs and found.max_runs == max_runs


@settings(max_examples=100, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=60), rates, st.integers(1, 60))
def test_the_stop_point_is_the_first_decided_prefix(
    outcomes: list[bool], rate: Fraction, max_runs: int
) -> None:
    outcomes = outcomes[:max_runs]
    found = stop_point(outcomes, float(rate), max_runs)
    firsts = [k for k in range(1, len(outcomes) + 1)
              if stop_at(sum(outcomes[:k]), k, float(rate), max_runs) is not None]  # fmt: skip
    assert (found.after if found else None) == (firsts[0] if firsts else None)
    if len(outcomes) == max_runs:  # all ran: the last run at the latest decides, for certain
        assert found is not None


def test_needed_passes_agrees_with_the_summarys_rule() -> None:
    for runs in range(1, 60):
        for k in range(0, 21):
            rate = k / 20
            need = needed_passes(rate, runs)
            assert need / runs >= rate - 1e-12
            assert need == 0 or (need - 1) / runs < rate - 1e-12
            assert need == math.ceil(Fraction(k, 20) * runs)


def test_documented_stop_points() -> None:
    # every run passes, min_pass_rate 80%, at most 100 runs: 0.8**35 <= 5%/100 < 0.8**34
    assert stop_point([True] * 100, 0.8, 100) == Stop(True, 35, 100, certain=False)
    assert 0.8**35 <= 0.05 / 100 < 0.8**34
    # every run fails: 0.2**5 <= 5e-4 < 0.2**4
    assert stop_point([False] * 100, 0.8, 100) == Stop(False, 5, 100, certain=False)
    # with at most 10 runs the certain rule comes first: 8 passes meet 80% of 10
    assert stop_point([True] * 10, 0.8, 10) == Stop(True, 8, 10, certain=True)
    # pass^k: the first failure decides; all passing runs must run
    assert stop_point([True, True, False, True], None, 10) == Stop(False, 3, 10, certain=True)
    assert stop_point([True] * 9, None, 10) is None
    assert stop_point([True] * 10, None, 10) == Stop(True, 10, 10, certain=True)
    assert Stop(True, 35, 100, False).reason(0.8) == (
        "decided after 35 of at most 100 runs: pass rate above 80% by an exact binomial test "
        "at 5%/100"
    )
    assert Stop(False, 3, 10, True).reason(None) == (
        "decided after 3 of at most 10 runs: a run failed (pass^k)"
    )


# --- the summary's judgement of auto runs ------------------------------------------------------


def auto_row(run: int, outcome: str, max_runs: int = 100) -> dict[str, object]:
    return {"test": f"t.py::test[seed{run}]", "case": "t.py::test", "run": run,
            "profile": "flaky", "outcome": outcome, "min_pass_rate": 0.8,
            "auto_runs": max_runs}  # fmt: skip


def test_auto_rows_are_judged_where_the_rule_decides_them_in_the_order_they_came() -> None:
    from pytest_agentchaos.report.passk import case_rates

    # under xdist a few more runs may finish after the decision: they count, it stands
    rows = [auto_row(r, "passed") for r in range(1, 38)]
    [rate] = case_rates(rows)
    assert (rate.runs, rate.passed, rate.ok, rate.max_runs) == (37, 37, True, 100)
    assert rate.stop == Stop(True, 35, 100, certain=False)
    assert rate.line().endswith(
        "min_pass_rate 80% ok; decided after 35 of at most 100 runs: pass rate above 80% by an "
        "exact binomial test at 5%/100"
    )
    # a session cut short (-x, a Ctrl-C) is judged by its rate, and says it was not decided
    [rate] = case_rates([auto_row(1, "passed"), auto_row(2, "failed")])
    assert rate.stop is None and not rate.ok
    assert rate.line().endswith("min_pass_rate 80% FAIL; not decided after 2 of at most 100 runs")
    # skipped runs (the decided case's rest) are no runs
    [rate] = case_rates([auto_row(1, "failed"), {**auto_row(2, "skipped")}])
    assert rate.runs == 1
