"""Virtual time for asyncio event loops.

While installed, every event loop reads its time from a :class:`VirtualClock`, and when it
has nothing ready to run it jumps the clock to its next timer instead of waiting. So
concurrent waits overlap as they would in real time (ten tasks each sleeping 10 s finish at
t+10, not t+100), ``asyncio.wait_for`` times out on virtual time, and none of it costs wall
time. Like freezegun's ``real_asyncio``, this patches the event loop class's ``time``; a loop
switches to virtual time on its first reading, so its timers are on one timeline.

Only selector-based loops (the default on every platform but Windows) can jump ahead; other
loops keep real time, and waits on them fall back to advancing the clock per wait.
"""

from __future__ import annotations

import asyncio
import logging
import math
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..patching import Patches

if TYPE_CHECKING:
    from .clock import VirtualClock

log = logging.getLogger(__name__)

#: A short real wait before jumping to the next timer, so results that threads (e.g.
#: ``run_in_executor``) are about to deliver arrive before a virtual timeout fires.
IDLE_GRACE = 0.0005
#: How long (real seconds) the loop waits for work handed to worker threads before it jumps
#: anyway (a thread blocked on something that never comes, say).
BUSY_LIMIT = 1.0


def _threads_busy(loop_thread: int | None) -> bool:
    """Whether work handed to a worker thread is still pending: a call ``anyio.to_thread``
    gave a worker that has not reported back, or a ``run_in_executor`` call queued or running.
    A sync tool in a worker thread is compute, which takes no virtual time: the loop must not
    jump to a deadline while it runs (on a loaded machine it can take milliseconds)."""
    frames: dict[int, Any] | None = None
    for thread in threading.enumerate():
        if thread.ident == loop_thread or not thread.is_alive():
            continue
        idle = getattr(thread, "idle_workers", None)
        if type(thread).__name__ == "WorkerThread" and idle is not None:  # anyio's
            if not getattr(thread, "stopping", False) and thread not in idle:
                return True
            continue
        args: Any = getattr(thread, "_args", ())
        if not thread.name.startswith(("asyncio_", "ThreadPoolExecutor-")) or len(args) < 2:
            continue
        queue = args[1]  # concurrent.futures' worker: (executor ref, work queue, ...)
        if hasattr(queue, "qsize") and queue.qsize():
            return True
        if frames is None:
            frames = sys._current_frames()
        frame = frames.get(thread.ident or -1)
        if frame is not None and (
            frame.f_code.co_name != "_worker"  # running an item
            # taken from the queue and not run yet: a loaded machine can pause the worker
            # between its ``get`` and ``work_item.run()``, its frame still ``_worker``
            or frame.f_locals.get("work_item") is not None
        ):
            return True
    return False


def running_trio() -> Any:
    """The ``trio`` module when the calling code runs under trio (or anyio on trio), not
    under an asyncio event loop; else ``None``. A wait must await what the running loop
    understands: asyncio's ``sleep`` yields what trio refuses, and the reverse."""
    trio = sys.modules.get("trio")
    if trio is None:
        return None
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        return None
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        return None
    return trio


def _snap(now: float, timeout: float) -> float:
    """``now + timeout`` on the microsecond grid, rounded up (never short of the timer).

    Loop times carry a large real-time offset, so ``when - time()`` picks up float noise:
    a 7200 s sleep would otherwise end at 7199.999999999999.
    """
    target = now + timeout
    snapped = math.ceil(target * 1e6 - 1e-3) / 1e6
    return snapped if snapped > now else target


class VirtualLoops:
    """Puts the event loops of this process on ``clock`` until :meth:`uninstall`."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        # id(loop) -> (loop, offset or None when the loop cannot be virtual, undo)
        self._loops: dict[
            int, tuple[asyncio.AbstractEventLoop, float | None, Callable[[], None]]
        ] = {}
        probe = asyncio.new_event_loop()  # the loop class in use, found as freezegun does
        probe.close()
        self._cls: Any = type(probe)
        self._real_time: Callable[[Any], float] = self._cls.time
        self._installed = False
        self._patches = Patches()

    def install(self) -> None:
        """Patch the loop class's ``time``: a loop goes virtual on its first reading, if it can."""
        loops = self

        def time(loop: asyncio.AbstractEventLoop) -> float:
            offset = loops._offset(loop)
            return loops._real_time(loop) if offset is None else offset + loops.clock.now()

        self._patches.set(self._cls, "time", time)
        self._installed = True

    def uninstall(self) -> None:
        """Give the loop class its real ``time`` back, and each virtual loop its real selector."""
        if self._installed:
            self._patches.undo()  # unless replaced since: see patching
            self._installed = False
        for _loop, _offset, undo in self._loops.values():
            undo()
        self._loops.clear()

    def is_virtual(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether ``loop`` runs on the virtual clock (virtualising it if it can be)."""
        return self._installed and self._offset(loop) is not None

    def _offset(self, loop: asyncio.AbstractEventLoop) -> float | None:
        entry = self._loops.get(id(loop))
        if entry is None or entry[0] is not loop:
            entry = self._virtualize(loop)
            self._loops[id(loop)] = entry
        return entry[1]

    def _virtualize(
        self, loop: asyncio.AbstractEventLoop
    ) -> tuple[asyncio.AbstractEventLoop, float | None, Callable[[], None]]:
        selector: Any = getattr(loop, "_selector", None)
        if selector is None or not callable(getattr(selector, "select", None)):
            log.debug("%r keeps real time: not a selector event loop", loop)
            return loop, None, lambda: None
        clock = self.clock
        real_select = selector.select

        def select(timeout: float | None = None) -> Any:
            ready = real_select(0)
            if ready or timeout == 0:
                return ready
            if timeout is None:  # no timer pending: only I/O can wake the loop, so wait for it
                return real_select(None)
            ready = real_select(min(timeout, IDLE_GRACE))
            waited, me = 0.0, threading.get_ident()
            while not ready and waited < BUSY_LIMIT and _threads_busy(me):
                ready = real_select(IDLE_GRACE)  # a worker thread's result comes first
                waited += IDLE_GRACE
            if not ready:
                # Jump to the next timer. A hard halt (max_seconds) raised here stops the loop.
                clock.advance_to(_snap(clock.now(), timeout))
            return ready

        selector.select = select

        def undo() -> None:
            if getattr(selector, "select", None) is select:
                selector.select = real_select

        # Continuous: the loop's time does not jump when it switches to virtual time.
        return loop, self._real_time(loop) - clock.now(), undo
