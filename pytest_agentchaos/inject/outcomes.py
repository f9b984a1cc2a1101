"""Faults that act on a call's real outcome: the tool ran, then its output is emptied, cut,
rewritten or its reply lost (``Effect.reply`` / ``Effect.lost``). Such a fault is recorded
only once it acts, and one that found nothing to act on says so in the run's notes. Part of
:class:`~pytest_agentchaos.inject.session.ChaosSession` (a mixin: it reads the session's
lock, clock and trace)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..faults.effects import UNCHANGED, Effect
from ..saferepr import type_name
from ..trace.events import FaultInjected, build
from ..trace.values import capture
from .call import EFFECT, CallState, new_state

if TYPE_CHECKING:
    from ..trace.trace import Trace
    from .errors import NativeErrors

__all__ = ["AfterCallFaults"]


class AfterCallFaults:
    """The session's methods for faults that act after the real call ran."""

    if TYPE_CHECKING:  # what they use of the session
        _lock: Any
        max_value: int
        trace: Trace

        def now(self) -> float: ...
        def note(self, message: str) -> None: ...
        def delay(self, state: CallState, seconds: float | None = None) -> float: ...
        async def adelay(self, state: CallState, seconds: float | None = None) -> float: ...
        def finish_error(
            self,
            state: CallState,
            exc: BaseException | None = None,
            *,
            error_type: str | None = None,
            message: str | None = None,
            status: int | None = None,
            output: Any = None,
        ) -> None: ...

    def _record_fault(
        self, step: int, t: float, channel: str, target: str, index: int, decision: Any
    ) -> FaultInjected:
        """Write the ``FaultInjected`` event of ``decision`` (under the session's lock)."""
        detail = decision.detail
        detail = capture(detail if type(detail) is dict else dict(detail), self.max_value)
        fault = build(FaultInjected, (
            step, t, decision.kind.name, channel, target, index, decision.fault, detail,
        ))  # fmt: skip
        self.trace.append(fault)
        return fault

    def _acted(self, state: CallState) -> CallState:
        """Record the fault of ``state``, which acts on the real call's outcome now (see
        ``Effect.acts_after``); returns the state carrying its ``FaultInjected`` event."""
        decision = state.decision
        assert decision is not None
        with self._lock:
            fault = self._record_fault(
                state.step, self.now(), state.channel, state.target, state.index, decision
            )
        return new_state(
            state.channel, state.target, state.index, state.step, state.t, state.key,
            state.effect, fault, decision,
        )  # fmt: skip

    def _unused(self, state: CallState, why: str) -> None:
        """Say in the run's notes that the fault decided for ``state`` did nothing (it is not
        recorded as fired): once per fault kind, target and reason."""
        decision = state.decision
        kind = decision.kind.name if decision is not None else "a fault"
        self.note(
            f"{kind} did nothing to {state.channel} {state.target!r} where {why}: those calls "
            "kept their own outcome, and it is not among the run's faults there"
        )

    def reply(self, state: CallState, output: Any) -> tuple[CallState, Any]:
        """Apply the effect's ``reply`` (what a fault makes of the real output) to
        ``output``: (the state, with its fault recorded when it acted; the output the caller
        gets). An output the fault cannot act on comes back as it was, and the notes say so."""
        effect = state[EFFECT]
        if effect is None or effect.reply is None:
            return state, output
        try:
            new = effect.reply(output)
        except Exception as exc:  # an output whose own methods raise: left as it was
            self._unused(state, f"its output ({type_name(output)}) could not be read: "
                         f"{type(exc).__name__}")  # fmt: skip
            return state, output
        if new is UNCHANGED:
            self._unused(state, f"its output ({type_name(output)}) gave it nothing to act on")
            return state, output
        return self._acted(state), new

    def lose(
        self,
        state: CallState,
        output: Any,
        *,
        native: NativeErrors | None = None,
        waited: bool = False,
    ) -> BaseException:
        """The reply of a call that ran is lost (``lost_reply``): record the fault, wait until
        ``lost_after`` after the call started (unless ``waited``), record the call's end
        (``ok=False``, the injected error, ``output`` the real output the caller never saw)
        and return the error to raise: the seam's own when ``native`` builds one."""
        from .errors import failure_exception

        effect = state[EFFECT]
        assert effect is not None and effect.lost is not None
        if not waited:
            state = self._acted(state)
        exc = failure_exception(effect.lost, state.fault, native)
        if effect.lost_after and not waited:
            try:
                self.delay(_waiting(state, effect.lost_after))
            except BaseException as stopped:  # a budget or a halt ended the wait
                self.finish_error(state, stopped, output=output)
                raise
        self.finish_error(state, exc, output=output)
        return exc

    async def alose(
        self, state: CallState, output: Any, *, native: NativeErrors | None = None
    ) -> BaseException:
        """:meth:`lose` for async calls: the wait is an ``await`` on the run's loop (a
        deadline of the framework's may end it, as it ends a real hang)."""
        effect = state[EFFECT]
        assert effect is not None and effect.lost is not None
        state = self._acted(state)
        if effect.lost_after:
            try:
                await self.adelay(_waiting(state, effect.lost_after))
            except BaseException as stopped:  # cancelled by a deadline, or a budget
                self.finish_error(state, stopped, output=output)
                raise
        return self.lose(state, output, native=native, waited=True)


def _waiting(state: CallState, seconds: float) -> CallState:
    """``state`` whose effect is a wait of ``seconds`` from the call's start (a lost reply's)."""
    return new_state(
        state.channel, state.target, state.index, state.step, state.t, state.key,
        Effect(delay=seconds), state.fault, state.decision,
    )  # fmt: skip
