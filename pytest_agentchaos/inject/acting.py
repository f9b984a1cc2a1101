"""The agent whose tool call is running, for seams below the framework (an MCP session).

A framework seam that knows which agent executes a tool enters :func:`acting_as` around that
execution; a seam that records the call further down (the MCP session wrapper, shared by
several agents) reads :func:`acting_agent`. A contextvar: each asyncio task (``gather`` of two
agents) keeps its own, an inner agent (an agent as a tool of another) wins inside its block,
and a call outside any agent (or in a thread the call hands over to, where contextvars do not
follow) is unnamed.

A framework that keeps the running agent in a run context of its own (LangGraph's run config)
registers a reader of it instead (:func:`read_agents_with`), asked when no seam said.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .session import ChaosSession

__all__ = ["acting_agent", "acting_as", "read_agents_with"]

_ACTING: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "agentchaos_acting_agent", default=None
)


#: readers of a framework's own run context: the agent's trace name in a run, or ``None``
_READERS: list[Callable[[ChaosSession], str | None]] = []


def read_agents_with(reader: Callable[[ChaosSession], str | None]) -> None:
    """Register ``reader``: asked (after the seams' :func:`acting_as`) which agent runs now,
    for a run's session; it returns the agent's trace name or ``None``. Registered once."""
    if reader not in _READERS:
        _READERS.append(reader)


def acting_agent(session: ChaosSession | None = None) -> str | None:
    """The trace name of the agent whose tool execution is running (``None``: none known):
    what a seam said (:func:`acting_as`), else, for ``session``'s run, what a framework's run
    context says (:func:`read_agents_with`)."""
    found = _ACTING.get()
    if found is not None or session is None:
        return found
    for reader in _READERS:
        try:
            named = reader(session)
        except Exception:  # a run context the reader cannot read: no name from it
            continue
        if isinstance(named, str) and named:
            return named
    return None


@contextlib.contextmanager
def acting_as(agent: str | None) -> Iterator[None]:
    """Inside the block, tool calls recorded below the framework name ``agent``."""
    token = _ACTING.set(agent if isinstance(agent, str) and agent else None)
    try:
        yield
    finally:
        _ACTING.reset(token)
