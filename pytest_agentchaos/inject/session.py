"""``ChaosSession``: one run's plan, clock, budgets, counters and trace.

Every injector (Python callables, httpx, model calls) goes through :meth:`ChaosSession.begin`
and one of the ``finish_*`` methods, so faults, budgets and trace events behave the same on
every channel. The session has no pytest in it: production code and other harnesses can use it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ..clock.clock import Clock, VirtualClock, yield_to_loop
from ..errors import BudgetExhausted
from ..faults.effects import Effect
from ..faults.kinds import CallInfo
from ..faults.plan import Decision, FaultPlan
from ..profiles.budgets import Budgets
from ..status import status_of
from ..trace.events import (
    BudgetExhaustedEvent,
    Event,
    FaultInjected,
    ModelCall,
    ModelResult,
    RunEnded,
    RunStarted,
    Step,
    ToolCall,
    ToolResult,
    snapshot,
)
from ..trace.trace import Trace

E = TypeVar("E", bound=Event)

log = logging.getLogger(__name__)

_MISSING: Any = object()
_MESSAGE_LIMIT = 500


@dataclass(slots=True)
class CallState:
    """One call in flight: what was decided for it and what it has to do."""

    call: CallInfo
    decision: Decision | None
    effect: Effect | None
    fault: FaultInjected | None
    step: int = 0


class ChaosSession:
    """The runtime of one chaos run. Injectors call it; readers read ``trace``."""

    def __init__(
        self,
        plan: FaultPlan | None = None,
        *,
        budgets: Budgets | None = None,
        clock: Clock | None = None,
        trace: Trace | None = None,
        seed: int = 0,
        profile: str = "none",
        test_id: str = "",
    ) -> None:
        self.plan = plan if plan is not None else FaultPlan((), seed)
        budgets = budgets if budgets is not None else Budgets()
        self.budgets = budgets
        self.clock: Clock = clock if clock is not None else VirtualClock()
        self.trace = trace if trace is not None else Trace()
        self.seed = seed
        self.profile = profile
        self.test_id = test_id
        self.steps = 0
        self.tool_calls = 0
        self.model_calls = 0
        self.tokens = 0
        self._t0 = self.clock.now()
        self._counts: dict[tuple[str, str], int] = {}
        self._previous: dict[tuple[str, str], Any] = {}
        self._halted: BudgetExhausted | None = None
        self._cleanups: list[Callable[[], None]] = []
        self._ended = False
        self._lock = threading.RLock()
        self.trace.meta.update(seed=seed, profile=profile, test=test_id, budgets=budgets.as_dict())
        self._emit(RunStarted, test=test_id, seed=seed, profile=profile)
        if isinstance(self.clock, VirtualClock):
            self.clock.add_listener(self._on_time)
            self._cleanups.append(lambda: self._remove_listener())

    # -- time ------------------------------------------------------------------------

    def now(self) -> float:
        """Seconds since the run started, on the session's clock."""
        return self.clock.now() - self._t0

    def sleep(self, seconds: float) -> None:
        """Wait on the session's clock (virtual in tests)."""
        self.clock.sleep(seconds)
        self._check_seconds()

    def _remove_listener(self) -> None:
        if isinstance(self.clock, VirtualClock):
            self.clock.remove_listener(self._on_time)

    def _on_time(self, seconds: float) -> None:
        self._raise_if_halted()  # a halted run stays halted, even for a virtual sleep
        self._check_seconds()

    def _check_seconds(self) -> None:
        limit = self.budgets.max_seconds
        if limit is not None and self._halted is None and self.now() > limit:
            self._exhaust("max_seconds", limit, round(self.now(), 6))

    # -- trace -------------------------------------------------------------------------

    def _emit(self, cls: type[Event], step: int | None = None, **fields: Any) -> Any:
        return self.trace.append(
            cls(step=self.steps if step is None else step, t=self.now(), **fields)
        )

    def record(self, cls: type[E], **fields: Any) -> E:
        """Append an event of type ``cls`` at the current step and virtual time.

        This makes the session a :class:`~pytest_agentchaos.escape.Recorder`: the escape
        stack writes its detections and interventions into the run's trace through it.
        """
        return self._emit(cls, **fields)  # type: ignore[no-any-return]

    def step(self, label: str | None = None) -> int:
        """Count one agent step (for agents whose steps are not tool or model calls)."""
        self._raise_if_halted()
        self._advance_step()
        self._emit(Step, label=label)
        return self.steps

    # -- budgets -----------------------------------------------------------------------

    @property
    def halted(self) -> BudgetExhausted | None:
        """The budget exhaustion that stopped this run, if any."""
        return self._halted

    def _raise_if_halted(self) -> None:
        if self._halted is not None:
            h = self._halted
            raise BudgetExhausted(h.budget, h.limit, h.count)

    def _exhaust(self, budget: str, limit: float, count: float) -> None:
        exc = BudgetExhausted(budget, limit, count)
        self._halted = exc
        self._emit(BudgetExhaustedEvent, budget=budget, limit=limit, count=count)
        log.info("chaos run %s stopped: %s", self.test_id, exc)
        raise exc

    def _advance_step(self) -> None:
        limit = self.budgets.max_steps
        if limit is not None and self.steps + 1 > limit:
            self._exhaust("max_steps", limit, self.steps + 1)
        self._check_seconds()
        self.steps += 1

    # -- the call protocol ---------------------------------------------------------------

    def begin(
        self,
        channel: str,
        target: str,
        args: Mapping[str, Any],
        schema: Mapping[str, Any] | None = None,
        *,
        recorded: Mapping[str, Any] | None = None,
    ) -> CallState:
        """Record a call, enforce budgets and decide its fault. Raises ``BudgetExhausted``.

        ``args`` are what faults look at; ``recorded`` (default: ``args``) what the trace shows.
        Thread-safe: tools run from a thread pool get distinct, consecutive call indexes (in
        arrival order, so decisions replay exactly only for calls that arrive in order).
        """
        with self._lock:
            return self._begin(channel, target, args, schema, recorded)

    def _begin(
        self,
        channel: str,
        target: str,
        args: Mapping[str, Any],
        schema: Mapping[str, Any] | None,
        recorded: Mapping[str, Any] | None,
    ) -> CallState:
        self._raise_if_halted()
        if channel == "model":
            limit, count, name = self.budgets.max_model_calls, self.model_calls, "max_model_calls"
        else:
            limit, count, name = self.budgets.max_tool_calls, self.tool_calls, "max_tool_calls"
        if limit is not None and count + 1 > limit:
            self._exhaust(name, limit, count + 1)
        self._advance_step()
        if channel == "model":
            self.model_calls += 1
        else:
            self.tool_calls += 1
        key = (channel, target)
        index = self._counts.get(key, 0) + 1
        self._counts[key] = index
        t = self.now()
        shown = snapshot(dict(args if recorded is None else recorded))
        if channel == "model":
            self.trace.append(ModelCall(self.steps, t, model=target, index=index, input=shown))
        else:
            self.trace.append(
                ToolCall(self.steps, t, tool=target, index=index, args=shown, channel=channel)
            )
        call = CallInfo(channel, target, index, t, args, schema, key in self._previous)
        decision = self.plan.decide(call)
        if decision is None:
            return CallState(call, None, None, None, self.steps)
        fault = self.trace.append(
            FaultInjected(
                self.steps,
                t,
                kind=decision.kind.name,
                channel=channel,
                target=target,
                index=index,
                fault=decision.fault,
                detail=dict(decision.detail),
            )
        )
        effect = decision.kind.effect(decision.detail, call)
        return CallState(call, decision, effect, fault, self.steps)  # type: ignore[arg-type]

    def previous_output(self, state: CallState) -> Any:
        """The last successful output of the same target on the same channel."""
        return self._previous.get((state.call.channel, state.call.target), _MISSING)

    def delay(self, state: CallState) -> float:
        """Apply the effect's delay (virtual in tests); returns the seconds it lasts.

        On a virtual clock the call ends ``delay`` after it *started*, so calls that overlap
        (threads, tasks) overlap in virtual time too instead of adding up.
        """
        effect = state.effect
        if effect is None or not effect.delay:
            return 0.0
        if isinstance(self.clock, VirtualClock):
            self.clock.advance_to(self._t0 + state.call.t + effect.delay)
        else:
            self.clock.sleep(effect.delay)
        self._check_seconds()
        return effect.delay

    async def adelay(self, state: CallState) -> float:
        """:meth:`delay` for async calls: on a virtual event loop the wait is a real
        ``await`` on virtual time, so other tasks run meanwhile."""
        effect = state.effect
        if effect is None or not effect.delay:
            return 0.0
        clock = self.clock
        if isinstance(clock, VirtualClock) and clock.on_virtual_loop():
            remaining = self._t0 + state.call.t + effect.delay - clock.now()
            await clock.asleep(max(0.0, remaining))
        else:
            # Let calls started together (asyncio.gather) all begin first, so that their
            # waits overlap: each ends `delay` after its own start.
            await yield_to_loop()
            self.delay(state)
        self._check_seconds()
        return effect.delay

    def finish_ok(
        self,
        state: CallState,
        output: Any,
        *,
        tokens: int | None = None,
        transform: bool = True,
        recorded: Any = _MISSING,
        status: int | None = None,
    ) -> Any:
        """Record a successful output (after the effect's transform) and return it.

        ``output`` is also kept for ``repeated_output``; ``recorded`` (default: ``output``)
        is what the trace shows.
        """
        effect = state.effect
        if transform and effect is not None and effect.transform is not None:
            output = effect.transform(output)
        call = state.call
        self._previous[(call.channel, call.target)] = output
        recorded = snapshot(output if recorded is _MISSING else recorded)
        self._result(state, output=recorded, tokens=tokens, status=status)
        if call.channel == "model" and tokens:
            self.tokens += tokens
            limit = self.budgets.max_tokens
            if limit is not None and self.tokens > limit:
                self._exhaust("max_tokens", limit, self.tokens)
        return output

    def finish_error(
        self,
        state: CallState,
        exc: BaseException | None = None,
        *,
        error_type: str | None = None,
        message: str | None = None,
        status: int | None = None,
        output: Any = None,
    ) -> None:
        """Record a failed call, from an exception or from explicit fields (HTTP statuses)."""
        if exc is not None:
            error_type = error_type or type(exc).__name__
            message = message if message is not None else str(exc)[:_MESSAGE_LIMIT]
            status = status if status is not None else status_of(exc)
        self._result(
            state,
            ok=False,
            output=snapshot(output),
            error_type=error_type,
            message=message,
            status=status,
        )

    def _result(self, state: CallState, **fields: Any) -> None:
        """Append the result event of ``state``'s call: a ModelResult or a ToolResult."""
        call = state.call
        if call.channel == "model":
            fields.pop("status", None)
            self._emit(ModelResult, state.step, model=call.target, index=call.index, **fields)
        else:
            fields.pop("tokens", None)
            self._emit(
                ToolResult,
                state.step,
                tool=call.target,
                index=call.index,
                channel=call.channel,
                **fields,
            )

    # -- lifecycle ---------------------------------------------------------------------

    def add_cleanup(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` at :meth:`close` (last added, first run)."""
        self._cleanups.append(fn)

    def end(self, status: str | None = None, **detail: Any) -> None:
        """Write the closing ``RunEnded`` event (once)."""
        if self._ended:
            return
        self._ended = True
        if status is None:
            status = "halted" if self._halted is not None else "completed"
        self._emit(RunEnded, status=status, detail=detail)

    def close(self) -> None:
        """Undo everything this session installed; safe to call twice."""
        errors: list[BaseException] = []
        while self._cleanups:
            try:
                self._cleanups.pop()()
            except Exception as exc:  # keep undoing the rest
                errors.append(exc)
        if errors:
            raise errors[0]

    def counters(self) -> dict[str, Any]:
        return {
            "steps": self.steps,
            "tool_calls": self.tool_calls,
            "model_calls": self.model_calls,
            "tokens": self.tokens,
            "seconds": round(self.now(), 6),
        }
