"""The new fault kinds as a user meets them through pytest: a ``lost_reply`` that names no
tools is one line when the profile or marker loads; a lost reply shows the tool ran and the
agent got a timeout; the quiet profile is listed and runs."""

from __future__ import annotations

import textwrap

import pytest

LOST = (
    "lost_reply runs the real tool: name the tools it may hit explicitly "
    '(tools = ["create_order", ...]), not a glob or all tools; '
)


def test_a_profile_whose_lost_reply_names_no_tools_is_one_usage_error_line(pytester):
    (pytester.path / "chaos_profiles").mkdir()
    (pytester.path / "chaos_profiles" / "side.toml").write_text(
        textwrap.dedent(
            """
            description = "lost replies everywhere"

            [[faults]]
            kind = "lost_reply"
            tools = "*"
            """
        )
    )
    pytester.makepyfile("def test_x(chaos):\n    pass\n")
    result = pytester.runpytest("--chaos-profile=side")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    (error,) = [line for line in result.stderr.lines if line.strip()]
    assert error.startswith("ERROR: pytest-agentchaos: --chaos-profile: ")
    assert error.endswith(f"side.toml: faults[0]: {LOST}got '*'")


def test_a_marker_whose_lost_reply_names_no_tools_is_a_collection_error_naming_the_test(
    pytester,
):
    pytester.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.chaos(faults=[{"kind": "lost_reply", "mode": "reset"}])
        def test_agent(chaos):
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    lines = result.stdout.lines
    at = lines.index("pytest-agentchaos: bad chaos marker")
    assert (
        lines[at + 1]
        == f"test_bad.py::test_agent: @pytest.mark.chaos: faults[0]: {LOST}got no tools"
    )
    result.stdout.no_fnmatch_line("*Traceback*")


def test_a_lost_reply_shows_the_tool_ran_and_the_agent_got_a_timeout(pytester):
    pytester.makepyfile(
        """
        import pytest

        placed = []

        def create_order(item):
            placed.append(item)
            return {"order_id": len(placed)}

        def agent(chaos):
            create = chaos.wrap(create_order)
            try:
                return create("lamp")
            except TimeoutError:
                return "timed out"

        @pytest.mark.chaos(faults=[
            {"kind": "lost_reply", "tools": ["create_order"], "mode": "timeout"}
        ])
        def test_order(chaos):
            assert agent(chaos) == "timed out"
            assert placed == ["lamp"]  # the order went through all the same
            (result,) = chaos.trace.tool_results()
            assert result.output == {"order_id": 1} and not result.ok
            assert chaos.clock.now() == 30
        """
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["PASSED  *::test_order  *faults=lost_reply:1 *vtime=30.0s*"])


def test_the_quiet_profile_runs_an_agent_that_reads_its_tool_s_answers(pytester):
    pytester.makepyfile(
        """
        def search(q):
            return {"status": "ok", "results": [q + str(i) for i in range(6)], "has_more": False}

        def test_agent(chaos):
            find = chaos.wrap(search)
            for i in range(60):
                out = find(f"q{i}")
                assert isinstance(out, dict) and "results" in out
        """
    )
    result = pytester.runpytest("-v", "--chaos-profile=quiet", "--chaos-seed=3")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["PASSED  *::test_agent  profile=quiet *faults=*partial_output:*"])
