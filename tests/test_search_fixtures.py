"""Re-runs of a chaos test's body (``--chaos-explore``'s tries, ``--chaos-breaking-point``'s
probes) get fresh function-scoped fixtures, as pytest gives the test's own run: a fixture with
mutable state is set up again and torn down after each run, a test method gets a fresh
instance, a fixture that wraps the tools wraps them for each run; a fixture that cannot be set
up twice is said in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

#: A booking agent whose bookings live in a function-scoped fixture (and a module-level list an
#: autouse fixture clears, as the pydantic-ai flights example does); it gives up after two
#: failures in a row.
AGENT = """
import pytest
from pathlib import Path

BOOKED = []

def log(what):
    with Path("log.txt").open("a") as out:
        out.write(what + "\\n")

@pytest.fixture(autouse=True)
def _fresh_bookings():
    BOOKED.clear()

@pytest.fixture
def bookings():
    log("setup")
    found = []
    yield found
    log("teardown")

def book(tool, bookings, n):
    failures = 0
    for q in range(n):
        try:
            bookings.append(tool(q))
            failures = 0
        except Exception:
            failures += 1
            if failures == 2:
                raise RuntimeError("gave up after two failures in a row")
    BOOKED.extend(bookings)
"""


def _log(pytester: pytest.Pytester) -> list[str]:
    path = pytester.path / "log.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_each_try_gets_its_function_scoped_fixtures_afresh(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent=AGENT
        + """
@pytest.mark.chaos("rate_limited")
def test_agent(chaos, bookings, request):
    request.addfinalizer(lambda: log("finalizer"))
    book(chaos.wrap(lambda q: q, name="search"), bookings, 6)
    assert len(bookings) == len(BOOKED) <= 6
"""
    )
    # seed 3: the test's own run passes; the search finds two rate limits in a row
    result = pytester.runpytest("--chaos-explore=100", "--chaos-seed=3")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "pytest-agentchaos: --chaos-explore: test_agent.py::test_agent: a schedule of * "
            "fault(s) failed (error RuntimeError) after * attempt(s); shrunk to 2 fault(s) in * "
            "more attempt(s)",
        ]
    )
    log = _log(pytester)
    runs = log.count("setup")
    # each run's fixture is set up, its body's finalizer run and the fixture torn down before
    # the next run's is set up (the test's own run too)
    assert runs > 3 and log == ["setup", "finalizer", "teardown"] * runs


def test_a_robust_agent_with_stateful_fixtures_passes_its_search(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_agent=AGENT
        + """
@pytest.mark.chaos("flaky")
def test_agent(chaos, bookings):
    tool = chaos.wrap(lambda q: q, name="search")
    for q in range(5):
        try:
            bookings.append(tool(q))
        except Exception:
            pass
    BOOKED.extend(bookings)
    assert len(BOOKED) == len(bookings) <= 5
"""
    )
    result = pytester.runpytest("--chaos-explore=30", "--chaos-seed=3")
    result.assert_outcomes(passed=1)
    log = _log(pytester)
    assert log.count("setup") == log.count("teardown") == 2 + 30


def test_a_test_method_gets_a_fresh_instance_for_each_try(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        class TestAgent:
            def setup_method(self):
                self.seen = getattr(self, "seen", 0)

            @pytest.mark.chaos("flaky")
            def test_agent(self, chaos):
                self.seen += 1
                tool = chaos.wrap(lambda q: q, name="search")
                for q in range(4):
                    try:
                        tool(q)
                    except Exception:
                        pass
                assert self.seen == 1, "state kept on self"
        """
    )
    pytester.runpytest("--chaos-explore=10", "--chaos-seed=3").assert_outcomes(passed=1)


