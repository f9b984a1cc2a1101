"""Who is calling: the agent of a model or tool call, as LangGraph's run config tells it, and a
chaos run's model targets by agent (every agent its own target), with their interceptors."""

from __future__ import annotations

import contextvars
import dataclasses
import threading
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from ...inject.acting import read_agents_with
from ...inject.call import CallState
from ...inject.errors import NativeErrors
from ...inject.intercept import Interceptor
from ...inject.session import ChaosSession
from ...saferepr import safe_repr
from .errors import _build_errors, _provider_of

#: The longest agent or model name a target takes (a name is a fault selector's glob subject).
_NAME_LIMIT = 200


_CHILD_CONFIG: contextvars.ContextVar[Any] | None
try:  # the config of the runnable in progress (LangGraph's get_config() reads it)
    from langchain_core.runnables.config import var_child_runnable_config as _CHILD_CONFIG
except ImportError:  # pragma: no cover - every langchain-core 1.x has it
    _CHILD_CONFIG = None


@dataclasses.dataclass(frozen=True, slots=True)
class _Caller:
    """Where a model or tool call comes from, as LangGraph's run config tells it."""

    #: the agent's name: ``lc_agent_name`` (``create_agent(name=...)``), else the node of the
    #: parent graph that runs the agent's graph (langgraph-supervisor names it after the agent)
    agent: str | None
    #: the graph nodes leading to the agent's graph: with the name, the agent's identity
    place: tuple[str, ...]
    #: the top-level node that calls the model, when no agent is known
    node: str | None


_NOBODY = _Caller(None, (), None)


def _current_config() -> Mapping[str, Any] | None:
    """The running LangChain / LangGraph config (what ``langgraph.config.get_config()``
    returns), or ``None`` outside a runnable."""
    if _CHILD_CONFIG is not None:
        config = _CHILD_CONFIG.get()
    else:  # pragma: no cover - a langchain-core without it: ask LangGraph
        try:
            from langgraph.config import get_config

            config = get_config()
        except Exception:
            return None
    return config if isinstance(config, Mapping) else None


def _caller(runtime: Any = None) -> _Caller:
    """The agent of the call in progress (``runtime``: a middleware request's, read when
    the config has no checkpoint namespace)."""
    config = _current_config()
    metadata = config.get("metadata") if config is not None else None
    if not isinstance(metadata, Mapping):
        metadata = {}
    ns = metadata.get("langgraph_checkpoint_ns") or metadata.get("checkpoint_ns")
    if not isinstance(ns, str) and runtime is not None:
        try:
            ns = runtime.execution_info.checkpoint_ns
        except Exception:
            ns = None
    # "supervisor:<task id>|1|agent:<task id>" -> ("supervisor", "agent"), as LangGraph reads
    # it (recast_checkpoint_ns: task ids dropped, and the numbered parts a retry or a
    # parallel send adds)
    path = (
        tuple(p.partition(":")[0] for p in ns.split("|") if p and not p.isdigit())
        if isinstance(ns, str)
        else ()
    )
    name = metadata.get("lc_agent_name")
    if isinstance(name, str) and name:
        return _Caller(_bounded(name), path[:-1], None)
    if len(path) >= 2 and path[-2]:
        return _Caller(_bounded(path[-2]), path[:-1], None)
    if path and path[-1]:
        return _Caller(None, (), path[-1])
    return _NOBODY


#: The nodes in which LangChain's own agents call their model (create_agent's "model",
#: create_react_agent's "agent"): a fixed name, not an identity, so the model's name is used.
_AGENT_NODES = frozenset({"model", "agent"})


def _bounded(name: str) -> str:
    return name if len(name) <= _NAME_LIMIT else name[:_NAME_LIMIT]


def _model_name(model: Any) -> str:
    """A chat model's name: its ``model_name`` / ``model`` / ``model_id`` / deployment, else
    its class name (``GenericFakeChatModel``)."""
    for attribute in ("model_name", "model", "model_id", "deployment_name"):
        try:
            value = getattr(model, attribute, None)
        except Exception:  # a property that raises
            continue
        if isinstance(value, str) and value.strip():
            return _bounded(value)
    base = getattr(type(model), "__chaos_base__", type(model))
    return base.__name__ if model is not None else "model"


