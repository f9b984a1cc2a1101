"""Typed trace events.

Every event carries the step index at which it happened and a virtual timestamp ``t``
(seconds since the run started, on the run's clock). Fields hold plain JSON-able data so a
trace written by one run can be read, rendered and replayed by another.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from ..saferepr import safe_repr

EVENT_TYPES: dict[str, type[Event]] = {}

E = TypeVar("E", bound="Event")


@dataclass(frozen=True, slots=True)
class Event:
    """Base of all events; subclasses register themselves under their class name."""

    step: int
    t: float

    type_name: ClassVar[str] = "Event"

    def __init_subclass__(cls) -> None:
        # No super() call: slots=True recreates the class, breaking the zero-arg form.
        if "type_name" not in cls.__dict__:
            cls.type_name = cls.__name__
        EVENT_TYPES[cls.type_name] = cls

    def to_dict(self) -> dict[str, Any]:
        """Return the event as a JSON-able dict with a ``type`` key."""
        data: dict[str, Any] = {"type": self.type_name}
        for f in fields(self):
            data[f.name] = getattr(self, f.name)
        return data

    def describe(self) -> str:
        """One line for humans: used in failure reports and the timeline."""
        body = ", ".join(
            f"{f.name}={safe_repr(getattr(self, f.name), 80)}"
            for f in fields(self)
            if f.name not in ("step", "t") and getattr(self, f.name) not in (None, {}, [])
        )
        return f"#{self.step:<4} t={self.t:>9.3f}s {self.type_name}({body})"


@dataclass(frozen=True, slots=True)
class RunStarted(Event):
    """A chaos run began: which test, seed and profile."""

    test: str = ""
    seed: int = 0
    profile: str = ""


@dataclass(frozen=True, slots=True)
class RunEnded(Event):
    """A chaos run ended: ``completed``, ``halted`` (hard halt) or ``error``."""

    status: str = "completed"
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Step(Event):
    """An explicit agent step (``chaos.step()``), for agents whose steps are not tool calls."""

    label: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCall(Event):
    """A tool (``channel='tool'``) or HTTP (``channel='http'``) call, before it runs."""

    tool: str = ""
    index: int = 0
    args: dict[str, Any] = field(default_factory=dict)
    channel: str = "tool"


@dataclass(frozen=True, slots=True)
class ToolResult(Event):
    """The outcome of a tool or HTTP call: ``ok`` with an output, or an error."""

    tool: str = ""
    index: int = 0
    ok: bool = True
    output: Any = None
    error_type: str | None = None
    message: str | None = None
    status: int | None = None
    channel: str = "tool"


@dataclass(frozen=True, slots=True)
class ModelCall(Event):
    """A call to a model function wrapped by ``chaos.model``."""

    model: str = "model"
    index: int = 0
    input: Any = None


@dataclass(frozen=True, slots=True)
class ModelResult(Event):
    """A model call's output (or error) and the tokens it reported."""

    model: str = "model"
    index: int = 0
    ok: bool = True
    output: Any = None
    tokens: int | None = None
    error_type: str | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class FaultInjected(Event):
    """A fault fired: the resolved decision, enough to replay it from the trace alone.

    ``fault`` is the index of the fault in the plan, ``detail`` the concrete choice
    (status, seconds, the mutation applied ...).
    """

    kind: str = ""
    channel: str = "tool"
    target: str = ""
    index: int = 0
    fault: int = 0
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Detection(Event):
    """A detector (loop, repetition, stagnation ...) reported something."""

    detector: str = ""
    kind: str = ""
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Intervention(Event):
    """The stack acted: retry, backoff, fallback, path change, escalation ..."""

    action: str = ""
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Repair(Event):
    """Parameters of a tool call were repaired (or the repair failed)."""

    tool: str = ""
    strategy: str = ""
    ok: bool = True
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Snapshot(Event):
    """A snapshot was saved or restored (the Phoenix pattern)."""

    snapshot_id: str = ""
    action: str = "saved"
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Halt(Event):
    """Something decided the run must stop (a heuristic, a framework cap, an emergency stop)."""

    reason: str = ""
    hard: bool = False
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BudgetExhaustedEvent(Event):
    """A hard budget was hit and the harness raised ``BudgetExhausted``."""

    budget: str = ""
    limit: float = 0
    count: float = 0

    type_name: ClassVar[str] = "BudgetExhausted"


def positional_constructor(cls: type[E]) -> Callable[..., E]:
    """A constructor of ``cls`` taking every field positionally, in declaration order.

    For the recording hot path: it fills the slots directly instead of going through the
    frozen dataclass ``__init__`` (whose ``object.__setattr__`` per field costs about twice as
    much). The event is the same frozen, equal-comparing object.
    """
    names = [f.name for f in fields(cls)]
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    lines = [f"def make({', '.join(names)}):", "    o = new(cls)"]
    for i, name in enumerate(names):
        namespace[f"set{i}"] = getattr(cls, name).__set__  # the slot's member descriptor
        lines.append(f"    set{i}(o, {name})")
    lines.append("    return o")
    exec("\n".join(lines), namespace)  # noqa: S102 - code built from field names only
    make: Callable[..., E] = namespace["make"]
    make.__qualname__ = f"{cls.__name__}.positional"
    return make
