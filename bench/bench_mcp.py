"""MCP: what the in-process seam and the chaos proxy add to an MCP tool call, no fault firing.

* **Seam** (``chaos.wrap(session)``): the shop server of ``fixtures/mcp_servers`` run in this
  process behind the SDK's own in-memory transport (the fastest real MCP round trip there is:
  the client session, JSON-RPC dispatch and the server's tool, no pipes), called directly and
  through a wrapped session (the ``none`` profile; and a plan whose fault never matches).
  Goal: the seam adds at most 10% to the call (it adds what ``chaos.wrap`` adds to any call,
  plus reading the result into the trace).
* **Proxy** (``agentchaos-mcp``): the same server as a process over stdio, called by a raw
  JSON-RPC client (what an agent in any language does) directly and through the proxy with the
  ``none`` profile. Goal (issue 32): a proxied call takes at most 1.3x the direct one.
  Two floors are measured beside it, relays that pass raw bytes and do nothing else: one on an
  asyncio event loop (as the proxy), one with a blocking thread per direction. What they add
  is the extra process hop itself, which no proxy avoids; the proxy's own work is the rest.

Each arm is timed in batches interleaved with its baseline, in the same run; medians of the
batch means. Prints one ``RESULT`` line per goal; exits 1 if one fails.

Run: .venv/bin/python bench/bench_mcp.py [seam|proxy]   (~40 s; one part only if named)
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import select
import signal
import statistics
import subprocess
import sys
from pathlib import Path
from time import perf_counter_ns
from typing import Any

from pytest_agentchaos import Chaos

ROOT = Path(__file__).resolve().parents[1]
SHOP = ROOT / "fixtures" / "mcp_servers" / "shop_server.py"
SEAM_BATCHES, SEAM_CALLS = 30, 100
PROXY_BATCHES, PROXY_CALLS = 20, 50
SEAM_GOAL = 1.10
PROXY_GOAL = 1.30
MISS = [{"kind": "timeout", "tools": ["other"]}]


def shop_server() -> Any:
    spec = importlib.util.spec_from_file_location("bench_shop_server", SHOP)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


# -- the seam ------------------------------------------------------------------------------


async def seam_arms() -> dict[str, list[float]]:
    import logging

    from mcp import Client

    logging.disable(logging.INFO)  # the server logs each call at INFO
    times: dict[str, list[float]] = {"direct": [], "none": [], "miss": []}
    async with Client(shop_server()) as client:
        session = client.session
        await session.list_tools()

        async def batch() -> float:
            t0 = perf_counter_ns()
            for _ in range(SEAM_CALLS):
                await session.call_tool("echo", {"text": "hello"})
            return (perf_counter_ns() - t0) / SEAM_CALLS / 1000

        arms: list[tuple[str, Any]] = [("direct", None), ("none", []), ("miss", MISS)]
        for round_ in range(SEAM_BATCHES + 3):
            measured = {}
            arms.reverse()  # each arm goes first as often as last
            for arm, faults in arms:
                if faults is None:
                    measured[arm] = await batch()
                    continue
                with Chaos.create(faults=faults, seed=1) as chaos:
                    chaos.wrap(session)
                    await session.list_tools()  # the seam reads the schemas (untimed)
                    measured[arm] = await batch()
                    assert len(chaos.trace.tool_results()) == SEAM_CALLS
                    assert not chaos.trace.faults()
            if round_ >= 3:  # warm-up rounds are not counted
                for arm, value in measured.items():
                    times[arm].append(value)
    return times


# -- the proxy -----------------------------------------------------------------------------


class Raw:
    """A raw JSON-RPC client of a stdio MCP server process."""

    def __init__(self, argv: list[str]) -> None:
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.id = 0
        self.buffer = bytearray()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.id += 1
        line = {"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(line).encode() + b"\n")
        self.process.stdin.flush()
        while True:
            message = json.loads(self.read_line())
            if message.get("id") == self.id:
                return message  # type: ignore[no-any-return]

    def read_line(self) -> bytes:
        """The next line, read by chunks into a buffer of our own (``select`` cannot see
        lines a file object has buffered already)."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while (end := self.buffer.find(b"\n")) < 0:
            if not select.select([fd], [], [], 60)[0]:
                raise TimeoutError("no answer within 60 s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise EOFError("the server ended")
            self.buffer += chunk
        line = bytes(self.buffer[: end + 1])
        del self.buffer[: end + 1]
        return line

    def start(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        assert self.process.stdin is not None
        self.process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.process.stdin.flush()
        self.request("tools/list", {})

    def batch(self) -> float:
        t0 = perf_counter_ns()
        for _ in range(PROXY_CALLS):
            answer = self.request("tools/call", {"name": "echo", "arguments": {"text": "hello"}})
            assert answer["result"]["content"][0]["text"] == "hello"
        return (perf_counter_ns() - t0) / PROXY_CALLS / 1000

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(30)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()


def proxy_arms() -> dict[str, list[float]]:
    server = [sys.executable, str(SHOP)]
    proxy = [sys.executable, "-m", "pytest_agentchaos.adapters.mcp_client.cli"]
    floor = [sys.executable, __file__]
    clients = {
        "direct": Raw(server),
        "proxy": Raw([*proxy, "--profile", "none", "--", *server]),
        "floor_loop": Raw([*floor, "--raw-relay", "loop", "--", *server]),
        "floor_threads": Raw([*floor, "--raw-relay", "threads", "--", *server]),
    }
    times: dict[str, list[float]] = {arm: [] for arm in clients}
    order = list(clients)
    try:
        for client in clients.values():
            client.start()
        for round_ in range(PROXY_BATCHES + 2):
            order.reverse()  # each arm goes first as often as last
            measured = {arm: clients[arm].batch() for arm in order}
            if round_ >= 2:
                for arm, value in measured.items():
                    times[arm].append(value)
    finally:
        for client in clients.values():
            client.close()
    return times


# -- the floors: relays of raw bytes that do nothing else ---------------------------------------


def raw_relay(mode: str, argv: list[str]) -> None:
    """Relay this process's stdin to ``argv``'s and its stdout to ours, byte for byte: on an
    asyncio event loop (``loop``: a callback per read, as the proxy), or with a blocking thread
    per direction (``threads``: the least a relay in Python can do)."""
    import threading

    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert child.stdin is not None and child.stdout is not None
    up = (0, child.stdin.fileno())
    down = (child.stdout.fileno(), 1)
    if mode == "threads":

        def pump(src: int, dst: int) -> None:
            while data := os.read(src, 1 << 16):
                os.write(dst, data)

        def upward() -> None:
            pump(*up)
            child.stdin.close()  # type: ignore[union-attr]

        threading.Thread(target=upward, daemon=True).start()
        pump(*down)
    else:

        async def relay() -> None:
            loop = asyncio.get_running_loop()
            done = loop.create_future()

            def move(src: int, dst: int) -> None:
                data = os.read(src, 1 << 16)
                if data:
                    os.write(dst, data)
                    return
                loop.remove_reader(src)
                if src == down[0]:
                    done.set_result(None)
                else:
                    child.stdin.close()  # type: ignore[union-attr]

            loop.add_reader(up[0], move, *up)
            loop.add_reader(down[0], move, *down)
            await done

        asyncio.run(relay())
    child.wait()


def main(only: str | None = None) -> int:
    """Both parts, or ``only`` one (``seam`` or ``proxy``)."""
    os.environ.setdefault("PYTHONPATH", str(ROOT))
    ok = True
    if only != "proxy":
        ok &= seam_part()
    if only != "seam":
        ok &= proxy_part()
    return 0 if ok else 1


def seam_part() -> bool:
    ok = True
    seam = asyncio.run(seam_arms())
    base = statistics.median(seam["direct"])
    print(f"in-memory MCP call, direct: {base:.1f} us (median of {SEAM_BATCHES} batches)")
    for arm in ("none", "miss"):
        value = statistics.median(seam[arm])
        ratio = value / base
        print(f"  through chaos.wrap(session), {arm:>4}: {value:.1f} us (+{value - base:.1f} us)")
        passed = ratio <= SEAM_GOAL
        ok &= passed
        print(
            f"RESULT mcp_seam_{arm}: {ratio:.3f}x the direct call goal <= {SEAM_GOAL}x "
            f"{'PASS' if passed else 'FAIL'}"
        )
    return ok


def proxy_part() -> bool:
    ok = True
    proxy = proxy_arms()
    base = statistics.median(proxy["direct"])
    print(f"stdio MCP call, direct: {base:.1f} us (median of {PROXY_BATCHES} batches)")
    for arm, label in (
        ("floor_threads", "raw-byte relay, a thread per direction"),
        ("floor_loop", "raw-byte relay on an event loop"),
        ("proxy", "agentchaos-mcp --profile none"),
    ):
        value = statistics.median(proxy[arm])
        ratios = sorted(a / d for a, d in zip(proxy[arm], proxy["direct"], strict=True))
        q1, _, q3 = statistics.quantiles(ratios)
        print(
            f"  through {label}: {value:.1f} us (+{value - base:.1f} us), {value / base:.3f}x "
            f"(batch ratios q1 {q1:.2f} q3 {q3:.2f})"
        )
    ratio = statistics.median(proxy["proxy"]) / base
    passed = ratio <= PROXY_GOAL
    ok &= passed
    print(
        f"RESULT mcp_proxy: {ratio:.3f}x the direct call goal <= {PROXY_GOAL}x "
        f"{'PASS' if passed else 'FAIL'}"
    )
    return ok


if __name__ == "__main__":
    if sys.argv[1:2] == ["--raw-relay"]:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        raw_relay(sys.argv[2], sys.argv[4:])
        sys.exit(0)
    sys.exit(main(sys.argv[1] if sys.argv[1:2] in (["seam"], ["proxy"]) else None))
