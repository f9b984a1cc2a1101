"""How the halt monitor decides (the profile's ``[halt]`` table): strikes to halt, thresholds,
weights, hard limits."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config import Validator, check_fields, count, fail, integer, number, parse_table

__all__ = ["HALT_DECIDERS", "HEURISTICS", "HaltPolicy"]

#: The heuristics of the halt monitor, by name (weights and ``by=`` name them).
HEURISTICS = (
    "repetition", "novelty", "progress", "apology", "self_reference", "oscillation", "drift",
    "tool_failure", "state",
)  # fmt: skip
#: What may decide a halt: a heuristic, or the monitor's hard ``limits``.
HALT_DECIDERS = (*HEURISTICS, "limits")


def _weights(value: Any, where: str) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise fail(where, f"must be a table of heuristic -> weight, got {value!r}")
    out = {}
    for key, weight in value.items():
        if key not in HEURISTICS:
            raise fail(where, f"unknown heuristic {key!r}; known: {', '.join(HEURISTICS)}")
        out[key] = number(minimum=0, maximum=1)(weight, f"{where}.{key}")
    return out


_SHARE = number(minimum=0.01, maximum=1)
_FIELDS: dict[str, Validator] = {
    "strikes": count(),
    "window": count(),
    "lexical_overlap": _SHARE,
    "cjk_overlap": _SHARE,
    "semantic_similarity": _SHARE,
    "cjk_semantic_similarity": _SHARE,
    "stagnation_steps": count(),
    "novelty_steps": count(),
    "threshold": _SHARE,
    "weights": _weights,
    "max_steps": integer(minimum=0),
    "max_seconds": number(minimum=0),
    "max_tokens": integer(minimum=0),
}


@dataclass(frozen=True)
class HaltPolicy:
    """``strikes``: occurrences of a pattern that halt (three strikes). ``window``: the steps
    a repetition is looked for in. ``lexical_overlap`` / ``cjk_overlap``: token overlap
    (Jaccard) that makes two outputs near-duplicates (words; CJK character bigrams).
    ``semantic_similarity``: cosine of sentence embeddings that makes two (non-CJK) outputs say
    the same; ``cjk_semantic_similarity``: the same for CJK text, by the multilingual model
    (:class:`~.embed.MultilingualEmbedder`). ``stagnation_steps``: reports of flat progress
    before each is a strike; ``novelty_steps``: steps in a row without new information before
    each is a strike. ``weights``: how much each heuristic's score counts in the risk, which
    combines them as independent evidence (``1 - prod(1 - weight * score)``); ``threshold``:
    the risk that halts, once one heuristic has its full ``strikes``. ``max_steps`` /
    ``max_seconds`` / ``max_tokens``: hard limits (0: none)."""

    strikes: int = 3
    window: int = 6
    lexical_overlap: float = 0.8
    cjk_overlap: float = 0.7
    semantic_similarity: float = 0.8
    cjk_semantic_similarity: float = 0.7
    stagnation_steps: int = 4
    novelty_steps: int = 2
    threshold: float = 0.95
    weights: Mapping[str, float] = field(default_factory=dict)
    max_steps: int = 0
    max_seconds: float = 0.0
    max_tokens: int = 0

    def __post_init__(self) -> None:
        check_fields(self, _FIELDS, "HaltPolicy")

    def weight(self, heuristic: str) -> float:
        """The weight of ``heuristic`` in the risk (1.0 unless the policy says otherwise)."""
        return float(self.weights.get(heuristic, 1.0))

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str = "[halt]") -> HaltPolicy:
        """Validate a profile's ``[halt]`` table; errors name ``where``, the key and what is
        allowed. Missing keys keep their defaults."""
        return cls(**parse_table(raw, _FIELDS, where, "halt"))
