"""Loop detection cost: flat per event as history grows, far below the seed's naive rescan.

Streams: a realistic agent's actions (tool name, argument digest, outcome) of which the last
stretch is a planted 3-step loop. For histories of 100, 1,000 and 10,000 actions we time the
online ``LoopDetector`` per action and, at 100 and 1,000, the naive detector of the source
document (seed 000): on every new action, rescan the whole history for any block repeated
back to back — O(n^2) block comparisons, each O(n).

Verdicts (ratios in this run, never a bare time):
- flat: per-action cost at 10,000 is within 2x of the cost at 100;
- speed: at 1,000 actions the online detector is >= 100x faster per action than the naive scan;
- pipeline: keying a completed call as the observer does (volatile tokens and fields masked in
  arguments and result, value provenance, learned volatility, digest, coarse key) + every rule
  (two repeat streams, same-error streaks, recurrence, node window) costs at most 3x the bare
  canonical digest of the same call (``digest([args, result])``, the cost every detector must
  pay anyway), measured in the same process (issue 29: a ratio, not an absolute time);
- pipeline flat: its cost per action over 20,000 calls within 1.5x of its cost over 1,000.

Run: .venv/bin/python bench/bench_loop_detector.py
"""

from __future__ import annotations

import gc
import random
import statistics
import sys
import time
from typing import Any

from pytest_agentchaos.escape.history import ActionKey, digest
from pytest_agentchaos.escape.keys import Keyer
from pytest_agentchaos.escape.loops import LoopDetector

#: The clock: the thread's CPU time where the platform has one. On a loaded machine wall time
#: also counts the time the process waits for a CPU, and a long run waits more often than a
#: short one (history 10,000 against 100; 20,000 calls against their digests), which skews
#: the ratios; CPU time counts the work alone, the cost the ratios compare.
_clock = (getattr(time, "thread_time_ns", time.perf_counter_ns),)


def stream(n: int, seed: int = 1) -> list[ActionKey]:
    rng = random.Random(seed)
    tools = ["search", "fetch", "parse", "rank", "summarise", "book", "pay", "notify"]
    keys = [
        ActionKey(tool=rng.choice(tools), outcome="ok", digest=str(rng.randrange(10**6)))
        for _ in range(n - 30)
    ]
    loop = [
        ActionKey(tool=t, outcome="error:Timeout", digest="x") for t in ("search", "fetch", "parse")
    ]
    return keys + loop * 10


