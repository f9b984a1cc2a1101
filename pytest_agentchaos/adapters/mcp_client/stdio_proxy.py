"""The chaos MCP proxy on this process's stdin and stdout (``agentchaos-mcp`` without
``--http``): the agent starts the proxy where it would start its stdio MCP server and talks to
it over the pipes; :class:`.relay.Relay` does the rest."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from typing import Any

from .jsonrpc_lines import Lines, small_reads
from .relay import Ended, Relay

__all__ = ["run_stdio"]


def run_stdio(relay: Relay) -> Ended:
    """The relay on this process's stdin and stdout, until the session ends; returns how it
    ended. Raises ``OSError`` if the server cannot start."""

    async def serve() -> Ended:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, relay.stop, "the proxy was asked to stop")
        try:
            await relay.start(await _stdout_writer(loop, relay))
            await _read_stdin(loop, relay)
            return await relay.wait()
        finally:
            await relay.kill()

    return asyncio.run(serve())


class _ClientIn(asyncio.Protocol):
    """This process's stdin (the client's messages), cut into lines, into the relay."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.lines = Lines(relay.feed)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        small_reads(transport)

        def flow(full: bool) -> None:
            (transport.pause_reading if full else transport.resume_reading)()

        self.relay.flow = flow

    def data_received(self, data: bytes) -> None:
        if not self.lines.feed(data):
            self.relay.close("the client wrote a line longer than 64 MiB")

    def eof_received(self) -> bool:
        self.lines.end()
        self.relay.close()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.relay.close()


async def _read_stdin(loop: asyncio.AbstractEventLoop, relay: Relay) -> None:
    """Feed this process's stdin to the relay (a pipe; a file or terminal by a thread)."""
    protocol = _ClientIn(relay)
    try:
        await loop.connect_read_pipe(lambda: protocol, os.fdopen(os.dup(0), "rb", 0))
        return
    except (ValueError, OSError):  # not a pipe: read it in a thread
        pass

    def pump() -> None:
        for data in iter(lambda: os.read(0, 1 << 16), b""):
            loop.call_soon_threadsafe(protocol.data_received, data)
        loop.call_soon_threadsafe(protocol.eof_received)

    threading.Thread(target=pump, name="agentchaos-mcp-stdin", daemon=True).start()


class _ClientOut(asyncio.Protocol):
    """This process's stdout (a pipe): writes never block the relay; when the client reads
    slower than the server answers, the server's output waits (flow control)."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.transport: asyncio.WriteTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        self.transport = transport

    def pause_writing(self) -> None:
        self.relay.pause_server(True)

    def resume_writing(self) -> None:
        self.relay.pause_server(False)

    def connection_lost(self, exc: Exception | None) -> None:
        self.relay.close()  # the client is gone: its side of the session has ended

    def write(self, line: bytes) -> None:
        transport = self.transport
        if transport is not None and not transport.is_closing():
            transport.write(line)


class _BlockingOut:
    """This process's stdout when it is no pipe (a file, a terminal): plain writes."""

    def __init__(self) -> None:
        self._out = sys.stdout.buffer

    def write(self, line: bytes) -> None:
        try:
            self._out.write(line)
            self._out.flush()
        except (BrokenPipeError, ValueError):  # the reader is gone
            pass


async def _stdout_writer(loop: asyncio.AbstractEventLoop, relay: Relay) -> Any:
    protocol = _ClientOut(relay)
    try:
        await loop.connect_write_pipe(lambda: protocol, os.fdopen(os.dup(1), "wb", 0))
    except (ValueError, OSError):
        return _BlockingOut()
    return protocol
