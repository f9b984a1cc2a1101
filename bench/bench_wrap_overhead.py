"""Wrap overhead: what ``chaos.wrap`` adds to a sync tool call when no fault fires.

Every wrapped call names its arguments, checks budgets, asks the plan for a decision and
appends a ToolCall and a ToolResult event (arguments and output recorded) to the trace. This
bench measures that cost on the path every call of a passing chaos test takes, in two arms:

* ``no-plan``: ``Chaos.create(None)``: the "none" profile, no faults at all;
* ``miss``:    a plan whose fault never matches (a timeout on ``tools=["other"]``), so the
  plan's selector is evaluated on every call.

An informational arm, ``payload`` (not part of the verdict), wraps a tool that returns a
prebuilt list of 10 small result dicts: the trace snapshots outputs (copies their containers
so later mutation cannot rewrite history), and that cost grows with the output's size.

Baselines, in the same loop, interleaved batch by batch with the wrapped arms: the same tool
called bare, and called through a ``functools.wraps`` pass-through (the least any wrapper
costs). Per-call time of a batch = batch time / calls; the verdict uses the median of the
batch means. A fresh Chaos is made (untimed) per batch so the trace stays bounded, and is
closed afterwards. The script also prints the trace memory of one small call.

Goal (issue 10): median overhead (wrapped - bare) <= 4 us where a bare call costs 0.1 us, the
machine the goal was set on. Machines differ severalfold in speed, so the verdict is the same
goal as a ratio: overhead <= 40 x the bare call's own time, in both arms.

Run: .venv/bin/python bench/bench_wrap_overhead.py
"""

from __future__ import annotations

import functools
import gc
import statistics
import sys
import tracemalloc
from collections.abc import Callable
from time import perf_counter_ns

from pytest_agentchaos import Chaos
from pytest_agentchaos.faults import FaultSpec, parse_fault
from pytest_agentchaos.trace.events import FaultInjected, ToolCall, ToolResult

BATCHES = 100
CALLS = 1000
WARMUP_BATCHES = 10
GOAL_OVERHEAD_RATIO = 40.0  # 4 us over a 0.1 us bare call
MEMORY_CALLS = 20_000

MISS = (parse_fault({"kind": "timeout", "seconds": 30, "tools": ["other"]}, "bench"),)


def lookup(query: str, limit: int = 5) -> dict[str, object]:
    """A typical cheap tool: positional + keyword arguments, a small dict back."""
    return {"query": query, "limit": limit}


RESULTS = [
    {
        "title": f"result {i}",
        "url": f"https://example.com/{i}",
        "score": 1.0 / (i + 1),
        "tags": ["a", "b"],
    }
    for i in range(10)
]


def search(query: str, limit: int = 5) -> list[dict[str, object]]:
    """A tool with a bigger (prebuilt, so the bare call stays cheap) output."""
    return RESULTS


def time_batch(fn: Callable[..., object]) -> int:
    t0 = perf_counter_ns()
    for _ in range(CALLS):
        fn("weather in Paris", limit=3)
    return perf_counter_ns() - t0


def wrapped_batch(faults: tuple[FaultSpec, ...], fn: Callable[..., object] = lookup) -> int:
    chaos = Chaos.create(None, seed=1, faults=faults)
    try:
        tool = chaos.wrap(fn)
        elapsed = time_batch(tool)
        trace = chaos.trace
        # The run really recorded every call and injected nothing.
        assert len(trace.of_type(ToolCall)) == CALLS
        assert len(trace.of_type(ToolResult)) == CALLS
        assert not trace.of_type(FaultInjected)
    finally:
        chaos.close()
    return elapsed


@functools.wraps(lookup)
def passthrough(*args: object, **kwargs: object) -> object:
    return lookup(*args, **kwargs)  # type: ignore[arg-type]


def memory_per_call() -> float:
    """Bytes the trace keeps per small wrapped call (a ToolCall and a ToolResult)."""
    chaos = Chaos.create(None, seed=1)
    try:
        tool = chaos.wrap(lookup)
        tool("warm up", limit=1)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for i in range(MEMORY_CALLS):
            tool(f"weather in city {i}", limit=3)
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        return (after - before) / MEMORY_CALLS
    finally:
        chaos.close()


ARMS = {
    "bare": lambda: time_batch(lookup),
    "wraps": lambda: time_batch(passthrough),
    "no-plan": lambda: wrapped_batch(()),
    "miss": lambda: wrapped_batch(MISS),
    "payload": lambda: wrapped_batch((), search),  # informational
}


def main() -> int:
    samples: dict[str, list[float]] = {name: [] for name in ARMS}
    order = list(ARMS)
    for i in range(WARMUP_BATCHES + BATCHES):
        gc.collect()
        # Rotate the arm order so drift and cache effects hit every arm alike.
        for name in order[i % len(order) :] + order[: i % len(order)]:
            ns = ARMS[name]()
            if i >= WARMUP_BATCHES:
                samples[name].append(ns / CALLS / 1000)  # us per call

    bare = statistics.median(samples["bare"])
    wraps = statistics.median(samples["wraps"]) - bare
    print(
        f"{BATCHES} batches x {CALLS} calls per arm, interleaved; median of batch means "
        f"(payload: informational, not in the verdict)"
    )
    print(
        f"  {'arm':<8} {'us/call':>9} {'p10':>8} {'p90':>8} {'overhead us':>12} "
        f"{'/ bare':>8} {'/ wraps':>8}"
    )
    results: dict[str, tuple[float, float]] = {}
    for name, values in samples.items():
        med = statistics.median(values)
        dec = statistics.quantiles(values, n=10)
        overhead = med - bare
        results[name] = (overhead, overhead / bare)
        if name == "bare":
            print(
                f"  {name:<8} {med:9.3f} {dec[0]:8.3f} {dec[-1]:8.3f} {'-':>12} {'-':>8} {'-':>8}"
            )
            continue
        print(
            f"  {name:<8} {med:9.3f} {dec[0]:8.3f} {dec[-1]:8.3f} {overhead:12.3f} "
            f"{overhead / bare:8.1f} {overhead / wraps:8.1f}"
        )
    per_call = memory_per_call()
    print(f"  trace memory per small call: {per_call:.0f} bytes (ToolCall + ToolResult)")
    worst = max(results["no-plan"][1], results["miss"][1])
    ok = worst <= GOAL_OVERHEAD_RATIO
    print(
        f"RESULT bench_wrap_overhead: overhead no-plan={results['no-plan'][0]:.2f}us "
        f"miss={results['miss'][0]:.2f}us = {results['no-plan'][1]:.1f}x / "
        f"{results['miss'][1]:.1f}x the bare call ({bare:.3f}us), "
        f"{results['no-plan'][0] / wraps:.1f}x a functools.wraps pass-through "
        f"({wraps:.3f}us); trace memory {per_call:.0f} B/call; info: payload "
        f"overhead={results['payload'][0]:.1f}us; goal overhead<={GOAL_OVERHEAD_RATIO:g}x the "
        f"bare call (4us over 0.1us) {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
