"""The escape stack: loop detection, error classes, backoff, circuit breakers, interventions.

Free of pytest: production agents use it directly; the harness exercises it.
"""

from .history import ActionKey, History, action_key, digest, outcome_of
from .loops import Loop, LoopDetector, LoopPolicy
from .recorder import Recorder, TraceRecorder

__all__ = [
    "ActionKey",
    "History",
    "Loop",
    "LoopDetector",
    "LoopPolicy",
    "Recorder",
    "TraceRecorder",
    "action_key",
    "digest",
    "outcome_of",
]
