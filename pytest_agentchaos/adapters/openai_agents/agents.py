"""A multi-agent app under chaos: :func:`chaos_agent` clones an agent and every agent it can
reach (handoffs, agents used as tools), once each, with their models and tools wrapped."""

from __future__ import annotations

import copy
import weakref
from typing import Any

from agents import Agent, FunctionTool, Handoff, Model

from ...inject.callables import check_name
from ...inject.session import ChaosSession
from ...saferepr import safe_repr
from .mcp_tools import name_mcp_calls
from .models import ChaosModel, _session
from .originals import ORIGINAL, _original
from .tools import _wrapped_tool


class _Cloner:
    """Puts a multi-agent app under chaos: each agent cloned once (by identity), with its
    model, function tools, handoffs and agents-as-tools pointing to clones."""

    def __init__(
        self,
        session: ChaosSession,
        start: Agent[Any],
        model: Model | None,
        name: str | None,
    ) -> None:
        self.session = session
        self.start = start
        self.model = model
        self.name = name
        self.clones: dict[int, Agent[Any]] = {}
        self.originals: list[Agent[Any]] = []  # keeps the ids above taken

    def clone(self, agent: Agent[Any]) -> Agent[Any]:
        """``agent``'s clone under chaos (made once; an agent reached again gets the same)."""
        agent = _original(agent)
        found = self.clones.get(id(agent))
        if found is not None:
            return found
        own = agent.model
        if self.model is not None and (agent is self.start or not isinstance(own, Model)):
            base: Any = self.model
        else:
            base = own
        if not isinstance(base, Model):
            raise TypeError(
                f"chaos_agent(): agent {agent.name!r} has model {safe_repr(base, 80)}, not a "
                "Model instance: pass model=<the Model the agents without one should use>"
            )
        asked = self.name if agent is self.start and self.name is not None else agent.name
        target = self.session.agent_target(asked or "agent", agent)
        model = ChaosModel(self.session, base, target, agent=agent.name or None)
        clone = agent.clone(model=model, model_settings=agent.model_settings)
        clone.__dict__[ORIGINAL] = agent
        self.clones[id(agent)] = clone  # before its tools and handoffs: cycles end here
        self.originals.append(agent)
        clone.tools = [self.tool(t, clone) for t in agent.tools]
        clone.handoffs = [self.handoff(h) for h in agent.handoffs]
        name_mcp_calls(clone, agent.name or None)
        return clone

    def tool(self, tool: Any, owner: Agent[Any]) -> Any:
        if not isinstance(tool, FunctionTool):
            return tool
        original: FunctionTool = _original(tool)
        # one target per tool object: two different tools of the same name do not share one
        target = self.session.agent_target(original.name, original, channel="tool")
        nested: Any = getattr(original, "_agent_instance", None)
        is_agent_tool = getattr(original, "_is_agent_tool", False) and isinstance(nested, Agent)
        runs = self.clone(nested) if is_agent_tool else None
        agent = owner.name or None
        return _wrapped_tool(self.session, original, target, None, agent, runs=runs)

    def handoff(self, entry: Any) -> Any:
        entry = _original(entry)
        if isinstance(entry, Agent):
            return self.clone(entry)
        if not isinstance(entry, Handoff):
            return entry  # not the SDK's: left as it is
        # A copy keeping every field (name, description, schema, input_filter, is_enabled,
        # nest_handoff_history ...); its invocation runs the original's (on_handoff, input
        # validation) and hands over to the clone of the agent that returns.
        copied = copy.copy(entry)
        invoke: Any = entry.on_invoke_handoff
        clone_of = self.clone

        async def on_invoke_handoff(ctx: Any, input_json: str | None = None) -> Any:
            agent = await invoke(ctx, input_json)
            return clone_of(agent) if isinstance(agent, Agent) else agent

        copied.on_invoke_handoff = on_invoke_handoff
        ref = getattr(entry, "_agent_ref", None)
        target = ref() if callable(ref) else None
        if isinstance(target, Agent):
            copied._agent_ref = weakref.ref(self.clone(target))
        copied.__dict__[ORIGINAL] = entry
        return copied


def chaos_agent(
    chaos: Any, agent: Agent[Any], *, model: Model | None = None, name: str | None = None
) -> Agent[Any]:
    """A clone of ``agent`` under ``chaos``, and with it the whole app it leads: every agent it
    can reach through its handoffs (``Agent`` entries and ``Handoff`` objects) and the agents
    it uses as tools (``other.as_tool(...)``), recursively, each cloned once (cycles such as
    FAQ -> triage -> FAQ included). Each clone's model is wrapped (:class:`ChaosModel`) as a
    target of its own named after the agent, its ``FunctionTool`` tools are wrapped
    (:func:`wrap_tool`), its handoffs lead to the clones (each ``Handoff`` keeps its tool name,
    description, ``on_handoff``, ``input_filter``, ``is_enabled`` ...), and an agent tool's
    nested run starts with the clone; other tools, settings and hooks are kept. The originals
    are left untouched; hooks, ``on_handoff`` and ``result.last_agent`` see the clones (same
    names).

    ``model``: the ``Model`` that ``agent`` uses instead of its own, and that the agents
    without a ``Model`` instance of their own (a model name, or none) use; without it every
    agent needs one. ``name``: the target of ``agent``'s own model calls (default: its name).
    Putting a clone under chaos again wraps the originals again."""
    session = _session(chaos, "chaos_agent()")
    if not isinstance(agent, Agent):
        raise TypeError(f"chaos_agent() needs an Agents SDK Agent, got {safe_repr(agent, 80)}")
    if model is not None and not isinstance(model, Model):
        raise TypeError(
            f"chaos_agent(): model must be an Agents SDK Model instance, got "
            f"{safe_repr(model, 80)} (a model name is resolved by the run's provider)"
        )
    if name is not None:
        check_name(name, "chaos_agent(): name")
    return _Cloner(session, _original(agent), model, name).clone(agent)
