"""What the terminal shows for chaos tests: the summary section, the failure section with its
replay command and trace tail, and that the printed replay command reproduces the run."""

from __future__ import annotations

import re
import shlex

import hypothesis.internal.observability  # noqa: F401
import pytest

# An in-process run unloads every module it imported when it ends, and hypothesis's plugin
# imports hypothesis at each terminal summary: importing it here (above) keeps each run fast.

ROW = re.compile(r"^(PASSED|FAILED|XFAILED|XPASSED|SKIPPED) +(\S+)  profile=.*$", re.M)

# Agents under the flaky profile making many calls: their fault sequences depend on the seed.
FLAKY_AGENTS = """
import pytest

def agent(chaos, name, calls):
    tool = chaos.wrap(lambda q: q, name=name)
    out = []
    for i in range(calls):
        try:
            out.append(tool(i))
        except Exception as exc:
            out.append(type(exc).__name__)
    return out

@pytest.mark.chaos("flaky")
def test_search(chaos):
    agent(chaos, "search", 40)

@pytest.mark.chaos("flaky")
def test_book(chaos):
    agent(chaos, "book", 40)

@pytest.mark.chaos("flaky")
def test_pay(chaos):
    agent(chaos, "pay", 40)
    assert not chaos.trace.faults(), "an agent that cannot take a single fault"
"""


@pytest.fixture(autouse=True)
def _ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


def rows(result: pytest.RunResult) -> dict[str, str]:
    """Summary rows by node id."""
    return {m.group(2): m.group(0) for m in ROW.finditer(result.stdout.str())}


def section(result: pytest.RunResult, test: str) -> list[str]:
    """The lines of the agentchaos report section of the failing ``test``."""
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if re.match(rf"^_+ {test} _+$", line))
    head = next(i for i in range(start, len(lines)) if re.match(r"^-+ agentchaos -+$", lines[i]))
    end = next(i for i in range(head + 1, len(lines)) if re.match(r"^(=+ |_+ \w|-+ \w)", lines[i]))
    return lines[head + 1 : end]


# -- the summary section ---------------------------------------------------------------------


def test_summary_has_one_row_per_chaos_test(pytester):
    pytester.makepyfile(
        test_rows="""
        import pytest

        @pytest.mark.chaos(faults=[
            {"kind": "timeout", "nth": 1, "seconds": 10},
            {"kind": "http_error", "status": 503, "nth": [2, 3]},
        ])
        def test_faulty(chaos):
            print("SEED", chaos.seed)
            tool = chaos.wrap(lambda: "ok", name="search")
            for _ in range(4):
                try:
                    tool()
                except Exception:
                    pass
            chaos.step("answer")

        @pytest.mark.chaos("outage", seed=77)
        def test_failing(chaos):
            model = chaos.model(lambda p: "hi")
            model("x")
            assert False, "agent gave up"

        @pytest.mark.xfail(reason="known")
        def test_xfail(chaos):
            assert False

        def test_plain():
            pass
        """
    )
    result = pytester.runpytest("-v", "-s", "--chaos-seed=21")
    result.assert_outcomes(passed=2, failed=1, xfailed=1)
    seed = re.search(r"SEED (\d+)$", result.stdout.str(), re.M).group(1)
    result.stdout.fnmatch_lines(
        [
            "=* agentchaos: 3 chaos tests =*",  # rows sorted by node id
            "FAILED  test_rows.py::test_failing  profile=outage test_seed=77 faults=http_error:1 "
            "tool_calls=0 model_calls=1 steps=1 vtime=0.0s verdict=-*",  # error=, when recorded
            f"PASSED  test_rows.py::test_faulty  profile=none test_seed={seed} "
            "faults=timeout:1,http_error:2 tool_calls=4 model_calls=0 steps=5 vtime=10.0s "
            "verdict=-",
            "XFAILED test_rows.py::test_xfail  profile=none test_seed=* faults=none *",
            "session seed 21: replay with --chaos-seed=21",
        ]
    )
    assert set(rows(result)) == {
        "test_rows.py::test_faulty",
        "test_rows.py::test_failing",
        "test_rows.py::test_xfail",
    }


# -- the failure section ---------------------------------------------------------------------


