"""The breaking point of one severity parameter: bisect ``<fault>.<parameter>`` (a latency's
``seconds``, a rate limit's ``retry_after``, a fault's ``probability``, a burst's length
``first``) to the least value where the agent's pass rate falls below what it must keep, with
the pass rate's interval there. Free of pytest.

The bisection assumes that a harsher value never helps the agent (monotone): it checks both
ends first and says so when the agent already breaks at the mildest value or never breaks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..config import fail
from ..faults.kinds import kind_class
from ..faults.plan import FaultSpec, parse_fault
from ..report.passk import wilson

__all__ = ["PARAMETERS", "BreakingPoint", "Probe", "Target", "bisect", "parse_target", "vary"]

#: The parameters that can be bisected: (mildest, harshest, resolution, whole numbers).
PARAMETERS: dict[str, tuple[float, float, float, bool]] = {
    "seconds": (0.0, 300.0, 0.1, False),
    "retry_after": (0.0, 300.0, 0.1, False),
    "probability": (0.0, 1.0, 0.01, False),
    "first": (1, 20, 1, True),
}


@dataclass(frozen=True)
class Target:
    """``<fault>.<parameter>``: a fault kind and one of its severity parameters."""

    kind: str
    parameter: str

    def __str__(self) -> str:
        return f"{self.kind}.{self.parameter}"


def parse_target(raw: str, where: str = "--chaos-breaking-point") -> Target:
    """``latency.seconds`` and the like; a bad one is one error naming what is allowed."""
    kind, dot, parameter = str(raw).partition(".")
    allowed = ", ".join(PARAMETERS)
    if not dot or not kind or not parameter:
        raise fail(where, f"expected <fault>.<parameter> such as latency.seconds, got {raw!r}")
    cls = kind_class(kind, where)
    if parameter not in PARAMETERS:
        raise fail(where, f"cannot bisect {parameter!r}; bisectable parameters: {allowed}")
    own = parameter in cls.params or parameter in ("probability", "first")
    if not own:
        raise fail(where, f"kind {kind!r} has no parameter {parameter!r}")
    return Target(kind, parameter)


def vary(faults: Sequence[FaultSpec], target: Target, value: float) -> tuple[FaultSpec, ...]:
    """``faults`` with ``target``'s parameter set to ``value`` in every fault of its kind (a
    fault of that kind on every call is added when there is none)."""
    out = []
    touched = False
    for spec in faults:
        if spec.kind.name != target.kind:
            out.append(spec)
            continue
        table = spec.to_dict()
        table[target.parameter] = value
        out.append(parse_fault(table, f"{target}={value}"))
        touched = True
    if not touched:
        out.append(parse_fault({"kind": target.kind, target.parameter: value}, f"{target}={value}"))
    return tuple(out)


@dataclass(frozen=True)
class Probe:
    """The runs at one value: how many passed of how many."""

    value: float
    passed: int
    runs: int

    @property
    def rate(self) -> float:
        return self.passed / self.runs if self.runs else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """The pass rate's 95% Wilson interval."""
        return wilson(self.passed, self.runs)


@dataclass(frozen=True)
class BreakingPoint:
    """Where the agent breaks: ``threshold`` (the least failing value; None: it never broke
    up to the harshest value), the probe there and the last passing one, and every probe."""

    target: Target
    threshold: float | None
    breaks: Probe | None
    holds: Probe | None
    probes: tuple[Probe, ...]
    min_pass_rate: float

    def describe(self) -> str:
        """One line for the terminal and the report."""
        if self.breaks is None:
            top = self.holds.value if self.holds is not None else "?"
            return f"{self.target}: never broke up to {_n(top)} (pass rate {_rate(self.holds)})"
        if self.holds is None:
            return (
                f"{self.target}: breaks already at the mildest value {_n(self.breaks.value)} "
                f"(pass rate {_rate(self.breaks)})"
            )
        return (
            f"{self.target}: breaks at {_n(self.breaks.value)} (pass rate {_rate(self.breaks)}); "
            f"holds at {_n(self.holds.value)} (pass rate {_rate(self.holds)}); "
            f"min_pass_rate {self.min_pass_rate:g}, {len(self.probes)} values probed"
        )

    def as_dict(self) -> dict[str, Any]:
        """The result as plain data (the report's)."""

        def probe(p: Probe | None) -> Mapping[str, Any] | None:
            if p is None:
                return None
            low, high = p.interval
            return {"value": p.value, "passed": p.passed, "runs": p.runs,
                    "interval": [round(low, 4), round(high, 4)]}  # fmt: skip

        return {
            "target": str(self.target),
            "threshold": self.threshold,
            "breaks": probe(self.breaks),
            "holds": probe(self.holds),
            "min_pass_rate": self.min_pass_rate,
            "probes": len(self.probes),
            "description": self.describe(),
        }


def _n(value: float | str) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else value


def _rate(p: Probe | None) -> str:
    if p is None:
        return "-"
    low, high = p.interval
    return f"{p.passed}/{p.runs}, 95% interval {low:.2f}-{high:.2f}"


def bisect(
    target: Target,
    probe: Callable[[float], Probe],
    *,
    min_pass_rate: float = 1.0,
    low: float | None = None,
    high: float | None = None,
) -> BreakingPoint:
    """Bisect ``target``'s parameter between its mildest and harshest values (or ``low`` /
    ``high``): ``probe(value)`` runs the agent at ``value``; a value *breaks* it when the pass
    rate falls below ``min_pass_rate``."""
    mildest, harshest, resolution, whole = PARAMETERS[target.parameter]
    lo = mildest if low is None else low
    hi = harshest if high is None else high
    probes: list[Probe] = []

    def run(value: float) -> Probe:
        found = probe(int(round(value)) if whole else round(value, 4))
        probes.append(found)
        return found

    def breaks(p: Probe) -> bool:
        return p.rate < min_pass_rate

    top = run(hi)
    if not breaks(top):
        return BreakingPoint(target, None, None, top, tuple(probes), min_pass_rate)
    bottom = run(lo)
    if breaks(bottom):
        return BreakingPoint(target, bottom.value, bottom, None, tuple(probes), min_pass_rate)
    holds, fails = bottom, top
    while fails.value - holds.value > resolution:
        # on the parameter's grid (whole calls; tenths of a second ...): values a reader keeps
        middle = round(round((holds.value + fails.value) / 2 / resolution) * resolution, 4)
        if whole:
            middle = int(middle)
        if middle in (holds.value, fails.value):
            break
        found = run(middle)
        if breaks(found):
            fails = found
        else:
            holds = found
    return BreakingPoint(target, fails.value, fails, holds, tuple(probes), min_pass_rate)
