"""The chaos MCP proxy serving MCP's streamable HTTP on loopback (``agentchaos-mcp --http``) in
front of our stdio shop server, driven by the real SDK's streamable HTTP client: faults as MCP
delivers them, the listing as the server gives it, a session and a server process each, a
crashing server, refusals (a non-loopback address, requests that open no session), determinism
and replay, and the process table."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import (
    MCP_KINDS,
    PROXY,
    REQUIRED,
    SHOP_ARGS,
    TOKEN_VAR,
    connect,
    new_token,
    processes,
    wait_gone,
)
from mcp_helpers import mcp as _sdk  # imported first: it skips this module without the SDK

from pytest_agentchaos.adapters.mcp_client.cli import main  # noqa: E402
from pytest_agentchaos.adapters.mcp_client.fixture import ServedProxy, serve_http  # noqa: E402
from pytest_agentchaos.trace import Trace  # noqa: E402

MCPError = _sdk.MCPError
SHOP = (sys.executable, *SHOP_ARGS)


@pytest.fixture
def profiles(tmp_path: Path) -> Path:
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "mcp_kinds.toml").write_text(MCP_KINDS)
    (folder / "quick.toml").write_text(
        textwrap.dedent("""
        [[faults]]
        kind = "http_error"
        status = [500, 502, 503]
        probability = 0.2

        [[faults]]
        kind = "protocol_error"
        probability = 0.1

        [[faults]]
        kind = "empty_output"
        probability = 0.1
        """)
    )
    return folder


@pytest.fixture
def start() -> Iterator[Callable[..., ServedProxy]]:
    """``start(token, trace, *options)``: the proxy serving HTTP in front of the shop server,
    its processes marked with ``token``; every proxy started is stopped at the test's end,
    also when the test fails."""
    started: list[ServedProxy] = []

    def start_proxy(
        token: str, trace: Path, *options: str, server: tuple[str, ...] = SHOP
    ) -> ServedProxy:
        argv = [*PROXY, "--http", "--until-stdin-closes", *options, "--trace", str(trace),
                "--", *server]  # fmt: skip
        proxy = serve_http(argv, trace, env={**os.environ, TOKEN_VAR: token})
        started.append(proxy)
        return proxy

    yield start_proxy
    for proxy in started:
        proxy.stop()


@contextlib.asynccontextmanager
async def session_at(url: str) -> AsyncIterator[Any]:
    """An initialized SDK session over streamable HTTP (ended by DELETE on exit)."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def outcome(session: Any, tool: str, arguments: dict[str, Any]) -> tuple[Any, ...]:
    """A call as the agent sees it: (is_error, text), (code, message) of an MCPError, or
    ("refused", why) when the SDK refuses the result (its structured content does not match
    the tool's output schema)."""
    try:
        result = await session.call_tool(tool, arguments)
    except MCPError as exc:
        return (exc.code, exc.message)
    except RuntimeError as exc:
        return ("refused", str(exc).splitlines()[0])
    return (result.is_error, "\n".join(b.text for b in result.content if b.type == "text"))


