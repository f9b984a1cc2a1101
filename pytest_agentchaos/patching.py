"""Replacing names of shared modules and classes for the length of a run, and putting them
back whatever else patched the same names meanwhile.

A run patches process-wide names (``time.sleep``, ``socket.getaddrinfo``, ...). A fixture set
up before the run's (pytest's ``monkeypatch``) that replaces one of them during the test saw
*our* function as the value to restore: torn down after the run, it puts our function back. So
:meth:`Patches.undo` restores only the names that still hold ours and leaves the others
pending, and :func:`sweep` (run after the test's whole teardown, and before the next run
installs anything) restores a pending name once it holds our function again. A name that
holds neither ours nor the original stays someone else's.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["Patches", "pending", "sweep"]

#: The owner had no attribute of its own (a class inheriting it): restoring removes ours.
_ABSENT: Any = object()


class _Patch:
    __slots__ = ("name", "original", "ours", "owner")

    def __init__(self, owner: Any, name: str, original: Any, ours: Any) -> None:
        self.owner = owner
        self.name = name
        self.original = original
        self.ours = ours


_PENDING: list[_Patch] = []
_LOCK = threading.Lock()


def _own(owner: Any, name: str) -> Any:
    """The value ``owner`` itself holds for ``name`` (not one inherited by a class)."""
    space = getattr(owner, "__dict__", None)
    if space is not None:
        return space.get(name, _ABSENT)
    return getattr(owner, name, _ABSENT)  # pragma: no cover - modules and classes have one


def _restore(patch: _Patch) -> bool:
    """Put the original back if the name holds ours; whether nothing of ours is left there."""
    current = _own(patch.owner, patch.name)
    if current is patch.ours:
        if patch.original is _ABSENT:
            delattr(patch.owner, patch.name)
        else:
            setattr(patch.owner, patch.name, patch.original)
        return True
    return current is patch.original


class Patches:
    """The names one installation replaced, undone most recent first."""

    __slots__ = ("_done",)

    def __init__(self) -> None:
        self._done: list[_Patch] = []

    def set(self, owner: Any, name: str, value: Any) -> None:
        """Replace ``owner.name`` with ``value`` (remembering what it held)."""
        original = _own(owner, name)
        if original is _ABSENT and not isinstance(owner, type):
            original = getattr(owner, name, _ABSENT)
        setattr(owner, name, value)
        self._done.append(_Patch(owner, name, original, value))

    def undo(self) -> None:
        """Restore every name that still holds ours; the others wait for :func:`sweep`."""
        while self._done:
            patch = self._done.pop()
            if not _restore(patch):
                with _LOCK:
                    _PENDING.append(patch)

    def __bool__(self) -> bool:
        return bool(self._done)


def sweep() -> int:
    """Restore the pending names that hold our functions again (what a fixture torn down
    after the run put back); returns how many still hold someone else's."""
    if not _PENDING:
        return 0
    with _LOCK:
        _PENDING[:] = [p for p in _PENDING if not _restore(p)]
        return len(_PENDING)


def pending() -> list[str]:
    """The names still waiting to be restored, as ``owner.name``."""
    with _LOCK:
        return [f"{getattr(p.owner, '__name__', p.owner)!s}.{p.name}" for p in _PENDING]
