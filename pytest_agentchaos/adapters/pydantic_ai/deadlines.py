"""A call through the plan whose fault delay is a hang that an enclosing deadline ends (a tool's
``timeout``, a model's ``request_timeout``), as pydantic-ai's own deadline ends a real one."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ...clock import VirtualClock
from ...faults.effects import Failure
from ...inject.call import CallState
from ...inject.errors import failure_exception
from ...inject.intercept import Interceptor
from ...inject.session import _MISSING, ChaosSession


def _deadline_left() -> float | None:
    """Seconds until the nearest enclosing anyio deadline (a tool's ``timeout``, a model's
    ``request_timeout``), or ``None`` when there is none (or no anyio here)."""
    try:
        import anyio

        deadline = anyio.current_effective_deadline()
        if math.isinf(deadline):
            return None
        return deadline - anyio.current_time()
    except Exception:  # no async library detected, a backend without deadlines
        return None


def _hung(state: CallState, waited: float, planned: float) -> BaseException:
    """What a call that hung past its deadline raised: a ``TimeoutError`` (as ``anyio.fail_after``
    raises), marked injected by the call's fault."""
    failure = Failure(
        "timeout",
        f"{state.target} hung past its deadline: cut after {waited:g}s of a {planned:g}s hang",
    )
    return failure_exception(failure, state.fault)


#: How much sooner than the tool's own timeout its deadline may be and still be that timeout:
#: the real time pydantic-ai and the seam took between arming it and this check.
_ARMING = 0.25


def _cut(left: float, timeout: float | None) -> float:
    """Where a hang on a real loop is cut, in seconds of the call: the tool's own timeout when
    the deadline is that timeout (armed just before the call: ``left`` is a little short of it,
    by real time the virtual clock does not count), else what the deadline leaves."""
    if timeout is not None and 0.0 <= timeout - left <= _ARMING:
        return float(timeout)
    return max(0.0, round(left, 3))


async def _wait(
    session: ChaosSession, state: CallState, *, deadline: bool, timeout: float | None = None
) -> None:
    """Apply the effect's delay as a hang that an enclosing deadline ends.

    On a virtual event loop the wait is a real ``await``, so pydantic-ai's own deadline (a
    tool's ``anyio.fail_after``, a model's ``request_timeout``) cancels it as it would cancel
    a real hang; the call is recorded as timed out and the cancellation goes on to the
    deadline's owner. On a real loop time does not pass, so with ``deadline`` (tool calls) a
    hang longer than the nearest deadline is cut there: the virtual clock advances by the
    tool's own ``timeout`` when that deadline is it (the real milliseconds spent before the call
    are no virtual time: a loaded machine must not end the hang sooner), else by what the
    deadline leaves (to the millisecond), and the call raises ``TimeoutError``, which
    pydantic-ai's tool timeout turns into its own retry prompt.
    """
    effect = state.effect
    if effect is None or not effect.delay:
        return
    clock = session.clock
    virtual_loop = isinstance(clock, VirtualClock) and clock.on_virtual_loop()
    left = _deadline_left()
    if deadline and not virtual_loop and left is not None and left < effect.delay:
        left = _cut(left, timeout)
        exc = _hung(state, left, effect.delay)
        try:
            session.sleep(max(0.0, state.t + left - session.now()))
        finally:
            session.finish_error(state, exc)
        raise exc
    start = session.now()
    try:
        await session.adelay(state)
    except BaseException as exc:  # a deadline cancelled the hang (or the run stopped)
        waited = session.now() - start
        if virtual_loop and left is not None and waited >= left - 1e-6:  # until the deadline
            session.finish_error(state, _hung(state, round(waited, 6), effect.delay))
        else:
            session.finish_error(state, exc)
        raise


async def _acall(
    core: Interceptor,
    mapping: Mapping[str, Any],
    invoke: Callable[[Mapping[str, Any]], Awaitable[Any]],
    *,
    deadline: bool,
    timeout: float | None = None,
) -> Any:
    """``core.acall(mapping, invoke)``, whose fault delay is a hang an enclosing deadline ends
    (:func:`_wait`; ``timeout``: the tool's own)."""
    __tracebackhide__ = True
    state = core.begin(mapping)
    session = core.session
    if state.effect is not None:
        await _wait(session, state, deadline=deadline, timeout=timeout)
    mapping, replayed = core._prepare(state, mapping)
    if replayed is not _MISSING:
        return core.finish(state, replayed)
    try:
        out = await invoke(mapping)
    except BaseException as exc:  # cancelled, halted: the call still has its end
        session.finish_error(state, exc)
        raise
    if state.effect is not None and state.effect.lost is not None:
        raise await session.alose(state, out)  # the tool ran; its reply is lost
    return core.finish(state, out)
