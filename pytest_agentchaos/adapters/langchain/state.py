"""What a chat model under chaos carries (its run and its name), and the call in progress."""

from __future__ import annotations

import contextvars
from typing import Any

from .agents import _Agents

#: The attribute (in the instance's ``__dict__``) of a chat model under chaos holding its state.
STATE = "__chaos_model__"


class _ModelChaos:
    """What a chat model under chaos carries in its ``__dict__``: its run and its ``name``.
    ``model_copy`` copies share it (a copy is under the same chaos); a deep copy too (a run
    is not copied)."""

    __slots__ = ("__weakref__", "agents", "name")

    def __init__(self, agents: _Agents, name: str | None) -> None:
        self.agents = agents
        self.name = name

    def __copy__(self) -> _ModelChaos:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _ModelChaos:
        return self

    def __repr__(self) -> str:
        return f"<under chaos{f' as {self.name!r}' if self.name else ''}>"


#: The chaos state whose model call is running in this context: a call the model makes on
#: itself inside it (``_agenerate`` running ``_generate``, ``streaming=True`` running
#: ``_stream``) is the same call, recorded once.
_ACTIVE: contextvars.ContextVar[_ModelChaos | None] = contextvars.ContextVar(
    "agentchaos_model_call", default=None
)


def _state_of(model: Any) -> _ModelChaos | None:
    try:
        state = model.__dict__.get(STATE)
    except AttributeError:
        return None
    return state if isinstance(state, _ModelChaos) else None
