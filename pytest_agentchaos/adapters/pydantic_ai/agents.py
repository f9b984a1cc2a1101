"""Whole agents under chaos: :func:`chaos_agent` runs agents with their models, tools and
toolsets under chaos (``agent.override``), each agent its own target."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping
from types import FrameType
from typing import Any

from ...errors import ChaosConfigError
from ...inject.callables import check_name
from ...inject.session import ChaosSession
from ...saferepr import safe_repr
from .framework import AbstractToolset, Agent, FunctionToolset, Model, Tool
from .models import _as_model, _is_under_chaos, _under_chaos
from .runs import _agent_target, _inferred_name, _module_name, _name_of, _session
from .tools import _is_wrapped_tool, _wrap_tool
from .toolsets import _by_name, _chaos_toolset, _under_chaos_toolset


def _overridden_under_chaos(agent: Agent[Any, Any]) -> bool:
    """Whether ``agent`` runs under a ``chaos_agent`` block already (its model override)."""
    override = getattr(agent, "_override_model", None)  # private: a ContextVar of Some(model)
    try:
        current = override.get() if override is not None else None
    except Exception:
        return False
    return _is_under_chaos(getattr(current, "value", None))


def _agent_toolsets(agent: Agent[Any, Any]) -> tuple[dict[str, Any], list[Any]]:
    """(the agent's own tools by name, its other toolsets)."""
    function, *others = agent.toolsets
    own = dict(function.tools) if isinstance(function, FunctionToolset) else {}
    return own, others


def _known_tools(agents: tuple[Agent[Any, Any], ...]) -> set[str] | None:
    """Every tool name of ``agents``, or ``None`` when a toolset's tools are only known at run
    time."""
    known: set[str] = set()
    for agent in agents:
        own, others = _agent_toolsets(agent)
        if not all(isinstance(t, FunctionToolset) for t in others):
            return None
        known.update(own, *(t.tools for t in others))
    return known


def _overrides(
    session: ChaosSession,
    agent: Agent[Any, Any],
    model: Model,
    target: str,
    repairers: Mapping[str, Any],
) -> dict[str, Any]:
    """What ``agent.override`` gets: its model, tools and toolsets under chaos as its own."""
    overrides: dict[str, Any] = {
        "model": _under_chaos(session, model, name=target, agent=target, owner=agent)
    }
    own, others = _agent_toolsets(agent)
    if own:
        overrides["tools"] = [
            tool
            if _is_wrapped_tool(tool)
            else _wrap_tool(
                session,
                tool,
                repair=repairers.get(key),
                agent=target,
                timeout=getattr(agent, "_tool_timeout", None),  # Agent(tool_timeout=)
            )
            for key, tool in own.items()
        ]
    if others:
        overrides["toolsets"] = [
            toolset
            if _under_chaos_toolset(toolset)
            else _chaos_toolset(session, toolset, repair=_for(toolset, repairers), agent=target)
            for toolset in others
        ]
    return overrides


@contextlib.contextmanager
def chaos_agent(
    chaos: Any,
    agent: Agent[Any, Any],
    *more: Agent[Any, Any],
    model: Model | str | None = None,
    repair: Any = None,
    name: str | None = None,
) -> Iterator[Any]:
    """Run ``agent`` (and the agents ``more``: those it delegates to, hands off to, or runs
    beside) under chaos inside the ``with`` block, each as its own: its model through
    :func:`chaos_model`, its own tools and its toolsets through :func:`wrap_tool` /
    :func:`chaos_toolset`, by ``agent.override`` (undone when the block ends, however it ends).

    - Each agent's model calls are the target of its name (``name=``, else ``agent.name``,
      else the variable that holds it where the block is entered, as pydantic-ai infers a
      name, else ``"model"``), made unique in the run (``router``, ``router#2``); its
      ``FallbackModel``'s fallbacks ``router/fallback1`` ...; its calls and its tools' calls
      name it in the trace. So the agent a tool delegates to (``await specialist.run(...,
      usage=ctx.usage)``) is under chaos with ``chaos_agent(chaos, router, specialist)``, and
      stateful faults replay each agent's own outputs only.
    - ``model``: the model the agent's runs get instead of its own (one agent only);
      ``repair``: a ``ParamRepairer`` per tool name (of any of the agents).
    - Yields the agent, or the tuple of agents when several are given.

    Toolsets passed to a run itself are not wrapped: wrap them with :func:`chaos_toolset`.
    """
    session = _session(chaos)
    agents = (agent, *more)
    for i, each in enumerate(agents):
        if not isinstance(each, Agent):
            what = "agent" if i == 0 else f"agent {i + 1}"
            raise TypeError(
                f"chaos_agent(): {what} is not a pydantic-ai Agent: {safe_repr(each, 80)}"
            )
        if any(other is each for other in agents[:i]):
            raise ChaosConfigError(
                f"chaos_agent(): agent {i + 1} is given twice ({safe_repr(each, 80)}); give "
                "each agent once"
            )
    if more and (model is not None or name is not None):
        raise TypeError(
            "chaos_agent(): model= and name= are for one agent; with several agents each keeps "
            "its own model and its own name"
        )
    if name is not None:
        check_name(name, "chaos_agent(): name")
    repairers = _by_name(repair)
    models: list[Model] = []
    for each in agents:
        # the model the agent's runs get now: model=, an active agent.override(model=...), its own
        base = model if model is not None else _current_model(each) or each.model
        if base is None:
            whose = (
                "the agent" if not more else f"the agent {_name_of(each) or safe_repr(each, 60)}"
            )
            raise ChaosConfigError(
                f"chaos_agent(): {whose} has no model of its own; pass model= (the model its "
                "runs would get)" + ("" if not more else ", in a chaos_agent() block of its own")
            )
        resolved = _as_model(base, "chaos_agent(): model")
        if _is_under_chaos(resolved) or _overridden_under_chaos(each):
            raise ChaosConfigError(
                "chaos_agent(): the agent's model is under chaos already (wrapping twice would "
                "record every request twice)"
            )
        models.append(resolved)
    known = _known_tools(agents)
    if known is not None:
        unknown = sorted(set(repairers) - known)
        if unknown:
            whose = "agent's" if not more else "agents'"
            raise ChaosConfigError(
                f"chaos_agent(): repair= names {unknown[0]!r}, which is not among the {whose} "
                f"tools: {', '.join(sorted(known)) or '(none)'}"
            )
    frame = _caller_frame()
    try:
        targets = [
            _agent_target(
                session,
                each,
                name,
                # looked for only for an agent without a name (a module scan costs ~20 ms)
                fallback=None
                if name is not None or _name_of(each) is not None
                else _inferred_name(each, frame) or _module_name(each),
            )
            for each in agents
        ]
    finally:
        del frame
    with contextlib.ExitStack() as stack:
        for each, base, target in zip(agents, models, targets, strict=True):
            stack.enter_context(each.override(**_overrides(session, each, base, target, repairers)))
            stack.enter_context(_inner_overrides(session, each, target, repairers))
        yield agent if not more else agents


@contextlib.contextmanager
def _inner_overrides(
    session: ChaosSession, agent: Agent[Any, Any], target: str, repairers: Mapping[str, Any]
) -> Iterator[None]:
    """For the block: an ``agent.override(model=..., tools=..., toolsets=...)`` inside it
    puts what it gives under chaos as the agent's own (an inner override wins over the block's,
    and would otherwise take the agent's model or tools out of the run without a word)."""
    original = agent.override
    if "override" in vars(agent):  # someone's own override on the instance: leave it be
        yield
        return

    def override(**kwargs: Any) -> Any:
        given = {k: kwargs[k] for k in ("model", "tools", "toolsets") if _is_set(kwargs.get(k))}
        if "model" in given:
            model = _as_model(given["model"], "agent.override(): model")
            if not _is_under_chaos(model):
                kwargs["model"] = _under_chaos(
                    session, model, name=target, agent=target, owner=agent
                )
        if "tools" in given:
            kwargs["tools"] = [
                t if not isinstance(t, Tool) or _is_wrapped_tool(t)
                else _wrap_tool(session, t, repair=repairers.get(t.name), agent=target,
                                timeout=getattr(agent, "_tool_timeout", None))
                for t in given["tools"]
            ]  # fmt: skip
        if "toolsets" in given:
            kwargs["toolsets"] = [
                t if _under_chaos_toolset(t)
                else _chaos_toolset(session, t, repair=_for(t, repairers), agent=target)
                for t in given["toolsets"]
            ]  # fmt: skip
        return original(**kwargs)

    agent.override = override  # type: ignore[method-assign]
    try:
        yield
    finally:
        with contextlib.suppress(AttributeError):
            del agent.override


def _is_set(value: Any) -> bool:
    """Whether an ``override()`` argument was given (pydantic-ai's default is a sentinel)."""
    return value is not None and type(value).__name__ not in ("Unset", "_Unset", "UnsetType")


def _current_model(agent: Agent[Any, Any]) -> Any:
    """The model an active ``agent.override(model=...)`` gives the agent, else ``None``."""
    override = getattr(agent, "_override_model", None)  # private: a ContextVar of Some(model)
    try:
        current = override.get() if override is not None else None
    except Exception:  # no override active (a ContextVar without a value), or moved
        return None
    return getattr(current, "value", None)


def _for(toolset: AbstractToolset[Any], repairers: Mapping[str, Any]) -> dict[str, Any]:
    """The repairers of ``toolset``'s tools (all of them for a toolset whose tools are only
    known at run time)."""
    if isinstance(toolset, FunctionToolset):
        return {k: r for k, r in repairers.items() if k in toolset.tools}
    return dict(repairers)


def _caller_frame() -> FrameType | None:
    """The frame that entered a ``with chaos_agent(...)`` block: the first one outside this
    module and ``contextlib``."""
    frame: FrameType | None = sys._getframe(1)
    skip = {__file__, contextlib.__file__}
    while frame is not None and frame.f_code.co_filename in skip:
        frame = frame.f_back
    return frame
