"""Clocks: real time for production, virtual time for tests.

Code that waits (backoff, Retry-After, a breaker's reset timeout) takes a :class:`Clock`,
so in a chaos test those waits advance a virtual clock and cost no wall time.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..saferepr import short
from .aio import running_trio

if TYPE_CHECKING:
    from .aio import VirtualLoops


@runtime_checkable
class Clock(Protocol):
    """What the stack needs from time: a monotonic reading and two ways to wait."""

    def now(self) -> float:
        """Monotonic seconds (only differences are meaningful)."""
        ...

    def sleep(self, seconds: float) -> None:
        """Block for ``seconds``."""
        ...

    async def asleep(self, seconds: float) -> None:
        """Wait ``seconds`` inside an event loop."""
        ...


class RealClock:
    """The wall clock: ``time.monotonic``, ``time.sleep`` and ``asyncio.sleep``."""

    def now(self) -> float:
        """``time.monotonic()``."""
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        """Block for ``seconds`` of wall time."""
        __tracebackhide__ = True
        time.sleep(check_seconds(seconds, "clock.sleep(): seconds"))

    async def asleep(self, seconds: float) -> None:
        """``await asyncio.sleep(seconds)`` (``trio.sleep`` under trio)."""
        __tracebackhide__ = True
        seconds = check_seconds(seconds, "clock.asleep(): seconds")
        trio = running_trio()
        if trio is not None:
            await trio.sleep(seconds)
            return
        await asyncio.sleep(seconds)


#: The real ``asyncio.sleep``, captured before virtual sleep can patch it. (This module is
#: loaded with the first chaos test, never by the plugin's start-up.)
_real_async_sleep = asyncio.sleep


async def yield_to_loop() -> None:
    """Let other tasks run, as a real wait would (a checkpoint under trio)."""
    trio = running_trio()
    if trio is not None:
        await trio.lowlevel.checkpoint()
        return
    await _real_async_sleep(0)


class VirtualClock:
    """A clock whose time moves only when something sleeps or advances it.

    ``now()`` is the virtual seconds elapsed since the clock was made. While installed
    (see :mod:`pytest_agentchaos.clock.patch`), freezegun keeps ``time.time``,
    ``time.monotonic`` and ``datetime.now`` in step with it.
    """

    def __init__(self) -> None:
        self._elapsed = 0.0
        self._listeners: list[_Listener] = []
        #: Set while asyncio event loops run on this clock (see ``install(patch_sleep=True)``).
        self.loops: VirtualLoops | None = None

    def advance_to(self, t: float) -> None:
        """Move virtual time forward to ``t`` if it is later than now (never backwards).

        Concurrent waits use this: two calls that started at t=0 and each wait 10 s both end
        at t=10.
        """
        if t > self._elapsed:
            self.advance(t - self._elapsed)

    def now(self) -> float:
        """Virtual seconds since the clock was made."""
        return self._elapsed

    @property
    def elapsed(self) -> float:
        """Virtual seconds since the clock was made."""
        return self._elapsed

    def advance(self, seconds: float, *, where: str = "clock.advance(): seconds") -> None:
        """Move virtual time forward by ``seconds`` (>= 0) without waiting. Virtual time ends
        at :data:`MAX_SECONDS`: a wait past it is a ``ValueError`` (``where`` names the
        argument), and the clock stays where it was."""
        __tracebackhide__ = True
        seconds = check_seconds(seconds, where, self._elapsed)
        if seconds == 0:
            return
        self._elapsed += seconds
        # Every listener hears of the advance (freezegun must tick) before any error surfaces.
        error: BaseException | None = None
        for listener in list(self._listeners):
            try:
                listener(seconds)
            except BaseException as exc:  # noqa: BLE001 - re-raised below, after the others ran
                error = error or exc
        if error is not None:
            raise error

    def sleep(self, seconds: float) -> None:
        """Advance virtual time by ``seconds`` at once, without waiting."""
        __tracebackhide__ = True
        self.advance(seconds, where="clock.sleep(): seconds")

    async def asleep(self, seconds: float) -> None:
        """Wait ``seconds`` of virtual time.

        While event loops run on this clock (see :func:`pytest_agentchaos.clock.install`),
        this is a real ``await`` on the loop's virtual time, so concurrent waits overlap;
        otherwise time advances by ``seconds`` here and now.
        """
        __tracebackhide__ = True
        await self._asleep(seconds, "clock.asleep(): seconds")

    async def asyncio_sleep(self, delay: float) -> None:
        """What ``asyncio.sleep(delay)`` does, on virtual time (virtual sleep installs it): a
        delay of 0 or less only lets other tasks run, an infinite one waits until cancelled."""
        __tracebackhide__ = True
        if isinstance(delay, (int, float)) and delay <= 0:
            await yield_to_loop()
        elif isinstance(delay, float) and math.isinf(delay):
            if self.on_virtual_loop():  # no timer: the loop must not jump towards it
                await asyncio.get_running_loop().create_future()
            else:
                await _real_async_sleep(delay)
        else:
            await self._asleep(delay, "asyncio.sleep(): delay")

    async def _asleep(self, seconds: float, where: str) -> None:
        __tracebackhide__ = True
        seconds = check_seconds(seconds, where, self._elapsed)
        if self.on_virtual_loop():
            await _real_async_sleep(seconds)
            return
        self.advance(seconds, where=where)
        await yield_to_loop()

    def on_virtual_loop(self) -> bool:
        """Whether the running event loop keeps time on this clock (never trio's)."""
        if self.loops is None:
            return False
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # trio, or anyio on trio
            return False
        return self.loops.is_virtual(loop)

    def add_listener(self, listener: _Listener) -> None:
        """Call ``listener(seconds)`` whenever time advances (used to drive freezegun)."""
        self._listeners.append(listener)

    def remove_listener(self, listener: _Listener) -> None:
        """Stop calling ``listener`` on advances (no error if it was not added)."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def __repr__(self) -> str:
        return f"VirtualClock(elapsed={self._elapsed:.3f}s)"


class _Listener(Protocol):
    def __call__(self, seconds: float) -> None: ...


#: The most seconds any wait may last, and where a virtual clock's time ends (about 31
#: years): far beyond any real retry or deadline, and within what ``time.sleep`` and
#: ``datetime`` (so frozen wall time) can represent.
MAX_SECONDS = 1e9


def check_seconds(seconds: object, where: str, now: float = 0.0) -> float:
    """``seconds`` as a float: a number, not negative nor NaN, that takes time from ``now`` no
    further than :data:`MAX_SECONDS`. Else a ``TypeError`` / ``ValueError`` that begins with
    ``where`` (the argument, as the caller wrote it) and says what is allowed."""
    __tracebackhide__ = True
    number = hasattr(seconds, "__float__") or hasattr(seconds, "__index__")
    if not number or isinstance(seconds, (str, bytes, bytearray)):
        raise TypeError(f"{where}: expected a number of seconds, got {short(seconds)}")
    try:
        value = float(seconds)  # type: ignore[arg-type]
    except OverflowError:  # an int too large for a float
        value = math.inf
    if math.isnan(value) or value < 0:
        raise ValueError(f"{where}: cannot wait a negative or NaN time, got {short(seconds)}")
    if now + value > MAX_SECONDS:
        limit = f"{MAX_SECONDS:,.0f} s (about 31 years)"
        if now:
            why = f"virtual time is at {now:g} s and ends at {limit}"
        else:
            why = f"a wait lasts at most {limit}"
        raise ValueError(f"{where}: {short(seconds)} is too long: {why}")
    return value
