"""Command-line options and ini keys of the pytest plugin, as a user sees them.

--chaos-profile / ini chaos_profile, --chaos-seed, --chaos-list-profiles, user profile
directories, --chaos-trace-dir, marker registration and disabling the plugin.
"""

from __future__ import annotations

import re
import textwrap

import hypothesis.internal.observability  # noqa: F401
import pytest

from pytest_agentchaos.trace import Trace

# An in-process run unloads every module it imported when it ends, and hypothesis's plugin
# imports hypothesis at each terminal summary: importing it here (above) keeps each run fast.

BUILTINS = ("flaky", "malformed", "none", "outage", "quiet", "rate_limited", "spiral")

# A test that reports which profile and seed it ran under, in the test body and the summary.
SHOW = """
def test_show(chaos):
    print("PROFILE=" + chaos.profile.name + " SEED=" + str(chaos.seed))
"""


def ini(pytester: pytest.Pytester, *lines: str) -> None:
    """An ini with the asyncio loop scope set (silences pytest-asyncio) plus ``lines``."""
    body = "\n".join(["[pytest]", "asyncio_default_fixture_loop_scope = function", *lines])
    pytester.makeini(body + "\n")


def profile(pytester: pytest.Pytester, name: str, text: str, folder: str = "chaos_profiles"):
    path = pytester.path / folder / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _ini(pytester: pytest.Pytester) -> None:
    ini(pytester)


def header_seed(result: pytest.RunResult) -> int:
    text = result.stdout.str()
    m = re.search(
        r"^agentchaos: profile=\S+ seed=(\d+) \(replay with --chaos-seed=(\d+)\)$", text, re.M
    )
    assert m, text
    assert m.group(1) == m.group(2)
    return int(m.group(1))


# -- --chaos-profile and ini chaos_profile ------------------------------------------------


def test_default_profile_is_none(pytester):
    pytester.makepyfile(SHOW)
    result = pytester.runpytest("-v", "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["agentchaos: profile=none seed=*", "*PROFILE=none*", "PASSED  *test_show  profile=none *"]
    )


def test_chaos_profile_option_selects_the_profile(pytester):
    pytester.makepyfile(SHOW)
    result = pytester.runpytest("-v", "-s", "--chaos-profile", "flaky")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "agentchaos: profile=flaky seed=*",
            "*PROFILE=flaky*",
            "*= agentchaos: 1 chaos test =*",
            "PASSED  test_chaos_profile_option_selects_the_profile.py::test_show  profile=flaky *",
        ]
    )


def test_ini_chaos_profile_selects_the_profile(pytester):
    ini(pytester, "chaos_profile = outage")
    pytester.makepyfile(SHOW)
    result = pytester.runpytest("-v", "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["agentchaos: profile=outage seed=*", "*PROFILE=outage*", "PASSED  *profile=outage *"]
    )


def test_command_line_profile_beats_ini(pytester):
    ini(pytester, "chaos_profile = outage")
    pytester.makepyfile(SHOW)
    result = pytester.runpytest("-s", "--chaos-profile=spiral")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["agentchaos: profile=spiral seed=*", "*PROFILE=spiral*"])
    result.stdout.no_fnmatch_line("*profile=outage*")


def test_unknown_profile_option_is_a_usage_error_listing_builtins(pytester):
    pytester.makepyfile(SHOW)
    result = pytester.runpytest("--chaos-profile", "nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR == 4
    result.stderr.fnmatch_lines(
        [
            "ERROR: pytest-agentchaos: --chaos-profile: chaos profile 'nope': not found; "
            "available: flaky, malformed, none, outage, quiet, rate_limited, spiral *"
        ]
    )
    result.stdout.no_fnmatch_line("*passed*")


def test_unknown_ini_profile_is_a_usage_error_naming_the_ini_key(pytester):
    ini(pytester, "chaos_profile = nope")
    pytester.makepyfile(SHOW)
    result = pytester.runpytest()
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        ["ERROR: pytest-agentchaos: ini chaos_profile: chaos profile 'nope': not found; *"]
    )


# -- --chaos-seed -------------------------------------------------------------------------


def test_chaos_seed_is_printed_in_the_header_and_the_summary(pytester):
    pytester.makepyfile(SHOW)
    result = pytester.runpytest("--chaos-seed", "4242")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "agentchaos: profile=none seed=4242 (replay with --chaos-seed=4242)",
            "*",
            "session seed 4242: replay with --chaos-seed=4242",
        ]
    )
    assert header_seed(result) == 4242


def test_default_seed_is_random_and_shown(pytester):
    pytester.makepyfile(SHOW)
    first = pytester.runpytest()
    second = pytester.runpytest()
    first.assert_outcomes(passed=1)
    seeds = [header_seed(first), header_seed(second)]
    # drawn from 10**9 values: two equal draws would mean the seed is not random
    assert seeds[0] != seeds[1]
    first.stdout.fnmatch_lines([f"session seed {seeds[0]}: replay with --chaos-seed={seeds[0]}"])


