"""A halt monitor reading a chaos run's own trace: every model output and tool result is a
step it observes, and what it decides goes back into the trace (``Detection`` events of
detector ``halt`` for each strike, a ``Halt`` event when it decides the run must stop; with a
:class:`~.interventions.Responder` attached, the responder records what it does instead).

    monitor = HaltMonitor.for_run(chaos, task="Summarise the three reports")
    while not done:
        step_agent()
        if monitor.decision.halt:        # the agent stops itself; the trace says why
            break
"""

from __future__ import annotations

from typing import Any

from ..saferepr import safe_str
from ..trace.events import Detection, Event, Halt, ModelResult, ToolCall, ToolResult
from .monitor import HaltDecision, HaltMonitor

__all__ = ["BY", "DETECTOR", "RunWatch", "decision_detail", "record_halt"]

#: The ``detector`` of the monitor's ``Detection`` events.
DETECTOR = "halt"
#: The ``by`` of the monitor's ``Halt`` events, which ``must_halt(by=...)`` reads.
BY = "halt_monitor"
#: The most characters of a tool's output read as a step.
_OUTPUT = 4000


def decision_detail(decision: HaltDecision) -> dict[str, Any]:
    """What a ``Halt`` or ``Intervention`` event says of the decision behind it."""
    return {"by": BY, "fired": list(decision.fired), "score": decision.score,
            "limit": decision.hard, "monitor_step": decision.step}  # fmt: skip


def record_halt(recorder: Any, decision: HaltDecision, by: str, **extra: Any) -> None:
    """Record ``decision`` as the run's ``Halt``: the agent's own stop, not the harness's."""
    recorder.record(
        Halt,
        reason=f"{by}: {decision.reason}"[:2000],
        hard=False,
        detail={**decision_detail(decision), **extra},
    )


class RunWatch:
    """Feeds ``monitor`` the model results and tool results appended to ``trace``, and
    records what it decides with ``recorder`` (the run's session). Subscribed by
    :meth:`HaltMonitor.for_run`; ``close()`` unsubscribes."""

    def __init__(self, monitor: HaltMonitor, trace: Any, recorder: Any) -> None:
        self.monitor = monitor
        self.recorder = recorder
        self.decision = HaltDecision(False, 0.0)
        self.halted: HaltDecision | None = None
        self._last_t: float | None = None
        # each tool call's arguments until its result arrives (the same call failing again
        # is a streak; another call failing is not)
        self._args: dict[tuple[str, str, int], Any] = {}
        self._unsubscribe = trace.subscribe(self)

    def __call__(self, event: Event) -> None:
        if isinstance(event, ToolCall):
            self._args[(event.channel, event.tool, event.index)] = event.args
            return
        if isinstance(event, ModelResult):
            tool = f"model:{event.model}"
            if event.ok:  # the model works again: its earlier failures are no streak
                decision = self._observe(event, event.output, tokens_used=event.tokens, worked=tool)
            else:  # a failed model call says nothing: its error is a failure, not an answer
                failure = event.message or event.error_type
                decision = self._observe(event, "", tool=tool, ok=False, error=failure)
        elif isinstance(event, ToolResult):
            error = None if event.ok else (event.message or event.error_type or event.status)
            text = safe_str(event.output, _OUTPUT) if event.ok else ""
            args = self._args.pop((event.channel, event.tool, event.index), None)
            decision = self._observe(
                event, text, tool=event.tool, ok=event.ok, error=error, args=args
            )
        else:
            return
        self.decision = decision
        for signal in decision.signals:
            if signal.strike:
                self.recorder.record(
                    Detection,
                    detector=DETECTOR,
                    kind=signal.heuristic,
                    detail={"strikes": signal.strikes, "score": signal.score,
                            "reason": signal.reason, "monitor_step": decision.step},
                )  # fmt: skip
        if decision.halt and self.halted is None:
            self.halted = decision
            if self.monitor.responder is not None:
                return  # its responder answers the decision, and records a stop it decides
            record_halt(self.recorder, decision, "halt monitor")

    def _observe(self, event: Event, output: Any, **step: Any) -> HaltDecision:
        seconds = 0.0 if self._last_t is None else max(0.0, event.t - self._last_t)
        self._last_t = event.t
        return self.monitor.observe(output, seconds=seconds, **step)

    def close(self) -> None:
        """Stop reading the trace."""
        self._unsubscribe()
