"""pydantic-ai models under chaos: :class:`ChaosModel`, and :func:`chaos_model`, which puts each
model of a ``FallbackModel`` under chaos as its own target."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from typing import TYPE_CHECKING, Any

from ...errors import ChaosConfigError
from ...faults.effects import Failure
from ...inject.call import CallState
from ...inject.callables import check_name
from ...inject.errors import NativeErrors
from ...inject.handover import endpoint_for, handed_over
from ...inject.intercept import Interceptor
from ...inject.session import _MISSING, ChaosSession
from ...saferepr import safe_repr
from ..common import finish_model
from .deadlines import _acall, _wait
from .errors import _concrete, _errors_of, _sdk_seam
from .framework import (
    FallbackModel,
    Model,
    ModelMessage,
    ModelRequestParameters,
    ModelResponse,
    ModelSettings,
    RunContext,
    StreamedResponse,
    WrapperModel,
    infer_model,
)
from .runs import _agent_target, _label, _running_agent, _session
from .turns import _completed, _read, _request_args, _rewrite

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


class ChaosModel(WrapperModel):
    """A pydantic-ai model whose requests, streamed or not, go through a chaos run on the
    ``"model"`` channel.

    - Each turn's text and tool calls are recorded (as :func:`~.common.describe_turn` shows
      them), its token usage counts toward ``max_tokens``.
    - The plan's model faults apply before the request. An injected failure raises what
      pydantic-ai raises there: for a model that sends through the ``openai`` or ``anthropic``
      SDK (``OpenAIChatModel``, ``OpenAIResponsesModel``, the OpenAI-compatible models built on
      them, ``AnthropicModel``), the SDK's own exception for a response of the model's base URL,
      mapped by pydantic-ai's own ``map_api_errors`` (``ModelRateLimitError`` with
      ``retry_after``, ``ModelUnavailableError``, ``ModelTimeoutError``, ``ModelConnectionError``,
      the SDK's exception as ``__cause__``); for any other model pydantic-ai's categories of the
      same (``ModelHTTPError.for_category``, ``ModelTimeoutError``, ``ModelConnectionError``).
      A ``FallbackModel`` falls back on them; the SDK's own retries are below this seam.
    - ``repeated_output`` / ``paraphrased_output`` / ``stale_output`` answer with an earlier
      response of the same target, not asking the model; a streamed request replays it as a
      stream (``CompletedStreamedResponse``).
    - A streamed request (``run_stream``, ``run(event_stream_handler=)``, ``iter``) passes the
      live stream through and records its final response when the consumer is done.

    A request that a scripted provider endpoint of the run answers (``chaos.provider`` at the
    model's base URL) is left to it: recorded and faulted there, once, on the wire (where the
    SDK's own retry meets the fault), under this model's target and agent.

    Its target: ``name`` when given (``agent`` then names the agent in the trace, default: the
    running agent); else each request's is the running agent's (its name, made unique in the
    run: ``router``, ``router#2`` ...) plus ``role`` (``/fallback1`` for a ``FallbackModel``'s
    first fallback), ``"model"`` outside an agent run. So one ``ChaosModel`` shared by several
    agents keeps each agent's calls, and the outputs stateful faults replay, apart.
    """

    def __init__(
        self,
        session: ChaosSession,
        wrapped: Model | str,
        *,
        name: str | None = None,
        agent: str | None = None,
        role: str = "",
    ):
        super().__init__(wrapped)
        self.chaos_session = session
        #: the fixed target of its requests (``None``: the running agent's, per request)
        self.chaos_target = None if name is None else check_name(name, "chaos_model(): name")
        #: the agent the trace names for its requests (``None``: the running agent)
        self.chaos_agent_name = agent
        self.chaos_role = role
        self._chaos_native: NativeErrors | None = None
        base = finish_model(session, _read, _rewrite)

        def finish(state: CallState, response: Any) -> Any:
            __tracebackhide__ = True
            if (
                state.effect is not None
                and state.effect.replay
                and isinstance(response, ModelResponse)
            ):
                # a new response, which this run stamps as its own (pydantic-ai fills in
                # run_id and conversation_id only where they are unset)
                response = dataclasses.replace(
                    response, parts=list(response.parts), run_id=None, conversation_id=None
                )
            return base(state, response)

        self._chaos_finish = finish

    def _chaos_error(self, failure: Failure) -> BaseException | None:
        """The native exception for ``failure`` (the builder made on the first failure)."""
        native = self._chaos_native
        if native is None:
            native = self._chaos_native = _errors_of(self.chaos_session, self.wrapped)
        return native(failure)

    def _chaos_names(self, run_context: Any = None) -> tuple[str, str | None]:
        """(target, agent) of one request (see the class doc)."""
        session = self.chaos_session
        target, agent = self.chaos_target, self.chaos_agent_name
        if target is None or agent is None:
            running = _running_agent(run_context)
            if target is not None:
                agent = _label(session, running)
            elif running is None:  # a request outside an agent run: the model is the owner
                target = session.agent_target("model" + self.chaos_role, owner=self)
            else:
                agent = _agent_target(session, running)
                target = agent
                if self.chaos_role:
                    target = session.agent_target(agent + self.chaos_role, owner=running)
        assert target is not None
        return target, agent

    def _chaos_core(self, run_context: Any = None) -> Interceptor:
        """The interceptor of one request: its target and agent (see the class doc)."""
        target, agent = self._chaos_names(run_context)
        return Interceptor(
            self.chaos_session,
            target,
            channel="model",
            finish=self._chaos_finish,
            errors=self._chaos_error,
            agent=agent,
        )

    def _chaos_handover(self, run_context: Any = None) -> Any:
        """When a scripted provider endpoint of the run answers the model's requests
        (``chaos.provider``): a context in which its wire attempts are this request's, filed
        under its target and agent (see :mod:`~pytest_agentchaos.inject.handover`). ``None``:
        this seam records and faults the request itself."""
        session = self.chaos_session
        if not session.provider_endpoints:
            return None
        if endpoint_for(session, _request_url(self.wrapped)) is None:
            return None
        target, agent = self._chaos_names(run_context)
        return handed_over(session, target, agent)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        __tracebackhide__ = True
        handover = self._chaos_handover()
        if handover is not None:  # one call, recorded and faulted on the wire
            with handover:
                answer: ModelResponse = await self.wrapped.request(
                    messages, model_settings, model_request_parameters
                )
            return answer
        response: ModelResponse = await _acall(
            self._chaos_core(),
            _request_args(messages),
            lambda _args: self.wrapped.request(messages, model_settings, model_request_parameters),
            deadline=False,
        )
        return response

    @contextlib.asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        __tracebackhide__ = True
        handover = self._chaos_handover(run_context)
        if handover is not None:  # one call, recorded and faulted on the wire
            async with contextlib.AsyncExitStack() as opened:
                with handover:  # the request is sent as the stream opens
                    live = await opened.enter_async_context(
                        self.wrapped.request_stream(
                            messages, model_settings, model_request_parameters, run_context
                        )
                    )
                yield live
            return
        core = self._chaos_core(run_context)
        session = core.session
        state = core.begin(_request_args(messages))
        if state.effect is not None:
            await _wait(session, state, deadline=False)
            _, replayed = core._prepare(state, {})  # a failure raises here, before the stream
            if replayed is not _MISSING:
                yield _completed(core.finish(state, replayed), model_request_parameters)
                return
        ended = False
        try:
            async with self.wrapped.request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as stream:
                try:
                    yield stream
                except BaseException as exc:  # the stream failed, or its consumer did
                    ended = True
                    session.finish_error(state, exc)
                    raise
                ended = True
                core.finish(state, stream.get())  # what the consumer read of it
        except BaseException as exc:  # opening the stream failed
            if not ended:
                session.finish_error(state, exc)
            raise

    def __repr__(self) -> str:
        shown = safe_repr(self.wrapped, 120)
        if self.chaos_target is None:
            return f"ChaosModel({shown}, per agent{self.chaos_role and ', ' + self.chaos_role})"
        return f"ChaosModel({shown}, name={self.chaos_target!r})"


def _request_url(model: Model) -> str | None:
    """The URL ``model``'s requests are posted to, for a model that sends through the
    ``openai`` or ``anthropic`` SDK; else ``None``."""
    concrete = _concrete(model)
    seam = _sdk_seam(concrete)
    if seam is None:
        return None
    try:
        base = concrete.base_url
    except Exception:
        return None
    return base.rstrip("/") + seam[1] if isinstance(base, str) and base else None


def _is_under_chaos(model: object) -> bool:
    """A ``ChaosModel``, or a ``FallbackModel`` whose models all are."""
    if isinstance(model, ChaosModel):
        return True
    if isinstance(model, FallbackModel):
        return bool(model.models) and all(_is_under_chaos(m) for m in model.models)
    return False


def _chaos_fallback(
    session: ChaosSession,
    fallback: FallbackModel,
    *,
    name: str | None,
    agent: str | None,
    owner: object,
    role: str,
) -> FallbackModel:
    """A copy of ``fallback`` (same type, same ``fallback_on``) whose models are each under
    chaos as their own target: the first takes the role given, fallback ``i`` the role
    ``+ "/fallback{i}"``. A model under chaos already is kept as it is."""
    models = [
        _under_chaos(
            session,
            member,
            name=name,
            agent=agent,
            owner=owner,
            role=role if i == 0 else f"{role}/fallback{i}",
        )
        for i, member in enumerate(fallback.models)
    ]
    copied = copy.copy(fallback)
    for cached in ("_enter_lock", "_exit_stack"):  # the original's, bound to its own use
        copied.__dict__.pop(cached, None)
    copied._entered_count = 0
    copied.models = models
    return copied


def _under_chaos(
    session: ChaosSession,
    model: Model,
    *,
    name: str | None,
    agent: str | None = None,
    owner: object = None,
    role: str = "",
) -> Model:
    """``model`` under chaos: a ``ChaosModel``, or a ``FallbackModel`` of them. ``name`` is
    the target (``None``: the running agent's, per request); a role (a fallback's) is added
    to it, made unique for ``owner`` when there is one."""
    if isinstance(model, ChaosModel):
        return model
    if isinstance(model, FallbackModel):
        return _chaos_fallback(session, model, name=name, agent=agent, owner=owner, role=role)
    if name is None:
        return ChaosModel(session, model, role=role)
    target = name + role
    if role and owner is not None:
        target = session.agent_target(target, owner=owner)
    return ChaosModel(session, model, name=target, agent=agent)


def _as_model(model: object, where: str) -> Model:
    if isinstance(model, str):
        inferred: Model = infer_model(model)
        return inferred
    if not isinstance(model, Model):
        raise TypeError(
            f"{where}: expected a pydantic-ai Model or a model name, got {safe_repr(model, 80)}"
        )
    return model


def chaos_model(chaos: Any, model: Model | str, *, name: str | None = None) -> Model:
    """``model`` (a pydantic-ai ``Model`` or a model name) with its requests under chaos on the
    ``"model"`` channel (see :class:`ChaosModel`).

    - ``name``: the target of its requests. Without it, each request's target is the running
      agent's own (its name, made unique in the run), so a model shared by several agents keeps
      their calls apart; outside an agent run it is ``"model"``.
    - A ``FallbackModel`` comes back as a copy whose models are each under chaos as their own
      target: the first model takes the target, fallback ``i`` the target ``+ "/fallback{i}"``
      (``router``, ``router/fallback1`` ...), so a fault on the first model makes the
      ``FallbackModel`` fall back, as a real failure does.

    A model under chaos already is refused.
    """
    session = _session(chaos)
    if name is not None:
        check_name(name, "chaos_model(): name")
    model = _as_model(model, "chaos_model(): model")
    if _is_under_chaos(model):
        raise ChaosConfigError(
            "chaos_model(): the model is under chaos already (wrapping twice would record "
            "every request twice)"
        )
    return _under_chaos(session, model, name=name)
