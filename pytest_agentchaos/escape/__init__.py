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
from .history import ActionKey, History, digest
from .idempotency import IDEMPOTENCY_FIELD, idempotency_key, keyed
from .interventions import LADDER, Action, EmergencyStop, Escalated
from .keys import Keyer, action_key, outcome_of
from .loop_policy import KeyFunction, LoopCall
from .loops import Loop, LoopDetector, LoopPolicy
from .normalize import mask, mask_text
from .observer import LoopObserver, detect_loops
from .policy import EscapePolicy
from .recorder import Recorder, TraceRecorder
from .retry_after import retry_after_from_headers, retry_after_from_message
from .supervisor import CallOutcome, Supervisor
from .texts import error_template

__all__ = [
    "CATEGORIES",
    "CLOSED",
    "CallOutcome",
    "HALF_OPEN",
    "IDEMPOTENCY_FIELD",
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
    "KeyFunction",
    "Keyer",
    "Loop",
    "LoopCall",
    "LoopDetector",
    "LoopObserver",
    "LoopPolicy",
    "MessageRule",
    "Recorder",
    "TraceRecorder",
    "action_key",
    "detect_loops",
    "digest",
    "error_template",
    "idempotency_key",
    "keyed",
    "mask",
    "mask_text",
    "outcome_of",
    "retry_after_from_headers",
    "retry_after_from_message",
]
