"""``ChaosSession``: one run's plan, clock, budgets, counters and trace.

Every injector (Python callables, httpx, model calls) goes through :meth:`ChaosSession.begin`
and one of the ``finish_*`` methods, so faults, budgets and trace events behave the same on
every channel. The session has no pytest in it: production code and other harnesses can use it.

A run that hit a hard halt (a budget, a blocked network request, the watchdog) stays halted:
every later call raises the halt again at once, and tells :attr:`ChaosSession.on_swallow`,
since an agent that calls again has swallowed the halt.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ..clock.clock import Clock, VirtualClock, yield_to_loop
from ..errors import BudgetExhausted, HardHalt, RunClosed, UnreadableUsage
from ..faults.kinds import RUNNER_CHANNELS, CallInfo
from ..faults.plan import FaultPlan
from ..profiles.budgets import Budgets
from ..saferepr import safe_repr, safe_str, short
from ..status import status_of
from ..trace.events import (
    BudgetExhaustedEvent,
    Event,
    Halt,
    ModelCall,
    ModelResult,
    RunEnded,
    RunStarted,
    Step,
    ToolCall,
    ToolResult,
    build,
)
from ..trace.trace import Trace
from ..trace.values import DEFAULT_MAX_VALUE, capture
from .call import CHANNEL, EFFECT, FAULT, INDEX, KEY, STEP, TARGET, CallState, new_state
from .ledger import RunLedger
from .outcomes import AfterCallFaults

E = TypeVar("E", bound=Event)

log = logging.getLogger(__name__)

_MISSING: Any = object()
_new_call = tuple.__new__
_MESSAGE_LIMIT = 500


class ChaosSession(AfterCallFaults, RunLedger):
    """The runtime of one chaos run. Injectors call it; readers read ``trace``.

    ``max_value`` caps each recorded value (arguments, outputs) in JSON characters; see
    :func:`pytest_agentchaos.trace.values.capture`.
    """

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
        max_value: int = DEFAULT_MAX_VALUE,
    ) -> None:
        self.plan = plan if plan is not None else FaultPlan((), seed)
        budgets = budgets if budgets is not None else Budgets()
        self.budgets = budgets
        self.clock: Clock = clock if clock is not None else VirtualClock()
        self.trace = trace if trace is not None else Trace()
        self.seed = seed
        self.profile = profile
        self.test_id = test_id
        self.max_value = max_value
        self.steps = 0
        self.tool_calls = 0
        self.model_calls = 0
        self.tokens = 0
        #: Called (in the agent's thread) with the halt when a call arrives after a hard halt:
        #: the agent swallowed it. The harness uses it to unwind such an agent.
        self.on_swallow: Callable[[HardHalt], None] | None = None
        self._max_steps = budgets.max_steps
        self._max_tool_calls = budgets.max_tool_calls
        self._max_model_calls = budgets.max_model_calls
        self._max_seconds = budgets.max_seconds
        self._max_tokens = budgets.max_tokens
        self._budgeted = bool(budgets)
        self._active = frozenset(c for c in ("tool", "http", "model") if self.plan.active(c))
        self._now = self.clock.now  # bound once: read on every call
        self._t0 = self._now()
        self._counts: dict[tuple[str, str], int] = {}
        # each target's schema, as its first call gave it (a search decides corruptions on it)
        self._schemas: dict[tuple[str, str], Mapping[str, Any]] = {}
        # Each target's last output, kept only when a fault may replay it (memory: outputs
        # can be large, and the trace keeps only a capped copy).
        # (the `depth` latest; the first too for stale_output; and how many there were)
        self._depth = self.plan.depth
        self._keep_previous = self._depth > 0
        self._keeps_first = self.plan.keeps_first
        self._kept: dict[tuple[str, str], deque[Any]] = {}
        self._first: dict[tuple[str, str], Any] = {}
        self._outputs: dict[tuple[str, str], int] = {}
        self._halted: HardHalt | None = None
        self._owners: dict[tuple[str, str], object] = {}
        self._cleanups: list[Callable[[], None]] = []
        self._before_end: list[Callable[[], None]] = []
        #: the run's scripted provider endpoints (``chaos.provider``; see :mod:`.handover`)
        self.provider_endpoints: list[Any] = []
        self._ended = False
        self._closed = False
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
        if self._halted is not None:
            self._raise_halted()  # a halted run stays halted, even for a virtual sleep
        self._check_seconds()

    def _check_seconds(self) -> None:
        limit = self._max_seconds
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
        with self._lock:
            return self._emit(cls, **fields)  # type: ignore[no-any-return]

    def step(self, label: str | None = None, state: Any = None) -> int:
        """Count one agent step (for agents whose steps are not tool or model calls):
        ``label`` names the node entered, ``state`` is what the agent reports of its state
        (recorded bounded, for state-recurrence checks)."""
        if label is not None and not isinstance(label, str):
            raise TypeError(f"chaos.step(): label must be a string or None, got {short(label)}")
        shown = None if state is None else capture(state, self.max_value)
        with self._lock:
            if self._halted is not None:
                self._raise_halted()
            if self._closed:
                self._raise_closed("chaos.step()")
            self._advance_step()
            self._emit(Step, label=None if label is None else safe_str(label, 200), state=shown)
            return self.steps

    # -- halts -------------------------------------------------------------------------

    @property
    def halted(self) -> HardHalt | None:
        """The hard halt that stopped this run (a budget, the network guard, the watchdog)."""
        return self._halted

    def _raise_closed(self, what: str) -> None:
        __tracebackhide__ = True
        test = f"test {self.test_id}" if self.test_id else "a run"
        raise RunClosed(
            f"{what!r} was wrapped by the chaos run of {test}, which has ended: a wrapped "
            "tool, model or agent belongs to its run; wrap the original again where it is used"
        )

    def _raise_halted(self) -> None:
        halt = self._halted
        assert halt is not None
        hook = self.on_swallow
        if hook is not None:
            hook(halt)
        raise halt.again()

    def stop(self, halt: HardHalt, **detail: Any) -> HardHalt:
        """Record a hard halt decided outside the call path (the network guard, the watchdog)
        and keep the run halted; returns ``halt`` for the caller to raise. Thread-safe."""
        with self._lock:
            if self._halted is None:
                self._halted = halt
            self._emit(
                Halt,
                reason=halt.reason,
                hard=True,
                detail=capture({"message": halt.message, **detail}, self.max_value),
            )
        log.info("chaos run %s stopped: %s", self.test_id, halt.message)
        return halt

    def _exhaust(self, budget: str, limit: float, count: float) -> None:
        exc = BudgetExhausted(budget, limit, count)
        if self._halted is None:
            self._halted = exc
        self._emit(BudgetExhaustedEvent, budget=budget, limit=limit, count=count)
        log.info("chaos run %s stopped: %s", self.test_id, exc)
        raise exc

    def _check_call_budgets(self, channel: str) -> None:
        """Raise ``BudgetExhausted`` if one more call on ``channel`` would exceed a budget."""
        if channel == "model":
            if self._max_model_calls is not None and self.model_calls >= self._max_model_calls:
                self._exhaust("max_model_calls", self._max_model_calls, self.model_calls + 1)
        elif self._max_tool_calls is not None and self.tool_calls >= self._max_tool_calls:
            self._exhaust("max_tool_calls", self._max_tool_calls, self.tool_calls + 1)
        limit = self._max_steps
        if limit is not None and self.steps >= limit:
            self._exhaust("max_steps", limit, self.steps + 1)
        if self._max_seconds is not None:
            self._check_seconds()

    def _advance_step(self) -> None:
        limit = self._max_steps
        if limit is not None and self.steps >= limit:
            self._exhaust("max_steps", limit, self.steps + 1)
        if self._max_seconds is not None:
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
        agent: str | None = None,
    ) -> CallState:
        """Record a call, enforce budgets and decide its fault. Raises ``BudgetExhausted``.

        ``args`` are what faults look at; ``recorded`` (default: ``args``) what the trace shows;
        ``agent`` the agent that makes the call (a multi-agent app's), when known.
        Thread-safe: tools run from a thread pool get distinct, consecutive call indexes (in
        arrival order, so decisions replay exactly only for calls that arrive in order).
        """
        with self._lock:
            if self._halted is not None:
                self._raise_halted()
            if self._closed:
                self._raise_closed(target)
            if self._budgeted:
                self._check_call_budgets(channel)
            if channel == "model":
                self.model_calls += 1
            else:
                self.tool_calls += 1
            self.steps = step = self.steps + 1
            key = (channel, target)
            counts = self._counts
            counts[key] = index = counts.get(key, 0) + 1
            if index == 1 and schema is not None:
                self._schemas[key] = schema
            t = self._now() - self._t0
            shown = capture(args if recorded is None else recorded, self.max_value)
            if channel == "model":
                self.trace.append(build(ModelCall, (step, t, target, index, shown, agent)))
            else:
                self.trace.append(build(ToolCall, (step, t, target, index, shown, channel, agent)))
            if channel not in self._active or not self.plan.candidates(channel, target):
                return new_state(channel, target, index, step, t, key)
            call = _new_call(CallInfo, (
                channel, target, index, t, args, schema, key in self._kept,
                self._outputs.get(key, 0),
            ))  # fmt: skip
            decision = self.plan.decide(call)
            if decision is None:
                return new_state(channel, target, index, step, t, key)
            return self._fired(call, decision, step, key)

    def _fired(self, call: CallInfo, decision: Any, step: int, key: Any) -> CallState:
        """Record the fault ``decision`` made for ``call`` and return the call's state with
        its effect (under the lock). A fault that acts on the real call's outcome
        (``Effect.acts_after``) is recorded only once it acts (:meth:`_acted`)."""
        effect = decision.kind.effect_for(decision.detail, call)
        if effect.acts_after:
            return new_state(
                call.channel, call.target, call.index, step, call.t, key, effect, None, decision
            )
        fault = self._record_fault(step, call.t, call.channel, call.target, call.index, decision)
        return new_state(
            call.channel, call.target, call.index, step, call.t, key, effect, fault, decision
        )

    def inject(
        self, channel: str, target: str, args: Mapping[str, Any] | None = None
    ) -> CallState | None:
        """Ask the plan about one event of the rebirth runner (a channel of
        :data:`~pytest_agentchaos.faults.kinds.RUNNER_CHANNELS`): ``step`` before each step it
        runs, ``snapshot`` before each load. Events are numbered per (channel, target) as calls
        are; a fault that fires is a ``FaultInjected`` event, and the state returned carries its
        effect (``None``: no fault). Nothing else is counted or recorded: the runner's steps are
        the agent's own, not tool calls. Raises the run's hard halt if it has one."""
        if channel not in RUNNER_CHANNELS:
            raise ValueError(
                f"inject(): channel must be one of {', '.join(RUNNER_CHANNELS)}, got "
                f"{short(channel)} (calls go through begin())"
            )
        with self._lock:
            if self._halted is not None:
                self._raise_halted()
            key = (channel, target)
            self._counts[key] = index = self._counts.get(key, 0) + 1
            if not self.plan.active(channel) or not self.plan.candidates(channel, target):
                return None
            t = self._now() - self._t0
            call = CallInfo(channel, target, index, t, dict(args or {}))
            decision = self.plan.decide(call)
            if decision is None:
                return None
            return self._fired(call, decision, self.steps, key)

    def previous_output(self, state: CallState) -> Any:
        """The earlier output of the same target on the same channel that the call's effect
        replays: the last successful one unless it asks for an older one (``replay_age``)."""
        age = state.effect.replay_age if state.effect is not None else 1
        if age == 0:
            return self._first.get(state.key, _MISSING)
        kept = self._kept.get(state.key)
        return kept[-age] if kept is not None and len(kept) >= age else _MISSING

    def _keep(self, key: tuple[str, str], output: Any) -> None:
        """Keep ``output`` for the faults that replay earlier outputs."""
        kept = self._kept.get(key)
        if kept is None:
            kept = self._kept[key] = deque(maxlen=self._depth)
            if self._keeps_first:
                self._first[key] = output
        kept.append(output)
        self._outputs[key] = self._outputs.get(key, 0) + 1

    def delay(self, state: CallState, seconds: float | None = None) -> float:
        """Apply the effect's delay (virtual in tests), or ``seconds`` of it when given (a
        client that stops waiting sooner); returns the seconds it lasts.

        On a virtual clock the call ends ``delay`` after it *started*, so calls that overlap
        (threads, tasks) overlap in virtual time too instead of adding up.
        """
        effect = state.effect
        if effect is None or not effect.delay:
            return 0.0
        wait = effect.delay if seconds is None else seconds
        if isinstance(self.clock, VirtualClock):
            self.clock.advance_to(self._t0 + state.t + wait)
        else:
            self.clock.sleep(wait)
        self._check_seconds()
        return wait

    async def adelay(self, state: CallState, seconds: float | None = None) -> float:
        """:meth:`delay` for async calls: on a virtual asyncio event loop the wait is a real
        ``await`` on virtual time, so other tasks run meanwhile; on a real clock it is an
        ``await`` of the clock's ``asleep`` (the loop keeps running). Under trio (or anyio on
        trio) the virtual clock moves at once and the call yields to trio's scheduler."""
        effect = state.effect
        if effect is None or not effect.delay:
            return 0.0
        wait = effect.delay if seconds is None else seconds
        clock = self.clock
        if not isinstance(clock, VirtualClock) or clock.on_virtual_loop():
            # a real clock's wait is an await too: a blocking sleep would stop the event loop
            remaining = self._t0 + state.t + wait - clock.now()
            await clock.asleep(max(0.0, remaining))
        else:
            # Let calls started together (asyncio.gather) all begin first, so that their
            # waits overlap: each ends `delay` after its own start.
            await yield_to_loop()
            self.delay(state, seconds)
        self._check_seconds()
        return wait

    def finish_ok(
        self,
        state: CallState,
        output: Any,
        *,
        tokens: int | None = None,
        transform: bool = True,
        recorded: Any = _MISSING,
        status: int | None = None,
        usage_error: str | None = None,
    ) -> Any:
        """Record a successful output (after the effect's transform) and return it.

        ``output`` is also kept for ``repeated_output``; ``recorded`` (default: ``output``)
        is what the trace shows. ``usage_error`` says why a model call's token usage could
        not be read: with ``max_tokens`` set, the run stops (the budget cannot be enforced).
        """
        effect = state[EFFECT]
        if effect is not None:
            if effect.lost is not None:
                __tracebackhide__ = True
                raise self.lose(state, output)
            if transform and effect.reply is not None:
                state, output = self.reply(state, output)
            if transform and effect.transform is not None:
                output = effect.transform(output)
        channel, target, index, step = state[CHANNEL], state[TARGET], state[INDEX], state[STEP]
        if self._keep_previous:
            self._keep(state[KEY], output)
        shown = capture(output if recorded is _MISSING else recorded, self.max_value)
        t = self.clock.now() - self._t0
        if channel != "model":
            self.trace.append(
                build(ToolResult, (
                    step, t, target, index, True, shown, None, None, status, channel,))
            )  # fmt: skip
            return output
        self.trace.append(
            build(ModelResult, (step, t, target, index, True, shown, tokens, None, None,))
        )  # fmt: skip
        if usage_error is not None and self._max_tokens is not None:
            halt = UnreadableUsage(
                f"max_tokens={self._max_tokens} cannot be enforced: the token usage of model "
                f"{target!r} call {index} cannot be read: {usage_error}"
            )
            raise self.stop(halt, model=target, index=index)
        if tokens:
            with self._lock:
                self.tokens += tokens
                limit = self._max_tokens
                if limit is not None and self.tokens > limit:
                    self._exhaust("max_tokens", limit, self.tokens)
        return output

    def finish_plain(self, state: CallState, output: Any) -> Any:
        """:meth:`finish_ok` for the common case (a tool or HTTP call's own output, nothing to
        transform): the shortest path, for every call of a passing test."""
        if state[EFFECT] is not None or state[CHANNEL] == "model":
            return self.finish_ok(state, output)
        if self._keep_previous:
            self._keep(state[KEY], output)
        self.trace.append(
            build(ToolResult, (
                state[STEP], self._now() - self._t0, state[TARGET], state[INDEX], True,
                capture(output, self.max_value), None, None, None, state[CHANNEL],))
        )  # fmt: skip
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
            message = message if message is not None else safe_str(exc, _MESSAGE_LIMIT)
            status = status if status is not None else status_of(exc)
        effect = state[EFFECT]
        if effect is not None and effect.acts_after and state[FAULT] is None:
            self._unused(state, f"the call failed by itself ({error_type or 'an error'})")
        shown = capture(output, self.max_value)
        t = self.now()
        if state.channel == "model":
            self.trace.append(
                build(ModelResult, (
                    state.step, t, state.target, state.index, False, shown, None, error_type,
                    message,))
            )  # fmt: skip
        else:
            self.trace.append(
                build(ToolResult, (
                    state.step, t, state.target, state.index, False, shown, error_type, message,
                    status, state.channel,))
            )  # fmt: skip

    # -- lifecycle ---------------------------------------------------------------------

    def add_cleanup(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` at :meth:`close` (last added, first run)."""
        self._cleanups.append(fn)

    @property
    def ended(self) -> bool:
        """Whether :meth:`end` has written the closing ``RunEnded`` event."""
        return self._ended

    def before_end(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` when the run ends, before its ``RunEnded`` event (so before its
        verdicts): where calls recorded elsewhere (a chaos MCP proxy's own trace) join this
        run's trace. A callback that raises is said in the run's notes."""
        self._before_end.append(fn)

    def end(self, status: str | None = None, **detail: Any) -> None:
        """Write the closing ``RunEnded`` event (once)."""
        callbacks, self._before_end = self._before_end, []
        for fn in callbacks:
            try:
                fn()
            except Exception as exc:  # noqa: BLE001 - the run must still end
                self.note(f"before the run's end: {type(exc).__name__}: {safe_str(exc, 300)}")
        with self._lock:
            if self._ended:
                return
            self._ended = True
            if status is None:
                status = "halted" if self._halted is not None else "completed"
            self._emit(RunEnded, status=status, detail=capture(detail, self.max_value))

    def close(self) -> None:
        """Undo everything this session installed; safe to call twice.

        Every undo runs even if an earlier one fails (a Ctrl-C included); the first failure is
        raised at the end.
        """
        self._closed = True
        error: BaseException | None = None
        while self._cleanups:
            try:
                self._cleanups.pop()()
            except BaseException as exc:  # noqa: BLE001 - keep undoing the rest, then raise
                error = error or exc
        if error is not None:
            raise error

    def __repr__(self) -> str:
        return (
            f"<ChaosSession test={safe_repr(self.test_id, 120)} profile={self.profile!r} "
            f"steps={self.steps}>"
        )
