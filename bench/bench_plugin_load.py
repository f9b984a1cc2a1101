"""Plugin load: what installing pytest-agentchaos costs a suite that has no chaos tests.

Generates 500 plain test functions (10 files x 50 tests) in a temporary rootdir with its own
empty pytest.ini, then runs ``python -m pytest --collect-only -q -p no:cacheprovider`` there
with the plugin (arm ``on``) and with ``-p no:agentchaos`` (arm ``off``, the baseline),
interleaved in ABBA order, one round = one run of each arm. The other plugins installed in
the venv (hypothesis, faker, xdist, asyncio, ...) autoload in both arms, so the difference is
ours: importing the plugin, its options and ini keys, pytest_configure (profile registry,
seed) and the per-item marker check at collection.

Verdict: median(on) / median(off) of wall time <= 1.05 (child CPU time is printed too).
The plugin's real cost is small (~1-3 %) next to run-to-run noise on a shared machine, so
the number of rounds is sequential: at least MIN_ROUNDS, then more (up to MAX_ROUNDS and a
wall-time budget) while a bootstrap 90 % interval of the ratio still straddles the goal.
The verdict is always the point estimate; the interval is printed so a reader can tell a
real regression from a noisy machine.

Also checked, in a fresh subprocess: ``import pytest_agentchaos.plugin`` imports none of
torch, sentence_transformers, langgraph, pydantic_ai, agents.

Run: .venv/bin/python bench/bench_plugin_load.py
"""

from __future__ import annotations

import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILES = 10
TESTS_PER_FILE = 50
MIN_ROUNDS = 14  # per arm, after one warm-up run of each
MAX_ROUNDS = 40
BUDGET_S = 40.0  # stop adding rounds after this much measuring (keeps the script under ~60 s)
GOAL_RATIO = 1.05
HEAVY = ("torch", "sentence_transformers", "langgraph", "pydantic_ai", "agents")

PYTEST = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
ARMS = {"on": PYTEST, "off": [*PYTEST, "-p", "no:agentchaos"]}


def clean_env(pycache: Path | None = None) -> dict[str, str]:
    """The children's environment: no pytest overrides from the caller; bytecode cached.

    With PYTHONDONTWRITEBYTECODE set (as in some sandboxes) every run would recompile the
    editable package from source, a cost no installed wheel pays. Bytecode goes to a private
    PYTHONPYCACHEPREFIX instead, so nothing is written into the repository or the venv.
    """
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
    for f in range(FILES):
        body = [f'"""Generated module {f}."""\n']
        for t in range(TESTS_PER_FILE):
            body.append(f"\ndef test_{f}_{t}():\n    assert {t} + {f} == {t + f}\n")
        (root / f"test_gen_{f:02d}.py").write_text("".join(body), encoding="utf-8")


