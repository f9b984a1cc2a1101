"""``Supervisor``: the escape stack in one object that an agent calls its tools through.

``call(tool, fn, args)`` runs breaker -> call -> classify -> retry with backoff (honouring
Retry-After) -> fallback chain. A persistent error is not retried; a transient one is, until
the backoff's attempts are spent; then each fallback tool is tried in order and its result is
marked with the fallback's confidence (seed 002: ``web_search -> local_knowledge_base 0.8 ->
cached_search_results 0.6``). Every decision is written to the trace through the recorder.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..clock.clock import Clock, RealClock
from ..trace.events import Detection, Intervention
from .backoff import Backoff, RetryDecision
from .breaker import BreakerOpen, Breakers
from .classify import ErrorClassifier
from .policy import EscapePolicy
from .recorder import Recorder

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
    ) -> None:
        self.policy = policy or EscapePolicy()
        self.clock = clock or RealClock()
        self.recorder: Recorder = recorder if recorder is not None else _NullRecorder()
        self.tools = dict(tools or {})
        self.fallbacks = {k: list(v) for k, v in (fallbacks or {}).items()}
        for tool, chain in self.fallbacks.items():
            for alt, confidence in chain:
                if not 0.0 <= confidence <= 1.0:
                    raise ValueError(f"fallback {tool} -> {alt}: confidence must be 0..1")
        self.classifier = ErrorClassifier(self.policy.classifier)
        self.backoff = Backoff(self.policy.backoff, self.clock, seed, self.recorder)
        self.breakers = Breakers(self.policy.breaker, self.clock, self.recorder)

    @classmethod
    def for_run(cls, run: _Run, **kwargs: Any) -> Supervisor:
        """A supervisor wired to a chaos run: its trace, virtual clock, seed and the
        profile's ``[escape]`` policy."""
        raw = run.profile.sections.get("escape", {}) if run.profile is not None else {}
        kwargs.setdefault("policy", EscapePolicy.from_dict(raw, f"{run.profile.source}: [escape]"))
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
            return CallOutcome(value, tool, 1.0, attempts)
        except Exception as primary:
            for alt, confidence, alt_fn in self._chain(tool):
                try:
                    value, attempts = self._attempt(alt, alt_fn, kwargs)
                except Exception:
                    continue
                self._fell_back(tool, alt, confidence, primary)
                return CallOutcome(value, alt, confidence, attempts, fallback=True)
            raise

    async def acall(
        self, tool: str, fn: Callable[..., Awaitable[Any]], args: Mapping[str, Any] | None = None
    ) -> Any:
        """:meth:`call` for coroutine functions."""
        return (await self.acall_outcome(tool, fn, args)).value

    async def acall_outcome(
        self, tool: str, fn: Callable[..., Awaitable[Any]], args: Mapping[str, Any] | None = None
    ) -> CallOutcome:
        kwargs = dict(args or {})
        try:
            value, attempts = await self._aattempt(tool, fn, kwargs)
            return CallOutcome(value, tool, 1.0, attempts)
        except Exception as primary:
            for alt, confidence, alt_fn in self._chain(tool):
                try:
                    value, attempts = await self._aattempt(alt, alt_fn, kwargs)
                except Exception:
                    continue
                self._fell_back(tool, alt, confidence, primary)
                return CallOutcome(value, alt, confidence, attempts, fallback=True)
            raise

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

        def once() -> Any:
            nonlocal attempts
            attempts += 1
            return breaker.call(lambda: fn(**kwargs), is_failure=self._is_failure)

        value = self.backoff.call(once, should_retry=self._should_retry(tool), key=tool)
        self.classifier.record_success(tool)
        return value, attempts

    async def _aattempt(
        self, tool: str, fn: Callable[..., Awaitable[Any]], kwargs: dict[str, Any]
    ) -> tuple[Any, int]:
        breaker = self.breakers.for_tool(tool)
        attempts = 0

        async def once() -> Any:
            nonlocal attempts
            attempts += 1
            return await breaker.acall(lambda: fn(**kwargs), is_failure=self._is_failure)

        value = await self.backoff.acall(once, should_retry=self._should_retry(tool), key=tool)
        self.classifier.record_success(tool)
        return value, attempts