def test_failing_chaos_test_has_an_agentchaos_section(pytester):
    pytester.makepyfile(
        test_fail="""
        import pytest

        @pytest.mark.chaos(max_steps=50, faults=[{"kind": "timeout", "nth": 2, "seconds": 4}])
        def test_short(chaos):
            tool = chaos.wrap(lambda: "ok", name="search")
            tool()
            try:
                tool()
            except TimeoutError:
                pass
            assert False, "gave up after a timeout"
        """
    )
    result = pytester.runpytest("--chaos-seed=5")
    result.assert_outcomes(failed=1)
    lines = section(result, "test_short")
    assert lines[0].startswith("profile=none test seed=")
    assert lines[0].endswith(" faults fired=1 budgets=max_steps=50")
    assert lines[1] == "replay: pytest test_fail.py::test_short --chaos-seed=5"
    assert lines[2] == "last 7 of 7 trace events:"
    assert [re.search(r"s (\w+)\(", line).group(1) for line in lines[3:]] == [
        "RunStarted",
        "ToolCall",
        "ToolResult",
        "ToolCall",
        "FaultInjected",
        "ToolResult",
        "RunEnded",
    ]
    assert lines[8] == (
        "  #2    t=    4.000s ToolResult(tool='search', index=2, ok=False, "
        "error_type='InjectedTimeout', message='search timed out after 4s', channel='tool')"
    )
    # the run's end names the test's own exception where the harness recorded it
    assert lines[9] == (
        "  #2    t=    4.000s RunEnded(status='error') with AssertionError: gave up after a "
        "timeout (at test_fail.py:11 in test_short)"
    )
    result.stdout.fnmatch_lines(["E       AssertionError: gave up after a timeout"])


