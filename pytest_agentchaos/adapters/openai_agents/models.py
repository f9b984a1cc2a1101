"""Agents SDK models under chaos: :class:`ChaosModel` and :func:`chaos_model`, each call filed
under the agent that makes it, a failure the ``openai`` SDK's own exception."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from agents import Model, ModelResponse
from agents.items import TResponseStreamEvent
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from agents.tracing import get_current_span

from ...inject.call import CallState
from ...inject.callables import check_name
from ...inject.errors import NativeErrors
from ...inject.handover import endpoint_for, handed_over, handed_over_aiter
from ...inject.intercept import Interceptor
from ...inject.session import ChaosSession
from ...saferepr import safe_repr
from ..common import finish_model, native_errors
from .originals import ORIGINAL, _original
from .turns import _read, _replayed, _rewrite

#: The target of model calls whose agent is unknown (see :meth:`ChaosModel.target`).
UNKNOWN_AGENT = "model"


def _session(chaos: Any, where: str) -> ChaosSession:
    session = getattr(chaos, "session", chaos)
    if not isinstance(session, ChaosSession):
        raise TypeError(f"{where} needs a Chaos (the chaos fixture), got {safe_repr(chaos, 80)}")
    return session


def running_agent() -> str | None:
    """The name of the agent whose turn the SDK is running, from its current span (the turn
    span, or the agent span when the run's tracing config leaves turn spans out; both exist
    with tracing disabled too), or ``None`` outside a run."""
    try:
        data = getattr(get_current_span(), "span_data", None)
    except Exception:  # a trace provider of the user's own that fails
        return None
    name = getattr(data, "agent_name", None)
    if name is None and getattr(data, "type", None) == "agent":
        name = getattr(data, "name", None)
    return name if isinstance(name, str) and name else None


def _endpoint(model: Model) -> tuple[str | None, str]:
    """(base URL, path) of the requests ``model`` sends: its openai client's base URL (the
    OpenAI API's when it has none) and the path of its API."""
    path = "/chat/completions" if isinstance(model, OpenAIChatCompletionsModel) else "/responses"
    base = getattr(getattr(model, "__dict__", {}).get("_client"), "base_url", None)
    return (str(base) if base is not None else None), path


def _model_errors(session: ChaosSession, model: Model) -> NativeErrors | None:
    base_url, path = _endpoint(model)
    seam = "Agents SDK model calls"
    try:
        return native_errors(session, "openai", seam, base_url=base_url, path=path)
    except Exception:  # a base URL the HTTP client refuses: the OpenAI API's own
        return native_errors(session, "openai", seam, path=path)


