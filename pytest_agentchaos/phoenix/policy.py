"""``PhoenixPolicy``: when the rebirth runner snapshots, what counts as stagnation, how often
and how fast it rebirths an agent (the profile's ``[phoenix]`` table)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..config import Validator, check_fields, count, integer, number, parse_table

__all__ = ["PhoenixPolicy"]


@dataclass(frozen=True)
class PhoenixPolicy:
    """How the :class:`~.runner.PhoenixRunner` works.

    ``interval``: a snapshot every this many steps (and at every milestone the agent marks).
    ``keep``: snapshots kept besides milestones. ``max_rebirths``: rebirths before escalation.
    ``backoff`` / ``backoff_factor`` / ``max_backoff``: seconds waited on the run's clock
    before rebirth ``n`` (``backoff * backoff_factor ** (n - 1)``, at most ``max_backoff``).
    ``stagnation_rounds``: steps with progress reported and not rising that make stagnation
    (``0``: never; a step that reports no progress is unknown, not zero, and neither counts
    nor resets). ``relapse_steps``: a reborn agent falling into the same trouble
    within this many steps marks the snapshot it came from bad, so the next rebirth goes one
    further back.
    """

    interval: int = 5
    keep: int = 5
    max_rebirths: int = 3
    backoff: float = 1.0
    backoff_factor: float = 2.0
    max_backoff: float = 60.0
    stagnation_rounds: int = 10
    relapse_steps: int = 10

    def __post_init__(self) -> None:
        check_fields(self, _FIELDS, "PhoenixPolicy")

    def wait(self, rebirth: int) -> float:
        """Seconds to wait before rebirth number ``rebirth`` (1-based)."""
        return float(min(self.max_backoff, self.backoff * self.backoff_factor ** (rebirth - 1)))

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str = "[phoenix]") -> PhoenixPolicy:
        """Validate a profile's ``[phoenix]`` table; errors name ``where``, the key and what
        is allowed. Missing keys keep their defaults."""
        return cls(**parse_table(raw, _FIELDS, where, "phoenix"))


_FIELDS: dict[str, Validator] = {
    "interval": count(),
    "keep": count(),
    "max_rebirths": integer(minimum=0),
    "backoff": number(minimum=0),
    "backoff_factor": number(minimum=1),
    "max_backoff": number(minimum=0),
    "stagnation_rounds": integer(minimum=0),
    "relapse_steps": count(),
}
