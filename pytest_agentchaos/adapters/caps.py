"""Framework caps as halt events: LangGraph's ``recursion_limit`` (``GraphRecursionError``),
pydantic-ai's ``UsageLimitExceeded``, the Agents SDK's ``MaxTurnsExceeded``.

A cap that stopped a run is recorded as ``Halt(hard=True)`` with ``detail["by"] ==
"framework"``, so a verdict tells "the framework's cap stopped it" from "it halted by itself"
(``must_halt`` fails on it). The harness records the cap an agent's test raised; an agent that
catches the cap itself calls :func:`record_cap`. Exceptions are recognised by class path,
importing no framework.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..saferepr import safe_str
from ..trace.events import Halt, ModelCall, ToolCall

if TYPE_CHECKING:
    from ..inject.session import ChaosSession
    from ..trace.trace import Trace

__all__ = ["CAPS", "Cap", "find_cap", "record_cap"]


@dataclass(frozen=True)
class Cap:
    """A framework's cap: the exception class that says it was hit, and what it counts."""

    framework: str
    exception: str  # module:QualName
    cap: str  # the setting's name
    counts: str  # what the cap counts, in words


CAPS: tuple[Cap, ...] = (
    Cap("langgraph", "langgraph.errors:GraphRecursionError", "recursion_limit", "super-steps"),
    Cap("pydantic_ai", "pydantic_ai.exceptions:UsageLimitExceeded", "usage_limits", "usage"),
    Cap("openai_agents", "agents.exceptions:MaxTurnsExceeded", "max_turns", "turns"),
)
_BY_CLASS = {c.exception: c for c in CAPS}
_NUMBER = re.compile(r"\b(\d+)\b")


def find_cap(error: BaseException | None) -> tuple[Cap, BaseException] | None:
    """The framework cap that ``error`` is, causes or carries (exception groups, ``__cause__``
    and ``__context__`` chains), with the exception itself; ``None`` when there is none."""
    seen: set[int] = set()
    todo: list[BaseException] = [error] if error is not None else []
    while todo:
        current = todo.pop()
        if id(current) in seen or len(seen) > 200:
            continue
        seen.add(id(current))
        for cls in type(current).__mro__:
            cap = _BY_CLASS.get(f"{cls.__module__}:{cls.__qualname__}")
            if cap is not None:
                return cap, current
        inner = getattr(current, "exceptions", None)
        if isinstance(inner, (list, tuple)):
            todo.extend(e for e in inner if isinstance(e, BaseException))
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                todo.append(linked)
    return None


def record_cap(session: ChaosSession | Any, error: BaseException) -> Halt | None:
    """Record the framework cap ``error`` carries as a hard ``Halt`` in the run's trace (once
    per exception); returns the event, or ``None`` when ``error`` is no framework cap.
    ``session``: a ``ChaosSession`` or a ``Chaos``."""
    session = getattr(session, "session", session)
    found = find_cap(error)
    if found is None:
        return None
    cap, exc = found
    trace = session.trace
    recorded = getattr(exc, "__chaos_halt__", None)
    if isinstance(recorded, Halt) and recorded in trace.of_type(Halt):
        return recorded
    # the first line: what was hit (a troubleshooting link on the next line is not news)
    message = " ".join(safe_str(exc, 300).strip().splitlines()[:1]).strip()
    detail: dict[str, Any] = {
        "by": "framework",
        "framework": cap.framework,
        "cap": cap.cap,
        "error": type(exc).__name__,
        "message": message,
        **_rounds(trace),
    }
    limit = _NUMBER.search(message)
    if limit is not None:
        detail["limit"] = int(limit.group(1))
    reason = (
        f"the framework's cap {cap.framework} {cap.cap}"
        f"{'=' + str(detail['limit']) if 'limit' in detail else ''} ({cap.counts}; "
        f"{detail['model_calls']} model calls, {detail['tool_calls']} tool calls), "
        f"{type(exc).__name__}"
    )
    halt: Halt = session.record(Halt, reason=reason, hard=True, detail=detail)
    with contextlib.suppress(Exception):  # an exception type with __slots__
        exc.__chaos_halt__ = halt  # type: ignore[attr-defined]
    return halt


def _rounds(trace: Trace) -> dict[str, int]:
    """Model calls and tool calls so far (retried attempts included): what a super-step or
    turn count stood for in this run."""
    return {
        "model_calls": len(trace.of_type(ModelCall)),
        "tool_calls": len(trace.of_type(ToolCall)),
    }
