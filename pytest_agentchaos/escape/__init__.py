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
from .classifier_policy import ClassifierPolicy
from .classify import ErrorClass, ErrorClassifier
from .error_tables import CATEGORIES, MessageRule
from .history import ActionKey, History, action_key, digest, outcome_of
from .interventions import LADDER, Action, EmergencyStop, Escalated
from .loops import Loop, LoopDetector, LoopPolicy
from .policy import EscapePolicy
from .recorder import Recorder, TraceRecorder
from .retry_after import retry_after_from_headers, retry_after_from_message
from .supervisor import CallOutcome, Supervisor

__all__ = [
    "CATEGORIES",
    "CLOSED",
    "CallOutcome",
    "HALF_OPEN",
    "JITTERS",
    "LADDER",
    "OPEN",
    "Action",
    "ActionKey",
    "Backoff",
    "BackoffPolicy",
    "BreakerOpen",
    "BreakerPolicy",
    "BreakerState",
    "Breakers",
    "CircuitBreaker",
    "ClassifierPolicy",
    "ErrorClass",
    "EmergencyStop",
    "ErrorClassifier",
    "Escalated",
    "EscapePolicy",
    "Jitter",
    "RetryDecision",
    "Supervisor",
    "History",
    "Loop",
    "LoopDetector",
    "LoopPolicy",
    "MessageRule",
    "Recorder",
    "TraceRecorder",
    "action_key",
    "digest",
    "outcome_of",
    "retry_after_from_headers",
    "retry_after_from_message",
]
