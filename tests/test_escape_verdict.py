"""must_escape: judged on the loops the harness itself sees, with a failure that explains."""

from __future__ import annotations

import pytest

from pytest_agentchaos.escape.observer import LoopObserver
from pytest_agentchaos.inject import Chaos
from pytest_agentchaos.trace import Detection, Intervention, Trace
from pytest_agentchaos.verdicts import must_escape


def run(actions: list[str], **marks: object) -> Trace:
    """A traced run: each action is a tool call with that argument ('@node' = a node visit)."""
    with Chaos.create() as chaos:
        LoopObserver.watch(chaos.trace)
        tool = chaos.wrap(lambda q: "no results", name="search")
        for action in actions:
            if action.startswith("@"):
                chaos.step(action[1:])
            elif action.startswith("!"):
                chaos.session.record(Intervention, action=action[1:], detail={})
            else:
                tool(action)
    return chaos.trace


def test_a_loop_broken_in_time_passes() -> None:
    trace = run(["a"] * 4 + ["b", "c", "d"])  # detected at the third "a", broken at "b"
    verdict = must_escape(trace, within_steps=2)
    assert verdict.ok, verdict.explanation
    assert verdict.explanation.startswith("must_escape ok: 1 loop(s) detected and broken")


def test_a_loop_never_broken_fails_and_explains() -> None:
    trace = run(["x", "y"] + ["a", "b", "c"] * 4 + ["!retry", "!backoff"] + ["a", "b", "c"])
    verdict = must_escape(trace)
    assert not verdict.ok
    lines = verdict.explanation.splitlines()
    assert lines[0] == "must_escape failed: the agent did not escape its loop"
    assert lines[1] == (
        "  - loop #1 [repeat]: search(q='a') -> ok -> search(q='b') -> ok -> search(q='c') -> ok "
        "repeated 3x (period 3); began at step 3, detected at step 11; never broken"
    )
    assert lines[2] == "  interventions tried: retry@14, backoff@14"
    assert lines[3].startswith("  the run ended completed at step 17")


def test_breaking_too_late_fails_with_within_steps() -> None:
    trace = run(["a"] * 10 + ["b"])
    assert must_escape(trace).ok
    verdict = must_escape(trace, within_steps=3)
    assert not verdict.ok
    assert "broken only at step 11, 8 steps after detection (within_steps=3)" in verdict.explanation


def test_no_loop_is_not_exercised_and_fails_only_when_required() -> None:
    trace = run(["a", "b", "c"])
    verdict = must_escape(trace, require_loop=True)
    assert not verdict.ok and "nothing to escape: no loop arose" in verdict.explanation
    assert verdict.outcome == "fail" and not verdict.exercised
    idle = must_escape(trace)
    assert (idle.ok, idle.outcome) == (True, "not_exercised")
    assert idle.explanation.startswith("must_escape not exercised: no loop arose in this run")


def test_a_ring_of_nodes_left_by_an_escape_edge_passes() -> None:
    trace = run(["@A", "@B", "@C"] * 3 + ["@D", "@E"])
    verdict = must_escape(trace)
    assert verdict.ok, verdict.explanation  # the ring A -> B -> C was left for D -> E
    loops = [d for d in trace.of_type(Detection) if d.kind == "loop"]
    assert [(d.detail["loop_kind"], d.detail["period"]) for d in loops] == [("repeat", 3)]
    assert loops[0].detail["block"] == ["@A", "@B", "@C"]


def test_a_ring_of_nodes_never_left_fails() -> None:
    verdict = must_escape(run(["@A", "@B", "@C"] * 6))
    assert not verdict.ok
    assert "@A -> @B -> @C repeated" in verdict.explanation


def test_a_run_stopped_by_a_budget_did_not_escape(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.chaos(max_steps=20)
        @pytest.mark.must_escape
        def test_stuck(chaos):
            search = chaos.wrap(lambda q: "nothing", name="search")
            while True:
                try:
                    search("same")
                except Exception:
                    pass
        """
    )
    result = pytester.runpytest("--chaos-seed=4")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "must_escape failed: the agent did not escape its loop",
            "  - hard budget max_steps=20 stopped the run at step 20: it did not finish",
            "  - loop #1 [[]repeat[]]: search(q='same') -> ok repeated * (period 1); "
            "began at step 1, detected at step 3; never broken",
            "  interventions tried: none recorded (is the agent running an escape stack?)",
            "  the run ended halted at step 20*",
            "replay: pytest test_a_run_stopped_by_a_budget_did_not_escape.py::test_stuck "
            "--chaos-seed=4",
        ]
    )


def test_profile_loop_policy_is_used_and_validated(pytester: pytest.Pytester) -> None:
    pytester.mkdir("chaos_profiles")
    (pytester.path / "chaos_profiles" / "patient.toml").write_text(
        "[escape.loops]\nrepeats_period_1 = 8\n"
    )
    (pytester.path / "chaos_profiles" / "broken.toml").write_text(
        "[escape.loops]\nrepeat_period_1 = 8\n"
    )
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.chaos("patient")
        @pytest.mark.must_escape(require_loop=False)
        def test_five_identical_calls_are_no_loop_here(chaos):
            search = chaos.wrap(lambda q: "nothing", name="search")
            for _ in range(5):
                search("same")
            assert not [e for e in chaos.trace if getattr(e, "kind", "") == "loop"]

        """
    )
    pytester.makepyfile(
        test_broken="""
        import pytest

        @pytest.mark.chaos("broken")
        @pytest.mark.must_escape
        def test_bad_policy(chaos):
            pass
        """
    )
    # the profile a marker names is loaded at collection: its bad table is a collection error
    result = pytester.runpytest("--continue-on-collection-errors")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*broken.toml: [[]escape.loops[]]: unknown key 'repeat_period_1'*"]
    )


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("must_escape(3)", "takes keyword arguments only"),
        ("must_escape(within_steps=-1)", "within_steps: must be >= 0, got -1"),
        ("must_escape(require_loop='yes')", "require_loop: expected a boolean"),
    ],
)
def test_bad_must_escape_arguments(pytester: pytest.Pytester, marker: str, message: str) -> None:
    pytester.makepyfile(f"import pytest\n\n@pytest.mark.{marker}\ndef test_x(chaos):\n    pass\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([f"*@pytest.mark.must_escape: {message}*"])