def test_tools_a_fixture_wraps_are_wrapped_again_for_each_try(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent=AGENT
        + """
@pytest.fixture
def tool(chaos):
    return chaos.wrap(lambda q: q, name="search")

@pytest.mark.chaos("rate_limited")
def test_agent(tool, bookings):
    book(tool, bookings, 6)
"""
    )
    result = pytester.runpytest("--chaos-explore=100", "--chaos-seed=3")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*shrunk to 2 fault(s)*", "@pytest.mark.chaos(schedule=*"])


def test_a_fixture_that_cannot_be_set_up_twice_is_said_in_one_line(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        made = []

        @pytest.fixture
        def connection():
            if made:
                raise RuntimeError("the test server accepts one connection")
            made.append(1)
            return made

        @pytest.mark.chaos("flaky")
        def test_agent(chaos, connection):
            chaos.wrap(lambda q: q, name="search")(1)
        """
    )
    result = pytester.runpytest("--chaos-explore=10", "--chaos-seed=3")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "pytest-agentchaos: --chaos-explore: test_agent.py::test_agent is not re-runnable: "
            "its fixture 'connection' cannot be set up again (RuntimeError: the test server "
            "accepts one connection): a re-run of the body sets its function-scoped fixtures "
            "up afresh"
        ]
    )
    assert "During handling" not in result.stdout.str()


def test_a_fixture_whose_teardown_fails_between_tries_is_said_in_one_line(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        torn = []

        @pytest.fixture
        def session():
            yield
            torn.append(1)
            if len(torn) == 1:
                raise OSError("socket already closed")

        @pytest.mark.chaos("flaky")
        def test_agent(chaos, session):
            chaos.wrap(lambda q: q, name="search")(1)
        """
    )
    result = pytester.runpytest("--chaos-explore=10", "--chaos-seed=3")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "pytest-agentchaos: --chaos-explore: test_agent.py::test_agent is not re-runnable: "
            "its fixture 'session' failed to tear down between re-runs (OSError: socket "
            "already closed)"
        ]
    )


def test_a_breaking_point_probes_with_fresh_fixtures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        @pytest.fixture
        def elapsed():
            return []

        @pytest.mark.chaos(faults=[{"kind": "latency", "seconds": 1, "tools": ["search"]}])
        def test_deadline(chaos, elapsed):
            tool = chaos.wrap(lambda q: q, name="search")
            for q in range(3):
                before = chaos.clock.now()
                tool(q)
                elapsed.append(chaos.clock.now() - before)
            assert len(elapsed) == 3 and max(elapsed) <= 7.5, "too slow"
        """
    )
    result = pytester.runpytest("--chaos-breaking-point=latency.seconds")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["test_agent.py::test_deadline: latency.seconds: breaks at 7.6 (pass rate 0/10, *"]
    )


def test_the_flights_example_is_searchable(pytester: pytest.Pytester) -> None:
    # its autouse fixture clears the bookings of the run before: each re-run gets it afresh
    pytest.importorskip("pydantic_ai")
    folder = Path(__file__).resolve().parents[1] / "examples" / "pydantic_ai_flights"
    for source in folder.glob("*.py"):
        pytester.makepyfile(**{source.stem: source.read_text(encoding="utf-8")})
    pytester.makeini("[pytest]\naddopts = -p no:asyncio\n")
    result = pytester.runpytest("--chaos-explore=5", "-k", "business_class", "-p", "no:randomly")
    result.assert_outcomes(passed=1)


def test_tmp_path_is_a_fresh_folder_for_each_try(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        @pytest.mark.chaos("flaky")
        def test_agent(chaos, tmp_path):
            assert list(tmp_path.iterdir()) == []
            (tmp_path / "notes.txt").write_text("x")
            tool = chaos.wrap(lambda q: q, name="search")
            for q in range(4):
                try:
                    tool(q)
                except Exception:
                    pass
        """
    )
    result = pytester.runpytest("--chaos-explore=10", "--chaos-seed=3", "--basetemp=tmp")
    result.assert_outcomes(passed=1)
    made = [p for p in (pytester.path / "tmp").glob("test_agent*/notes.txt") if not p.is_symlink()]
    made = [p for p in made if not p.parent.is_symlink()]  # pytest's test_agentcurrent link
    assert len(made) == 2 + 10  # its own run, its replay, ten schedules: a folder each


def test_an_expected_failure_is_not_searched(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        @pytest.mark.xfail(raises=RuntimeError, strict=True, reason="gives up on any 429")
        @pytest.mark.chaos(faults=[{"kind": "rate_limit", "first": 1}])
        def test_fragile(chaos):
            try:
                chaos.wrap(lambda q: q, name="search")(1)
            except Exception:
                raise RuntimeError("gave up") from None
        """
    )
    result = pytester.runpytest(
        "--chaos-explore=10", "--chaos-breaking-point=rate_limit.retry_after", "-rx"
    )
    result.assert_outcomes(xfailed=1)
    assert "--chaos-explore" not in result.stdout.str()
    assert "breaking points" not in result.stdout.str()
    assert not (pytester.path / ".agentchaos").exists()
