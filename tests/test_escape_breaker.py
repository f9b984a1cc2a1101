"""Circuit breakers: closed -> open at the failure threshold, one probe after the reset timeout
(on virtual time), probes that close or reopen it, every transition in the trace; and a
hypothesis state machine that drives a breaker against a simple model of all of that.
"""

from __future__ import annotations

import asyncio
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from pytest_agentchaos.clock import VirtualClock
from pytest_agentchaos.errors import ChaosConfigError, HardHalt
from pytest_agentchaos.escape.backoff import Backoff, BackoffPolicy
from pytest_agentchaos.escape.breaker import (
    BreakerOpen,
    BreakerPolicy,
    Breakers,
    CircuitBreaker,
)
from pytest_agentchaos.escape.recorder import TraceRecorder
from pytest_agentchaos.trace import Intervention


def make(**policy: Any) -> tuple[CircuitBreaker, VirtualClock, TraceRecorder]:
    clock = VirtualClock()
    recorder = TraceRecorder(clock=clock)
    return CircuitBreaker("search", BreakerPolicy(**policy), clock, recorder), clock, recorder


def moves(recorder: TraceRecorder) -> list[tuple[str, str, str]]:
    """The recorded transitions as (from, to, reason)."""
    return [
        (e.detail["from"], e.detail["to"], e.detail["reason"])
        for e in recorder.trace.of_type(Intervention)
        if e.action == "breaker"
    ]


def fail_times(breaker: CircuitBreaker, n: int) -> None:
    for _ in range(n):
        assert breaker.allow()
        breaker.record_failure()


class Boom(Exception):
    pass


def boom() -> str:
    raise Boom("503 from upstream")


# -- the policy -------------------------------------------------------------------------


def test_defaults_are_the_documented_ones() -> None:
    assert BreakerPolicy() == BreakerPolicy(
        failure_threshold=5, reset_timeout=30.0, half_open_max_calls=1, window=None
    )


def test_from_dict_reads_a_profile_table() -> None:
    policy = BreakerPolicy.from_dict({"failure_threshold": 3, "reset_timeout": 10, "window": 60})
    assert policy == BreakerPolicy(failure_threshold=3, reset_timeout=10.0, window=60.0)
    assert isinstance(policy.reset_timeout, float)
    assert BreakerPolicy.from_dict({}, "p") == BreakerPolicy()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"threshold": 3}, "unknown key 'threshold'; allowed: failure_threshold, reset_timeout"),
        ({"failure_threshold": 0}, "failure_threshold: must be >= 1, got 0"),
        ({"failure_threshold": True}, "failure_threshold: expected an integer >= 1, got True"),
        ({"half_open_max_calls": "1"}, "half_open_max_calls: expected an integer >= 1, got '1'"),
        ({"reset_timeout": "30s"}, "reset_timeout: expected a finite number of seconds, got '30s'"),
        ({"reset_timeout": -1}, "reset_timeout: must be >= 0 seconds, got -1"),
        ({"window": 0}, "window: must be > 0 seconds, got 0"),
        ({"window": "1m"}, "window: expected a finite number of seconds, got '1m'"),
    ],
)
def test_from_dict_errors_name_the_source_the_key_and_what_is_allowed(
    table: dict[str, Any], message: str
) -> None:
    with pytest.raises(ChaosConfigError) as info:
        BreakerPolicy.from_dict(table, "outage.toml [escape.breaker]")
    assert str(info.value).startswith("outage.toml [escape.breaker]")
    assert message in str(info.value)


def test_from_dict_refuses_a_non_table_and_code_is_validated_too() -> None:
    with pytest.raises(ChaosConfigError, match="p: breaker must be a table/dict, got 'x'"):
        BreakerPolicy.from_dict("x", "p")  # type: ignore[arg-type]
    with pytest.raises(ChaosConfigError, match="BreakerPolicy: failure_threshold"):
        BreakerPolicy(failure_threshold=0)


# -- the lifecycle ------------------------------------------------------------------------


