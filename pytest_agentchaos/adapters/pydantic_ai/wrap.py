"""What ``chaos.wrap`` calls for a pydantic-ai object: :func:`wrap_tool`, for a ``Tool`` or a
toolset."""

from __future__ import annotations

from typing import Any

from ...inject.session import ChaosSession
from .framework import AbstractToolset
from .tools import _wrap_tool
from .toolsets import chaos_toolset


def wrap_tool(
    session: ChaosSession,
    tool: Any,
    *,
    name: str | None = None,
    repair: Any = None,
) -> Any:
    """``tool`` under chaos, as pydantic-ai accepts it unchanged.

    - A ``Tool`` (sync or async function, with or without ``RunContext``) comes back as a
      copy of the same type with the same name, description and argument schema; ``name``
      names its calls in the trace (default: the tool's name), ``repair`` is a
      ``ParamRepairer`` for its arguments. A ``Tool`` wrapped already is refused.
    - A toolset: see :func:`chaos_toolset` (``repair``: a repairer per tool name).

    Each call names the agent that runs it (``ToolCall.agent``). A fault's hang is cut by the
    tool's ``timeout``, as pydantic-ai's own timeout cuts a real one (see the module doc); an
    injected failure raises the built-in kind (``TimeoutError``, ``ConnectionError``,
    ``InjectedHTTPError``), as the tool's own exception would propagate.
    """
    __tracebackhide__ = True
    if isinstance(tool, AbstractToolset):
        if name is not None:
            raise TypeError("chaos.wrap(): a toolset's tools keep their own names; no name=")
        return chaos_toolset(session, tool, repair=repair)
    return _wrap_tool(session, tool, name=name, repair=repair)
