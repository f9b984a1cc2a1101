"""LangChain / LangGraph: chaos for langchain-core tools, chat models and ``create_agent`` agents.

- ``chaos.wrap(tool)`` / ``chaos.wrap_tools([...])`` take a langchain-core ``BaseTool``
  (``@tool`` functions, ``StructuredTool``, your own ``BaseTool`` subclass; sync and async) and
  return a copy **of the same type**: same name, description and argument schema (the model
  sees the same tool), whose calls go through the fault plan before the real tool runs
  (:func:`wrap_tool`). LangGraph's ``ToolNode`` and ``create_react_agent`` take it unchanged.
- ``chaos_model(chaos, model)`` returns the chat model under chaos, **of the same class**
  (``isinstance`` and ``_llm_type`` unchanged; ``bind_tools``, ``with_structured_output``,
  streaming, async and batch work as before): every call, from any graph (a ``StateGraph`` of
  your own, ``create_react_agent``, ``create_agent``, a langgraph-supervisor team) goes through
  the plan on the model channel (:func:`chaos_model`).
- ``create_agent(model, tools, middleware=[..., chaos_middleware(chaos)])`` puts a whole agent
  under chaos in one line: every model call and every tool call go through the plan
  (:func:`chaos_middleware`). It must sit **last** in the list (innermost), so the agent's
  ``ModelRetryMiddleware`` / ``ModelFallbackMiddleware`` / ``ToolRetryMiddleware`` /
  ``ToolErrorMiddleware`` see its faults; it warns (:class:`ChaosPlacementWarning`) when one of
  them sits inside it.

**Every agent its own target.** A model call's target is the agent making it: the agent's name
(``create_agent(name=...)``, which LangGraph passes down as ``lc_agent_name``), else the graph
node that runs the agent's graph (langgraph-supervisor runs each worker, and the supervisor
itself, as a node named after it; ``create_react_agent`` agents have no ``lc_agent_name``);
with no agent to name (a model called outside any graph, an unnamed agent at the top, the
nodes of a graph of your own), the model's name, one target per model object and node. Two
agents sharing one model object still get two targets, so ``repeated_output`` /
``paraphrased_output`` / ``stale_output`` only ever hand an agent its own earlier answer; two
agents with the same name in different places of the graph get ``name`` and ``name#2``.
``ModelCall`` and ``ToolCall`` events name the agent (``agent=``). Aim a fault at one agent's
model calls with ``{"tools": ["research*"], "channels": ["model"]}``.

**Native errors.** An injected model failure is the exception the chat model raises for it:
``ChatOpenAI`` / ``AzureChatOpenAI`` (any ``BaseChatOpenAI``) the ``openai`` SDK's error for
the model's base URL, converted as ``langchain_openai`` converts it (``OpenAIRateLimitError``,
a subclass of both ``openai.RateLimitError`` and LangChain's ``ModelRateLimitError``, raised
``from`` the SDK error, with the response's status, ``retry-after`` headers and request id);
``ChatAnthropic`` the ``anthropic`` SDK's, converted as ``langchain_anthropic`` does; any other
chat model LangChain's provider-neutral ``ModelRateLimitError`` / ``ModelAPIError`` /
``ModelTimeoutError`` / ``ModelConnectionError`` (and the other ``ModelError`` kinds by status),
carrying ``status_code``, ``headers``, ``retry_after`` and ``body``. So ``ModelRetryMiddleware``
retries exactly what it would retry in production (``is_retryable``) and
``ModelFallbackMiddleware`` falls back. Every injected error is also an ``InjectedFault``.
Tool failures keep the built-in kinds (``TimeoutError``, ``ConnectionError``,
``InjectedHTTPError``): a tool's real failure is its own exception, and ``ToolRetryMiddleware``
retries them; a ``malformed_params`` fault's arguments meet the tool's own validation (a
``ValidationError``, which the tool node turns into a message to the model), and ``repair=``
may fix them first. A ``GraphRecursionError`` that ends a test is recorded as the framework's
cap (see :mod:`pytest_agentchaos.adapters.caps`).
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import importlib
import inspect
import json
import sys
import threading
import warnings
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Iterator, Mapping
from typing import Any

from ..errors import ChaosConfigError
from ..faults.effects import Failure
from ..inject.call import CallState
from ..inject.callables import _wire, check_name
from ..inject.errors import NativeErrors, Templates
from ..inject.intercept import Interceptor
from ..inject.session import ChaosSession
from ..saferepr import safe_repr, safe_str
from .common import finish_model, native_errors, schema_of_model, transformed

_HINT = "pip install 'pytest-agentchaos[langchain]'"

try:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.language_models.chat_models import generate_from_stream
    from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
    from langchain_core.outputs import ChatGenerationChunk, ChatResult
    from langchain_core.tools import BaseTool, StructuredTool
    from langchain_core.tools.base import _get_runnable_config_param
except ImportError as exc:  # pragma: no cover - tested by hiding the package
    raise ImportError(f"the LangChain adapter needs langchain-core: {_HINT} ({exc})") from None

_CHILD_CONFIG: contextvars.ContextVar[Any] | None
try:  # the config of the runnable in progress (LangGraph's get_config() reads it)
    from langchain_core.runnables.config import var_child_runnable_config as _CHILD_CONFIG
except ImportError:  # pragma: no cover - every langchain-core 1.x has it
    _CHILD_CONFIG = None

__all__ = [
    "ChaosPlacementWarning",
    "chaos_middleware",
    "chaos_model",
    "model_schema",
    "wrap_tool",
]

#: The attribute of a wrapped tool that holds the tool it wraps.
ORIGINAL = "__chaos_original__"
#: The attribute (in the instance's ``__dict__``) of a chat model under chaos holding its state.
STATE = "__chaos_model__"
#: The longest agent or model name a target takes (a name is a fault selector's glob subject).
_NAME_LIMIT = 200


def model_schema(tool: BaseTool) -> dict[str, Any]:
    """The argument JSON Schema the model sees for ``tool`` (injected arguments left out)."""
    schema = schema_of_model(tool.tool_call_schema)
    return dict(schema) if schema is not None else {"type": "object", "properties": {}}


def _checker(tool: BaseTool) -> Callable[[Mapping[str, Any]], object] | None:
    """Validation of corrupted arguments as the tool validates the model's: its model-facing
    pydantic schema (a ``ValidationError``, which LangChain reports to the model)."""
    schema = tool.tool_call_schema
    validate = getattr(schema, "model_validate", None)
    return validate if callable(validate) else None


def wrap_tool(
    session: ChaosSession, tool: BaseTool, *, name: str | None = None, repair: Any = None
) -> BaseTool:
    """A copy of ``tool`` (same type, name, description and schemas) whose every call goes
    through ``session``'s plan before the real tool runs. ``name``: the tool's name in the
    trace (default: ``tool.name``; the model still sees ``tool.name``); each call's
    ``ToolCall`` names the agent calling it (as for model calls). Wrapping a wrapped tool
    wraps the original again (its calls are recorded once)."""
    __tracebackhide__ = True
    original: BaseTool = getattr(tool, ORIGINAL, tool)
    target = check_name(name, "chaos.wrap(): name") if name is not None else original.name
    schema = model_schema(original)
    fields = list(schema.get("properties", {}))
    repairer = _wire(repair, session) if repair is not None else None
    core = _ToolCores(session, target, schema, _checker(original), repairer)
    copy: BaseTool = original.model_copy()
    if _has_sync(original):
        _override(copy, "_run", _sync(core, original._run, fields))
    if _has_async(original):
        _override(copy, "_arun", _async(core, original._arun, fields))
    _override(copy, ORIGINAL, original)
    _override(copy, "__chaos_tool__", target)
    return copy


def _has_sync(tool: BaseTool) -> bool:
    return not isinstance(tool, StructuredTool) or tool.func is not None


def _has_async(tool: BaseTool) -> bool:
    """Whether the tool runs its own async code (otherwise LangChain's ``_arun`` runs the
    sync ``_run`` in a thread, which is wrapped already: wrapping both would count twice)."""
    if isinstance(tool, StructuredTool):
        return tool.coroutine is not None
    return type(tool)._arun is not BaseTool._arun


def _override(tool: BaseTool, attribute: str, value: Any) -> None:
    """Set an attribute on the tool instance past pydantic (methods are looked up on the
    instance first, so the copy's ``_run`` is ours and the class is untouched)."""
    object.__setattr__(tool, attribute, value)


def _split(
    fields: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
    """(the model's arguments, the names given positionally, the rest: run_manager, config,
    callbacks and injected arguments, which are passed through and not recorded)."""
    positional = fields[: len(args)] if len(fields) >= len(args) else [
        f"arg{i}" for i in range(len(args))
    ]  # fmt: skip
    mapping = dict(zip(positional, args, strict=True))
    extras = {}
    for key, value in kwargs.items():
        if key in fields:
            mapping[key] = value
        else:
            extras[key] = value
    return mapping, positional, extras


def _rebuild(mapping: Mapping[str, Any], positional: list[str]) -> tuple[list[Any], dict[str, Any]]:
    rest = dict(mapping)
    return [rest.pop(n) for n in positional if n in rest], rest


class _ToolCores:
    """A wrapped tool's interceptors: one per calling agent (the same target; the agent is
    what its ``ToolCall`` events name)."""

    __slots__ = ("_args", "_cores", "session", "target")

    def __init__(
        self,
        session: ChaosSession,
        target: str,
        schema: Mapping[str, Any],
        check: Callable[[Mapping[str, Any]], object] | None,
        repairer: Any,
    ) -> None:
        self.session = session
        self.target = target
        self._args = (schema, check, repairer)
        self._cores: dict[str | None, Interceptor] = {}

    def get(self) -> Interceptor:
        agent = _caller().agent
        core = self._cores.get(agent)
        if core is None:
            schema, check, repairer = self._args
            core = Interceptor(
                self.session, self.target, schema=schema, check=check, repairer=repairer,
                agent=agent,
            )  # fmt: skip
            core = self._cores.setdefault(agent, core)
        return core


def _sync(cores: _ToolCores, run: Callable[..., Any], fields: list[str]) -> Callable[..., Any]:
    def _run(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        mapping, positional, extras = _split(fields, args, kwargs)

        def invoke(m: Mapping[str, Any]) -> Any:
            pos, named = _rebuild(m, positional)
            return run(*pos, **named, **extras)

        return cores.get().call(mapping, invoke)

    return _keep_signature(_run, run)


def _async(cores: _ToolCores, arun: Callable[..., Any], fields: list[str]) -> Callable[..., Any]:
    async def _arun(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        mapping, positional, extras = _split(fields, args, kwargs)

        async def invoke(m: Mapping[str, Any]) -> Any:
            pos, named = _rebuild(m, positional)
            return await arun(*pos, **named, **extras)

        return await cores.get().acall(mapping, invoke)

    return _keep_signature(_arun, arun)


def _keep_signature(wrapper: Callable[..., Any], method: Callable[..., Any]) -> Callable[..., Any]:
    """LangChain reads ``_run``'s signature and type hints to decide whether to pass
    ``run_manager`` and ``config``: the wrapper shows the wrapped method's."""
    functools.update_wrapper(wrapper, method)
    if _get_runnable_config_param(wrapper) != _get_runnable_config_param(method):
        raise TypeError(f"cannot wrap {method!r}: its RunnableConfig parameter is not visible")
    return wrapper


# -- who is calling: every agent its own target ---------------------------------------------


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

    __slots__ = ("__weakref__", "_cores", "_errors", "_keep", "_lock", "_targets", "session")

    def __init__(self, session: ChaosSession) -> None:
        self.session = session
        self._targets: dict[Hashable, str] = {}
        self._cores: dict[Hashable, Interceptor] = {}
        self._errors: dict[Hashable, NativeErrors] = {}
        self._keep: dict[int, object] = {}  # owners known by id, kept alive: ids stay unique
        self._lock = threading.Lock()

    def target(self, explicit: str | None, caller: _Caller, model: Any, owner: object) -> str:
        """The target of a model call: ``explicit`` (one per ``owner``) when given, else the
        calling agent's (one per agent: its name and place), else the model's name (one per
        ``owner`` and top-level node)."""
        key: Hashable
        if explicit is not None:
            name, key = explicit, ("named", id(owner), explicit)
        elif caller.agent is not None:
            name, key = caller.agent, ("agent", caller.agent, caller.place)
        else:
            name = _model_name(model)
            key = ("model", id(owner), name, caller.node)
        found = self._targets.get(key)
        if found is None:
            with self._lock:
                found = self._targets.get(key)
                if found is None:
                    self._keep[id(owner)] = owner
                    found = self._targets[key] = self.session.agent_target(name, key)
        return found

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


_registries: weakref.WeakKeyDictionary[ChaosSession, _Agents] = weakref.WeakKeyDictionary()
_registries_lock = threading.Lock()


def _agents(session: ChaosSession) -> _Agents:
    found = _registries.get(session)
    if found is None:
        with _registries_lock:
            found = _registries.get(session)
            if found is None:
                found = _registries[session] = _Agents(session)
    return found


def _session_of(chaos: Any, where: str) -> ChaosSession:
    session = getattr(chaos, "session", chaos)
    if not isinstance(session, ChaosSession):
        raise TypeError(
            f"{where} needs a Chaos (e.g. the chaos fixture), got {safe_repr(chaos, 80)}"
        )
    return session


# -- native errors: what the chat model raises -------------------------------------------------


def _provider_of(model: Any) -> tuple[str, str | None, str | None]:
    """(provider, base URL, path) of a chat model's client: ``"openai"`` for any
    ``BaseChatOpenAI``, ``"anthropic"`` for ``ChatAnthropic``, else ``"generic"``. The
    integrations are looked up only when loaded already (the model's class imported them)."""
    openai_module = sys.modules.get("langchain_openai.chat_models.base")
    base = getattr(openai_module, "BaseChatOpenAI", None)
    if isinstance(base, type) and isinstance(model, base):
        client: Any = getattr(model, "root_client", None)
        try:
            url: Any = client.base_url  # the SDK client's, resolved (Azure's deployment URL)
        except Exception:
            url = getattr(model, "openai_api_base", None)
        path = "/responses" if getattr(model, "use_responses_api", None) is True else None
        return "openai", str(url) if url else None, path
    anthropic_module = sys.modules.get("langchain_anthropic.chat_models")
    base = getattr(anthropic_module, "ChatAnthropic", None)
    if isinstance(base, type) and isinstance(model, base):
        url = getattr(model, "anthropic_api_url", None)
        return "anthropic", str(url) if url else None, None
    return "generic", None, None


#: The integration's own conversion of its SDK's errors: (module, bad-request handler, API
#: error handler), as ``_generate`` / ``_stream`` call them in their ``except`` clauses.
_CONVERSIONS = {
    "openai": (
        "langchain_openai.chat_models.base",
        "_handle_openai_bad_request",
        "_handle_openai_api_error",
    ),
    "anthropic": (
        "langchain_anthropic.chat_models",
        "_handle_anthropic_bad_request",
        "_handle_anthropic_api_error",
    ),
}


def _build_errors(session: ChaosSession, key: tuple[str, str | None, str | None]) -> NativeErrors:
    provider, base_url, path = key
    if provider == "generic":
        return _GENERIC
    seam = f"the LangChain chat model of {provider}"
    # the SDK's own classes: what is injected is the integration's conversion of them
    sdk_errors = native_errors(session, provider, seam, base_url=base_url, path=path, marked=False)
    convert = _conversion(provider)
    if sdk_errors is None or convert is None:
        if sdk_errors is not None:
            session.note(
                f"{seam}: the integration's own error conversion was not found, so injected "
                "model faults raise LangChain's provider-neutral errors (ModelRateLimitError...)"
            )
        return _GENERIC

    def build(failure: Failure) -> BaseException | None:
        raw = sdk_errors(failure)
        return convert(raw) if raw is not None else None

    # a copy's cause chain (the SDK's error, then the HTTP client's) keeps its own classes:
    # only what the agent catches is marked injected
    return Templates(build)


def _conversion(provider: str) -> Callable[[BaseException], BaseException] | None:
    """``provider``'s integration converting one SDK error as it does in ``_generate``, or
    ``None`` when its (private) handlers are not there."""
    module_name, bad_name, api_name = _CONVERSIONS[provider]
    try:
        module = importlib.import_module(module_name)
        sdk = importlib.import_module(provider)
        bad_request, api_error = getattr(module, bad_name), getattr(module, api_name)
        bad_class, api_class = sdk.BadRequestError, sdk.APIError
    except (ImportError, AttributeError):
        return None

    def convert(raw: BaseException) -> BaseException:
        try:
            try:
                raise raw
            except bad_class as error:
                bad_request(error)
            except api_class as error:
                api_error(error)  # re-raises what it does not classify, as it is
        except BaseException as converted:
            converted.__traceback__ = None
            return converted
        return raw  # pragma: no cover - the handlers always raise

    return convert


def _generic_error(failure: Failure) -> BaseException | None:
    """LangChain's provider-neutral ``ModelError`` for a failure (by status for HTTP ones),
    with the HTTP details on it; ``None`` (the built-in kinds) without them."""
    try:
        from langchain_core import exceptions as lc
    except ImportError:  # pragma: no cover - langchain-core always has it
        return None
    by_status: dict[int, str] = {
        400: "ModelInvalidRequestError",
        401: "ModelAuthenticationError",
        403: "ModelPermissionDeniedError",
        404: "ModelNotFoundError",
        408: "ModelTimeoutError",
        413: "ModelInvalidRequestError",
        422: "ModelInvalidRequestError",
        429: "ModelRateLimitError",
    }
    status: int | None = None
    if failure.kind == "timeout":
        name = "ModelTimeoutError"
    elif failure.kind == "connection":
        name = "ModelConnectionError"
    elif failure.kind == "http":
        status = failure.status or 500
        name = by_status.get(status) or ("ModelAPIError" if status >= 500 else "ModelError")
    else:
        return None
    cls = getattr(lc, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        return None  # a langchain-core from before these classes
    exc: Any = cls(failure.message)
    headers = {k.lower(): v for k, v in failure.headers.items()}
    if failure.retry_after is not None:
        headers.setdefault("retry-after", f"{failure.retry_after:g}")
    exc.status_code = status
    exc.headers = headers
    exc.retry_after = failure.retry_after
    exc.body = failure.any_body() if status is not None else None
    built: BaseException = exc
    return built


_GENERIC: NativeErrors = Templates(_generic_error)


# -- chat models under chaos ------------------------------------------------------------------


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

_classes: dict[type, type] = {}
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
    ``max_retries=0`` on the model so that retries are the agent's own. Answers from the
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


def _state_of(model: Any) -> _ModelChaos | None:
    try:
        state = model.__dict__.get(STATE)
    except AttributeError:
        return None
    return state if isinstance(state, _ModelChaos) else None


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
    found = _classes.get(cls)
    if found is not None:
        return found
    with _classes_lock:
        found = _classes.get(cls)
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
        _classes[cls] = made
        return made


def _refuse_pickling(self: Any, protocol: Any = None) -> Any:
    raise TypeError(
        f"a chat model under chaos ({type(self).__qualname__}) cannot be pickled: its calls "
        "belong to one chaos run; pickle the model you gave chaos_model()"
    )


def _takes_run_manager(method: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return True
    return "run_manager" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )


def _call_args(messages: Any, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """What a model call's arguments show in the trace: how many messages, which tools."""
    tools = []
    for tool in kwargs.get("tools") or ():
        found: Any = None
        if isinstance(tool, Mapping):
            function = tool.get("function")
            found = tool.get("name") or (
                function.get("name") if isinstance(function, Mapping) else None
            )
        else:
            found = getattr(tool, "name", None)
        tools.append(safe_str(found if found is not None else tool, 100))
    try:
        count = len(messages)
    except TypeError:
        count = 0
    return {"messages": count, "tools": tools}


def _core_for(model: BaseChatModel, state: _ModelChaos) -> Interceptor:
    caller = _caller()
    agents = state.agents
    target = agents.target(state.name, caller, model, state)
    return agents.core(target, caller.agent, model, _result_finish)


def _sync_call(base: Callable[..., Any]) -> Callable[..., Any]:
    manager = _takes_run_manager(base)

    def _generate(
        self: BaseChatModel,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Any:
        __tracebackhide__ = True
        if manager:
            kwargs["run_manager"] = run_manager
        state = _state_of(self)
        if state is None or _ACTIVE.get() is state:
            return base(self, messages, stop=stop, **kwargs)

        def invoke(_: Any) -> Any:
            token = _ACTIVE.set(state)
            try:
                return base(self, messages, stop=stop, **kwargs)
            finally:
                _ACTIVE.reset(token)

        return _core_for(self, state).call(_call_args(messages, kwargs), invoke)

    return _generate


def _async_call(base: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    manager = _takes_run_manager(base)

    async def _agenerate(
        self: BaseChatModel,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Any:
        __tracebackhide__ = True
        if manager:
            kwargs["run_manager"] = run_manager
        state = _state_of(self)
        if state is None or _ACTIVE.get() is state:
            return await base(self, messages, stop=stop, **kwargs)

        async def invoke(_: Any) -> Any:
            token = _ACTIVE.set(state)
            try:
                return await base(self, messages, stop=stop, **kwargs)
            finally:
                _ACTIVE.reset(token)

        return await _core_for(self, state).acall(_call_args(messages, kwargs), invoke)

    return _agenerate


def _sync_stream(base: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    manager = _takes_run_manager(base)

    def _stream(
        self: BaseChatModel,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Iterator[Any]:
        __tracebackhide__ = True
        if manager:
            kwargs["run_manager"] = run_manager
        state = _state_of(self)
        if state is None or _ACTIVE.get() is state:
            yield from base(self, messages, stop=stop, **kwargs)
            return
        chunks: list[Any] = []
        joined: list[ChatResult] = []

        def invoke(_: Any) -> ChatResult:
            token = _ACTIVE.set(state)
            try:
                chunks.extend(base(self, messages, stop=stop, **kwargs))
            finally:
                _ACTIVE.reset(token)
            joined.append(_joined(chunks))
            return joined[0]

        result = _core_for(self, state).call(_call_args(messages, kwargs), invoke)
        yield from chunks if joined and result is joined[0] else _as_chunks(result)

    return _stream


def _async_stream(base: Callable[..., AsyncIterator[Any]]) -> Callable[..., AsyncIterator[Any]]:
    manager = _takes_run_manager(base)

    async def _astream(
        self: BaseChatModel,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        __tracebackhide__ = True
        if manager:
            kwargs["run_manager"] = run_manager
        state = _state_of(self)
        if state is None or _ACTIVE.get() is state:
            async for chunk in base(self, messages, stop=stop, **kwargs):
                yield chunk
            return
        chunks: list[Any] = []
        joined: list[ChatResult] = []

        async def invoke(_: Any) -> ChatResult:
            token = _ACTIVE.set(state)
            try:
                async for chunk in base(self, messages, stop=stop, **kwargs):
                    chunks.append(chunk)
            finally:
                _ACTIVE.reset(token)
            joined.append(_joined(chunks))
            return joined[0]

        result = await _core_for(self, state).acall(_call_args(messages, kwargs), invoke)
        for chunk in chunks if joined and result is joined[0] else _as_chunks(result):
            yield chunk

    return _astream


def _joined(chunks: list[Any]) -> ChatResult:
    """A streamed call's chunks as one result (what the trace records and a replay returns)."""
    try:
        return generate_from_stream(iter(chunks))
    except Exception:  # no chunks, or chunks that do not add up
        return ChatResult(generations=[])


def _as_chunks(result: Any) -> Iterator[ChatGenerationChunk]:
    """A result that answers in the model's place (a replay, a rewrite), as one stream chunk."""
    generations = getattr(result, "generations", None) or []
    if not generations or not isinstance(getattr(generations[0], "message", None), AIMessage):
        return
    generation = generations[0]
    yield ChatGenerationChunk(
        message=_as_chunk(generation.message), generation_info=generation.generation_info
    )


def _as_chunk(message: AIMessage) -> AIMessageChunk:
    chunks: list[dict[str, Any]] = [
        {
            "name": call.get("name"),
            "args": json.dumps(call.get("args", {}), default=str),
            "id": call.get("id"),
            "index": i,
            "type": "tool_call_chunk",
        }
        for i, call in enumerate(message.tool_calls)
    ]
    for call in message.invalid_tool_calls:
        chunks.append(
            {
                "name": call.get("name"),
                "args": call.get("args"),
                "id": call.get("id"),
                "index": len(chunks),
                "type": "tool_call_chunk",
            }
        )
    fields: dict[str, Any] = {
        "content": message.content,
        "additional_kwargs": message.additional_kwargs,
        "response_metadata": message.response_metadata,
        "id": message.id,
        "name": message.name,
        "tool_call_chunks": chunks,
        "usage_metadata": message.usage_metadata,
    }
    if "chunk_position" in AIMessageChunk.model_fields:
        fields["chunk_position"] = "last"
    return AIMessageChunk(**fields)


# -- the create_agent middleware ------------------------------------------------------------


class ChaosPlacementWarning(UserWarning):
    """``chaos_middleware`` sits outside a retry or fallback middleware of the agent: the
    faults it injects never reach that middleware, so the test does not exercise it."""


#: The middleware (of ``langchain.agents.middleware``) that must see the faults: by channel.
_HANDLERS = {
    "model": ("ModelRetryMiddleware", "ModelFallbackMiddleware"),
    "tool": ("ToolRetryMiddleware", "ToolErrorMiddleware"),
}


def chaos_middleware(chaos: Any, *, repairers: Mapping[str, Any] | None = None) -> Any:
    """An ``AgentMiddleware`` for ``langchain.agents.create_agent`` that puts the agent's
    model calls and tool calls under ``chaos`` (a ``Chaos``, e.g. the ``chaos`` fixture).
    ``repairers``: tool name -> ``ParamRepairer``; the model's arguments for that tool are
    repaired (``Repair`` events in the trace) before the tool node validates them.

    Put it **last** in ``create_agent(middleware=[...])``: LangChain runs the first middleware
    outermost, so the agent's ``ModelRetryMiddleware``, ``ModelFallbackMiddleware``,
    ``ToolRetryMiddleware`` and ``ToolErrorMiddleware`` must come before it to see its faults
    (as they see a real failure). Placed outside one of them, it says so once: a
    :class:`ChaosPlacementWarning` and a note in the trace.

    Model calls: the model's text and the tool calls it asks for are recorded (the halt
    monitor reads them), its ``usage_metadata`` counts against ``max_tokens``; faults on the
    ``model`` channel apply: an error raises what the agent's chat model raises for it (see
    the module doc), ``repeated_output`` / ``paraphrased_output`` / ``stale_output`` answer in
    its place. Each agent has its own model target (its name, or the graph node running it;
    the model's name for an unnamed agent at the top of the graph), and events name the
    agent. Calls of a model under :func:`chaos_model` record themselves and pass through.
    Tool calls: faults apply before the tool runs; a ``malformed_params`` fault sends its
    arguments through the tool node's own validation. Tools wrapped with ``chaos.wrap``
    already are recorded by themselves, not twice.
    """
    try:
        from langchain.agents.middleware import AgentMiddleware  # the `langchain` package
    except ImportError as exc:
        raise ChaosConfigError(
            f"chaos_middleware() needs the langchain package (create_agent): {_HINT} ({exc})"
        ) from None

    session = _session_of(chaos, "chaos_middleware()")
    if repairers is not None and not isinstance(repairers, Mapping):
        raise TypeError(
            f"chaos_middleware(repairers=...) needs a tool name -> ParamRepairer mapping, "
            f"got {safe_str(repairers, 80)}"
        )
    wired = {check_name(k, "chaos_middleware(): repairers"): _wire(r, session)
             for k, r in (repairers or {}).items()}  # fmt: skip
    agents = _agents(session)
    placement = _Placement(session)

    class ChaosMiddleware(AgentMiddleware):
        """Every model and tool call of the agent through the chaos run's fault plan."""

        name = "ChaosMiddleware"

        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            __tracebackhide__ = True
            placement.check("model", handler)
            core = _request_core(agents, request)
            if core is None:
                return handler(request)
            return core.call(_model_args(request), lambda _: handler(request))

        async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            __tracebackhide__ = True
            placement.check("model", handler)
            core = _request_core(agents, request)
            if core is None:
                return await handler(request)

            async def invoke(_: Any) -> Any:
                return await handler(request)

            return await core.acall(_model_args(request), invoke)

        def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            __tracebackhide__ = True
            placement.check("tool", handler)
            core, call = _tool_core(session, request, wired)
            if core is None:
                return handler(request)
            return core.call(call["args"], lambda m: handler(_with_args(request, call, m)))

        async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            __tracebackhide__ = True
            placement.check("tool", handler)
            core, call = _tool_core(session, request, wired)
            if core is None:
                return await handler(request)

            async def invoke(m: Mapping[str, Any]) -> Any:
                return await handler(_with_args(request, call, m))

            return await core.acall(call["args"], invoke)

    return ChaosMiddleware()


class _Placement:
    """Whether the middleware LangChain composed inside ``chaos_middleware`` include one that
    must see its faults: read from the handler it is given (LangChain composes the inner
    middleware as closures over their ``wrap_*_call`` methods), once per composed chain."""

    __slots__ = ("_lock", "_seen", "_warned", "session")

    def __init__(self, session: ChaosSession) -> None:
        self.session = session
        self._seen: dict[int, object] = {}  # inner chains checked (kept: ids stay unique)
        self._warned: set[str] = set()
        self._lock = threading.Lock()

    def check(self, channel: str, handler: Any) -> None:
        inner = _cell(handler, "inner")
        if inner is None or id(inner) in self._seen:  # innermost, or known
            return
        with self._lock:
            if id(inner) in self._seen:
                return
            self._seen[id(inner)] = inner
            names = sorted({type(m).__name__ for m in _inner_middleware(inner, channel)})
            late = [n for n in names if n not in self._warned]
            self._warned.update(late)
        if late:
            message = (
                f"chaos_middleware sits outside {', '.join(late)}: the faults it injects into "
                f"{channel} calls never reach {'it' if len(late) == 1 else 'them'}, so this "
                f"chaos test does not exercise {'its' if len(late) == 1 else 'their'} retries "
                "or fallbacks; put chaos_middleware(chaos) last in "
                "create_agent(middleware=[...])"
            )
            self.session.note(message)
            warnings.warn(message, ChaosPlacementWarning, stacklevel=4)


def _cell(function: Any, name: str) -> Any:
    """The value of the closure variable ``name`` of ``function`` (``None`` if none)."""
    code = getattr(function, "__code__", None)
    closure = getattr(function, "__closure__", None)
    if code is None or not closure:
        return None
    for var, cell in zip(code.co_freevars, closure, strict=False):
        if var == name:
            try:
                return cell.cell_contents
            except ValueError:  # an empty cell
                return None
    return None


def _inner_middleware(chain: Any, channel: str) -> list[Any]:
    """The retry / fallback middleware in a composed chain of ``wrap_*_call`` handlers."""
    try:
        from langchain.agents import middleware as lc
    except ImportError:  # pragma: no cover - the middleware itself needs it
        return []
    kinds = tuple(
        cls for cls in (getattr(lc, n, None) for n in _HANDLERS[channel]) if isinstance(cls, type)
    )
    found: list[Any] = []
    todo: list[Any] = [chain]
    seen: set[int] = set()
    while todo and len(seen) < 256:
        item = todo.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        owner = getattr(item, "__self__", None)  # a bound wrap_*_call method
        if kinds and isinstance(owner, kinds):
            found.append(owner)
        todo.append(getattr(item, "__wrapped__", None))  # LangSmith's traceable() wrapper
        todo.extend(_cell(item, n) for n in ("inner", "outer"))
    return found


def _model_args(request: Any) -> dict[str, Any]:
    """What a model call's arguments show in the trace: how many messages, which tools."""
    tools = [getattr(t, "name", None) or str(t) for t in (getattr(request, "tools", None) or [])]
    return {"messages": len(getattr(request, "messages", None) or []), "tools": tools}


def _request_core(agents: _Agents, request: Any) -> Interceptor | None:
    """The interceptor of the request's model call, by the agent making it; ``None`` for a
    model under :func:`chaos_model` (it records its calls itself)."""
    model = getattr(request, "model", None)
    if _state_of(model) is not None:
        return None
    caller = _caller(getattr(request, "runtime", None))
    target = agents.target(None, caller, model, model)
    return agents.core(target, caller.agent, model, _response_finish)


# -- model turns: what the trace records, what a replay returns --------------------------------


def _result_finish(session: ChaosSession) -> Callable[[CallState, Any], Any]:
    """The finish of a :func:`chaos_model` call (a ``ChatResult``): a replayed answer gets
    new tool-call ids and no message id (LangChain gives it this run's, as to a new one)."""
    finish = finish_model(session, _read_response, _rewrite_response)

    def fresh_finish(state: CallState, response: Any) -> Any:
        __tracebackhide__ = True
        if state.effect is not None and state.effect.replay:
            response = _fresh(response, state.index, keep_id=False)
        return finish(state, response)

    return fresh_finish


def _response_finish(session: ChaosSession) -> Callable[[CallState, Any], Any]:
    """The finish of a middleware model call (a ``ModelResponse``): a replayed answer gets
    new message and tool-call ids."""
    finish = finish_model(session, _read_response, _rewrite_response)

    def fresh_finish(state: CallState, response: Any) -> Any:
        __tracebackhide__ = True
        if state.effect is not None and state.effect.replay:
            response = _fresh(response, state.index, keep_id=True)
        return finish(state, response)

    return fresh_finish


def _messages(response: Any) -> list[BaseMessage]:
    if isinstance(response, BaseMessage):
        return [response]
    inner = getattr(response, "model_response", None)  # ExtendedModelResponse
    if inner is not None:
        return _messages(inner)
    generations = getattr(response, "generations", None)  # a chat model's ChatResult
    if isinstance(generations, list):
        return [
            g.message for g in generations if isinstance(getattr(g, "message", None), BaseMessage)
        ]
    return list(getattr(response, "result", None) or [])


def _ai(response: Any) -> AIMessage | None:
    return next((m for m in _messages(response) if isinstance(m, AIMessage)), None)


def _read_response(response: Any) -> tuple[str, list[tuple[str, Any]], int | None]:
    message = _ai(response)
    if message is None:
        return "", [], None
    calls = [(c.get("name", ""), c.get("args", {})) for c in message.tool_calls]
    usage = message.usage_metadata
    tokens = usage.get("total_tokens") if usage else None
    return message.text, calls, tokens


def _replace_ai(response: Any, update: Callable[[AIMessage], AIMessage]) -> Any:
    """``response`` with its AI message replaced by ``update(message)``."""
    if isinstance(response, AIMessage):
        return update(response)
    inner = getattr(response, "model_response", None)
    if inner is not None:
        return dataclasses.replace(response, model_response=_replace_ai(inner, update))
    generations = getattr(response, "generations", None)
    if isinstance(generations, list):
        return ChatResult(
            generations=[
                type(g)(message=update(g.message), generation_info=g.generation_info)
                if isinstance(getattr(g, "message", None), AIMessage)
                else g
                for g in generations
            ],
            llm_output=getattr(response, "llm_output", None),
        )
    result = [update(m) if isinstance(m, AIMessage) else m for m in _messages(response)]
    return dataclasses.replace(response, result=result)


def _rewrite_response(response: Any, text: str) -> Any:
    return _replace_ai(response, lambda m: m.model_copy(update={"content": text}))


def _fresh(response: Any, index: int, *, keep_id: bool) -> Any:
    """A replayed answer with new tool-call ids and a new message id (``keep_id``: derived
    from the old one; else none, for LangChain to give it the current run's): LangGraph
    would otherwise take it for the earlier message and replace that one instead of adding
    a repeat."""

    def update(message: AIMessage) -> AIMessage:
        calls = [{**c, "id": f"{c.get('id') or 'call'}-again{index}"} for c in message.tool_calls]
        new_id = f"{message.id or 'ai'}-again{index}" if keep_id else None
        return message.model_copy(update={"id": new_id, "tool_calls": calls})

    return _replace_ai(response, update)


def _tool_core(
    session: ChaosSession, request: Any, repairers: Mapping[str, Any]
) -> tuple[Interceptor | None, dict[str, Any]]:
    """The interceptor of one tool call, or ``None`` when the tool records itself (it was
    wrapped with ``chaos.wrap``)."""
    call = dict(request.tool_call)
    tool = getattr(request, "tool", None)
    if tool is not None and getattr(tool, ORIGINAL, None) is not None:
        return None, call
    if not isinstance(call.get("args"), Mapping):
        call["args"] = {}
    schema = model_schema(tool) if isinstance(tool, BaseTool) else None
    call_id = call.get("id")

    def finish(state: CallState, out: Any) -> Any:
        __tracebackhide__ = True
        return _finish_tool(session, state, out, call_id)

    name = str(call.get("name") or "tool")
    repairer = repairers.get(name)
    agent = _caller(getattr(request, "runtime", None)).agent
    core = Interceptor(session, name, schema=schema, repairer=repairer, finish=finish, agent=agent)
    return core, call


def _with_args(request: Any, call: dict[str, Any], args: Mapping[str, Any]) -> Any:
    if args is call["args"]:
        return request
    return request.override(tool_call={**call, "args": dict(args)})


def _finish_tool(session: ChaosSession, state: CallState, out: Any, call_id: Any) -> Any:
    """Record what the tool node answered: an error message as a failed call (the tool node
    caught the tool's error), a replayed message under this call's id."""
    __tracebackhide__ = True
    if not isinstance(out, ToolMessage):  # a Command, or what a custom handler returned
        return session.finish_ok(state, out)
    if out.status == "error":
        session.finish_error(state, error_type="ToolError", message=safe_str(out.content, 500))
        return out
    if out.tool_call_id != call_id:  # replayed: the earlier answer, to this call
        out = out.model_copy(update={"tool_call_id": call_id, "id": None})
    text = out.content if isinstance(out.content, str) else None
    new = transformed(state, text) if text is not None else None
    if new is not None:
        out = out.model_copy(update={"content": new})
    return session.finish_ok(state, out, transform=False, recorded=out.content)
