"""Crash safety: a writer killed with SIGKILL at any moment never leaves a snapshot that loads
half written, and the newest complete snapshot is the one that comes back.

A forked child process saves growing states with steps 1, 2, 3, ... to one directory as fast as it
can (fsync on, keep=3), printing each step once ``save`` has returned. The parent kills it
after a random delay, then a fresh ``SnapshotStore`` loads the latest snapshot, which must be:
complete (its state is exactly the state of its step, and its SHA-256 matches the header's
checksum), never ``None`` once a save has finished, and the highest step written completely:
at least the last step the child reported, at most one more (a save that finished after its
last report). The next child resumes from the loaded step, as a restarted agent does. No
snapshot file may be seen damaged (the reader would skip it, but with atomic writes there is
none); temp files a killed writer left half written are counted.

SIGKILL stops the process, not the machine: this checks atomic rename and the reader's
checks, not the fsyncs (a power cut is not simulated).

Run: .venv/bin/python bench/bench_snapshot_crash.py [KILLS]   (default 200, ~10 s)
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, BinaryIO

from pytest_agentchaos.phoenix import SnapshotStore

KILLS = 200
KEEP = 3
MAX_DELAY_S = 0.04


def state_for(step: int) -> dict[str, Any]:
    """The state saved at ``step``: grows with the step (to ~250 KB), then starts over."""
    size = (step % 300) * 60
    return {
        "step": step,
        "items": [f"item-{step}-{i}" for i in range(size)],
        "scores": [i / 7 for i in range(size // 4)],
        "meta": {"label": f"state {step}", "parity": step % 2 == 0},
    }


def child(directory: str, out: int) -> None:
    """Resume from the latest snapshot and save steps after it until killed."""
    store = SnapshotStore(directory, keep=KEEP)
    loaded = store.load_latest()
    step = loaded.info.step if loaded is not None else 0
    os.write(out, b"ready\n")
    while True:
        step += 1
        store.save(state_for(step), step=step)
        os.write(out, f"{step}\n".encode())


def spawn(directory: str) -> tuple[int, BinaryIO]:
    """A forked writer (this process's imports already loaded: ~1 ms, where a fresh
    interpreter took ~300 ms) and the pipe it reports its saves on."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: save until killed, never return into the parent's code
        os.close(read)
        try:
            child(directory, write)
        finally:
            os._exit(1)
    os.close(write)
    return pid, os.fdopen(read, "rb")


def checksum_holds(path: Path, state: Any) -> bool:
    """The header's checksum is the SHA-256 of the loaded state's canonical JSON."""
    header = json.loads(path.read_bytes())
    text = json.dumps(
        state, sort_keys=True, ensure_ascii=True, allow_nan=False, separators=(",", ":")
    )
    return bool(header["checksum"] == "sha256:" + hashlib.sha256(text.encode()).hexdigest())


def main() -> int:
    kills = int(sys.argv[1]) if len(sys.argv) > 1 else KILLS
    rng = random.Random(20240611)
    counts = dict.fromkeys(
        (
            "kills",
            "loads",
            "none",
            "partial",
            "stale",
            "ahead",
            "bad_checksum",
            "damaged",
            "temp_left",
        ),
        0,
    )
    saved_at_least = 0  # the highest step a child reported as saved
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-snapshot-crash-") as directory:
        for _ in range(kills):
            pid, pipe = spawn(directory)
            assert pipe.readline() == b"ready\n"
            time.sleep(rng.uniform(0, MAX_DELAY_S))
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            reported = [int(line) for line in pipe.read().split()]
            pipe.close()
            counts["kills"] += 1
            if reported:
                saved_at_least = reported[-1]
            counts["temp_left"] += any(n.startswith(".tmp-") for n in os.listdir(directory))
            store = SnapshotStore(directory, keep=KEEP)
            loaded = store.load_latest()
            counts["damaged"] += bool(store.last_skipped)  # a file visible half written
            if loaded is None:
                counts["none"] += saved_at_least > 0
                continue
            counts["loads"] += 1
            step = loaded.info.step
            assert loaded.info.path is not None
            if loaded.state != state_for(step):
                counts["partial"] += 1
            elif not checksum_holds(loaded.info.path, loaded.state):
                counts["bad_checksum"] += 1
            if step < saved_at_least:
                counts["stale"] += 1
            elif step > saved_at_least + 1:
                counts["ahead"] += 1
            saved_at_least = max(saved_at_least, step)
    elapsed = time.perf_counter() - started
    print(f"kills {counts['kills']}, loads {counts['loads']}, highest step {saved_at_least}")
    print(
        f"partial loads {counts['partial']} (must be 0), checksum mismatches "
        f"{counts['bad_checksum']} (must be 0), None after a save {counts['none']} (must be 0)"
    )
    print(
        f"older than the last reported save {counts['stale']} (must be 0), more than one "
        f"step ahead {counts['ahead']} (must be 0)"
    )
    print(
        f"damaged snapshot files seen {counts['damaged']} (must be 0: writes are atomic); "
        f"kills that left a half-written temp file {counts['temp_left']}; {elapsed:.1f} s"
    )
    failures = sum(
        counts[k] for k in ("none", "partial", "stale", "ahead", "bad_checksum", "damaged")
    )
    ok = failures == 0 and counts["loads"] > 0
    print(
        f"RESULT bench_snapshot_crash: kills={counts['kills']} loads={counts['loads']} "
        f"partial={counts['partial']} none={counts['none']} stale={counts['stale']} "
        f"damaged={counts['damaged']} goal partial=none=stale=damaged=0 "
        f"{'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
