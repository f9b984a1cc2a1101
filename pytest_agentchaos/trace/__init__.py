"""The run trace: typed events and the append-only ``Trace``.

Names load lazily, so start-up code that needs only :mod:`.values` does not build the event
classes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import exports

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


__getattr__, __dir__ = exports(__name__, _EXPORTS, globals())


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
