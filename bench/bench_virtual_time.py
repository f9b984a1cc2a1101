"""Virtual time: a chaos run that spends 10 virtual minutes must take well under 1 s of wall time.

The scenario is an agent loop calling a flaky ``search`` tool. The plan injects 30 s
timeouts on its first ten calls (each timeout advances the virtual clock by 30 s before the
tool raises), and the agent backs off exponentially between attempts, half the time with
``time.sleep`` (virtual because ``virtual_sleep=True``) and half with ``chaos.session.sleep``.
With ``freeze_time=True`` freezegun keeps ``time.time()`` in step with the virtual clock, so
the bench also checks that the agent *sees* the 10 minutes pass.

Baseline: the virtual seconds the run spent (>= 600). Verdict: median wall time per run
(Chaos.create + loop + end + close, i.e. what one chaos test pays) < 1 s, and virtual
seconds per wall second >= 1000.

Run: .venv/bin/python bench/bench_virtual_time.py
"""

from __future__ import annotations

import contextlib
import gc
import statistics
import sys
import time

# A realistic module population: in a pytest run these are all imported, and freezegun's
# start() walks every loaded module, so the bench pays what a chaos test pays.
import pytest  # noqa: F401

from pytest_agentchaos import Chaos, InjectedTimeout
from pytest_agentchaos.faults import parse_fault
from pytest_agentchaos.trace.events import FaultInjected

for _name in ("hypothesis", "faker", "xdist", "pytest_asyncio", "pytest_agentchaos.plugin"):
    with contextlib.suppress(ImportError):
        __import__(_name)

# freezegun replaces module-level references to the real time functions while it is active,
# so the bench's own clock is kept where it does not look: inside a tuple.
_REAL = (time.perf_counter_ns,)

RUNS = 60
WARMUP = 5
FAILURES = 10  # timeouts injected on the first ten calls of `search`
TIMEOUT_S = 30.0  # each one hangs for 30 virtual seconds
BACKOFF_BASE_S = 1.0  # exponential backoff 1, 2, 4, ... capped at 60 s
BACKOFF_CAP_S = 60.0
GOAL_VIRTUAL_S = 600.0
GOAL_WALL_S = 1.0
GOAL_SPEEDUP = 1000.0

FAULTS = (
    parse_fault(
        {"kind": "timeout", "seconds": TIMEOUT_S, "tools": ["search"], "first": FAILURES},
        "bench",
    ),
)


def search(query: str, limit: int = 5) -> list[str]:
    return [f"{query}-{i}" for i in range(limit)]


def agent(chaos: Chaos) -> tuple[list[str], int]:
    """Retry `search` with exponential backoff until it answers; returns (result, attempts)."""
    tool = chaos.wrap(search)
    delay = BACKOFF_BASE_S
    attempt = 0
    while True:
        attempt += 1
        chaos.step(f"attempt {attempt}")
        try:
            return tool("chaos engineering", limit=3), attempt
        except InjectedTimeout:
            if attempt % 2:
                time.sleep(delay)  # patched: advances the virtual clock
            else:
                chaos.session.sleep(delay)
            delay = min(delay * 2, BACKOFF_CAP_S)


def one_run() -> tuple[tuple[int, int, int], float, float, int]:
    """One chaos run; returns ((create, loop, close) wall ns, virtual s on the clock,
    time.time() delta seen by the agent, faults in the trace)."""
    clock = _REAL[0]
    t0 = clock()
    chaos = Chaos.create(None, seed=7, faults=FAULTS, freeze_time=True, virtual_sleep=True)
    try:
        t1 = clock()
        wall_before = time.time()
        result, attempts = agent(chaos)
        seen = time.time() - wall_before
        virtual = chaos.clock.now()
        chaos.session.end()
        faults = len(chaos.trace.of_type(FaultInjected))
        t2 = clock()
    finally:
        chaos.close()
    t3 = clock()
    assert result == ["chaos engineering-0", "chaos engineering-1", "chaos engineering-2"]
    assert attempts == FAILURES + 1, attempts
    return (t1 - t0, t2 - t1, t3 - t2), virtual, seen, faults


def main() -> int:
    real_sleep = time.sleep
    for _ in range(WARMUP):
        one_run()
    assert time.sleep is real_sleep, "virtual sleep was not uninstalled"
    walls: list[int] = []
    parts: list[tuple[int, int, int]] = []
    virtuals: list[float] = []
    gc.collect()
    for _ in range(RUNS):
        wall, virtual, seen, faults = one_run()
        # The agent saw the time pass (freezegun follows the virtual clock) and every
        # injected timeout is in the trace.
        assert abs(seen - virtual) < 1.0, (seen, virtual)
        assert faults == FAILURES, faults
        walls.append(sum(wall))
        parts.append(wall)
        virtuals.append(virtual)
    assert time.sleep is real_sleep, "virtual sleep was not uninstalled"
    # Real time is back: a real 1 ms sleep costs real time again.
    t = _REAL[0]()
    real_sleep(0.001)
    assert _REAL[0]() - t >= 900_000, "time.sleep still virtual after close()"

    virtual_s = statistics.median(virtuals)
    wall_s = statistics.median(walls) / 1e9
    worst_s = max(walls) / 1e9
    speedup = virtual_s / wall_s
    print(
        f"scenario: {FAILURES} x {TIMEOUT_S:g}s timeouts + exponential backoff "
        f"({BACKOFF_BASE_S:g}s doubling, cap {BACKOFF_CAP_S:g}s), {FAILURES + 1} attempts"
    )
    print(f"modules loaded (freezegun scans them on start): {len(sys.modules)}")
    print(
        f"baseline: virtual time spent per run  {virtual_s:10.1f} s  (need >= {GOAL_VIRTUAL_S:g})"
    )
    print(
        f"wall time per run (median of {RUNS})   {wall_s * 1e3:10.3f} ms  "
        f"(max {worst_s * 1e3:.3f} ms)"
    )
    create, loop, close = (statistics.median(p[i] for p in parts) / 1e6 for i in range(3))
    print(
        f"  of which (medians): create+install {create:.3f} ms, agent loop {loop:.3f} ms, "
        f"close/uninstall {close:.3f} ms"
    )
    print(f"virtual seconds per wall second        {speedup:10.0f}")
    ok = virtual_s >= GOAL_VIRTUAL_S and wall_s < GOAL_WALL_S and speedup >= GOAL_SPEEDUP
    print(
        f"RESULT bench_virtual_time: virtual={virtual_s:.1f}s wall={wall_s * 1e3:.3f}ms "
        f"speedup={speedup:.0f}x goal virtual>={GOAL_VIRTUAL_S:g}s wall<{GOAL_WALL_S:g}s "
        f"speedup>={GOAL_SPEEDUP:g}x {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
