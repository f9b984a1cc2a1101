"""Schedule search: what one explored schedule costs, and how many attempts finding and
shrinking a planted weakness takes.

1. **Cost of one explored schedule.** A 20-call agent (10 ``search`` and 10 ``book`` calls,
   failures caught) runs in-process the way a chaos test's body does: an *ordinary run* is one
   ``harness.rerun.run_attempt`` with the profile's faults drawn from its seed (the run is
   built, the body runs, the run is judged and undone); an *explored schedule* is one attempt
   of ``harness.rerun.search_schedules``: hypothesis draws a schedule, the same run is built
   with exactly that schedule, the body runs, the run is judged. The agent never fails, so the
   search spends its whole budget. Both arms run in the same process, interleaved, medians of
   several rounds. **Goal: explored / ordinary <= 1.3.**

2. **Attempts to find and shrink.** Three agents with a planted weakness (two rate limits in a
   row on one tool; a timeout right after a success; a latency above 5 s) are searched and
   shrunk under a fixed seed; the attempts (runs of the body) are counted, and each shrunk
   schedule must be the planted minimal one. A count is the same on every machine.
   **Goal: all three together <= 300 attempts.**

Run: .venv/bin/python bench/bench_explore.py
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from pytest_agentchaos.faults import parse_faults
from pytest_agentchaos.harness.rerun import Attempt, FirstRun, run_attempt, search_schedules
from pytest_agentchaos.harness.settings import SessionSettings
from pytest_agentchaos.harness.spec import RunSpec
from pytest_agentchaos.inject import Chaos
from pytest_agentchaos.profiles.profile import ProfileRegistry
from pytest_agentchaos.search.schedule import entries

_CLOCK = (time.perf_counter_ns,)  # kept in a tuple: a frozen clock never reaches it

SETTINGS = SessionSettings(seed=1)
REGISTRY = ProfileRegistry.default(None)
FAULTS = parse_faults(
    [
        {"kind": "rate_limit", "retry_after": [1, 60], "probability": 0.1},
        {"kind": "timeout", "seconds": [1, 30], "probability": 0.1},
        {"kind": "latency", "seconds": [0.5, 20], "probability": 0.1},
        {"kind": "http_error", "status": [500, 503], "probability": 0.1},
    ],
    "bench",
)
SPEC = RunSpec(faults=FAULTS)
QUIET = RunSpec(faults=parse_faults([{**f.to_dict(), "probability": 0} for f in FAULTS], "b"))
ROUNDS = 9
PER_ROUND = 100
GOAL_RATIO = 1.3
GOAL_ATTEMPTS = 300
BUDGET = 150


def _tools(chaos: Chaos) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def search(q: int) -> list[int]:
        return [q, q + 1]

    def book(q: int) -> str:
        return f"booked {q}"

    return chaos.wrap(search), chaos.wrap(book)


def robust(chaos: Chaos) -> None:
    """20 calls, every failure caught."""
    search, book = _tools(chaos)
    for q in range(10):
        for tool in (search, book):
            try:
                tool(q)
            except Exception:  # noqa: BLE001, S112 - the agent shrugs
                continue


def two_rate_limits_in_a_row(chaos: Chaos) -> None:
    search, book = _tools(chaos)
    streak = 0
    for q in range(10):
        with contextlib.suppress(Exception):
            book(q)
        try:
            search(q)
            streak = 0
        except Exception as exc:  # noqa: BLE001
            streak = streak + 1 if getattr(exc, "status", None) == 429 else 0
            if streak == 2:
                raise RuntimeError("search rate limited twice: gave up") from exc


def timeout_after_success(chaos: Chaos) -> None:
    search, book = _tools(chaos)
    last_ok = False
    for q in range(10):
        try:
            search(q)
            book(q)
            last_ok = True
        except TimeoutError:
            if last_ok:
                raise LookupError("stale cache after a timeout") from None
            last_ok = False
        except Exception:  # noqa: BLE001
            last_ok = False


def latency_threshold(chaos: Chaos) -> None:
    search, book = _tools(chaos)
    for q in range(10):
        before = chaos.clock.now()
        try:
            search(q)
        except Exception:  # noqa: BLE001, S112
            continue
        if chaos.clock.now() - before > 5:
            raise TimeoutError("search too slow")
        try:
            book(q)
        except Exception:  # noqa: BLE001, S112
            continue


def _attempt(body: Callable[[Chaos], None], counter: list[int]) -> Callable[[Any], Attempt]:
    def attempt(schedule: Any) -> Attempt:
        counter[0] += 1
        return run_attempt(SETTINGS, SPEC, "bench::agent", REGISTRY, body, schedule)

    return attempt


def _first(body: Callable[[Chaos], None], seed: int) -> FirstRun:
    first = run_attempt(SETTINGS, QUIET, "bench::agent", REGISTRY, body, None)
    info = FirstRun.of(first.run, first.error, FAULTS)
    return FirstRun(info.failure, info.schedule, info.calls, info.args, info.faults, seed)


def ordinary_round() -> float:
    clock = _CLOCK[0]
    start = clock()
    for _ in range(PER_ROUND):
        run_attempt(SETTINGS, SPEC, "bench::agent", REGISTRY, robust, None)
    return (clock() - start) / PER_ROUND


def explored_round(seed: int) -> float:
    clock = _CLOCK[0]
    counter = [0]
    first = _first(robust, seed)
    start = clock()
    found = search_schedules(first, _attempt(robust, counter), budget=PER_ROUND)
    elapsed = clock() - start
    assert found is not None and found.shrunk is None, "the robust agent failed"
    return elapsed / counter[0]


def main() -> int:
    for _ in range(3):  # warm-up: imports, hypothesis's first draws
        ordinary_round()
        explored_round(0)
    ordinary: list[float] = []
    explored: list[float] = []
    for i in range(ROUNDS):
        ordinary.append(ordinary_round())
        explored.append(explored_round(i + 1))
    base, cost = statistics.median(ordinary), statistics.median(explored)
    ratio = cost / base
    print(f"ordinary run of the 20-call body: median {base / 1e6:.3f} ms")
    print(f"one explored schedule:            median {cost / 1e6:.3f} ms")
    print(f"ratio explored / ordinary: {ratio:.2f} (goal <= {GOAL_RATIO})")

    planted: dict[str, tuple[Callable[[Chaos], None], Callable[[Any], bool]]] = {
        "two rate limits in a row": (
            two_rate_limits_in_a_row,
            lambda s: (
                s
                == [
                    {"target": "search", "call": 1, "kind": "rate_limit", "retry_after": 0},
                    {"target": "search", "call": 2, "kind": "rate_limit", "retry_after": 0},
                ]
            ),
        ),
        "timeout after a success": (
            timeout_after_success,
            # one timeout on the second call of either tool: both follow a success
            lambda s: (
                len(s) == 1 and (s[0]["call"], s[0]["kind"], s[0]["seconds"]) == (2, "timeout", 0)
            ),
        ),
        "latency above 5 s": (
            latency_threshold,
            lambda s: (
                len(s) == 1
                and (s[0]["target"], s[0]["call"], s[0]["kind"]) == ("search", 1, "latency")
                and 5 < s[0]["seconds"] <= 5.3
            ),
        ),
    }
    total = 0
    all_minimal = True
    for name, (body, minimal) in planted.items():
        counter = [0]
        found = search_schedules(_first(body, 1), _attempt(body, counter), budget=BUDGET)
        assert found is not None and found.shrunk is not None, f"{name}: not found"
        shrunk = entries(found.shrunk)
        ok = minimal(shrunk)
        all_minimal &= ok
        total += counter[0]
        verdict = "the planted minimal one" if ok else "NOT minimal"
        print(
            f"{name}: found after {found.search_attempts} attempts, shrunk in "
            f"{found.shrink_attempts}: {shrunk} ({verdict})"
        )
    print(f"attempts to find and shrink all three: {total} (goal <= {GOAL_ATTEMPTS})")
    passed = ratio <= GOAL_RATIO and total <= GOAL_ATTEMPTS and all_minimal
    print(
        f"RESULT bench_explore: ratio {ratio:.2f}, attempts {total} goal <= {GOAL_RATIO} and "
        f"<= {GOAL_ATTEMPTS} {'PASS' if passed else 'FAIL'}"
    )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
