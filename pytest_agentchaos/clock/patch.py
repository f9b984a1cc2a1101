"""Make a VirtualClock the time that the code under test sees.

``install`` freezes ``time.time``/``monotonic``/``perf_counter``/``datetime.now`` with
freezegun (keeping the asyncio event loop on the real clock so loops still run) and, opt-in,
replaces ``time.sleep`` and ``asyncio.sleep`` with virtual ones. ``uninstall`` undoes all of it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import sys
import time
from collections.abc import Callable
from typing import Any, SupportsIndex

from ..patching import Patches
from ..runtime import is_runtime
from .clock import VirtualClock

#: Modules whose clocks stay real: pytest's own timing (``--durations``, report times).
#: freezegun also answers real time to any call with such a module in its last few frames,
#: so this must name only modules that never call into the code under test.
_LEAVE_ALONE = ("_pytest.timing",)
#: Where frozen wall time starts: fixed, so runs are identical whatever day they run.
DEFAULT_EPOCH = _dt.datetime(2025, 1, 1, tzinfo=_dt.timezone.utc)


class ClockInstallation:
    """Undo handle returned by :func:`install`; :meth:`uninstall` is idempotent."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self._undo: list[Callable[[], None]] = []

    def _push(self, undo: Callable[[], None]) -> None:
        self._undo.append(undo)

    def uninstall(self) -> None:
        """Undo everything :func:`install` did, most recent first."""
        while self._undo:
            self._undo.pop()()

    @property
    def active(self) -> bool:
        """Whether anything is still installed (not yet uninstalled)."""
        return bool(self._undo)


def install(
    clock: VirtualClock,
    *,
    freeze: bool = True,
    patch_sleep: bool = False,
    epoch: _dt.datetime = DEFAULT_EPOCH,
) -> ClockInstallation:
    """Drive global time from ``clock`` until the returned handle is uninstalled."""
    handle = ClockInstallation(clock)
    try:
        if freeze:
            _freeze(handle, clock, epoch)
        if patch_sleep:
            _patch_sleep(handle, clock)
    except BaseException:
        handle.uninstall()
        raise
    return handle


def _freeze(handle: ClockInstallation, clock: VirtualClock, epoch: _dt.datetime) -> None:
    from freezegun import freeze_time

    from .module_scan import dict_scan

    at = epoch + _dt.timedelta(seconds=clock.now())
    for attempt in (1, 2):
        freezer = freeze_time(at, real_asyncio=True, ignore=list(_LEAVE_ALONE))
        try:
            with dict_scan():
                factory = freezer.start()
            break
        except BaseException as exc:
            # freezegun froze the time module before the step that failed (its scan of every
            # loaded module, which a module's own attribute hook or a finaliser run by the
            # garbage collector mid-scan can break): undo that, or time stays frozen for the
            # rest of the process; then try once more, as the failure is rarely the same twice
            _undo_partial_start(freezer)
            if attempt == 2 or not isinstance(exc, Exception):
                raise
    _keep_schedulers_real()
    _teach_pydantic()

    def tick(seconds: float) -> None:
        factory.tick(_dt.timedelta(seconds=seconds))

    clock.add_listener(tick)
    handle._push(freezer.stop)
    handle._push(lambda: clock.remove_listener(tick))


def _undo_partial_start(freezer: Any) -> None:
    """Stop a freezer whose ``start()`` raised part way (the time module already patched)."""
    from freezegun import api

    if api.freeze_factories:  # start() pushes its factory first: it is the last one
        # what start() left is undone as far as stop() can
        with contextlib.suppress(Exception):
            freezer.stop()


