"""The run trace: typed events and the append-only ``Trace``."""

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
    "Trace",
    "ToolCall",
    "ToolResult",
]
