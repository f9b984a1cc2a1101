"""Schedule search as a user runs it: ``--chaos-explore`` finds and shrinks a failing schedule,
prints the marker to paste and writes the schedule file, which ``--chaos-schedule`` replays;
what it says of a body it cannot re-run, of bad schedules and of a Ctrl-C mid-search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

AGENT = """
import pytest

def search(q):
    return [q]

def run_agent(tool):
    failures = 0
    for q in range(8):
        try:
            tool(q)
            failures = 0
        except Exception:
            failures += 1
            if failures == 2:
                raise RuntimeError("gave up after two failures in a row")
"""

LEAK_CHECK = """
import asyncio, datetime, socket, time

REAL = (time.time, time.sleep, asyncio.sleep, socket.getaddrinfo, socket.socket.connect,
        datetime.datetime)

def pytest_sessionfinish(session):
    now = (time.time, time.sleep, asyncio.sleep, socket.getaddrinfo, socket.socket.connect,
           datetime.datetime)
    print("\\nLEFT INSTALLED:", [r.__name__ for r, n in zip(REAL, now) if r is not n])
"""


def _marker(stdout: str) -> str:
    # one marker, printed once in the failure and (on CI, where pytest does not cut the short
    # summary) once more in the summary
    (line,) = {ln for ln in stdout.splitlines() if ln.startswith("@pytest.mark.chaos(schedule=[")}
    return line


def test_explore_finds_shrinks_prints_the_marker_and_the_pasted_marker_fails_the_same_way(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_agent=AGENT
        + """
@pytest.mark.chaos("rate_limited")
def test_agent(chaos):
    run_agent(chaos.wrap(search))
"""
    )
    # seed 3: the first run passes (its rate limits never come two in a row)
    result = pytester.runpytest("--chaos-explore=100", "--chaos-seed=3")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "pytest-agentchaos: --chaos-explore: test_agent.py::test_agent: a schedule of * "
            "fault(s) failed (error RuntimeError) after * attempt(s); shrunk to 2 fault(s) in * "
            "more attempt(s)",
            "RuntimeError: gave up after two failures in a row",
            "pin it as a regression test:",
            "@pytest.mark.chaos(schedule=*",
            "schedule file: *test_agent.py_test_agent-*.json (replay: pytest "
            "test_agent.py::test_agent --chaos-seed=3 --chaos-schedule=*)",
        ]
    )
    assert _marker(result.stdout.str()).startswith(
        '@pytest.mark.chaos(schedule=[{"target": "search", "call": 1, "kind": "rate_limit", '
        '"retry_after": 0}, {"target": "search", "call": 2, "kind": "rate_limit", '
        '"retry_after": 0}], seed='
    )
    files = list((pytester.path / ".agentchaos" / "schedules").glob("*.json"))
    (path,) = files
    data = json.loads(path.read_text())
    assert data["test"] == "test_agent.py::test_agent"
    assert data["marker"] == _marker(result.stdout.str())
    assert data["failure"]["kind"] == "error RuntimeError"

    pytester.makepyfile(
        test_pinned=AGENT
        + f"""
{data["marker"]}
def test_pinned(chaos):
    run_agent(chaos.wrap(search))
"""
    )
    pinned = pytester.runpytest("test_pinned.py")
    pinned.assert_outcomes(failed=1)
    pinned.stdout.fnmatch_lines(["E   *RuntimeError: gave up after two failures in a row"])


def test_a_schedule_file_replays_the_shrunk_run_byte_for_byte(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent=AGENT
        + """
@pytest.mark.chaos("rate_limited", explore=100)
def test_agent(chaos):
    run_agent(chaos.wrap(search))
"""
    )
    found = pytester.runpytest("--chaos-seed=3", "--chaos-trace-dir=explored")
    found.assert_outcomes(failed=1)
    (path,) = (pytester.path / ".agentchaos" / "schedules").glob("*.json")
    (explored,) = (pytester.path / "explored").glob("*.json")
    replay = pytester.runpytest(
        "--chaos-seed=3", f"--chaos-schedule={path}", "--chaos-trace-dir=replayed"
    )
    replay.assert_outcomes(failed=1)
    replay.stdout.fnmatch_lines(
        ["replay: pytest test_agent.py::test_agent --chaos-seed=3 --chaos-schedule=*"]
    )
    (replayed,) = (pytester.path / "replayed").glob("*.json")
    assert replayed.read_bytes() == explored.read_bytes()


def test_the_found_schedule_is_tried_first_next_time(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent=AGENT
        + """
@pytest.mark.chaos("rate_limited", explore=100)
def test_agent(chaos):
    run_agent(chaos.wrap(search))
