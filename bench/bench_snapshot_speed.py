"""Snapshot speed: save + load_latest of a ~1 MB agent state against plain JSON to a file.

Arms, interleaved, each a save followed by a load of the same ~1 MB state (a conversation
of 3,700 messages with tool calls, scores and a memory table):

- ``plain``: ``fh.write(json.dumps(state))`` then ``json.loads(fh.read())``. This is the
  baseline. It is the faster way to use the json module (``json.dump`` streams through the
  pure-Python encoder and is shown for reference only).
- ``store``: ``SnapshotStore(fsync=False).save(state, step)`` then ``load_latest()``: the
  state checked and converted by ``to_state``, canonical JSON (sorted keys), a SHA-256
  checksum, an atomic write (temp file + rename), pruning; on load, the envelope checks and
  the checksum verified.
- ``store+fsync``: the same with the fsyncs of the file and the directory (the default);
  their cost depends on the disk, so it is reported apart, not judged.

Verdict: median(store) / median(plain) <= 1.5.

Run: .venv/bin/python bench/bench_snapshot_speed.py   (~10 s)
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_agentchaos.phoenix import SnapshotStore

REPS = 25
WARMUP = 3
GOAL_RATIO = 1.5


def make_state() -> dict[str, Any]:
    """About 1 MB of JSON: messages, tool calls, scores and a memory table."""
    messages = []
    for i in range(3700):
        tool = None
        if i % 3 == 0:
            tool = {"name": "search", "args": {"q": f"query {i}", "limit": 5}, "ok": True}
        messages.append(
            {
                "role": "user" if i % 2 else "assistant",
                "content": f"message number {i} " * 8,
                "tokens": i * 3,
                "score": i / 7,
                "tool": tool,
            }
        )
    memory = {f"k{j}": list(range(10)) for j in range(200)}
    return {"step": 1, "goal": "collect the data", "messages": messages, "memory": memory}


def main() -> int:
    state = make_state()
    size = len(json.dumps(state))
    with tempfile.TemporaryDirectory(prefix="bench-snapshot-speed-") as tmp:
        root = Path(tmp)
        plain_file = root / "plain.json"
        fast = SnapshotStore(root / "nofsync", keep=3, fsync=False)
        synced = SnapshotStore(root / "fsync", keep=3)
        clock = time.perf_counter
        step = 0

        def plain() -> tuple[float, float]:
            t0 = clock()
            with open(plain_file, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(state))
            t1 = clock()
            with open(plain_file, encoding="utf-8") as fh:
                loaded = json.loads(fh.read())
            t2 = clock()
            assert loaded["step"] == 1
            return t1 - t0, t2 - t1

        def streamed() -> tuple[float, float]:
            t0 = clock()
            with open(plain_file, "w", encoding="utf-8") as fh:
                json.dump(state, fh)
            t1 = clock()
            with open(plain_file, encoding="utf-8") as fh:
                loaded = json.load(fh)
            t2 = clock()
            assert loaded["step"] == 1
            return t1 - t0, t2 - t1

        def store_arm(store: SnapshotStore) -> Callable[[], tuple[float, float]]:
            def run() -> tuple[float, float]:
                nonlocal step
                step += 1
                t0 = clock()
                store.save(state, step=step)
                t1 = clock()
                loaded = store.load_latest()
                t2 = clock()
                assert loaded is not None and loaded.info.step == step
                return t1 - t0, t2 - t1

            return run

        arms: dict[str, Callable[[], tuple[float, float]]] = {
            "plain": plain,
            "json.dump": streamed,
            "store": store_arm(fast),
            "store+fsync": store_arm(synced),
        }
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in arms}
        for _ in range(WARMUP):
            for run in arms.values():
                run()
        loaded = fast.load_latest()
        assert loaded is not None and loaded.state == state  # same data back
        gc.collect()
        gc.disable()
        try:
            for _ in range(REPS):
                for name, run in arms.items():
                    times[name].append(run())
        finally:
            gc.enable()

    def med(name: str, part: int | None = None) -> float:
        values = [sum(t) if part is None else t[part] for t in times[name]]
        return statistics.median(values) * 1e3

    print(f"state: {size / 1e6:.2f} MB of JSON; median of {REPS} runs, arms interleaved")
    print(f"{'arm':<13}{'save ms':>10}{'load ms':>10}{'total ms':>10}{'ratio':>8}")
    base = med("plain")
    for name in arms:
        total = med(name)
        print(
            f"{name:<13}{med(name, 0):10.2f}{med(name, 1):10.2f}{total:10.2f}{total / base:7.2f}x"
        )
    ratio = med("store") / base
    fsync_ms = med("store+fsync") - med("store")
    print(f"fsyncs (file + directory, per save): {fsync_ms:.2f} ms")
    ok = ratio <= GOAL_RATIO
    print(
        f"RESULT bench_snapshot_speed: ratio={ratio:.2f}x (without fsync) "
        f"fsync=+{fsync_ms:.2f}ms goal ratio<={GOAL_RATIO}x plus fsyncs "
        f"{'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
