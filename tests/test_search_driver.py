"""A test's searches driven by the harness without pytest (:mod:`pytest_agentchaos.harness.
searches`): what the plugin wires. A schedule search from the test's own run ends at the
planted minimal schedule with the marker to paste; a shrunk schedule whose faults never fire is
the empty one, said as such; a breaking point is bisected over the body's re-runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_agentchaos.faults import parse_faults
from pytest_agentchaos.harness.rerun import NotRerunnable, run_attempt
from pytest_agentchaos.harness.searches import bisect_test, known_schedules, search_test
from pytest_agentchaos.harness.settings import SessionSettings
from pytest_agentchaos.harness.spec import RunSpec
from pytest_agentchaos.inject import Chaos
from pytest_agentchaos.profiles.profile import ProfileRegistry
from pytest_agentchaos.search.breaking import parse_target
from pytest_agentchaos.search.schedule import read_schedule_file

SETTINGS = SessionSettings(seed=1, wall_timeout=0)
REGISTRY = ProfileRegistry.default(None)
TEST = "t.py::test_agent"


class Body:
    """A re-runnable body as the plugin's ``FreshBody`` is one: counts its runs."""

    interrupts: tuple[type[BaseException], ...] = (KeyboardInterrupt, SystemExit)

    def __init__(self, run: Callable[[Chaos], None]) -> None:
        self._run = run
        self.runs = 0
        self.started = False

    def __call__(self, chaos: Chaos) -> None:
        self.runs += 1
        self._run(chaos)

    def start(self) -> None:
        self.started = True


def gives_up_after_two_429s(chaos: Chaos) -> None:
    search = chaos.wrap(lambda q: [q], name="search")
    failures = 0
    for q in range(8):
        try:
            search(q)
            failures = 0
        except Exception:  # noqa: BLE001 - the agent's own retry logic
            failures += 1
            if failures == 2:
                raise RuntimeError("gave up after two failures in a row") from None


def expects_its_declared_timeout(chaos: Chaos) -> None:
    search = chaos.wrap(lambda q: [q], name="search")
    with pytest.raises(TimeoutError):
        search("louvre")


def _own_run(spec: RunSpec, body: Body) -> tuple[Any, BaseException | None]:
    own = run_attempt(SETTINGS, spec, TEST, REGISTRY, body, None)
    return own.run, own.error


def test_a_search_from_the_own_run_ends_at_the_planted_pair_and_says_what_to_paste(
    tmp_path: Path,
) -> None:
    spec = RunSpec(profile="rate_limited", seed=3)
    body = Body(gives_up_after_two_429s)
    run, error = _own_run(spec, body)
    assert error is None  # seed 3: its own rate limits never come two in a row
    found = search_test(SETTINGS, spec, TEST, REGISTRY, body, run, error, budget=100)
    assert found is not None and body.started
    assert [(d["target"], d["index"], d["kind"]) for d in found.schedule] == [
        ("search", 1, "rate_limit"),
        ("search", 2, "rate_limit"),
    ]
    path = found.write(tmp_path / "s.json", TEST)
    assert read_schedule_file(path).get("test") == TEST
    assert known_schedules(path, TEST) == [tuple(read_schedule_file(path).decisions)]
    assert known_schedules(path, "another.py::test") == []
    text = found.message("where", path, "pytest again")
    assert text.splitlines()[0].startswith("where: a schedule of ")
    assert "shrunk to 2 fault(s)" in text.splitlines()[0]
    assert "RuntimeError: gave up after two failures in a row" in text
    assert '@pytest.mark.chaos(schedule=[{"target": "search", "call": 1,' in text
    assert f"schedule file: {path} (replay: pytest again)" in text


def test_faults_that_never_fire_are_dropped_down_to_the_empty_schedule() -> None:
    # the body's assertion needs the fault it declares: with none at all it fails the same way
    spec = RunSpec(faults=parse_faults([{"kind": "timeout", "tools": ["search"]}], "faults"))
    body = Body(expects_its_declared_timeout)
    run, error = _own_run(spec, body)
    assert error is None
    found = search_test(SETTINGS, spec, TEST, REGISTRY, body, run, error, budget=20)
    assert found is not None
    assert found.schedule == () and found.final.trace.schedule() == []
    assert str(found.final.failure) == "error Failed"
    text = found.message("where", Path("s.json"), "pytest again")
    assert "shrunk to 0 fault(s)" in text
    assert "with no fault at all" in text and "chaos(explore=False)" in text
    assert "@pytest.mark.chaos(schedule=[], seed=" in text


