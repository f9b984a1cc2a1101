"""The harness's own loop observer: watches a run's trace, whatever the agent does.

Subscribed to a :class:`~pytest_agentchaos.trace.Trace`, it reduces each completed tool,
HTTP or model call (and each labelled step, as a node visit) to an action key, runs the
:class:`LoopDetector`, and records two kinds of ``Detection`` events: ``loop`` when a loop
episode begins and ``loop_broken`` when the repetition stops. ``must_escape`` reads them.
"""

from __future__ import annotations

from typing import Any

from ..trace.events import Detection, Event, ModelCall, ModelResult, Step, ToolCall, ToolResult
from .history import ActionKey, action_key, outcome_of
from .loops import Loop, LoopDetector, LoopPolicy
from .recorder import Recorder

DETECTOR = "loop_observer"


class LoopObserver:
    """Call it with every new trace event (``trace.subscribe(observer)``)."""

    def __init__(self, recorder: Recorder, policy: LoopPolicy | None = None) -> None:
        self.recorder = recorder
        self.detector = LoopDetector(policy)
        self._calls: dict[tuple[str, str, int], Any] = {}
        self._open: dict[str, dict[str, Any]] = {}  # loop kind -> the open episode
        self._episodes = 0

    def __call__(self, event: Event) -> None:
        key: ActionKey | None = None
        node: str | None = None
        if isinstance(event, ToolCall):
            self._calls[(event.channel, event.tool, event.index)] = event.args
        elif isinstance(event, ModelCall):
            self._calls[("model", event.model, event.index)] = event.input
        elif isinstance(event, ToolResult):
            args = self._calls.pop((event.channel, event.tool, event.index), None)
            outcome = outcome_of(event.ok, event.error_type, event.status)
            key = action_key(tool=event.tool, args=args, outcome=outcome, result=event.output)
        elif isinstance(event, ModelResult):
            args = self._calls.pop(("model", event.model, event.index), None)
            outcome = outcome_of(event.ok, event.error_type)
            key = action_key(tool=event.model, args=args, outcome=outcome, result=event.output)
        elif isinstance(event, Step) and event.label:
            node = event.label
            key = ActionKey(node=node)
        if key is not None:
            self._observe(key, event, node)

    def _observe(self, key: ActionKey, event: Event, node: str | None) -> None:
        alarms = {
            loop.kind: loop for loop in self.detector.observe(key, event.step, event.t, node=node)
        }
        for kind in list(self._open):
            if kind not in alarms:
                self._close(kind, event.step)
        for kind, loop in alarms.items():
            if kind not in self._open or loop.new:
                if kind in self._open:
                    self._close(kind, event.step)
                self._start(loop, event.step)

    def _start(self, loop: Loop, step: int) -> None:
        self._episodes += 1
        episode = {"episode": self._episodes, "loop_kind": loop.kind, "detected_step": step}
        episode.update(loop.to_detail())
        self._open[loop.kind] = episode
        self._record("loop", episode)

    def _close(self, kind: str, step: int) -> None:
        episode = self._open.pop(kind)
        self._record(
            "loop_broken",
            {
                "episode": episode["episode"],
                "loop_kind": kind,
                "detected_step": episode["detected_step"],
                "broken_step": step,
            },
        )

    def _record(self, kind: str, detail: dict[str, Any]) -> None:
        self.recorder.record(Detection, detector=DETECTOR, kind=kind, detail=dict(detail))

    @property
    def open_loops(self) -> list[dict[str, Any]]:
        """Episodes still repeating now."""
        return list(self._open.values())
