"""A chaos run as the adapter sees it: the session of a ``Chaos``, each agent's target and name
in the run, and the agent whose run makes the current request."""

from __future__ import annotations

import sys
import weakref
from types import FrameType
from typing import Any

from ...inject.session import ChaosSession
from ...saferepr import safe_repr


def _session(chaos: Any) -> ChaosSession:
    """The ``ChaosSession`` of a ``Chaos`` (or the session itself)."""
    session = getattr(chaos, "session", chaos)
    if not isinstance(session, ChaosSession):
        raise TypeError(f"expected a Chaos or a ChaosSession, got {safe_repr(chaos, 80)}")
    return session


#: Each run's agents: id(agent) -> (agent, its target). The agent is held so its id stays its
#: own while the run lives; the run (its session) is held weakly.
_AGENTS: weakref.WeakKeyDictionary[ChaosSession, dict[int, tuple[object, str]]] = (
    weakref.WeakKeyDictionary()
)


def _name_of(agent: object) -> str | None:
    """An agent's own name (``agent.name``: its ``name=``, an ``override(name=)``, or the
    name pydantic-ai inferred on its first run), if it is a non-empty string."""
    try:
        name = getattr(agent, "name", None)
    except Exception:  # a hostile agent whose name cannot be read
        return None
    return name if isinstance(name, str) and name else None


def _agent_target(
    session: ChaosSession, agent: object, name: str | None = None, *, fallback: str | None = None
) -> str:
    """The target of ``agent``'s model calls in ``session``'s run: ``name`` (default: the
    target it has already, else its own name, else ``fallback``, else ``"model"``), made unique
    by ``session.agent_target`` (``name#2`` for a second agent that asks for a name taken)."""
    known = _AGENTS.setdefault(session, {})
    held = known.get(id(agent))
    if name is None and held is not None and held[0] is agent:
        return held[1]
    target = session.agent_target(name or _name_of(agent) or fallback or "model", owner=agent)
    known[id(agent)] = (agent, target)
    return target


def _label(session: ChaosSession, agent: object) -> str | None:
    """What the trace calls ``agent``: its target when it has one in this run, else its own
    name (``None`` for no agent, or one without a name)."""
    if agent is None:
        return None
    held = _AGENTS.get(session, {}).get(id(agent))
    if held is not None and held[0] is agent:
        return held[1]
    return _name_of(agent)


def _running_agent(run_context: Any = None) -> Any:
    """The agent whose run makes the current request: ``run_context.agent``, else that of
    pydantic-ai's current run context (a private ContextVar; ``None`` if it moved)."""
    if run_context is None:
        try:
            from pydantic_ai._run_context import get_current_run_context

            run_context = get_current_run_context()
        except Exception:  # moved or renamed in a later pydantic-ai: no agent known
            return None
    return getattr(run_context, "agent", None)


def _inferred_name(agent: object, frame: FrameType | None) -> str | None:
    """The name pydantic-ai would infer for ``agent`` from ``frame`` (a variable of that
    frame, then a global of its module, that holds it), without setting it on the agent."""
    if frame is None:
        return None
    scopes = [frame.f_locals]
    if frame.f_globals is not frame.f_locals:
        scopes.append(frame.f_globals)
    for scope in scopes:
        for key, item in list(scope.items()):
            if item is agent and isinstance(key, str):
                return key
    return None


def _module_name(agent: object) -> str | None:
    """The name of a module global that holds ``agent`` (an agent defined at module level and
    reached as ``module.agent``), as pydantic-ai names it when its own module's code runs it;
    deterministic: a public name first, then by module and name."""
    found: list[tuple[bool, str, str]] = []
    for module_name, module in list(sys.modules.items()):
        scope = getattr(module, "__dict__", None)
        if not isinstance(scope, dict):
            continue
        try:
            items = list(scope.items())
        except Exception:  # pragma: no cover - a module dict changing under us
            continue
        for key, item in items:
            if item is agent and isinstance(key, str):
                found.append((key.startswith("_"), module_name, key))
    return min(found)[2] if found else None
