"""What a chaos run's fault plan does to the rebirth runner: a ``crash`` before a step, a
``corrupt_snapshot`` before a load.

The runner asks the run's session (see ``ChaosSession.inject``) on the ``step`` and
``snapshot`` channels; outside a chaos run it has no session and nothing here is called.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..inject.call import CallState
from ..inject.errors import failure_exception
from .envelope import FORMAT_VERSION, checked_from

__all__ = ["FaultSource", "corrupt_before_load", "crash_before_step"]


class FaultSource(Protocol):
    """What the runner needs of a chaos run's session: its fault decisions on the runner's
    channels, and a way to stop the run with a hard halt that stays raised."""

    def inject(self, channel: str, target: str, args: Any = None) -> CallState | None: ...

    def stop(self, halt: Any, **detail: Any) -> Any: ...


def crash_before_step(session: FaultSource, target: str, step: int) -> None:
    """Raise ``InjectedCrash`` when the plan crashes this step of runner ``target``."""
    state = session.inject("step", target, {"step": step})
    if state is not None and state.effect is not None and state.effect.failure is not None:
        raise failure_exception(state.effect.failure, state.fault)


def corrupt_before_load(session: FaultSource, target: str, store: Any) -> None:
    """Damage the newest snapshot of ``store`` in place when the plan says so for this load.

    Only stores that expose their raw files (``SnapshotStore``, ``MemorySnapshotStore``) can
    be damaged; for any other store the plan is not asked."""
    newest = getattr(store, "newest_raw", None)
    overwrite = getattr(store, "overwrite_raw", None)
    if not callable(newest) or not callable(overwrite):
        return
    found = newest()
    args: dict[str, Any] = {}
    if found is not None:
        info, data = found
        args = {
            "file": info.file,
            "bytes": len(data),
            "checked_from": checked_from(data),
            "version": FORMAT_VERSION,
        }
    state = session.inject("snapshot", target, args)
    if state is None or found is None or state.effect is None:
        return
    transform = state.effect.transform
    if transform is not None:
        overwrite(found[0], transform(found[1]))
