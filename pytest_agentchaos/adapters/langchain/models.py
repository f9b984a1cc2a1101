"""Chat models under chaos: :func:`chaos_model` makes a copy of the model's own class whose
every call goes through the plan on the model channel."""

from __future__ import annotations

import threading
import weakref
from typing import Any

from ...inject.callables import check_name
from ...saferepr import safe_repr, safe_str
from .agents import _agents, _bounded, _session_of
from .framework import BaseChatModel
from .methods import _async_call, _async_stream, _sync_call, _sync_stream
from .state import STATE, _ModelChaos

#: Each model class's chaos subclass, held weakly both ways: a test's own model class (and its
#: chaos subclass, which refers to it) dies with the test's models.
_classes: weakref.WeakKeyDictionary[type[BaseChatModel], weakref.ref[type[BaseChatModel]]] = (
    weakref.WeakKeyDictionary()
)
_classes_lock = threading.Lock()


def chaos_model(chaos: Any, chat_model: Any, name: str | None = None) -> Any:
    """``chat_model`` under ``chaos`` (a ``Chaos``, e.g. the ``chaos`` fixture): a copy of
    the same class for ``isinstance`` and ``_llm_type``, same fields and client, whose every
    call goes through the plan on the model channel. Use it wherever the model goes: a
    ``StateGraph`` node of your own, ``create_react_agent`` (which binds tools once, at build
    time), ``create_agent``, a langgraph-supervisor supervisor and its workers.

    - Kept: ``bind_tools``, ``with_structured_output``, ``invoke`` / ``ainvoke`` / ``batch``,
      ``stream`` / ``astream`` and ``streaming=True`` / ``stream_mode="messages"`` (a streamed
      call reaches the caller once it has finished: the model's own chunks, in one go), and
      ``model_copy`` (a copy, with its updates, stays under the same chaos). The model you
      gave is not changed.
    - Recorded as a model turn: its text, the tool calls it asks for, its token usage (which
      counts against ``max_tokens``).
    - Faults: an error raises what the chat model raises for that failure (the provider SDK's
      error as the LangChain integration converts it; LangChain's ``ModelError`` kinds for
      other models: see the module doc); latency waits on the run's clock;
      ``repeated_output`` / ``paraphrased_output`` / ``stale_output`` answer in the model's
      place (with new message and tool-call ids: a repeat, not the earlier message again).
    - Target: ``name`` when given (one target for every call of this model); else, per call,
      the calling agent's (its ``lc_agent_name``, else the graph node running its graph, as
      langgraph-supervisor names its workers and itself); else the model's name
      (``model_name`` / ``model``, else its class name). Every agent gets its own target even
      when one model object serves them all.

    ``chat_model`` must be a ``BaseChatModel`` (wrap the model, then bind tools to the copy).
    A model under chaos given again is wrapped afresh from the model it wraps: its calls are
    recorded once, by the new wrap. Faults act before the call: a streamed call fails before
    its first chunk, never midway. An injected failure is the call's failure as the model
    reports it, after any retries its provider client makes (``max_retries``): set
    ``max_retries=0`` on the model so that retries are the agent's own. A call that a scripted
    provider endpoint of the run answers (``chaos.provider`` at the model's base URL) is left
    to it: recorded and faulted there, once per wire attempt (so the SDK's own retries meet the
    faults), under this model's target and agent. Answers from the
    model's LangChain cache (``cache=``) never reach the model, so no fault applies to them.
    A model under chaos cannot be pickled (its calls belong to one run).
    """
    __tracebackhide__ = True
    session = _session_of(chaos, "chaos_model()")
    if name is not None:
        name = _bounded(check_name(name, "chaos_model(): name"))
    if not isinstance(chat_model, BaseChatModel):
        hint = ""
        if isinstance(getattr(chat_model, "bound", None), BaseChatModel):
            hint = "; wrap the chat model itself, then bind tools to the model chaos_model returns"
        raise TypeError(
            "chaos_model(): chat_model must be a LangChain chat model (a BaseChatModel), got "
            f"{safe_repr(chat_model, 80)}{hint}"
        )
    original = _unwrapped(chat_model)
    copy = original.model_copy()
    object.__setattr__(copy, "__class__", _chaos_class(type(original)))
    object.__setattr__(copy, STATE, _ModelChaos(_agents(session), name))
    return copy


def _unwrapped(model: BaseChatModel) -> BaseChatModel:
    """``model`` without chaos: itself, or for a model under chaos a copy of its own class."""
    base = type(model).__dict__.get("__chaos_base__")
    if base is None:
        return model
    copy = model.model_copy()
    object.__setattr__(copy, "__class__", base)
    copy.__dict__.pop(STATE, None)
    return copy


def _chaos_class(cls: type[BaseChatModel]) -> type[BaseChatModel]:
    """The class of ``cls``'s models under chaos: a subclass with the same name, qualname
    and module, overriding the call methods ``cls`` implements (and only those: LangChain
    reads which of ``_stream`` / ``_astream`` a class implements to decide how to call it)."""
    held = _classes.get(cls)
    found = held() if held is not None else None
    if found is not None:
        return found
    with _classes_lock:
        held = _classes.get(cls)
        found = held() if held is not None else None
        if found is not None:
            return found
        namespace: dict[str, Any] = {
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
            "__doc__": cls.__doc__,
            "__chaos_base__": cls,
            "__reduce_ex__": _refuse_pickling,
            "_generate": _sync_call(cls._generate),
        }
        if cls._agenerate is not BaseChatModel._agenerate:
            namespace["_agenerate"] = _async_call(cls._agenerate)
        if cls._stream is not BaseChatModel._stream:
            namespace["_stream"] = _sync_stream(cls._stream)
        if cls._astream is not BaseChatModel._astream:
            namespace["_astream"] = _async_stream(cls._astream)
        try:
            meta: Any = type(cls)  # pydantic's model metaclass
            made: type[BaseChatModel] = meta(cls.__name__, (cls,), namespace)
        except Exception as exc:
            raise TypeError(
                f"chaos_model(): cannot put a {cls.__qualname__} under chaos: its class cannot "
                f"be subclassed ({type(exc).__name__}: {safe_str(exc, 200)})"
            ) from None
        _classes[cls] = weakref.ref(made)
        return made


def _refuse_pickling(self: Any, protocol: Any = None) -> Any:
    raise TypeError(
        f"a chat model under chaos ({type(self).__qualname__}) cannot be pickled: its calls "
        "belong to one chaos run; pickle the model you gave chaos_model()"
    )
