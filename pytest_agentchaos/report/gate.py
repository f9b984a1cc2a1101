"""The pass-rate gate: decisions on pass rates from exact tests, so that a nightly job on a
few runs says "inconclusive" instead of failing by chance; free of pytest.

- :func:`rate_gate` compares a case's pass rate with its baseline's: ``PASS`` when it fell no
  more than the tolerance; ``REGRESSED`` when it fell more and Fisher's exact test (one-sided,
  conditional on both sides' runs and the passes of both) says so at the 5% level; else
  ``INCONCLUSIVE``, with about how many runs of each side would decide at the rates seen.
- :func:`stop_point` is the sequential rule of ``--chaos-runs=auto:MAX``: after each run, the
  case is decided once the outcome of all MAX runs can no longer change (certain), or once an
  exact binomial test at level 5%/MAX (a Bonferroni share of 5% for each of the at most MAX
  looks, so the chance that any look decides wrongly is at most 5%) puts the pass rate above
  or below ``min_pass_rate``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from .exact import binom_ge, binom_le, binom_pmf, fisher_less

__all__ = [
    "ALPHA",
    "INCONCLUSIVE",
    "PASS",
    "REGRESSED",
    "RateGate",
    "Stop",
    "needed_passes",
    "rate_gate",
    "runs_needed",
    "stop_at",
    "stop_point",
]

#: The chance of a wrong decision the gate accepts.
ALPHA = 0.05
PASS, REGRESSED, INCONCLUSIVE = "PASS", "REGRESSED", "INCONCLUSIVE"
#: The most runs :func:`runs_needed` looks at (``--chaos-runs`` allows at most this many).
MAX_RUNS = 10_000
#: Float slack of a comparison with a limit (a rate exactly at it passes).
_EPS = 1e-9


@dataclass(frozen=True, slots=True)
class RateGate:
    """A case's pass rate against its baseline's: the decision and what it rests on."""

    decision: str
    passed: int
    runs: int
    base_passed: int
    base_runs: int
    #: how far (points) the pass rate may fall
    tolerance: float
    #: Fisher's exact one-sided p-value that the rate fell (1.0 when it did not)
    p_value: float
    #: INCONCLUSIVE: about how many runs of each side would decide at the rates seen (None:
    #: more than 10,000, or no number of runs would)
    runs_needed: int | None = None
    alpha: float = ALPHA

    @property
    def drop(self) -> float:
        """How many points the pass rate fell (negative: it rose)."""
        return 100 * (self.base_passed / self.base_runs - self.passed / self.runs)

    def summary(self) -> str:
        """``17/20 (85%) vs baseline 20/20 (100%): -15pt, Fisher p=0.115``, and for an
        inconclusive one what would decide it."""
        now, was = self.passed / self.runs, self.base_passed / self.base_runs
        text = (
            f"{self.passed}/{self.runs} ({now:.0%}) vs baseline {self.base_passed}/"
            f"{self.base_runs} ({was:.0%}): {-self.drop:+.3g}pt"
        )
        if self.drop > self.tolerance + _EPS:
            text += f", Fisher exact p={self.p_value:.3g}"
        if self.decision == INCONCLUSIVE:
            if self.runs_needed is None:
                text += f"; more than {MAX_RUNS} runs of each would be needed to decide"
            else:
                text += f"; about {self.runs_needed} runs of each would decide at these rates"
        return text


def _regressed(passed: int, runs: int, base_passed: int, base_runs: int, tolerance: float,
               alpha: float) -> tuple[bool, float]:  # fmt: skip
    """Whether the drop is beyond the tolerance and significant, and Fisher's p-value."""
    drop = 100 * (base_passed / base_runs - passed / runs)
    if drop <= tolerance + _EPS:
        return False, 1.0 if drop <= 0 else fisher_less(passed, runs, base_passed, base_runs)
    p = fisher_less(passed, runs, base_passed, base_runs)
    return p <= alpha * (1 + _EPS), p


def rate_gate(
    passed: int,
    runs: int,
    base_passed: int,
    base_runs: int,
    tolerance: float = 5.0,
    alpha: float = ALPHA,
) -> RateGate:
    """The gate's decision on ``passed`` of ``runs`` against the baseline's ``base_passed`` of
    ``base_runs``, allowing a fall of ``tolerance`` points (0 to 100)."""
    _check_tolerance(tolerance)
    if runs < 1 or base_runs < 1:
        raise ValueError("each side needs at least one run")
    if not (0 <= passed <= runs and 0 <= base_passed <= base_runs):
        raise ValueError("expected 0 <= passed <= runs on each side")
    drop = 100 * (base_passed / base_runs - passed / runs)
    regressed, p = _regressed(passed, runs, base_passed, base_runs, tolerance, alpha)
    if regressed:
        decision = REGRESSED
    elif drop <= tolerance + _EPS:
        decision = PASS
    else:
        decision = INCONCLUSIVE
    needed = None
    if decision == INCONCLUSIVE:
        needed = runs_needed(passed / runs, base_passed / base_runs, tolerance, alpha)
    return RateGate(decision, passed, runs, base_passed, base_runs, tolerance, p, needed, alpha)


