"""The escape stack: loop detection, error classes, backoff, circuit breakers, interventions.

Free of pytest: production agents use it directly; the harness exercises it.
"""

from .backoff import JITTERS, Backoff, BackoffPolicy, Jitter, RetryDecision
from .breaker import (
    CLOSED,
    HALF_OPEN,
    OPEN,
    BreakerOpen,
    BreakerPolicy,
    Breakers,
    BreakerState,
    CircuitBreaker,
)
from .history import ActionKey, History, action_key, digest, outcome_of
from .loops import Loop, LoopDetector, LoopPolicy
from .recorder import Recorder, TraceRecorder

__all__ = [
    "CLOSED",
    "HALF_OPEN",
    "JITTERS",
    "OPEN",
    "ActionKey",
    "Backoff",
    "BackoffPolicy",
    "BreakerOpen",
    "BreakerPolicy",
    "BreakerState",
    "Breakers",
    "CircuitBreaker",
    "Jitter",
    "RetryDecision",
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