def _teach_pydantic() -> None:
    """Let pydantic build schemas for freezegun's ``FakeDate`` / ``FakeDatetime`` (what
    ``datetime.date`` / ``datetime.datetime`` are while time is frozen) as for the real types:
    otherwise any model, ``TypeAdapter`` or framework tool with a date field built during the
    run fails. A classmethod on freezegun's own classes, harmless when frozen time ends."""
    from freezegun import api

    for fake, real in ((api.FakeDate, api.real_date), (api.FakeDatetime, api.real_datetime)):
        if "__get_pydantic_core_schema__" not in vars(fake):
            fake.__get_pydantic_core_schema__ = classmethod(  # type: ignore[attr-defined]
                lambda cls, source, handler, _real=real: handler.generate_schema(_real)
            )


#: Event-loop clocks bound by name at import that must stay real under frozen time: a
#: scheduler reading frozen time never reaches its next deadline (trio would hang in
#: ``trio.sleep``). (asyncio's loops are kept real by freezegun's ``real_asyncio``.)
_SCHEDULER_CLOCKS = (("trio._core._run", "perf_counter"),)


def _keep_schedulers_real() -> None:
    """Give the schedulers of :data:`_SCHEDULER_CLOCKS` the real clock freezegun rebound
    (freezegun puts the real one back again as it stops: nothing to undo)."""
    from freezegun import api

    real = {"perf_counter": api.real_perf_counter, "monotonic": api.real_monotonic}
    for module_name, attr in _SCHEDULER_CLOCKS:
        module = sys.modules.get(module_name)
        if module is not None and attr in vars(module) and vars(module)[attr] is not real[attr]:
            setattr(module, attr, real[attr])


def _patch_sleep(handle: ClockInstallation, clock: VirtualClock) -> None:
    import asyncio

    real_sleep = time.sleep
    real_async_sleep = asyncio.sleep

    def virtual_sleep(seconds: float | SupportsIndex) -> None:
        __tracebackhide__ = True
        clock.advance(seconds, where="time.sleep(): seconds")  # type: ignore[arg-type]

    async def virtual_async_sleep(delay: float, result: Any = None) -> Any:
        __tracebackhide__ = True
        await clock.asyncio_sleep(delay)
        return result

    # Like freezegun does for time(), rebind every module-level name bound to the real
    # functions, so `from time import sleep` in agent code is virtual too.
    patches = Patches()
    fakes: dict[int, tuple[Any, Any]] = {id(virtual_sleep): (virtual_sleep, real_sleep)}
    fakes[id(virtual_async_sleep)] = (virtual_async_sleep, real_async_sleep)
    handle._push(lambda: _undo_sleep(patches, fakes))
    patches.set(time, "sleep", virtual_sleep)
    patches.set(asyncio, "sleep", virtual_async_sleep)
    for name, module in list(sys.modules.items()):
        if module is None or module is time or module is asyncio:
            continue
        if is_runtime(name):  # the runtime's own waits stay real: only the agent's are virtual
            continue
        try:
            attrs = vars(module)
        except TypeError:
            continue
        for attr, value in list(attrs.items()):
            if value is real_sleep:
                patches.set(module, attr, virtual_sleep)
            elif value is real_async_sleep:
                patches.set(module, attr, virtual_async_sleep)

    # asyncio waits go through event loops, which now keep time on the virtual clock.
    from .aio import VirtualLoops

    loops = VirtualLoops(clock)
    loops.install()
    clock.loops = loops

    def release() -> None:
        clock.loops = None
        loops.uninstall()

    handle._push(release)


def _undo_sleep(patches: Patches, fakes: dict[int, tuple[Any, Any]]) -> None:
    """Put the real sleeps back. Only names that still hold ours: a fixture that replaced one
    since (``monkeypatch``) puts ours back when it is torn down, and
    :func:`~pytest_agentchaos.patching.sweep` restores it then."""
    patches.undo()
    # Modules first imported while sleep was virtual bound the virtual functions by name
    # (`from time import sleep`): give them the real ones back too.
    for module in list(sys.modules.values()):
        try:
            attrs = vars(module)
        except TypeError:
            continue
        for attr, value in list(attrs.items()):
            fake = fakes.get(id(value))
            if fake is not None and fake[0] is value:
                setattr(module, attr, fake[1])
