"""The chaos MCP proxy's relay: newline-delimited JSON-RPC between an MCP client (on this
process's stdin and stdout) and a stdio MCP server (a child process), with each ``tools/call``
going through the run's plan by the same seam as in-process (:class:`.session.McpSeam`).

Everything else passes through byte for byte: the handshake, ``tools/list`` (whose listing is
also read, for the tools' schemas), notifications, the server's own requests and the client's
answers to them. A call no fault touched is answered with the server's own bytes. A fault is
answered as MCP delivers it on the wire: a tool error as a result with ``isError``, a protocol
error, a timeout or a dropped connection as a JSON-RPC error response (the codes the SDK uses:
``REQUEST_TIMEOUT``, ``CONNECTION_CLOSED``), an output fault as the rewritten result. Time is
real here (the agent may be any program): a fault's hang or latency is really waited.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import HardHalt
from ...inject.call import CallState
from ...inject.session import ChaosSession
from .results import wire_form
from .session import McpSeam

__all__ = ["Ended", "Relay"]

log = logging.getLogger(__name__)

#: How long a server may take to exit once its stdin is closed, before it is terminated.
EXIT_GRACE = 5.0
#: The longest line (one JSON-RPC message) read from either side.
LINE_LIMIT = 64 * 1024 * 1024


@dataclass
class Ended:
    """How a relayed session ended: ``reason`` in a few words, the server's exit code, and
    whether the server ended first (it crashed or quit under the client)."""

    reason: str
    server_code: int | None
    server_died: bool


class _Opaque:
    """A ``tools/call`` result the SDK's types do not read: passed on as the server sent it."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def model_dump(self, **_: Any) -> Any:
        return self.data


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
        self.process: asyncio.subprocess.Process | None = None
        self._write_lock = asyncio.Lock()
        self._pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._listings: set[Any] = set()  # ids of the client's tools/list requests
        self._plain_calls: dict[Any, CallState] = {}  # calls relayed as they are, by id
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._out: asyncio.StreamWriter | None = None
        self._server_in: asyncio.StreamWriter | None = None
        self._sdk: asyncio.Future[None] | None = None
        self._halted = asyncio.Event()
        #: the hard halt (a budget) that ended the run, if one did
        self.halt: HardHalt | None = None
        self.client_lines = 0

    # -- running -------------------------------------------------------------------------

    async def serve(self, client_in: asyncio.StreamReader, client_out: Any) -> Ended:
        """Relay until the client closes its side (or the server ends): returns how it ended.
        ``client_out``: a writer with ``write`` and ``drain`` (the client's stdin)."""
        self._out = client_out
        self.process = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=self.env,
            limit=LINE_LIMIT,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._server_in = self.process.stdin
        # the SDK's types take seconds to import: they load while the server starts, and
        # only a tool call or a listing waits for them (the handshake goes through now)
        self._sdk = asyncio.ensure_future(asyncio.to_thread(_load_sdk))
        from_server = asyncio.ensure_future(self._from_server(self.process.stdout))
        from_client = asyncio.ensure_future(self._from_client(client_in))
        halted = asyncio.ensure_future(self._halted.wait())
        try:
            done, _ = await asyncio.wait(
                {from_server, from_client, halted}, return_when=asyncio.FIRST_COMPLETED
            )
            if halted in done:  # a hard halt (a budget) ended the run: so ends the session
                from_client.cancel()
                await self._settle()
                stopped = await self._stop_server()
                from_server.cancel()
                return Ended(f"the run was halted: {self.halt}", stopped, False)
            if from_server in done:  # the server's stdout closed: it ended under the client
                code = await self.process.wait()
                from_client.cancel()
                await self._settle()
                return Ended(f"the MCP server exited with code {code}", code, True)
            await self._settle()  # the client is done: let the answers in flight go out
            stopped = await self._stop_server()
            from_server.cancel()
            return Ended("the client closed the connection", stopped, False)
        finally:
            for task in (from_server, from_client, halted, *self._tasks):
                task.cancel()
            await self.kill()

    async def kill(self) -> None:
        """End the server process if it still runs (and reap it): nothing is left behind."""
        process = self.process
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        with contextlib.suppress(Exception):
            await process.wait()

    async def _stop_server(self) -> int | None:
        """Close the server's stdin and wait for it to exit; terminate it after a grace."""
        process = self.process
        assert process is not None
        if self._server_in is not None:
            with contextlib.suppress(Exception):
                self._server_in.close()
        try:
            return await asyncio.wait_for(process.wait(), EXIT_GRACE)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                return await asyncio.wait_for(process.wait(), EXIT_GRACE)
            except asyncio.TimeoutError:
                await self.kill()
                return process.returncode

    async def _settle(self) -> None:
        """Wait for the calls in flight to answer (a server gone fails them at once)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- the two directions ----------------------------------------------------------------

    async def _from_client(self, reader: asyncio.StreamReader) -> None:
        while True:
            line = await reader.readline()
            if not line:
                return
            self.client_lines += 1
            message = _parse(line)
            if (
                isinstance(message, dict)
                and message.get("method") == "tools/call"
                and "id" in message
                and isinstance(message.get("params"), dict)
            ):
                try:
                    plain = self._plain(message, line)
                except HardHalt as halt:
                    await self._stop(message["id"], halt)
                    return
                if not plain:
                    self._spawn(self._call(message, line))
                else:
                    await self._to_server(line)
                continue
            if isinstance(message, dict) and message.get("method") == "tools/list":
                self._listings.add(_key(message.get("id")))
            await self._to_server(line)

    def _plain(self, message: dict[str, Any], line: bytes) -> bool:
        """A call no fault can hit and nothing repairs: recorded, then relayed as it is (its
        answer too, see :meth:`_from_server`); ``False`` for any other call."""
        params = message["params"]
        name = params.get("name")
        run = self.run
        if (
            not isinstance(name, str)
            or self.seam.repair is not None
            or (run.plan.active("tool") and run.plan.candidates("tool", name))
        ):
            return False
        arguments = params.get("arguments")
        state = run.begin("tool", name, arguments if isinstance(arguments, dict) else {})
        self._plain_calls[_key(message["id"])] = state
        return True

    def _finish_plain(self, state: CallState, message: Mapping[str, Any]) -> None:
        """Record the answer of a plain call (see :meth:`_plain`) from its JSON-RPC message."""
        run = self.run
        error = message.get("error")
        result = message.get("result")
        if isinstance(error, Mapping):
            run.finish_error(state, error_type="MCPError", message=str(error.get("message")))
        elif isinstance(result, Mapping) and result.get("isError"):
            text = "\n".join(
                str(b.get("text", "")) for b in result.get("content") or () if isinstance(b, dict)
            )
            run.finish_error(state, error_type="ToolError", message=text, output=result)
        else:
            run.finish_ok(state, result, transform=False)

    async def _from_server(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                message = _parse(line)
                if isinstance(message, dict) and "method" not in message and "id" in message:
                    key = _key(message["id"])
                    plain = self._plain_calls.pop(key, None)
                    if plain is not None:
                        self._finish_plain(plain, message)
                        await self._to_client(line)
                        continue
                    waiting = self._pending.pop(key, None)
                    if waiting is not None:
                        if not waiting.done():
                            waiting.set_result({**message, "__raw__": line})
                        continue
                    if key in self._listings:
                        self._listings.discard(key)
                        await self._sdk_loaded()
                        self._absorb(message)
                await self._to_client(line)
        finally:
            self._fail_pending()

    async def _sdk_loaded(self) -> None:
        if self._sdk is not None:
            await self._sdk

    def _fail_pending(self) -> None:
        """The server is gone: every call waiting for it ends as a closed connection."""
        plain, self._plain_calls = self._plain_calls, {}
        for key, state in plain.items():
            closed = {"code": _CONNECTION_CLOSED, "message": "Connection closed"}
            self._finish_plain(state, {"error": closed})
            answer = {"jsonrpc": "2.0", "id": json.loads(key), "error": closed}
            self._spawn(self._to_client(_dumps(answer)))
        pending, self._pending = self._pending, {}
        for waiting in pending.values():
            if not waiting.done():
                waiting.set_result({"__closed__": True})

    def _absorb(self, message: Mapping[str, Any]) -> None:
        from mcp.types import ListToolsResult

        try:
            self.seam._absorb(ListToolsResult.model_validate(message.get("result")))
        except Exception as exc:  # a listing the SDK cannot read: calls go on without schemas
            self.run.note(f"MCP proxy: an unreadable tools/list result ({type(exc).__name__})")

    # -- one tools/call ----------------------------------------------------------------------

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _call(self, message: dict[str, Any], line: bytes) -> None:
        """Answer one ``tools/call`` through the plan."""
        await self._sdk_loaded()
        from mcp.shared.exceptions import MCPError

        params = message["params"]
        name = params.get("name")
        request_id = message["id"]
        if not isinstance(name, str):  # not a call the seam can name: the server answers
            await self._to_server(line)
            return
        arguments = params.get("arguments")
        mapping: Mapping[str, Any] = arguments if isinstance(arguments, Mapping) else {}
        raws: dict[int, bytes] = {}

        async def invoke(given: Mapping[str, Any]) -> Any:
            if given is mapping:
                sent = line
            else:  # corrupted (or repaired) arguments: the request is written again
                sent = _dumps({**message, "params": {**params, "arguments": dict(given)}})
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
            result = _result(reply.get("result"))
            raws[id(result)] = raw
            return result

        try:
            core = self.seam._calls.get(name) or await self.seam._core(name)
            result = await core.call_mcp(mapping, invoke, None)
        except MCPError as exc:
            raw = raws.get(id(exc))
            await self._to_client(raw if raw is not None else _error(request_id, exc))
            return
        except HardHalt as halt:
            await self._stop(request_id, halt)
            return
        except Exception as exc:  # a halt, a declined repair: the client gets an error
            log.debug("tools/call %r ended by %r", name, exc)
            await self._to_client(_error(request_id, exc))
            return
        raw = raws.get(id(result))
        if raw is not None:  # untouched: the server's own bytes
            await self._to_client(raw)
            return
        answer = {"jsonrpc": "2.0", "id": request_id, "result": wire_form(result)}
        await self._to_client(_dumps(answer))

    async def _stop(self, request_id: Any, halt: HardHalt) -> None:
        """A hard halt ended the run: the call gets an error saying so, the session ends."""
        self.halt = self.halt or halt
        await self._to_client(_error(request_id, halt))
        self._halted.set()

    async def _send(self, request_id: Any, line: bytes) -> dict[str, Any]:
        """Send a request line to the server; its response (or ``__closed__``)."""
        waiting: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        process = self.process
        if process is None or process.returncode is not None:
            return {"__closed__": True}
        self._pending[_key(request_id)] = waiting
        try:
            await self._to_server(line)
        except (ConnectionError, BrokenPipeError):
            self._pending.pop(_key(request_id), None)
            return {"__closed__": True}
        return await waiting

    async def request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """A request of the proxy's own (a listing the seam needs), with an id of its own."""
        request_id = f"agentchaos-{next(self._ids)}"
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)}
        reply = await self._send(request_id, _dumps(message))
        if "result" not in reply:
            raise RuntimeError(f"{method} failed: {reply.get('error') or 'connection closed'}")
        return reply

    # -- writing -----------------------------------------------------------------------------

    async def _to_server(self, line: bytes) -> None:
        writer = self._server_in
        if writer is None:
            return
        writer.write(line if line.endswith(b"\n") else line + b"\n")
        await writer.drain()

    async def _to_client(self, line: bytes) -> None:
        out = self._out
        assert out is not None
        async with self._write_lock:
            out.write(line if line.endswith(b"\n") else line + b"\n")
            await out.drain()


