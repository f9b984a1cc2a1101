"""``httpx2`` requests through the run's router, as ``httpx`` requests go.

The ``openai`` (3.x) and ``anthropic`` (2.x) SDKs, and through them pydantic-ai and the Agents
SDK, send through ``httpx2``, a fork of httpx that respx does not patch. So for the length of a
run, the default transports of ``httpx2`` (``HTTPTransport.handle_request`` and
``AsyncHTTPTransport.handle_async_request``) hand each request to ``chaos.http``, the run's
respx router, as an ``httpx.Request``; its answer comes back as the ``httpx2.Response`` (a
stream stays a stream) and its transport errors as the ``httpx2`` exceptions of the same
names (``httpx2.ReadTimeout``, ``httpx2.ConnectError`` ...), which is what the SDKs map to
their own errors. So a route declared on ``chaos.http``, a scripted provider endpoint, the
plan's faults and the refusal of undeclared hosts apply to both clients alike. A request the
router passes through (an allowed host) goes on to the real ``httpx2`` transport.

A client built on a transport of its own (``httpx2.MockTransport``, an ASGI app) is left
alone. ``httpx2`` is patched when a run starts if it is imported by then (the usual case: the
agent's module imported it at collection), when ``chaos.http`` is first used if it is imported
by then, and when ``chaos.provider`` is first used (which imports it). An ``httpx2`` imported
later in the run, with no provider declared, meets the socket guard as any other client.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..patching import Patches

if TYPE_CHECKING:
    import httpx

    from .chaos import Chaos

__all__ = ["intercept_httpx2"]

#: What a converted request carries so that a refusal names the client that sent it.
CLIENT_KEY = "agentchaos.client"


def intercept_httpx2(chaos: Chaos, *, load: bool = False) -> bool:
    """Route ``httpx2``'s default transports through ``chaos.http`` until the run closes.

    ``load``: import ``httpx2`` if it is installed but not imported yet. Returns whether the
    transports are routed (``False``: ``httpx2`` is not there). Idempotent per run.
    """
    if chaos._httpx2_routed:
        return True
    module = sys.modules.get("httpx2")
    if module is None and load:
        try:
            import httpx2 as module
        except ImportError:
            return False
    if module is None:
        return False
    sync_cls = getattr(module, "HTTPTransport", None)
    async_cls = getattr(module, "AsyncHTTPTransport", None)
    if sync_cls is None or async_cls is None:  # pragma: no cover - another httpx2
        return False
    patches = Patches()
    chaos._httpx2_routed = True
    chaos.session.add_cleanup(patches.undo)
    patches.set(sync_cls, "handle_request", _sync(chaos, module, sync_cls.handle_request))
    patches.set(
        async_cls, "handle_async_request", _async(chaos, module, async_cls.handle_async_request)
    )
    return True


def _to_httpx(request: Any, content: bytes) -> httpx.Request:
    import httpx

    return httpx.Request(
        request.method,
        str(request.url),
        headers=list(request.headers.raw),
        content=content,
        extensions={CLIENT_KEY: "httpx2", **_timeout(request)},
    )


def _timeout(request: Any) -> dict[str, Any]:
    """The client's timeouts (``{"connect", "read", "write", "pool"}``), which an endpoint that
    delays its answer honours."""
    timeout = request.extensions.get("timeout")
    return {"timeout": dict(timeout)} if isinstance(timeout, dict) else {}


def _error(module: ModuleType, exc: BaseException, request: Any) -> BaseException:
    """The ``httpx2`` exception of the same name as httpx's ``exc`` (the SDKs catch those)."""
    cls = getattr(module, type(exc).__name__, None)
    if not (isinstance(cls, type) and issubclass(cls, module.TransportError)):
        cls = module.TransportError
    try:
        return cls(str(exc), request=request)  # type: ignore[no-any-return]
    except TypeError:  # pragma: no cover - a class with another signature
        return module.TransportError(str(exc), request=request)  # type: ignore[no-any-return]


def _sync(chaos: Chaos, module: ModuleType, real: Callable[..., Any]) -> Callable[..., Any]:
    import httpx
    from respx.models import PassThrough

    class Stream(module.SyncByteStream):  # type: ignore[name-defined,misc]
        """The router's response body, read as ``httpx2`` reads a transport's."""

        def __init__(self, response: httpx.Response, request: Any) -> None:
            self._response, self._request = response, request

        def __iter__(self) -> Iterator[bytes]:
            try:
                yield from self._response.stream  # type: ignore[misc]
            except httpx.TransportError as exc:  # a stream cut by a fault
                raise _error(module, exc, self._request) from exc

        def close(self) -> None:
            self._response.close()

    def handle_request(self: Any, request: Any) -> Any:
        if chaos.session._closed:  # a client used after its run: the real transport
            return real(self, request)
        converted = _to_httpx(request, request.read())
        try:
            response = chaos.http.handler(converted)
        except PassThrough:
            return real(self, request)
        except httpx.TransportError as exc:
            raise _error(module, exc, request) from exc
        return module.Response(
            response.status_code,
            headers=list(response.headers.raw),
            stream=Stream(response, request),
            extensions={
                "http_version": b"HTTP/1.1",
                "reason_phrase": response.reason_phrase.encode(),
            },
        )

    return handle_request


def _async(chaos: Chaos, module: ModuleType, real: Callable[..., Any]) -> Callable[..., Any]:
    import httpx
    from respx.models import PassThrough

    class Stream(module.AsyncByteStream):  # type: ignore[name-defined,misc]
        """The router's response body, read as ``httpx2`` reads an async transport's."""

        def __init__(self, response: httpx.Response, request: Any) -> None:
            self._response, self._request = response, request

        async def __aiter__(self) -> AsyncIterator[bytes]:
            try:
                async for chunk in self._response.stream:  # type: ignore[union-attr]
                    yield chunk
            except httpx.TransportError as exc:
                raise _error(module, exc, self._request) from exc

        async def aclose(self) -> None:
            await self._response.aclose()

    async def handle_async_request(self: Any, request: Any) -> Any:
        if chaos.session._closed:
            return await real(self, request)
        converted = _to_httpx(request, await request.aread())
        try:
            response = await chaos.http.async_handler(converted)
        except PassThrough:
            return await real(self, request)
        except httpx.TransportError as exc:
            raise _error(module, exc, request) from exc
        return module.Response(
            response.status_code,
            headers=list(response.headers.raw),
            stream=Stream(response, request),
            extensions={
                "http_version": b"HTTP/1.1",
                "reason_phrase": response.reason_phrase.encode(),
            },
        )

    return handle_async_request