"""
    )
    pytester.runpytest("--chaos-seed=3").assert_outcomes(failed=1)
    again = pytester.runpytest("--chaos-seed=3")
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(
        ["*: a previous search's schedule of 2 fault(s) failed (error RuntimeError) after 2 "
         "attempt(s); shrunk to 2 fault(s) in * more attempt(s)"]
    )  # fmt: skip


def test_a_robust_agent_passes_its_search(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        @pytest.mark.chaos("rate_limited", explore=30)
        def test_agent(chaos):
            tool = chaos.wrap(lambda q: q, name="search")
            for q in range(5):
                try:
                    tool(q)
                except Exception:
                    pass
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)
    assert not (pytester.path / ".agentchaos").exists()


def test_a_body_whose_tools_are_wrapped_once_and_kept_is_not_re_runnable(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        TOOLS = {}

        def tool(chaos):
            if "search" not in TOOLS:  # a cache the first run fills
                TOOLS["search"] = chaos.wrap(lambda q: q, name="search")
            return TOOLS["search"]

        @pytest.mark.chaos("rate_limited", explore=30, seed=3)
        def test_agent(chaos):
            for q in range(3):
                try:
                    tool(chaos)(q)
                except Exception:
                    pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "pytest-agentchaos: --chaos-explore: test_agent.py::test_agent is not re-runnable: "
            "a second run of its body made none of the calls the first made: its tools were "
            "wrapped once and kept (in a global, or by a fixture of a wider scope than "
            "function?) or it keeps state between runs; wrap them in the test body or in a "
            "function-scoped fixture, with the chaos fixture it is given (each run of the body "
            "gets its function-scoped fixtures afresh)"
        ]
    )
    assert "During handling" not in result.stdout.str()


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ('[{"target": "search", "kind": "timeout"}]', "schedule[[]0[]]: missing 'call' *"),
        (
            '[{"target": "search", "call": 1, "kind": "timeout", "retry_after": 3}]',
            "schedule[[]0[]]: unknown key 'retry_after' for kind 'timeout'; allowed: *",
        ),
        ('{"target": "search"}', "schedule: expected a list of schedule entries, got *"),
    ],
)
def test_a_malformed_schedule_is_one_collection_error(
    pytester: pytest.Pytester, schedule: str, message: str
) -> None:
    pytester.makepyfile(
        test_agent=f"""
        import pytest

        @pytest.mark.chaos(schedule={schedule})
        def test_agent(chaos):
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"test_agent.py::test_agent: @pytest.mark.chaos: {message}"])


def test_a_schedule_file_for_another_test_or_a_broken_one_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_agent="def test_agent(chaos):\n    pass\n")
    Path(pytester.path / "other.json").write_text(
        json.dumps({"test": "elsewhere.py::test_x", "schedule": []})
    )
    result = pytester.runpytest("--chaos-schedule=other.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--chaos-schedule: *other.json is for test 'elsewhere.py::test_x', which is not among "
         "the tests collected here*"]
    )  # fmt: skip
    Path(pytester.path / "bad.json").write_text(
        json.dumps({"test": "test_agent.py::test_agent", "schedule": [{"call": 1}]})
    )
    result = pytester.runpytest("--chaos-schedule=bad.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--chaos-schedule: *bad.json: schedule[[]0[]]: missing 'target'*"]
    )


def test_a_ctrl_c_during_the_search_stops_it_and_leaves_nothing_installed(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(LEAK_CHECK)
    pytester.makepyfile(
        test_agent="""
        import pytest

        runs = []

        @pytest.mark.chaos("rate_limited", explore=50, seed=3, virtual_sleep=True)
        def test_agent(chaos):
            runs.append(1)
            if len(runs) == 3:
                raise KeyboardInterrupt
            tool = chaos.wrap(lambda q: q, name="search")
            for q in range(4):
                try:
                    tool(q)
                except Exception:
                    pass
        """
    )
    result = pytester.runpytest_inprocess("-s", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["LEFT INSTALLED: []", "INTERRUPTED test_agent.py::test_agent *", "*KeyboardInterrupt*"]
    )
    assert not (pytester.path / ".agentchaos").exists()


def test_the_docs_example_is_found_and_shrunk_as_the_docs_say(
    pytester: pytest.Pytester,
) -> None:
    import re

    page = Path(__file__).resolve().parents[1] / "docs" / "reports" / "search.md"
    text = page.read_text(encoding="utf-8")
    section = text[text.index("## Find the breaking schedule") :]
    (block,) = re.findall(r"```python[^\n]*\n(.*?)```", section, re.S)[:1]
    shown = re.findall(r"```console\n(\$ pytest --chaos-explore.*?)```", section, re.S)[0]
    shown = shown.splitlines()
    pytester.makepyfile(test_agent=block)
    result = pytester.runpytest("--chaos-explore=100", "--chaos-seed=3")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [line.replace("[", "[[]") for line in shown[1:4]] + ["@pytest.mark.chaos(schedule=*"]
    )
    assert _marker(result.stdout.str()) == shown[4]


