"""``Supervisor``: the escape stack in one object that an agent calls its tools through.

``call(tool, fn, args)`` runs breaker -> call -> classify -> retry with backoff (honouring
Retry-After) -> fallback chain. A persistent error is not retried; a transient one is, until
the backoff's attempts are spent; then each fallback tool is tried in order and its result is
marked with the fallback's confidence (seed 002: ``web_search -> local_knowledge_base 0.8 ->
cached_search_results 0.6``). Every decision is written to the trace through the recorder.
"""

from __future__ import annotations

import datetime as _dt
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..clock.clock import Clock, RealClock
from ..rng import stable_random
from ..saferepr import safe_str
from ..status import status_of
from ..trace.events import Detection, Intervention, Step
from ..trace.values import capture
from .backoff import Backoff, RetryDecision
from .breaker import BreakerOpen, Breakers
from .classify import ErrorClassifier
from .history import ActionKey
from .interventions import CONTINUE, Action, EmergencyStop, Escalated
from .keys import Keyer
from .loops import Loop, LoopDetector
from .policy import EscapePolicy
from .recorder import Recorder, TraceRecorder

_WAIT = object()

#: Errors that are the caller's fault, not the tool's: they do not trip the tool's breaker.
_NOT_THE_TOOLS_FAULT = frozenset({"validation", "llm_refusal"})


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """What a supervised call returned, from which tool, with what confidence."""

    value: Any
    tool: str
    confidence: float = 1.0
    attempts: int = 1
    fallback: bool = False


class _Run(Protocol):
    """What :meth:`Supervisor.for_run` needs of a chaos run (a ``Chaos``)."""

    @property
    def session(self) -> Recorder: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def seed(self) -> int: ...

    @property
    def profile(self) -> Any: ...


class _NullRecorder:
    def record(self, cls: type[Any], **fields: Any) -> Any:
        return None


