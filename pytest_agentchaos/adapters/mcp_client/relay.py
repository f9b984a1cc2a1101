"""The chaos MCP proxy's relay: newline-delimited JSON-RPC between an MCP client and a stdio MCP
server (a child process), with each ``tools/call`` going through the run's plan by the same
seam as in-process (:class:`.session.McpSeam`).

Everything else passes through byte for byte: the handshake, ``tools/list`` (whose listing is
also read, for the tools' schemas), notifications, the server's own requests and the client's
answers to them. A call no fault touched is answered with the server's own bytes. A fault is
answered as MCP delivers it on the wire: a tool error as a result with ``isError``, a protocol
error, a timeout or a dropped connection as a JSON-RPC error response (the codes the SDK uses:
``REQUEST_TIMEOUT``, ``CONNECTION_CLOSED``), an output fault as the rewritten result. Time is
real here (the agent may be any program): a fault's hang or latency is really waited.

The relay is driven by callbacks: the client side hands it each line (:meth:`Relay.feed`) and
takes each answer (``write``); the server's output arrives as its pipe is read
(:mod:`.server_process`). A call no fault can hit is relayed within that callback, before it
is recorded, with no task and no extra turn of the event loop (a task per line cost a proxied
call more than the rest of the relay); only a call the plan may touch runs as a task.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ...errors import HardHalt
from ...inject.call import CallState
from ...inject.session import ChaosSession
from ...trace.values import Captured, captured_json
from .jsonrpc_lines import dumps, error_response, read_result
from .jsonrpc_lines import key as _key
from .results import wire_form
from .server_process import ServerProcess
from .session import McpSeam

__all__ = ["ClientSide", "Ended", "Relay", "describe"]

log = logging.getLogger(__name__)

#: How long a server may take to exit once its stdin is closed, before it is terminated.
EXIT_GRACE = 5.0
#: mcp_types.CONNECTION_CLOSED, without importing the SDK at module load
_CONNECTION_CLOSED = -32000


@dataclass
class Ended:
    """How a relayed session ended: ``reason`` in a few words, the server's exit code, and
    whether the server ended first (it crashed or quit under the client)."""

    reason: str
    server_code: int | None
    server_died: bool


class ClientSide(Protocol):
    """Where the relay writes the client's messages (one JSON-RPC message a line)."""

    def write(self, line: bytes) -> None:
        """Send one line to the client (without blocking: buffered if need be)."""


