"""``agentchaos-mcp``: a chaos proxy in front of a stdio MCP server, for agents in any language.

    agentchaos-mcp --profile flaky --seed 7 --trace run.json -- python -m mcp_server_time
    agentchaos-mcp --http --port 8931 --profile flaky -- python -m mcp_server_time

Without ``--http`` the agent starts this command where it would start the server and talks to
it over stdio (:mod:`.stdio_proxy`); with ``--http`` the proxy serves MCP's streamable HTTP on
a loopback address (:mod:`.http_proxy`: it says its URL on stderr first) and starts a server
for each session, until it is asked to stop or no request has come for ``--idle-timeout``
seconds. Every ``tools/call`` goes through the profile's faults with the seed (see
:mod:`.relay`); the run's trace is written to ``--trace``, the plugin's report files to
``--report-dir`` and ``--html``, and a summary line goes to stderr when the run ends.
``--chaos-replay FILE`` runs the decisions of an earlier proxy trace again.

Exit status: 0 when the client ended the session (over HTTP: when the proxy was asked to stop
or stopped after its idle timeout),
1 when a server ended under its client (it crashed: the summary says with which exit code), a
hard budget of the profile halted the run or the proxy could not start a server or listen,
2 for a bad command line or profile (one line on stderr), 130 when interrupted (stdio).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...clock.clock import MAX_SECONDS

__all__ = ["PROG", "TEST_ID", "main"]

PROG = "agentchaos-mcp"
#: The test id of a proxy run's trace (what ``--chaos-replay`` finds it by).
TEST_ID = "agentchaos-mcp"
#: The first line of ``--http`` mode on stderr: the proxy's URL follows it.
SERVING = "serving MCP over streamable HTTP at "


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Chaos proxy for a stdio MCP server: applies a chaos profile to its tool "
        "calls, writes the run's trace, ends with a summary.",
        usage=f"{PROG} [--http [--host H] [--port P] [--idle-timeout S]] [--profile NAME] "
        "[--seed N] [--trace FILE] [--report-dir DIR] [--html FILE] -- <server command ...>",
    )
    parser.add_argument("--profile", help="chaos profile name (default: none)")
    parser.add_argument("--seed", type=int, help="seed of the fault plan (default: 0)")
    parser.add_argument("--trace", type=Path, help="write the run's trace (JSON) to this file")
    parser.add_argument(
        "--report-dir",
        type=Path,
        help="write the report files the plugin writes for a test: DIR/traces/ and "
        "DIR/index.json (default: none)",
    )
    parser.add_argument("--html", type=Path, help="write the HTML report to this file")
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
    parser.add_argument(
        "--http",
        action="store_true",
        help="serve MCP over streamable HTTP on a loopback address (default: over stdio)",
    )
    parser.add_argument(
        "--host", help="with --http: a loopback address to listen on (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, help="with --http: the port to listen on (default: 0, any free one)"
    )
    from .http_proxy import IDLE_TIMEOUT

    parser.add_argument(
        "--idle-timeout",
        type=float,
        metavar="SECONDS",
        help="with --http: stop after this many seconds without an open HTTP request (a "
        "client that went away without ending its session); 0: never "
        f"(default: {IDLE_TIMEOUT:g})",
    )
    parser.add_argument(
        "--until-stdin-closes",
        action="store_true",
        help="with --http: stop when stdin closes (a parent holding the pipe ends the proxy by "
        "exiting, even when it is killed)",
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
    problem = _http_problem(args)
    if problem is not None:
        return _refuse(problem)
    try:
        chaos = _chaos(args, command)
    except Exception as exc:  # a bad profile, seed or replay file: one line, named
        return _refuse(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    try:
        if args.http:
            outcome = _serve_http(args, chaos, command)
        else:
            outcome = _serve_stdio(args, chaos, command)
    except _CannotStart as exc:
        chaos.close()
        return _refuse(str(exc), status=1)
    ended, halted, sessions = outcome
    return _finish(args, chaos, command, ended, halted, sessions)


class _CannotStart(Exception):
    """The proxy cannot start a server or listen: one line, exit status 1."""


def _http_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with ``--http``, ``--host`` and ``--port``, if anything."""
    if not args.http:
        if (
            args.host is not None
            or args.port is not None
            or args.idle_timeout is not None
            or args.until_stdin_closes
        ):
            return "--host, --port, --idle-timeout and --until-stdin-closes go with --http"
        return None
    from .http_proxy import loopback_host

    if args.host is not None and loopback_host(args.host) is None:
        return (
            f"--host {args.host}: not a loopback address; the proxy serves this machine only "
            "(127.0.0.1, ::1 or localhost)"
        )
    if args.port is not None and not 0 <= args.port <= 65535:
        return f"--port {args.port}: not a port number (0 to 65535; 0: any free one)"
    idle = args.idle_timeout
    if idle is not None and not (0 <= idle <= MAX_SECONDS):  # NaN too
        return f"--idle-timeout {idle:g}: not a number of seconds (0 to {MAX_SECONDS:g}; 0: never)"
    return None


