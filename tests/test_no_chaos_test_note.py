"""A session asked for chaos that ran no chaos test says so in one line, instead of nothing:
`pytest --chaos-profile=flaky` on a suite without the chaos fixture or a chaos marker used to
print nothing of the plugin's, and a user took the silence for a suite that survived chaos."""

from __future__ import annotations

import pytest

from pytest_agentchaos.plugin.summary import NO_CHAOS_TEST

PLAIN = """
def search(query):
    return [query]


def test_plain():
    assert search("louvre") == ["louvre"]
"""

CHAOS = """
def test_chaos(chaos):
    assert chaos.wrap(lambda q: [q], name="search")("louvre") == ["louvre"]
"""


def ini(pytester: pytest.Pytester, *lines: str) -> None:
    body = "\n".join(["[pytest]", "asyncio_default_fixture_loop_scope = function", *lines])
    pytester.makeini(body + "\n")


def _says_none_ran(result: pytest.RunResult) -> bool:
    return NO_CHAOS_TEST in result.stdout.str()


@pytest.mark.parametrize(
    "args", [["--chaos-profile=flaky"], ["--chaos-seed=3"], ["--agentchaos-runs=2"]]
)
def test_a_chaos_option_on_a_suite_without_chaos_tests_says_so(
    pytester: pytest.Pytester, args: list[str]
) -> None:
    ini(pytester)
    pytester.makepyfile(test_plain=PLAIN)
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=1)
    assert result.ret == 0  # a note, not a failure
    assert _says_none_ran(result), result.stdout.str()


def test_a_profile_in_the_ini_counts_as_asked(pytester: pytest.Pytester) -> None:
    ini(pytester, "chaos_profile = flaky")
    pytester.makepyfile(test_plain=PLAIN)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert _says_none_ran(result)


def test_a_suite_with_a_chaos_test_does_not_say_it(pytester: pytest.Pytester) -> None:
    ini(pytester)
    pytester.makepyfile(test_plain=PLAIN, test_chaos=CHAOS)
    result = pytester.runpytest("--chaos-profile=flaky", "--chaos-seed=1")
    result.assert_outcomes(passed=2)
    assert not _says_none_ran(result)
    result.stdout.fnmatch_lines(["*agentchaos: 1 chaos test*"])


def test_a_failing_chaos_test_does_not_say_it_either(pytester: pytest.Pytester) -> None:
    ini(pytester)
    pytester.makepyfile(
        test_chaos="""
import pytest


@pytest.mark.must_halt(max_steps=3)
def test_runaway(chaos):
    tool = chaos.wrap(lambda q: q, name="search")
    while True:
        tool("x")
"""
    )
    result = pytester.runpytest("--chaos-profile=flaky", "--chaos-seed=1")
    result.assert_outcomes(failed=1)
    assert not _says_none_ran(result)


def test_without_any_chaos_option_the_plugin_stays_silent(pytester: pytest.Pytester) -> None:
    """A plain suite the user never asked to put under chaos gets no note from us."""
    ini(pytester)
    pytester.makepyfile(test_plain=PLAIN)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert not _says_none_ran(result)
    assert "no chaos test" not in result.stdout.str()


def test_collect_only_does_not_say_it(pytester: pytest.Pytester) -> None:
    """Nothing ran under --collect-only: the note would be about a run that did not happen."""
    ini(pytester)
    pytester.makepyfile(test_plain=PLAIN)
    result = pytester.runpytest("--co", "--chaos-profile=flaky")
    assert result.ret == 0
    assert not _says_none_ran(result)


def test_under_xdist_the_workers_chaos_tests_count(pytester: pytest.Pytester) -> None:
    """The chaos tests ran in the workers: the controller, which prints the summary, must not
    take its own empty hands for a session without chaos tests."""
    pytest.importorskip("xdist")
    ini(pytester)
    pytester.makepyfile(test_plain=PLAIN, test_chaos=CHAOS)
    result = pytester.runpytest_subprocess(
        "-p", "xdist", "-n", "2", "--chaos-profile=flaky", "--chaos-seed=1", timeout=120
    )
    result.assert_outcomes(passed=2)
    assert not _says_none_ran(result)
    pytester.makepyfile(test_chaos="def test_other():\n    pass\n")
    result = pytester.runpytest_subprocess(
        "-p", "xdist", "-n", "2", "--chaos-profile=flaky", "--chaos-seed=1", timeout=120
    )
    result.assert_outcomes(passed=2)
    assert _says_none_ran(result)
