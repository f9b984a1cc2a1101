"""The harness's loop detection over a trace, online (``LoopObserver``) or offline
(``detect_loops``): the same code, so both give the same detections on the same events.

Each completed tool, HTTP or model call, each labelled step (a node visit) and each reported
state becomes an action for the :class:`~.loops.LoopDetector`, keyed by a
:class:`~.keys.Keyer`. The observer writes ``Detection`` events (detector ``loop_observer``):
``loop`` when a loop episode begins, ``loop_broken`` when the repetition stops (or the run ends
after the agent stopped repeating), and ``key_error`` once for a tool whose key function
raised. Each is stamped with the step and time of the event that raised it, and its trace
position (``at_event``). ``must_escape`` reads them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..trace.events import (
    Detection,
    Event,
    ModelCall,
    ModelResult,
    RunEnded,
    Step,
    ToolCall,
    ToolResult,
)
from ..trace.trace import Trace
from .history import ActionKey
from .keys import Keyer
from .loops import Loop, LoopDetector, LoopPolicy

__all__ = ["DETECTOR", "LoopObserver", "detect_loops"]

DETECTOR = "loop_observer"


class LoopObserver:
    """Call it with every event of a run, in order (``trace.subscribe(observer)``, or
    :meth:`watch`); it raises ``Detection`` events into ``sink`` and keeps them in
    :attr:`detections`.

    ``start`` is the trace position of the first event it will see, so ``at_event`` points
    into the trace it watches.
    """

    def __init__(
        self,
        policy: LoopPolicy | None = None,
        *,
        sink: Callable[[Event], Any] | None = None,
        start: int = 0,
    ) -> None:
        self.detector = LoopDetector(policy)
        self.keyer = Keyer(self.detector.policy)
        self.sink = sink
        self.detections: list[Detection] = []
        self._position = start
        self._calls: dict[tuple[str, str, int], Any] = {}
        self._prompts: dict[tuple[str, int], Any] = {}
        self._open: dict[str, Any] | None = None  # the episode that holds now
        self._episodes = 0
        self._key_errors = 0

    @classmethod
    def watch(cls, trace: Trace, policy: LoopPolicy | None = None) -> tuple[LoopObserver, Any]:
        """An observer subscribed to ``trace`` that writes its detections into it; returns it
        and the function that unsubscribes it."""
        observer = cls(policy, sink=trace.append, start=len(trace))
        return observer, trace.subscribe(observer)

    def __call__(self, event: Event) -> None:
        position = self._position
        self._position += 1  # first: a detection written from here is the next event
        key: ActionKey | None = None
        node: str | None = None
        state: Any = None
        if isinstance(event, ToolCall):
            self._calls[(event.channel, event.tool, event.index)] = event.args
        elif isinstance(event, ToolResult):
            args = self._calls.pop((event.channel, event.tool, event.index), None)
            key = self.keyer.tool(
                event.tool,
                args,
                ok=event.ok,
                result=event.output,
                error_type=event.error_type,
                message=event.message,
                status=event.status,
                channel=event.channel,
            )
        elif isinstance(event, ModelCall):
            # kept for its result: the reply is keyed with the newest turn it answers
            self._prompts[(event.model, event.index)] = event.input
        elif isinstance(event, ModelResult):
            key = self.keyer.model(
                event.model,
                ok=event.ok,
                output=event.output,
                error_type=event.error_type,
                message=event.message,
                input=self._prompts.pop((event.model, event.index), None),
            )
        elif isinstance(event, Step):
            if event.state is not None:
                state = self.keyer.state(event.state, event.label)
            if event.label:  # a visit: the node and the state there are the action
                node = event.label
                key = ActionKey(node=node, digest=state)
            elif state is not None:
                key = ActionKey(digest=state)
        elif isinstance(event, RunEnded):
            self.detector.finish()
            if self._open is not None and not self.detector.holding:
                self._close(event, position)
            return
        if key is None:
            return
        alarms = self.detector.observe(key, event.step, event.t, state=state, node=node)
        if len(self.keyer.failures) > self._key_errors:
            for tool, error in self.keyer.failures[self._key_errors :]:
                self._record("key_error", {"tool": tool, "error": error}, event, position)
            self._key_errors = len(self.keyer.failures)
        self._update({loop.kind: loop for loop in alarms}, event, position)

    def _update(self, alarms: Mapping[str, Loop], event: Event, position: int) -> None:
        # one episode while any rule holds: the rules are views of one behaviour (a ring of
        # nodes whose tool call keeps failing is a repeat, a node loop and a state loop)
        if self._open is None:
            if alarms:
                self._start(next(iter(alarms.values())), event, position)
        elif not alarms:
            self._close(event, position)

    def _start(self, loop: Loop, event: Event, position: int) -> None:
        self._episodes += 1
        episode = {"episode": self._episodes, "loop_kind": loop.kind, "detected_step": event.step}
        episode.update(loop.to_detail())
        self._open = episode
        self._record("loop", episode, event, position)

    def _close(self, event: Event, position: int) -> None:
        episode, self._open = self._open, None
        assert episode is not None
        detail = {
            "episode": episode["episode"],
            "loop_kind": episode["loop_kind"],
            "detected_step": episode["detected_step"],
            "broken_step": event.step,
        }
        self._record("loop_broken", detail, event, position)

    def _record(self, kind: str, detail: dict[str, Any], event: Event, position: int) -> None:
        detection = Detection(
            event.step, event.t, detector=DETECTOR, kind=kind, detail=dict(detail),
            at_event=position,
        )  # fmt: skip
        self.detections.append(detection)
        if self.sink is not None:
            self.sink(detection)

    @property
    def open_loops(self) -> list[dict[str, Any]]:
        """The episode still repeating now (at most one)."""
        return [] if self._open is None else [self._open]


def detect_loops(
    events: Trace | Iterable[Event] | Mapping[str, Any] | str | os.PathLike[str],
    policy: LoopPolicy | None = None,
) -> list[Detection]:
    """Run the harness's loop detection over a recorded run: a :class:`Trace`, any iterable of
    events, a saved trace's data (``Trace.to_dict()``) or the path of a saved trace file.

    Returns the ``Detection`` events the harness's observer would have raised, each with
    ``at_event``, the position in ``events`` of the event that raised it. Detections already
    in the input (a trace saved from a chaos run) are skipped but keep their positions, so
    over a saved trace the result equals the run's own detections.
    """
    if isinstance(events, (str, os.PathLike)):
        events = Trace.from_json(Path(events).read_bytes())
    elif isinstance(events, Mapping):
        events = Trace.from_dict(dict(events))
    observer = LoopObserver(policy)
    for event in events:
        observer(event)  # a detection in the input is no action: counted, not re-read
    return observer.detections