class ChaosModel(Model):
    """A ``Model`` whose calls (``get_response`` and ``stream_response``) go through a chaos
    run's plan, channel ``model``; a failure raises the ``openai`` SDK's own exception. A
    streamed response is read whole, recorded, then yielded event by event (so a failure
    comes before any event, where the SDK may still retry); a paraphrase rewrites its
    completed response (what the agent acts on). A call that a scripted provider endpoint of
    the run answers (``chaos.provider`` at the model's base URL) is left to it: recorded and
    faulted there, once, under this model's target and agent, its stream passed through live.

    ``name``: the target of its calls; ``None`` (the default) files each call under the agent
    that makes it (:meth:`target`). ``agent``: the agent whose model it is (default: the
    running agent), named on its ``ModelCall`` events."""

    def __init__(
        self,
        session: ChaosSession,
        model: Model,
        name: str | None = None,
        *,
        agent: str | None = None,
    ) -> None:
        self.session = session
        self.model: Model = _original(model)
        self.name = check_name(name, "chaos_model(): name") if name is not None else None
        self.agent = agent
        self.__dict__[ORIGINAL] = self.model
        self._finish = finish_model(session, _read, _rewrite)
        self._errors = _model_errors(session, self.model)
        base, path = _endpoint(self.model)
        #: the URL its requests are posted to (a scripted endpoint there takes its calls)
        self._url = (base or "https://api.openai.com/v1").rstrip("/") + path
        self._targets: dict[str | None, str] = {}

    def target(self) -> tuple[str, str | None]:
        """(target, agent) of a call made now: ``name`` when given, else the running agent's
        own target (``session.agent_target``: its name; :func:`running_agent`), else
        ``"model"`` (a call made outside a run)."""
        running = self.agent or running_agent()
        if self.name is not None:
            return self.name, running
        target = self._targets.get(running)
        if target is None:
            if running is None:
                self.session.note(
                    "Agents SDK model calls whose agent is unknown (made outside a run) are "
                    f"filed under target {UNKNOWN_AGENT!r}"
                )
            owner = object()  # this model's calls for this agent name
            asked = running if running is not None else UNKNOWN_AGENT
            target = self._targets[running] = self.session.agent_target(asked, owner)
        return target, running

    def _handed_over(self) -> tuple[str, str | None] | None:
        """(target, agent) of a call that a scripted provider endpoint of the run answers
        (``chaos.provider``): recorded and faulted there, once, as this call (see
        :mod:`~pytest_agentchaos.inject.handover`). ``None``: this seam takes the call."""
        if endpoint_for(self.session, self._url) is None:
            return None
        return self.target()

    def _core(self, fresh: list[Any]) -> Interceptor:
        """An interceptor for one call; ``fresh`` holds what the real model returned."""

        def finish(state: CallState, response: Any) -> Any:
            __tracebackhide__ = True
            if not any(response is f for f in fresh):  # a replay answered in the model's place
                response = _replayed(response, state.index)
            return self._finish(state, response)

        target, agent = self.target()
        return Interceptor(
            self.session, target, channel="model", finish=finish, errors=self._errors, agent=agent
        )

    @staticmethod
    def _args(system_instructions: str | None, input: Any) -> dict[str, Any]:
        args: dict[str, Any] = {"input": input}
        if system_instructions is not None:
            args["instructions"] = system_instructions
        return args

    async def get_response(  # noqa: D102 - Model's
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        __tracebackhide__ = True
        handed = self._handed_over()
        if handed is not None:  # one call, recorded and faulted on the wire
            with handed_over(self.session, *handed):
                return await self.model.get_response(
                    system_instructions, input, model_settings, tools, output_schema, handoffs,
                    tracing, **kwargs,
                )  # fmt: skip
        fresh: list[Any] = []

        async def invoke(_: Mapping[str, Any]) -> ModelResponse:
            response = await self.model.get_response(
                system_instructions, input, model_settings, tools, output_schema, handoffs,
                tracing, **kwargs,
            )  # fmt: skip
            fresh.append(response)
            return response

        args = self._args(system_instructions, input)
        return await self._core(fresh).acall(args, invoke)  # type: ignore[no-any-return]

    async def stream_response(  # noqa: D102 - Model's
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        **kwargs: Any,
    ) -> AsyncIterator[TResponseStreamEvent]:
        __tracebackhide__ = True
        handed = self._handed_over()
        if handed is not None:  # one call, recorded and faulted on the wire
            live = self.model.stream_response(
                system_instructions, input, model_settings, tools, output_schema, handoffs,
                tracing, **kwargs,
            )  # fmt: skip
            async for event in handed_over_aiter(self.session, *handed, live):
                yield event
            return
        fresh: list[Any] = []

        async def invoke(_: Mapping[str, Any]) -> list[Any]:
            stream = self.model.stream_response(
                system_instructions, input, model_settings, tools, output_schema, handoffs,
                tracing, **kwargs,
            )  # fmt: skip
            events = [event async for event in stream]
            fresh.append(events)
            return events

        args = self._args(system_instructions, input)
        for event in await self._core(fresh).acall(args, invoke):
            yield event

    def get_retry_advice(self, request: Any) -> Any:  # noqa: D102 - the wrapped model's
        return self.model.get_retry_advice(request)

    def _supports_default_prompt_cache_key(self) -> bool:
        """The wrapped model's answer: the SDK then sends it the same requests."""
        supports = getattr(self.model, "_supports_default_prompt_cache_key", None)
        return bool(supports()) if callable(supports) else False

    async def close(self) -> None:  # noqa: D102 - the wrapped model's
        await self.model.close()

    async def _cleanup_on_run_end(self, owner: object) -> None:
        await self.model._cleanup_on_run_end(owner)

    def __repr__(self) -> str:
        shown = self.name if self.name is not None else "per agent"
        return f"<ChaosModel {shown!r} of {safe_repr(self.model, 80)}>"


def chaos_model(chaos: Any, model: Model, *, name: str | None = None) -> ChaosModel:
    """``model`` (an Agents SDK ``Model``) with its calls under ``chaos`` (a ``Chaos``, e.g.
    the ``chaos`` fixture): faults on the ``model`` channel apply before it is asked (a
    failure raises the openai SDK's own exception); its text, the tool calls it asks for and
    its token usage are recorded.

    ``name``: the target of its calls in the trace and in fault selectors. By default each
    call is filed under the agent that makes it (its name), so one ``chaos_model`` serves a
    whole multi-agent app as ``RunConfig(model=chaos_model(chaos, model))``, each agent its
    own target (agents of the same name share one: :func:`chaos_agent` tells them apart).
    Wrapping a wrapped model wraps the original again."""
    session = _session(chaos, "chaos_model()")
    if not isinstance(model, Model):
        raise TypeError(
            f"chaos_model() needs an Agents SDK Model instance, got {safe_repr(model, 80)} "
            "(a model name is resolved by the run's provider: pass the Model itself)"
        )
    return ChaosModel(session, model, name)
