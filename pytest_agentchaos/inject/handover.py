"""A framework seam hands a model call to the scripted provider endpoint that answers it.

An agent run under a framework seam (``chaos_agent``, ``chaos_model``) whose model sends
through a provider SDK to a scripted endpoint of the same run (``chaos.provider``) would be
seen twice: by the framework seam, then on the wire. That is one call, and the lowest seam is
the faithful one (the provider's own error response, the SDK's own retry loop). So before a
call, the framework seam asks :func:`endpoint_for` whether an endpoint of the run answers the
model's URL; if one does, it neither records nor faults the call, and runs it inside
:func:`handed_over`, which tells the endpoint (:func:`caller`) whose call it is: every wire
attempt of it is then recorded once, faulted once, under the framework seam's target and
agent, so each agent of a multi-agent app stays its own target.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .scripted import ProviderEndpoint
    from .session import ChaosSession

__all__ = [
    "Caller",
    "caller",
    "endpoint_for",
    "handed_over",
    "handed_over_aiter",
]

T = TypeVar("T")


@dataclasses.dataclass(frozen=True, slots=True)
class Caller:
    """Whose model call the wire sees: the run's session, the target its calls are filed
    under and the agent the trace names."""

    session: ChaosSession
    target: str
    agent: str | None
    #: one entry per wire attempt an endpoint answered for this call
    reached: list[int] = dataclasses.field(default_factory=list)


_CALLER: contextvars.ContextVar[Caller | None] = contextvars.ContextVar(
    "agentchaos_model_caller", default=None
)


def endpoint_for(session: ChaosSession, url: object) -> ProviderEndpoint | None:
    """The scripted endpoint of ``session``'s run that answers a POST to ``url`` (the full URL a
    model sends its requests to), or ``None`` (no endpoint: the framework seam keeps the call).
    A closed run has none: the framework seam then says the run has ended."""
    endpoints = getattr(session, "provider_endpoints", None)
    if not endpoints or session._closed or not isinstance(url, str) or not url:
        return None
    for endpoint in endpoints:
        if endpoint.answers(url):
            return endpoint  # type: ignore[no-any-return]
    return None


@contextlib.contextmanager
def handed_over(session: ChaosSession, target: str, agent: str | None) -> Iterator[None]:
    """Inside the block, the model calls that reach an endpoint of ``session``'s run are filed
    under ``target`` and ``agent``. Enter it around the code that sends the request only (not
    around a stream's consumer): what runs in the block is the call."""
    handed = Caller(session, target, agent)
    with _as(handed):
        yield
    _check_reached(handed)


@contextlib.contextmanager
def _as(handed: Caller) -> Iterator[None]:
    token = _CALLER.set(handed)
    try:
        yield
    finally:
        _CALLER.reset(token)


def _check_reached(handed: Caller) -> None:
    """Say so when a call that ended well never reached the endpoint (a client with a
    transport of its own): nothing recorded or faulted it."""
    if not handed.reached:
        handed.session.note(
            f"a model call of {handed.target!r} was left to the run's scripted provider "
            "endpoint, which never saw it (its client has a transport of its own?): it is not "
            "in the trace and no fault applied to it"
        )


def caller(session: ChaosSession) -> Caller | None:
    """The framework seam's caller of the request being answered, when it belongs to
    ``session``'s run."""
    found: Any = _CALLER.get()
    return found if found is not None and found.session is session else None


async def handed_over_aiter(
    session: ChaosSession, target: str, agent: str | None, stream: AsyncIterator[T]
) -> AsyncIterator[T]:
    """``stream`` (a streamed model call's events) with each event pulled as
    :func:`handed_over` runs a call, and the consumer's code between events outside it
    (closed when the consumer stops early)."""
    handed = Caller(session, target, agent)
    try:
        while True:
            with _as(handed):
                try:
                    item = await stream.__anext__()
                except StopAsyncIteration:
                    break
            yield item
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
    _check_reached(handed)
