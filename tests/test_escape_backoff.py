"""Backoff: exponential caps with AWS-style jitter drawn from the seed, Retry-After as a floor,
waits that go to the clock (virtual here: no test sleeps for real) and land in the trace, and
the one retry loop (`Backoff.call` / `acall`) callers use instead of writing their own.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.clock import VirtualClock
from pytest_agentchaos.errors import ChaosConfigError, HardHalt
from pytest_agentchaos.escape.backoff import JITTERS, Backoff, BackoffPolicy, Jitter
from pytest_agentchaos.escape.recorder import TraceRecorder
from pytest_agentchaos.trace import Intervention

finite = st.floats(allow_nan=False, allow_infinity=False)
policies = st.builds(
    BackoffPolicy,
    base=st.floats(0.001, 100),
    factor=st.floats(1, 10),
    max_delay=st.floats(0.001, 3600),
    jitter=st.sampled_from(JITTERS),
    max_attempts=st.integers(1, 10),
)
attempts = st.integers(0, 80)
keys = st.text(max_size=12)
seeds = st.integers(0, 2**32)


def make(policy: BackoffPolicy | None = None, seed: int = 0) -> tuple[Backoff, VirtualClock]:
    clock = VirtualClock()
    recorder = TraceRecorder(clock=clock)
    return Backoff(policy or BackoffPolicy(), clock, seed=seed, recorder=recorder), clock


def interventions(backoff: Backoff) -> list[Intervention]:
    assert isinstance(backoff.recorder, TraceRecorder)
    return backoff.recorder.trace.of_type(Intervention)


# -- the policy -------------------------------------------------------------------------


def test_defaults_are_the_documented_ones() -> None:
    policy = BackoffPolicy()
    assert (policy.base, policy.factor, policy.max_delay) == (1.0, 2.0, 60.0)
    assert (policy.jitter, policy.max_attempts, policy.retry_after_cap) == ("full", 5, None)


def test_from_dict_reads_a_profile_table_and_keeps_defaults_for_missing_keys() -> None:
    policy = BackoffPolicy.from_dict({"base": 2, "jitter": "equal", "retry_after_cap": 120}, "p")
    assert policy == BackoffPolicy(base=2.0, jitter="equal", retry_after_cap=120.0)
    assert isinstance(policy.base, float)
    assert BackoffPolicy.from_dict({}, "p") == BackoffPolicy()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"bse": 1}, "flaky.toml [escape.backoff]: unknown key 'bse'; allowed: base, factor"),
        (
            {"jitter": "decorrelated"},
            "jitter: 'decorrelated' is not one of full, equal, none",
        ),
        ({"max_attempts": 0}, "max_attempts: must be >= 1, got 0"),
        ({"max_attempts": 2.5}, "max_attempts: expected an integer >= 1, got 2.5"),
        ({"base": "1s"}, "base: expected a finite number of seconds, got '1s'"),
        ({"base": True}, "base: expected a finite number of seconds, got True"),
        ({"max_delay": math.inf}, "max_delay: expected a finite number of seconds, got inf"),
        ({"base": 0}, "base: must be > 0 seconds, got 0"),
        ({"factor": 0.5}, "factor: must be >= 1, got 0.5"),
        ({"factor": "2"}, "factor: expected a finite number, got '2'"),
        ({"retry_after_cap": -1}, "retry_after_cap: must be >= 0 seconds, got -1"),
    ],
)
def test_from_dict_errors_name_the_source_the_key_and_what_is_allowed(
    table: dict[str, Any], message: str
) -> None:
    with pytest.raises(ChaosConfigError) as info:
        BackoffPolicy.from_dict(table, "flaky.toml [escape.backoff]")
    assert str(info.value).startswith("flaky.toml [escape.backoff]")
    assert message in str(info.value)


def test_from_dict_refuses_a_non_table() -> None:
    with pytest.raises(ChaosConfigError, match="p: backoff must be a table/dict, got 3"):
        BackoffPolicy.from_dict(3, "p")  # type: ignore[arg-type]


def test_a_policy_built_in_code_is_validated_too() -> None:
    with pytest.raises(ChaosConfigError, match="BackoffPolicy: jitter: 'half' is not one of full"):
        BackoffPolicy(jitter="half")  # type: ignore[arg-type]
    with pytest.raises(ChaosConfigError, match="BackoffPolicy: base: must be > 0 seconds, got 0"):
        BackoffPolicy(base=0)


@given(policies, attempts)
def test_caps_never_decrease_and_never_exceed_max_delay(policy: BackoffPolicy, n: int) -> None:
    assert 0 < policy.cap(n) <= policy.cap(n + 1) <= policy.max_delay


def test_caps_survive_attempt_numbers_whose_power_overflows() -> None:
    assert BackoffPolicy(factor=10.0).cap(10_000) == 60.0


# -- delays -------------------------------------------------------------------------------


@given(policies, attempts, seeds, keys)
def test_no_jitter_waits_exactly_the_capped_exponential(
    policy: BackoffPolicy, n: int, seed: int, key: str
) -> None:
    policy = BackoffPolicy(policy.base, policy.factor, policy.max_delay, jitter="none")
    backoff, _ = make(policy, seed)
    assert backoff.delay(n, key=key) == min(policy.max_delay, policy.base * policy.factor**n)


@given(policies, attempts, seeds, keys)
def test_jitter_draws_within_its_band_below_the_cap(
    policy: BackoffPolicy, n: int, seed: int, key: str
) -> None:
    backoff, _ = make(policy, seed)
    delay, cap = backoff.delay(n, key=key), policy.cap(n)
    low = {"full": 0.0, "equal": cap / 2, "none": cap}[policy.jitter]
    assert low <= delay <= cap <= policy.max_delay


def test_a_worked_example_of_capped_delays() -> None:
    backoff, _ = make(BackoffPolicy(base=0.5, factor=3.0, max_delay=10.0, jitter="none"))
    assert [backoff.delay(n) for n in range(5)] == [0.5, 1.5, 4.5, 10.0, 10.0]


@given(policies, st.lists(st.tuples(attempts, keys), max_size=20), seeds)
def test_same_seed_same_delays_in_any_order(
    policy: BackoffPolicy, asks: list[tuple[int, str]], seed: int
) -> None:
    first, _ = make(policy, seed)
    second, _ = make(policy, seed)
    forward = [first.delay(n, key=k) for n, k in asks]
    backward = [second.delay(n, key=k) for n, k in reversed(asks)]
    assert forward == backward[::-1]


def test_jitter_spreads_tools_and_seeds_apart() -> None:
    backoff, _ = make(BackoffPolicy(max_delay=1000.0))
    by_key = {backoff.delay(6, key=f"tool-{i}") for i in range(50)}
    by_seed = {make(BackoffPolicy(max_delay=1000.0), seed)[0].delay(6) for seed in range(50)}
    for delays in (by_key, by_seed):
        assert len(delays) == 50
        # 50 full-jitter draws under a cap of 64 s cover most of [0, 64].
        assert min(delays) < 8 and max(delays) > 56


# -- Retry-After ----------------------------------------------------------------------------


@given(policies, attempts, seeds, st.floats(0, 1e6))
def test_retry_after_is_a_floor_even_above_max_delay(
    policy: BackoffPolicy, n: int, seed: int, retry_after: float
) -> None:
    backoff, _ = make(policy, seed)
    delay = backoff.delay(n, retry_after=retry_after)
    assert delay >= retry_after
    assert delay == max(backoff.delay(n), retry_after)
    assert delay <= max(policy.max_delay, retry_after)


@given(policies, attempts, st.floats(0, 1e6), st.floats(0, 1e4))
def test_retry_after_cap_clips_absurd_values(
    policy: BackoffPolicy, n: int, retry_after: float, cap: float
) -> None:
    capped = BackoffPolicy(
        policy.base, policy.factor, policy.max_delay, policy.jitter, retry_after_cap=cap
    )
    backoff, _ = make(capped)
    delay = backoff.delay(n, retry_after=retry_after)
    assert min(retry_after, cap) <= delay <= max(policy.max_delay, cap)


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, True])
def test_nonsense_retry_after_is_refused(bad: float) -> None:
    backoff, _ = make()
    with pytest.raises(ValueError, match="retry_after must be a finite number of seconds >= 0"):
        backoff.delay(0, retry_after=bad)


@pytest.mark.parametrize("bad", [-1, 1.0, True])
def test_attempts_count_from_zero(bad: Any) -> None:
    backoff, _ = make()
    with pytest.raises(ValueError, match="attempt must be an integer >= 0"):
        backoff.delay(bad)


# -- waiting on the clock ----------------------------------------------------------------


@given(policies, seeds, st.lists(st.one_of(st.none(), st.floats(0, 500)), max_size=8))
@settings(max_examples=60)
def test_waits_advance_virtual_time_by_exactly_the_delays(
    policy: BackoffPolicy, seed: int, retry_afters: list[float | None]
) -> None:
    backoff, clock = make(policy, seed)
    waited = [backoff.wait(n, ra, key="search") for n, ra in enumerate(retry_afters)]
    expected = [backoff.delay(n, ra, key="search") for n, ra in enumerate(retry_afters)]
    assert waited == expected
    assert clock.now() == sum(expected)


def test_each_wait_is_recorded_when_it_is_decided() -> None:
    backoff, clock = make(BackoffPolicy(jitter="none"))
    backoff.wait(0, key="search")
    backoff.wait(1, retry_after=30.0, key="search")
    assert clock.now() == 31.0
    first, second = interventions(backoff)
    assert (first.action, first.t, first.detail) == (
        "backoff",
        0.0,
        {"attempt": 0, "delay": 1.0, "retry_after": None, "key": "search"},
    )
    assert (second.t, second.detail) == (
        1.0,
        {"attempt": 1, "delay": 30.0, "retry_after": 30.0, "key": "search"},
    )


def test_a_wait_that_a_budget_cuts_short_is_still_in_the_trace() -> None:
    backoff, clock = make(BackoffPolicy(jitter="none"))

    def budget(seconds: float) -> None:
        raise HardHalt("max_seconds exhausted")

    clock.add_listener(budget)
    with pytest.raises(HardHalt):
        backoff.wait(3, key="search")
    assert [e.detail["delay"] for e in interventions(backoff)] == [8.0]


def test_without_a_recorder_waits_still_happen() -> None:
    clock = VirtualClock()
    Backoff(BackoffPolicy(jitter="none"), clock).wait(2)
    assert clock.now() == 4.0


async def test_await_waits_on_the_clock_asynchronously() -> None:
    backoff, clock = make(BackoffPolicy(jitter="equal"), seed=7)
    delay = await backoff.await_(4, key="search")
    assert delay == backoff.delay(4, key="search")
    assert 8.0 <= clock.now() == delay <= 16.0
    assert [e.detail["delay"] for e in interventions(backoff)] == [delay]


# -- the retry loop ----------------------------------------------------------------------


class Flaky:
    """Fails ``failures`` times with ``error``, then returns ``"ok"``."""

    def __init__(self, failures: int, error: Exception | None = None) -> None:
        self.failures = failures
        self.error = error or ConnectionError("reset by peer")
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return "ok"

    async def acall(self) -> str:
        return self()


def test_call_retries_until_success_and_sleeps_between_attempts() -> None:
    backoff, clock = make(BackoffPolicy(jitter="none"))
    fn = Flaky(3)
    assert backoff.call(fn, should_retry=lambda exc: True, key="search") == "ok"
    assert fn.calls == 4
    assert clock.now() == 1.0 + 2.0 + 4.0
    assert [e.detail["attempt"] for e in interventions(backoff)] == [0, 1, 2]


def test_call_gives_up_after_max_attempts_with_the_last_error() -> None:
    backoff, clock = make(BackoffPolicy(jitter="none", max_attempts=3))
    fn = Flaky(10)
    with pytest.raises(ConnectionError, match="reset by peer"):
        backoff.call(fn, should_retry=lambda exc: True, key="search")
    assert fn.calls == 3
    assert clock.now() == 1.0 + 2.0
    *waits, give_up = interventions(backoff)
    assert [e.action for e in waits] == ["backoff", "backoff"]
    assert (give_up.action, give_up.detail) == (
        "give_up",
        {"key": "search", "attempts": 3, "error": "ConnectionError"},
    )


@pytest.mark.parametrize("decision", [False, None])
def test_call_does_not_retry_what_should_retry_declines(decision: bool | None) -> None:
    backoff, clock = make()
    fn = Flaky(1, ValueError("bad date"))
    with pytest.raises(ValueError, match="bad date"):
        backoff.call(fn, should_retry=lambda exc: decision)
    assert (fn.calls, clock.now(), interventions(backoff)) == (1, 0.0, [])


def test_call_honours_a_retry_after_from_should_retry() -> None:
    backoff, clock = make(BackoffPolicy(jitter="none", max_delay=5.0))
    fn = Flaky(2)
    backoff.call(fn, should_retry=lambda exc: 0.0 if fn.calls == 1 else 90.0, key="search")
    assert clock.now() == 1.0 + 90.0
    assert [e.detail["retry_after"] for e in interventions(backoff)] == [0.0, 90.0]


def test_hard_halts_are_never_retried() -> None:
    backoff, clock = make()
    fn = Flaky(5, HardHalt("stop"))  # type: ignore[arg-type]
    with pytest.raises(HardHalt):
        backoff.call(fn, should_retry=lambda exc: True)
    assert (fn.calls, clock.now()) == (1, 0.0)


@given(st.integers(1, 8), st.integers(0, 12), seeds)
@settings(max_examples=50)
def test_call_makes_at_most_max_attempts_calls(max_attempts: int, failures: int, seed: int) -> None:
    backoff, clock = make(BackoffPolicy(max_attempts=max_attempts), seed)
    fn = Flaky(failures)
    try:
        assert backoff.call(fn, should_retry=lambda exc: True, key="k") == "ok"
    except ConnectionError:
        assert failures >= max_attempts
    else:
        assert failures < max_attempts
    assert fn.calls == min(failures + 1, max_attempts)
    waits, after, total = fn.calls - 1, None, 0.0
    for n in range(waits):  # each wait at least the one before it times factor, up to the cap
        delay = backoff.delay(n, key="k", after=after)
        assert delay >= min(backoff.policy.cap(n), 2 * (after or 0.0))
        total, after = total + delay, delay
    assert clock.now() == pytest.approx(total)


@given(st.sampled_from(JITTERS), st.floats(1.0, 4.0), seeds, st.integers(2, 12))
@settings(max_examples=100)
def test_the_waits_of_one_retry_loop_grow_whatever_the_jitter(
    jitter: Jitter, factor: float, seed: int, failures: int
) -> None:
    policy = BackoffPolicy(jitter=jitter, factor=factor, max_delay=30.0, max_attempts=20)
    backoff, clock = make(policy, seed)
    backoff.call(Flaky(failures), should_retry=lambda exc: True, key="search")
    delays = [e.detail["delay"] for e in interventions(backoff) if e.action == "backoff"]
    assert len(delays) == failures
    for n, (before, delay) in enumerate(zip(delays, delays[1:], strict=False), start=1):
        assert delay >= before  # never shrinks, also at the cap
        assert delay >= min(policy.cap(n), before * factor)  # grows by factor until the cap


async def test_acall_retries_coroutines_on_virtual_time() -> None:
    backoff, clock = make(BackoffPolicy(jitter="none", max_attempts=4))
    fn = Flaky(2)
    assert await backoff.acall(fn.acall, should_retry=lambda exc: True, key="search") == "ok"
    assert (fn.calls, clock.now()) == (3, 3.0)
    fn = Flaky(9)
    with pytest.raises(ConnectionError):
        await backoff.acall(fn.acall, should_retry=lambda exc: True, key="search")
    assert fn.calls == 4
    assert interventions(backoff)[-1].action == "give_up"


def test_a_replayed_run_records_the_same_trace() -> None:
    def run() -> list[dict[str, Any]]:
        backoff, _ = make(BackoffPolicy(), seed=1234)
        with pytest.raises(ConnectionError):
            backoff.call(Flaky(9), should_retry=lambda exc: True, key="search")
        assert isinstance(backoff.recorder, TraceRecorder)
        return [e.to_dict() for e in backoff.recorder.trace]

    assert run() == run()
