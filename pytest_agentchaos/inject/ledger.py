"""The run's ledger: which agent owns which target, what the run's notes say, and how many
calls, steps, tokens and seconds it has counted. Part of
:class:`~pytest_agentchaos.inject.session.ChaosSession` (a mixin: it reads the session's lock,
trace and counters)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..trace.trace import Trace

__all__ = ["RunLedger"]

# the session's logger: a user's log filter set for the session keeps seeing its notes
log = logging.getLogger("pytest_agentchaos.inject.session")


class RunLedger:
    """The session's bookkeeping methods."""

    if TYPE_CHECKING:  # what they use of the session
        _lock: Any
        trace: Trace
        test_id: str
        steps: int
        tool_calls: int
        model_calls: int
        tokens: int
        _owners: dict[tuple[str, str], object]
        _counts: dict[tuple[str, str], int]
        _schemas: dict[tuple[str, str], Mapping[str, Any]]

        def now(self) -> float: ...

    def agent_target(self, name: str, owner: object, *, channel: str = "model") -> str:
        """The target name of ``owner``'s calls on ``channel`` (an agent's model calls): ``name``
        when no other owner holds it, else ``name#2``, ``name#3`` ... in the order owners ask
        (deterministic for a deterministic test). The same owner always gets the same name, so
        stateful faults replay only the owner's own outputs. Recorded in the trace's meta: an
        agent's model target in ``agents`` (target -> the name asked for), a renamed target of
        another channel in ``targets`` (channel -> target -> the name asked for)."""
        with self._lock:
            owners = self._owners
            n = 1
            target = name
            while True:
                held = owners.get((channel, target))
                if held is None or held is owner:
                    break
                n += 1
                target = f"{name}#{n}"
            if held is None:
                owners[(channel, target)] = owner
                meta = self.trace.meta
                if channel == "model":
                    meta.setdefault("agents", {})[target] = name
                elif target != name:
                    meta.setdefault("targets", {}).setdefault(channel, {})[target] = name
            return target

    def note(self, message: str) -> None:
        """Say ``message`` once in the trace's meta (``notes``): what a reader of the run must
        know about how it was set up (e.g. a seam that fell back to the built-in errors)."""
        with self._lock:
            notes = self.trace.meta.setdefault("notes", [])
            if message not in notes:
                notes.append(message)
                log.info("chaos run %s: %s", self.test_id, message)

    def calls_seen(self) -> dict[tuple[str, str], int]:
        """How many calls each (channel, target) received."""
        return dict(self._counts)

    def schemas_seen(self) -> dict[tuple[str, str], Mapping[str, Any]]:
        """The parameter schema each (channel, target) was called with first, for the targets
        that have one (a wrapped tool's, an MCP tool's ``inputSchema``)."""
        return dict(self._schemas)

    def counters(self) -> dict[str, Any]:
        """The run's totals so far: steps, tool and model calls, tokens and seconds."""
        return {
            "steps": self.steps,
            "tool_calls": self.tool_calls,
            "model_calls": self.model_calls,
            "tokens": self.tokens,
            "seconds": round(self.now(), 6),
        }