def naive_has_repeat(keys: list[ActionKey], k: int = 2) -> bool:
    """The seed's approach: scan every block length and start for k back-to-back copies."""
    n = len(keys)
    for length in range(1, n // k + 1):
        for start in range(0, n - k * length + 1):
            block = keys[start : start + length]
            if all(
                keys[start + j * length : start + (j + 1) * length] == block for j in range(1, k)
            ):
                return True
    return False


def per_action_online(keys: list[ActionKey], rounds: int = 7) -> float:
    samples = []
    for _ in range(rounds):
        detector = LoopDetector()
        gc.disable()
        start = _clock[0]()
        for i, key in enumerate(keys):
            detector.observe(key, i, float(i))
        samples.append((_clock[0]() - start) / len(keys))
        gc.enable()
    return statistics.median(samples) / 1000  # us


def per_action_naive(keys: list[ActionKey], probes: int) -> float:
    """Time the naive scan on the last ``probes`` arrivals (each rescans everything before)."""
    samples = []
    for i in range(len(keys) - probes, len(keys)):
        start = _clock[0]()
        naive_has_repeat(keys[: i + 1])
        samples.append(_clock[0]() - start)
    return statistics.median(samples) / 1000


def realistic_calls(n: int, seed: int = 3) -> list[tuple[Any, Any, str]]:
    """``(arguments, result, state)`` of ``n`` completed calls carrying what a real agent's
    do: request ids, timestamps, durations."""
    rng = random.Random(seed)
    return [
        (
            {
                "query": f"flights to {rng.choice(['LIS', 'OSL', 'YUL'])}",
                "page": rng.randrange(3),
                "request_id": f"req_{rng.getrandbits(64):016x}",
            },
            {
                "flights": [
                    {"flight": f"AC{rng.randrange(900)}", "price": rng.randrange(100, 900)}
                ],
                "fetched_at": f"2025-03-14T09:{rng.randrange(60):02d}:{rng.randrange(60):02d}Z",
                "took": f"{rng.random():.3f}s",
            },
            f"state-{rng.randrange(40)}",
        )
        for _ in range(n)
    ]


def pipeline_cost(n: int = 20_000, rounds: int = 7) -> tuple[float, float, float]:
    """Per action, what the harness's observer does with a completed tool call: key it (mask
    the volatile tokens of its arguments and result, digest, coarse key) with the ``Keyer``,
    then run every rule of the detector, with the agent's state (:func:`realistic_calls`).

    Returns the medians of the pipeline's and the bare digest's cost per call, and the median
    over rounds of each round's ratio. Within a round the two alternate by chunks of calls (the
    pipeline's detector and keyer carry on from one chunk to the next), so a machine that
    slows down for a while slows both alike."""
    raw = realistic_calls(n)
    chunk = max(1, min(n, 1_000))
    clock = _clock[0]
    samples, digests, ratios = [], [], []
    for _ in range(rounds):
        detector = LoopDetector()
        keyer = Keyer()
        piped = bare = 0
        gc.disable()
        for begin in range(0, n, chunk):
            part = raw[begin : begin + chunk]
            start = clock()
            for i, (args, result, state) in enumerate(part, begin):
                key = keyer.tool("search", args, result=result)
                detector.observe(key, i, float(i), state=state)
            piped += clock() - start
            start = clock()
            for args, result, _state in part:
                digest([args, result])
            bare += clock() - start
        gc.enable()
        samples.append(piped / n)
        digests.append(bare / n)
        ratios.append(piped / bare)
    return (
        statistics.median(samples) / 1000,
        statistics.median(digests) / 1000,
        statistics.median(ratios),
    )


PIPELINE_GOAL = 3.0


def main() -> int:
    online = {n: per_action_online(stream(n)) for n in (100, 1_000, 10_000)}
    naive = {100: per_action_naive(stream(100), 30), 1_000: per_action_naive(stream(1_000), 3)}
    for n in online:
        line = f"history {n:>6}: online {online[n]:8.3f} us/action"
        if n in naive:
            line += f"   naive {naive[n]:12.1f} us/action   speed-up {naive[n] / online[n]:10.0f}x"
        print(line)
    flat = online[10_000] / online[100]
    speedup = naive[1_000] / online[1_000]
    _, _, short_ratio = pipeline_cost(1_000)
    pipe, dig, ratio = pipeline_cost()
    pipe_flat = ratio / short_ratio
    print(f"flat: cost at 10,000 / cost at 100 = {flat:.2f} (goal <= 2)")
    print(
        f"pipeline: {pipe:.2f} us/action, bare digest of the same call {dig:.2f} us: "
        f"ratio {ratio:.1f}x (goal <= {PIPELINE_GOAL:.0f}x); over 20,000 calls / over 1,000: "
        f"{pipe_flat:.2f} (goal <= 1.5)"
    )
    ok = flat <= 2.0 and speedup >= 100 and ratio <= PIPELINE_GOAL and pipe_flat <= 1.5
    print(
        f"RESULT bench_loop_detector: flat={flat:.2f} speedup@1000={speedup:.0f}x "
        f"pipeline_ratio={ratio:.1f}x pipeline_flat={pipe_flat:.2f} goal flat<=2 "
        f"speedup>=100x pipeline_ratio<={PIPELINE_GOAL:.0f}x pipeline_flat<=1.5 "
        f"{'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
