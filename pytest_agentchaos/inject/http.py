"""Faults on the httpx path: a respx router whose routes are the test's own.

The test declares its routes on ``chaos.http`` as on any respx router; before a request
reaches its route, the plan may fail it (``httpx.ReadTimeout``, ``httpx.ConnectError``, a 4xx/5xx
response), delay it, corrupt its JSON body or query, replay the route's previous response,
or garble the response body.

A request that matches no declared route gets no fault: it goes to the other respx routers the
test started itself, then to the real network if its host is allowed (where the socket guard
lets it through), else it is refused with a hard halt that names it and fails the test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import httpx
import respx
from respx.models import AllMockedAssertionError, PassThrough

from ..errors import NetworkBlocked
from ..faults.effects import Failure
from .call import CallState
from .network import AllowList
from .session import _MISSING, ChaosSession

if TYPE_CHECKING:
    from .scripted import ProviderEndpoint


def _payload(request: httpx.Request) -> tuple[str, dict[str, Any]]:
    """The request's arguments: its JSON object body, else its query parameters."""
    if request.content:
        try:
            body = json.loads(request.content)
        except (ValueError, UnicodeDecodeError):
            body = None
        if isinstance(body, dict):
            return "json", body
    return "params", dict(request.url.params)


def _rebuild(request: httpx.Request, where: str, payload: dict[str, Any]) -> httpx.Request:
    headers = {k: v for k, v in request.headers.items() if k.lower() != "content-length"}
    if where == "json":
        return httpx.Request(request.method, request.url, headers=headers, json=payload)
    url = request.url.copy_with(query=None).copy_merge_params(
        {k: v if isinstance(v, (str, int, float)) else json.dumps(v) for k, v in payload.items()}
    )
    return httpx.Request(request.method, url, headers=headers, content=request.content)


def _body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except (ValueError, UnicodeDecodeError):
        return response.text[:2000]


def _failure_response(failure: Failure, request: httpx.Request) -> httpx.Response:
    if failure.kind == "timeout":
        raise httpx.ReadTimeout(failure.message, request=request)
    if failure.kind == "connection":
        raise httpx.ConnectError(failure.message, request=request)
    body = failure.any_body()
    kwargs: dict[str, Any] = (
        {"text": body} if isinstance(body, str) else {"json": body} if body is not None else {}
    )
    return httpx.Response(
        failure.status or 500, headers=dict(failure.headers), request=request, **kwargs
    )


def _lost_error(request: httpx.Request) -> Callable[[Failure], BaseException]:
    """What httpx raises when a response never arrives: a read timeout, or a connection the
    server dropped before answering."""

    def build(failure: Failure) -> BaseException:
        if failure.kind == "timeout":
            return httpx.ReadTimeout(failure.message, request=request)
        return httpx.RemoteProtocolError(failure.message, request=request)

    return build


def _with_content(response: httpx.Response, content: bytes | str) -> httpx.Response:
    """``response`` with another body (its length and encoding headers dropped: the new body
    is sent as it is)."""
    dropped = {"content-length", "content-encoding"}
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in dropped]
    return httpx.Response(
        response.status_code, headers=headers, content=content, request=response.request
    )