class Supervisor:
    """Calls tools for an agent, with retries, backoff, circuit breakers and fallbacks."""

    def __init__(
        self,
        *,
        policy: EscapePolicy | None = None,
        clock: Clock | None = None,
        recorder: Recorder | None = None,
        seed: int = 0,
        tools: Mapping[str, Callable[..., Any]] | None = None,
        fallbacks: Mapping[str, Sequence[tuple[str, float]]] | None = None,
        graph: Mapping[str, Sequence[str]] | None = None,
        rollback: Callable[[], Any] | None = None,
        escalate: Callable[[dict[str, Any]], Any] | None = None,
        repairers: Mapping[str, Any] | None = None,
    ) -> None:
        self.policy = policy or EscapePolicy()
        self.clock = clock or RealClock()
        self.recorder: Recorder = recorder if recorder is not None else _NullRecorder()
        self.tools = dict(tools or {})
        # tool -> a ParamRepairer (any object with call(fn, args, retry_transient=) and acall)
        self.repairers = dict(repairers or {})
        for tool, repairer in self.repairers.items():
            if not callable(getattr(repairer, "call", None)):
                raise TypeError(f"repairers[{tool!r}]: expected a ParamRepairer, got {repairer!r}")
            wired = getattr(repairer, "wired", None)
            if callable(wired) and not isinstance(self.recorder, _NullRecorder):
                # its Repair events go to this trace; relative dates read this clock
                self.repairers[tool] = wired(self.recorder, self._datetime)
        self.fallbacks = {k: list(v) for k, v in (fallbacks or {}).items()}
        for tool, chain in self.fallbacks.items():
            for alt, confidence in chain:
                if not 0.0 <= confidence <= 1.0:
                    raise ValueError(f"fallback {tool} -> {alt}: confidence must be 0..1")
        self.classifier = ErrorClassifier(self.policy.classifier)
        self.backoff = Backoff(self.policy.backoff, self.clock, seed, self.recorder)
        self.breakers = Breakers(self.policy.breaker, self.clock, self.recorder)
        self.seed = seed
        self.graph = {node: list(edges) for node, edges in (graph or {}).items()}
        self.rollback_hook = rollback
        self.escalate_hook = escalate
        self.loops = LoopDetector(self.policy.loops)
        self.keyer = Keyer(self.policy.loops)
        self._loop: Loop | None = None
        self._rung = 0
        self._retries = 0
        self._node: str | None = None
        self._moves = 0
        self._tried: dict[tuple[str, str], int] = {}
        # (move, node) of the latest visits: the nodes a tool loop cycles through
        self._path: deque[tuple[int, str]] = deque(maxlen=4 * self.policy.loops.max_period)

    def _datetime(self) -> _dt.datetime:
        return _dt.datetime.fromtimestamp(self.clock.now(), _dt.timezone.utc)

    @classmethod
    def for_run(cls, run: _Run, **kwargs: Any) -> Supervisor:
        """A supervisor wired to a chaos run: its trace, virtual clock, seed and the
        profile's ``[escape]`` policy."""
        if "policy" not in kwargs:
            profile = run.profile
            kwargs["policy"] = profile.policy("escape") if profile is not None else EscapePolicy()
        return cls(clock=run.clock, recorder=run.session, seed=run.seed, **kwargs)

    # -- calls ---------------------------------------------------------------------------

    def call(self, tool: str, fn: Callable[..., Any], args: Mapping[str, Any] | None = None) -> Any:
        """Call ``fn(**args)`` as ``tool`` under the escape stack; returns its value."""
        return self.call_outcome(tool, fn, args).value

    def call_outcome(
        self, tool: str, fn: Callable[..., Any], args: Mapping[str, Any] | None = None
    ) -> CallOutcome:
        """Like :meth:`call`, but says which tool answered and with what confidence."""
        kwargs = dict(args or {})
        try:
            value, attempts = self._attempt(tool, fn, kwargs)
            return self._done(CallOutcome(value, tool, 1.0, attempts), kwargs)
        except Exception as primary:
            for alt, confidence, alt_fn in self._chain(tool):
                try:
                    value, attempts = self._attempt(alt, alt_fn, kwargs)
                except Exception:
                    continue
                self._fell_back(tool, alt, confidence, primary)
                outcome = CallOutcome(value, alt, confidence, attempts, fallback=True)
                return self._done(outcome, kwargs)
            self._failed(tool, kwargs, primary)
            raise

    async def acall(
        self, tool: str, fn: Callable[..., Awaitable[Any]], args: Mapping[str, Any] | None = None
    ) -> Any:
        """:meth:`call` for coroutine functions."""
        return (await self.acall_outcome(tool, fn, args)).value

    async def acall_outcome(
        self, tool: str, fn: Callable[..., Awaitable[Any]], args: Mapping[str, Any] | None = None
    ) -> CallOutcome:
        """:meth:`call_outcome` for coroutine functions."""
        kwargs = dict(args or {})
        try:
            value, attempts = await self._aattempt(tool, fn, kwargs)
            return self._done(CallOutcome(value, tool, 1.0, attempts), kwargs)
        except Exception as primary:
            for alt, confidence, alt_fn in self._chain(tool):
                try:
                    value, attempts = await self._aattempt(alt, alt_fn, kwargs)
                except Exception:
                    continue
                self._fell_back(tool, alt, confidence, primary)
                outcome = CallOutcome(value, alt, confidence, attempts, fallback=True)
                return self._done(outcome, kwargs)
            self._failed(tool, kwargs, primary)
            raise

    def _done(self, outcome: CallOutcome, args: dict[str, Any]) -> CallOutcome:
        self._observe(self.keyer.tool(outcome.tool, _plain(args), result=_plain(outcome.value)))
        return outcome

    def _failed(self, tool: str, args: dict[str, Any], error: Exception) -> None:
        key = self.keyer.tool(
            tool,
            _plain(args),
            ok=False,
            error_type=type(error).__name__,
            message=safe_str(error, 2000),
            status=status_of(error),
        )
        self._observe(key)

    # -- loops: visit / check ---------------------------------------------------------------

    def visit(self, node: str, state: Any = None) -> None:
        """The agent entered ``node`` (for graph agents): counts a step and feeds the loop
        detector. ``state`` (any JSON-able value or a digest) adds state-recurrence checks:
        the same state seen again with nothing new in between is a loop."""
        step = getattr(self.recorder, "step", None)
        if callable(step):
            step(node, state)  # a chaos session: counts the step against the budgets too
        else:
            if isinstance(self.recorder, TraceRecorder):
                self.recorder.step += 1
            shown = None if state is None else capture(state)
            self.recorder.record(Step, label=node, state=shown)
        self._moves += 1
        if self._node is not None:
            self._tried[(self._node, node)] = self._moves
        self._node = node
        self._path.append((self._moves, node))
        subject = None if state is None else self.keyer.state(_plain(state))
        self._observe(ActionKey(node=node, digest=subject), state=subject, node=node)

    def check(self) -> Action:
        """What to do about the loop happening now (``continue`` when there is none).

        While the same loop persists, each check climbs one rung of the policy's ladder:
        retry with backoff, explore an edge out of the cycle, roll back, escalate, stop.
        """
        loop = self._loop
        if loop is None:
            return CONTINUE
        ladder = self.policy.interventions
        while self._rung < len(ladder):
            rung = ladder[self._rung]
            if rung == "explore":
                target = self._exit(loop)
                if target is _WAIT:
                    return CONTINUE  # not at a node with a way out yet: keep this rung
                self._rung += 1
                if target is not None:
                    return self._intervene("explore", loop, to=target, **{"from": self._node})
                continue
            self._rung += 1
            action = self._climb(rung, loop)
            if action is not None:
                return action
        return CONTINUE

    def _climb(self, rung: str, loop: Loop) -> Action | None:
        if rung == "retry":
            delay = self.backoff.wait(self._retries, key="loop")
            self._retries += 1
            return self._intervene("retry", loop, delay=delay)
        if rung == "rollback":
            if self.rollback_hook is None:
                return None
            self.rollback_hook()
            return self._intervene("rollback", loop)
        if rung == "escalate":
            action = self._intervene("escalate", loop)
            if self.escalate_hook is None:
                raise Escalated(
                    f"loop not broken, handed to a human: {loop.describe()}", **action.detail
                )
            self.escalate_hook(dict(action.detail))
            return action
        self._intervene("stop", loop)
        raise EmergencyStop(
            f"emergency stop: loop persisted through every intervention: {loop.describe()}"
        )

    def _exit(self, loop: Loop) -> str | None | object:
        """An edge from here to a node outside the cycle (least recently tried, seeded tie
        break); ``_WAIT`` when another node of the cycle has one; ``None`` when none does.

        The cycle is the loop's nodes; for a loop of tool calls alone (the same failing call
        at every lap), the nodes visited since the loop began."""
        cycle = {k.node for k in loop.keys if k.node is not None}
        if not cycle:
            cycle = {node for move, node in self._path if move >= loop.began_step}
        if not self.graph or not cycle:
            return None
        node = self._node
        exits = [n for n in self.graph.get(node or "", []) if n not in cycle]
        if not exits:
            if any(n not in cycle for c in cycle for n in self.graph.get(c, [])):
                return _WAIT
            return None
        oldest = min(self._tried.get((node or "", n), 0) for n in exits)
        ties = sorted(n for n in exits if self._tried.get((node or "", n), 0) == oldest)
        return ties[stable_random(self.seed, "explore", node, self._moves).randrange(len(ties))]

    def _intervene(self, action: str, loop: Loop, **detail: Any) -> Action:
        detail = {"loop": loop.describe(), **detail}
        self.recorder.record(Intervention, action=action, detail=dict(detail))
        return Action(action, detail)

    def _observe(self, key: ActionKey, *, state: Any = None, node: str | None = None) -> None:
        alarms = self.loops.observe(key, self._moves, self.clock.now(), state=state, node=node)
        current = alarms[0] if alarms else None
        if current is None:
            self._loop = None
            return
        if current.new or self._loop is None:
            self._rung = 0
            self.recorder.record(
                Detection, detector="supervisor", kind="loop", detail=current.to_detail()
            )
        self._loop = current

    # -- internals ---------------------------------------------------------------------

    def _chain(self, tool: str) -> list[tuple[str, float, Callable[..., Any]]]:
        return [
            (alt, confidence, self.tools[alt])
            for alt, confidence in self.fallbacks.get(tool, ())
            if alt in self.tools
        ]

    def _fell_back(self, tool: str, alt: str, confidence: float, error: Exception) -> None:
        self.recorder.record(
            Intervention,
            action="fallback",
            detail={"from": tool, "to": alt, "confidence": confidence, "error": repr(error)[:200]},
        )

    def _is_failure(self, exc: Exception) -> bool:
        return self.classifier.classify(exc).category not in _NOT_THE_TOOLS_FAULT

    def _should_retry(self, tool: str) -> Callable[[Exception], RetryDecision]:
        def decide(exc: Exception) -> RetryDecision:
            if isinstance(exc, BreakerOpen):
                if exc.retry_in > self.policy.max_breaker_wait:
                    return False
                return exc.retry_in
            verdict = self.classifier.classify(exc, tool)
            self.recorder.record(
                Detection,
                detector="classifier",
                kind=verdict.category,
                detail={"tool": tool, **verdict.to_dict()},
            )
            if not verdict.transient:
                return False
            return verdict.retry_after if verdict.retry_after is not None else True

        return decide

    def _attempt(
        self, tool: str, fn: Callable[..., Any], kwargs: dict[str, Any]
    ) -> tuple[Any, int]:
        breaker = self.breakers.for_tool(tool)
        attempts = 0

        repairer = self.repairers.get(tool)

        def run() -> Any:
            if repairer is None:
                return fn(**kwargs)
            # parameter errors are repaired before the breaker and the backoff see them
            return repairer.call(fn, kwargs, retry_transient=False)

        def once() -> Any:
            nonlocal attempts
            attempts += 1
            return breaker.call(run, is_failure=self._is_failure)

        value = self.backoff.call(once, should_retry=self._should_retry(tool), key=tool)
        self.classifier.record_success(tool)
        return value, attempts

    async def _aattempt(
        self, tool: str, fn: Callable[..., Awaitable[Any]], kwargs: dict[str, Any]
    ) -> tuple[Any, int]:
        breaker = self.breakers.for_tool(tool)
        attempts = 0

        repairer = self.repairers.get(tool)

        def run() -> Awaitable[Any]:
            if repairer is None:
                return fn(**kwargs)
            return repairer.acall(fn, kwargs, retry_transient=False)  # type: ignore[no-any-return]

        async def once() -> Any:
            nonlocal attempts
            attempts += 1
            return await breaker.acall(run, is_failure=self._is_failure)

        value = await self.backoff.acall(once, should_retry=self._should_retry(tool), key=tool)
        self.classifier.record_success(tool)
        return value, attempts


def _plain(value: Any) -> Any:
    """A value as the trace would record it (plain data, bounded), so the Supervisor keys a
    call exactly as the harness's observer keys the same call."""
    return capture(value)