#: mcp_types.CONNECTION_CLOSED, without importing the SDK at module load
_CONNECTION_CLOSED = -32000


def _load_sdk() -> None:
    import mcp.shared.exceptions  # noqa: F401
    import mcp.types  # noqa: F401


def _parse(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _key(request_id: Any) -> Any:
    """A request id as a dict key (JSON-RPC ids are strings or numbers)."""
    return json.dumps(request_id)


def _dumps(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _result(data: Any) -> Any:
    """A ``tools/call`` result read with the SDK's types (a ``CallToolResult``)."""
    from mcp.types import CallToolResult

    try:
        return CallToolResult.model_validate(data)
    except Exception:  # another shape (a task, input required): passed on as it came
        return _Opaque(data)


def _error(request_id: Any, exc: BaseException) -> bytes:
    """The JSON-RPC error response for ``exc`` (an ``MCPError``'s own code and message)."""
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    if isinstance(code, int):
        body: dict[str, Any] = {"code": code, "message": str(getattr(error, "message", exc))}
        data = getattr(error, "data", None)
        if data is not None:
            body["data"] = data
    else:
        body = {"code": -32603, "message": f"{type(exc).__name__}: {exc}"}
    return _dumps({"jsonrpc": "2.0", "id": request_id, "error": body})


def describe(ended: Ended, run: ChaosSession, counts: Callable[[], Mapping[str, int]]) -> str:
    """The summary line of a proxied session."""
    faults = counts()
    listed = ", ".join(f"{k} {v}" for k, v in sorted(faults.items())) or "none"
    calls = run.tool_calls
    return f"{ended.reason}; {calls} tool call{'s' * (calls != 1)}, faults injected: {listed}"
