"""The chaos markers: what @pytest.mark.chaos / must_halt / must_escape / must_repair do,
how they merge, and the collection errors bad arguments give."""

from __future__ import annotations

import hypothesis.internal.observability  # noqa: F401
import pytest

# An in-process run unloads every module it imported when it ends, and hypothesis's plugin
# imports hypothesis at each terminal summary: importing it here (above) keeps each run fast.

EPOCH = 1735689600.0  # 2025-01-01T00:00:00Z: where frozen time starts in a chaos test


@pytest.fixture(autouse=True)
def _ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


# -- faults, profiles, seeds and budgets from the marker ------------------------------------


def test_marker_fault_timeout_on_the_first_call(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.chaos(faults=[{"kind": "timeout", "nth": 1, "seconds": 5}])
        def test_timeout(chaos):
            calls = []
            tool = chaos.wrap(lambda q: calls.append(q) or "ok", name="search")
            with pytest.raises(TimeoutError, match="search timed out after 5s"):
                tool("a")
            assert calls == []  # an injected failure never reaches the real tool
            assert tool("b") == "ok"
            assert calls == ["b"]
            assert chaos.clock.now() == 5
        """
    )
    result = pytester.runpytest("-v", "--chaos-seed=1")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["PASSED  *::test_timeout  profile=none *faults=timeout:1 tool_calls=2 *vtime=5.0s *"]
    )


def test_marker_faults_apply_before_profile_faults(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.chaos("outage", faults=[{"kind": "timeout", "nth": 1}])
        def test_order(chaos):
            assert [f.kind.name for f in chaos.plan.faults] == ["timeout", "http_error"]
            tool = chaos.wrap(lambda: "ok", name="api")
            with pytest.raises(TimeoutError):   # the marker's fault wins the first call
                tool()
            with pytest.raises(Exception) as info:  # then the profile's outage (t=30s < 120s)
                tool()
            assert info.value.status == 503
        """
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*profile=outage *faults=timeout:1,http_error:1 *"])


def test_positional_profile(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.chaos("flaky")
        def test_flaky(chaos):
            assert chaos.profile.name == "flaky"
            assert chaos.budgets.max_steps == 500

        def test_default(chaos):
            assert chaos.profile.name == "rate_limited"
        """
    )
    result = pytester.runpytest("-v", "--chaos-profile=rate_limited")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "PASSED  *::test_default  profile=rate_limited *",  # sorted by node id
            "PASSED  *::test_flaky  profile=flaky *",
        ]
    )


def test_marker_seed_pins_the_test_seed(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.chaos(seed=5)
        def test_pinned(chaos):
            assert chaos.seed == 5

        def test_free(chaos):
            print("FREE", chaos.seed)
        """
    )
    for session_seed in ("1", "2"):
        result = pytester.runpytest("-v", f"--chaos-seed={session_seed}", "-s")
        result.assert_outcomes(passed=2)
        result.stdout.fnmatch_lines(["PASSED  *::test_pinned  profile=none test_seed=5 *"])
        result.stdout.no_fnmatch_line("FREE 5")


def test_marker_budgets_override_profile_budgets(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.chaos("flaky", max_steps=3, max_tokens=50)
        def test_budgets(chaos):
            assert chaos.budgets.max_steps == 3          # the marker's
            assert chaos.budgets.max_seconds == 3600     # the profile's, kept
            assert chaos.budgets.max_tokens == 50

        @pytest.mark.chaos("flaky", max_steps=600)
        def test_looser(chaos):
            assert chaos.budgets.max_steps == 600        # a marker may loosen it too
        """
    )
    pytester.runpytest().assert_outcomes(passed=2)


def test_class_and_function_markers_merge_closest_wins(pytester):
    pytester.makepyfile(
        """
        import pytest

        pytestmark = pytest.mark.chaos(max_tool_calls=9)

        @pytest.mark.chaos("flaky", seed=1, max_steps=7, faults=[{"kind": "latency", "nth": 1}])
        class TestAgent:
            @pytest.mark.chaos(seed=2, faults=[{"kind": "timeout", "nth": 2}])
            def test_function_seed_wins(self, chaos):
                assert chaos.profile.name == "flaky"
                assert chaos.seed == 2
                assert chaos.budgets.max_steps == 7
                assert chaos.budgets.max_tool_calls == 9
                kinds = [f.kind.name for f in chaos.plan.faults]
                # closest marker's faults first, then the class's, then the profile's
                assert kinds[:2] == ["timeout", "latency"]
                assert kinds[2:] == ["timeout", "http_error", "connection_error", "latency"]

            @pytest.mark.chaos(profile="none", max_steps=2)
            def test_function_profile_wins(self, chaos):
                assert chaos.profile.name == "none"
                assert chaos.seed == 1
                assert chaos.budgets.max_steps == 2
                assert [f.kind.name for f in chaos.plan.faults] == ["latency"]

            def test_class_only(self, chaos):
                assert (chaos.profile.name, chaos.seed, chaos.budgets.max_steps) == ("flaky", 1, 7)
        """
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=3)


def test_marker_without_the_fixture_still_runs_under_chaos(pytester):
    pytester.makepyfile(
        f"""
        import time
        import pytest

        @pytest.mark.chaos("outage", virtual_sleep=True)
        def test_marked_only(request):
            assert "agentchaos" in request.fixturenames  # the chaos fixture, by its own name
            assert time.time() == {EPOCH!r}   # agent time is virtual: on the chaos clock

        @pytest.mark.must_halt(max_steps=3)
        def test_halt_only():
            pass
        """
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*= agentchaos: 2 chaos tests =*",
            "PASSED  *::test_halt_only  profile=none *verdict=must_halt=ok",  # sorted by node id
            "PASSED  *::test_marked_only  profile=outage *",
        ]
    )


def test_tests_without_fixture_or_marker_are_untouched(pytester):
    pytester.makepyfile(
        """
        import time

        import pytest

        # in a tuple: freezegun rewrites module attributes that hold the real functions
        REAL = (time.time, time.monotonic, time.sleep)

        @pytest.mark.chaos(virtual_sleep=True)
        def test_chaos_first(chaos):
            assert time.time is not REAL[0]
            assert time.monotonic is not REAL[1]

        def test_plain():
            assert (time.time, time.monotonic, time.sleep) == REAL
            assert abs(time.time() - 1735689600.0) > 86400  # not the frozen epoch
        """
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*= agentchaos: 1 chaos test =*", "PASSED  *::test_chaos_first *"])
    result.stdout.no_fnmatch_line("*::test_plain  profile=*")


def test_chaos_marker_on_one_param(pytester):
    pytester.makepyfile(
        test_params="""
        import pytest

        @pytest.mark.parametrize("x", [1, pytest.param(2, marks=pytest.mark.chaos("flaky"))])
        def test_p(x, request):
            if x == 2:
                assert request.getfixturevalue("chaos").profile.name == "flaky"
        """
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["PASSED  test_params.py::test_p[[]2]  profile=flaky *"])


def test_chaos_marker_on_one_param_leaves_its_siblings_alone(pytester):
    pytester.makepyfile(
        test_params="""
        import time
        import pytest

        REAL = (time.time,)

        @pytest.mark.parametrize("x", [1, pytest.param(2, marks=pytest.mark.chaos("flaky"))])
        def test_p(x, request):
            if x == 1:
                assert "chaos" not in request.fixturenames
                assert time.time is REAL[0]
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*= agentchaos: 1 chaos test =*"])
    result.stdout.no_fnmatch_line("*::test_p[[]1]  profile=*")


def test_no_summary_section_without_chaos_tests(pytester):
    pytester.makepyfile("def test_plain():\n    pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["agentchaos: profile=none seed=*"])  # the header still shows
    result.stdout.no_fnmatch_line("*chaos test*")
    result.stdout.no_fnmatch_line("session seed*")


# -- bad marker arguments: a collection error naming the test and the argument ---------------

BAD_MARKERS = {
    "unknown_kwarg": (
        "chaos(sed=3)",
        "@pytest.mark.chaos: unknown argument 'sed'; allowed: profile, seed, faults, *",
    ),
    "unknown_kind": (
        'chaos(faults=[{"kind": "explode"}])',
        "@pytest.mark.chaos: faults[[]0]: kind: unknown fault kind 'explode'; allowed: "
        "bad_tool_arguments, connection_error, corrupt_snapshot, crash, empty_completion, "
        "empty_output, error_in_body, garbled_output, http_error, injected_instruction, "
        "latency, lost_reply, malformed_params, no_finish_reason, paraphrased_output, "
        "partial_output, protocol_error, rate_limit, repeated_output, slow_first_token, "
        "stale_output, stream_cut, timeout",
    ),
    "probability": (
        'chaos(faults=[{"kind": "timeout", "probability": 1.5}])',
        "@pytest.mark.chaos: faults[[]0]: probability: must be <= 1, got 1.5",
    ),
    "negative_seconds": (
        'chaos(faults=[{"kind": "timeout", "seconds": -1}])',
        "@pytest.mark.chaos: faults[[]0]: seconds: must be >= 0, got -1",
    ),
    "selector_key": (
        'chaos(faults=[{"kind": "timeout", "toolz": "search"}])',
        "@pytest.mark.chaos: faults[[]0]: unknown key 'toolz' for fault kind 'timeout'; "
        "allowed: seconds, and selector keys tools, channels, *",
    ),
    "budget": ("chaos(max_steps=0)", "@pytest.mark.chaos: max_steps: must be > 0, got 0"),
    "unknown_profile": (
        'chaos("nope")',
        "*chaos profile 'nope': not found; available: flaky, malformed, none, outage, "
        "quiet, rate_limited, spiral *",
    ),
    "halt_positional": (
        "must_halt(10)",
        "@pytest.mark.must_halt: takes keyword arguments only (max_steps, *)",
    ),
    "escape_kwarg": (
        "must_escape(within=3)",
        "@pytest.mark.must_escape: unknown argument 'within'; allowed: within_steps, require_loop",
    ),
    "two_positionals": (
        'chaos("flaky", "none")',
        "@pytest.mark.chaos: takes at most one positional argument, the profile name",
    ),
    "seed_type": (
        'chaos(seed="7")',
        "@pytest.mark.chaos: seed: expected an integer >= 0, got '7'",
    ),
    "bool_flag": (
        'chaos(virtual_sleep="yes")',
        "@pytest.mark.chaos: virtual_sleep: expected a boolean, got 'yes'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_MARKERS))
def test_bad_marker_is_a_collection_error(pytester, case):
    marker, message = BAD_MARKERS[case]
    pytester.makepyfile(
        test_bad=f"""
        import pytest

        def test_fine():
            pass

        @pytest.mark.{marker}
        def test_agent():
            pass
        """
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED == 2
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting test_bad.py*",
            "pytest-agentchaos: bad chaos marker",
            f"test_bad.py::test_agent: {message}",
        ]
    )


def test_every_bad_test_in_a_module_is_named(pytester):
    pytester.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.chaos(max_steps=-1)
        def test_one():
            pass

        @pytest.mark.must_halt(max_tokens="many")
        def test_two():
            pass
        """
    )
    result = pytester.runpytest()
    assert result.ret == 2
    result.stdout.fnmatch_lines(
        [
            "pytest-agentchaos: bad chaos marker",
            "test_bad.py::test_one: @pytest.mark.chaos: max_steps: must be > 0, got -1",
            "test_bad.py::test_two: @pytest.mark.must_halt: max_tokens: expected an integer, "
            "got 'many'",
        ]
    )


# -- markers never pass vacuously unseen: not exercised, or failed when required --------------


@pytest.mark.parametrize(
    "marker, name, message",
    [
        (
            "must_escape(require_loop=True)",
            "must_escape",
            "must_escape failed: nothing to escape: no loop arose*",
        ),
        (
            "must_escape(within_steps=5, require_loop=True)",
            "must_escape",
            "must_escape failed: nothing to escape*",
        ),
        (
            "must_repair(require_problem=True)",
            "must_repair",
            "must_repair failed: nothing to repair: no call had*",
        ),
        (
            "must_recover_state(require_problem=True)",
            "must_recover_state",
            "must_recover_state failed: nothing to recover from: no crash, loop or stagnation*",
        ),
    ],
)
def test_markers_fail_for_a_trivially_passing_body(pytester, marker, name, message):
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.{marker}
        def test_trivial(chaos):
            assert True

        @pytest.mark.{marker.split("(")[0]}
        def test_default(chaos):
            assert True
        """
    )
    result = pytester.runpytest("-v", "-p", "no:randomly")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            message,
            f"PASSED  *::test_default  *verdict={name}=not_exercised",
            f"FAILED  *::test_trivial  *verdict={name}=FAIL",
            f"note: *::test_default: {name} not exercised in this run: *",
        ],
        consecutive=False,
    )
