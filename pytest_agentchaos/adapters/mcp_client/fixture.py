"""What the ``chaos_mcp_proxy`` fixture hands a test: the command that starts the chaos MCP
proxy (``agentchaos-mcp``) in front of a stdio MCP server, with the test's profile and seed, for
an agent in any language to start where it would start the server; or the proxy started
already, serving MCP over streamable HTTP on loopback, for an agent that takes a URL; and the
proxy's trace once the agent is done. Free of pytest (the plugin's fixture builds one per test
and stops what it started at the test's end)."""

from __future__ import annotations

import io
import itertools
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...trace.trace import Trace

__all__ = ["McpProxy", "ProxyFactory", "ServedProxy"]

#: How long a proxy may take to start serving.
START_TIMEOUT = 60.0

#: How a test starts the proxy: this Python, the proxy's module (the console script may not be
#: on PATH in a virtualenv that is not activated).
PROXY_MODULE = (sys.executable, "-m", "pytest_agentchaos.adapters.mcp_client.cli")


@dataclass(frozen=True)
class McpProxy:
    """One proxy command: ``argv`` (give it to the agent as its MCP server's command) and
    ``trace_path``, where the proxy writes its trace when the session ends."""

    argv: tuple[str, ...]
    trace_path: Path

    def trace(self, timeout: float = 5.0) -> Trace:
        """The proxy's trace, written when the agent's MCP session ends (its client closes the
        proxy's stdin; the proxy then answers what is in flight and exits). Waits up to
        ``timeout`` seconds for it, then raises ``FileNotFoundError`` saying why it may be
        missing."""
        # real seconds: a chaos test's clock is virtual (frozen time, virtual sleeps), and the
        # proxy is another process
        deadline = _real_now() + timeout
        pause = threading.Event()
        while not self.trace_path.exists():
            if _real_now() >= deadline:
                raise FileNotFoundError(
                    f"the chaos MCP proxy has written no trace at {self.trace_path}: it writes "
                    "it when the agent's MCP session ends. Close the agent's MCP client first "
                    "(leave its `async with`; pydantic-ai's MCPToolset over stdio keeps its "
                    "server alive between runs unless given keep_alive=False), or the proxy "
                    "never started (was `argv` given to the agent as its server command?)"
                )
            pause.wait(0.05)
        return Trace.from_json(self.trace_path.read_text(encoding="utf-8"))


def _real_now() -> float:
    """Real monotonic seconds, also while a chaos test freezes ``time.monotonic``."""
    return float(time.clock_gettime(time.CLOCK_MONOTONIC))


@dataclass
class ServedProxy:
    """A chaos MCP proxy serving MCP over streamable HTTP on loopback: give ``url`` to the
    agent's MCP client; :meth:`stop` ends it (as SIGTERM does), then :meth:`trace` reads its
    trace. Its stderr is collected meanwhile (the servers' own logs go there too)."""

    url: str
    trace_path: Path
    process: subprocess.Popen[bytes]
    _stderr: list[bytes] = field(default_factory=list, repr=False)
    _reader: threading.Thread | None = field(default=None, repr=False)

    def stop(self, timeout: float = 30.0) -> tuple[int, str]:
        """Stop the proxy and its servers: its exit status and everything it said on stderr
        (a summary line last). Killed if it does not end within ``timeout`` seconds."""
        process = self.process
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        if process.stdin is not None:
            process.stdin.close()
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            code = process.wait()
        if self._reader is not None:
            self._reader.join(timeout)
        return code, b"".join(self._stderr).decode("utf-8", "replace")

    def trace(self) -> Trace:
        """The proxy's trace (after :meth:`stop`; ``FileNotFoundError`` before)."""
        return Trace.from_json(self.trace_path.read_text(encoding="utf-8"))


def serve_http(
    argv: Sequence[str], trace_path: Path, env: Mapping[str, str] | None = None
) -> ServedProxy:
    """Start ``argv`` (``agentchaos-mcp --http ...``; with ``--until-stdin-closes`` it ends
    when this process does, even killed) and wait until it serves: the :class:`ServedProxy`.
    Raises ``RuntimeError`` with what it said if it ends first."""
    from .cli import PROG, SERVING

    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,  # with --until-stdin-closes: it ends when this process does
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(env) if env is not None else None,
    )
    assert isinstance(process.stderr, io.BufferedReader)
    stderr = process.stderr
    said: list[bytes] = []
    deadline = time.monotonic() + START_TIMEOUT
    prefix = f"{PROG}: {SERVING}".encode()
    while True:
        left = deadline - time.monotonic()
        ready = select.select([stderr], [], [], max(left, 0))[0] if left > 0 else []
        line = stderr.readline() if ready else None
        if line and line.startswith(prefix):
            break
        if line:
            said.append(line)
            continue
        if process.poll() is None:
            process.kill()
        process.wait()
        said.append(stderr.read())
        text = b"".join(said).decode("utf-8", "replace").strip()
        raise RuntimeError(f"the chaos MCP proxy did not start: {text or 'no word said'}")
    url = line[len(prefix) :].decode().strip()
    served = ServedProxy(url, trace_path, process, said)
    reader = threading.Thread(
        target=lambda: said.extend(iter(lambda: stderr.read1(1 << 16), b"")),
        name="agentchaos-mcp-stderr",
        daemon=True,
    )
    reader.start()
    served._reader = reader
    return served