def test_consecutive_failures_open_the_breaker_at_the_threshold() -> None:
    breaker, clock, recorder = make(failure_threshold=3)
    fail_times(breaker, 2)
    assert breaker.state == "closed"
    clock.advance(5.0)
    fail_times(breaker, 1)
    assert breaker.state == "open"
    assert not breaker.allow()
    assert breaker.retry_in() == 30.0
    (event,) = recorder.trace.of_type(Intervention)
    assert (event.action, event.t) == ("breaker", 5.0)
    assert event.detail == {
        "tool": "search",
        "from": "closed",
        "to": "open",
        "reason": "failure_threshold",
        "failures": 3,
    }


def test_a_success_ends_the_failure_streak() -> None:
    breaker, _, recorder = make(failure_threshold=3)
    for _ in range(5):
        fail_times(breaker, 2)
        breaker.record_success()
    assert breaker.state == "closed"
    assert moves(recorder) == []


def test_with_a_window_only_recent_failures_count() -> None:
    breaker, clock, _ = make(failure_threshold=3, window=10.0)
    for _ in range(6):
        fail_times(breaker, 1)
        clock.advance(6.0)  # never three failures within 10 s
    assert breaker.state == "closed"
    breaker.record_success()
    fail_times(breaker, 1)
    clock.advance(10.0)  # exactly the window: the first still counts
    fail_times(breaker, 2)
    assert breaker.state == "open"


def test_open_refuses_until_the_reset_timeout_then_admits_one_probe() -> None:
    breaker, clock, recorder = make(failure_threshold=1, reset_timeout=30.0)
    fail_times(breaker, 1)
    clock.advance(29.5)
    assert not breaker.allow()
    assert breaker.retry_in() == 0.5
    clock.advance(0.5)
    assert breaker.state == "open"  # the move happens when someone asks
    assert breaker.retry_in() == 0.0
    assert breaker.allow()
    assert breaker.state == "half_open"
    assert not breaker.allow()  # the probe is in flight
    assert breaker.retry_in() == 30.0
    assert moves(recorder)[-1] == ("open", "half_open", "reset_timeout")


def test_a_good_probe_closes_the_breaker() -> None:
    breaker, clock, recorder = make(failure_threshold=1, reset_timeout=10.0)
    fail_times(breaker, 1)
    clock.advance(10.0)
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state == "closed"
    assert all(breaker.allow() for _ in range(3))
    assert moves(recorder) == [
        ("closed", "open", "failure_threshold"),
        ("open", "half_open", "reset_timeout"),
        ("half_open", "closed", "probe_succeeded"),
    ]


def test_a_failed_probe_reopens_with_a_fresh_timeout() -> None:
    breaker, clock, recorder = make(failure_threshold=2, reset_timeout=10.0)
    fail_times(breaker, 2)
    clock.advance(25.0)
    assert breaker.allow()
    clock.advance(3.0)  # the probe takes a while
    breaker.record_failure()
    assert breaker.state == "open"
    assert breaker.retry_in() == 10.0
    clock.advance(9.0)
    assert not breaker.allow()
    reopen = recorder.trace.of_type(Intervention)[-1]
    assert (reopen.t, moves(recorder)[-1]) == (28.0, ("half_open", "open", "probe_failed"))


def test_several_probes_must_all_succeed() -> None:
    breaker, clock, _ = make(failure_threshold=1, reset_timeout=1.0, half_open_max_calls=2)
    fail_times(breaker, 1)
    clock.advance(1.0)
    assert breaker.allow() and breaker.allow() and not breaker.allow()
    breaker.record_success()
    assert breaker.state == "half_open"
    assert not breaker.allow()  # one probe used up, one in flight
    breaker.record_success()
    assert breaker.state == "closed"


def test_released_probes_free_their_slot() -> None:
    breaker, clock, _ = make(failure_threshold=1, reset_timeout=1.0)
    fail_times(breaker, 1)
    clock.advance(1.0)
    assert breaker.allow()
    breaker.release()
    assert breaker.state == "half_open"
    assert breaker.allow()


def test_stragglers_reporting_while_open_change_nothing() -> None:
    breaker, clock, recorder = make(failure_threshold=1, reset_timeout=10.0)
    fail_times(breaker, 1)
    clock.advance(4.0)
    breaker.record_failure()
    breaker.record_success()
    breaker.release()
    assert (breaker.state, breaker.retry_in(), len(moves(recorder))) == ("open", 6.0, 1)


