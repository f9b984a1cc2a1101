"""What the escape stack does about a loop, in the source document's priority order.

``retry`` (wait with backoff, then go on), ``explore`` (take an edge outside the detected
cycle, least recently tried), ``rollback`` (the agent's hook: back to its last good step),
``escalate`` (a human: a callback, or a clear ``Escalated``), ``stop`` (``EmergencyStop``, a
hard halt an agent's ``except Exception`` cannot swallow). Each check while the same loop
persists moves one rung up the ladder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import HardHalt

LADDER = ("retry", "explore", "rollback", "escalate", "stop")


@dataclass(frozen=True, slots=True)
class Action:
    """What :meth:`Supervisor.check` tells the agent to do next."""

    kind: str  # "continue" | "retry" | "explore" | "rollback" | "escalate"
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def to(self) -> str | None:
        """For ``explore``: the node to go to."""
        value = self.detail.get("to")
        return value if isinstance(value, str) else None


CONTINUE = Action("continue")


class Escalated(Exception):
    """A loop the stack could not break was handed to a human (no escalation callback set)."""

    def __init__(self, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.detail = detail


class EmergencyStop(HardHalt):
    """The last rung: the loop persisted through every intervention."""
