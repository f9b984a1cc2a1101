"""The append-only run trace: the one data path every part writes to or reads from."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterator
from typing import IO, Any, TypeVar

from .events import (
    EVENT_TYPES,
    BudgetExhaustedEvent,
    Event,
    FaultInjected,
    Halt,
    ModelCall,
    ModelResult,
    ToolCall,
    ToolResult,
)
from .writer import write_trace

E = TypeVar("E", bound=Event)

FORMAT_VERSION = 1


class Trace:
    """An append-only list of events plus run metadata (seed, profile, test id).

    Writers call :meth:`append`; readers iterate or use the query helpers. The trace is
    plain data: :meth:`to_json` and :meth:`from_json` round-trip it.
    """

    __slots__ = ("_events", "_subscribers", "meta")

    def __init__(self, events: list[Event] | None = None, meta: dict[str, Any] | None = None):
        self._events: list[Event] = list(events or [])
        self._subscribers: list[Callable[[Event], None]] = []
        self.meta: dict[str, Any] = dict(meta or {})

    def append(self, event: Event) -> Event:
        """Add an event at the end, tell the subscribers, and return it."""
        self._events.append(event)
        for subscriber in self._subscribers:
            subscriber(event)
        return event

    def subscribe(self, subscriber: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``subscriber(event)`` for every event appended from now on (online detectors
        and monitors read the run this way); returns a function that unsubscribes it.

        A subscriber may append events of its own (a detection, an intervention): they reach
        the subscribers too, after the event that caused them.
        """
        self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

        return unsubscribe

    @property
    def events(self) -> tuple[Event, ...]:
        """Every event, in order (a snapshot copy)."""
        return tuple(self._events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events)

    def __len__(self) -> int:
        return len(self._events)

    def __getitem__(self, index: int) -> Event:
        return self._events[index]

    def __repr__(self) -> str:
        return f"Trace({len(self._events)} events, meta={self.meta!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Trace):
            return NotImplemented
        return self._events == other._events and self.meta == other.meta

    # -- queries -----------------------------------------------------------------------

    def of_type(self, kind: type[E]) -> list[E]:
        """All events of one type, in order."""
        return [e for e in self._events if isinstance(e, kind)]

    def tool_calls(self, tool: str | None = None, channel: str | None = None) -> list[ToolCall]:
        """Tool and HTTP calls, optionally for one tool name or one channel."""
        return [
            e
            for e in self._events
            if isinstance(e, ToolCall)
            and (tool is None or e.tool == tool)
            and (channel is None or e.channel == channel)
        ]

    def tool_results(self, tool: str | None = None) -> list[ToolResult]:
        """Results of tool and HTTP calls, optionally for one tool name."""
        return [e for e in self._events if isinstance(e, ToolResult) and tool in (None, e.tool)]

    def model_calls(self) -> list[ModelCall]:
        """Model calls, in order."""
        return self.of_type(ModelCall)

    def model_results(self) -> list[ModelResult]:
        """Results of model calls, in order."""
        return self.of_type(ModelResult)

    def faults(self, kind: str | None = None) -> list[FaultInjected]:
        """Faults that fired, optionally of one kind."""
        return [e for e in self._events if isinstance(e, FaultInjected) and kind in (None, e.kind)]

    def errors(self) -> list[ToolResult | ModelResult]:
        """Tool, HTTP and model results that failed."""
        return [e for e in self._events if isinstance(e, (ToolResult, ModelResult)) and not e.ok]

    def budget_exhausted(self) -> list[BudgetExhaustedEvent]:
        """The hard budgets that were hit."""
        return self.of_type(BudgetExhaustedEvent)

    def hard_halts(self) -> list[Halt]:
        """``Halt`` events that stopped the run from outside the agent (the network guard, the
        watchdog, a framework's cap): hard halts other than budgets."""
        return [e for e in self._events if isinstance(e, Halt) and e.hard]

    def tail(self, n: int = 20) -> list[Event]:
        """The last ``n`` events."""
        return self._events[-n:] if n > 0 else []

    @property
    def steps(self) -> int:
        """The step index reached (the step of the last event, 0 when empty)."""
        return self._events[-1].step if self._events else 0

    @property
    def elapsed(self) -> float:
        """Virtual seconds from the start of the run to the last event."""
        return self._events[-1].t if self._events else 0.0

    def fault_counts(self) -> dict[str, int]:
        """How many faults fired, by kind, in first-seen order."""
        counts: dict[str, int] = {}
        for e in self.faults():
            counts[e.kind] = counts.get(e.kind, 0) + 1
        return counts

    def schedule(self) -> list[dict[str, Any]]:
        """The resolved fault schedule: one entry per fault that fired, as plain data.

        ``FaultPlan.from_schedule`` replays exactly these decisions.
        """
        return [
            {
                "channel": e.channel,
                "target": e.target,
                "index": e.index,
                "kind": e.kind,
                "fault": e.fault,
                "detail": dict(e.detail),
            }
            for e in self.faults()
        ]

    # -- serialisation -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The trace as plain data: format version, ``meta`` and every event's dict."""
        return {
            "format": FORMAT_VERSION,
            "meta": self.meta,
            "events": [e.to_dict() for e in self._events],
        }

    def to_json(self, indent: int | None = None) -> str:
        """Serialise to JSON text (for small traces; :meth:`write` streams to a file)."""
        buffer = io.StringIO()
        self.write(buffer, indent=indent)
        return buffer.getvalue()

    def write(self, target: str | os.PathLike[str] | IO[str], indent: int | None = None) -> None:
        """Write the trace as JSON one event at a time (a path is replaced atomically), so
        writing never holds a second copy of a long run in memory."""
        write_trace(target, FORMAT_VERSION, self.meta, self._events, indent)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        """Rebuild a trace from :meth:`to_dict`'s data; ``ValueError`` when it is not one."""
        if not isinstance(data, dict) or "events" not in data:
            raise ValueError("not a pytest-agentchaos trace: expected an object with 'events'")
        version = data.get("format", FORMAT_VERSION)
        if type(version) is not int or version != FORMAT_VERSION:
            raise ValueError(f"unsupported trace format {version!r} (expected {FORMAT_VERSION})")
        events: list[Event] = []
        for i, raw in enumerate(data["events"]):
            events.append(_event_from_dict(raw, i))
        return cls(events, meta=data.get("meta") or {})

    @classmethod
    def from_json(cls, text: str | bytes) -> Trace:
        """Read a trace written by :meth:`to_json`."""
        return cls.from_dict(json.loads(text))


def _event_from_dict(raw: Any, position: int) -> Event:
    if not isinstance(raw, dict) or "type" not in raw:
        raise ValueError(f"trace event #{position} is not an object with a 'type'")
    kind = EVENT_TYPES.get(raw["type"])
    if kind is None:
        raise ValueError(
            f"trace event #{position} has unknown type {raw['type']!r}; "
            f"known: {', '.join(sorted(EVENT_TYPES))}"
        )
    names = set(kind.fields)
    unknown = set(raw) - names - {"type"}
    if unknown:
        raise ValueError(
            f"trace event #{position} ({raw['type']}) has unknown keys {sorted(unknown)}"
        )
    try:
        return kind(**{k: v for k, v in raw.items() if k != "type"})
    except TypeError as exc:
        raise ValueError(f"trace event #{position} ({raw['type']}): {exc}") from None
