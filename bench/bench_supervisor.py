"""Supervisor overhead: a successful call through the escape stack vs the bare call.

Arms (interleaved, medians of batch means): ``bare`` calls the tool directly; ``supervised``
calls it through ``Supervisor.call`` (breaker, classifier bookkeeping, backoff wrapper), with
the real clock and no recorder, as in production. Goal: overhead <= 30 us per call.

Run: .venv/bin/python bench/bench_supervisor.py
"""

from __future__ import annotations

import gc
import statistics
import sys
import time

from pytest_agentchaos.escape.supervisor import Supervisor

_clock = (time.perf_counter_ns,)


def tool(query: str, limit: int = 3) -> list[str]:
    return [query] * limit


def main() -> int:
    supervisor = Supervisor()
    args = {"query": "flights", "limit": 2}
    batch, rounds = 1000, 60
    bare, supervised = [], []
    for round_ in range(rounds + 5):
        gc.disable()
        start = _clock[0]()
        for _ in range(batch):
            tool(**args)
        b = (_clock[0]() - start) / batch
        start = _clock[0]()
        for _ in range(batch):
            supervisor.call("search", tool, args)
        s = (_clock[0]() - start) / batch
        gc.enable()
        if round_ >= 5:  # warm-up
            bare.append(b)
            supervised.append(s)
    b_us, s_us = statistics.median(bare) / 1000, statistics.median(supervised) / 1000
    overhead = s_us - b_us
    ok = overhead <= 30.0
    print(f"bare {b_us:.3f} us/call, supervised {s_us:.3f} us/call, ratio {s_us / b_us:.1f}x")
    print(
        f"RESULT bench_supervisor: overhead={overhead:.2f}us ratio={s_us / b_us:.1f}x "
        f"goal overhead<=30us {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
