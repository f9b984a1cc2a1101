"""The agent whose tool call is running, for seams below the framework (an MCP session).

A framework seam that knows which agent executes a tool enters :func:`acting_as` around that
execution; a seam that records the call further down (the MCP session wrapper, shared by
several agents) reads :func:`acting_agent`. A contextvar: each asyncio task (``gather`` of two
agents) keeps its own, an inner agent (an agent as a tool of another) wins inside its block,
and a call outside any agent (or in a thread the call hands over to, where contextvars do not
follow) is unnamed.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

__all__ = ["acting_agent", "acting_as"]

_ACTING: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "agentchaos_acting_agent", default=None
)


def acting_agent() -> str | None:
    """The trace name of the agent whose tool execution is running (``None``: none known)."""
    return _ACTING.get()


@contextlib.contextmanager
def acting_as(agent: str | None) -> Iterator[None]:
    """Inside the block, tool calls recorded below the framework name ``agent``."""
    token = _ACTING.set(agent if isinstance(agent, str) and agent else None)
    try:
        yield
    finally:
        _ACTING.reset(token)
