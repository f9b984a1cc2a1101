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
    "handed_over_iter",
]

T = TypeVar("T")


@dataclasses.dataclass(frozen=True, slots=True)
class Caller:
    """Whose model call the wire sees: the run's session, the target its calls are filed
    under and the agent the trace names."""

    session: ChaosSession
    target: str
    agent: str | None


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
    token = _CALLER.set(Caller(session, target, agent))
    try:
        yield
    finally:
        _CALLER.reset(token)


def caller(session: ChaosSession) -> Caller | None:
    """The framework seam's caller of the request being answered, when it belongs to
    ``session``'s run."""
    found: Any = _CALLER.get()
    return found if found is not None and found.session is session else None


def handed_over_iter(
    session: ChaosSession, target: str, agent: str | None, stream: Iterator[T]
) -> Iterator[T]:
    """``stream`` (a streamed model call's chunks) with each chunk pulled inside
    :func:`handed_over`, and the consumer's code between chunks outside it (closed when the
    consumer stops early)."""
    try:
        while True:
            with handed_over(session, target, agent):
                try:
                    item = next(stream)
                except StopIteration:
                    return
            yield item
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()


async def handed_over_aiter(
    session: ChaosSession, target: str, agent: str | None, stream: AsyncIterator[T]
) -> AsyncIterator[T]:
    """:func:`handed_over_iter` for an async stream (closed when the consumer stops early)."""
    try:
        while True:
            with handed_over(session, target, agent):
                try:
                    item = await stream.__anext__()
                except StopAsyncIteration:
                    return
            yield item
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
