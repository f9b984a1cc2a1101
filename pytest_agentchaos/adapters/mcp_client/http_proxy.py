"""``agentchaos-mcp --http``: the chaos proxy serving MCP's streamable HTTP transport on
loopback, in front of a stdio MCP server.

Each MCP session a client opens (an ``initialize`` POST without a session id) gets a server
process and a :class:`.relay.Relay` of its own, all in the one chaos run (one plan, one trace):
the same faults, decisions and replay as the stdio proxy. The SDK's own server transport
(``StreamableHTTPServerTransport``) speaks HTTP, with its checks of the Host and Origin
headers against DNS rebinding; uvicorn serves it on a loopback address only. The proxy speaks
the protocol versions of the ``initialize`` handshake (those its sessions relay).

A session ends when its client ends it (``DELETE``); the proxy ends when it is asked to stop
(SIGTERM, SIGINT, SIGHUP), when no HTTP request has been open for its idle timeout (a client
that went away without ending its session: :class:`IdleWatch`), when a session's server dies
(as the stdio proxy does, it reports it and exits non-zero) or when a hard budget halts the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import socket
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from uuid import uuid4

from ...clock.clock import Clock, RealClock
from ...inject.session import ChaosSession
from .relay import Ended, Relay

__all__ = ["IDLE_TIMEOUT", "MAX_SESSIONS", "PATH", "HttpProxy", "IdleWatch", "loopback_host"]

log = logging.getLogger(__name__)

#: The endpoint's path (the SDK's default).
PATH = "/mcp"
#: Sessions open at once (each is a server process); one more is answered 503.
MAX_SESSIONS = 16
#: Seconds without an open HTTP request after which the proxy stops (``--idle-timeout``).
IDLE_TIMEOUT = 300.0
#: Lines waiting for a session's client before its server's output is paused.
_QUEUE_HIGH, _QUEUE_LOW = 64, 16


def loopback_host(host: str) -> str | None:
    """The address to bind for ``host`` if it is a loopback one (``localhost``: 127.0.0.1),
    else ``None``."""
    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
    return str(address) if address.is_loopback else None


class IdleWatch:
    """When the proxy has served no request for ``seconds``: every HTTP request (an open
    stream of server messages too) counts from its start to its end; :meth:`expired` returns
    once none has been open for ``seconds`` on ``clock``. A client that holds a connection is
    never idle; one that went away (its process ended, the sockets closed) without ending its
    session leaves the proxy idle."""

    def __init__(self, seconds: float, clock: Clock | None = None) -> None:
        self.seconds = seconds
        self.clock = clock or RealClock()
        self.open = 0
        self.last = self.clock.now()
        self._ended = asyncio.Event()

    def begin(self) -> None:
        """A request started."""
        self.open += 1
        self.last = self.clock.now()

    def end(self) -> None:
        """A request ended (its response sent, or its client gone)."""
        self.open -= 1
        self.last = self.clock.now()
        self._ended.set()

    async def expired(self) -> None:
        """Return once no request has been open for ``seconds``."""
        while True:
            if self.open > 0:
                self._ended.clear()
                await self._ended.wait()
                continue
            left = self.last + self.seconds - self.clock.now()
            if left <= 0:
                return
            await self.clock.asleep(left)  # a request may have come meanwhile: look again


class _ToClient:
    """A session's answers, from its relay's lines into the SDK transport's write stream, in
    order; the server's output pauses while too many wait."""

    def __init__(self, relay: Relay, write_stream: Any) -> None:
        from mcp.shared.message import SessionMessage
        from mcp_types import jsonrpc_message_adapter

        self.relay = relay
        self.stream = write_stream
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.paused = False
        self._message = SessionMessage
        self._read = jsonrpc_message_adapter.validate_json

    def write(self, line: bytes) -> None:
        try:
            message = self._read(line)
        except ValueError:  # a line no HTTP client could read: the stdio client would choke
            self.relay.run.note(
                f"MCP proxy: the server wrote a line that is no JSON-RPC: {line[:80]!r}"
            )
            return
        self.queue.put_nowait(self._message(message))
        if not self.paused and self.queue.qsize() > _QUEUE_HIGH:
            self.paused = True
            self.relay.pause_server(True)

    async def pump(self) -> None:
        while True:
            message = await self.queue.get()
            await self.stream.send(message)
            if self.paused and self.queue.qsize() < _QUEUE_LOW:
                self.paused = False
                self.relay.pause_server(False)


class _Session:
    """One MCP session: the SDK's transport in front, a relay and its server behind."""

    def __init__(self, proxy: HttpProxy, session_id: str) -> None:
        from mcp.server.streamable_http import StreamableHTTPServerTransport
        from mcp.server.transport_security import TransportSecuritySettings

        self.id = session_id
        self.transport = StreamableHTTPServerTransport(
            mcp_session_id=session_id,
            security_settings=TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
            ),
        )
        self.proxy = proxy
        self.relay = Relay(proxy.run, proxy.command, **proxy.relay_options)
        self.ready = asyncio.Event()
        self.failed: BaseException | None = None
        self.ended: Ended | None = None

    async def run(self) -> Ended:
        """Connect the transport's streams to the relay until the session ends."""
        try:
            async with self.transport.connect() as (read_stream, write_stream):
                out = _ToClient(self.relay, write_stream)
                try:
                    await self.relay.start(out)
                finally:
                    self.ready.set()
                if self.proxy.stopping:  # asked to stop while this server started
                    self.relay.stop("the proxy was asked to stop")
                pumps = [
                    asyncio.ensure_future(out.pump()),
                    asyncio.ensure_future(self._from_client(read_stream)),
                ]
                try:
                    self.ended = await self.relay.wait()
                finally:
                    for pump in pumps:
                        pump.cancel()
                    await asyncio.gather(*pumps, return_exceptions=True)
                    await self.transport.terminate()
        except BaseException as exc:
            self.failed = self.failed or exc
            self.ready.set()
            raise
        finally:
            await self.relay.kill()
        assert self.ended is not None
        return self.ended

    async def _from_client(self, read_stream: Any) -> None:
        try:
            async for item in read_stream:
                if isinstance(item, Exception):  # the transport's own complaint: answered
                    log.debug("MCP session %s: %r", self.id, item)
                    continue
                line = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                self.relay.feed(line.encode() + b"\n")
        except Exception as exc:  # the streams closed under us: the session is over
            log.debug("MCP session %s: %r", self.id, exc)
        self.relay.close("the client ended the session")


