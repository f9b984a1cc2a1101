"""Wrap overhead: what ``chaos.wrap`` adds to a sync tool call when no fault fires.

Every wrapped call binds its arguments, checks budgets, asks the plan for a decision and
appends a ToolCall and a ToolResult event to the trace. This bench measures that cost on
the path every call of a passing chaos test takes, in two arms:

* ``no-plan``: ``Chaos.create(None)``: the "none" profile, no faults at all;
* ``miss``:    a plan whose fault never matches (a timeout on ``tools=["other"]``), so the
  plan's selector is evaluated on every call.

An informational arm, ``payload`` (not part of the verdict), wraps a tool that returns a
prebuilt list of 10 small result dicts: the trace snapshots outputs (copies their containers
so later mutation cannot rewrite history), and that cost grows with the output's size.

Baseline: the same tool called bare, in the same loop, interleaved batch by batch with the
wrapped arms. Per-call time of a batch = batch time / calls; the verdict uses the median of
the batch means. A fresh Chaos is made (untimed) per batch so the trace stays bounded, and
is closed afterwards.

Goal: median overhead (wrapped - bare) <= 20 us per call in both arms.

Run: .venv/bin/python bench/bench_wrap_overhead.py
"""

from __future__ import annotations

import gc
import statistics
import sys
from collections.abc import Callable
from time import perf_counter_ns

from pytest_agentchaos import Chaos
from pytest_agentchaos.faults import FaultSpec, parse_fault
from pytest_agentchaos.trace.events import FaultInjected, ToolCall, ToolResult

BATCHES = 200
CALLS = 1000
WARMUP_BATCHES = 10
GOAL_OVERHEAD_US = 20.0

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


ARMS = {
    "bare": lambda: time_batch(lookup),
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
    print(
        f"{BATCHES} batches x {CALLS} calls per arm, interleaved; median of batch means "
        f"(payload: informational, not in the verdict)"
    )
    print(f"  {'arm':<8} {'us/call':>9} {'p10':>8} {'p90':>8} {'overhead us':>12} {'ratio':>8}")
    results: dict[str, tuple[float, float]] = {}
    for name, values in samples.items():
        med = statistics.median(values)
        dec = statistics.quantiles(values, n=10)
        overhead = med - bare
        ratio = med / bare
        results[name] = (overhead, ratio)
        shown_over = "-" if name == "bare" else f"{overhead:12.3f}"
        print(f"  {name:<8} {med:9.3f} {dec[0]:8.3f} {dec[-1]:8.3f} {shown_over:>12} {ratio:8.1f}")
    worst = max(results["no-plan"][0], results["miss"][0])
    ok = worst <= GOAL_OVERHEAD_US
    print(
        f"RESULT bench_wrap_overhead: overhead no-plan={results['no-plan'][0]:.2f}us "
        f"miss={results['miss'][0]:.2f}us ratio wrapped/bare no-plan={results['no-plan'][1]:.1f}x "
        f"miss={results['miss'][1]:.1f}x (bare={bare:.3f}us; info: payload "
        f"overhead={results['payload'][0]:.1f}us) goal overhead<={GOAL_OVERHEAD_US:g}us "
        f"{'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
