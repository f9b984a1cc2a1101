"""Typed trace events.

Every event carries the step index at which it happened and a virtual timestamp ``t``
(seconds since the run started, on the run's clock). Fields hold plain JSON-able data so a
trace written by one run can be read, rendered and replayed by another.

An event is an immutable value with named fields, declared like a frozen dataclass (type
checkers treat it as one). Underneath it is a tuple: every tool call records two events, and
a tuple is built several times faster than a frozen dataclass, which sets each field through
``object.__setattr__``. It compares equal only to an event of the same type.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import field
from operator import itemgetter
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from ..saferepr import safe_repr

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda cls: cls


EVENT_TYPES: dict[str, type[Event]] = {}

E = TypeVar("E", bound="Event")
R = TypeVar("R", bound="_Record")

_MISSING: Any = dataclasses.MISSING
_new = tuple.__new__

#: ``build(EventType, (value, ...))``: an event from every one of its field values, in the
#: order of ``EventType.fields``, without the keyword constructor: for the recording hot path.
build = tuple.__new__


def _rebuild(cls: type[R], values: tuple[Any, ...]) -> R:
    """Unpickling and copying: the event ``cls`` holding ``values``."""
    return _new(cls, values)


class _Factory:
    """A default made fresh for each event (``field(default_factory=dict)``)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def _constructor(
    cls: type[R], names: tuple[str, ...], defaults: dict[str, Any]
) -> Callable[..., R]:
    """``cls.__new__``: keyword or positional fields, defaults filled in, checked like a
    dataclass ``__init__`` (a missing or unknown field is a ``TypeError``)."""
    namespace: dict[str, Any] = {"new": _new, "Factory": _Factory}
    params, values = [], []
    for name in names:
        if name in defaults:
            namespace[f"d_{name}"] = defaults[name]
            params.append(f"{name}=d_{name}")
            default = defaults[name]
            values.append(f"({name}.make() if type({name}) is Factory else {name})"
                          if isinstance(default, _Factory) else name)  # fmt: skip
        else:
            params.append(name)
            values.append(name)
    source = (
        f"def __new__(cls, {', '.join(params)}):\n    return new(cls, ({', '.join(values)},))\n"
    )
    exec(source, namespace)  # noqa: S102 - built from field names only
    constructor: Callable[..., R] = namespace["__new__"]
    constructor.__qualname__ = f"{cls.__name__}.__new__"
    return constructor


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class _Record(tuple):  # type: ignore[type-arg]
    """An immutable record whose fields are its annotations (see the module doc)."""

    __slots__ = ()

    type_name: ClassVar[str] = "Record"
    #: the field names, in order
    fields: ClassVar[tuple[str, ...]] = ()
    #: each field's annotation, as written
    field_types: ClassVar[dict[str, str]] = {}
    _defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls) -> None:
        if "type_name" not in cls.__dict__:
            cls.type_name = cls.__name__
        annotations = {
            name: str(annotation)
            for name, annotation in cls.__dict__.get("__annotations__", {}).items()
            if "ClassVar" not in str(annotation)
        }
        own = list(annotations)
        cls.field_types = {**cls.field_types, **annotations}
        defaults = dict(cls._defaults)
        for name in own:
            value = cls.__dict__.get(name, _MISSING)
            if isinstance(value, dataclasses.Field):
                value = (
                    value.default_factory
                    if value.default_factory is not _MISSING
                    else (value.default)
                )
                defaults[name] = _Factory(value) if callable(value) else value
            elif value is not _MISSING:
                defaults[name] = value
        names = tuple(dict.fromkeys((*cls.fields, *own)))
        cls.fields = names
        cls._defaults = defaults
        for i, name in enumerate(names):
            setattr(cls, name, property(itemgetter(i), doc=f"the {name!r} field"))
        cls.__new__ = _constructor(cls, names, defaults)  # type: ignore[method-assign,assignment]

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented if not isinstance(other, _Record) else False
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), tuple(self)))

    def __repr__(self) -> str:
        body = ", ".join(f"{name}={value!r}" for name, value in zip(self.fields, self, strict=True))
        return f"{type(self).__name__}({body})"

    def __copy__(self) -> _Record:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _Record:
        import copy

        return _rebuild(type(self), tuple(copy.deepcopy(list(self), memo)))

    def to_dict(self) -> dict[str, Any]:
        """Return the event as a JSON-able dict with a ``type`` key."""
        data: dict[str, Any] = {"type": self.type_name}
        data.update(zip(self.fields, self, strict=True))
        return data


