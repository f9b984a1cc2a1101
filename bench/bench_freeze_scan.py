"""Freezing time in a process that has loaded the semantic and framework extras.

Each chaos test with frozen time starts freezegun, which looks through every loaded module for
names bound to the real time functions. freezegun's own scan calls ``dir()`` and ``getattr``
on each module: on transformers' lazy modules that lists (and, the first time, imports) every
model class they could load. The plugin reads each module's ``__dict__`` instead
(``pytest_agentchaos.clock.module_scan``). This bench loads what a test session of an agent
using the extras loads (the sentence model's stack, LangChain / LangGraph, pydantic-ai, the
OpenAI Agents SDK, the provider SDKs), then times one install + uninstall of frozen time, the
plugin's way and freezegun's own way, interleaved, in the same process.

Baseline: freezegun's own scan (``freeze_time(...).start()`` / ``stop()``) on the same modules.
Verdict: the plugin's install + uninstall takes <= 0.25x the baseline (median of the rounds).
The first install of each arm is printed too: the first chaos test of a process pays it.

Run: .venv/bin/python bench/bench_freeze_scan.py
"""

from __future__ import annotations

import contextlib
import datetime as dt
import statistics
import sys
import time

import pytest  # noqa: F401  (a pytest process's modules)

from pytest_agentchaos.clock import VirtualClock
from pytest_agentchaos.clock import patch as clock_patch

# freezegun rebinds module-level names bound to the real clock: the bench's own is in a tuple
_REAL = (time.perf_counter,)
GOAL = 0.25
ROUNDS = 15

for _name in (
    "sentence_transformers",
    "torch",
    "langchain_core",
    "langgraph",
    "pydantic_ai",
    "agents",
    "openai",
    "anthropic",
    "hypothesis",
    "xdist",
    "pytest_agentchaos.plugin",
):
    with contextlib.suppress(ImportError):
        __import__(_name)


def plugin_way() -> float:
    start = _REAL[0]()
    clock_patch.install(VirtualClock(), freeze=True).uninstall()
    return _REAL[0]() - start


def freezegun_way() -> float:
    from freezegun import freeze_time

    start = _REAL[0]()
    freezer = freeze_time(dt.datetime(2025, 1, 1), real_asyncio=True)
    freezer.start()
    freezer.stop()
    return _REAL[0]() - start


def main() -> int:
    loaded = len(sys.modules)
    missing = [m for m in ("transformers", "langchain_core", "agents") if m not in sys.modules]
    first_plugin = plugin_way()  # before freezegun's own scan imports what it lists
    first_freezegun = freezegun_way()
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(ROUNDS):
        ours.append(plugin_way())
        theirs.append(freezegun_way())
    median_ours = statistics.median(ours)
    median_theirs = statistics.median(theirs)
    ratio = median_ours / median_theirs
    print(f"modules loaded: {loaded} (after freezegun's own scan: {len(sys.modules)})")
    if missing:
        print(f"not installed (install the semantic and frameworks extras): {', '.join(missing)}")
    print(
        f"first install+uninstall: plugin {first_plugin * 1e3:.0f} ms, freezegun's own scan "
        f"{first_freezegun * 1e3:.0f} ms"
    )
    print(
        f"median of {ROUNDS} (interleaved): plugin {median_ours * 1e3:.1f} ms, freezegun's own "
        f"scan {median_theirs * 1e3:.1f} ms"
    )
    verdict = "PASS" if ratio <= GOAL and not missing else "FAIL"
    print(
        f"RESULT bench_freeze_scan: plugin={median_ours * 1e3:.1f}ms "
        f"freezegun={median_theirs * 1e3:.1f}ms ratio={ratio:.3f} "
        f"first_plugin={first_plugin * 1e3:.0f}ms first_freezegun={first_freezegun * 1e3:.0f}ms "
        f"goal ratio<={GOAL} {verdict}"
    )
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
