"""Helpers of the MCP tests: real MCP servers started locally over stdio (our shop server in
fixtures/mcp_servers, the reference time and git servers from PyPI), and the process table."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import select
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

if sys.platform != "linux":  # the process table is read from /proc
    pytest.skip("the MCP tests read the process table from /proc", allow_module_level=True)

REQUIRED = os.environ.get("AGENTCHAOS_REQUIRE_FRAMEWORKS") == "1"
if importlib.util.find_spec("mcp") is None and REQUIRED:
    raise RuntimeError("the mcp extra is required here (AGENTCHAOS_REQUIRE_FRAMEWORKS=1)")
mcp = pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHOP = ROOT / "fixtures" / "mcp_servers" / "shop_server.py"
SHOP_ARGS = (str(SHOP),)
TIME_ARGS = ("-m", "mcp_server_time", "--local-timezone", "UTC")
#: the environment variable that marks the processes a test started (see ``processes``)
TOKEN_VAR = "AGENTCHAOS_MCP_TEST_TOKEN"


def new_token() -> str:
    return uuid.uuid4().hex


def server_env(token: str) -> dict[str, str]:
    """The environment of a server a test starts: marked with ``token``, offline."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "PYTHONPATH")}
    env[TOKEN_VAR] = token
    env["HF_HUB_OFFLINE"] = "1"
    return env


def processes(token: str) -> list[int]:
    """The live processes (not zombies) whose environment holds ``token``: the process table."""
    found = []
    needle = f"{TOKEN_VAR}={token}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "stat").read_text()
            if status.rsplit(")", 1)[1].split()[0] == "Z":
                continue
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def wait_gone(pids: Sequence[int], what: str, timeout: float = 30.0) -> None:
    """Wait until each of ``pids`` (processes this one need not have started) has ended: the
    kernel says so through a pidfd, no polling. Fails after ``timeout`` seconds, naming
    ``what``."""
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:  # gone already
            continue
        try:
            if not select.select([fd], [], [], timeout)[0]:
                raise AssertionError(f"not within {timeout} s: {what} (pid {pid} still runs)")
        finally:
            os.close(fd)


@contextlib.asynccontextmanager
async def connect(
    args: Sequence[str] = SHOP_ARGS, *, token: str | None = None, **session: Any
) -> AsyncIterator[ClientSession]:
    """An initialized ``ClientSession`` to a server started as ``python <args>`` over stdio;
    the server is stopped (and reaped) on exit."""
    params = StdioServerParameters(
        command=sys.executable, args=list(args), env=server_env(token or new_token())
    )
    with open(os.devnull, "w") as devnull:
        async with (
            stdio_client(params, errlog=devnull) as (read, write),
            ClientSession(read, write, **session) as client,
        ):
            await client.initialize()
            yield client


def shop_server() -> Any:
    """Our shop server (fixtures/mcp_servers/shop_server.py) as an object, for in-memory runs."""
    spec = importlib.util.spec_from_file_location("agentchaos_shop_server", SHOP)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


@contextlib.asynccontextmanager
async def in_memory(**options: Any) -> AsyncIterator[ClientSession]:
    """An initialized ``ClientSession`` to our shop server run in this process (the SDK's own
    in-memory transport: the real client and server sessions, no process start-up). Its
    ``crash`` tool would end this process: crash tests use :func:`connect`."""
    from mcp import Client

    async with Client(shop_server(), **options) as client:
        yield client.session


def git_repo(path: Path) -> Path:
    """A small git repository at ``path``: two commits, one change not staged."""
    path.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }

    def git(*argv: str) -> None:
        subprocess.run(["git", *argv], cwd=path, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (path / "README.md").write_text("hello\n")
    git("add", "README.md")
    git("commit", "-q", "-m", "first commit")
    (path / "notes.txt").write_text("one\n")
    git("add", "notes.txt")
    git("commit", "-q", "-m", "add notes")
    (path / "README.md").write_text("hello again\n")
    return path


PROXY = (sys.executable, "-m", "pytest_agentchaos.adapters.mcp_client.cli")

#: one of each fault kind on the channel, by call of `echo` (and `book_fitting`)
MCP_KINDS = """
description = "every fault kind the MCP proxy delivers, one call each"

[[faults]]
kind = "http_error"
status = 503
tools = ["echo"]
nth = 2

[[faults]]
kind = "protocol_error"
code = -32602
tools = ["echo"]
nth = 3

[[faults]]
kind = "timeout"
seconds = 0.2
tools = ["echo"]
nth = 4

[[faults]]
kind = "connection_error"
tools = ["echo"]
nth = 5

[[faults]]
kind = "repeated_output"
tools = ["echo"]
nth = 6

[[faults]]
kind = "paraphrased_output"
tools = ["echo"]
nth = 7

[[faults]]
kind = "empty_output"
tools = ["echo"]
nth = 8

[[faults]]
kind = "lost_reply"
mode = "reset"
tools = ["book_fitting"]
nth = 1

[[faults]]
kind = "malformed_params"
mutations = ["out_of_range"]
tools = ["book_fitting"]
nth = 2

[[faults]]
kind = "latency"
seconds = 0.1
tools = ["search_products"]
"""


class RawClient:
    """An MCP client in no particular language: newline-delimited JSON-RPC written to a
    process's stdin and read from its stdout, byte for byte."""

    def __init__(self, argv: Sequence[str], token: str) -> None:
        env = {**os.environ, TOKEN_VAR: token}
        self.process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.next_id = 0
        self._buffer = bytearray()

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def read_line(self, timeout: float = 30.0) -> bytes:
        """The next line the process writes (b"" at its end). Read by chunks into a buffer of
        our own: ``select`` cannot see lines a file object has buffered already."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while (end := self._buffer.find(b"\n")) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError(f"no line within {timeout} s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                rest = bytes(self._buffer)
                self._buffer.clear()
                return rest
            self._buffer += chunk
        line = bytes(self._buffer[: end + 1])
        del self._buffer[: end + 1]
        return line

    def request(self, method: str, params: dict[str, Any] | None = None) -> bytes:
        """Send a request; the raw line of its response (notifications in between skipped)."""
        self.next_id += 1
        request_id = self.next_id
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        while True:
            line = self.read_line()
            if not line:
                return line
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return line

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        line = self.request("tools/call", {"name": name, "arguments": arguments})
        return json.loads(line) if line else {}

    def handshake(self) -> None:
        line = self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        assert json.loads(line)["result"]["serverInfo"]
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self, timeout: float = 30.0) -> tuple[int, str]:
        """Close the process's stdin and wait: (exit status, stderr)."""
        assert self.process.stdin is not None and self.process.stderr is not None
        with contextlib.suppress(BrokenPipeError):
            self.process.stdin.close()
        try:
            code = self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        return code, self.process.stderr.read().decode()
