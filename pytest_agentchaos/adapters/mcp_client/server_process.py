"""The stdio MCP server behind the chaos proxy: a child process whose stdin takes the relayed
lines and whose stdout is cut into lines for the relay, on the event loop.

Its pipes are asyncio's pipe transports, connected to the process directly: a subprocess
transport (``loop.subprocess_exec``) hands each chunk of output over with ``call_soon``, one
more turn of the event loop for every answer a proxied call waits for. Its exit is watched by
a pidfd where the system has them, else by a thread that waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .jsonrpc_lines import LINE_LIMIT, Lines, small_reads

__all__ = ["ServerProcess"]


class _Output(asyncio.Protocol):
    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.lines: Lines | None = Lines(server.on_line)

    def data_received(self, data: bytes) -> None:
        lines = self.lines
        if lines is not None and not lines.feed(data):  # no MCP message is that long
            self.lines = None
            self.server.on_broken(f"the MCP server wrote a line longer than {LINE_LIMIT >> 20} MiB")

    def eof_received(self) -> bool:
        if self.lines is not None:
            self.lines.end()
            self.lines = None
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof_received()
        self.server.on_end()


class _Input(asyncio.Protocol):
    def __init__(self, server: ServerProcess) -> None:
        self.server = server

    def pause_writing(self) -> None:  # its stdin is full
        self.server.on_full(True)

    def resume_writing(self) -> None:
        self.server.on_full(False)


class ServerProcess:
    """``command`` run with ``env``: ``on_line`` gets each line it writes, ``on_end`` is called
    when its stdout closes, ``on_broken`` when it writes a line past :data:`LINE_LIMIT`,
    ``on_full`` with ``True`` when its stdin is full and ``False`` when it has room again."""

    def __init__(
        self,
        command: Sequence[str],
        env: Mapping[str, str] | None,
        *,
        on_line: Callable[[bytes], None],
        on_end: Callable[[], None],
        on_broken: Callable[[str], None],
        on_full: Callable[[bool], None],
    ) -> None:
        self.command = list(command)
        self.env = dict(env) if env is not None else None
        self.on_line = on_line
        self.on_end = on_end
        self.on_broken = on_broken
        self.on_full = on_full
        self.process: subprocess.Popen[bytes] | None = None
        #: the exit status, once it has exited (and been reaped)
        self.exited: asyncio.Future[int] | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._stdout: asyncio.ReadTransport | None = None

    async def start(self) -> None:
        """Start it; raises ``OSError`` (``FileNotFoundError``...) if it cannot."""
        loop = asyncio.get_running_loop()
        process = subprocess.Popen(
            self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=self.env, bufsize=0
        )
        self.process = process
        self.exited = _exit_of(loop, process)
        stdout, _ = await loop.connect_read_pipe(lambda: _Output(self), process.stdout)
        stdin, _ = await loop.connect_write_pipe(lambda: _Input(self), process.stdin)
        small_reads(stdout)
        assert isinstance(stdout, asyncio.ReadTransport)
        assert isinstance(stdin, asyncio.WriteTransport)
        self._stdout, self._stdin = stdout, stdin

    @property
    def returncode(self) -> int | None:
        return self.process.returncode if self.process is not None else None

    @property
    def writable(self) -> bool:
        """Whether its stdin still takes lines."""
        stdin = self._stdin
        return stdin is not None and not stdin.is_closing() and self.returncode is None

    def write(self, line: bytes) -> None:
        stdin = self._stdin
        if stdin is not None and not stdin.is_closing():
            stdin.write(line)

    def pause(self, paused: bool) -> None:
        """Stop (``True``) or resume reading its output (flow control)."""
        stdout = self._stdout
        if stdout is not None and not stdout.is_closing():
            (stdout.pause_reading if paused else stdout.resume_reading)()

    async def wait(self, timeout: float) -> int | None:
        """Its exit status, waited for at most ``timeout`` seconds (``None``: still running)."""
        if self.exited is None:
            return None
        with contextlib.suppress(asyncio.TimeoutError):
            return await asyncio.wait_for(asyncio.shield(self.exited), timeout)
        return None

    async def stop(self, grace: float) -> int | None:
        """Close its stdin and wait for it to exit; terminate it after ``grace`` seconds, kill
        it after as many again. Its exit status."""
        if self._stdin is not None:
            self._stdin.close()
        code = await self.wait(grace)
        if code is None and self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
            code = await self.wait(grace)
        if code is None:
            await self.kill(grace)
        return self.returncode

    async def kill(self, grace: float) -> None:
        """End it if it still runs (and reap it); close its pipes: nothing is left behind."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await self.wait(grace)
        for transport in (self._stdin, self._stdout):
            if transport is not None:
                transport.close()


def _exit_of(loop: asyncio.AbstractEventLoop, process: subprocess.Popen[bytes]) -> Any:
    """A future of ``process``'s exit status, set when it has exited and been reaped."""
    done: asyncio.Future[int] = loop.create_future()

    def settle(code: int) -> None:
        if not done.done():
            done.set_result(code)

    pidfd_open = getattr(os, "pidfd_open", None)
    pidfd = None
    if pidfd_open is not None:
        with contextlib.suppress(OSError):
            pidfd = pidfd_open(process.pid)
    if pidfd is not None:
        watched = pidfd

        def exited() -> None:
            loop.remove_reader(watched)
            os.close(watched)
            settle(process.wait())

        loop.add_reader(watched, exited)
        return done

    def wait() -> None:
        code = process.wait()
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            loop.call_soon_threadsafe(settle, code)

    threading.Thread(target=wait, name=f"agentchaos-mcp-wait-{process.pid}", daemon=True).start()
    return done
