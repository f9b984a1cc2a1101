"""Report writing: what ``--chaos-report-dir`` adds to a session.

A generated suite of 500 chaos tests, each making 100 tool calls (200 trace events, a fault
now and then), runs in a pytest subprocess with and without ``--chaos-report-dir``, the two
arms alternating; printed: the median session time of each arm, their ratio (goal: <= 1.10),
and the report's size per event.

Run: .venv/bin/python bench/bench_report_dir.py [--tests N] [--rounds N]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL = 1.10
TESTS = 500
CALLS = 100  # a ToolCall and a ToolResult each: 200 events

SUITE = """
import pytest

@pytest.mark.chaos(faults=[{{"kind": "timeout", "tools": ["lookup"], "every": 17}}])
@pytest.mark.parametrize("n", range({tests}))
def test_agent(chaos, n):
    lookup = chaos.wrap(lambda key: {{"key": key, "value": key * 2}}, name="lookup")
    for i in range({calls}):
        try:
            lookup(key=i)
        except TimeoutError:
            pass
"""


def session(folder: Path, *extra: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "--chaos-seed=1", str(folder / "test_suite.py"), *extra],
        cwd=folder, capture_output=True, text=True, check=False,
    )  # fmt: skip
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"the session failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return took


def main(argv: list[str]) -> int:
    tests = int(argv[argv.index("--tests") + 1]) if "--tests" in argv else TESTS
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_suite.py").write_text(SUITE.format(tests=tests, calls=CALLS))
        plain, reported = [], []
        for i in range(rounds):
            out = folder / f"report{i}"
            plain.append(session(folder))
            reported.append(session(folder, f"--chaos-report-dir={out}"))
        files = list((folder / "report0" / "traces").iterdir())
        size = (
            sum(f.stat().st_size for f in files)
            + (folder / "report0" / "index.json").stat().st_size
        )
        events = len(files) * CALLS * 2
    p, r = statistics.median(plain), statistics.median(reported)
    ratio = r / p
    print(f"{tests} chaos tests x {CALLS * 2} events: without a report dir {p:.2f} s, with "
          f"{r:.2f} s (median of {rounds}); ratio {ratio:.3f}")  # fmt: skip
    mb = size / 1e6
    print(f"report size: {size / events:.0f} bytes per event ({mb:.1f} MB, {len(files)} traces)")
    ok = ratio <= GOAL
    print(f"RESULT bench_report_dir: ratio={ratio:.3f} goal <= {GOAL} {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
