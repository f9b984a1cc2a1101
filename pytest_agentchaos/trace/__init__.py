"""The run trace: typed events and the append-only ``Trace``.

Names load lazily, so start-up code that needs only :mod:`.values` does not build the event
classes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "EVENT_TYPES": "events",
    "BudgetExhaustedEvent": "events",
    "Detection": "events",
    "Event": "events",
    "FaultInjected": "events",
    "Halt": "events",
    "Intervention": "events",
    "ModelCall": "events",
    "ModelResult": "events",
    "Repair": "events",
    "RunEnded": "events",
    "RunStarted": "events",
    "Snapshot": "events",
    "Step": "events",
    "ToolCall": "events",
    "ToolResult": "events",
    "Trace": "trace",
}

__all__ = [
    "EVENT_TYPES",
    "BudgetExhaustedEvent",
    "Detection",
    "Event",
    "FaultInjected",
    "Halt",
    "Intervention",
    "ModelCall",
    "ModelResult",
    "Repair",
    "RunEnded",
    "RunStarted",
    "Snapshot",
    "Step",
    "ToolCall",
    "ToolResult",
    "Trace",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from .events import (
        EVENT_TYPES,
        BudgetExhaustedEvent,
        Detection,
        Event,
        FaultInjected,
        Halt,
        Intervention,
        ModelCall,
        ModelResult,
        Repair,
        RunEnded,
        RunStarted,
        Snapshot,
        Step,
        ToolCall,
        ToolResult,
    )
    from .trace import Trace