def test_chaos_seed_replays_the_same_test_seed(pytester):
    pytester.makepyfile(SHOW)
    runs = [pytester.runpytest("-s", "--chaos-seed=99") for _ in range(2)]
    found = [re.search(r"SEED=(\d+)", r.stdout.str()).group(1) for r in runs]
    assert found[0] == found[1]
    other = pytester.runpytest("-s", "--chaos-seed=100")
    assert re.search(r"SEED=(\d+)", other.stdout.str()).group(1) != found[0]


def test_seed_zero_is_a_valid_seed(pytester):
    pytester.makepyfile(SHOW)
    result = pytester.runpytest("--chaos-seed=0")
    result.assert_outcomes(passed=1)
    assert header_seed(result) == 0
    result.stdout.fnmatch_lines(["session seed 0: replay with --chaos-seed=0"])


@pytest.mark.parametrize("value", ["-3", "abc", "1.5"])
def test_bad_chaos_seed_is_a_usage_error(pytester, value):
    pytester.makepyfile(SHOW)
    result = pytester.runpytest(f"--chaos-seed={value}")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        [f"*argument --chaos-seed: expected a non-negative integer, got '{value}'*"]
    )


# -- --chaos-list-profiles ----------------------------------------------------------------


def test_list_profiles_shows_builtins_and_runs_no_tests(pytester):
    pytester.makepyfile("def test_would_fail():\n    assert 0\n")
    result = pytester.runpytest("--chaos-list-profiles")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "chaos profiles (searched: *):",
            "  flaky          [[]built-in] An ordinary bad day: *",
            "                 faults: timeout, http_error, connection_error, latency; "
            "budgets: max_steps=500, max_seconds=3600",
            "  malformed      [[]built-in] *",
            "                 faults: malformed_params; *",
            "  none           [[]built-in] No faults*",
            "                 faults: no faults; budgets: none",
            "  outage         [[]built-in] *",
            "                 faults: http_error; *",
            "  quiet          [[]built-in] Quiet failures: *",
            "                 faults: empty_output, error_in_body, partial_output, stale_output; "
            "budgets: max_steps=500, max_seconds=3600",
            "  rate_limited   [[]built-in] *",
            "                 faults: rate_limit; *",
            "  spiral         [[]built-in] *",
            "                 faults: paraphrased_output, repeated_output, stale_output, *",
        ]
    )
    text = result.stdout.str()
    assert "test_would_fail" not in text
    assert "collected" not in text and "failed" not in text


def test_list_profiles_shows_user_profiles_and_marks_broken_ones(pytester):
    profile(
        pytester,
        "mine",
        """
        description = "my team's bad day"
        [budgets]
        max_tool_calls = 3
        [[faults]]
        kind = "rate_limit"
        """,
    )
    profile(pytester, "broken", 'description = "unterminated\n')
    profile(pytester, "oops", "[[faults]]\nkind = 'explode'\n")
    result = pytester.runpytest("--chaos-list-profiles")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            f"chaos profiles (searched: {pytester.path / 'chaos_profiles'}, *):",
            "  broken         [[]user] BROKEN: *broken.toml: invalid TOML*",
            "  flaky          [[]built-in] *",
            "  mine           [[]user] my team's bad day",
            "                 faults: rate_limit; budgets: max_tool_calls=3",
            "  none           [[]built-in] *",
            "  oops           [[]user] BROKEN: *oops.toml*unknown fault kind 'explode'*",
        ]
    )


def test_list_profiles_uses_the_ini_profiles_dir(pytester):
    ini(pytester, "chaos_profiles_dir = config/chaos")
    profile(pytester, "elsewhere", 'description = "from the ini dir"\n', folder="config/chaos")
    profile(pytester, "ignored", 'description = "not searched"\n')
    result = pytester.runpytest("--chaos-list-profiles")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["  elsewhere      [[]user] from the ini dir"])
    result.stdout.no_fnmatch_line("*ignored*")


def test_user_profile_shadows_a_builtin(pytester):
    profile(pytester, "flaky", 'description = "our own flaky: never fails"\n')
    pytester.makepyfile(
        """
        def test_calm(chaos):
            tool = chaos.wrap(lambda: "ok", name="tool")
            assert [tool() for _ in range(200)] == ["ok"] * 200
            assert chaos.profile.description == "our own flaky: never fails"
        """
    )
    listing = pytester.runpytest("--chaos-list-profiles")
    listing.stdout.fnmatch_lines(["  flaky          [[]user] our own flaky: never fails"])
    result = pytester.runpytest("-v", "--chaos-profile=flaky", "--chaos-seed=1")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*profile=flaky *faults=none tool_calls=200 *"])