def runs_needed(
    rate: float, base_rate: float, tolerance: float, alpha: float = ALPHA, start: int = 1
) -> int | None:
    """The smallest number of runs of each side, above ``start``, at which pass rates of
    ``rate`` and ``base_rate`` (rounded to whole runs) would be a significant regression;
    None when none up to 10,000 is. Up to :data:`_SCAN` runs every count is tried (rounding
    makes the p-value jump about, so a bisection there can step over the fewest); beyond it,
    doubling then bisection, as the p-value falls with the runs but for the rounding (hence
    "about")."""

    _check_tolerance(tolerance)

    def decides(n: int) -> bool:
        return _regressed(round(rate * n), n, round(base_rate * n), n, tolerance, alpha)[0]

    low = max(1, start)
    for n in range(low + 1, min(_SCAN, MAX_RUNS) + 1):
        if decides(n):
            return n
    low = max(low, _SCAN)
    high = 2 * low
    while not decides(min(high, MAX_RUNS)):
        if high >= MAX_RUNS:
            return None
        low, high = high, 2 * high
    high = min(high, MAX_RUNS)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if decides(middle) else (middle, high)
    return high


def _check_tolerance(tolerance: float) -> None:
    """A pass rate falls 0 to 100 points: a tolerance outside that is a mistake (-5 for 5)."""
    if not 0 <= tolerance <= 100:
        raise ValueError(f"expected a tolerance of 0 to 100 points, got {tolerance!r}")


#: Up to this many runs, ``runs_needed`` tries every count.
_SCAN = 256


def needed_passes(min_pass_rate: float, runs: int) -> int:
    """The fewest passes of ``runs`` that meet ``min_pass_rate`` (as the summary judges it: a
    rate at the limit, give or take a float, meets it)."""
    needed = max(0, math.ceil((min_pass_rate - 1e-12) * runs))
    while needed > 0 and (needed - 1) / runs >= min_pass_rate - 1e-12:
        needed -= 1
    while needed < runs and needed / runs < min_pass_rate - 1e-12:
        needed += 1
    return needed


@dataclass(frozen=True, slots=True)
class Stop:
    """Where a case's runs were decided: its verdict, after how many runs of at most
    ``max_runs``, and whether the outcome of all of them was ``certain`` by then (else the
    exact test decided)."""

    ok: bool
    after: int
    max_runs: int
    certain: bool

    def reason(self, min_pass_rate: float | None) -> str:
        """``decided after 12 of at most 100 runs: ...`` in a few words."""
        head = f"decided after {self.after} of at most {self.max_runs} runs"
        if min_pass_rate is None:
            why = "a run failed (pass^k)" if not self.ok else "every run passed (pass^k)"
        elif self.certain:
            side = "reach" if self.ok else "miss"
            why = f"certain to {side} min_pass_rate {min_pass_rate:.0%} in all {self.max_runs}"
        else:
            side = "above" if self.ok else "below"
            why = (
                f"pass rate {side} {min_pass_rate:.0%} by an exact binomial test at "
                f"{ALPHA:.0%}/{self.max_runs}"
            )
        return f"{head}: {why}"


def stop_at(
    passed: int, runs: int, min_pass_rate: float | None, max_runs: int, alpha: float = ALPHA
) -> Stop | None:
    """The decision after ``runs`` runs of which ``passed`` passed (None: not decided yet)."""
    if runs < 1:
        return None
    if min_pass_rate is None:  # pass^k: the first failure decides, else all must run
        if passed < runs:
            return Stop(False, runs, max_runs, True)
        return Stop(True, runs, max_runs, True) if runs >= max_runs else None
    needed = needed_passes(min_pass_rate, max_runs)
    if passed >= needed:
        return Stop(True, runs, max_runs, True)
    if passed + max(0, max_runs - runs) < needed:
        return Stop(False, runs, max_runs, True)
    level = alpha / max_runs * (1 + _EPS)
    # Shortcuts, not rules: a tail that holds the mean is about a half or more, and a tail is
    # at least its nearest term: neither can be <= level.
    if binom_pmf(passed, runs, min_pass_rate) > level:
        return None
    if passed > runs * min_pass_rate and binom_ge(passed, runs, min_pass_rate) <= level:
        return Stop(True, runs, max_runs, False)
    if passed < runs * min_pass_rate and binom_le(passed, runs, min_pass_rate) <= level:
        return Stop(False, runs, max_runs, False)
    return None


def stop_point(
    outcomes: Iterable[bool], min_pass_rate: float | None, max_runs: int, alpha: float = ALPHA
) -> Stop | None:
    """The first point at which runs with these ``outcomes`` (in the order they ran) are
    decided by :func:`stop_at`; None when they never are."""
    passed = 0
    for runs, ok in enumerate(outcomes, 1):
        passed += bool(ok)
        found = stop_at(passed, runs, min_pass_rate, max_runs, alpha)
        if found is not None:
            return found
    return None
