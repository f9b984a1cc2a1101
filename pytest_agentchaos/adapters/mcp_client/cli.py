"""``agentchaos-mcp``: a chaos proxy in front of a stdio MCP server, for agents in any language.

    agentchaos-mcp --profile flaky --seed 7 --trace run.json -- python -m mcp_server_time

The agent starts this command where it would start the server; every ``tools/call`` goes
through the profile's faults with the seed (see :mod:`.relay`), the run's trace is written to
``--trace`` and a summary line goes to stderr when the session ends. ``--chaos-replay FILE``
runs the decisions of an earlier proxy trace again. Exit status: 0 when the client ended the
session, 1 when the server ended it (it crashed: the summary says with which exit code) or a
hard budget of the profile halted the run, 2 for a bad command line or profile (one line on
stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["PROG", "TEST_ID", "main"]

PROG = "agentchaos-mcp"
#: The test id of a proxy run's trace (what ``--chaos-replay`` finds it by).
TEST_ID = "agentchaos-mcp"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Chaos proxy for a stdio MCP server: applies a chaos profile to its tool "
        "calls, writes the run's trace, ends with a summary.",
        usage=f"{PROG} --profile NAME --seed N [--trace FILE] -- <server command ...>",
    )
    parser.add_argument("--profile", help="chaos profile name (default: none)")
    parser.add_argument("--seed", type=int, help="seed of the fault plan (default: 0)")
    parser.add_argument("--trace", type=Path, help="write the run's trace (JSON) to this file")
    parser.add_argument(
        "--profile-dir", type=Path, help="a directory of your own profiles (searched first)"
    )
    parser.add_argument(
        "--chaos-replay", type=Path, help="replay the decisions of a trace this proxy wrote"
    )
    parser.add_argument(
        "--repair",
        action="store_true",
        help="repair each call's arguments against the tool's listed inputSchema",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the MCP server's command")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the proxy; returns the exit status."""
    args = _parser().parse_args(argv)
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        return _refuse("no MCP server command: put it after --")
    try:
        chaos = _chaos(args, command)
    except Exception as exc:  # a bad profile, seed or replay file: one line, named
        return _refuse(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    from .relay import Relay, describe

    relay = Relay(chaos.session, command, repair=True if args.repair else None)
    try:
        ended = _run(relay)
    except FileNotFoundError as exc:
        chaos.close()
        return _refuse(f"cannot start the MCP server: {exc}", status=1)
    except KeyboardInterrupt:
        ended = None
    session = chaos.session
    if ended is None:
        session.end("interrupted")
        summary = "interrupted"
    else:
        status = None if relay.halt is not None else "crashed" if ended.server_died else "completed"
        session.end(status, reason=ended.reason)  # None: "halted"
        summary = describe(ended, session, chaos.trace.fault_counts)
    try:
        if args.trace is not None:
            chaos.trace.write(args.trace)
            summary += f"; trace: {args.trace}"
    finally:
        chaos.close()
    _say(summary)
    if ended is None:
        return 130
    return 1 if ended.server_died or relay.halt is not None else 0


def _refuse(message: str, status: int = 2) -> int:
    _say(f"error: {message}")
    return status


def _say(line: str) -> None:
    """One line of the console script's own, on stderr (stdout carries the protocol)."""
    sys.stderr.write(f"{PROG}: {line}\n")
    sys.stderr.flush()


def _chaos(args: argparse.Namespace, command: list[str]) -> Any:
    """The run: the profile (or a replayed trace's decisions) on the real clock."""
    from ...clock.clock import RealClock
    from ...inject.chaos import Chaos
    from ...profiles import ProfileRegistry

    registry = ProfileRegistry.default(args.profile_dir)
    schedule = None
    seed = args.seed
    name = args.profile
    if args.chaos_replay is not None:
        from ...harness.replay import load_source

        source = load_source(str(args.chaos_replay), Path.cwd())
        if TEST_ID not in source:
            raise ValueError(f"--chaos-replay {args.chaos_replay}: not a trace of {PROG}")
        recorded = source.recorded(TEST_ID)
        schedule = recorded.schedule
        seed = recorded.seed if seed is None else seed
        name = recorded.profile if name is None else name
    profile = registry.get(name or "none")
    chaos = Chaos.create(
        profile,
        seed=seed or 0,
        clock=RealClock(),
        test_id=TEST_ID,
        schedule=schedule,
    )
    chaos.trace.meta["mcp_proxy"] = {"command": command}
    return chaos


def _run(relay: Any) -> Any:
    """The relay on this process's stdin and stdout, until the session ends."""

    async def serve() -> Any:
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

    def __init__(self, relay: Any) -> None:
        from .relay import Lines

        self.relay = relay
        self.lines = Lines(relay.feed)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        from .relay import small_reads

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


async def _read_stdin(loop: asyncio.AbstractEventLoop, relay: Any) -> None:
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

    def __init__(self, relay: Any) -> None:
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


async def _stdout_writer(loop: asyncio.AbstractEventLoop, relay: Any) -> Any:
    protocol = _ClientOut(relay)
    try:
        await loop.connect_write_pipe(lambda: protocol, os.fdopen(os.dup(1), "wb", 0))
    except (ValueError, OSError):
        return _BlockingOut()
    return protocol


def run() -> None:
    """The console script's entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()
