"""Hostile text: what long texts of an awkward shape cost the readers, against ordinary prose.

An agent's output, a tool's result or error, or an argument can be any text: a 20,000-letter
run with no digit ("xxx..."), a run of spaces, a run of digits, a run of "x_" pairs. A regular
expression that tries a match at every position of such a run and scans to its end each time is
quadratic: 20,000 characters cost 10^8 steps (seconds) where ordinary prose of the same length
costs a millisecond. The readers cut every text to a bounded head first (the halt monitor reads
20,000 characters, the loop keyer 4,096 of each value), so the bound is on the shape, not the
length.

Each reader reads each hostile text and, as the baseline, English prose of the same length, in
the same process (CPU time, median of 5). The goal: every hostile text costs at most **5x**
the prose (the issue 10 rule "bounded, not linear in 100 MB" restated as a ratio). Before this
script the halt monitor's value masking took ~4 s on a 20,000-letter run, about 2,000x.

Run: .venv/bin/python bench/bench_hostile_text.py      (~20 s)
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

from pytest_agentchaos.escape.keys import Keyer
from pytest_agentchaos.halt import HaltMonitor
from pytest_agentchaos.repair import ParamRepairer, ToolSpec

N = 20_000
GOAL = 5.0

PROSE = (
    "The flight from Leipzig leaves at nine on Monday, and the hotel near the station has two "
    "rooms left for the week; the agent books the cheaper one and writes back to the user. "
)
HOSTILE = {
    "letters": "x" * N,
    "letter-underscore": "x_" * (N // 2),
    "words": "a " * (N // 2),
    "digits": "1" * N,
    "spaces": " " * N,
    "dashes": "-" * N,
    "dots": "a." * (N // 2),
    "slashes": "a/" * (N // 2),
    "han": "三" * N,
    "quotes": '"a' * (N // 2),
    "hex-ish": "ab1" * (N // 3),
    "commas": "1," * (N // 2),
}

SEARCH = ToolSpec.from_schema(
    "search",
    {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["query"],
    },
)


def halt(text: str) -> None:
    monitor = HaltMonitor(embedder="lexical")
    monitor.observe("searching for flights", tool="search", ok=True)
    monitor.observe(text, tool="search", ok=False, error=text)


def loop_key(text: str) -> None:
    keyer = Keyer()
    keyer.tool("search", {"query": text}, result=text)
    keyer.tool("search", {"query": text}, ok=False, error_type="ValueError", message=text)


def repair(text: str) -> None:
    ParamRepairer(SEARCH).repair({"query": text, "limit": text}, text)


READERS: dict[str, Callable[[str], None]] = {"halt": halt, "loop keyer": loop_key, "repair": repair}


def cost(reader: Callable[[str], None], text: str, rounds: int = 5) -> float:
    samples = []
    for _ in range(rounds):
        start = time.process_time_ns()
        reader(text)
        samples.append(time.process_time_ns() - start)
    return statistics.median(samples) / 1e6


def main() -> int:
    prose = (PROSE * (N // len(PROSE) + 1))[:N]
    worst = 0.0
    for name, reader in READERS.items():
        reader(prose)  # warm-up: lazy imports, compiled patterns
        base = cost(reader, prose)
        for shape, text in HOSTILE.items():
            ms = cost(reader, text, rounds=3)
            ratio = ms / max(base, 1e-3)
            worst = max(worst, ratio)
            flag = "  <-- over" if ratio > GOAL else ""
            print(
                f"{name:>10} {shape:>18}: {ms:9.2f} ms  prose {base:7.2f} ms  {ratio:7.1f}x{flag}"
            )
    ok = worst <= GOAL
    verdict = "PASS" if ok else "FAIL"
    print(f"RESULT hostile text: worst {worst:.1f}x prose goal <= {GOAL:.0f}x {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
