"""must_halt with the halt monitor, run like a user runs it: an agent that stops itself on
its monitor's decision passes; one the harness had to stop fails with the monitor's strikes;
by= and not_before= hold the decision to what was asked; a wrong argument is one line."""

from __future__ import annotations

import pytest

# Imported here, before pytester snapshots sys.modules: an inline run that imports the halt
# package first has it dropped when it ends, while a HaltPolicy made in that run lives on in
# the session's settings, and the next run's HaltMonitor refuses it as another class. Run
# alone, this file failed that way (in the whole suite an earlier file imports it first).
import pytest_agentchaos.halt  # noqa: F401

AGENT = """
import pytest
from pytest_agentchaos.halt import HaltMonitor

def spiral(chaos, answers, task="Find out why order 1234 is late"):
    model = chaos.model(lambda prompt: next(answers))
    monitor = HaltMonitor.for_run(chaos, task=task, embedder="lexical")
    for _ in range(1000):
        model("next?")
        if monitor.decision.halt:
            return monitor
    return monitor

def repeating():
    yield "Let me check the order status."
    while True:
        yield "The order is still pending."
"""


@pytest.fixture(autouse=True)
def _ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(agent=AGENT)


def test_an_agent_that_halts_on_its_monitors_decision_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_a="""
        import pytest
        from agent import spiral, repeating

        @pytest.mark.must_halt(max_model_calls=10, by="repetition", not_before=2)
        def test_halts(chaos):
            spiral(chaos, repeating())
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1)


def test_an_agent_the_budget_had_to_stop_fails_with_the_monitors_strikes(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_a="""
        import pytest
        from pytest_agentchaos.halt import HaltMonitor
        from agent import repeating

        @pytest.mark.must_halt(max_model_calls=6)
        def test_ignores_its_monitor(chaos):
            answers = repeating()
            model = chaos.model(lambda prompt: next(answers))
            HaltMonitor.for_run(chaos, task="Find out why order 1234 is late", embedder="lexical")
            for _ in range(1000):
                try:
                    model("next?")  # never asks its monitor
                except Exception:
                    pass
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*must_halt failed: the agent did not halt on its own within its budget*",
            "*hard budget max_model_calls=6 stopped it*",
            "*halt monitor (latest strikes):*",
            "*step *: repetition * strike(s), score *: step * repeats step *",
        ]
    )


def test_a_halt_by_other_heuristics_or_too_early_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_a="""
        import pytest
        from agent import spiral, repeating

        @pytest.mark.must_halt(max_model_calls=10, by=["drift", "apology"])
        def test_wrong_heuristic(chaos):
            spiral(chaos, repeating())

        @pytest.mark.must_halt(max_model_calls=10, not_before=8)
        def test_too_early(chaos):
            spiral(chaos, repeating())
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*the agent halted, but not as the marker requires*",
            "*it stopped, but not by a halt decision of drift, apology (step *: *repetition*",
            "*before not_before=8*a run stopped too early is a failure too*",
        ]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ('by="vibes"', "by: unknown heuristic 'vibes'; known: repetition, novelty, *"),
        ("by=[]", "by: a heuristic's name or a list of them, got []"),
        ("not_before=0", "not_before: must be >= 1, got 0"),
        ("until=3", "unknown argument 'until'; allowed: max_steps, *, by, not_before"),
    ],
)
def test_a_wrong_must_halt_argument_is_one_line(
    pytester: pytest.Pytester, args: str, message: str
) -> None:
    pytester.makepyfile(
        test_a=f"""
        import pytest

        @pytest.mark.must_halt({args})
        def test_x(chaos):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    assert result.ret != 0
    result.stdout.fnmatch_lines([f"*@pytest.mark.must_halt*{message}*"])
