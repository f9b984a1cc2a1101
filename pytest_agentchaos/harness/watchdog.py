"""The last line of defence: a watchdog on real time for agents that never stop.

Virtual time cannot end an agent that spins without calling a tool, nor one blocked forever
(a main thread waiting on a queue whose worker died). When a run exceeds its wall timeout the
:class:`Watchdog` (a thread of its own, on the real clock):

1. records the agent's thread stacks and halts the run with
   :class:`~pytest_agentchaos.errors.WallTimeout`, so every further call raises;
2. raises the halt into the test's thread with a signal (which also wakes a blocked wait) and
   into the agent's other threads as an asynchronous exception; either way the
   :class:`~.unwind.Unwinder` is armed there, so ``except BaseException`` cannot hold it. It does
   so again every ``REPEAT`` seconds;
3. when nothing gentler worked within the grace period, does what pytest-timeout's thread
   method does: reports the stacks and ends the process (under pytest-xdist the controller
   reports the test as crashed and carries on with a new worker).
"""

from __future__ import annotations

import _thread
import contextlib
import functools
import math
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from types import FrameType
from typing import Any

from ..errors import HardHalt, WallTimeout
from ..inject.session import ChaosSession
from .unwind import Unwinder, is_agent_frame

__all__ = ["Watchdog", "format_stacks", "is_agent_thread", "is_library_thread"]

#: The signal that interrupts the test's thread (its handler raises the halt there).
SIGNAL = getattr(signal, "SIGUSR2", None)
#: Seconds between deliveries of the halt while the agent still runs.
REPEAT = 0.2
#: Exit status of the last resort (what pytest-timeout's thread method uses).
LAST_RESORT_EXIT = 1


def format_stacks(skip: set[int] | None = None, limit: int = 12) -> str:
    """Each thread's stack as the agent's frames (most recent call last), plus the frame it
    is blocked in when that is the runtime's (``queue.get``): pytest's frames are left out."""
    names = {t.ident: t.name for t in threading.enumerate()}
    parts: list[str] = []
    for ident, top in sys._current_frames().items():
        if skip and ident in skip:
            continue
        frames: list[FrameType] = []
        frame: FrameType | None = top
        while frame is not None:
            bootstrap = frame.f_code.co_filename.startswith("<")  # exec'd launcher code
            if frame is top or (is_agent_frame(frame) and not bootstrap):
                frames.append(frame)
            frame = frame.f_back
        if len(frames) == 1 and not is_agent_frame(top):
            continue  # a runtime thread (pytest-xdist's I/O, a pool's idle worker)
        frames = frames[:limit]
        frames.reverse()
        summary = traceback.StackSummary.extract(
            ((f, f.f_lineno) for f in frames), limit=limit, lookup_lines=True
        )
        parts.append(f"thread {names.get(ident, '?')}:\n{''.join(summary.format())}")
    return "\n".join(parts) or "(no thread runs agent code)"


def grace_for(timeout: float) -> float:
    """How long the gentle means get before the last resort (they take milliseconds; the
    floor is for a machine under load)."""
    return min(10.0, max(2.0, timeout / 5))


def is_agent_thread(thread: threading.Thread) -> bool:
    """A live thread that is not the harness's own (its watchdog) nor an event loop's default
    executor worker (created by the loop, shut down with it)."""
    return thread.is_alive() and not thread.name.startswith(("agentchaos-", "asyncio_"))


def is_library_thread(thread: threading.Thread) -> bool:
    """A thread an installed library runs for itself (a ``Thread`` subclass of its own, or a
    target function of its own, under site-packages), such as tqdm's monitor: no thread the
    agent started. (The watchdog still halts such threads: agent code may run in them.)"""
    run = type(thread).run
    code = getattr(thread, "_target", None) if run is threading.Thread.run else run
    func = getattr(code, "__func__", code)
    if (
        getattr(func, "__qualname__", None) in _STDLIB_WAITERS
        and getattr(func, "__module__", None) == "asyncio.unix_events"
    ):
        return True
    filename = getattr(getattr(func, "__code__", None), "co_filename", None)
    if not isinstance(filename, str):
        return False
    path = os.path.realpath(filename)
    return any(path.startswith(folder + os.sep) for folder in _library_dirs())


#: The standard library's own threads that run no agent code: asyncio's child watcher waits
#: for a subprocess to end (one thread per process an agent starts, e.g. a stdio MCP server)
#: and may outlive the test by the moment the process takes to be reaped.
_STDLIB_WAITERS = frozenset({"ThreadedChildWatcher._do_waitpid"})