SCHEMA = {
    "type": "object",
    "properties": {"origin": {"type": "string"}, "cabin": {"type": "string"}},
    "required": ["origin"],
}


def books_the_cabin_it_asks_for(chaos: Chaos) -> None:
    """Asks again when a booking is refused; every booking it makes must be the cabin asked."""
    booked: list[str] = []

    def book(origin: str, cabin: str = "economy") -> str:
        booked.append(cabin)
        return f"{origin}/{cabin}"

    tool = chaos.wrap(book, schema=SCHEMA)
    for _ in range(3):
        try:
            tool(origin="NRT", cabin="business")
        except TypeError:  # a call the tool refused: the agent asks again
            continue
    assert set(booked) <= {"business"}, booked


def test_a_search_removes_only_keys_the_tools_schema_requires() -> None:
    # a key with a default is not "missing" when left out: the tool runs with its default, a
    # model's omission no test can blame on the agent. The search drew on the schema-less
    # first arguments and found "cabin removed" here (issue 31, the flights example).
    faults = parse_faults([{"kind": "malformed_params", "mutations": ["missing_required"]}], "f")
    spec = RunSpec(faults=faults, seed=5)
    body = Body(books_the_cabin_it_asks_for)
    run, error = _own_run(spec, body)
    assert error is None
    found = search_test(SETTINGS, spec, TEST, REGISTRY, body, run, error, budget=30)
    assert found is None
    assert body.runs > 2  # it searched: only "origin" was ever removed, and the agent asked again


def test_a_schedule_failing_another_assertion_is_not_the_same_failure() -> None:
    # the failure a search found must be the one the shrunk schedule keeps: an error of the
    # same type raised at another line (the test's own "a fault fired" guard) is another one
    from pytest_agentchaos.harness.rerun import FailureKind, failure_of

    def fails_at(line: int) -> BaseException:
        try:
            if line == 1:
                raise AssertionError("first")
            raise AssertionError("second")
        except AssertionError as exc:
            return exc

    spec = RunSpec(profile="none")
    one, two = (
        run_attempt(SETTINGS, spec, TEST, REGISTRY, Body(lambda c: None), None) for _ in "ab"
    )
    first, _ = failure_of(one.run, fails_at(1))
    second, _ = failure_of(two.run, fails_at(2))
    assert isinstance(first, FailureKind) and isinstance(second, FailureKind)
    assert first.name == second.name == "AssertionError"
    assert first != second
    assert str(first) == "error AssertionError" and first.where.startswith("test_search_driver.py:")


def test_a_body_that_runs_once_only_is_not_searched() -> None:
    spec = RunSpec(profile="rate_limited", seed=3)
    wrapped: list[Any] = []

    def kept(chaos: Chaos) -> None:
        if not wrapped:
            wrapped.append(chaos.wrap(lambda q: [q], name="search"))
        wrapped[0](1)

    body = Body(kept)
    run, error = _own_run(spec, body)
    with pytest.raises(NotRerunnable, match="wrapped by a run that has ended"):
        search_test(SETTINGS, spec, TEST, REGISTRY, body, run, error, budget=5)


def test_a_breaking_point_is_bisected_over_the_bodys_re_runs() -> None:
    def deadline(chaos: Chaos) -> None:
        chaos.wrap(lambda q: [q], name="search")("louvre")
        assert chaos.clock.now() <= 7.5, "the answer came too late"

    spec = RunSpec(faults=parse_faults([{"kind": "latency", "seconds": 1}], "faults"))
    body = Body(deadline)
    run, error = _own_run(spec, body)
    point = bisect_test(
        SETTINGS, spec, TEST, REGISTRY, body, run, parse_target("latency.seconds"), runs=3
    )
    assert point.threshold == 7.6
    assert point.breaks is not None and point.breaks.passed == 0
    assert point.holds is not None and (point.holds.value, point.holds.passed) == (7.5, 3)
    assert body.runs == 1 + 3 * len(point.probes)
