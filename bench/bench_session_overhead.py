"""Session overhead: what the ``chaos`` fixture costs a session of 10,000 trivial chaos tests.

Generates 10,000 tests ``def test_N(chaos): pass`` (20 files x 500) in a temporary rootdir
with an empty pytest.ini and a conftest that provides a do-nothing ``chaos`` fixture when the
plugin is not loaded, then runs ``python -m pytest -q -p no:cacheprovider`` there with the
plugin (arm ``on``: every test builds, runs, judges and tears down a chaos run, and gets its
summary row) and with ``-p no:agentchaos`` (arm ``off``, the baseline: the same tests with
the stand-in fixture), interleaved ABBA, one round = one run of each arm, after one warm-up
run of each. The other plugins installed in the venv load in both arms.

Verdict: median(on) / median(off) of the wall time of the whole pytest process <= 2.0
(issue 26; it was 3.3 before). Also printed: the cost per chaos test (the difference of the
medians over 10,000) and the child CPU times.

Run: .venv/bin/python bench/bench_session_overhead.py   (~2-3 min)
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILES = 20
TESTS_PER_FILE = 500
TESTS = FILES * TESTS_PER_FILE
ROUNDS = 3  # per arm, after one warm-up run of each
GOAL_RATIO = 2.0

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
ARMS = {"on": PYTEST, "off": [*PYTEST, "-p", "no:agentchaos"]}

CONFTEST = '''\
import pytest


class _StandIn:
    """The baseline arm's ``chaos`` fixture: the same fixture request, doing nothing."""

    @pytest.fixture
    def chaos(self):
        yield None


def pytest_configure(config):
    if not config.pluginmanager.hasplugin("agentchaos"):
        config.pluginmanager.register(_StandIn(), "bench-chaos-stand-in")
'''


def clean_env(pycache: Path | None = None) -> dict[str, str]:
    """The children's environment: no pytest overrides from the caller; bytecode cached (in a
    private PYTHONPYCACHEPREFIX: nothing is written into the repository or the venv)."""
    env = dict(os.environ)
    for key in (
        "PYTEST_ADDOPTS",
        "PYTEST_PLUGINS",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
        "PYTHONDONTWRITEBYTECODE",
    ):
        env.pop(key, None)
    env["PYTHONHASHSEED"] = "0"
    if pycache is not None:
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def make_suite(root: Path) -> None:
    (root / "pytest.ini").write_text("", encoding="utf-8")
    (root / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    for f in range(FILES):
        body = [f'"""Generated module {f}."""\n']
        for t in range(TESTS_PER_FILE):
            body.append(f"\n\ndef test_{f}_{t}(chaos):\n    pass\n")
        (root / f"test_gen_{f:02d}.py").write_text("".join(body), encoding="utf-8")


def run(name: str, root: Path, env: dict[str, str]) -> tuple[int, float]:
    """(wall ns, child CPU s) of one pytest run; fails loudly on a bad run, or on an arm that
    is not what it says (the plugin's summary in ``on`` only)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter_ns()
    proc = subprocess.run(ARMS[name], cwd=root, env=env, capture_output=True, text=True)
    wall = time.perf_counter_ns() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = f"agentchaos: {TESTS} chaos tests" in proc.stdout
    if proc.returncode != 0 or f"{TESTS} passed" not in proc.stdout or summary != (name == "on"):
        raise SystemExit(
            f"bad run of arm {name}: rc={proc.returncode}\n{proc.stdout[-2000:]}\n"
            f"{proc.stderr[-2000:]}"
        )
    return wall, cpu


def main() -> int:
    walls: dict[str, list[int]] = {name: [] for name in ARMS}
    cpus: dict[str, list[float]] = {name: [] for name in ARMS}
    with tempfile.TemporaryDirectory(prefix="agentchaos-bench-") as tmp:
        root = Path(tmp) / "suite"
        root.mkdir()
        env = clean_env(Path(tmp) / "pycache")
        make_suite(root)
        for name in ARMS:  # warm-up: bytecode and assertion-rewrite caches, OS file cache
            run(name, root, env)
        for rounds in range(ROUNDS):
            order = ["on", "off"] if rounds % 2 == 0 else ["off", "on"]  # ABBA against drift
            for name in order:
                wall, cpu = run(name, root, env)
                walls[name].append(wall)
                cpus[name].append(cpu)

    med = {name: statistics.median(v) / 1e9 for name, v in walls.items()}
    cpu = {name: statistics.median(v) for name, v in cpus.items()}
    ratio = med["on"] / med["off"]
    per_test_ms = (med["on"] - med["off"]) / TESTS * 1e3
    print(f"{TESTS} trivial chaos tests, `pytest -q`, {ROUNDS} interleaved rounds per arm")
    for name in ARMS:
        shown = ", ".join(f"{w / 1e9:.1f}" for w in walls[name])
        print(
            f"  {name:<4} wall median {med[name]:6.1f} s ({shown})  cpu median {cpu[name]:6.1f} s"
        )
    print(
        f"  the plugin's cost per chaos test: {per_test_ms:+.2f} ms wall "
        f"({(cpu['on'] - cpu['off']) / TESTS * 1e3:+.2f} ms cpu); ratio {ratio:.2f}"
    )
    ok = ratio <= GOAL_RATIO
    print(
        f"RESULT bench_session_overhead: on={med['on']:.1f}s off={med['off']:.1f}s "
        f"ratio={ratio:.2f} per_test={per_test_ms:+.2f}ms "
        f"goal ratio<={GOAL_RATIO:g} {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
