"""MCP: what the in-process seam and the chaos proxy add to an MCP tool call, no fault firing.

* **Seam** (``chaos.wrap(session)``). Goal (issue 32): its overhead follows ``chaos.wrap``'s.
  What the seam adds to a call, less a fixed cost, is at most 3x what ``chaos.wrap`` adds to a
  plain async function; both measured in this process, interleaved, in two arms each (the
  ``none`` profile; a plan whose fault never matches, so the plan's selector runs on every
  call). The fixed cost is pydantic's own ``model_dump(mode="json")`` of the result, measured
  beside them: the trace records each result as JSON data in its wire form, which no seam gets
  for less than the SDK's models take to dump, and which a function returning a string does
  not have. The seam's call is ``tools/call`` on a ``ClientSession`` that answers at once with
  the ``CallToolResult`` the shop server of ``fixtures/mcp_servers`` gave (the seam's whole
  path: the plan, the trace, the result read into the trace; the round trip, the same in both
  arms and not the seam's, left out so that what the seam adds is not lost in its noise).
  ``chaos.wrap``'s is an async function that returns its text. Thread CPU time; the verdict is
  the median of the rounds' ratios. Informational: the seam's overhead against
  ``chaos.wrap``'s without the fixed cost; and the calls through the SDK's in-memory transport
  to the server in this process (the fastest real MCP round trip: the client session, JSON-RPC
  dispatch, the server's tool in a worker thread), as a ratio to the direct call (wall time).
* **Proxy** (``agentchaos-mcp``): the same server as a process over stdio, called by a raw
  JSON-RPC client (what an agent in any language does) directly and through the proxy with the
  ``none`` profile. Goal (issue 32): a proxied call takes at most 1.3x the direct one.
  Two floors are measured beside it, relays that pass raw bytes and do nothing else: one on an
  asyncio event loop (as the proxy), one with a blocking thread per direction. What they add
  is the extra process hop itself, which no proxy avoids; the proxy's own work is the rest.

Each arm is timed in batches interleaved with its baseline, in the same run, the order of the
arms turning round by round (a batch keeps the processes of its arm warm, as an agent calling
its tools does). A round's ratio compares batches run back to back (the direct and the proxied
stdio calls always next to each other), so a machine that slows for a while slows both, and
each verdict is the median of the rounds' ratios. Prints one ``RESULT`` line per goal; exits 1
if one fails.

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
from collections.abc import Awaitable, Callable
from pathlib import Path
from time import perf_counter_ns, thread_time_ns
from typing import Any

from pytest_agentchaos import Chaos

ROOT = Path(__file__).resolve().parents[1]
SHOP = ROOT / "fixtures" / "mcp_servers" / "shop_server.py"
SEAM_ROUNDS, SEAM_CALLS = 40, 500
TRIP_ROUNDS, TRIP_CALLS = 30, 100
PROXY_ROUNDS, PROXY_CALLS = 40, 25
SEAM_GOAL = 3.0  # the seam adds at most 3x what chaos.wrap adds, plus the result's dump
PROXY_GOAL = 1.30
MISS = [{"kind": "timeout", "tools": ["other"]}]
ARGS = {"text": "hello"}


def shop_server() -> Any:
    spec = importlib.util.spec_from_file_location("bench_shop_server", SHOP)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


def median_ratio(arm: list[float], base: list[float]) -> tuple[float, float, float]:
    """The median and quartiles of the rounds' ratios ``arm / base`` (paired by round)."""
    ratios = [a / b for a, b in zip(arm, base, strict=True)]
    q1, q2, q3 = statistics.quantiles(ratios) if len(ratios) > 1 else ratios * 3
    return statistics.median(ratios), q1, q3


# -- the seam ------------------------------------------------------------------------------