class _Agents:
    """One chaos run's model targets, by agent (shared by :func:`chaos_model` and
    :func:`chaos_middleware`, so an agent has one target whichever seam records it), and the
    interceptors of its model calls."""

    __slots__ = (
        "__weakref__", "_cores", "_errors", "_keep", "_lock", "_names", "_targets", "session",
    )  # fmt: skip

    def __init__(self, session: ChaosSession) -> None:
        self.session = session
        self._targets: dict[Hashable, str] = {}
        self._cores: dict[Hashable, Interceptor] = {}
        self._errors: dict[Hashable, NativeErrors] = {}
        self._keep: dict[int, object] = {}  # owners known by id, kept alive: ids stay unique
        self._names: dict[int, str] = {}
        self._lock = threading.Lock()

    def target(self, explicit: str | None, caller: _Caller, model: Any, owner: object) -> str:
        """The target of a model call: ``explicit`` (one per ``owner``) when given, else the
        calling agent's (one per agent: its name and place), else the graph node that calls
        the model (one per ``owner`` and node: nodes run in parallel threads, so a name from
        the order of their first calls would not be deterministic), else the model's name."""
        key: Hashable
        if explicit is not None:
            name, key = explicit, ("named", id(owner), explicit)
        elif caller.agent is not None:
            name, key = caller.agent, ("agent", caller.agent, caller.place)
        elif caller.node is not None and caller.node not in _AGENT_NODES:
            name, key = caller.node, ("node", id(owner), caller.node)
        else:
            name = self._name_of(model)
            key = ("model", id(owner), name, caller.node)
        found = self._targets.get(key)
        if found is None:
            with self._lock:
                found = self._targets.get(key)
                if found is None:
                    self._keep[id(owner)] = owner
                    found = self._targets[key] = self.session.agent_target(name, key)
        return found

    def _name_of(self, model: Any) -> str:
        """``_model_name(model)``, read once per model object (~20 us of pydantic lookups)."""
        found = self._names.get(id(model))
        if found is None:
            found = _model_name(model)
            with self._lock:
                self._keep[id(model)] = model  # kept alive: its id stays its own
                self._names[id(model)] = found
        return found

    def label(self, caller: _Caller) -> str | None:
        """What the trace calls the calling agent: its target once it has one (``helper#2``
        for the second agent named ``helper``), else its name (``None``: no agent known)."""
        if caller.agent is None:
            return None
        return self._targets.get(("agent", caller.agent, caller.place), caller.agent)

    def core(
        self,
        target: str,
        agent: str | None,
        model: Any,
        finish: Callable[[ChaosSession], Callable[[CallState, Any], Any]],
    ) -> Interceptor:
        """The interceptor of ``target``'s calls by ``agent`` to ``model`` (whose provider
        decides the errors), built once."""
        errors_key, errors = self.errors(model)
        key = (target, agent, errors_key, finish)
        core = self._cores.get(key)
        if core is None:
            with self._lock:
                core = self._cores.get(key)
                if core is None:
                    core = self._cores[key] = Interceptor(
                        self.session,
                        target,
                        channel="model",
                        finish=finish(self.session),
                        errors=errors,
                        agent=agent,
                    )
        return core

    def errors(self, model: Any) -> tuple[Hashable, NativeErrors]:
        """The errors ``model`` raises for an injected failure: its provider SDK's, converted
        as its LangChain integration converts them, else LangChain's ``ModelError`` kinds."""
        key = _provider_of(model)
        found = self._errors.get(key)
        if found is None:
            with self._lock:
                found = self._errors.get(key)
                if found is None:
                    found = self._errors[key] = _build_errors(self.session, key)
        return key, found


#: Where a run's registry is kept: on its session, so that it lives and dies with the run (a
#: registry keyed weakly by the session would keep it alive through its own reference to it).
_ATTRIBUTE = "_agentchaos_langchain_agents"
_registries_lock = threading.Lock()


def _agents(session: ChaosSession) -> _Agents:
    """The run's registry of targets and interceptors (made on first use)."""
    found: _Agents | None = session.__dict__.get(_ATTRIBUTE)
    if found is None:
        with _registries_lock:
            found = session.__dict__.get(_ATTRIBUTE)
            if found is None:
                found = session.__dict__[_ATTRIBUTE] = _Agents(session)
    return found


def _session_of(chaos: Any, where: str) -> ChaosSession:
    session = getattr(chaos, "session", chaos)
    if not isinstance(session, ChaosSession):
        raise TypeError(
            f"{where} needs a Chaos (e.g. the chaos fixture), got {safe_repr(chaos, 80)}"
        )
    return session


def _running_agent(session: ChaosSession) -> str | None:
    """The trace name of the LangGraph agent whose run is in progress (its run config), for
    the calls recorded below LangChain (an MCP session that langchain-mcp-adapters' tools
    call): the name its own tools' calls carry."""
    if _current_config() is None:
        return None
    return _agents(session).label(_caller())


read_agents_with(_running_agent)