class ChaosRouter(respx.MockRouter):
    """A respx ``MockRouter`` that applies the session's fault plan to each request."""

    def __init__(
        self, session: ChaosSession, allow: AllowList | None = None, **kwargs: Any
    ) -> None:
        kwargs.setdefault("assert_all_called", False)
        kwargs.setdefault("assert_all_mocked", True)
        super().__init__(**kwargs)
        self._chaos = session
        self._allow = allow if allow is not None else AllowList()
        #: scripted provider endpoints (``chaos.provider``): they answer before any route
        self.endpoints: list[ProviderEndpoint] = []

    def _route_target(self, request: httpx.Request) -> str | None:
        """The call's target name when a declared route matches the request, else ``None``."""
        for route in self.routes:
            pattern = route.pattern
            if pattern is None or pattern.match(request):
                if route.name:
                    return str(route.name)
                return f"{request.method} {request.url.host}{request.url.path}"
        return None

    def _others(self) -> list[respx.Router]:
        """The user's own respx routers (another run's router is not one: each refuses
        what it does not declare, so asking it would ask this one back)."""
        return [
            r
            for r in (self.Mocker.routers if self.Mocker else ())
            if r is not self and not isinstance(r, ChaosRouter)
        ]

    def _undeclared(self, request: httpx.Request) -> httpx.Response:
        """A request no declared route matches: another router's answer, the real network for
        an allowed host, or a hard halt."""
        for router in self._others():
            try:
                return router.handler(request)
            except AllMockedAssertionError:
                continue
        return self._unrouted(request)

    async def _aundeclared(self, request: httpx.Request) -> httpx.Response:
        for router in self._others():
            try:
                return await router.async_handler(request)
            except AllMockedAssertionError:
                continue
        return self._unrouted(request)

    def _unrouted(self, request: httpx.Request) -> httpx.Response:
        if self._allow.allows_host(request.url.host):
            raise PassThrough(
                f"allowed host: {request!r}",
                request=request,
                origin=None,  # type: ignore[arg-type]
            )
        url = f"{request.method} {request.url.copy_with(query=None)}"
        raise self._chaos.stop(
            NetworkBlocked(
                f"pytest-agentchaos: blocked a real HTTP request: {url} matches no route "
                "declared on chaos.http, and its host is not allowed (a chaos test may not "
                "reach the network: declare the route, or allow the host with "
                "@pytest.mark.chaos(allow_hosts=[...]) or ini chaos_allow_hosts)"
            ),
            url=url,
            via=str(request.extensions.get("agentchaos.client", "httpx")),
        )

    def _begin(self, request: httpx.Request, target: str) -> tuple[CallState, str, dict[str, Any]]:
        where, payload = _payload(request)
        args = {
            "method": request.method,
            "url": str(request.url.copy_with(query=None)),
            where: payload,
        }
        state = self._chaos.begin("http", target, payload, recorded=args)
        return state, where, payload

    def _before(
        self, state: CallState, request: httpx.Request, where: str
    ) -> tuple[httpx.Response | None, httpx.Request]:
        effect = state.effect
        assert effect is not None
        if effect.failure is not None:
            try:
                response = _failure_response(effect.failure, request)
            except httpx.HTTPError as exc:
                self._chaos.finish_error(state, exc)
                raise
            self.record(request, response=response)
            return self._finish(state, response, transform=False), request
        if effect.replay:
            previous = self._chaos.previous_output(state)
            if previous is not _MISSING:
                response = httpx.Response(
                    previous["status"],
                    headers=previous["headers"],
                    content=previous["content"],
                    request=request,
                )
                self.record(request, response=response)
                return self._finish(state, response, transform=False), request
        if effect.args is not None:
            request = _rebuild(request, where, dict(effect.args))
        return None, request

    def _replied(self, state: CallState, response: httpx.Response) -> httpx.Response:
        """The response with the effect's ``reply`` applied to its body (its status and
        headers kept): only a successful answer is quietly wrong (an error answer is recorded
        as a call that failed by itself)."""
        if response.status_code >= 400:
            return response
        state, content = self._chaos.reply(state, response.content)
        if content is response.content:
            return response
        if not isinstance(content, (bytes, str)):
            content = json.dumps(content, ensure_ascii=False)
        return _with_content(response, content)

    def _finish(
        self, state: CallState, response: httpx.Response, transform: bool = True
    ) -> httpx.Response:
        effect = state.effect
        if transform and effect is not None and effect.reply is not None:
            response = self._replied(state, response)
        if transform and effect is not None and effect.transform is not None:
            garbled = effect.transform(_body(response))
            content = garbled if isinstance(garbled, (str, bytes)) else json.dumps(garbled)
            headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
            response = httpx.Response(
                response.status_code, headers=headers, content=content, request=response.request
            )
        if response.status_code >= 400:
            self._chaos.finish_error(
                state,
                error_type="HTTPStatusError",
                message=f"HTTP {response.status_code} {response.reason_phrase}",
                status=response.status_code,
                output=_body(response),
            )
            return response
        stored = {
            "status": response.status_code,
            "headers": dict(response.headers),
            "content": response.content,
        }
        self._chaos.finish_ok(
            state, stored, transform=False, recorded=_body(response), status=response.status_code
        )
        return response

    def _lost(self, state: CallState, request: httpx.Request, response: httpx.Response) -> Any:
        """The error of a request whose response is lost (``lost_reply``), recorded."""
        self.record(request, response=response)
        return self._chaos.lose(state, _body(response), native=_lost_error(request))

    async def _alost(
        self, state: CallState, request: httpx.Request, response: httpx.Response
    ) -> Any:
        self.record(request, response=response)
        return await self._chaos.alose(state, _body(response), native=_lost_error(request))

    def handler(self, request: httpx.Request) -> httpx.Response:
        """Answer a request: a declared route's response, with the plan's fault for this call
        applied and the call recorded; an undeclared request goes on as the module doc says."""
        for endpoint in self.endpoints:
            fmt = endpoint.match(request)
            if fmt is not None:
                return endpoint.handle(request, fmt)
        target = self._route_target(request)
        if target is None:
            return self._undeclared(request)
        state, where, _ = self._begin(request, target)
        if state.effect is not None:
            self._chaos.delay(state)
            done, request = self._before(state, request, where)
            if done is not None:
                return done
        try:
            response = super().handler(request)
        except Exception as exc:
            self._chaos.finish_error(state, exc)
            raise
        if state.effect is not None and state.effect.lost is not None:
            raise self._lost(state, request, response)  # the route ran; its response is lost
        return self._finish(state, response)

    async def async_handler(self, request: httpx.Request) -> httpx.Response:
        """:meth:`handler` for async httpx clients."""
        for endpoint in self.endpoints:
            fmt = endpoint.match(request)
            if fmt is not None:
                return await endpoint.ahandle(request, fmt)
        target = self._route_target(request)
        if target is None:
            return await self._aundeclared(request)
        state, where, _ = self._begin(request, target)
        if state.effect is not None:
            await self._chaos.adelay(state)
            done, request = self._before(state, request, where)
            if done is not None:
                return done
        try:
            response = await super().async_handler(request)
        except Exception as exc:
            self._chaos.finish_error(state, exc)
            raise
        if state.effect is not None and state.effect.lost is not None:
            raise await self._alost(state, request, response)  # the route ran; it is lost
        return self._finish(state, response)
