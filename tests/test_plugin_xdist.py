"""pytest-xdist: workers share the controller's session seed, so a distributed run makes
exactly the fault decisions a serial run makes, and the controller reports every chaos test."""

from __future__ import annotations

import json
import re

import hypothesis.internal.observability  # noqa: F401
import pytest

# An in-process run unloads every module it imported when it ends, and hypothesis's plugin
# imports hypothesis at each terminal summary: importing it here (above) keeps each run fast.

pytest.importorskip("xdist")

TESTS = {f"test_agent_{i}": f"tool_{i}" for i in range(8)}

AGENTS_HEAD = """
import os
import pytest

def agent(chaos, name, workers_dir):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "serial")
    (workers_dir / f"{name}.{worker}").write_text(worker)
    tool = chaos.wrap(lambda i: {"i": i}, name=name)
    for i in range(60):
        try:
            tool(i)
        except Exception:
            chaos.clock.sleep(1)

@pytest.fixture
def workers_dir(pytestconfig):
    path = pytestconfig.rootpath / "workers"
    path.mkdir(exist_ok=True)
    return path

def test_not_chaos():
    pass
"""

AGENT_TEST = """
@pytest.mark.chaos({profile!r})
def {test}(chaos, workers_dir):
    agent(chaos, {tool!r}, workers_dir)
"""

AGENTS = AGENTS_HEAD + "".join(
    AGENT_TEST.format(profile="rate_limited" if i % 4 == 0 else "flaky", test=test, tool=tool)
    for i, (test, tool) in enumerate(TESTS.items())
)

ROW = re.compile(r"^PASSED  (\S+)  profile=.*$", re.M)


# Plugins these tests do not need, left out of the distributed runs: each worker would
# import them again (seconds per run). None of them touches what is tested here.
NOT_NEEDED = [f"-pno:{name}" for name in ("hypothesispytest", "faker", "anyio", "asyncio", "respx")]


@pytest.fixture(autouse=True)
def _setup(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agents=AGENTS)


def run_distributed(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-v", "-n", "2", "-p", "xdist", *NOT_NEEDED, *args)


def rows(result: pytest.RunResult) -> dict[str, str]:
    return {m.group(1): m.group(0) for m in ROW.finditer(result.stdout.str())}


def traces(directory) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def workers(pytester: pytest.Pytester) -> set[str]:
    return {p.suffix.lstrip(".") for p in (pytester.path / "workers").iterdir()}


def test_distributed_run_matches_serial_run_byte_for_byte(pytester):
    serial = pytester.runpytest(
        "-v", "--chaos-seed=123", "--chaos-trace-dir=serial", "-p", "no:asyncio"
    )
    serial.assert_outcomes(passed=9)
    for p in (pytester.path / "workers").iterdir():
        p.unlink()

    dist = run_distributed(pytester, "--chaos-seed=123", "--chaos-trace-dir=dist")
    dist.assert_outcomes(passed=9)
    assert workers(pytester) == {"gw0", "gw1"}  # really spread over two workers

    dist.stdout.fnmatch_lines(
        [
            "agentchaos: profile=none seed=123 (replay with --chaos-seed=123)",
            "*= agentchaos: 8 chaos tests =*",
        ]
    )
    dist.stdout.fnmatch_lines(["session seed 123: replay with --chaos-seed=123"])
    assert set(rows(dist)) == {f"test_agents.py::{t}" for t in TESTS}
    assert rows(dist) == rows(serial)

    serial_traces, dist_traces = traces(pytester.path / "serial"), traces(pytester.path / "dist")
    assert len(serial_traces) == 8
    assert dist_traces == serial_traces
    # the runs were worth comparing: faults fired, and differently in different tests
    kinds = [json.loads(b)["events"] for b in serial_traces.values()]
    fault_counts = [sum(e["type"] == "FaultInjected" for e in events) for events in kinds]
    assert all(fault_counts) and len(set(fault_counts)) > 1


def test_workers_use_the_controllers_random_seed(pytester):
    result = run_distributed(pytester, "--chaos-trace-dir=traces")
    result.assert_outcomes(passed=9)
    assert workers(pytester) == {"gw0", "gw1"}
    seed = int(re.search(r"^agentchaos: profile=none seed=(\d+) ", result.stdout.str(), re.M)[1])
    result.stdout.fnmatch_lines([f"session seed {seed}: replay with --chaos-seed={seed}"])
    metas = [json.loads(b)["meta"] for b in traces(pytester.path / "traces").values()]
    assert len(metas) == 8
    assert {m["session_seed"] for m in metas} == {seed}
    assert len(rows(result)) == 8