class _Upstream:
    """The server as the seam sees it: ``list_tools`` (for a call made before any listing)."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay

    async def list_tools(self, *args: Any, **kwargs: Any) -> Any:
        from mcp.types import ListToolsResult

        raw = await self.relay.request("tools/list", {})
        return ListToolsResult.model_validate(raw["result"])

    async def call_tool(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        raise NotImplementedError("the relay sends tools/call itself")


class Relay:
    """One proxied session: ``run`` the chaos session, ``command`` the server's argv."""

    def __init__(
        self,
        run: ChaosSession,
        command: Sequence[str],
        *,
        repair: Any = None,
        policy: Any = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.run = run
        self.command = list(command)
        self.env = dict(env) if env is not None else None
        self.seam = McpSeam(run, _Upstream(self), repair=repair, policy=policy)
        #: called with ``True`` when the server's stdin is full (the client side should stop
        #: reading) and with ``False`` when it has room again
        self.flow: Callable[[bool], None] | None = None
        #: the hard halt (a budget) that ended the run, if one did
        self.halt: HardHalt | None = None
        self.server = ServerProcess(
            self.command,
            self.env,
            on_line=self._from_server,
            on_end=self._server_gone,
            on_broken=lambda reason: self._end("broken", reason),
            on_full=self._server_full,
        )
        self._client: ClientSide | None = None
        self._pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._listings: set[Any] = set()  # ids of the client's tools/list requests
        self._plain_calls: dict[Any, CallState] = {}  # calls relayed as they are, by id
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._sdk: asyncio.Future[None] | None = None
        self._ended: asyncio.Future[tuple[str, str]] | None = None
        self._closed: asyncio.Event | None = None  # the client side will send no more
        self._answered: set[Any] = set()  # ids of calls the proxy answered instead of the server
        #: no fault can touch a call, nothing repairs one, no budget can stop one
        self._untouched = not run.plan.active("tool") and repair is None and not run.budgets

    # -- running -------------------------------------------------------------------------

    async def start(self, client: ClientSide) -> None:
        """Start the server; from now on :meth:`feed` takes the client's lines and ``client``
        gets the answers. Raises ``OSError`` (``FileNotFoundError``...) if it cannot start."""
        loop = asyncio.get_running_loop()
        self._client = client
        self._ended = loop.create_future()
        self._closed = asyncio.Event()
        await self.server.start()
        # the SDK's types take seconds to import: they load while the server starts, and
        # only a tool call or a listing waits for them (the handshake goes through now)
        self._sdk = asyncio.ensure_future(asyncio.to_thread(_load_sdk))

    def _server_full(self, full: bool) -> None:
        """The server's stdin is full (or has room again): so says the client side."""
        if self.flow is not None:
            self.flow(full)

    async def serve(self, client: ClientSide) -> Ended:
        """Start the server and relay until the client closes its side (:meth:`close`), the
        server ends or a hard halt ends the run: returns how it ended."""
        await self.start(client)
        return await self.wait()

    async def wait(self) -> Ended:
        """Relay until the session ends (see :meth:`serve`); the server is stopped after."""
        assert self._ended is not None
        server = self.server
        try:
            why, reason = await self._ended
            if why == "halt":  # a hard halt (a budget) ended the run: so ends the session
                await self._settle()
                return Ended(reason, await server.stop(EXIT_GRACE), False)
            if why == "stop":
                for task in list(self._tasks):
                    task.cancel()
                return Ended(reason, await server.stop(EXIT_GRACE), False)
            if why == "broken":  # the server broke the protocol: it is ended
                await server.kill(EXIT_GRACE)
                await self._settle()
                return Ended(reason, server.returncode, True)
            if why == "server":  # the server ended under the client
                code = await server.wait(EXIT_GRACE)
                if code is None:  # it closed its stdout but lives on: it is ended
                    await server.kill(EXIT_GRACE)
                    code = server.returncode
                await self._settle()
                return Ended(f"the MCP server exited with code {code}", code, True)
            await self._settle()  # the client is done: let the answers in flight go out
            return Ended(reason, await server.stop(EXIT_GRACE), False)
        finally:
            for task in list(self._tasks):
                task.cancel()
            await self.kill()

    def stop(self, reason: str) -> None:
        """End the session now (the proxy was asked to stop): calls in flight are abandoned,
        the server is stopped. Also while the session is already ending (the client closed
        its side and the calls in flight are settling, an injected delay among them): a
        client's SDK that closes the pipe, then sends SIGTERM, then SIGKILL a few seconds
        later (``mcp``'s ``stdio_client``) must not lose the trace to a wait."""
        self._end("stop", reason)
        for task in list(self._tasks):
            task.cancel()

    def close(self, reason: str = "the client closed the connection") -> None:
        """The client side will send no more: the session ends once its calls are answered."""
        if self._closed is not None:
            self._closed.set()
        self._end("client", reason)

    async def kill(self) -> None:
        """End the server process if it still runs (and reap it): nothing is left behind."""
        await self.server.kill(EXIT_GRACE)

    def _end(self, why: str, reason: str) -> None:
        if self._ended is not None and not self._ended.done():
            self._ended.set_result((why, reason))

    async def _settle(self) -> None:
        """Wait for the calls in flight to answer (a server gone fails them at once)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- the client's lines ----------------------------------------------------------------

    def feed(self, line: bytes) -> None:
        """One line from the client (a JSON-RPC message and its newline)."""
        assert self._closed is not None
        if self._closed.is_set() or self._ended is None or self._ended.done():
            return
        if self._untouched:  # nothing can change or stop a call: the server gets it at once,
            self._to_server(line)  # the trace records it while the server works
            self._read_client(line, forwarded=True)
        else:
            self._read_client(line, forwarded=False)

    def _read_client(self, line: bytes, *, forwarded: bool) -> None:
        """Read a line of the client's: record a tool call and note a listing; relay the line
        unless it was (``forwarded``), or a call the plan may touch runs as a task."""
        message = _read_line(line)
        if type(message) is not dict:  # not ours to judge: the server answers it
            if not forwarded:
                self._to_server(line)
            return
        method = message.get("method")
        if method == "tools/call" and "id" in message and type(message.get("params")) is dict:
            try:
                plain = self._plain(message)
            except HardHalt as halt:
                if forwarded:  # the server's answer is not the client's any more
                    self._answered.add(_key(message["id"]))
                self._stop(message["id"], halt)
                return
            if forwarded:
                return
            if plain:
                self._to_server(line)
            else:
                self._spawn(self._call(message, line))
            return
        if method == "tools/list":
            self._listings.add(_key(message.get("id")))
        if not forwarded:
            self._to_server(line)

    def _plain(self, message: dict[str, Any]) -> bool:
        """A call no fault can hit and nothing repairs: recorded, then relayed as it is (its
        answer too, see :meth:`_from_server`); ``False`` for any other call."""
        params = message["params"]
        name = params.get("name")
        run = self.run
        if (
            type(name) is not str
            or self.seam.repair is not None
            or (run.plan.active("tool") and run.plan.candidates("tool", name))
        ):
            return False
        arguments = params.get("arguments")
        state = run.begin("tool", name, arguments if type(arguments) is dict else {})
        self._plain_calls[_key(message["id"])] = state
        return True

    def _finish_plain(
        self, state: CallState, message: Mapping[str, Any], size: int | None = None
    ) -> None:
        """Record the answer of a plain call (see :meth:`_plain`) from its JSON-RPC message;
        ``size``: the message was read as strict JSON data whose JSON text is at most that many
        characters (its result, a part of it, is then recorded as read, see
        :class:`~pytest_agentchaos.trace.values.Captured`)."""
        run = self.run
        error = message.get("error")
        result = message.get("result")
        shown = result if size is None else Captured(result, size)
        if isinstance(error, Mapping):
            run.finish_error(state, error_type="MCPError", message=str(error.get("message")))
        elif isinstance(result, Mapping) and result.get("isError"):
            text = "\n".join(
                str(b.get("text", "")) for b in result.get("content") or () if isinstance(b, dict)
            )
            run.finish_error(state, error_type="ToolError", message=text, output=shown)
        else:
            run.finish_ok(state, result, transform=False, recorded=shown)

    # -- the server's lines ----------------------------------------------------------------

    def _from_server(self, line: bytes) -> None:
        if not (self._plain_calls or self._pending or self._listings or self._answered):
            self._to_client(line)  # nothing waits for an answer: nothing to read
            return
        if not (self._pending or self._answered):  # the line goes out as it is, at once;
            self._to_client(line)  # the trace records it while the client reads it
            self._read_server(line, forwarded=True)
        else:
            self._read_server(line, forwarded=False)

    def _read_server(self, line: bytes, *, forwarded: bool) -> None:
        """Read a line of the server's: the answer of a call (recorded), of a request of the
        proxy's own (taken) or of a listing (read for the schemas); relay it unless it was
        (``forwarded``) or it is not the client's."""
        captured = captured_json(line)  # strict JSON data: an answer is recorded as read
        if captured is not None:
            message, size = captured.value, captured.size
        else:  # NaN, an int too long to read...: read as before, recorded by the trace's rules
            message, size = _read_line(line), None
        if type(message) is dict and "id" in message and "method" not in message:
            key = _key(message["id"])
            plain = self._plain_calls.pop(key, None)
            if plain is not None:
                try:
                    self._finish_plain(plain, message, size)
                except HardHalt as halt:  # a budget (max_seconds) ran out with this answer
                    self.halt = self.halt or halt
                    self._end("halt", f"the run was halted: {self.halt}")
            elif key in self._answered:  # the proxy answered it already (a hard halt)
                self._answered.discard(key)
                return
            elif (waiting := self._pending.pop(key, None)) is not None:
                if not waiting.done():
                    message["__raw__"] = line
                    waiting.set_result(message)
                return
            elif key in self._listings:
                self._listings.discard(key)
                sdk = self._sdk
                if sdk is None or sdk.done():
                    self._absorb(message)
                else:  # read once the SDK's types have loaded: a tool call made after this
                    self._spawn(self._absorb_later(message, sdk))  # listing waits for them too
        if not forwarded:
            self._to_client(line)

    async def _absorb_later(self, message: Mapping[str, Any], sdk: asyncio.Future[None]) -> None:
        await sdk
        self._absorb(message)

    def _server_gone(self) -> None:
        """The server's stdout closed: every call waiting for it ends as a closed connection,
        and so does the session."""
        plain, self._plain_calls = self._plain_calls, {}
        closed = {"code": _CONNECTION_CLOSED, "message": "Connection closed"}
        for key, state in plain.items():
            with contextlib.suppress(HardHalt):
                self._finish_plain(state, {"error": closed})
            request_id = key if type(key) is int else json.loads(key)
            self._to_client(dumps({"jsonrpc": "2.0", "id": request_id, "error": closed}))
        pending, self._pending = self._pending, {}
        for waiting in pending.values():
            if not waiting.done():
                waiting.set_result({"__closed__": True})
        self._end("server", "")

    def _absorb(self, message: Mapping[str, Any]) -> None:
        from mcp.types import ListToolsResult

        try:
            self.seam._absorb(ListToolsResult.model_validate(message.get("result")))
        except Exception as exc:  # a listing the SDK cannot read: calls go on without schemas
            self.run.note(f"MCP proxy: an unreadable tools/list result ({type(exc).__name__})")

    # -- one tools/call through the plan ----------------------------------------------------

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _call(self, message: dict[str, Any], line: bytes) -> None:
        """Answer one ``tools/call`` through the plan."""
        if self._sdk is not None:
            await self._sdk
        from mcp.shared.exceptions import MCPError

        params = message["params"]
        name = params.get("name")
        request_id = message["id"]
        if not isinstance(name, str):  # not a call the seam can name: the server answers
            self._to_server(line)
            return
        arguments = params.get("arguments")
        mapping: Mapping[str, Any] = arguments if isinstance(arguments, Mapping) else {}
        raws: dict[int, bytes] = {}

        async def invoke(given: Mapping[str, Any]) -> Any:
            if given is mapping:
                sent = line
            else:  # corrupted (or repaired) arguments: the request is written again
                sent = dumps({**message, "params": {**params, "arguments": dict(given)}})
            reply = await self._send(request_id, sent)
            if reply.get("__closed__"):
                raise MCPError(code=_CONNECTION_CLOSED, message="Connection closed")
            raw = reply.pop("__raw__")
            error = reply.get("error")
            if isinstance(error, Mapping):
                exc = MCPError(
                    code=int(error.get("code", -32603)),
                    message=str(error.get("message", "")),
                    data=error.get("data"),
                )
                raws[id(exc)] = raw
                raise exc
            result = read_result(reply.get("result"))
            raws[id(result)] = raw
            return result

        try:
            core = self.seam._calls.get(name) or await self.seam._core(name)
            result = await core.call_mcp(mapping, invoke, None)
        except MCPError as exc:
            raw = raws.get(id(exc))
            self._to_client(raw if raw is not None else error_response(request_id, exc))
            return
        except HardHalt as halt:
            self._stop(request_id, halt)
            return
        except Exception as exc:  # a halt, a declined repair: the client gets an error
            log.debug("tools/call %r ended by %r", name, exc)
            self._to_client(error_response(request_id, exc))
            return
        raw = raws.get(id(result))
        if raw is not None:  # untouched: the server's own bytes
            self._to_client(raw)
            return
        answer = {"jsonrpc": "2.0", "id": request_id, "result": wire_form(result)}
        self._to_client(dumps(answer))

    def _stop(self, request_id: Any, halt: HardHalt) -> None:
        """A hard halt ended the run: the call gets an error saying so, the session ends."""
        self.halt = self.halt or halt
        self._to_client(error_response(request_id, halt))
        self._end("halt", f"the run was halted: {self.halt}")

    async def _send(self, request_id: Any, line: bytes) -> dict[str, Any]:
        """Send a request line to the server; its response (or ``__closed__``)."""
        if not self.server.writable:
            return {"__closed__": True}
        waiting: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[_key(request_id)] = waiting
        self._to_server(line)
        return await waiting

    async def request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """A request of the proxy's own (a listing the seam needs), with an id of its own."""
        request_id = f"agentchaos-{next(self._ids)}"
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)}
        reply = await self._send(request_id, dumps(message))
        if "result" not in reply:
            raise RuntimeError(f"{method} failed: {reply.get('error') or 'connection closed'}")
        return reply

    # -- writing -----------------------------------------------------------------------------

    def _to_server(self, line: bytes) -> None:
        self.server.write(line if line.endswith(b"\n") else line + b"\n")

    def _to_client(self, line: bytes) -> None:
        if not line.endswith(b"\n"):
            line += b"\n"
        client = self._client
        assert client is not None
        client.write(line)

    def pause_server(self, paused: bool) -> None:
        """Stop (``True``) or resume reading the server's output: the client side calls it
        when its own writes back up (flow control)."""
        self.server.pause(paused)


def _read_line(line: bytes) -> Any:
    """The JSON value of a line (``None`` if it is not JSON): strict JSON as the trace reads
    it, the cheap way; anything else (``NaN``, UTF-16...) as ``json.loads`` reads it."""
    captured = captured_json(line)
    if captured is not None:
        return captured.value
    try:
        return json.loads(line)
    except ValueError:
        return None


def _load_sdk() -> None:
    import mcp.shared.exceptions  # noqa: F401
    import mcp.types  # noqa: F401


def describe(
    ended: Ended,
    run: ChaosSession,
    counts: Callable[[], Mapping[str, int]],
    sessions: int | None = None,
) -> str:
    """The summary line of a proxied run (``sessions``: how many MCP sessions it served, said
    when it can serve more than one)."""
    faults = counts()
    listed = ", ".join(f"{k} {v}" for k, v in sorted(faults.items())) or "none"
    calls = run.tool_calls
    served = "" if sessions is None else f"{sessions} MCP session{'s' * (sessions != 1)}, "
    return (
        f"{ended.reason}; {served}{calls} tool call{'s' * (calls != 1)}, faults injected: {listed}"
    )