def ended_by_itself(proxy: ServedProxy, timeout: float = 30.0) -> int:
    """Wait for the proxy's process to end on its own: its exit status."""
    try:
        return proxy.process.wait(timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the proxy still runs after {timeout} s") from None


def servers(token: str, proxy: ServedProxy) -> list[int]:
    """The live server processes of ``proxy`` (marked with ``token``)."""
    return [pid for pid in processes(token) if pid != proxy.process.pid]


def post(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """A raw HTTP POST (no MCP client): its status and JSON body."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **(headers or {}),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        text = exc.read()
        with contextlib.suppress(ValueError):
            return exc.code, json.loads(text)
        return exc.code, text.decode()


# -- the wire ----------------------------------------------------------------------------------


async def test_every_fault_kind_reaches_the_sdks_http_client_as_mcp_delivers_it(
    profiles: Path, tmp_path: Path, start: Callable[..., ServedProxy]
) -> None:
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    token = new_token()
    proxy = start(token, tmp_path / "t.json", "--profile-dir", str(profiles),
                  "--profile", "mcp_kinds", "--seed", "4")  # fmt: skip
    assert proxy.url.startswith("http://127.0.0.1:") and proxy.url.endswith("/mcp")
    async with session_at(proxy.url) as session:
        await session.list_tools()
        echo = [await outcome(session, "echo", {"text": f"Open at {n} tonight."}) for n in range(8)]
        lost = await outcome(session, "book_fitting", {"date": "2026-12-14", "seats": 2})
        corrupted = await outcome(session, "book_fitting", {"date": "2026-12-14", "seats": 2})
        slow = await outcome(session, "search_products", {"query": "socks"})
        assert len(processes(token)) == 2  # the proxy, and the session's server
    code, stderr = proxy.stop()
    assert code == 0, stderr
    assert echo[:5] == [
        (False, "Open at 0 tonight."),
        (True, "Error executing tool echo: HTTP 503 Service Unavailable"),
        (-32602, "Invalid params"),
        (REQUEST_TIMEOUT, "Request 'tools/call' timed out"),
        (CONNECTION_CLOSED, "Connection closed"),
    ]
    assert echo[5] == (False, "Open at 0 tonight.")  # the previous answer again
    assert echo[6][1] not in ("Open at 0 tonight.", "Open at 6 tonight.") and "0" in echo[6][1]
    assert echo[7] == (  # emptied: {} is no longer what the tool's output schema says
        "refused",
        "Invalid structured content returned by tool echo: 'result' is a required property",
    )
    assert lost == (CONNECTION_CLOSED, "Connection closed")  # the booking ran; its reply lost
    assert corrupted[0] is True and "validation error" in corrupted[1]
    assert json.loads(slow[1])["results"][0]["sku"] == "B-300"
    kinds = sorted(f.kind for f in proxy.trace().faults())
    assert kinds == sorted(
        ["http_error", "protocol_error", "timeout", "connection_error", "repeated_output",
         "empty_output", "paraphrased_output", "lost_reply", "malformed_params", "latency"]
    )  # fmt: skip
    assert stderr.splitlines()[-1].startswith(
        "agentchaos-mcp: the proxy was asked to stop; 1 MCP session, 11 tool calls, "
        "faults injected: connection_error 1, empty_output 1, http_error 1, "
    )
    assert processes(token) == []


async def test_the_listing_over_http_is_the_servers_own(
    tmp_path: Path, start: Callable[..., ServedProxy]
) -> None:
    async with connect() as direct:
        expected = (await direct.list_tools()).model_dump(mode="json", by_alias=True)
    proxy = start(new_token(), tmp_path / "t.json", "--profile", "flaky", "--seed", "1")
    async with session_at(proxy.url) as session:
        listed = (await session.list_tools()).model_dump(mode="json", by_alias=True)
    proxy.stop()
    assert json.dumps(listed, sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert listed["tools"][0]["inputSchema"]["properties"]


async def test_the_sdks_client_class_negotiates_and_calls_through_the_proxy(
    tmp_path: Path, start: Callable[..., ServedProxy]
) -> None:
    """``mcp.Client(url)`` probes the newer protocol first; the proxy refuses the probe as a
    request with no session, and the client falls back to the handshake it relays."""
    from mcp import Client

    proxy = start(new_token(), tmp_path / "t.json", "--profile", "none")
    async with Client(proxy.url) as client:
        result = await client.call_tool("echo", {"text": "hello"})
    code, stderr = proxy.stop()
    assert (code, result.content[0].text) == (0, "hello"), stderr


# -- sessions and processes --------------------------------------------------------------------


async def test_each_session_has_its_server_and_nothing_is_left_behind(
    tmp_path: Path, start: Callable[..., ServedProxy]
) -> None:
    token = new_token()
    proxy = start(token, tmp_path / "t.json", "--profile", "none")
    assert len(processes(token)) == 1  # no session yet: no server
    async with session_at(proxy.url) as first:
        assert (await outcome(first, "echo", {"text": "a"})) == (False, "a")
        (first_server,) = servers(token, proxy)
        async with session_at(proxy.url) as second:
            assert (await outcome(second, "echo", {"text": "b"})) == (False, "b")
            assert len(processes(token)) == 3
            (second_server,) = set(servers(token, proxy)) - {first_server}
        wait_gone([second_server], "the ended session's server stopped")
        assert sorted(processes(token)) == sorted([proxy.process.pid, first_server])
        assert (await outcome(first, "echo", {"text": "c"})) == (False, "c")
    wait_gone([first_server], "both servers stopped")
    assert processes(token) == [proxy.process.pid]
    code, stderr = proxy.stop()
    assert code == 0
    assert stderr.splitlines()[-1] == (
        "agentchaos-mcp: the proxy was asked to stop; 2 MCP sessions, 3 tool calls, "
        f"faults injected: none; trace: {proxy.trace_path}"
    )
    assert [r.output["content"][0]["text"] for r in proxy.trace().tool_results("echo")] == [
        "a", "b", "c"
    ]  # fmt: skip
    assert processes(token) == []


async def test_stopping_the_proxy_mid_session_stops_its_servers(
    tmp_path: Path, start: Callable[..., ServedProxy]
) -> None:
    token = new_token()
    proxy = start(token, tmp_path / "t.json", "--profile", "none")
    seen: dict[str, Any] = {}
    with pytest.raises(BaseException):  # noqa: B017 - the client's own error, whichever
        async with session_at(proxy.url) as session:
            await outcome(session, "echo", {"text": "a"})
            seen["running"] = len(processes(token))
            seen["stopped"] = proxy.stop()
            seen["left"] = processes(token)
            await session.call_tool("echo", {"text": "b"})
    assert seen["running"] == 2  # the proxy and the session's server
    code, stderr = seen["stopped"]
    assert code == 0, stderr
    assert seen["left"] == []


async def test_a_server_that_crashes_ends_the_proxy_with_the_reason(
    tmp_path: Path, start: Callable[..., ServedProxy]
) -> None:
    from mcp_types import CONNECTION_CLOSED

    token = new_token()
    proxy = start(token, tmp_path / "t.json", "--profile", "none")
    with contextlib.suppress(Exception):  # the session may end under the client's own exit
        async with session_at(proxy.url) as session:
            assert (await outcome(session, "crash", {})) == (CONNECTION_CLOSED, "Connection closed")
    assert ended_by_itself(proxy) == 1
    code, stderr = proxy.stop()
    assert code == 1
    assert stderr.splitlines()[-1].startswith(
        "agentchaos-mcp: the MCP server exited with code 3; 1 MCP session, 1 tool call, "
    )
    assert proxy.trace().tool_results("crash")[0].message == "Connection closed"
    assert processes(token) == []


def test_requests_that_open_no_session_start_no_server(
    tmp_path: Path, start: Callable[..., ServedProxy]
) -> None:
    token = new_token()
    proxy = start(token, tmp_path / "t.json", "--profile", "none")
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    status, body = post(proxy.url, listing)
    assert (status, body["error"]["message"]) == (400, "Bad Request: Missing session ID")
    status, body = post(proxy.url, listing, {"mcp-session-id": "no-such-session"})
    assert (status, body["error"]["message"]) == (404, "Not Found: Invalid or expired session ID")
    status, body = post(proxy.url.removesuffix("/mcp") + "/other", listing)
    assert status == 404
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    # the SDK's checks against DNS rebinding refuse these; the sessions are dropped
    assert post(proxy.url, initialize, {"Host": "evil.example:80"}) == (421, "Invalid Host header")
    assert post(proxy.url, initialize, {"Origin": "http://evil.example"})[0] == 403
    # each refused session's server was started before its answer: those still running stop
    wait_gone(servers(token, proxy), "the refused sessions' servers stopped")
    assert processes(token) == [proxy.process.pid]
    code, stderr = proxy.stop()
    assert code == 0
    assert stderr.splitlines()[-1].startswith(
        "agentchaos-mcp: the proxy was asked to stop; 0 MCP sessions, 0 tool calls"
    )
    assert processes(token) == []


# -- a client that goes away -----------------------------------------------------------------


async def test_the_idle_timeout_counts_from_the_last_open_request_on_virtual_time() -> None:
    from pytest_agentchaos.adapters.mcp_client.http_proxy import IDLE_TIMEOUT, IdleWatch
    from pytest_agentchaos.clock import VirtualClock

    async def settle() -> None:
        for _ in range(5):
            await asyncio.sleep(0)

    clock = VirtualClock()
    assert IDLE_TIMEOUT == 300
    watch = IdleWatch(300, clock)
    await watch.expired()  # nobody came
    assert clock.now() == 300
    watch.begin()  # a request (a slow tool call, a stream of server messages) stays open
    waiting = asyncio.ensure_future(watch.expired())
    clock.advance(1000)
    watch.begin()
    watch.end()  # another one came and went meanwhile: the first is still open
    await settle()
    assert not waiting.done()
    watch.end()  # at 1300 the last one ended
    clock.advance(200)
    watch.begin()
    watch.end()  # at 1500 one more came and went: the count starts again
    await waiting
    assert clock.now() == 1800


#: An agent that reads the proxy's URL (its imports done before), opens a session (the SDK's
#: client holds a stream of server messages open) and waits; killed, it goes away without
#: ending its session.
WAITING_AGENT = """
import asyncio, sys
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

async def main(url):
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        await s.list_tools()
        print("ready", flush=True)
        await asyncio.Event().wait()

print("loaded", flush=True)
asyncio.run(main(sys.stdin.readline().strip()))
"""


def test_a_proxy_whose_client_was_killed_stops_after_its_idle_timeout(
    tmp_path: Path, start: Callable[..., ServedProxy]
) -> None:
    """A client killed mid-session (no DELETE): its connections close, the proxy is idle,
    and after its idle timeout it stops the session's server and itself, and says why."""
    token = new_token()
    (tmp_path / "agent.py").write_text(WAITING_AGENT)
    agent = subprocess.Popen(
        [sys.executable, str(tmp_path / "agent.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, TOKEN_VAR: token},
    )
    try:
        assert agent.stdin is not None and agent.stdout is not None
        assert agent.stdout.readline() == b"loaded\n"
        # long enough for the agent to come first on a loaded machine
        proxy = start(token, tmp_path / "t.json", "--profile", "none", "--idle-timeout", "3")
        agent.stdin.write(proxy.url.encode() + b"\n")
        agent.stdin.flush()
        assert agent.stdout.readline() == b"ready\n"
        assert len(processes(token)) == 3  # the proxy, the session's server, the agent
    finally:
        agent.kill()
        agent.wait()
    assert ended_by_itself(proxy) == 0
    assert processes(token) == []
    code, stderr = proxy.stop()
    assert code == 0
    assert stderr.splitlines()[-1] == (
        "agentchaos-mcp: no HTTP request for 3 s (--idle-timeout): the proxy stopped; "
        f"1 MCP session, 0 tool calls, faults injected: none; trace: {proxy.trace_path}"
    )


# -- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--http", "--host", "0.0.0.0"], "--host 0.0.0.0: not a loopback address; the proxy "
         "serves this machine only (127.0.0.1, ::1 or localhost)"),
        (["--http", "--host", "192.168.1.20"], "--host 192.168.1.20: not a loopback address;"),
        (["--http", "--host", "example.com"], "--host example.com: not a loopback address;"),
        (["--http", "--host", "::"], "--host ::: not a loopback address;"),
        (["--http", "--port", "70000"], "--port 70000: not a port number (0 to 65535"),
        (["--http", "--idle-timeout", "-1"], "--idle-timeout -1: not a number of seconds (0 "
         "to 1e+09; 0: never)"),
        (["--http", "--idle-timeout", "nan"], "--idle-timeout nan: not a number of seconds"),
        (["--port", "8000"], "--host, --port, --idle-timeout and --until-stdin-closes go with "
         "--http"),
        (["--until-stdin-closes"], "--host, --port, --idle-timeout and --until-stdin-closes go "
         "with --http"),
        (["--idle-timeout", "60"], "--host, --port, --idle-timeout and --until-stdin-closes go "
         "with --http"),
    ],
)  # fmt: skip
def test_a_bad_address_is_refused_with_one_line(
    options: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*options, "--profile", "flaky", "--", *SHOP]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"agentchaos-mcp: error: {expected}"), err


