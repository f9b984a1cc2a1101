"""``--junitxml`` carries each chaos test's profile, seed, verdicts, metrics and replay command
as ``<property>`` elements (issue 16, item 4)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import hypothesis.internal.observability  # noqa: F401 - keeps in-process runs fast
import pytest

from pytest_agentchaos.report.junit import junit_properties
from pytest_agentchaos.verdicts import Verdict

SUITE = """
import pytest

@pytest.mark.chaos(faults=[{"kind": "timeout", "tools": ["search"], "nth": 2}])
@pytest.mark.must_halt(max_steps=10)
def test_survives(chaos):
    search = chaos.wrap(lambda q: q, name="search")
    for q in "abc":
        try:
            search(q)
        except Exception:
            pass

@pytest.mark.must_halt(max_tool_calls=1)
def test_spends_too_much(chaos):
    search = chaos.wrap(lambda q: q, name="search")
    search("a")
    search("b")

def test_plain():
    pass
"""


def properties(pytester: pytest.Pytester, *args: str) -> dict[str, dict[str, list[str]]]:
    pytester.makepyfile(test_agent=SUITE)
    result = pytester.runpytest("--junitxml=out.xml", "--chaos-seed=9", "-p", "no:randomly", *args)
    result.assert_outcomes(passed=2, failed=1)
    root = ET.parse(pytester.path / "out.xml").getroot()
    found: dict[str, dict[str, list[str]]] = {}
    for case in root.iter("testcase"):
        props: dict[str, list[str]] = {}
        for prop in case.iter("property"):
            props.setdefault(prop.get("name", ""), []).append(prop.get("value", ""))
        found[case.get("name", "")] = props
    return found


def test_each_chaos_test_carries_its_run_as_properties(pytester: pytest.Pytester) -> None:
    found = properties(pytester)
    survives = found["test_survives"]
    assert survives["agentchaos.profile"] == ["none"]
    assert survives["agentchaos.outcome"] == ["passed"]
    assert survives["agentchaos.tool_calls"] == ["3"]
    assert survives["agentchaos.faults"] == ["timeout:1"]
    assert survives["agentchaos.verdict.must_halt"] == ["ok"]
    assert survives["agentchaos.loops"] == ["0"] and survives["agentchaos.repairs_ok"] == ["0"]
    assert survives["agentchaos.replay"] == ["pytest test_agent.py::test_survives --chaos-seed=9"]
    assert float(survives["agentchaos.virtual_seconds"][0]) >= 30  # the timeout's wait
    assert int(survives["agentchaos.test_seed"][0]) >= 0
    assert all(len(values) == 1 for values in survives.values())  # once, not per phase
    assert found["test_plain"] == {}  # not a chaos test


def test_a_failing_verdict_carries_its_explanation(pytester: pytest.Pytester) -> None:
    failing = properties(pytester)["test_spends_too_much"]
    assert failing["agentchaos.outcome"] == ["failed"]
    verdict = failing["agentchaos.verdict.must_halt"][0]
    assert verdict.startswith("FAIL: must_halt failed") and "max_tool_calls=1" in verdict
    assert failing["agentchaos.halted"] == ["max_tool_calls"]
    assert failing["agentchaos.halts"] == ["budget:max_tool_calls:1"]


def test_properties_cross_xdist_workers(pytester: pytest.Pytester) -> None:
    found = properties(pytester, "-n", "2")
    assert found["test_survives"]["agentchaos.faults"] == ["timeout:1"]
    assert found["test_spends_too_much"]["agentchaos.outcome"] == ["failed"]


def test_long_explanations_are_cut_and_values_are_strings() -> None:
    row = {"profile": "flaky", "seed": 3, "outcome": "failed", "faults": {"b": 2, "a": 1},
           "steps": 4, "tool_calls": 3, "model_calls": 1, "seconds": 1.5, "halted": [],
           "capped": ["langgraph.recursion_limit"]}  # fmt: skip
    props = dict(junit_properties(row, [Verdict("must_escape", False, "x" * 10_000)], "pytest t"))
    assert props["agentchaos.faults"] == "a:1,b:2"
    assert props["agentchaos.capped"] == "langgraph.recursion_limit"
    assert "agentchaos.halted" not in props
    assert len(props["agentchaos.verdict.must_escape"]) == len("FAIL: ") + 2000
    assert all(isinstance(v, str) for v in props.values())
