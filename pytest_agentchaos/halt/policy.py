"""How the halt monitor decides: strikes to halt, thresholds, weights, hard limits."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["HaltPolicy"]

_HEURISTICS = (
    "repetition", "novelty", "progress", "apology", "self_reference", "oscillation", "drift",
    "tool_failure",
)  # fmt: skip


@dataclass(frozen=True)
class HaltPolicy:
    """``strikes``: occurrences of a pattern that halt (three strikes). ``window``: the steps
    a repetition is looked for in. ``lexical_overlap`` / ``cjk_overlap``: token overlap
    (Jaccard) that makes two outputs near-duplicates (words; CJK character bigrams).
    ``semantic_similarity``: cosine of sentence embeddings that makes two (non-CJK) outputs say
    the same. ``stagnation_steps``: reports of flat progress before each is a strike.
    ``weights``: how much each heuristic's score counts in the risk, which combines them as
    independent evidence (``1 - prod(1 - weight * score)``); ``threshold``: the risk that
    halts. ``max_steps`` / ``max_seconds`` / ``max_tokens``: hard limits (0: none)."""

    strikes: int = 3
    window: int = 6
    lexical_overlap: float = 0.8
    cjk_overlap: float = 0.7
    semantic_similarity: float = 0.8
    stagnation_steps: int = 4
    novelty_steps: int = 2
    threshold: float = 0.95
    weights: Mapping[str, float] = field(default_factory=dict)
    max_steps: int = 0
    max_seconds: float = 0.0
    max_tokens: int = 0

    def __post_init__(self) -> None:
        for name in ("strikes", "window", "stagnation_steps", "novelty_steps"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"HaltPolicy.{name} must be an int >= 1, got {value!r}")
        for name in ("lexical_overlap", "cjk_overlap", "semantic_similarity", "threshold"):
            value = getattr(self, name)
            if not _number(value) or not 0 < value <= 1:
                raise ValueError(f"HaltPolicy.{name} must be a number in (0, 1], got {value!r}")
        for name in ("max_steps", "max_seconds", "max_tokens"):
            value = getattr(self, name)
            if not _number(value) or value < 0:
                raise ValueError(f"HaltPolicy.{name} must be a number >= 0, got {value!r}")
        if not isinstance(self.weights, Mapping):
            raise ValueError(f"HaltPolicy.weights must be a table, got {self.weights!r}")
        for key, value in self.weights.items():
            if key not in _HEURISTICS:
                known = ", ".join(_HEURISTICS)
                raise ValueError(f"HaltPolicy.weights: unknown heuristic {key!r} (known: {known})")
            if not _number(value) or not 0 <= value <= 1:
                raise ValueError(f"HaltPolicy.weights.{key} must be in [0, 1], got {value!r}")

    def weight(self, heuristic: str) -> float:
        return float(self.weights.get(heuristic, 1.0))

    @classmethod
    def from_dict(cls, table: Mapping[str, Any]) -> HaltPolicy:
        """A policy from a profile's ``[halt]`` table (unknown keys are an error)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(table) - known)
        if unknown:
            raise ValueError(f"unknown key {unknown[0]!r}; allowed: {', '.join(sorted(known))}")
        return cls(**dict(table))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
