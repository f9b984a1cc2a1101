"""The chaos MCP proxy (``agentchaos-mcp``) in front of real servers over stdio, driven by a
client of no particular language (raw newline-delimited JSON-RPC) and by the real SDK: faults
on the wire as MCP delivers them, the listing byte for byte, a crashing server, bad profiles,
determinism and replay, and the process table."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import (
    MCP_KINDS,
    PROXY,
    SHOP_ARGS,
    TIME_ARGS,
    RawClient,
    new_token,
    processes,
)
from mcp_helpers import mcp as _sdk  # imported first: it skips this module without the SDK

from pytest_agentchaos.trace import RunEnded, Trace  # noqa: E402

MCPError = _sdk.MCPError
SHOP = (sys.executable, *SHOP_ARGS)


@pytest.fixture
def profiles(tmp_path: Path) -> Path:
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "mcp_kinds.toml").write_text(MCP_KINDS)
    (folder / "broken.toml").write_text('[[faults]]\nkind = "meteor"\n')
    return folder


def proxy(*options: str, server: tuple[str, ...] = SHOP) -> list[str]:
    return [*PROXY, *options, "--", *server]


def text_of(response: dict[str, Any]) -> str:
    return "\n".join(b.get("text", "") for b in response["result"]["content"])


# -- bad command lines -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (("--profile", "nope"), "agentchaos-mcp: error: chaos profile 'nope': not found;"),
        (("--profile", "broken"), "agentchaos-mcp: error: "),
        (("--profile", "../etc"), "agentchaos-mcp: error: chaos profile: '../etc' is not a"),
    ],
)
def test_a_bad_profile_is_refused_with_one_line(
    profiles: Path, options: tuple[str, ...], expected: str
) -> None:
    token = new_token()
    client = RawClient(proxy("--profile-dir", str(profiles), *options), token)
    code, stderr = client.close()
    assert code == 2
    assert stderr.count("\n") == 1 and stderr.startswith(expected), stderr
    if options[1] == "broken":
        assert "meteor" in stderr
    assert processes(token) == []  # the server was never started


def test_no_server_command_is_refused_with_one_line() -> None:
    client = RawClient([*PROXY, "--profile", "flaky"], new_token())
    code, stderr = client.close()
    assert (code, stderr) == (2, "agentchaos-mcp: error: no MCP server command: put it after --\n")


# -- the wire ----------------------------------------------------------------------------------


def test_the_listing_is_byte_for_byte_the_servers_through_the_proxy() -> None:
    token = new_token()
    lines = []
    for argv in ([*SHOP], proxy("--profile", "flaky", "--seed", "1")):
        client = RawClient(argv, token)
        client.handshake()
        lines.append(client.request("tools/list"))
        client.close()
    assert lines[0] == lines[1]
    assert b'"inputSchema"' in lines[0]
    assert processes(token) == []


def test_time_server_listing_and_answers_through_the_proxy() -> None:
    pytest.importorskip("mcp_server_time")
    token = new_token()
    direct = RawClient((sys.executable, *TIME_ARGS), token)
    direct.handshake()
    listing = direct.request("tools/list")
    direct.close()
    client = RawClient(proxy("--profile", "none", server=(sys.executable, *TIME_ARGS)), token)
    client.handshake()
    assert client.request("tools/list") == listing
    answer = client.call("get_current_time", {"timezone": "Asia/Tokyo"})
    assert json.loads(text_of(answer))["timezone"] == "Asia/Tokyo"
    code, stderr = client.close()
    assert code == 0
    assert stderr.splitlines()[-1] == (
        "agentchaos-mcp: the client closed the connection; 1 tool call, faults injected: none"
    )
    assert processes(token) == []


def test_every_fault_kind_on_the_wire_as_mcp_delivers_it(profiles: Path, tmp_path: Path) -> None:
    token = new_token()
    trace_file = tmp_path / "run.json"
    argv = proxy("--profile-dir", str(profiles), "--profile", "mcp_kinds", "--seed", "4",
                 "--trace", str(trace_file))  # fmt: skip
    client = RawClient(argv, token)
    client.handshake()
    client.request("tools/list")
    answers = [client.call("echo", {"text": f"The shop opens at {n} tonight."}) for n in range(8)]
    lost = client.call("book_fitting", {"date": "2026-12-14", "seats": 2})
    corrupted = client.call("book_fitting", {"date": "2026-12-14", "seats": 2})
    slow = client.call("search_products", {"query": "socks"})
    code, stderr = client.close()
    assert code == 0, stderr

    assert text_of(answers[0]) == "The shop opens at 0 tonight."
    tool_error = answers[1]["result"]
    assert tool_error["isError"] is True
    assert text_of(answers[1]) == "Error executing tool echo: HTTP 503 Service Unavailable"
    assert answers[2]["error"] == {"code": -32602, "message": "Invalid params"}
    assert answers[3]["error"] == {"code": -32001, "message": "Request 'tools/call' timed out"}
    assert answers[4]["error"] == {"code": -32000, "message": "Connection closed"}
    assert text_of(answers[5]) == "The shop opens at 0 tonight."  # the previous answer again
    assert text_of(answers[6]) not in (
        "The shop opens at 0 tonight.",
        "The shop opens at 6 tonight.",
    )
    assert "0" in text_of(answers[6])  # the previous answer, reworded
    assert text_of(answers[7]) == "" and answers[7]["result"]["structuredContent"] == {}
    assert lost["error"]["code"] == -32000  # the booking ran; its reply was lost
    assert corrupted["result"]["isError"] is True  # the real server rejected seats out of range
    assert "validation error" in text_of(corrupted)
    assert json.loads(text_of(slow))["results"][0]["sku"] == "B-300"

    trace = Trace.from_json(trace_file.read_text())
    kinds = [f.kind for f in trace.faults()]
    assert sorted(kinds) == sorted(
        ["http_error", "protocol_error", "timeout", "connection_error", "repeated_output",
         "empty_output", "paraphrased_output", "lost_reply", "malformed_params", "latency"]
    )  # fmt: skip
    lost_result = trace.tool_results("book_fitting")[0]
    assert lost_result.output["content"][0]["text"].startswith("Booked a standard fitting")
    assert stderr.splitlines()[-1].startswith(
        "agentchaos-mcp: the client closed the connection; 11 tool calls, faults injected: "
        "connection_error 1, empty_output 1, http_error 1, latency 1, lost_reply 1, "
    )
    assert processes(token) == []


async def test_the_real_sdk_sees_the_proxys_faults_as_its_own(profiles: Path) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    argv = proxy("--profile-dir", str(profiles), "--profile", "mcp_kinds")
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    seen: list[Any] = []
    with open("/dev/null", "w") as devnull:
        async with (
            stdio_client(params, errlog=devnull) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for n in range(5):
                try:
                    result = await session.call_tool("echo", {"text": f"n{n}"})
                    seen.append((result.is_error, result.content[0].text))
                except MCPError as exc:
                    seen.append((exc.code, exc.message))
    assert seen == [
        (False, "n0"),
        (True, "Error executing tool echo: HTTP 503 Service Unavailable"),
        (-32602, "Invalid params"),
        (REQUEST_TIMEOUT, "Request 'tools/call' timed out"),
        (CONNECTION_CLOSED, "Connection closed"),
    ]


# -- a crashing server -------------------------------------------------------------------------


def test_a_server_that_crashes_mid_call_is_reported_and_the_proxy_exits_non_zero(
    tmp_path: Path,
) -> None:
    token = new_token()
    trace_file = tmp_path / "crash.json"
    client = RawClient(proxy("--profile", "none", "--trace", str(trace_file)), token)
    client.handshake()
    assert text_of(client.call("echo", {"text": "hi"})) == "hi"
    answer = client.call("crash", {})
    closed = {"code": -32000, "message": "Connection closed"}
    assert answer == {"jsonrpc": "2.0", "id": 3, "error": closed}
    assert client.read_line() == b""  # the proxy ends the session: its server is gone
    code, stderr = client.close()
    assert code == 1
    assert stderr.splitlines()[-1] == (
        "agentchaos-mcp: the MCP server exited with code 3; 2 tool calls, faults injected: none; "
        f"trace: {trace_file}"
    )
    trace = Trace.from_json(trace_file.read_text())
    assert trace.tool_results("crash")[0].message == "Connection closed"
    assert trace.meta["mcp_proxy"]["command"] == list(SHOP)
    assert processes(token) == []


def test_sigterm_while_an_injected_delay_settles_still_writes_the_trace_at_once(
    tmp_path: Path,
) -> None:
    # the shutdown of mcp's own stdio_client: close the proxy's stdin, wait 2 s, SIGTERM, wait
    # 2 s, SIGKILL. A call in flight holding a 60 s injected latency must not keep the proxy
    # from writing its trace before the kill (it ignored SIGTERM while settling such calls)
    import signal

    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "slow.toml").write_text('[[faults]]\nkind = "latency"\nseconds = 60\n')
    token = new_token()
    trace_file = tmp_path / "slow.json"
    argv = proxy("--profile-dir", str(folder), "--profile", "slow", "--trace", str(trace_file))
    client = RawClient(argv, token)
    client.handshake()
    client.send({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                 "params": {"name": "echo", "arguments": {"text": "hi"}}})  # fmt: skip
    assert client.process.stdin is not None
    client.process.stdin.close()
    with pytest.raises(subprocess.TimeoutExpired):
        client.process.wait(0.5)  # it settles the call in flight: a client half-closing waits
    client.process.send_signal(signal.SIGTERM)
    code = client.process.wait(4)  # what stdio_client leaves it before SIGKILL
    assert code == 0
    trace = Trace.from_json(trace_file.read_text())
    assert [e.kind for e in trace.faults()] == ["latency"]
    assert trace.tool_calls("echo")
    assert processes(token) == []


def test_a_server_that_cannot_start_is_one_line() -> None:
    client = RawClient([*PROXY, "--", "/nonexistent/mcp-server"], new_token())
    code, stderr = client.close()
    assert code == 1
    assert stderr.startswith("agentchaos-mcp: error: cannot start the MCP server: ")
    assert stderr.count("\n") == 1


# -- determinism and replay --------------------------------------------------------------------


def _session(argv: list[str]) -> list[Any]:
    client = RawClient(argv, new_token())
    client.handshake()
    answers = []
    for n in range(30):
        answer = client.call("search_products", {"query": "shoes", "limit": 1 + n % 3})
        answers.append(answer.get("error") or answer["result"])
    code, stderr = client.close()
    assert code == 0, stderr
    return answers


def test_a_seed_decides_the_faults_and_a_proxy_trace_replays(
    tmp_path: Path, profiles: Path
) -> None:
    (profiles / "quick.toml").write_text(
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
    first, second, replayed = (tmp_path / f"{n}.json" for n in ("a", "b", "c"))
    base = ("--profile-dir", str(profiles), "--profile", "quick")
    answers = _session(proxy(*base, "--seed", "21", "--trace", str(first)))
    again = _session(proxy(*base, "--seed", "21", "--trace", str(second)))
    replay = _session(
        proxy(
            "--profile-dir", str(profiles), "--chaos-replay", str(first), "--trace", str(replayed)
        )
    )
    assert answers == again == replay
    schedules = [Trace.from_json(p.read_text()).schedule() for p in (first, second, replayed)]
    assert schedules[0] == schedules[1] == schedules[2]
    assert len(schedules[0]) >= 3


def test_replay_of_a_file_that_is_not_a_proxy_trace_is_one_line(tmp_path: Path) -> None:
    bogus = tmp_path / "t.json"
    bogus.write_text("{}")
    client = RawClient([*PROXY, "--chaos-replay", str(bogus), "--", *SHOP], new_token())
    code, stderr = client.close()
    assert code == 2 and stderr.count("\n") == 1
    assert stderr.startswith("agentchaos-mcp: error: ")


def test_the_fixture_gives_the_proxy_command_with_the_runs_profile_and_seed(
    tmp_path: Path, profiles: Path
) -> None:
    from pytest_agentchaos import Chaos
    from pytest_agentchaos.adapters.mcp_client.fixture import ProxyFactory
    from pytest_agentchaos.profiles import ProfileRegistry

    registry = ProfileRegistry.default(profiles)
    with Chaos.create(registry.get("flaky"), seed=9) as chaos:
        proxy = ProxyFactory(chaos, tmp_path)(["my-server", "--flag"])
    assert proxy.argv == (
        *PROXY, "--profile", "flaky", "--seed", "9", "--trace", str(tmp_path / "mcp-proxy-1.json"),
        "--", "my-server", "--flag",
    )  # fmt: skip
    with Chaos.create(registry.get("mcp_kinds"), seed=1) as chaos:
        argv = ProxyFactory(chaos, tmp_path)(["s"], repair=True).argv
    assert argv[argv.index("--profile-dir") + 1] == str(profiles)
    assert "--repair" in argv
    with Chaos.create(faults=[{"kind": "timeout"}]) as chaos:
        with pytest.raises(ValueError, match="put them in a profile file"):
            ProxyFactory(chaos, tmp_path)(["s"])
        with pytest.raises(TypeError, match="list of strings"):
            ProxyFactory(chaos, tmp_path)("my-server")


def test_a_budget_that_halts_the_run_ends_the_session_with_the_reason(
    profiles: Path, tmp_path: Path
) -> None:
    (profiles / "tight.toml").write_text("[budgets]\nmax_tool_calls = 2\n")
    token = new_token()
    trace_file = tmp_path / "halt.json"
    argv = proxy("--profile-dir", str(profiles), "--profile", "tight", "--trace", str(trace_file))
    client = RawClient(argv, token)
    client.handshake()
    assert text_of(client.call("echo", {"text": "1"})) == "1"
    assert text_of(client.call("echo", {"text": "2"})) == "2"
    third = client.call("echo", {"text": "3"})
    assert third["error"]["code"] == -32603 and "max_tool_calls" in third["error"]["message"]
    code, stderr = client.close()
    assert code == 1
    assert stderr.splitlines()[-1].startswith("agentchaos-mcp: the run was halted: ")
    (ended,) = Trace.from_json(trace_file.read_text()).of_type(RunEnded)
    assert ended.status == "halted"
    assert processes(token) == []


# -- the relay under load ----------------------------------------------------------------------


def test_pipelined_calls_and_big_answers_pass_whole_while_the_client_is_slow_to_read(
    tmp_path: Path,
) -> None:
    """A client that writes 300 calls without waiting for answers (answers of ~1 MB among
    them, far more than a pipe holds): every answer arrives whole, each once, and the trace
    has them all."""
    token = new_token()
    trace_file = tmp_path / "busy.json"
    client = RawClient(proxy("--profile", "none", "--trace", str(trace_file)), token)
    client.handshake()
    big = "x" * 1_000_000
    sent = {1000 + n: big if n % 100 == 7 else f"call {n}" for n in range(300)}

    def write_all() -> None:
        for request_id, text in sent.items():
            client.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                         "params": {"name": "echo", "arguments": {"text": text}}})  # fmt: skip

    writer = threading.Thread(target=write_all)
    writer.start()
    got = {}
    while len(got) < len(sent):
        message = json.loads(client.read_line())
        assert message["id"] not in got
        got[message["id"]] = message["result"]["content"][0]["text"]
    writer.join()
    assert got == sent
    code, stderr = client.close()
    assert code == 0, stderr
    results = Trace.from_json(trace_file.read_text()).tool_results("echo")
    assert len(results) == 300 and all(r.ok for r in results)
    assert processes(token) == []


def test_a_line_that_is_no_json_and_a_notification_do_not_disturb_the_session() -> None:
    token = new_token()
    client = RawClient(proxy("--profile", "flaky", "--seed", "3"), token)
    client.handshake()
    client.process.stdin.write(b"this is not json\n[1, 2]\n")  # type: ignore[union-attr]
    client.process.stdin.flush()  # type: ignore[union-attr]
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": {"requestId": 99}})  # fmt: skip
    assert json.loads(client.request("tools/list"))["result"]["tools"]
    code, stderr = client.close()
    assert code == 0, stderr
    assert processes(token) == []


def test_the_fixtures_proxies_join_the_tests_trace_at_its_end_so_markers_judge_them(
    tmp_path: Path,
) -> None:
    # the proxies' calls are the agent's under test: verdict markers judged the test's own
    # trace alone, empty for an agent in another process (require_problem failed "nothing
    # to repair" while the proxy's trace held the faults: a new-user trial)
    from pytest_agentchaos import Chaos
    from pytest_agentchaos.adapters.mcp_client.fixture import ProxyFactory
    from pytest_agentchaos.profiles import ProfileRegistry
    from pytest_agentchaos.verdicts import must_retry

    profile = ProfileRegistry.default(None).get("rate_limited")
    with Chaos.create(profile, seed=3) as chaos:
        factory = ProxyFactory(chaos, tmp_path)
        used, unused = factory(list(SHOP)), factory(list(SHOP))
        token = new_token()
        client = RawClient(used.argv, token)
        client.handshake()
        for _ in range(20):
            client.call("echo", {"text": "hi"})
        assert client.close()[0] == 0
        own = used.trace()
        assert not chaos.trace.faults()  # the test's own trace: nothing until the end
        chaos.session.end()  # what the plugin does when the test's body is over
        trace = chaos.trace
    assert own.faults() and [f.kind for f in trace.faults()] == [f.kind for f in own.faults()]
    assert [r.ok for r in trace.tool_results("echo")] == [r.ok for r in own.tool_results("echo")]
    assert must_retry(trace, require_failure=True).exercised
    steps = [e.step for e in trace]
    assert steps == sorted(steps)  # after the test's own events, in order
    assert any(
        unused.trace_path.name in note and "not judged" in note for note in trace.meta["notes"]
    )
    assert processes(token) == []
