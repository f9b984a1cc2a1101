"""How the escape stack writes its decisions: to a trace, stamped with step and time.

Inside a chaos run the :class:`~pytest_agentchaos.inject.ChaosSession` is the recorder; in
production, :class:`TraceRecorder` writes to a trace of its own (or nowhere, with ``None``).
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from ..clock.clock import Clock, RealClock
from ..trace.events import Event
from ..trace.trace import Trace

E = TypeVar("E", bound=Event)


class Recorder(Protocol):
    """Appends an event of type ``cls`` at the current step and time, and returns it."""

    def record(self, cls: type[E], **fields: Any) -> E:
        """Append ``cls(**fields)`` at the current step and time; return the event."""
        ...


class TraceRecorder:
    """A recorder for code that runs without the harness: its own trace, step and clock."""

    def __init__(self, trace: Trace | None = None, clock: Clock | None = None) -> None:
        self.trace = trace if trace is not None else Trace()
        self.clock = clock if clock is not None else RealClock()
        self.step = 0
        self._t0 = self.clock.now()

    def record(self, cls: type[E], **fields: Any) -> E:
        """Append ``cls(**fields)`` to this trace at ``step``, timed from the recorder's
        creation; return the event."""
        event = cls(step=self.step, t=self.clock.now() - self._t0, **fields)
        self.trace.append(event)
        return event