@functools.cache
def _library_dirs() -> tuple[str, ...]:
    """Where installed distributions live (site-packages), resolved."""
    import site
    import sysconfig

    paths = sysconfig.get_paths()
    found = [paths.get("purelib"), paths.get("platlib"), *site.getsitepackages()]
    found.append(site.getusersitepackages())
    return tuple(sorted({os.path.realpath(p) for p in found if p}))


def _set_async(ident: int, cls: type[BaseException] | None) -> bool:
    """Make ``cls`` pending in thread ``ident`` (raised at its next bytecode boundary), or
    clear what is pending there (``None``): a pending exception that is never raised (its
    thread blocked in C) keeps every thread checking for it, and would hit the thread later."""
    try:
        import ctypes

        done = ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(ident), ctypes.py_object(cls) if cls is not None else None
        )
    except Exception:  # pragma: no cover - not CPython
        return False
    return bool(done == 1)


class Watchdog:
    """Watches one run on real time; :meth:`start` after the run is built, :meth:`stop` when
    the test body is over (whatever happened)."""

    def __init__(
        self,
        session: ChaosSession,
        unwinder: Unwinder,
        timeout: float,
        *,
        last_resort: Callable[[str], None] | None = None,
    ) -> None:
        self.session = session
        self.unwinder = unwinder
        self.timeout = timeout
        self.grace = grace_for(timeout)
        self.last_resort = last_resort or _write_stderr
        self.fired: WallTimeout | None = None
        self.stacks = ""
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._owner = threading.get_ident()
        self._baseline: set[int] = set()
        self._previous_handler: Any = None
        self._signal_installed = False
        self._pending: set[int] = set()  # threads an asynchronous halt was made pending in
        self._handler = self._on_signal  # bound once: restored only if still ours (identity)

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Start watching: the threads alive now are not the agent's; installs the signal
        handler (main thread only) and sets the process's timer for this run."""
        self._baseline = {t.ident for t in threading.enumerate() if t.ident is not None}
        self._install_signal()
        _TIMER.schedule(self, _now() + self.timeout)

    def stop(self) -> None:
        """The test body is over: stand down (idempotent)."""
        self._stop.set()  # first: a signal arriving now finds it set and does nothing
        _TIMER.cancel(self)
        with self._lock:  # then wait out a delivery in progress, and take back the rest
            self._clear_pending()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
        self._uninstall_signal()

    def _expired(self) -> None:
        """The timer says the run has overrun (in the timer's thread): act in a thread of
        its own, so the timer goes on serving other runs."""
        if self._stop.is_set():
            return
        self._thread = threading.Thread(target=self._watch, name="agentchaos-watchdog-fired",
                                        daemon=True)  # fmt: skip
        self._thread.start()

    def agent_threads(self) -> list[threading.Thread]:
        """Threads started since the run began that are still alive (a library's idle pool
        worker is one too: deliveries go only to those running the agent's code)."""
        return [
            t
            for t in threading.enumerate()
            if t.ident not in self._baseline and t is not self._thread and is_agent_thread(t)
        ]

    # -- delivery -------------------------------------------------------------------------

    def _install_signal(self) -> None:
        if SIGNAL is None or threading.current_thread() is not threading.main_thread():
            return
        try:
            if signal.getsignal(SIGNAL) not in (signal.SIG_DFL, None):
                return  # the user's own handler: leave it alone
            self._previous_handler = signal.signal(SIGNAL, self._handler)
            self._signal_installed = True
        except (ValueError, OSError):  # pragma: no cover - not the main interpreter
            pass

    def _uninstall_signal(self) -> None:
        if not self._signal_installed or threading.current_thread() is not threading.main_thread():
            return
        self._signal_installed = False
        try:
            if signal.getsignal(SIGNAL) is self._handler:  # type: ignore[arg-type]
                signal.signal(SIGNAL, self._previous_handler or signal.SIG_DFL)  # type: ignore[arg-type]
        except (ValueError, OSError):  # pragma: no cover
            pass

    def _on_signal(self, signum: int, frame: Any) -> None:
        halt = self.fired
        if halt is None or self._stop.is_set() or not self.unwinder.runs_agent_code(frame):
            return  # not the agent's code (pytest between phases): the next delivery will do
        self.unwinder.arm(halt)
        raise halt.again()

    def _clear_pending(self) -> None:
        for ident in self._pending:
            _set_async(ident, None)
        self._pending.clear()

    def _deliver(self, halt: HardHalt) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            self._clear_pending()
            frames = sys._current_frames()
            targets: list[int | None] = [self._owner] if not self._signal_installed else []
            targets += [t.ident for t in self.agent_threads() if t.ident not in (None, self._owner)]
            for ident in targets:
                if ident is None or not self.unwinder.runs_agent_code(frames.get(ident)):
                    continue
                if _set_async(ident, _async_halt(self.unwinder, halt)):
                    self._pending.add(ident)
            if self._signal_installed:
                signal.pthread_kill(self._owner, SIGNAL)  # type: ignore[arg-type]

    def _watch(self) -> None:
        if self._stop.is_set():
            return
        watchdog = {threading.get_ident()}
        self.stacks = format_stacks(skip=watchdog)
        threads = ", ".join(t.name for t in self.agent_threads()) or "none"
        halt = WallTimeout(
            f"the test ran {self.timeout:g}s of real time (chaos_wall_timeout) without "
            f"finishing: pytest-agentchaos stopped the agent (agent threads: {threads})",
            timeout=self.timeout,
        )
        self.fired = halt
        self.session.stop(halt, timeout=self.timeout, stacks=self.stacks)
        waited = 0.0
        while waited < self.grace:
            self._deliver(halt)
            if self._stop.wait(REPEAT):
                return
            waited += REPEAT
        if self._stop.is_set():
            return
        self.stacks = format_stacks(skip=watchdog)
        self.last_resort(
            "pytest-agentchaos: the agent could not be stopped: "
            f"{self.session.test_id} ran {self.timeout:g}s of real time (chaos_wall_timeout) "
            f"and ignored the halt for another {self.grace:g}s; ending the test process, as "
            "pytest-timeout's thread method does.\n"
            f"{halt.message}\n\nstacks:\n{self.stacks}"
        )
        os._exit(LAST_RESORT_EXIT)


