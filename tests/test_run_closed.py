"""A wrapped tool, model or agent belongs to its chaos run: called after the run ended it
raises ``RunClosed`` naming the test, instead of injecting the ended run's faults into another
test and writing into a finished trace."""

from __future__ import annotations

import pytest

from pytest_agentchaos import Chaos, RunClosed
from pytest_agentchaos.inject.intercept import Interceptor


def test_every_seam_refuses_calls_after_its_run_closed() -> None:
    chaos = Chaos.create(faults=[{"kind": "http_error", "nth": [2]}], test_id="t.py::test_a")
    tool = chaos.wrap(lambda q: q.upper(), name="search")
    model = chaos.model(lambda prompt: "answer", name="planner")
    core = Interceptor(chaos.session, "triage", channel="model", agent="Triage")
    assert tool("x") == "X"
    with chaos:
        pass  # the run ends and is closed
    events = len(chaos.trace)
    for call in (lambda: tool("y"), lambda: model("p"), lambda: core.call({}, lambda m: "ok")):
        with pytest.raises(RunClosed, match=r"chaos run of test t\.py::test_a, which has ended"):
            call()
    with pytest.raises(RunClosed, match="chaos.step"):
        chaos.step("node")
    assert len(chaos.trace) == events  # nothing written into the finished trace


def test_a_leaked_wrapper_fails_the_later_test_that_uses_it_and_names_its_own(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import pytest

        LEAKED = {}

        def test_a_wraps_and_keeps(chaos):
            LEAKED["tool"] = chaos.wrap(lambda q: "hit " + q, name="search")
            assert LEAKED["tool"]("x") == "hit x"

        def test_b_plain_test_uses_the_leaked_tool():
            LEAKED["tool"]("y")

        @pytest.mark.chaos(faults=[{"kind": "timeout", "tools": ["search"]}])
        def test_c_another_chaos_test_uses_it(chaos):
            LEAKED["tool"]("z")
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        ["*RunClosed: 'search' was wrapped by the chaos run of test "
         "*::test_a_wraps_and_keeps, which has ended*"]
    )  # fmt: skip