def run(cmd: list[str], root: Path, env: dict[str, str]) -> tuple[int, float]:
    """(wall ns, child CPU s) of one pytest run; fails loudly on a bad run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter_ns()
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    wall = time.perf_counter_ns() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    expected = f"{FILES * TESTS_PER_FILE} tests collected"
    if proc.returncode != 0 or expected not in proc.stdout:
        raise SystemExit(
            f"bad run {cmd}: rc={proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        )
    return wall, cpu


def check_arms_differ(root: Path, env: dict[str, str]) -> None:
    """The 'on' arm really loads the plugin and the 'off' arm really does not."""
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--chaos-list-profiles"]
    on = subprocess.run(base, cwd=root, env=env, capture_output=True, text=True)
    off = subprocess.run(
        [*base, "-p", "no:agentchaos"], cwd=root, env=env, capture_output=True, text=True
    )
    assert on.returncode == 0 and "chaos profiles" in on.stdout, on.stdout + on.stderr
    assert off.returncode != 0 and "--chaos-list-profiles" in off.stderr, off.stdout + off.stderr


def check_imports(env: dict[str, str]) -> bool:
    code = (
        "import importlib.util, json, sys\n"
        f"heavy = {HEAVY!r}\n"
        "installed = [m for m in heavy if importlib.util.find_spec(m) is not None]\n"
        "import pytest\n"
        "before = set(sys.modules)\n"
        "import pytest_agentchaos.plugin\n"
        "new = set(sys.modules) - before\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in heavy)\n"
        "lazy = sorted({m.split('.')[0] for m in new} & {'httpx', 'respx', 'freezegun'})\n"
        "print(json.dumps({'installed': installed, 'loaded': loaded, 'lazy': lazy,\n"
        "                  'new_modules': len(new)}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    info = json.loads(out.stdout)
    print(
        "import check: `import pytest_agentchaos.plugin` loads "
        f"{info['new_modules']} modules beyond pytest; "
        f"heavy modules loaded: {info['loaded'] or 'none'} "
        f"(of {', '.join(HEAVY)}; installed here: {info['installed'] or 'none'})"
    )
    print(f"  (informational) httpx/respx/freezegun loaded at import: {info['lazy'] or 'none'}")
    return not info["loaded"]


def ratio_interval(on: list[int], off: list[int], rng: random.Random) -> tuple[float, float]:
    """Bootstrap 90 % interval of median(on) / median(off)."""
    draws = sorted(
        statistics.median(rng.choices(on, k=len(on)))
        / statistics.median(rng.choices(off, k=len(off)))
        for _ in range(1000)
    )
    return draws[50], draws[949]


def main() -> int:
    imports_ok = check_imports(clean_env())
    rng = random.Random(0)
    walls: dict[str, list[int]] = {name: [] for name in ARMS}
    cpus: dict[str, list[float]] = {name: [] for name in ARMS}
    with tempfile.TemporaryDirectory(prefix="agentchaos-bench-") as tmp:
        root = Path(tmp) / "suite"
        root.mkdir()
        env = clean_env(Path(tmp) / "pycache")
        make_suite(root)
        check_arms_differ(root, env)
        for cmd in ARMS.values():  # warm-up: bytecode and assertion-rewrite caches, OS file cache
            run(cmd, root, env)
        start = time.perf_counter()
        rounds = 0
        while rounds < MAX_ROUNDS:
            order = ["on", "off"] if rounds % 2 == 0 else ["off", "on"]  # ABBA against drift
            for name in order:
                wall, cpu = run(ARMS[name], root, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
            rounds += 1
            if rounds >= MIN_ROUNDS:
                low, high = ratio_interval(walls["on"], walls["off"], rng)
                if not low <= GOAL_RATIO <= high or time.perf_counter() - start > BUDGET_S:
                    break

    med = {name: statistics.median(v) / 1e6 for name, v in walls.items()}
    cpu = {name: statistics.median(v) * 1e3 for name, v in cpus.items()}
    ratio = med["on"] / med["off"]
    cpu_ratio = cpu["on"] / cpu["off"]
    low, high = ratio_interval(walls["on"], walls["off"], rng)
    print(
        f"{FILES * TESTS_PER_FILE} tests, `pytest --collect-only -q`, "
        f"{rounds} interleaved rounds per arm"
    )
    for name in ARMS:
        q = statistics.quantiles(walls[name], n=4)
        print(
            f"  {name:<4} wall median {med[name]:7.1f} ms (IQR {q[0] / 1e6:.0f}-{q[2] / 1e6:.0f})"
            f"  cpu median {cpu[name]:7.1f} ms"
        )
    # Paired view: on/off within each round (adjacent runs) cancels slow drift of the machine.
    paired = statistics.median(a / b for a, b in zip(walls["on"], walls["off"], strict=True))
    print(
        f"  plugin cost: {med['on'] - med['off']:+.1f} ms wall, "
        f"{cpu['on'] - cpu['off']:+.1f} ms cpu; "
        f"ratio {ratio:.3f} (90% bootstrap interval {low:.3f}-{high:.3f}); "
        f"median per-round on/off {paired:.3f}"
    )
    ok = ratio <= GOAL_RATIO and imports_ok
    print(
        f"RESULT bench_plugin_load: on={med['on']:.0f}ms off={med['off']:.0f}ms ratio={ratio:.3f} "
        f"[90% CI {low:.3f}-{high:.3f}, cpu ratio {cpu_ratio:.3f}, {rounds} rounds] "
        f"heavy_imports={'none' if imports_ok else 'FOUND'} "
        f"goal ratio<={GOAL_RATIO} and no heavy imports {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
