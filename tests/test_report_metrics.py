"""A run's numbers read from its trace (report.metrics), and the per-profile summary lines that
total them (issue 16, item 7)."""

from __future__ import annotations

import hypothesis.internal.observability  # noqa: F401 - keeps in-process runs fast
import pytest

from pytest_agentchaos import Chaos
from pytest_agentchaos.report.metrics import run_metrics, total_metrics
from pytest_agentchaos.report.terminal import _stack_line
from pytest_agentchaos.trace.events import Detection, Halt, Repair


def test_loops_repairs_and_halts_are_counted_from_the_trace() -> None:
    with Chaos.create(faults=[{"kind": "timeout", "tools": ["book"], "nth": 2}]) as chaos:
        book = chaos.wrap(lambda seats: seats, name="book")
        session = chaos.session
        session.record(Detection, detector="loop_observer", kind="loop",
                       detail={"episode": 1, "detected_step": 3})  # fmt: skip
        session.record(Detection, detector="loop_observer", kind="loop_broken",
                       detail={"episode": 1, "broken_step": 8})  # fmt: skip
        session.record(Detection, detector="loop_observer", kind="loop",
                       detail={"episode": 2, "detected_step": 10})  # fmt: skip
        session.record(Detection, detector="halt_monitor", kind="repetition", detail={})
        session.record(Repair, tool="book", ok=True, detail={"index": 1})
        book(seats=2)
        session.record(Repair, tool="book", ok=True, detail={"index": 2})
        with pytest.raises(Exception, match="timed out"):
            book(seats=3)  # repaired, and failed all the same
        session.record(Repair, tool="book", ok=False, detail={"index": 3})
        monitor = {"by": "halt_monitor", "fired": ["repetition", "novelty"]}
        session.record(Halt, reason="monitor", detail=monitor)
        cap = {"by": "framework", "framework": "langgraph", "cap": "recursion_limit"}
        session.record(Halt, reason="cap", hard=True, detail=cap)
    m = run_metrics(chaos.trace)
    assert (m["loops"], m["escaped"], m["steps_to_escape"]) == (2, 1, [5])
    assert (m["repairs_ok"], m["repairs_declined"], m["repairs_failed"]) == (1, 1, 1)
    assert m["halts"] == {"repetition": 1, "novelty": 1, "cap:langgraph.recursion_limit": 1}
    assert m["faults"] == {"timeout": 1} and m["tool_calls"] == 2


def test_totals_add_runs_up_and_take_the_median_escape_over_all_escapes() -> None:
    runs = [
        {"loops": 2, "escaped": 2, "steps_to_escape": [1, 9], "repairs_ok": 1, "halts": {"a": 1}},
        {
            "loops": 1,
            "escaped": 1,
            "steps_to_escape": [4],
            "repairs_declined": 2,
            "halts": {"a": 2, "b": 1},
        },  # fmt: skip
        {},  # a row from before metrics existed
    ]
    total = total_metrics(runs)
    assert (total["loops"], total["escaped"], total["median_steps_to_escape"]) == (3, 3, 4)
    assert (total["repairs_ok"], total["repairs_declined"], total["repairs_failed"]) == (1, 2, 0)
    assert total["halts"] == {"a": 3, "b": 1}
    line = _stack_line(total)
    assert line == (
        "loops detected 3, escaped 3, median 4 steps to escape; repairs 1 ok, 2 declined, "
        "0 failed; halts (by heuristic, budget or cap): a:3,b:1"
    )
    assert _stack_line(total_metrics([{}])) == ""  # nothing done: no line


def test_the_summary_totals_what_the_stacks_did_per_profile(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest
        from pytest_agentchaos.escape import Supervisor

        @pytest.mark.chaos(faults=[{"kind": "http_error", "status": 503, "tools": ["f"],
                                    "first": 6}])
        @pytest.mark.must_escape
        def test_escapes(chaos):
            supervisor = Supervisor.for_run(chaos)
            f = chaos.wrap(lambda: 1, name="f")
            for _ in range(20):
                try:
                    supervisor.call("f", f)
                    break
                except Exception:
                    pass

        @pytest.mark.must_halt(max_tool_calls=2)
        def test_stopped(chaos):
            f = chaos.wrap(lambda: 1, name="g")
            for _ in range(5):
                f()
        """
    )
    result = pytester.runpytest("--chaos-seed=3", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "profile=none: 2 chaos tests (1 failed, 1 passed); survived 1/2; *",
            "  loops detected 1, escaped 1, median * steps to escape; "
            "halts (by heuristic, budget or cap): budget:max_tool_calls:1",
        ]
    )
