"""The escape stack: loop detection, error classes, backoff, circuit breakers, interventions.

Free of pytest: production agents use it directly; the harness exercises it.
"""

from .recorder import Recorder, TraceRecorder

__all__ = ["Recorder", "TraceRecorder"]
