"""Exact tail probabilities of the binomial and hypergeometric distributions, the sums behind
the pass-rate gate (:mod:`.gate`). Free of scipy: a tail is a finite sum of the terms
``C(n, i) p^i (1-p)^(n-i)`` (binomial) or ``C(K, i) C(N-K, n-i) / C(N, n)`` (hypergeometric),
added in log space so that 10,000 runs neither overflow nor underflow.

Both distributions are unimodal: a tail that lies beyond the mode is summed from its end
nearest the mode outward, and the sum stops once a term no longer changes it (the terms only
shrink from there), so the far tail of 10,000 runs costs a few dozen terms.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["binom_ge", "binom_le", "binom_pmf", "fisher_less", "hypergeom_le"]

#: A term this much smaller than the sum so far no longer changes a float sum.
_NEGLIGIBLE = math.log(1e-18)


def _lcomb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _tail(log_term: Callable[[int], float], first: int, last: int, mode: int) -> float:
    """``sum(exp(log_term(i)) for i in first..last)``, at most 1."""
    if first > last:
        return 0.0
    if first >= mode:  # decreasing terms: from the first on
        order = range(first, last + 1)
    elif last <= mode:  # increasing terms: from the last down
        order = range(last, first - 1, -1)
    else:  # the mode inside: every term
        logs = [log_term(i) for i in range(first, last + 1)]
        top = max(logs)
        if top == -math.inf:
            return 0.0
        return min(1.0, math.exp(top) * math.fsum(math.exp(x - top) for x in logs))
    top = -math.inf
    parts: list[float] = []
    for i in order:
        log = log_term(i)
        if top == -math.inf:
            top = log
            if top == -math.inf:
                return 0.0
        elif log - top < _NEGLIGIBLE - math.log(len(parts)):
            break
        parts.append(math.exp(log - top))
    return min(1.0, math.exp(top) * math.fsum(parts))


def _check_binom(n: int, p: float) -> None:
    if n < 0 or not 0.0 <= p <= 1.0:
        raise ValueError(f"expected n >= 0 and 0 <= p <= 1, got n={n}, p={p}")


def _binom_term(n: int, p: float) -> Callable[[int], float]:
    if p in (0.0, 1.0):  # a point mass (0 ** 0 is 1)
        at = n if p == 1.0 else 0
        return lambda i: 0.0 if i == at else -math.inf
    lp, lq = math.log(p), math.log1p(-p)
    return lambda i: _lcomb(n, i) + i * lp + (n - i) * lq


def _binom_mode(n: int, p: float) -> int:
    return min(n, math.floor((n + 1) * p))


def binom_pmf(k: int, n: int, p: float) -> float:
    """``P(X = k)`` for ``X ~ Binomial(n, p)`` (a lower bound of any tail that holds ``k``)."""
    _check_binom(n, p)
    return math.exp(_binom_term(n, p)(k)) if 0 <= k <= n else 0.0


def binom_le(k: int, n: int, p: float) -> float:
    """``P(X <= k)`` for ``X ~ Binomial(n, p)``."""
    _check_binom(n, p)
    if k >= n:
        return 1.0
    return _tail(_binom_term(n, p), 0, k, _binom_mode(n, p))


def binom_ge(k: int, n: int, p: float) -> float:
    """``P(X >= k)`` for ``X ~ Binomial(n, p)``."""
    _check_binom(n, p)
    if k <= 0:
        return 1.0
    return _tail(_binom_term(n, p), k, n, _binom_mode(n, p))


def hypergeom_le(k: int, total: int, good: int, draws: int) -> float:
    """``P(X <= k)`` for ``X`` the good items among ``draws`` drawn without replacement from
    ``total`` items of which ``good`` are good."""
    if not (0 <= good <= total and 0 <= draws <= total):
        raise ValueError(f"expected 0 <= good, draws <= total, got {good}, {draws}, {total}")
    low, high = max(0, draws - (total - good)), min(draws, good)
    if k >= high:
        return 1.0
    base = _lcomb(total, draws)
    mode = (draws + 1) * (good + 1) // (total + 2)

    def term(i: int) -> float:
        return _lcomb(good, i) + _lcomb(total - good, draws - i) - base

    return _tail(term, low, k, max(low, min(high, mode)))


def fisher_less(passed: int, runs: int, base_passed: int, base_runs: int) -> float:
    """The one-sided p-value of Fisher's exact test that ``passed`` of ``runs`` is a lower pass
    rate than ``base_passed`` of ``base_runs``: given the runs of each side and the passes of
    both, the chance that the first side holds ``passed`` or fewer of the passes."""
    if not (0 <= passed <= runs and 0 <= base_passed <= base_runs):
        raise ValueError("expected 0 <= passed <= runs on each side")
    return hypergeom_le(passed, runs + base_runs, passed + base_passed, runs)
