"""Halting the semantic spiral (seed 004): independent heuristics over an agent's steps and
the weighted monitor that decides to stop. Free of pytest; torch is imported only when the
sentence embedder first encodes."""

from __future__ import annotations

from .embed import (
    CachedEmbedder,
    Embedder,
    LexicalEmbedder,
    MultilingualEmbedder,
    SentenceEmbedder,
)
from .heuristics import Signal
from .interventions import ACTIONS, Action, Responder
from .monitor import HaltDecision, HaltMonitor
from .policy import HEURISTICS, HaltPolicy

__all__ = [
    "ACTIONS",
    "HEURISTICS",
    "Action",
    "CachedEmbedder",
    "Embedder",
    "HaltDecision",
    "HaltMonitor",
    "HaltPolicy",
    "LexicalEmbedder",
    "MultilingualEmbedder",
    "Responder",
    "SentenceEmbedder",
    "Signal",
]