def test_a_pinned_schedule_whose_faults_never_fire_fails_naming_them(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        @pytest.mark.chaos(schedule=[
            {"target": "serch", "call": 1, "kind": "timeout"},
            {"target": "search", "call": 5, "kind": "timeout"},
        ])
        def test_typo(chaos):
            chaos.wrap(lambda q: q, name="search")(1)

        @pytest.mark.chaos(schedule=[
            {"target": "search", "call": 1, "kind": "latency", "seconds": 2},
            {"target": "search", "call": 3, "kind": "latency", "seconds": 2},
        ])
        def test_half(chaos):
            tool = chaos.wrap(lambda q: q, name="search")
            tool(1)
            tool(2)

        @pytest.mark.chaos(schedule=[{"target": "search", "call": 2, "kind": "latency"}])
        def test_fires(chaos):
            tool = chaos.wrap(lambda q: q, name="search")
            tool(1)
            tool(2)
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=2, passed=1)
    result.stdout.fnmatch_lines(
        [
            "pytest-agentchaos: test_agent.py::test_typo: 2 of the 2 faults its schedule pins "
            "never fired: call 1 of 'serch' (timeout): no tool call of 'serch' was made; call 5 "
            "of 'search' (timeout): the run made 1 such call(s); a regression test whose faults "
            "do not fire tests nothing: fix the schedule or the test",
            "pytest-agentchaos: test_agent.py::test_half: 1 of the 2 faults its schedule pins "
            "never fired: call 3 of 'search' (latency): the run made 2 such call(s); *",
        ]
    )
    assert "test_fires" not in "".join(ln for ln in result.stdout.lines if "FAILED" in ln)


def test_a_schedule_file_whose_faults_no_longer_fire_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        def test_agent(chaos):
            chaos.wrap(lambda q: q, name="search")(1)
        """
    )
    Path(pytester.path / "pinned.json").write_text(
        json.dumps(
            {
                "test": "test_agent.py::test_agent",
                "schedule": [{"target": "search", "call": 2, "kind": "timeout"}],
            }
        )
    )
    result = pytester.runpytest("--chaos-schedule=pinned.json")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "pytest-agentchaos: test_agent.py::test_agent: 1 of the 1 faults its schedule pins "
            "never fired: call 2 of 'search' (timeout): the run made 1 such call(s); *"
        ]
    )


ROBUST = """
import pytest
from pathlib import Path

@pytest.mark.chaos("flaky")
def test_agent(chaos):
    tool = chaos.wrap(lambda q: q, name="search")
    for q in range(8):
        try:
            tool(q)
        except Exception:
            pass
    with Path("tries.txt").open("a") as out:
        out.write("tried\\n")
"""


@pytest.mark.parametrize("budget", [1, 5, 20, 40])
def test_a_budget_of_n_is_n_runs_of_the_body(pytester: pytest.Pytester, budget: int) -> None:
    pytester.makepyfile(test_agent=ROBUST)
    result = pytester.runpytest(f"--chaos-explore={budget}", "--chaos-seed=3")
    result.assert_outcomes(passed=1)
    tries = (pytester.path / "tries.txt").read_text().splitlines()
    # its own run, its own faults once more (is the body re-runnable?), then N schedules
    assert len(tries) == 2 + budget


def test_explore_and_a_breaking_point_together_do_both(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent=AGENT
        + """
@pytest.mark.chaos("rate_limited")
def test_agent(chaos):
    run_agent(chaos.wrap(search))
"""
    )
    result = pytester.runpytest(
        "--chaos-explore=100", "--chaos-seed=3", "--chaos-breaking-point=rate_limit.probability"
    )
    result.assert_outcomes(failed=1)
    assert _marker(result.stdout.str()).startswith(
        '@pytest.mark.chaos(schedule=[{"target": "search", "call": 1, "kind": "rate_limit", '
    )
    result.stdout.fnmatch_lines(
        [
            "*agentchaos: breaking points*",
            "test_agent.py::test_agent: rate_limit.probability: breaks at * (pass rate *); "
            "holds at * (pass rate *); *",
        ]
    )


def test_the_printed_replay_under_chaos_runs_reruns_that_run_with_its_schedule(
    pytester: pytest.Pytester,
) -> None:
    import shlex

    pytester.makepyfile(
        test_agent=AGENT
        + """
@pytest.mark.chaos("rate_limited")
def test_agent(chaos):
    run_agent(chaos.wrap(search))
"""
    )
    result = pytester.runpytest("--chaos-explore=100", "--chaos-seed=3", "--chaos-runs=2")
    result.assert_outcomes(failed=2)
    commands = {ln[len("replay: ") :] for ln in result.stdout.lines if ln.startswith("replay: ")}
    assert len(commands) == 2
    for command in sorted(commands):
        argv = shlex.split(command)
        assert argv[0] == "pytest" and "[seed" in argv[1]
        again = pytester.runpytest(*argv[1:])
        again.assert_outcomes(failed=1)
        assert f"FAILED {argv[1]}" in again.stdout.str()
        again.stdout.fnmatch_lines(["E   *RuntimeError: gave up after two failures in a row"])
        # what the pinned run prints replays it again
        shown = {ln[len("replay: ") :] for ln in again.stdout.lines if ln.startswith("replay: ")}
        assert shown == {command}