def _serve_stdio(args: argparse.Namespace, chaos: Any, command: list[str]) -> Any:
    from .relay import Relay
    from .stdio_proxy import run_stdio

    relay = Relay(chaos.session, command, repair=True if args.repair else None)
    try:
        ended = run_stdio(relay)
    except OSError as exc:
        raise _CannotStart(f"cannot start the MCP server: {exc}") from None
    except KeyboardInterrupt:
        ended = None
    return ended, relay.halt, None


def _serve_http(args: argparse.Namespace, chaos: Any, command: list[str]) -> Any:
    """Serve until asked to stop (or a server dies, or a budget halts the run)."""
    from .http_proxy import IDLE_TIMEOUT, PATH, HttpProxy, IdleWatch, listen, loopback_host, serve
    from .relay import Ended

    if shutil.which(command[0]) is None:
        raise _CannotStart(f"cannot start the MCP server: {command[0]}: no such command")
    host = loopback_host(args.host or "127.0.0.1")
    assert host is not None
    try:
        sock = listen(host, args.port or 0)
    except OSError as exc:
        raise _CannotStart(f"cannot listen on {host}:{args.port}: {exc.strerror or exc}") from None
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    first: list[tuple[Any, Any]] = []
    seconds = IDLE_TIMEOUT if args.idle_timeout is None else args.idle_timeout
    idled: list[bool] = []

    async def run() -> Any:
        stopped = asyncio.Event()

        def on_end(ended: Any, relay: Any) -> None:
            if ended.server_died or relay.halt is not None:
                first.append((ended, relay.halt))
                stopped.set()

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, stopped.set)
        if args.until_stdin_closes:
            _on_stdin_end(lambda: loop.call_soon_threadsafe(stopped.set))
        # what serving needs is loaded before the URL is said and the idle time counts (the
        # socket listens already: a client that comes meanwhile waits in its backlog)
        import mcp.server.streamable_http  # noqa: F401
        import uvicorn  # noqa: F401

        _say(f"{SERVING}http://{shown}:{port}{PATH}")
        idle = IdleWatch(seconds) if seconds > 0 else None
        proxy = HttpProxy(
            chaos.session,
            command,
            relay_options={"repair": True if args.repair else None},
            on_end=on_end,
            idle=idle,
        )
        watching = None
        if idle is not None:

            async def watch(idle: IdleWatch) -> None:
                await idle.expired()
                idled.append(True)
                stopped.set()

            watching = asyncio.ensure_future(watch(idle))
        try:
            await serve(proxy, sock, stopped)
        finally:
            if watching is not None:
                watching.cancel()
        return proxy.opened

    try:
        sessions = asyncio.run(run())
    finally:
        sock.close()
    if first:
        ended, halted = first[0]
        return ended, halted, sessions
    if idled:
        reason = f"no HTTP request for {seconds:g} s (--idle-timeout): the proxy stopped"
        return Ended(reason, None, False), None, sessions
    return Ended("the proxy was asked to stop", None, False), None, sessions


def _on_stdin_end(then: Any) -> None:
    """Call ``then`` (from a thread) once this process's stdin reaches its end."""

    def read() -> None:
        with contextlib.suppress(OSError):
            while os.read(0, 1 << 16):
                pass
        with contextlib.suppress(RuntimeError):  # the loop has closed already
            then()

    threading.Thread(target=read, name="agentchaos-mcp-stdin", daemon=True).start()


def _finish(
    args: argparse.Namespace,
    chaos: Any,
    command: list[str],
    ended: Any,
    halted: Any,
    sessions: int | None,
) -> int:
    """End the run, write the trace and the report files, say the summary: the exit status."""
    from .relay import describe

    session = chaos.session
    if ended is None:
        session.end("interrupted")
        summary, outcome = "interrupted", "interrupted"
    else:
        status = None if halted is not None else "crashed" if ended.server_died else "completed"
        session.end(status, reason=ended.reason)  # None: "halted"
        summary = describe(ended, session, chaos.trace.fault_counts, sessions)
        outcome = "passed" if status == "completed" else "failed"
    errors: list[str] = []
    try:
        if args.trace is not None:
            try:
                chaos.trace.write(args.trace)
                summary += f"; trace: {args.trace}"
            except OSError as exc:
                errors.append(f"cannot write {args.trace}: {exc.strerror or exc}")
        if args.report_dir is not None or args.html is not None:
            from .reports import write_reports

            said, failed = write_reports(
                chaos.trace,
                outcome=outcome,
                replay=_replay_argv(args, command),
                report_dir=args.report_dir,
                html=args.html,
                trace_path=args.trace if args.trace is not None and not errors else None,
            )
            summary += "".join(f"; {line}" for line in said)
            errors.extend(failed)
    finally:
        chaos.close()
    for line in errors:
        _say(f"error: {line}")
    _say(summary)
    if ended is None:
        return 130
    if ended.server_died or halted is not None or errors:
        return 1
    return 0


def _replay_argv(args: argparse.Namespace, command: list[str]) -> list[str]:
    """The command that replays this run, but for ``--chaos-replay TRACE`` (after its first
    word)."""
    argv = [PROG]
    if args.profile_dir is not None:
        argv += ["--profile-dir", str(args.profile_dir)]
    if args.repair:
        argv.append("--repair")
    if args.http:
        argv.append("--http")
    return [*argv, "--", *command]


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


def run() -> None:
    """The console script's entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()