def test_selected_profile_with_invalid_toml_is_a_usage_error_naming_the_file(pytester):
    path = profile(pytester, "broken", "[[faults]\nkind = 'timeout'\n")
    pytester.makepyfile(SHOW)
    result = pytester.runpytest("--chaos-profile=broken")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        [f"ERROR: pytest-agentchaos: --chaos-profile: {path}: invalid TOML*"]
    )


def test_extends_cycle_is_a_usage_error_naming_the_cycle(pytester):
    profile(pytester, "a", 'extends = "b"\n')
    profile(pytester, "b", 'extends = "a"\n')
    pytester.makepyfile(SHOW)
    result = pytester.runpytest("--chaos-profile=a")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["ERROR: pytest-agentchaos: *a.toml: 'extends' cycle: a -> b -> a"])


# -- --chaos-trace-dir --------------------------------------------------------------------


def test_trace_dir_gets_one_readable_trace_per_chaos_test(pytester):
    pytester.makepyfile(
        test_traced="""
        import pytest

        def test_one(chaos):
            tool = chaos.wrap(lambda x: x * 2, name="double")
            assert tool(2) == 4

        @pytest.mark.chaos(faults=[{"kind": "timeout", "nth": 1}])
        def test_two():
            pass

        def test_not_chaos():
            pass
        """
    )
    result = pytester.runpytest("--chaos-trace-dir", "traces", "--chaos-seed=11")
    result.assert_outcomes(passed=3)
    files = sorted(p.name for p in (pytester.path / "traces").iterdir())
    assert [f.rsplit("-", 1)[0] for f in files] == [
        "test_traced.py_test_one",
        "test_traced.py_test_two",
    ]
    trace = Trace.from_json((pytester.path / "traces" / files[0]).read_text("utf-8"))
    assert trace.meta["test"] == "test_traced.py::test_one"
    assert trace.meta["session_seed"] == 11
    assert [(c.tool, c.args) for c in trace.tool_calls()] == [("double", {"x": 2})]
    assert trace.tool_results()[0].output == 4
    two = Trace.from_json((pytester.path / "traces" / files[1]).read_text("utf-8"))
    assert two.meta["faults"] == [
        {"kind": "timeout", "seconds": [30.0, 30.0], "tools": ["*"], "nth": [1]}
    ]


def test_trace_dir_keeps_one_file_per_parametrized_test(pytester):
    pytester.makepyfile(
        test_ask="""
        import pytest

        @pytest.mark.parametrize("prompt", ["weather in Oslo?", "weather in Oslo!"])
        def test_ask(chaos, prompt):
            chaos.wrap(lambda p: p, name="llm")(prompt)
        """
    )
    result = pytester.runpytest("--chaos-trace-dir=traces")
    result.assert_outcomes(passed=2)
    written = [Trace.from_json(p.read_text("utf-8")) for p in (pytester.path / "traces").iterdir()]
    assert sorted(t.meta["test"] for t in written) == [
        "test_ask.py::test_ask[weather in Oslo!]",
        "test_ask.py::test_ask[weather in Oslo?]",
    ]


def test_no_trace_files_without_the_option(pytester):
    pytester.makepyfile(SHOW)
    pytester.runpytest().assert_outcomes(passed=1)
    assert not list(pytester.path.rglob("*.json"))


# -- markers and disabling ----------------------------------------------------------------


def test_markers_are_registered(pytester):
    result = pytester.runpytest("--markers")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.chaos(profile=None, seed=None, faults=*",
            "@pytest.mark.must_halt(max_steps=*",
            "@pytest.mark.must_escape(within_steps=None, require_loop=False): every loop*",
            "@pytest.mark.must_repair(tools=None, max_attempts=3, require_problem=False): every*",
        ],
        consecutive=False,
    )


def test_strict_markers_accepts_the_chaos_markers(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.chaos("flaky", seed=3)
        @pytest.mark.must_halt(max_steps=5)
        def test_marked():
            pass

        @pytest.mark.must_escape
        def test_escape():
            pass

        @pytest.mark.must_repair
        def test_repair():
            pass
        """
    )
    result = pytester.runpytest("--strict-markers")
    # must_escape / must_repair are not exercised (nothing to escape or repair), nothing errors
    result.assert_outcomes(passed=3)
    result.stdout.no_fnmatch_line("*not found in `markers` configuration*")


def test_disabling_the_plugin(pytester):
    pytester.makepyfile(
        """
        def test_wants_chaos(chaos):
            pass

        def test_plain():
            pass
        """
    )
    result = pytester.runpytest("-p", "no:agentchaos")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*fixture 'chaos' not found*"])
    result.stdout.no_fnmatch_line("agentchaos:*")
    result.stdout.no_fnmatch_line("*chaos test*")