#: In a tuple: frozen time rebinds module-level names bound to ``time.monotonic``.
_MONOTONIC = (time.monotonic,)


def _now() -> float:
    """Real monotonic seconds, also while a run freezes ``time.monotonic``."""
    clock_gettime = getattr(time, "clock_gettime", None)
    if clock_gettime is not None:
        return float(clock_gettime(time.CLOCK_MONOTONIC))
    return _MONOTONIC[0]()  # pragma: no cover - Windows


class _Timer:
    """One thread per process that waits for the earliest deadline of the runs being watched
    (a thread started and joined per run would cost more than a short test); a run that
    stops in time only drops its entry, and the timer wakes at deadlines alone.

    A bare ``_thread`` thread, unknown to :mod:`threading`: the test suite's own thread
    checks (``threading.active_count()``, ``enumerate()``) and the report's note of threads
    left running never see it.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._deadlines: dict[Watchdog, float] = {}
        self._waiting_until = math.inf
        self._running = False
        if hasattr(os, "register_at_fork"):  # a forked child has no timer thread
            os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._deadlines = {}
        self._waiting_until = math.inf
        self._running = False

    def schedule(self, watchdog: Watchdog, deadline: float) -> None:
        with self._cond:
            self._deadlines[watchdog] = deadline
            if not self._running:
                self._running = True
                _thread.start_new_thread(self._run, ())
            elif deadline < self._waiting_until:
                self._cond.notify()

    def cancel(self, watchdog: Watchdog) -> None:
        with self._cond:
            self._deadlines.pop(watchdog, None)

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    now = _now()
                    due = [w for w, d in self._deadlines.items() if d <= now]
                    if due:
                        for watchdog in due:
                            del self._deadlines[watchdog]
                        self._waiting_until = math.inf
                        break
                    deadline = min(self._deadlines.values(), default=math.inf)
                    self._waiting_until = deadline
                    self._cond.wait(None if deadline == math.inf else deadline - now)
            for watchdog in due:
                with contextlib.suppress(Exception):  # the timer must outlive any run
                    watchdog._expired()


_TIMER = _Timer()


def _async_halt(unwinder: Unwinder, halt: HardHalt) -> type[BaseException]:
    """An exception class for ``PyThreadState_SetAsyncExc``: the interpreter instantiates it
    in the target thread (where it is caught), so its ``__init__`` arms the unwinder there."""

    class AsyncWallTimeout(WallTimeout):
        def __init__(self, *args: Any) -> None:
            WallTimeout.__init__(self, halt.message, **halt.detail)
            unwinder.arm(halt)

    AsyncWallTimeout.__name__ = AsyncWallTimeout.__qualname__ = "WallTimeout"
    return AsyncWallTimeout


def _write_stderr(text: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, (text + "\n").encode("utf-8", "replace"))
