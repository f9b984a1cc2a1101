"""pass^k: a test run under K seeds passes only if every run passes (the tau-bench
reliability metric), or, with ``min_pass_rate``, if that share of its runs pass. The summary
shows each test's pass rate with its Wilson 95% interval: with few runs, a rate says little,
and the interval says how little.

Reads the summary rows only (plain data: they cross pytest-xdist).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..verdicts.verdict import NOT_EXERCISED, outcome_of
from .gate import Stop, stop_point

__all__ = ["CaseRate", "case_rates", "rate_lines", "wilson"]

#: The normal quantile of a two-sided 95% interval.
Z95 = 1.959963984540054


def wilson(passed: int, runs: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``passed`` successes in ``runs`` trials (``(0, 1)`` for
    no trials): unlike the normal approximation it stays within [0, 1] and is honest at 0/n
    and n/n."""
    if runs <= 0:
        return 0.0, 1.0
    if not 0 <= passed <= runs:
        raise ValueError(f"passed must be within 0..{runs}, got {passed}")
    p = passed / runs
    z2 = z * z
    centre = (p + z2 / (2 * runs)) / (1 + z2 / runs)
    half = z * math.sqrt(p * (1 - p) / runs + z2 / (4 * runs * runs)) / (1 + z2 / runs)
    # exact ends (centre - half is 5e-17 at 0/n by rounding): the interval holds the rate
    low = 0.0 if passed == 0 else max(0.0, centre - half)
    high = 1.0 if passed == runs else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class CaseRate:
    """The runs of one test case under one profile."""

    case: str
    profile: str
    runs: int
    passed: int
    #: the share that must pass (None: all of them, pass^k)
    min_pass_rate: float | None = None
    #: verdict name -> in how many of the runs it was not exercised (nothing arose to judge)
    not_exercised: dict[str, int] = field(default_factory=dict)
    #: ``--chaos-runs=auto:MAX``: MAX, and where the runs were decided (None: they were not)
    max_runs: int | None = None
    stop: Stop | None = None

    @property
    def rate(self) -> float:
        """The share of runs that passed."""
        return self.passed / self.runs if self.runs else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """The Wilson 95% interval of the pass rate."""
        return wilson(self.passed, self.runs)

    @property
    def ok(self) -> bool:
        """pass^k (every run passed), or the rate met ``min_pass_rate``; for auto runs, what
        decided them."""
        if self.stop is not None:
            return self.stop.ok
        if self.min_pass_rate is None:
            return self.passed == self.runs
        return self.rate >= self.min_pass_rate - 1e-12

    def line(self) -> str:
        """``t.py::test@flaky: 9/10 runs passed (90%, Wilson 95% 60%-98%): pass^10 FAIL``."""
        low, high = self.interval
        rule = f"pass^{self.runs}" if self.min_pass_rate is None else (
            f"min_pass_rate {self.min_pass_rate:.0%}"
        )  # fmt: skip
        idle = "".join(
            f"; {name} not exercised in {n} of {self.runs} runs"
            for name, n in sorted(self.not_exercised.items())
        )
        auto = ""
        if self.stop is not None:
            auto = f"; {self.stop.reason(self.min_pass_rate)}"
        elif self.max_runs is not None:
            auto = f"; not decided after {self.runs} of at most {self.max_runs} runs"
        return (
            f"{self.case}@{self.profile}: {self.passed}/{self.runs} runs passed "
            f"({self.rate:.0%}, Wilson 95% {low:.0%}-{high:.0%}): {rule} "
            f"{'ok' if self.ok else 'FAIL'}{auto}{idle}"
        )


#: The outcomes of runs that are judged: a skipped run, or one the user marked xfail, says
#: nothing of the agent's reliability.
JUDGED = frozenset({"passed", "failed", "error"})


def case_rates(rows: Iterable[Mapping[str, Any]]) -> list[CaseRate]:
    """The pass rate of each test case run several times (rows with a ``run`` number), by
    case and profile, sorted. A run passes when its outcome is ``passed``; skipped runs and
    those the user marked xfail are left out. Each case counts, per verdict, the runs in which
    it was not exercised. The runs of ``--chaos-runs=auto:MAX`` (rows with ``auto_runs``) are
    judged by where :func:`.gate.stop_point` decides them, in the order of the rows."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        if row.get("run") is None or row.get("outcome") not in JUDGED:
            continue
        key = (str(row.get("case") or row.get("test", "")), str(row.get("profile", "")))
        groups.setdefault(key, []).append(row)
    rates = []
    for (case, profile), group in sorted(groups.items()):
        limits = [r["min_pass_rate"] for r in group if r.get("min_pass_rate") is not None]
        idle: dict[str, int] = {}
        for r in group:
            verdicts = r.get("verdicts")
            for name, value in verdicts.items() if isinstance(verdicts, Mapping) else ():
                if outcome_of(value) == NOT_EXERCISED:
                    idle[str(name)] = idle.get(str(name), 0) + 1
        min_rate = float(max(limits)) if limits else None
        most = [r["auto_runs"] for r in group if type(r.get("auto_runs")) is int]
        max_runs = max(max(most), len(group)) if most else None
        outcomes = [r.get("outcome") == "passed" for r in group]
        rates.append(
            CaseRate(
                case,
                profile,
                runs=len(group),
                passed=sum(outcomes),
                min_pass_rate=min_rate,
                not_exercised=idle,
                max_runs=max_runs,
                stop=stop_point(outcomes, min_rate, max_runs) if max_runs is not None else None,
            )
        )
    return rates


def rate_lines(rates: Sequence[CaseRate]) -> list[str]:
    """The summary's pass-rate lines, one per case, those below their rule first."""
    return [r.line() for r in sorted(rates, key=lambda r: r.ok)]