def test_a_zero_reset_timeout_probes_at_once() -> None:
    breaker, _, _ = make(failure_threshold=1, reset_timeout=0.0)
    fail_times(breaker, 1)
    assert breaker.retry_in() == 0.0
    assert breaker.allow()
    assert breaker.state == "half_open"


@given(
    st.floats(0, 1e6),
    st.floats(0, 1e4).filter(lambda x: x > 0),
    st.lists(st.floats(0, 1e3), max_size=5),
)
def test_sleeping_retry_in_always_reaches_the_probe(
    start: float, reset: float, steps: list[float]
) -> None:
    breaker, clock, _ = make(failure_threshold=1, reset_timeout=reset)
    clock.advance(start)
    fail_times(breaker, 1)
    for step in steps:
        clock.advance(min(step, breaker.retry_in()))
    clock.sleep(breaker.retry_in())
    assert breaker.allow()


def test_retry_in_rounds_up_where_plain_subtraction_falls_one_ulp_short() -> None:
    breaker, clock, _ = make(failure_threshold=1, reset_timeout=33.0)
    clock.advance(3.370522666645747)
    fail_times(breaker, 1)
    probe_at = clock.now() + 33.0
    clock.advance_to(4.103288475567613)
    now = clock.now()
    assert now + (probe_at - now) < probe_at  # the case the state machine found
    clock.sleep(breaker.retry_in())
    assert breaker.allow()


def test_without_a_recorder_it_still_works() -> None:
    clock = VirtualClock()
    breaker = CircuitBreaker("search", BreakerPolicy(failure_threshold=1), clock)
    fail_times(breaker, 1)
    assert breaker.state == "open"
    assert repr(breaker) == "CircuitBreaker('search', state='open')"


# -- guard / call ----------------------------------------------------------------------------


def test_guard_raises_breaker_open_with_the_tool_and_the_wait() -> None:
    breaker, clock, _ = make(failure_threshold=1, reset_timeout=30.0)
    breaker.guard()
    breaker.record_failure()
    clock.advance(12.0)
    with pytest.raises(BreakerOpen) as info:
        breaker.guard()
    assert (info.value.tool, info.value.retry_in) == ("search", 18.0)
    assert str(info.value) == "circuit breaker for tool 'search' is open; next probe in 18s"
    assert isinstance(info.value, Exception)
    copy = pickle.loads(pickle.dumps(info.value))
    assert (type(copy), copy.tool, copy.retry_in) == (BreakerOpen, "search", 18.0)


def test_call_reports_failures_and_successes() -> None:
    breaker, clock, recorder = make(failure_threshold=2, reset_timeout=5.0)
    for _ in range(2):
        with pytest.raises(Boom):
            breaker.call(boom)
    calls = []
    with pytest.raises(BreakerOpen):
        breaker.call(lambda: calls.append(1))
    assert calls == []  # refused without running the tool
    clock.advance(5.0)
    assert breaker.call(lambda: "found") == "found"
    assert breaker.state == "closed"
    assert [m[1] for m in moves(recorder)] == ["open", "half_open", "closed"]


def test_call_leaves_errors_that_are_not_the_tools_fault_out_of_the_count() -> None:
    breaker, _, _ = make(failure_threshold=1)

    def bad_args() -> None:
        raise ValueError("date must be ISO 8601")

    with pytest.raises(ValueError):
        breaker.call(bad_args, is_failure=lambda exc: not isinstance(exc, ValueError))
    assert breaker.state == "closed"


def test_a_probe_cut_short_by_a_hard_halt_frees_its_slot() -> None:
    breaker, clock, _ = make(failure_threshold=1, reset_timeout=1.0)
    breaker.call(lambda: None)
    breaker.record_failure()
    clock.advance(1.0)

    def halted() -> None:
        raise HardHalt("budget")

    with pytest.raises(HardHalt):
        breaker.call(halted)
    assert (breaker.state, breaker.retry_in()) == ("half_open", 0.0)