def test_a_port_in_use_and_a_missing_server_are_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["--http", "--port", str(port), "--", *SHOP]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"agentchaos-mcp: error: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    )
    assert main(["--http", "--", "/nonexistent/mcp-server"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "agentchaos-mcp: error: cannot start the MCP server: /nonexistent/mcp-server: "
        "no such command\n"
    )


# -- determinism and replay --------------------------------------------------------------------


async def _answers(proxy: ServedProxy) -> list[Any]:
    async with session_at(proxy.url) as session:
        answers = [
            await outcome(session, "search_products", {"query": "shoes", "limit": 1 + n % 3})
            for n in range(30)
        ]
    code, stderr = proxy.stop()
    assert code == 0, stderr
    return answers


async def test_a_seed_decides_the_faults_and_an_http_proxy_trace_replays(
    profiles: Path, tmp_path: Path, start: Callable[..., ServedProxy]
) -> None:
    base = ("--profile-dir", str(profiles), "--profile", "quick")
    first, second, replayed = (tmp_path / f"{n}.json" for n in "abc")
    answers = await _answers(start(new_token(), first, *base, "--seed", "21"))
    again = await _answers(start(new_token(), second, *base, "--seed", "21"))
    replay = await _answers(
        start(new_token(), replayed, "--profile-dir", str(profiles), "--chaos-replay", str(first))
    )
    assert answers == again == replay
    schedules = [Trace.from_json(p.read_text()).schedule() for p in (first, second, replayed)]
    assert schedules[0] == schedules[1] == schedules[2]
    assert len(schedules[0]) >= 3
    assert {a[0] for a in answers} >= {True, False}  # faults fired, and calls went through


async def test_a_budget_that_halts_the_run_ends_the_proxy_with_the_reason(
    profiles: Path, tmp_path: Path, start: Callable[..., ServedProxy]
) -> None:
    (profiles / "tight.toml").write_text("[budgets]\nmax_tool_calls = 2\n")
    token = new_token()
    proxy = start(token, tmp_path / "t.json", "--profile-dir", str(profiles), "--profile", "tight")
    seen = []
    with contextlib.suppress(Exception):  # the session ends under the client
        async with session_at(proxy.url) as session:
            for n in range(3):
                seen.append(await outcome(session, "echo", {"text": str(n)}))
    assert seen[:2] == [(False, "0"), (False, "1")]
    assert seen[2][0] == -32603 and "max_tool_calls" in seen[2][1]
    assert ended_by_itself(proxy) == 1
    code, stderr = proxy.stop()
    assert code == 1
    assert stderr.splitlines()[-1].startswith("agentchaos-mcp: the run was halted: ")
    assert processes(token) == []


# -- a framework on the 1.x SDK ----------------------------------------------------------------

#: A Python with langchain-mcp-adapters installed (it needs the MCP SDK 1.x; the project pins
#: 2.x, so it cannot share this environment): the test runs only where one is given.
V1_PYTHON = os.environ.get("AGENTCHAOS_MCP_V1_PYTHON")
LANGCHAIN_AGENT = (
    Path(__file__).resolve().parents[1] / "fixtures" / "mcp_agents" / "langchain_agent.py"
)


def test_langchain_mcp_adapters_on_the_1x_sdk_through_the_http_proxy(
    profiles: Path, tmp_path: Path, start: Callable[..., ServedProxy]
) -> None:
    """The framework opens a session per tool call: one proxy serves them all, in one run.
    .ci/run builds the environment it needs; elsewhere it runs where one is given."""
    if not V1_PYTHON:
        why = "AGENTCHAOS_MCP_V1_PYTHON names no Python with langchain-mcp-adapters (mcp 1.x)"
        if REQUIRED:
            pytest.fail(f"AGENTCHAOS_REQUIRE_FRAMEWORKS=1 but {why}")
        pytest.skip(why)
    token = new_token()
    proxy = start(token, tmp_path / "t.json", "--profile-dir", str(profiles),
                  "--profile", "mcp_kinds", "--seed", "4")  # fmt: skip
    agent = subprocess.run(
        [str(V1_PYTHON), str(LANGCHAIN_AGENT), proxy.url],
        capture_output=True, text=True, timeout=300, env={"PATH": os.environ.get("PATH", "")},
    )  # fmt: skip
    code, stderr = proxy.stop()
    assert agent.returncode == 0, agent.stderr
    answers = json.loads(agent.stdout)["answers"]
    assert answers[0] == "hi 0"
    assert "HTTP 503 Service Unavailable" in answers[1]  # a tool error, as the framework shows it
    assert answers[2] == "McpError: Invalid params"
    assert answers[3] == "McpError: Request 'tools/call' timed out"
    assert answers[4] == "McpError: Connection closed"
    assert code == 0, stderr
    assert stderr.splitlines()[-1].startswith(
        "agentchaos-mcp: the proxy was asked to stop; 7 MCP sessions, 6 tool calls, "
    )
    assert processes(token) == []


def test_a_proxy_whose_parent_goes_away_stops_with_its_servers(
    tmp_path: Path, start: Callable[..., ServedProxy]
) -> None:
    """With --until-stdin-closes (as the fixture starts it), the proxy ends when the process
    holding its stdin does, even one that is killed and never stops it."""
    token = new_token()
    proxy = start(token, tmp_path / "t.json", "--profile", "none")
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "raw", "version": "0"}}}  # fmt: skip
    assert post(proxy.url, initialize)[0] == 200  # a session, and its server
    assert len(processes(token)) == 2
    assert proxy.process.stdin is not None
    proxy.process.stdin.close()  # as when this process dies
    assert ended_by_itself(proxy) == 0
    assert processes(token) == []


def test_the_fixture_serves_with_the_runs_profile_and_stops_what_it_started(
    tmp_path: Path,
) -> None:
    from pytest_agentchaos import Chaos
    from pytest_agentchaos.adapters.mcp_client.fixture import ProxyFactory
    from pytest_agentchaos.profiles import ProfileRegistry

    token = new_token()
    with Chaos.create(ProfileRegistry.default(None).get("flaky"), seed=9) as chaos:
        factory = ProxyFactory(chaos, tmp_path)
        served = factory.serve(list(SHOP), env={**os.environ, TOKEN_VAR: token})
        argv = served.process.args
        assert argv[argv.index("--profile") + 1] == "flaky"
        assert argv[argv.index("--seed") + 1] == "9"
        assert served.url.startswith("http://127.0.0.1:")
        assert len(processes(token)) == 1
        factory.close()  # what the fixture does at the test's end
    assert served.process.returncode == 0
    assert served.trace().meta["seed"] == 9
    assert processes(token) == []