def replay_session(listing: Any, result: Any) -> Any:
    """A ``ClientSession`` whose ``tools/call`` answers at once with ``result`` (and
    ``tools/list`` with ``listing``): the seam's path without the round trip."""
    from mcp import ClientSession

    class ReplaySession(ClientSession):
        def __init__(self) -> None:  # no streams: nothing is sent
            pass

        async def call_tool(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            return result

        async def list_tools(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            return listing

    return ReplaySession()


async def echo(text: str) -> str:
    """A plain async tool: what ``chaos.wrap`` adds is measured on it."""
    return text


async def dump(result: Any) -> Any:
    """Pydantic's own dump of a result into JSON data (the seam's fixed cost)."""
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def seam_batch(call: Callable[..., Awaitable[Any]], *args: Any) -> float:
    """Thread CPU us per call of ``SEAM_CALLS`` calls ``call(*args)``."""
    t0 = thread_time_ns()
    for _ in range(SEAM_CALLS):
        await call(*args)
    return (thread_time_ns() - t0) / SEAM_CALLS / 1000


async def seam_arms(listing: Any, result: Any) -> dict[str, list[float]]:
    """Per-round us per call: the session's call and the plain function, bare and through
    their seams."""
    session = replay_session(listing, result)
    arms: list[tuple[str, list[dict[str, str]] | None]] = [
        ("call", None), ("seam none", []), ("seam miss", MISS),
        ("fn", None), ("wrap none", []), ("wrap miss", MISS), ("dump", None),
    ]  # fmt: skip
    times: dict[str, list[float]] = {name: [] for name, _ in arms}
    for round_ in range(SEAM_ROUNDS + 3):
        arms.reverse()  # each arm goes first as often as last
        measured = {}
        for name, faults in arms:
            if faults is None:
                bare = {
                    "call": (session.call_tool, "echo", ARGS),
                    "fn": (echo, "hello"),
                    "dump": (dump, result),
                }[name]
                measured[name] = await seam_batch(*bare)
                continue
            with Chaos.create(faults=faults, seed=1) as chaos:
                if name.startswith("seam"):
                    chaos.wrap(session)
                    await session.list_tools()  # the seam reads the schemas (untimed)
                    measured[name] = await seam_batch(session.call_tool, "echo", ARGS)
                else:
                    measured[name] = await seam_batch(chaos.wrap(echo), "hello")
                assert len(chaos.trace.tool_results()) == SEAM_CALLS
                assert not chaos.trace.faults()
        if round_ >= 3:  # warm-up rounds are not counted
            for name, value in measured.items():
                times[name].append(value)
    return times


async def round_trip_arms() -> tuple[dict[str, list[float]], Any, Any]:
    """Per-round us per call through the in-memory transport: direct and through the seam;
    and the listing and a result of ``echo`` as the server gave them."""
    import logging

    from mcp import Client

    logging.disable(logging.INFO)  # the server logs each call at INFO
    times: dict[str, list[float]] = {"direct": [], "none": [], "miss": []}
    async with Client(shop_server()) as client:
        session = client.session
        listing = await session.list_tools()
        result = await session.call_tool("echo", ARGS)

        async def batch() -> float:
            t0 = perf_counter_ns()
            for _ in range(TRIP_CALLS):
                await session.call_tool("echo", ARGS)
            return (perf_counter_ns() - t0) / TRIP_CALLS / 1000

        arms: list[tuple[str, Any]] = [("direct", None), ("none", []), ("miss", MISS)]
        for round_ in range(TRIP_ROUNDS + 3):
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
                    assert len(chaos.trace.tool_results()) == TRIP_CALLS
                    assert not chaos.trace.faults()
            if round_ >= 3:  # warm-up rounds are not counted
                for arm, value in measured.items():
                    times[arm].append(value)
    return times, listing, result


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
        """Wall us per call of ``PROXY_CALLS`` calls."""
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
    order = list(clients)  # the direct and the proxied batches run back to back, either way
    try:
        for client in clients.values():
            client.start()
        for round_ in range(PROXY_ROUNDS + 2):
            order.reverse()  # each arm goes first as often as last
            measured = {arm: clients[arm].batch() for arm in order}
            if round_ >= 2:  # warm-up rounds are not counted
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
    trip, listing, result = asyncio.run(round_trip_arms())
    seam = asyncio.run(seam_arms(listing, result))
    call, fn = statistics.median(seam["call"]), statistics.median(seam["fn"])
    dumped = seam["dump"]
    print(
        f"seam: thread CPU us a call, median of {SEAM_ROUNDS} rounds of {SEAM_CALLS} calls; "
        f"ClientSession.call_tool answering at once {call:.2f} us, a plain async function "
        f"{fn:.2f} us; pydantic's dump of the result {statistics.median(dumped):.2f} us"
    )
    for arm in ("none", "miss"):
        added = [s - c for s, c in zip(seam[f"seam {arm}"], seam["call"], strict=True)]
        wrap = [w - f for w, f in zip(seam[f"wrap {arm}"], seam["fn"], strict=True)]
        less = [a - d for a, d in zip(added, dumped, strict=True)]
        ratio, q1, q3 = median_ratio(less, wrap)
        plain = median_ratio(added, wrap)[0]
        print(
            f"  {arm:>4}: chaos.wrap(session) adds {statistics.median(added):.2f} us "
            f"({statistics.median(less):.2f} us less the dump), chaos.wrap(fn) "
            f"{statistics.median(wrap):.2f} us; with the dump {plain:.2f}x (info)"
        )
        passed = ratio <= SEAM_GOAL
        ok &= passed
        print(
            f"RESULT mcp_seam_{arm}: the seam adds {ratio:.2f}x what chaos.wrap adds to a plain "
            f"function, plus the result's dump (round ratios q1 {q1:.2f} q3 {q3:.2f}) goal <= "
            f"{SEAM_GOAL:g}x {'PASS' if passed else 'FAIL'}"
        )
    base = statistics.median(trip["direct"])
    print(
        f"info: in-memory MCP round trip, direct {base:.1f} us (wall, median of {TRIP_ROUNDS} "
        f"rounds of {TRIP_CALLS} calls)"
    )
    for arm in ("none", "miss"):
        value = statistics.median(trip[arm])
        ratio, q1, q3 = median_ratio(trip[arm], trip["direct"])
        print(
            f"  through chaos.wrap(session), {arm:>4}: {value:.1f} us (+{value - base:.1f} us), "
            f"{ratio:.3f}x the direct call (round ratios q1 {q1:.3f} q3 {q3:.3f})"
        )
    return ok


def proxy_part() -> bool:
    proxy = proxy_arms()
    base = statistics.median(proxy["direct"])
    print(
        f"stdio MCP call, direct: {base:.1f} us (median of {PROXY_ROUNDS} rounds of "
        f"{PROXY_CALLS} calls)"
    )
    for arm, label in (
        ("floor_threads", "raw-byte relay, a thread per direction"),
        ("floor_loop", "raw-byte relay on an event loop"),
        ("proxy", "agentchaos-mcp --profile none"),
    ):
        value = statistics.median(proxy[arm])
        ratio, q1, q3 = median_ratio(proxy[arm], proxy["direct"])
        print(
            f"  through {label}: {value:.1f} us (+{value - base:.1f} us), {ratio:.3f}x "
            f"(round ratios q1 {q1:.2f} q3 {q3:.2f})"
        )
    ratio = median_ratio(proxy["proxy"], proxy["direct"])[0]
    passed = ratio <= PROXY_GOAL
    print(
        f"RESULT mcp_proxy: {ratio:.3f}x the direct call (median of the rounds' ratios) goal "
        f"<= {PROXY_GOAL}x {'PASS' if passed else 'FAIL'}"
    )
    return passed


if __name__ == "__main__":
    if sys.argv[1:2] == ["--raw-relay"]:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        raw_relay(sys.argv[2], sys.argv[4:])
        sys.exit(0)
    sys.exit(main(sys.argv[1] if sys.argv[1:2] in (["seam"], ["proxy"]) else None))
