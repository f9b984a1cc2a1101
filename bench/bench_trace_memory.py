"""Bounded traces: what big outputs cost the trace, and what writing a long trace costs.

Two measurements, each against a baseline from the same process:

1. **Big outputs.** A tool returns 100 different 10 MB strings (the agent drops each one).
   Baseline: the 10 MB output itself. The trace must keep at most 64 KiB (the default
   ``chaos_trace_max_value``) of JSON per output; the memory the trace retains for all 100
   (tracemalloc, after a collection) and the size of the trace file are printed too. Before
   issue 10 the trace kept every output whole: 1 GB.
2. **Writing a 1M-call trace.** A run records 1,000,000 small tool calls (2,000,000 events).
   Baseline: the memory the run's trace holds (resident set growth while recording). Then
   the trace is written to a file: the growth of the resident set's high-water mark is what
   writing adds. The writer streams one event at a time, so that must stay <= 0.2x the
   trace's own memory (the issue's "peaks <= 1.2x the trace's own memory"); building the
   JSON text whole, as before issue 10, needed several times the trace.
   The resident set is an upper bound only (the allocator keeps pages), so the same is also
   measured exactly with tracemalloc on a 50,000-call trace: its own allocations while
   recording, and the peak of what writing allocates on top (``reset_peak``).

Run: .venv/bin/python bench/bench_trace_memory.py [--calls N]   (default 1,000,000)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from pytest_agentchaos import Chaos
from pytest_agentchaos.trace.events import ToolResult
from pytest_agentchaos.trace.values import DEFAULT_MAX_VALUE

BIG = 10 * 1024 * 1024
BIG_OUTPUTS = 100
GOAL_WRITE_PEAK = 0.2  # extra memory while writing, as a fraction of the trace's own


def peak_rss() -> int:
    """The process's resident set high-water mark in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def rss() -> int:
    """Resident set size in bytes (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):  # pragma: no cover - not Linux
        return 0


def big_outputs() -> tuple[bool, str]:
    chaos = Chaos.create(None, seed=1)
    try:
        tool = chaos.wrap(lambda i: f"{i:08d}" + "x" * BIG, name="download")
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for i in range(BIG_OUTPUTS):
            assert len(tool(i)) == BIG + 8  # the agent gets the whole output
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        results = chaos.trace.of_type(ToolResult)
        sizes = [len(json.dumps(r.output, ensure_ascii=False)) for r in results]
        digests = {r.output["digest"] for r in results}
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "trace.json"
            chaos.trace.write(path)
            file_size = path.stat().st_size
    finally:
        chaos.close()
    per_output = retained / BIG_OUTPUTS
    ok = max(sizes) <= DEFAULT_MAX_VALUE and len(digests) == BIG_OUTPUTS
    print(
        f"  big outputs: {BIG_OUTPUTS} x {BIG / 2**20:.0f} MiB; trace keeps <= {max(sizes)} "
        f"chars of JSON each (limit {DEFAULT_MAX_VALUE}), {per_output / 1024:.1f} KiB retained "
        f"per output ({per_output / BIG:.4f}x the output), {len(digests)} distinct digests; "
        f"trace file {file_size / 2**20:.1f} MiB (was {BIG_OUTPUTS * BIG / 2**30:.1f} GiB)"
    )
    return ok, f"big_output={max(sizes) / 1024:.1f}KiB/{per_output / 1024:.1f}KiB_retained"


def long_trace(calls: int) -> tuple[bool, str]:
    chaos = Chaos.create(None, seed=1)
    try:
        tool = chaos.wrap(lambda query, limit=5: {"query": query, "limit": limit}, name="lookup")
        gc.collect()
        base = rss()
        started = time.perf_counter()
        for i in range(calls):
            tool(f"q{i}", limit=3)
        recorded = time.perf_counter() - started
        gc.collect()
        own = max(1, rss() - base)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "trace.json"
            before = rss()
            started = time.perf_counter()
            chaos.trace.write(path)
            written = time.perf_counter() - started
            # An upper bound: the high-water mark may still be the recording's own.
            peak = max(0, peak_rss() - before)
            file_size = path.stat().st_size
        events = len(chaos.trace)
    finally:
        chaos.close()
    ratio = peak / own
    print(
        f"  long trace: {calls:,} calls = {events:,} events; trace memory {own / 2**20:.0f} MiB "
        f"({own / calls:.0f} B/call, recorded in {recorded:.1f}s); writing it ({written:.1f}s, "
        f"{file_size / 2**20:.0f} MiB file) peaked at most {peak / 2**20:.2f} MiB extra = "
        f"{ratio:.3f}x the trace"
    )
    return ratio <= GOAL_WRITE_PEAK, f"write_peak={ratio:.3f}x_trace"


def traced_write(calls: int) -> tuple[bool, str]:
    chaos = Chaos.create(None, seed=1)
    try:
        tool = chaos.wrap(lambda query, limit=5: {"query": query, "limit": limit}, name="lookup")
        gc.collect()
        tracemalloc.start()
        for i in range(calls):
            tool(f"q{i}", limit=3)
        gc.collect()
        own = tracemalloc.get_traced_memory()[0]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "trace.json"
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            chaos.trace.write(path)
            extra = tracemalloc.get_traced_memory()[1] - before
        tracemalloc.stop()
    finally:
        chaos.close()
    ratio = extra / own
    print(
        f"  traced write: {calls:,} calls; the trace allocated {own / 2**20:.1f} MiB "
        f"({own / calls:.0f} B/call); writing it allocated at most {extra / 1024:.0f} KiB more "
        f"at once = {ratio:.4f}x the trace (tracemalloc peak)"
    )
    return ratio <= GOAL_WRITE_PEAK, f"traced_write_peak={ratio:.4f}x_trace"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1_000_000)
    calls = parser.parse_args().calls
    ok_big, big = big_outputs()
    ok_traced, traced = traced_write(min(calls, 50_000))
    ok_long, long = long_trace(calls)
    ok = ok_big and ok_traced and ok_long
    print(
        f"RESULT bench_trace_memory: {big} {traced} {long} goal big_output<=64KiB and "
        f"write peak<={1 + GOAL_WRITE_PEAK:g}x the trace's own memory "
        f"{'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