class ProxyFactory:
    """``factory(server_argv)`` -> an :class:`McpProxy` with the run's profile and seed;
    ``factory.serve(server_argv)`` -> a :class:`ServedProxy` (streamable HTTP) started."""

    def __init__(self, chaos: Any, directory: Path) -> None:
        self.chaos = chaos
        self.directory = directory
        self._n = itertools.count(1)
        self._served: list[ServedProxy] = []
        self._traces: list[Path] = []
        # the proxies' calls are the test's agent's: they join the test's trace when it ends,
        # so its verdict markers judge them
        chaos.session.before_end(self._join)

    def __call__(self, server: Sequence[str], *, repair: bool = False) -> McpProxy:
        """The command of a proxy over stdio in front of ``server`` (the agent starts it)."""
        options, trace_path = self._options(server, repair)
        self._traces.append(trace_path)
        return McpProxy((*PROXY_MODULE, *options, "--", *server), trace_path)

    def serve(
        self,
        server: Sequence[str],
        *,
        repair: bool = False,
        env: Mapping[str, str] | None = None,
    ) -> ServedProxy:
        """A proxy in front of ``server`` started now, serving MCP over streamable HTTP on
        127.0.0.1 (a free port: see its ``url``), with the run's profile and seed; stopped at
        the test's end if the test did not stop it."""
        options, trace_path = self._options(server, repair)
        self._traces.append(trace_path)
        argv = (*PROXY_MODULE, "--http", "--until-stdin-closes", *options, "--", *server)
        served = serve_http(argv, trace_path, env)
        self._served.append(served)
        return served

    def close(self) -> None:
        """Stop every proxy :meth:`serve` started that still runs (and its servers)."""
        served, self._served = self._served, []
        for proxy in served:
            proxy.stop()

    def _join(self) -> None:
        """At the test's end: the proxies' traces into the test's (steps after its own), so
        the test's verdicts judge the agent's calls through them. A proxy serving HTTP is
        stopped first; a stdio proxy whose trace is not written (its session still open, or
        never started) is said in the run's notes."""
        self.close()
        session = self.chaos.session
        for path in self._traces:
            if not path.exists():
                session.note(
                    f"chaos MCP proxy: no trace at {path.name} by the test's end (the agent's "
                    "MCP session still open, or the proxy never started): its calls are not "
                    "judged"
                )
                continue
            calls = len(session.trace.tool_calls())
            last = join_trace(session.trace, Trace.from_json(path.read_text(encoding="utf-8")))
            session.steps = max(session.steps, last)  # the run's end comes after them
            session.tool_calls += len(session.trace.tool_calls()) - calls  # the summary row's

    def _options(self, server: Sequence[str], repair: bool) -> tuple[list[str], Path]:
        from ...profiles import builtin_dir

        if isinstance(server, str) or not server or not all(isinstance(a, str) for a in server):
            raise TypeError(
                "chaos_mcp_proxy(server): the MCP server's command as a list of strings, "
                f"got {server!r}"
            )
        profile = self.chaos.profile
        options = ["--profile", profile.name, "--seed", str(self.chaos.seed)]
        source = Path(profile.source)
        planned = self.chaos.trace.meta.get("faults") or []
        if profile.source == "<inline>" or len(planned) != len(profile.faults):
            if planned:
                raise ValueError(
                    "chaos_mcp_proxy: the proxy runs in its own process and loads its profile "
                    "by name; this test's faults are inline (a marker's faults=): put them in "
                    "a profile file"
                )
        elif source.parent.resolve() != builtin_dir().resolve():
            options += ["--profile-dir", str(source.parent)]
        trace_path = self.directory / f"mcp-proxy-{next(self._n)}.json"
        options += ["--trace", str(trace_path)]
        if repair:
            options.append("--repair")
        return options, trace_path


def join_trace(trace: Trace, other: Trace) -> int:
    """``other``'s events (a proxy's run) appended to ``trace``, their steps after its last:
    its ``RunStarted`` and ``RunEnded`` left out (the run is ``trace``'s). Returns the last
    step now in ``trace``."""
    from ...trace.events import RunEnded, RunStarted

    offset = last = max((e.step for e in trace), default=0)
    for event in other:
        if isinstance(event, (RunStarted, RunEnded)):
            continue
        fields = dict(zip(event.fields, event, strict=True))
        fields["step"] = last = max(last, event.step + offset)
        trace.append(type(event)(**fields))
    return last