async def test_acall_and_a_cancelled_probe() -> None:
    breaker, clock, _ = make(failure_threshold=1, reset_timeout=1.0)

    async def down() -> str:
        raise Boom("down")

    async def cancelled() -> str:
        raise asyncio.CancelledError

    async def up() -> str:
        return "ok"

    with pytest.raises(Boom):
        await breaker.acall(down)
    clock.advance(1.0)
    with pytest.raises(asyncio.CancelledError):
        await breaker.acall(cancelled)
    assert breaker.state == "half_open"
    assert await breaker.acall(up) == "ok"
    assert breaker.state == "closed"


def test_backoff_waits_for_the_probe_when_the_breaker_says_how_long() -> None:
    clock = VirtualClock()
    recorder = TraceRecorder(clock=clock)
    breaker = CircuitBreaker(
        "search", BreakerPolicy(failure_threshold=2, reset_timeout=20.0), clock, recorder
    )
    backoff = Backoff(BackoffPolicy(jitter="none", max_attempts=6), clock, recorder=recorder)
    outcomes = iter([Boom("503"), Boom("503"), "results"])

    def tool() -> str:
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def should_retry(exc: Exception) -> bool | float:
        return exc.retry_in if isinstance(exc, BreakerOpen) else True

    result = backoff.call(lambda: breaker.call(tool), should_retry=should_retry, key="search")
    assert result == "results"
    # fail, wait 1 s, fail (opens at t=1), wait 2 s, refused at t=3 -> wait the 18 s the
    # breaker asked for (more than the 4 s backoff) -> the probe at t=21 succeeds.
    assert clock.now() == 21.0
    assert [(e.action, e.detail.get("to"), e.detail.get("delay")) for e in recorder.trace] == [
        ("backoff", None, 1.0),
        ("breaker", "open", None),
        ("backoff", None, 2.0),
        ("backoff", None, 18.0),
        ("breaker", "half_open", None),
        ("breaker", "closed", None),
    ]


# -- the registry ------------------------------------------------------------------------


def test_breakers_keep_one_breaker_per_tool() -> None:
    clock = VirtualClock()
    recorder = TraceRecorder(clock=clock)
    breakers = Breakers(BreakerPolicy(failure_threshold=1), clock, recorder)
    search = breakers.for_tool("search")
    assert breakers.for_tool("search") is search
    search.record_failure()
    assert breakers.for_tool("book").allow()
    assert breakers.states() == {"search": "open", "book": "closed"}
    assert [b.tool for b in breakers] == ["search", "book"]
    assert len(breakers) == 2
    assert search.recorder is recorder and search.clock is clock


# -- the state machine -----------------------------------------------------------------------

REASONS = {
    ("closed", "open"): "failure_threshold",
    ("open", "half_open"): "reset_timeout",
    ("half_open", "closed"): "probe_succeeded",
    ("half_open", "open"): "probe_failed",
}

durations = st.one_of(
    st.floats(0, 100),
    st.sampled_from([0.0, 0.1, 0.5, 1.0, 10.0, 30.0]),
    st.floats(0, 1e-6),
)