class Event(_Record):
    """Base of all events; subclasses declare their fields as annotations with defaults and
    register themselves under their class name."""

    __slots__ = ()

    step: int
    t: float

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        EVENT_TYPES[cls.type_name] = cls

    def describe(self) -> str:
        """One line for humans: used in failure reports and the timeline."""
        body = ", ".join(
            f"{name}={safe_repr(value, 80)}"
            for name, value in zip(self.fields, self, strict=True)
            if name not in ("step", "t") and value not in (None, {}, [])
        )
        return f"#{self.step:<4} t={self.t:>9.3f}s {self.type_name}({body})"


class RunStarted(Event):
    """A chaos run began: which test, seed and profile."""

    test: str = ""
    seed: int = 0
    profile: str = ""


class RunEnded(Event):
    """A chaos run ended: ``completed``, ``halted`` (hard halt), ``error`` or ``interrupted``
    (Ctrl-C, ``pytest.exit``). ``detail["error"]``, when the test's call raised: its
    ``type``, ``message`` (capped) and ``where`` (the deepest line of the user's own code)."""

    status: str = "completed"
    detail: dict[str, Any] = field(default_factory=dict)


class Step(Event):
    """An explicit agent step (``chaos.step()``), for agents whose steps are not tool calls.

    ``label`` names the node a graph agent entered; ``state`` is what the agent reported of
    its state there (plain data, bounded like every recorded value), for state-recurrence
    checks.
    """

    label: str | None = None
    state: Any = None


class ToolCall(Event):
    """A tool (``channel='tool'``) or HTTP (``channel='http'``) call, before it runs.
    ``agent`` names the agent that made it, where a framework adapter knows (multi-agent
    apps)."""

    tool: str = ""
    index: int = 0  # type: ignore[assignment]  # shadows tuple.index
    args: dict[str, Any] = field(default_factory=dict)
    channel: str = "tool"
    agent: str | None = None


class ToolResult(Event):
    """The outcome of a tool or HTTP call: ``ok`` with an output, or an error.

    A call whose reply a ``lost_reply`` fault lost ran all the same: ``ok`` is false with the
    injected error's ``error_type`` and ``message``, and ``output`` is the real output the
    agent never saw (``status`` stays ``None``: no response reached it).
    """

    tool: str = ""
    index: int = 0  # type: ignore[assignment]  # shadows tuple.index
    ok: bool = True
    output: Any = None
    error_type: str | None = None
    message: str | None = None
    status: int | None = None
    channel: str = "tool"


class ModelCall(Event):
    """A call to a model (a function wrapped by ``chaos.model``, or a framework's model).
    ``agent`` names the agent whose call it is, where a framework adapter knows."""

    model: str = "model"
    index: int = 0  # type: ignore[assignment]  # shadows tuple.index
    input: Any = None
    agent: str | None = None


class ModelResult(Event):
    """A model call's output (or error) and the tokens it reported."""

    model: str = "model"
    index: int = 0  # type: ignore[assignment]  # shadows tuple.index
    ok: bool = True
    output: Any = None
    tokens: int | None = None
    error_type: str | None = None
    message: str | None = None


class FaultInjected(Event):
    """A fault fired: the resolved decision, enough to replay it from the trace alone.

    ``fault`` is the index of the fault in the plan, ``detail`` the concrete choice
    (status, seconds, the mutation applied ...).
    """

    kind: str = ""
    channel: str = "tool"
    target: str = ""
    index: int = 0  # type: ignore[assignment]  # shadows tuple.index
    fault: int = 0
    detail: dict[str, Any] = field(default_factory=dict)


class Detection(Event):
    """A detector (loop, repetition, stagnation ...) reported something.

    ``at_event`` is the trace position (0-based) of the event that raised it, when the
    detector knows it.
    """

    detector: str = ""
    kind: str = ""
    detail: dict[str, Any] = field(default_factory=dict)
    at_event: int | None = None


class Intervention(Event):
    """The stack acted: retry, backoff, fallback, path change, escalation ..."""

    action: str = ""
    detail: dict[str, Any] = field(default_factory=dict)


class Repair(Event):
    """Parameters of a tool call were repaired (or the repair failed)."""

    tool: str = ""
    strategy: str = ""
    ok: bool = True
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)


class Snapshot(Event):
    """A snapshot was saved or restored (the Phoenix pattern)."""

    snapshot_id: str = ""
    action: str = "saved"
    detail: dict[str, Any] = field(default_factory=dict)


class Halt(Event):
    """Something decided the run must stop (a heuristic, a framework cap, an emergency stop)."""

    reason: str = ""
    hard: bool = False
    detail: dict[str, Any] = field(default_factory=dict)


class BudgetExhaustedEvent(Event):
    """A hard budget was hit and the harness raised ``BudgetExhausted``."""

    budget: str = ""
    limit: float = 0
    count: float = 0  # type: ignore[assignment]  # shadows tuple.count

    type_name: ClassVar[str] = "BudgetExhausted"
