"""Exponential backoff with seeded jitter, waiting on a :class:`~pytest_agentchaos.clock.Clock`.

The wait before retry ``attempt`` (0 for the wait after the first failure) is drawn under the
cap ``min(max_delay, base * factor ** attempt)`` with the jitter of the AWS Architecture Blog's
"Exponential Backoff And Jitter": ``full`` draws from ``[0, cap]``, ``equal`` from
``[cap / 2, cap]``, ``none`` waits the cap itself. Jitter is what keeps many agents that failed
together from retrying together; drawing it from ``stable_uniform(seed, "backoff", key,
attempt)`` instead of a global RNG makes every wait replay exactly under the same seed, in any
test order and in any process.

Within one retry loop (:meth:`Backoff.call`) a wait never falls below the one before it grown
by ``factor`` (up to the cap): ``max(draw, min(cap, previous * factor))``. Jitter still spreads
the first wait, and every later one starts from where the first landed, so the waits of one
loop grow as exponential backoff promises; a server (and ``must_retry``) can tell them from a
fixed wait, which a fresh full-jitter draw at every attempt cannot promise.

Retry-After is a floor, not a hint: retrying before the server asked only earns another 429, so
the delay is ``max(backoff, retry_after)`` even when that exceeds ``max_delay`` (which bounds
*our* exponential growth, not the server's request). A policy may set ``retry_after_cap`` to clip
absurd Retry-After values (a misconfigured server asking for a day); that trades politeness for
latency, so it is opt-in, and a clipped wait never exceeds ``max(max_delay, retry_after_cap)``.
Callers that would rather give up than wait long decide that themselves, before waiting.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeVar

from ..clock.clock import Clock
from ..config import Validator, check_fields, choice, count, number, optional, parse_table
from ..rng import stable_uniform
from ..saferepr import short
from ..trace.events import Intervention
from .recorder import Recorder

T = TypeVar("T")

Jitter: TypeAlias = Literal["full", "equal", "none"]
JITTERS: tuple[Jitter, ...] = ("full", "equal", "none")

#: What a ``should_retry`` callback answers for an error: ``False`` or ``None`` to give up
#: (the error is re-raised), ``True`` to retry after the backoff delay, a number to retry
#: honouring it as the server's Retry-After (``0.0`` still means "retry").
RetryDecision: TypeAlias = bool | float | None


@dataclass(frozen=True, slots=True)
class BackoffPolicy:
    """How long to wait between retries and how often to try; plain data from a profile.

    ``max_attempts`` counts calls, the first one included: 5 means at most 4 waits.
    ``retry_after_cap`` is ``None`` to honour any Retry-After in full (see the module doc).
    """

    base: float = 1.0
    factor: float = 2.0
    max_delay: float = 60.0
    jitter: Jitter = "full"
    max_attempts: int = 5
    retry_after_cap: float | None = None

    def __post_init__(self) -> None:
        check_fields(self, _FIELDS, "BackoffPolicy")

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str = "backoff") -> BackoffPolicy:
        """Validate a ``[escape.backoff]`` table; errors name ``where``, the key and what is
        allowed. Missing keys keep their defaults."""
        return cls(**parse_table(raw, _FIELDS, where, "backoff"))

    def cap(self, attempt: int) -> float:
        """The longest backoff before retry ``attempt``: ``min(max_delay, base * factor **
        attempt)``. Non-decreasing in ``attempt``; jitter only ever draws below it."""
        _check_attempt(attempt)
        try:
            raw = self.base * float(self.factor) ** attempt
        except OverflowError:
            return float(self.max_delay)
        return float(min(self.max_delay, raw))


#: The fields of a :class:`BackoffPolicy` (the keys of an ``[escape.backoff]`` table).
_FIELDS: dict[str, Validator] = {
    "base": number(minimum=0, exclusive_min=True, unit="seconds"),
    "factor": number(minimum=1),  # delays never shrink
    "max_delay": number(minimum=0, exclusive_min=True, unit="seconds"),
    "jitter": choice(JITTERS),
    "max_attempts": count(),
    "retry_after_cap": optional(number(minimum=0, unit="seconds")),  # None: honour any
}


class Backoff:
    """Computes, records and waits the delays of a :class:`BackoffPolicy` on a clock.

    Stateless between calls: the delay depends only on the seed, the ``key`` (usually the tool
    name, so tools that failed together spread out) and the attempt number.
    """

    def __init__(
        self,
        policy: BackoffPolicy,
        clock: Clock,
        seed: int = 0,
        recorder: Recorder | None = None,
    ) -> None:
        self.policy = policy
        self.clock = clock
        self.seed = seed
        self.recorder = recorder

    def delay(
        self,
        attempt: int,
        retry_after: float | None = None,
        key: str = "",
        *,
        after: float | None = None,
    ) -> float:
        """Seconds to wait before retry ``attempt``: the jittered backoff (at least ``after``,
        the backoff of the retry before it in the same loop, times ``factor``, up to the cap),
        raised to ``retry_after`` (clipped to the policy's ``retry_after_cap`` if it has one)."""
        delay = self._backoff(attempt, key, after)
        if retry_after is not None:
            floor = _check_retry_after(retry_after)
            if self.policy.retry_after_cap is not None:
                floor = min(floor, self.policy.retry_after_cap)
            delay = max(delay, floor)
        return delay

    def _backoff(self, attempt: int, key: str, after: float | None) -> float:
        cap = self.policy.cap(attempt)
        jitter = self.policy.jitter
        if jitter == "none":
            delay = cap
        else:
            u = stable_uniform(self.seed, "backoff", key, attempt)
            delay = cap * u if jitter == "full" else cap / 2 + cap / 2 * u
        if after is not None:
            delay = max(delay, min(cap, after * self.policy.factor))
        return delay

    def wait(
        self,
        attempt: int,
        retry_after: float | None = None,
        key: str = "",
        *,
        after: float | None = None,
    ) -> float:
        """Record the backoff, then sleep it on the clock; returns the delay.

        The decision is recorded before the sleep, so a budget that the sleep exhausts still
        finds it in the trace.
        """
        delay = self._decide(attempt, retry_after, key, after)
        self.clock.sleep(delay)
        return delay

    async def await_(
        self,
        attempt: int,
        retry_after: float | None = None,
        key: str = "",
        *,
        after: float | None = None,
    ) -> float:
        """:meth:`wait` for async code: the sleep is ``clock.asleep`` (``await`` is taken)."""
        delay = self._decide(attempt, retry_after, key, after)
        await self.clock.asleep(delay)
        return delay

    def call(
        self,
        fn: Callable[[], T],
        *,
        should_retry: Callable[[Exception], RetryDecision],
        key: str = "",
    ) -> T:
        """Call ``fn`` until it returns, waiting between attempts, at most ``max_attempts``
        times; the one retry loop callers need. Its waits grow (see the module doc).

        ``should_retry`` sees each error and answers with a :data:`RetryDecision`; when it
        declines, or the attempts are spent, the error propagates. Only ``Exception`` is
        retried: hard halts and cancellation pass straight through.
        """
        attempt = 0
        after: float | None = None
        while True:
            try:
                return fn()
            except Exception as exc:
                go_on, retry_after = self._next(exc, attempt, should_retry, key)
                if not go_on:
                    raise
            self.wait(attempt, retry_after, key, after=after)
            after = self._backoff(attempt, key, after)
            attempt += 1

    async def acall(
        self,
        fn: Callable[[], Awaitable[T]],
        *,
        should_retry: Callable[[Exception], RetryDecision],
        key: str = "",
    ) -> T:
        """:meth:`call` for coroutine functions, waiting with ``clock.asleep``."""
        attempt = 0
        after: float | None = None
        while True:
            try:
                return await fn()
            except Exception as exc:
                go_on, retry_after = self._next(exc, attempt, should_retry, key)
                if not go_on:
                    raise
            await self.await_(attempt, retry_after, key, after=after)
            after = self._backoff(attempt, key, after)
            attempt += 1

    def _decide(
        self, attempt: int, retry_after: float | None, key: str, after: float | None = None
    ) -> float:
        delay = self.delay(attempt, retry_after, key, after=after)
        if self.recorder is not None:
            self.recorder.record(
                Intervention,
                action="backoff",
                detail={
                    "attempt": attempt,
                    "delay": delay,
                    "retry_after": retry_after,
                    "key": key,
                },
            )
        return delay

    def _next(
        self,
        exc: Exception,
        attempt: int,
        should_retry: Callable[[Exception], RetryDecision],
        key: str,
    ) -> tuple[bool, float | None]:
        """Whether to retry after failed call number ``attempt + 1``, and the Retry-After."""
        decision = should_retry(exc)
        if decision is None or decision is False:
            return False, None
        if attempt + 1 >= self.policy.max_attempts:
            if self.recorder is not None:
                self.recorder.record(
                    Intervention,
                    action="give_up",
                    detail={"key": key, "attempts": attempt + 1, "error": type(exc).__name__},
                )
            return False, None
        return True, None if decision is True else float(decision)


def _is_number(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _check_attempt(attempt: int) -> None:
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 0:
        raise ValueError(f"attempt must be an integer >= 0, got {short(attempt)}")


def _check_retry_after(retry_after: float) -> float:
    if not _is_number(retry_after) or retry_after < 0:
        raise ValueError(
            f"retry_after must be a finite number of seconds >= 0, got {short(retry_after)}"
        )
    return float(retry_after)
