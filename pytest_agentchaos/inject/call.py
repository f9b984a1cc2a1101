"""One call in flight: which call it is and what the plan decided for it."""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..faults.effects import Effect
    from ..faults.plan import Decision
    from ..trace.events import FaultInjected

__all__ = ["CHANNEL", "EFFECT", "INDEX", "KEY", "STEP", "TARGET", "CallState", "new_state"]

#: Positions of a call state's fields, for the recording hot path (read by name elsewhere).
CHANNEL, TARGET, INDEX, STEP, T, KEY, EFFECT, FAULT, DECISION = range(9)


class CallState(tuple):  # type: ignore[type-arg]
    """One call in flight: which call it is and what the plan decided for it.

    A tuple underneath (built on every call, so it must be cheap); read it by field name.
    """

    __slots__ = ()

    channel: str = property(itemgetter(0))  # type: ignore[assignment]
    target: str = property(itemgetter(1))  # type: ignore[assignment]
    index: int = property(itemgetter(2))  # type: ignore[assignment]
    step: int = property(itemgetter(3))  # type: ignore[assignment]
    t: float = property(itemgetter(4))  # type: ignore[assignment]
    key: tuple[str, str] = property(itemgetter(5))  # type: ignore[assignment]
    effect: Effect | None = property(itemgetter(6))  # type: ignore[assignment]
    fault: FaultInjected | None = property(itemgetter(7))  # type: ignore[assignment]
    decision: Decision | None = property(itemgetter(8))  # type: ignore[assignment]

    def __new__(
        cls,
        channel: str,
        target: str,
        index: int,
        step: int,
        t: float,
        key: tuple[str, str],
        effect: Effect | None = None,
        fault: FaultInjected | None = None,
        decision: Decision | None = None,
    ) -> CallState:
        return new_state(channel, target, index, step, t, key, effect, fault, decision)

    def __repr__(self) -> str:
        return f"<CallState {self.channel} {self.target!r} #{self.index} step={self.step}>"


def new_state(
    channel: str,
    target: str,
    index: int,
    step: int,
    t: float,
    key: tuple[str, str],
    effect: Effect | None = None,
    fault: FaultInjected | None = None,
    decision: Decision | None = None,
) -> CallState:
    """A call state, built without the class's ``__new__`` (this runs on every call)."""
    return _new_tuple(CallState, (channel, target, index, step, t, key, effect, fault, decision))


_new_tuple = tuple.__new__
