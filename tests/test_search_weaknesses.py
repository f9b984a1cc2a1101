"""Schedule search against agents with a planted weakness, through the harness without pytest:
the search finds each within its budget, shrinking ends at the planted minimal schedule, the
same seed gives the same result, and a shrunk schedule read back from its file reproduces the
failure byte for byte."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_agentchaos.faults import parse_faults
from pytest_agentchaos.harness.rerun import (
    Attempt,
    FirstRun,
    NotRerunnable,
    run_attempt,
    search_schedules,
)
from pytest_agentchaos.harness.settings import SessionSettings
from pytest_agentchaos.harness.spec import RunSpec
from pytest_agentchaos.inject import Chaos
from pytest_agentchaos.profiles.profile import ProfileRegistry
from pytest_agentchaos.search.schedule import entries, read_schedule_file, write_schedule_file

SETTINGS = SessionSettings(seed=1, wall_timeout=0)
REGISTRY = ProfileRegistry.default(None)
#: What the search may inject (probability 0: the first run is fault-free; the search places
#: faults itself).
FAULTS = parse_faults(
    [
        {"kind": "rate_limit", "retry_after": [1, 60], "probability": 0},
        {"kind": "timeout", "seconds": [1, 30], "probability": 0},
        {"kind": "latency", "seconds": [0.5, 20], "probability": 0},
        {"kind": "http_error", "status": [500, 503], "probability": 0},
    ],
    "faults",
)
SPEC = RunSpec(faults=FAULTS)
#: The budget of one search (and, again, of its shrinking).
BUDGET = 150


def _tools(chaos: Chaos) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def search(q: int) -> list[int]:
        return [q]

    def book(q: int) -> str:
        return f"booked {q}"

    return chaos.wrap(search), chaos.wrap(book)


def two_rate_limits_in_a_row(chaos: Chaos) -> None:
    """Survives anything but two 429s in a row on ``search``."""
    search, book = _tools(chaos)
    limited: dict[str, int] = {}
    for q in range(10):
        for name, tool in (("search", search), ("book", book)):
            try:
                tool(q)
                limited[name] = 0
            except Exception as exc:  # noqa: BLE001 - the agent's own retry logic
                if getattr(exc, "status", None) == 429 and name == "search":
                    limited[name] = limited.get(name, 0) + 1
                    if limited[name] == 2:
                        raise RuntimeError("search rate limited twice: gave up") from exc
                else:
                    limited[name] = 0


def timeout_after_success(chaos: Chaos) -> None:
    """A timeout right after a successful round corrupts its cache; any other order is fine
    (a failed ``search`` skips that round's ``book``)."""
    search, book = _tools(chaos)
    last_ok = False
    for q in range(10):
        try:
            search(q)
            book(q)
            last_ok = True
        except TimeoutError:
            if last_ok:
                raise LookupError("stale cache after a timeout") from None
            last_ok = False
        except Exception:  # noqa: BLE001
            last_ok = False


def latency_threshold(chaos: Chaos) -> None:
    """Gives up on a ``search`` slower than 5 virtual seconds."""
    search, book = _tools(chaos)
    for q in range(10):
        before = chaos.clock.now()
        try:
            search(q)
        except Exception:  # noqa: BLE001
            continue
        if chaos.clock.now() - before > 5:
            raise TimeoutError("search too slow")
        try:
            book(q)
        except Exception:  # noqa: BLE001
            continue


def _search(body: Callable[[Chaos], None], seed: int = 1) -> tuple[Any, list[Attempt]]:
    attempts: list[Attempt] = []

    def attempt(schedule: Any) -> Attempt:
        found = run_attempt(SETTINGS, SPEC, "t.py::test_agent", REGISTRY, body, schedule)
        attempts.append(found)
        return found

    first = run_attempt(SETTINGS, SPEC, "t.py::test_agent", REGISTRY, body, None)
    assert first.failure is None
    info = FirstRun.of(first.run, first.error, FAULTS)
    info = FirstRun(info.failure, info.schedule, info.calls, info.args, info.faults, seed)
    return search_schedules(info, attempt, budget=BUDGET), attempts


def _user(exploration: Any) -> list[dict[str, Any]]:
    return entries(exploration.shrunk)


def test_two_rate_limits_in_a_row_shrink_to_the_first_two_calls_of_search() -> None:
    found, attempts = _search(two_rate_limits_in_a_row)
    assert found.failure is not None and str(found.failure) == "error RuntimeError"
    assert _user(found) == [
        {"target": "search", "call": 1, "kind": "rate_limit", "retry_after": 0},
        {"target": "search", "call": 2, "kind": "rate_limit", "retry_after": 0},
    ]
    assert len(attempts) == found.attempts <= 2 * BUDGET + 1


def test_a_timeout_after_a_success_shrinks_to_one_timeout_on_the_second_call() -> None:
    found, _ = _search(timeout_after_success)
    assert str(found.failure) == "error LookupError"
    # one timeout on a second call: on either tool it follows a success
    ((entry),) = _user(found)
    assert entry in (
        {"target": "book", "call": 2, "kind": "timeout", "seconds": 0},
        {"target": "search", "call": 2, "kind": "timeout", "seconds": 0},
    )


def test_latency_shrinks_to_the_least_that_still_fails() -> None:
    found, _ = _search(latency_threshold)
    assert str(found.failure) == "error TimeoutError"
    (entry,) = _user(found)
    assert (entry["target"], entry["call"], entry["kind"]) == ("search", 1, "latency")
    assert 5 < entry["seconds"] <= 5.3


def test_the_same_seed_searches_and_shrinks_the_same_way() -> None:
    one, attempts_one = _search(two_rate_limits_in_a_row, seed=7)
    two, attempts_two = _search(two_rate_limits_in_a_row, seed=7)
    assert one.found == two.found and one.shrunk == two.shrunk
    assert [a.schedule for a in attempts_one] == [a.schedule for a in attempts_two]


def test_a_shrunk_schedule_file_replays_the_failure_byte_for_byte(tmp_path: Path) -> None:
    found, _ = _search(timeout_after_success)
    final = run_attempt(
        SETTINGS, SPEC, "t.py::test_agent", REGISTRY, timeout_after_success, found.shrunk
    )
    path = write_schedule_file(
        tmp_path / "s.json", test="t.py::test_agent", schedule=found.shrunk, seed=0, profile="none"
    )
    again = run_attempt(
        SETTINGS,
        SPEC,
        "t.py::test_agent",
        REGISTRY,
        timeout_after_success,
        read_schedule_file(path).decisions,
    )
    assert again.trace.to_json() == final.trace.to_json()
    assert (again.failure, again.explanation) == (final.failure, final.explanation)


def test_a_body_that_keeps_state_between_runs_is_not_re_runnable() -> None:
    runs = [0]

    def body(chaos: Chaos) -> None:
        search, _ = _tools(chaos)
        runs[0] += 1
        for q in range(runs[0]):  # one more call each run
            search(q)

    first = run_attempt(SETTINGS, SPEC, "t", REGISTRY, body, None)
    info = FirstRun.of(first.run, None, FAULTS)
    with pytest.raises(NotRerunnable, match="other calls .*keeps state between runs"):
        search_schedules(
            info, lambda s: run_attempt(SETTINGS, SPEC, "t", REGISTRY, body, s), budget=5
        )


def test_tools_wrapped_by_the_first_run_are_not_re_runnable() -> None:
    kept: list[Any] = []

    def body(chaos: Chaos) -> None:
        if not kept:  # wrapped once, as a fixture would
            kept.append(_tools(chaos)[0])
        kept[0](1)

    first = run_attempt(SETTINGS, SPEC, "t", REGISTRY, body, None)
    info = FirstRun.of(first.run, None, FAULTS)
    with pytest.raises(NotRerunnable, match="wrapped by a run that has ended"):
        search_schedules(
            info, lambda s: run_attempt(SETTINGS, SPEC, "t", REGISTRY, body, s), budget=5
        )


def test_a_schedule_naming_a_target_never_called_has_no_effect_and_is_shrunk_away() -> None:
    schedule = [
        {"channel": "tool", "target": "nowhere", "index": 1, "kind": "timeout",
         "detail": {"seconds": 1.0}},
        {"channel": "tool", "target": "search", "index": 1, "kind": "rate_limit",
         "detail": {"status": 429, "retry_after": 3.0}},
        {"channel": "tool", "target": "search", "index": 2, "kind": "rate_limit",
         "detail": {"status": 429, "retry_after": 3.0}},
    ]  # fmt: skip
    first = run_attempt(SETTINGS, SPEC, "t", REGISTRY, two_rate_limits_in_a_row, schedule)
    assert str(first.failure) == "error RuntimeError"
    assert [e.target for e in first.trace.faults()] == ["search", "search"]
    info = FirstRun.of(first.run, first.error, FAULTS)
    found = search_schedules(
        info,
        lambda s: run_attempt(SETTINGS, SPEC, "t", REGISTRY, two_rate_limits_in_a_row, s),
        budget=50,
    )
    assert found is not None and found.shrunk is not None
    assert [d["target"] for d in found.shrunk] == ["search", "search"]