class BreakerMachine(RuleBasedStateMachine):
    """Drives a breaker with arbitrary calls, reports and clock moves; a few lines of model
    say what it must answer."""

    @initialize(
        threshold=st.integers(1, 4),
        reset=st.one_of(st.sampled_from([0.0, 0.1, 1.0, 30.0]), st.floats(0, 100)),
        max_calls=st.integers(1, 3),
        window=st.one_of(st.none(), st.floats(0.1, 50)),
    )
    def setup(self, threshold: int, reset: float, max_calls: int, window: float | None) -> None:
        self.clock = VirtualClock()
        self.recorder = TraceRecorder(clock=self.clock)
        self.policy = BreakerPolicy(threshold, reset, max_calls, window)
        self.breaker = CircuitBreaker("search", self.policy, self.clock, self.recorder)
        # The model.
        self.state = "closed"
        self.streak: list[float] = []
        self.probe_at = 0.0
        self.in_flight = 0
        self.successes = 0
        self.transitions: list[tuple[str, str, float]] = []

    def move(self, to: str) -> None:
        self.transitions.append((self.state, to, self.clock.now()))
        self.state = to
        self.streak, self.in_flight, self.successes = [], 0, 0
        if to == "open":
            self.probe_at = self.clock.now() + self.policy.reset_timeout

    def model_allow(self) -> bool:
        if self.state == "closed":
            return True
        if self.state == "open":
            if self.clock.now() < self.probe_at:
                return False
            self.move("half_open")
        if self.in_flight + self.successes >= self.policy.half_open_max_calls:
            return False
        self.in_flight += 1
        return True

    def model_success(self) -> None:
        if self.state == "closed":
            self.streak = []
        elif self.state == "half_open":
            self.in_flight = max(0, self.in_flight - 1)
            self.successes += 1
            if self.successes >= self.policy.half_open_max_calls:
                self.move("closed")

    def model_failure(self) -> None:
        now = self.clock.now()
        if self.state == "closed":
            self.streak.append(now)
            window = self.policy.window
            self.streak = [t for t in self.streak if window is None or now - t <= window]
            if len(self.streak) >= self.policy.failure_threshold:
                self.move("open")
        elif self.state == "half_open":
            self.move("open")

    # -- rules --

    @rule(dt=durations)
    def advance(self, dt: float) -> None:
        self.clock.advance(dt)

    @rule()
    def attempt(self) -> None:
        was_open_early = self.state == "open" and self.clock.now() < self.probe_at
        allowed = self.breaker.allow()
        assert allowed == self.model_allow()
        if was_open_early:
            assert not allowed, "an open breaker let a call through before its reset timeout"

    @rule()
    def succeed(self) -> None:
        self.breaker.record_success()
        self.model_success()

    @rule()
    def fail(self) -> None:
        self.breaker.record_failure()
        self.model_failure()

    @rule()
    def release(self) -> None:
        self.breaker.release()
        if self.state == "half_open" and self.in_flight > 0:
            self.in_flight -= 1

    @rule(ok=st.booleans())
    def call(self, ok: bool) -> None:
        """The usual way: ask, and if admitted run the tool and report."""
        allowed = self.breaker.allow()
        assert allowed == self.model_allow()
        if allowed:
            if ok:
                self.breaker.record_success()
                self.model_success()
            else:
                self.breaker.record_failure()
                self.model_failure()

    @rule()
    def wait_for_probe(self) -> None:
        """Sleeping retry_in() on the clock is always enough, unless probes are in flight."""
        busy = self.state == "half_open" and (
            self.in_flight + self.successes >= self.policy.half_open_max_calls
        )
        self.clock.sleep(self.breaker.retry_in())
        allowed = self.breaker.allow()
        assert allowed == self.model_allow()
        assert allowed or busy

    # -- invariants --

    @invariant()
    def same_state_as_the_model(self) -> None:
        assert self.breaker.state == self.state

    @invariant()
    def at_most_the_allowed_probes(self) -> None:
        assert self.in_flight + self.successes <= self.policy.half_open_max_calls
        if self.state != "half_open":
            assert self.in_flight == self.successes == 0

    @invariant()
    def retry_in_says_when(self) -> None:
        wait = self.breaker.retry_in()
        now = self.clock.now()
        if self.state == "closed":
            assert wait == 0.0
        elif self.state == "open":
            assert wait >= 0.0 and now + wait >= self.probe_at
            assert wait == 0.0 or now < self.probe_at
            assert wait <= self.policy.reset_timeout * (1 + 1e-9) + 1e-9

    @invariant()
    def every_transition_is_recorded_in_order(self) -> None:
        events = [e for e in self.recorder.trace.of_type(Intervention) if e.action == "breaker"]
        recorded = [(e.detail["from"], e.detail["to"], e.t) for e in events]
        assert recorded == self.transitions
        for e in events:
            assert e.detail["tool"] == "search"
            assert e.detail["reason"] == REASONS[(e.detail["from"], e.detail["to"])]
        chain = ["closed"] + [to for _, to, _ in recorded]
        assert all(f == prev for (f, _, _), prev in zip(recorded, chain, strict=False))
        assert chain[-1] == self.breaker.state


BreakerMachine.TestCase.settings = settings(max_examples=300, stateful_step_count=40, deadline=None)
TestBreakerMachine = BreakerMachine.TestCase
