"""Circuit breakers per tool: stop calling a tool that keeps failing, probe it now and then.

A breaker is ``closed`` (calls pass) until ``failure_threshold`` consecutive failures (within
``window`` seconds, if set) open it. While ``open`` every call is refused at once instead of
waiting on a tool that is down; after ``reset_timeout`` seconds on the clock the next
:meth:`CircuitBreaker.allow` moves it to ``half_open`` and admits a probe. Probes that all
succeed close the breaker; a failed probe opens it again with a fresh timeout. The reset timeout
runs on a :class:`~pytest_agentchaos.clock.Clock`, so in chaos tests it costs no wall time, and
every state change is written to the trace as an ``Intervention(action="breaker")``.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeVar

from ..clock.clock import Clock
from ..config import Validator, check_fields, count, number, optional, parse_table
from ..trace.events import Intervention
from .recorder import Recorder

T = TypeVar("T")

BreakerState: TypeAlias = Literal["closed", "open", "half_open"]
CLOSED: BreakerState = "closed"
OPEN: BreakerState = "open"
HALF_OPEN: BreakerState = "half_open"


@dataclass(frozen=True, slots=True)
class BreakerPolicy:
    """When a breaker opens and how it recovers; plain data from a profile.

    ``window`` (seconds, ``None`` for no limit) only counts failures of the current streak
    that happened within the last ``window`` seconds, so a trickle of failures spread over
    hours does not open the breaker. ``half_open_max_calls`` probes are admitted per half-open
    period; all of them must succeed to close the breaker.
    """

    failure_threshold: int = 5
    reset_timeout: float = 30.0
    half_open_max_calls: int = 1
    window: float | None = None

    def __post_init__(self) -> None:
        check_fields(self, _FIELDS, "BreakerPolicy")

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str = "breaker") -> BreakerPolicy:
        """Validate a ``[escape.breaker]`` table; errors name ``where``, the key and what is
        allowed. Missing keys keep their defaults."""
        return cls(**parse_table(raw, _FIELDS, where, "breaker"))


#: The fields of a :class:`BreakerPolicy` (the keys of an ``[escape.breaker]`` table).
_FIELDS: dict[str, Validator] = {
    "failure_threshold": count(),
    "reset_timeout": number(minimum=0, unit="seconds"),
    "half_open_max_calls": count(),
    "window": optional(number(minimum=0, exclusive_min=True, unit="seconds")),  # None: no limit
}


class BreakerOpen(Exception):
    """A call was refused because the tool's breaker is open (or its probes are taken).

    An ordinary ``Exception``: the agent is meant to catch it and fall back, or wait
    ``retry_in`` seconds for the next probe.
    """

    def __init__(self, tool: str, retry_in: float) -> None:
        super().__init__(f"circuit breaker for tool {tool!r} is open; next probe in {retry_in:g}s")
        self.tool = tool
        self.retry_in = retry_in

    def __reduce__(self) -> tuple[type[BreakerOpen], tuple[str, float]]:
        # Default exception pickling passes ``args`` (the message) back to __init__;
        # xdist and multiprocessing need the real arguments.
        return (type(self), (self.tool, self.retry_in))


class CircuitBreaker:
    """The breaker of one tool.

    Callers either ask :meth:`allow` and report :meth:`record_success` /
    :meth:`record_failure` (or :meth:`release` for a call that ended without a verdict), or
    let :meth:`call` / :meth:`acall` do all of it. A call admitted as a probe must report, or
    its slot stays taken and the breaker stays half-open. Thread-safe: tools often run in
    thread pools.
    """

    def __init__(
        self,
        tool: str,
        policy: BreakerPolicy,
        clock: Clock,
        recorder: Recorder | None = None,
    ) -> None:
        self.tool = tool
        self.policy = policy
        self.clock = clock
        self.recorder = recorder
        self._state: BreakerState = CLOSED
        self._lock = threading.RLock()
        # Times of the current streak of consecutive failures (only the last threshold matter).
        self._failures: deque[float] = deque(maxlen=policy.failure_threshold)
        self._probe_at = 0.0  # while open: the clock time from which a probe is allowed
        self._in_flight = 0  # while half-open: probes admitted and not yet reported
        self._successes = 0  # while half-open: probes that succeeded

    @property
    def state(self) -> BreakerState:
        """``closed``, ``open`` or ``half_open``.

        An open breaker whose timeout has passed still reads ``open`` until the next
        :meth:`allow` moves it (that is when the transition is recorded); :meth:`retry_in`
        then reads 0.
        """
        return self._state

    def allow(self) -> bool:
        """Whether a call may go ahead now; in half-open, admitting it takes a probe slot."""
        with self._lock:
            if self._state == CLOSED:
                return True
            if self._state == OPEN:
                if self.clock.now() < self._probe_at:
                    return False
                self._move(HALF_OPEN, "reset_timeout")
            if self._in_flight + self._successes >= self.policy.half_open_max_calls:
                return False
            self._in_flight += 1
            return True

    def record_success(self) -> None:
        """An admitted call succeeded: it ends a failure streak, or counts as a good probe."""
        with self._lock:
            if self._state == CLOSED:
                self._failures.clear()
            elif self._state == HALF_OPEN:
                self._in_flight = max(0, self._in_flight - 1)
                self._successes += 1
                if self._successes >= self.policy.half_open_max_calls:
                    self._move(CLOSED, "probe_succeeded")
            # While open: a straggler admitted before the breaker opened proves nothing.

    def record_failure(self) -> None:
        """An admitted call failed: the streak grows (and may open the breaker), or the probe
        failed and the breaker opens again with a fresh timeout."""
        with self._lock:
            if self._state == CLOSED:
                now = self.clock.now()
                self._failures.append(now)
                window = self.policy.window
                if window is not None:
                    while now - self._failures[0] > window:
                        self._failures.popleft()
                if len(self._failures) >= self.policy.failure_threshold:
                    self._move(OPEN, "failure_threshold", failures=len(self._failures))
            elif self._state == HALF_OPEN:
                self._move(OPEN, "probe_failed")
            # While open: a straggler's failure must not push the probe further away.

    def release(self) -> None:
        """An admitted call ended without a verdict on the tool (cancelled, or an error that is
        the caller's fault): free its probe slot, judge nothing."""
        with self._lock:
            if self._state == HALF_OPEN and self._in_flight > 0:
                self._in_flight -= 1

    def retry_in(self) -> float:
        """Seconds until :meth:`allow` admits a call: 0 when it would now.

        Sleeping exactly this long on the clock makes the next :meth:`allow` true. While
        half-open with every probe slot taken the answer depends on the probes, so it is the
        pessimistic ``reset_timeout`` (what a failing probe would cost).
        """
        with self._lock:
            if self._state == CLOSED:
                return 0.0
            if self._state == OPEN:
                return _until(self._probe_at, self.clock.now())
            if self._in_flight + self._successes < self.policy.half_open_max_calls:
                return 0.0
            return float(self.policy.reset_timeout)

    def guard(self) -> None:
        """Take permission for a call, or raise :class:`BreakerOpen`."""
        if not self.allow():
            raise BreakerOpen(self.tool, self.retry_in())

    def call(
        self, fn: Callable[[], T], *, is_failure: Callable[[Exception], bool] | None = None
    ) -> T:
        """Run ``fn`` under the breaker: refuse with :class:`BreakerOpen`, else run and report.

        An ``Exception`` counts as a failure unless ``is_failure`` says otherwise (then the call
        is released, neither success nor failure); anything else (cancellation, hard halts)
        releases the call and propagates.
        """
        self.guard()
        try:
            result = fn()
        except Exception as exc:
            self._report_error(exc, is_failure)
            raise
        except BaseException:
            self.release()
            raise
        self.record_success()
        return result

    async def acall(
        self,
        fn: Callable[[], Awaitable[T]],
        *,
        is_failure: Callable[[Exception], bool] | None = None,
    ) -> T:
        """:meth:`call` for coroutine functions (cancellation releases the probe slot)."""
        self.guard()
        try:
            result = await fn()
        except Exception as exc:
            self._report_error(exc, is_failure)
            raise
        except BaseException:
            self.release()
            raise
        self.record_success()
        return result

    def _report_error(self, exc: Exception, is_failure: Callable[[Exception], bool] | None) -> None:
        if is_failure is None or is_failure(exc):
            self.record_failure()
        else:
            self.release()

    def _move(self, to: BreakerState, reason: str, **extra: Any) -> None:
        """Change state (the lock is held), reset what the new state counts, record it."""
        before = self._state
        self._state = to
        self._failures.clear()
        self._in_flight = 0
        self._successes = 0
        if to == OPEN:
            self._probe_at = self.clock.now() + self.policy.reset_timeout
        if self.recorder is not None:
            detail: dict[str, Any] = {"tool": self.tool, "from": before, "to": to, "reason": reason}
            detail.update(extra)
            self.recorder.record(Intervention, action="breaker", detail=detail)

    def __repr__(self) -> str:
        return f"CircuitBreaker({self.tool!r}, state={self._state!r})"


class Breakers:
    """One :class:`CircuitBreaker` per tool, made on first use with a shared policy, clock and
    recorder."""

    def __init__(
        self, policy: BreakerPolicy, clock: Clock, recorder: Recorder | None = None
    ) -> None:
        self.policy = policy
        self.clock = clock
        self.recorder = recorder
        self._breakers: dict[str, CircuitBreaker] = {}
        self._lock = threading.Lock()

    def for_tool(self, tool: str) -> CircuitBreaker:
        """The breaker of ``tool`` (the same object on every call)."""
        breaker = self._breakers.get(tool)
        if breaker is None:
            with self._lock:
                breaker = self._breakers.setdefault(
                    tool, CircuitBreaker(tool, self.policy, self.clock, self.recorder)
                )
        return breaker

    def states(self) -> dict[str, BreakerState]:
        """Each known tool's breaker state, for reports and for choosing fallbacks."""
        with self._lock:
            breakers = list(self._breakers.items())
        return {tool: breaker.state for tool, breaker in breakers}

    def __iter__(self) -> Iterator[CircuitBreaker]:
        with self._lock:
            return iter(list(self._breakers.values()))

    def __len__(self) -> int:
        return len(self._breakers)


def _until(t: float, now: float) -> float:
    """``t - now`` (>= 0), nudged up so that ``now + result >= t`` holds in floating point:
    sleeping the answer on a clock that adds it must reach ``t`` (a rounded subtraction
    followed by a rounded addition can land one ulp short)."""
    if now >= t:
        return 0.0
    wait = t - now
    while now + wait < t:
        wait = math.nextafter(wait, math.inf)
    return wait
