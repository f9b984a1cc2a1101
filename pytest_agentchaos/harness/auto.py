"""``--chaos-runs=auto:MAX``: the runs of each case counted as they are judged, and the
decision that stops its remaining runs once its pass rate is decided
(:func:`..report.gate.stop_at`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..report.gate import Stop
    from .variants import Variant

__all__ = ["AutoTally", "CaseKey", "case_key"]

#: A case whose runs are judged together: its case id and its matrix profile.
CaseKey = tuple[str, "str | None"]


def case_key(node_id: str, variant: Variant) -> CaseKey:
    """The case a run of an auto test belongs to: its node id without the run, and its profile."""
    from .variants import case_id

    return case_id(node_id, variant.id), variant.profile


@dataclass
class AutoTally:
    """Each case's judged outcomes in this process (passed or not) and, once decided, the
    :class:`~..report.gate.Stop` that skips its remaining runs."""

    outcomes: dict[CaseKey, list[bool]] = field(default_factory=dict)
    stops: dict[CaseKey, Stop] = field(default_factory=dict)

    def skip_reason(self, key: CaseKey, min_pass_rate: float | None) -> str | None:
        """Why a further run of case ``key`` is skipped (None: the case is not decided yet)."""
        stop = self.stops.get(key)
        return None if stop is None else f"agentchaos: {key[0]}: {stop.reason(min_pass_rate)}"

    def record(
        self, key: CaseKey, outcome: str, min_pass_rate: float | None, max_runs: int
    ) -> None:
        """Count a run's outcome (``passed``, ``failed``, ``error``; others are not judged) and
        decide the case if it now is."""
        from ..report.gate import stop_at
        from ..report.passk import JUDGED

        if outcome not in JUDGED:
            return
        outcomes = self.outcomes.setdefault(key, [])
        outcomes.append(outcome == "passed")
        if key not in self.stops:
            stop = stop_at(sum(outcomes), len(outcomes), min_pass_rate, max_runs)
            if stop is not None:
                self.stops[key] = stop
