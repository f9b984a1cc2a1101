"""``chaos(explore=False)``: a test whose assertions name the faults it declares opts out of
``--chaos-explore``; it runs once, ordinarily, and the summary and the report say it was not
searched and why. A wrong value is one collection error."""

from __future__ import annotations

import json

import jsonschema
import pytest

from pytest_agentchaos.report.artifacts import schema_path

# The test asserts on the fault it declares (a timeout on the first search): any other
# schedule breaks the assertion, not the agent. Each run of the body leaves a line in runs.txt.
FAULT_SPECIFIC = """
import pytest
from pathlib import Path

def fetch(q):
    return [q]

@pytest.mark.chaos({marker})
def test_agent_reports_the_timeout(chaos):
    with Path("runs.txt").open("a") as out:
        out.write("ran\\n")
    tool = chaos.wrap(fetch, name="search")
    with pytest.raises(TimeoutError):
        tool("louvre")
"""

DECLARED = 'faults=[{"kind": "timeout", "tools": ["search"]}]'


def _runs(pytester: pytest.Pytester) -> int:
    return len((pytester.path / "runs.txt").read_text().splitlines())


def test_without_the_opt_out_the_search_breaks_a_fault_specific_assertion(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_agent=FAULT_SPECIFIC.format(marker=DECLARED))
    result = pytester.runpytest("--chaos-explore=20", "--chaos-seed=3")
    result.assert_outcomes(failed=1)
    # with no fault at all it fails the same way: the search says so, and names the opt-out
    result.stdout.fnmatch_lines(
        [
            "pytest-agentchaos: --chaos-explore: test_agent.py::test_agent_reports_the_timeout: "
            "a schedule of * fault(s) failed (error Failed) after * attempt(s); shrunk to 0 "
            "fault(s) in * more attempt(s)",
            "Failed: DID NOT RAISE*",
            "it fails the same way with no fault at all: * chaos(explore=False) keeps it out of "
            "searches",
            "pin it as a regression test:",
            "@pytest.mark.chaos(schedule=[[][]], seed=*)",
        ]
    )
    assert _runs(pytester) > 1


def test_explore_false_runs_the_test_once_and_says_it_was_not_searched(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_agent=FAULT_SPECIFIC.format(marker=f"{DECLARED}, explore=False"))
    result = pytester.runpytest("--chaos-explore=20", "--chaos-seed=3", "--chaos-report-dir=out")
    result.assert_outcomes(passed=1)
    assert _runs(pytester) == 1
    result.stdout.fnmatch_lines(
        [
            "*- agentchaos: 1 chaos test(s) not searched -*",
            "test_agent.py::test_agent_reports_the_timeout: ran once, not searched: its chaos "
            "marker says explore=False",
        ]
    )
    index = json.loads((pytester.path / "out" / "index.json").read_text())
    jsonschema.validate(index, json.loads(schema_path("index").read_text(encoding="utf-8")))
    (entry,) = index["tests"]
    assert entry["not_searched"] == "its chaos marker says explore=False"
    assert not (pytester.path / ".agentchaos").exists()


def test_under_xdist_the_controller_says_which_tests_were_not_searched(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_agent=FAULT_SPECIFIC.format(marker=f"{DECLARED}, explore=False"))
    result = pytester.runpytest_subprocess(
        "-p", "xdist", "-n", "2", "--chaos-explore=20", "--chaos-seed=3", timeout=120
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*- agentchaos: 1 chaos test(s) not searched -*",
            "test_agent.py::test_agent_reports_the_timeout: ran once, not searched: *",
        ]
    )


def test_explore_false_says_nothing_when_no_search_was_asked_for(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_agent=FAULT_SPECIFIC.format(marker=f"{DECLARED}, explore=False"))
    result = pytester.runpytest("--chaos-seed=3", "--chaos-report-dir=out")
    result.assert_outcomes(passed=1)
    assert "not searched" not in result.stdout.str()
    (entry,) = json.loads((pytester.path / "out" / "index.json").read_text())["tests"]
    assert "not_searched" not in entry


def test_a_closer_explore_wins_over_a_module_wide_opt_out(pytester: pytest.Pytester) -> None:
    # the module opts out; the one test that asks for a search by its own marker is searched
    pytester.makepyfile(
        test_agent="pytestmark = [__import__('pytest').mark.chaos(explore=False)]\n"
        + FAULT_SPECIFIC.format(marker=f"{DECLARED}, explore=5")
        + """
@pytest.mark.chaos(faults=[{"kind": "timeout", "tools": ["lookup"]}])
def test_lookup_reports_the_timeout(chaos):
    with pytest.raises(TimeoutError):
        chaos.wrap(fetch, name="lookup")("louvre")
"""
    )
    result = pytester.runpytest("--chaos-explore=20", "--chaos-seed=3")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*--chaos-explore: test_agent.py::test_agent_reports_the_timeout:*",
            "test_agent.py::test_lookup_reports_the_timeout: ran once, not searched: *"
            "explore=False",
        ]
    )


def test_pinned_and_xfail_tests_are_said_not_searched_too(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        @pytest.mark.chaos(schedule=[{"target": "search", "call": 1, "kind": "timeout"}])
        def test_pinned(chaos):
            with pytest.raises(TimeoutError):
                chaos.wrap(lambda q: q, name="search")("louvre")

        @pytest.mark.xfail(reason="gives up on the first timeout")
        @pytest.mark.chaos(faults=[{"kind": "timeout", "tools": ["search"]}])
        def test_known_bug(chaos):
            chaos.wrap(lambda q: q, name="search")("louvre")
        """
    )
    result = pytester.runpytest("--chaos-explore=20", "--chaos-seed=3")
    result.assert_outcomes(passed=1, xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "*- agentchaos: 2 chaos test(s) not searched -*",
            "test_agent.py::test_known_bug: ran once, not searched: it is marked xfail *",
            "test_agent.py::test_pinned: ran once, not searched: its schedule is pinned *",
        ]
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "must be >= 1, got 0 (explore=False: never search this test)"),
        ("True", "expected False (never search this test) or an integer >= 1, got True"),
        ("'off'", "expected False (never search this test) or an integer >= 1, got 'off'"),
        ("100001", "must be <= 100000, got 100001"),
    ],
)
def test_a_wrong_explore_value_is_one_collection_error(
    pytester: pytest.Pytester, value: str, message: str
) -> None:
    pytester.makepyfile(test_agent=FAULT_SPECIFIC.format(marker=f"{DECLARED}, explore={value}"))
    result = pytester.runpytest("--chaos-explore=20")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "test_agent.py::test_agent_reports_the_timeout: @pytest.mark.chaos: explore: "
            + message.replace("[", "[[]")
        ]
    )
    assert not (pytester.path / "runs.txt").exists()
