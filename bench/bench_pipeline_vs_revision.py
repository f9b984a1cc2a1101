"""The loop pipeline now against the same pipeline at an earlier revision, in one process.

The <= 10 µs goal of ``bench_loop_detector.py`` is an absolute time, set on a machine faster
than the ones this repo runs on; a ratio against an earlier revision measured in the same
process is what carries from one machine to another. This script exports the package as it
was at ``REV`` (``git archive``) into a temporary directory under another name, then times
both pipelines on the same calls, alternating rounds: a completed call keyed as the observer
keys it (the revision's ``action_key``, or ``Keyer.tool`` where the revision has it), then
every rule of that revision's ``LoopDetector``, with the agent's state. Times are the
thread's CPU time; the ratio printed is the median of the rounds' ratios.

Run: .venv/bin/python bench/bench_pipeline_vs_revision.py [REV]   (default d2e8cba~1, the
code before issue 11: no masking, one stream, no recurrence of calls)
"""

from __future__ import annotations

import gc
import importlib
import io
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bench_loop_detector import realistic_calls  # noqa: E402

_ROOT = Path(__file__).resolve().parent.parent
_ALIAS = "agentchaos_at_revision"


def load_revision(rev: str, into: Path) -> Any:
    """The package as it was at ``rev``, imported as :data:`_ALIAS` (it imports itself only
    relatively, so a second copy under another name is independent of the current one)."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, "pytest_agentchaos"],
        cwd=_ROOT,
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    shutil.move(into / "pytest_agentchaos", into / _ALIAS)
    sys.path.insert(0, str(into))
    return importlib.import_module(_ALIAS)


def _keying(package: Any) -> Any:
    """A function (args, result) -> ActionKey the way the package's observer keys a call."""
    try:
        keys = importlib.import_module(f"{package.__name__}.escape.keys")
    except ImportError:  # before issue 11, keys were made in the history module
        keys = importlib.import_module(f"{package.__name__}.escape.history")
    if hasattr(keys, "Keyer"):
        keyer = keys.Keyer()
        return lambda args, result: keyer.tool("search", args, result=result)
    return lambda args, result: keys.action_key(
        tool="search", args=args, outcome=keys.outcome_of(True), result=result
    )


def run_once(package: Any, calls: list[tuple[Any, Any, str]]) -> float:
    loops = importlib.import_module(f"{package.__name__}.escape.loops")
    key_of = _keying(package)
    detector = loops.LoopDetector()
    gc.disable()
    # the thread's CPU time: what another process on a shared machine takes is not counted
    start = time.thread_time_ns()
    for i, (args, result, state) in enumerate(calls):
        detector.observe(key_of(args, result), i, float(i), state=state)
    elapsed = time.thread_time_ns() - start
    gc.enable()
    return elapsed / len(calls) / 1000


#: Alternating rounds (each times both pipelines over 10,000 calls); five swung by ~5% on a
#: shared machine in wall time.
ROUNDS = 15


def main(argv: list[str]) -> int:
    rev = argv[1] if len(argv) > 1 else "d2e8cba~1"
    import pytest_agentchaos as current

    calls = realistic_calls(10_000)
    with tempfile.TemporaryDirectory() as tmp:
        before = load_revision(rev, Path(tmp))
        now_s, before_s, ratios = [], [], []
        for _ in range(ROUNDS):  # alternating, so drift in the machine's speed hits both
            now_s.append(run_once(current, calls))
            before_s.append(run_once(before, calls))
            ratios.append(now_s[-1] / before_s[-1])
    now, then = statistics.median(now_s), statistics.median(before_s)
    ratio = statistics.median(ratios)
    spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
    print(f"now: {now:.2f} us/action   at {rev}: {then:.2f} us/action   ratio {ratio:.2f} "
          f"(median of {ROUNDS} rounds' ratios, CPU time; range {spread})")  # fmt: skip
    print(f"RESULT bench_pipeline_vs_revision: ratio={ratio:.2f} against {rev}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