def test_failure_section_shows_only_the_last_20_events(pytester):
    pytester.makepyfile(
        test_long="""
        def test_long(chaos):
            tool = chaos.wrap(lambda i: i, name="count")
            for i in range(15):
                tool(i)
            assert False
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    lines = section(result, "test_long")
    # RunStarted + 15 calls and 15 results + RunEnded = 32 events, the last 20 shown
    assert lines[2] == "last 20 of 32 trace events:"
    events = lines[3:]
    assert len(events) == 20
    assert (
        events[0] == "  #6    t=    0.000s ToolResult(tool='count', index=6, ok=True, output=5, "
        "channel='tool')"
    )
    assert "RunEnded(status='error')" in events[-1]


def test_passing_chaos_test_has_no_section(pytester):
    pytester.makepyfile("def test_ok(chaos):\n    pass\n")
    result = pytester.runpytest("-rA")
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*- agentchaos -*")
    result.stdout.no_fnmatch_line("replay: *")


@pytest.mark.parametrize(
    "args, ini_line, marker, replay",
    [
        (
            ["--chaos-profile=flaky"],
            "",
            "",
            "replay: pytest test_r.py::test_r --chaos-seed=8 --chaos-profile=flaky",
        ),
        ([], "chaos_profile = flaky", "", "replay: pytest test_r.py::test_r --chaos-seed=8"),
        ([], "", "@pytest.mark.chaos('flaky')", "replay: pytest test_r.py::test_r --chaos-seed=8"),
        (
            ["--chaos-profile=none"],
            "",
            "@pytest.mark.chaos(seed=3)",
            "replay: pytest test_r.py::test_r --chaos-seed=8 --chaos-profile=none  "
            "# test seed pinned to 3 by @pytest.mark.chaos",
        ),
    ],
    ids=["cli-profile", "ini-profile", "marker-profile", "pinned-seed"],
)
def test_replay_line(pytester, args, ini_line, marker, replay):
    pytester.makeini(f"[pytest]\nasyncio_default_fixture_loop_scope = function\n{ini_line}\n")
    pytester.makepyfile(
        test_r=f"""
        import pytest

        {marker}
        def test_r(chaos):
            assert False
        """
    )
    result = pytester.runpytest("--chaos-seed=8", *args)
    result.assert_outcomes(failed=1)
    lines = section(result, "test_r")
    assert lines[1] == replay
    assert replay in result.stdout.lines  # also under the failure message


# -- replaying -------------------------------------------------------------------------------


def trace_file(directory, readable):
    """The one trace file written for a test: its readable id plus a short hash."""
    (found,) = [p for p in directory.glob("*.json") if p.name.rsplit("-", 1)[0] == readable]
    return found


def test_same_seed_same_faults_other_seed_other_faults(pytester):
    pytester.makepyfile(test_flaky=FLAKY_AGENTS)
    first = pytester.runpytest("-v", "--chaos-trace-dir=t1")
    first.assert_outcomes(passed=2, failed=1)
    seed = int(re.search(r"^session seed (\d+):", first.stdout.str(), re.M).group(1))

    again = pytester.runpytest("-v", f"--chaos-seed={seed}", "--chaos-trace-dir=t2")
    assert rows(again) == rows(first)
    assert len(rows(first)) == 3
    for name in ("test_search", "test_book", "test_pay"):
        file = trace_file(pytester.path / "t1", f"test_flaky.py_{name}")
        assert file.read_bytes() == (pytester.path / "t2" / file.name).read_bytes()

    other = pytester.runpytest("-v", f"--chaos-seed={seed + 1}")
    assert set(rows(other)) == set(rows(first))
    assert rows(other) != rows(first)
    faults = re.compile(r"faults=\S+")
    assert [faults.search(r).group(0) for r in rows(other).values()] != [
        faults.search(r).group(0) for r in rows(first).values()
    ]


def test_printed_replay_command_reproduces_the_failing_test(pytester):
    pytester.makepyfile(test_flaky=FLAKY_AGENTS)
    # the same verbosity as the printed command: pytest's assertion message (recorded as
    # what ended the run) depends on it
    first = pytester.runpytest("--chaos-trace-dir=t1")
    first.assert_outcomes(passed=2, failed=1)
    replay = next(line for line in first.stdout.lines if line.startswith("replay: pytest "))
    argv = shlex.split(replay.removeprefix("replay: pytest "))
    assert argv[0] == "test_flaky.py::test_pay"

    again = pytester.runpytest(*argv, "--chaos-trace-dir=t2")
    again.assert_outcomes(failed=1)
    assert rows(again) == {"test_flaky.py::test_pay": rows(first)["test_flaky.py::test_pay"]}
    file = trace_file(pytester.path / "t1", "test_flaky.py_test_pay")
    assert file.read_bytes() == (pytester.path / "t2" / file.name).read_bytes()


# -- pytest's own timing ---------------------------------------------------------------------


def test_durations_are_real_time(pytester):
    pytester.makeconftest(
        """
        def pytest_runtest_logreport(report):
            print(f"\\nDURATION {report.when} {report.duration!r}")
        """
    )
    pytester.makepyfile(
        test_durations="""
        import pytest

        @pytest.mark.chaos(faults=[{"kind": "timeout", "nth": 1, "seconds": 3000}])
        def test_slow_virtual(chaos):
            tool = chaos.wrap(lambda: 1, name="t")
            with pytest.raises(TimeoutError):
                tool()
        """
    )
    result = pytester.runpytest("-s", "--durations=0", "-vv")
    result.assert_outcomes(passed=1)
    durations = {
        when: float(value)
        for when, value in re.findall(r"DURATION (\w+) (\S+)", result.stdout.str())
    }
    assert set(durations) == {"setup", "call", "teardown"}
    # the test waited 3000 virtual seconds and no real ones
    assert all(0 <= d < 60 for d in durations.values()), durations
    result.stdout.no_fnmatch_line("3000.00s call *")


def test_replay_command_works_from_where_pytest_was_run(pytester, monkeypatch):
    sub = pytester.mkdir("tests")
    (sub / "test_sub.py").write_text(
        "def test_agent(chaos):\n    chaos.wrap(lambda: 1, name='tool')()\n    assert False\n"
    )
    monkeypatch.chdir(sub)
    first = pytester.runpytest("--chaos-seed=4")
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(["FAILED test_sub.py::test_agent - assert False"])  # pytest's
    replay = next(line for line in first.stdout.lines if line.startswith("replay: pytest "))
    again = pytester.runpytest(*shlex.split(replay.removeprefix("replay: pytest ")))
    again.assert_outcomes(failed=1)
    assert rows(again) == rows(first)