class HttpProxy:
    """The ASGI application of ``agentchaos-mcp --http``: sessions by their id."""

    def __init__(
        self,
        run: ChaosSession,
        command: Sequence[str],
        *,
        relay_options: Mapping[str, Any] | None = None,
        on_end: Callable[[Ended, Relay], None] | None = None,
        idle: IdleWatch | None = None,
    ) -> None:
        self.run = run
        #: counts the requests, for the idle timeout
        self.idle = idle
        self.command = list(command)
        self.relay_options = dict(relay_options or {})
        self.on_end = on_end
        self.sessions: dict[str, _Session] = {}
        #: how many sessions were opened (their ``initialize`` answered)
        self.opened = 0
        self.stopping = False
        self._tasks: set[asyncio.Task[Any]] = set()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if self.idle is None:
            await self._handle(scope, receive, send)
            return
        self.idle.begin()
        try:
            await self._handle(scope, receive, send)
        finally:
            self.idle.end()

    async def _handle(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("path") != PATH:
            await _error(send, 404, f"Not Found: the MCP endpoint is {PATH}")
            return
        session_id = _header(scope, b"mcp-session-id")
        if session_id is not None:
            session = self.sessions.get(session_id)
            if session is None:
                await _error(send, 404, "Not Found: Invalid or expired session ID")
                return
            await session.transport.handle_request(scope, receive, send)
            return
        await self._open(scope, receive, send)

    async def _open(self, scope: Any, receive: Any, send: Any) -> None:
        """A request without a session: only an ``initialize`` POST opens one (and starts a
        server); anything else is refused before any process starts."""
        if scope.get("method") != "POST":
            await _error(send, 400, "Bad Request: Missing session ID")
            return
        body, receive = await _read_body(receive)
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        if not isinstance(message, dict) or message.get("method") != "initialize":
            await _error(send, 400, "Bad Request: Missing session ID")
            return
        if self.stopping:
            await _error(send, 503, "Service Unavailable: the proxy is stopping")
            return
        if len(self.sessions) >= MAX_SESSIONS:
            await _error(send, 503, f"Too many open sessions (at most {MAX_SESSIONS})")
            return
        session = _Session(self, uuid4().hex)
        self.sessions[session.id] = session
        task = asyncio.ensure_future(session.run())
        self._tasks.add(task)
        task.add_done_callback(lambda t: self._closed(session, t))
        await session.ready.wait()
        if session.failed is not None:
            await _error(send, 500, f"cannot start the MCP server: {session.failed}")
            return
        status: list[int] = []

        async def watched(message: Any) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        try:
            await session.transport.handle_request(scope, receive, watched)
        finally:
            if not status or status[0] >= 400:  # refused (a Host the transport does not
                session.relay.stop("the session was refused")  # serve): nothing opened
            else:
                self.opened += 1

    def _closed(self, session: _Session, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        self.sessions.pop(session.id, None)
        if task.cancelled() or task.exception() is not None:
            if not task.cancelled():
                log.debug("MCP session %s failed: %r", session.id, task.exception())
            return
        ended = task.result()
        if self.on_end is not None and ended is not None:
            self.on_end(ended, session.relay)

    async def stop(self, reason: str) -> None:
        """End every session (their servers stopped) and wait for them."""
        self.stopping = True
        for session in list(self.sessions.values()):
            session.relay.stop(reason)
        tasks = list(self._tasks)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


async def _read_body(receive: Any) -> tuple[bytes, Any]:
    """The request's whole body, and a ``receive`` that gives it again."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = b"".join(chunks)
    given = False

    async def again() -> Any:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, again


def _header(scope: Any, name: bytes) -> str | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


async def _error(send: Any, status: int, message: str) -> None:
    """A JSON-RPC error body (no request id) with an HTTP status, as the SDK's transport
    answers a request it refuses."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host`` (a loopback address) and ``port`` (0: any free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


async def serve(proxy: HttpProxy, sock: socket.socket, stopped: asyncio.Event) -> None:
    """Serve ``proxy`` on ``sock`` with uvicorn until ``stopped`` is set; then every session
    is ended before this returns."""
    import uvicorn
    from mcp.server.transport_security import (
        DEFAULT_MAX_REQUEST_BODY_SIZE,
        RequestBodyLimitMiddleware,
    )

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Any:  # the proxy handles its signals itself
            yield

    app = RequestBodyLimitMiddleware(proxy, DEFAULT_MAX_REQUEST_BODY_SIZE)
    config = uvicorn.Config(
        app,
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=5,
    )
    server = Server(config)
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    waiting = asyncio.ensure_future(stopped.wait())
    try:
        await asyncio.wait({serving, waiting}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting.cancel()
        await proxy.stop("the proxy was asked to stop")
        server.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(serving, 10)
