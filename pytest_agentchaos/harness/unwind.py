"""Ending an agent that swallows hard halts: raise the halt again on every line it runs.

An agent that catches even ``BaseException`` (``while True: try: tool() except BaseException:
pass``) is not stopped by raising harder. Once it has shown that it swallows (it called again
after a hard halt), the :class:`Unwinder` arms a line tracer on the agent's frames of that
thread's stack: the first of them to run a line again is the one that caught the halt (the
first line of its ``except`` block), and there the tracer raises
:class:`~pytest_agentchaos.errors.HaltSwallowed`, which leaves that block. A raise from a trace
function switches tracing off (CPython's rule), so a profile hook switches it back on for the
caller each time a frame returns: as the halt climbs frame by frame, every ``except`` or
``finally`` of the agent that would hold it raises it again, until it reaches code that is not
the agent's (pytest, the event loop, the thread's bootstrap), where nothing is raised.

Only frames already on the stack are traced, never frames started later (a garbage collector
callback, pytest's own calls into the standard library): they cannot be holding the halt.
"The agent's code" is every frame whose module is not part of the runtime
(:mod:`pytest_agentchaos.runtime`).
The unwinder costs nothing until armed; once the run ends, every thread it armed drops its
hooks at its next return.

One pattern it cannot end: a frame that catches the halt twice in nested ``try`` blocks of the
same function and loops. The watchdog on real time ends that one.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import PurePath
from types import FrameType
from typing import Any

from ..errors import HaltSwallowed, HardHalt
from ..runtime import RUNTIME, is_runtime

__all__ = ["Unwinder", "caller_outside_runtime", "is_agent_frame"]

_RUNTIME_DIRS = frozenset(RUNTIME)


def is_agent_frame(frame: FrameType) -> bool:
    """Whether ``frame`` runs the agent's (or the test's) code, not the runtime's."""
    name = frame.f_globals.get("__name__")
    if not isinstance(name, str):
        return True
    if name == "__main__":  # `python -m pytest`: the module's real name is in its spec
        spec = frame.f_globals.get("__spec__")
        name = getattr(spec, "name", None) or name
    if is_runtime(name):
        return False
    # Code run under another module name (execnet runs xdist's worker as `__channelexec__`).
    parent = PurePath(frame.f_code.co_filename).parent
    return not any(part in _RUNTIME_DIRS for part in parent.parts[-2:])


TraceFunction = Callable[[FrameType, str, Any], Any]


def caller_outside_runtime(frame: FrameType | None) -> FrameType | None:
    """The first frame from ``frame`` up that is not the runtime's: the code that called into
    the harness (a test using it directly), or pytest's launcher under the plugin."""
    while frame is not None and not is_agent_frame(frame):
        frame = frame.f_back
    return frame


class Unwinder:
    """Raises ``HaltSwallowed`` into agent code of the threads it is armed in.

    ``done()`` says when to stop (the run has ended): every armed thread then drops its
    hooks at its next call or line.
    """

    def __init__(self, done: Callable[[], bool], owner: int | None = None) -> None:
        self._done = done
        #: ``id`` of the frame that owns the run (the code that entered the harness): it and
        #: the frames above it are the harness's user, never unwound.
        self._owner = owner
        self._halt: HardHalt | None = None
        self._local = threading.local()
        self._lock = threading.Lock()
        self.armed_threads: set[int] = set()
        # Bound once: hooks are compared by identity (a bound method is a new object per access).
        self._trace_hook: TraceFunction = self._trace
        self._line_hook: TraceFunction = self._line
        self._profile_hook: Callable[[FrameType, str, Any], None] = self._profile

    @property
    def halt(self) -> HardHalt | None:
        """The swallowed halt that first armed the unwinder (``None`` until armed)."""
        return self._halt

    def runs_agent_code(self, frame: FrameType | None) -> bool:
        """Whether the agent's code is on the stack from ``frame`` up to the run's owner: only
        then may a halt be raised there (not into pytest's own setup or teardown)."""
        while frame is not None and id(frame) != self._owner:
            if is_agent_frame(frame):
                return True
            frame = frame.f_back
        return False

    def arm(self, halt: HardHalt) -> None:
        """Start unwinding the calling thread's agent code (idempotent)."""
        if self._done():
            return
        with self._lock:
            if self._halt is None:
                self._halt = halt
            self.armed_threads.add(threading.get_ident())
        local = self._local
        if not getattr(local, "armed", False):
            local.armed = True
            local.previous = (sys.gettrace(), sys.getprofile())
        self._rearm(sys._getframe(1))

    def disarm(self) -> None:
        """Stop unwinding the calling thread and put back its previous hooks."""
        local = self._local
        if not getattr(local, "armed", False):
            return
        local.armed = False
        previous_trace, previous_profile = local.previous
        local.previous = (None, None)
        sys.setprofile(previous_profile)
        sys.settrace(previous_trace)
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            if frame.f_trace is self._line_hook:
                frame.f_trace = None
            frame = frame.f_back
        with self._lock:
            self.armed_threads.discard(threading.get_ident())

    def _rearm(self, frame: FrameType | None) -> None:
        while frame is not None and id(frame) != self._owner:
            if is_agent_frame(frame):
                frame.f_trace = self._line_hook
            frame = frame.f_back
        if sys.gettrace() is not self._trace_hook:
            sys.settrace(self._trace_hook)
        if sys.getprofile() is not self._profile_hook:
            sys.setprofile(self._profile_hook)

    def _trace(self, frame: FrameType, event: str, arg: Any) -> None:
        """The thread's trace function: it only switches tracing on; new frames are not
        traced (see the module doc)."""
        return None

    def _line(self, frame: FrameType, event: str, arg: Any) -> TraceFunction | None:
        """The local tracer of the agent's frames on the stack."""
        if self._done():
            return None
        if event == "line":
            halt = self._halt
            assert halt is not None
            raise HaltSwallowed(halt)
        return self._line_hook

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if self._done():
            self.disarm()
            return
        if event == "return" and sys.gettrace() is not self._trace_hook:
            # A raise from the tracer switched tracing off: switch it back on for the frames
            # the halt climbs into.
            self._rearm(frame.f_back)
