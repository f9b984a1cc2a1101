"""Snapshot stores: save an agent's state, and load the newest healthy one back.

:class:`SnapshotStore` keeps snapshots as JSON files in a directory (atomic, checksummed,
versioned; safe with several writer processes and across restarts);
:class:`MemorySnapshotStore` keeps the same files in memory. Both keep the newest ``keep``
snapshots plus every milestone, and ``load_latest`` skips, with a reason, every snapshot that
is damaged, marked bad or fails the caller's health check.
"""

from __future__ import annotations

import builtins
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..saferepr import safe_str, short
from .envelope import (
    BAD_SUFFIX,
    Damaged,
    Decoded,
    Name,
    canonical,
    decode,
    encode,
    parse_header,
    parse_name,
)
from .files import Directory, Files, Memory, TooLarge
from .state import SnapshotError, to_state

if TYPE_CHECKING:
    from ..clock.clock import Clock
    from ..escape.recorder import Recorder

__all__ = [
    "DEFAULT_MAX_BYTES",
    "HealthCheck",
    "LoadedSnapshot",
    "MemorySnapshotStore",
    "SkippedSnapshot",
    "SnapshotInfo",
    "SnapshotStore",
]

logger = logging.getLogger(__name__)

#: The largest snapshot a store writes or reads by default (256 MiB).
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
#: The longest label a snapshot may carry.
MAX_LABEL = 1000
#: How much of a file ``list()`` reads to show its header.
_HEAD_BYTES = 16384

#: ``health_check(state)``: true when a loaded state is fit to restore.
HealthCheck = Callable[[Any], object]


@dataclass(frozen=True, slots=True)
class SnapshotInfo:
    """One snapshot as a store lists it.

    ``id``, ``sequence``, ``step``, ``milestone`` and ``file`` come from the file name, so
    they are known for damaged files too; ``label`` and ``created`` come from the header and
    are ``None`` when it cannot be read. ``size`` is in bytes; ``path`` is ``None`` in
    memory; ``bad`` says it was marked bad.
    """

    id: str
    sequence: int
    step: int
    milestone: bool = False
    label: str | None = None
    created: float | None = None
    size: int = 0
    file: str = ""
    path: Path | None = None
    bad: bool = False


@dataclass(frozen=True, slots=True)
class SkippedSnapshot:
    """A snapshot ``load_latest`` passed over, and the short reason why."""

    info: SnapshotInfo
    reason: str


@dataclass(frozen=True, slots=True)
class LoadedSnapshot:
    """The state of a verified snapshot, what the snapshot is, and the newer snapshots
    skipped on the way to it.

    ``state`` is JSON data as ``to_state`` made it (rebuild objects with ``from_state``);
    dict keys come back sorted (the file holds canonical JSON) and tuples as lists.
    """

    state: Any
    info: SnapshotInfo
    skipped: tuple[SkippedSnapshot, ...] = ()


class _Store:
    """What both stores share: naming, the envelope, pruning, checking and skipping."""

    _files: Files

    def __init__(
        self, keep: int, recorder: Recorder | None, clock: Clock | None, max_bytes: int
    ) -> None:
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise ValueError(
                f"keep must be an int >= 1 (how many recent snapshots to keep), got {short(keep)}"
            )
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError(f"max_bytes must be an int >= 1, got {short(max_bytes)}")
        self.keep = keep
        self.max_bytes = max_bytes
        self.recorder = recorder
        self.clock = clock
        #: The snapshots the last ``load_latest`` skipped, newest first, with their reasons;
        #: also when it found no healthy snapshot and returned ``None``.
        self.last_skipped: tuple[SkippedSnapshot, ...] = ()

    def save(
        self, state: Any, step: int, label: str | None = None, milestone: bool = False
    ) -> SnapshotInfo:
        """Snapshot ``state`` (converted by ``to_state``) taken at ``step``, then prune.

        ``milestone`` snapshots are never pruned. Raises :class:`SnapshotError` when the
        state is not JSON data (the message names where), ``OSError`` when it cannot be
        written.
        """
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise ValueError(f"step must be an int >= 0, got {short(step)}")
        if label is not None and (not isinstance(label, str) or len(label) > MAX_LABEL):
            raise ValueError(f"label must be a str of at most {MAX_LABEL} characters or None")
        if not isinstance(milestone, bool):
            raise ValueError(f"milestone must be a bool, got {short(milestone)}")
        text = canonical(to_state(state))
        created = self.clock.now() if self.clock is not None else time.time()
        try:
            with self._files.locked():
                self._files.clean_temp()
                names = self._files.names()
                sequence = 1 + max((_sequence(n) for n in names), default=0)
                name = Name(sequence, step, milestone)
                data = encode(name, text, label, created)
                if len(data) > self.max_bytes:
                    raise SnapshotError(
                        f"state: {len(data)} bytes as a snapshot, over max_bytes={self.max_bytes}"
                    )
                self._files.write(name.file, data)
                self._prune([*names, name.file])
        except OSError as exc:
            message = f"cannot save a snapshot in {self._where()}: {exc.strerror or exc}"
            raise (OSError(exc.errno, message) if exc.errno else OSError(message)) from exc
        info = SnapshotInfo(
            name.id, sequence, step, milestone, label, created, len(data), name.file,
            self._files.path(name.file),
        )  # fmt: skip
        self._record("saved", info, step=step, label=label, milestone=milestone, bytes=len(data))
        return info

    def list(self) -> list[SnapshotInfo]:
        """Every snapshot file, newest first, damaged ones included: what the names say,
        and the label and time from each header when it can be read. Nothing is verified
        here; ``load_latest`` does that."""
        names = self._files.names()
        bad = _markers(names)
        infos = []
        for name in _snapshots(names):
            try:
                head, size = self._files.head(name.file, _HEAD_BYTES)
            except FileNotFoundError:
                continue  # pruned by another writer meanwhile
            except OSError:
                head, size = b"", 0
            header = parse_header(head) or {}
            infos.append(_with_header(self._info(name, name.file in bad), header, size))
        return infos

    def load_latest(self, health_check: HealthCheck | None = None) -> LoadedSnapshot | None:
        """The newest snapshot that is intact, not marked bad and passes
        ``health_check(state)``; ``None`` when there is none.

        Never raises for a bad file: each one passed over is in the result's ``skipped``
        (and in :attr:`last_skipped`, also when the result is ``None``) with its reason:
        ``empty``, ``too large ...``, ``not UTF-8 ...``, ``truncated: ...``, ``not JSON: ...``,
        ``not a snapshot envelope: ...``, ``unknown version ...``, ``checksum mismatch``,
        ``marked bad``, ``unreadable: ...``, ``health check failed`` or ``health check raised
        <type>: <message>``.
        A health check that raises a ``BaseException`` that is not an ``Exception``
        (``KeyboardInterrupt``, a hard halt) is not caught.
        """
        skipped: list[SkippedSnapshot] = []
        seen: set[str] = set()
        for _ in range(3):
            gone = False
            names = self._files.names()
            bad = _markers(names)
            for name in _snapshots(names):
                if name.file in seen:
                    continue
                seen.add(name.file)
                info = self._info(name, name.file in bad)
                if info.bad:
                    self._skip(skipped, info, "marked bad")
                    continue
                try:
                    info, decoded = self._read(name, info)
                except FileNotFoundError:
                    gone = True  # pruned by another writer: newer snapshots exist
                    continue
                except Damaged as damaged:
                    self._skip(skipped, info, str(damaged))
                    continue
                reason = _health(health_check, decoded.state)
                if reason is not None:
                    self._skip(skipped, info, reason)
                    continue
                self.last_skipped = tuple(skipped)
                self._record("restored", info, step=info.step)
                return LoadedSnapshot(decoded.state, info, self.last_skipped)
            if not gone:
                break
        self.last_skipped = tuple(skipped)
        return None

    def load(self, info: SnapshotInfo) -> LoadedSnapshot:
        """Load one snapshot, whether or not it is marked bad; raises
        :class:`SnapshotError` with the reason when it is damaged or gone."""
        name = parse_name(info.file)
        if name is None:
            raise SnapshotError(f"{short(info.file)} is not a snapshot file name")
        try:
            info, decoded = self._read(name, self._info(name, info.bad))
        except FileNotFoundError:
            raise SnapshotError(f"snapshot {info.file}: no longer exists") from None
        except Damaged as damaged:
            raise SnapshotError(f"snapshot {info.file}: {damaged}") from None
        self._record("restored", info, step=info.step)
        return LoadedSnapshot(decoded.state, info)

    def mark_bad(self, info: SnapshotInfo) -> None:
        """Never restore this snapshot again (``load_latest`` skips it, also in a restarted
        process: the mark is a ``<file>.bad`` marker next to it). A snapshot that no longer
        exists needs no mark."""
        if parse_name(info.file) is None:
            raise SnapshotError(f"{short(info.file)} is not a snapshot file name")
        with self._files.locked():
            if info.file not in self._files.names():
                return
            self._files.write(info.file + BAD_SUFFIX, b"")
        self._record("marked_bad", info, step=info.step, file=info.file)

    def newest_raw(self) -> tuple[SnapshotInfo, bytes] | None:
        """The snapshot ``load_latest`` would restore, health check aside (the newest intact
        one not marked bad), and its bytes as stored; ``None`` when there is none. For fault
        injection (``corrupt_snapshot`` damages it) and tools that inspect files."""
        names = self._files.names()
        bad = _markers(names)
        for name in _snapshots(names):
            if name.file in bad:
                continue
            try:
                data = self._files.read(name.file, self.max_bytes)
                decoded = decode(name, data)
            except (TooLarge, OSError, Damaged):  # gone, or one the load skips anyway
                continue
            return _with_header(self._info(name, False), decoded.header, len(data)), data
        return None

    def overwrite_raw(self, info: SnapshotInfo, data: bytes) -> None:
        """Replace a snapshot file's bytes with ``data`` as given, unchecked (atomically, under
        the lock): what the ``corrupt_snapshot`` fault does to the newest snapshot before a
        load. A snapshot that no longer exists stays gone."""
        if parse_name(info.file) is None:
            raise SnapshotError(f"{short(info.file)} is not a snapshot file name")
        with self._files.locked():
            if info.file in self._files.names():
                self._files.write(info.file, bytes(data))

    def _read(self, name: Name, info: SnapshotInfo) -> tuple[SnapshotInfo, Decoded]:
        try:
            data = self._files.read(name.file, self.max_bytes)
        except TooLarge as exc:
            raise Damaged(f"too large ({exc.size} bytes > max_bytes {self.max_bytes})") from None
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise Damaged(f"unreadable: {type(exc).__name__}: {exc.strerror or exc}") from None
        decoded = decode(name, data)
        return _with_header(info, decoded.header, len(data)), decoded

    def _prune(self, names: builtins.list[str]) -> None:
        """Delete what is older than the newest ``keep`` good snapshots, except good
        milestones; then markers of deleted snapshots. Nothing newer than the kept ones
        is deleted, so the highest sequence number stays on disk."""
        bad = _markers(names)
        ordered = _snapshots(names)
        good = [n for n in ordered if n.file not in bad]
        if not good:
            return
        floor = good[: self.keep][-1].sequence
        existing = {n.file for n in ordered}
        try:
            for name in ordered:
                if name.sequence >= floor or (name.milestone and name.file not in bad):
                    continue
                self._files.delete(name.file)
                existing.discard(name.file)
            for file in bad - existing:
                self._files.delete(file + BAD_SUFFIX)
        except OSError as exc:  # the snapshot is saved; an old file stays until next time
            logger.warning("cannot prune old snapshots in %s: %s", self._where(), exc)

    def _info(self, name: Name, bad: bool) -> SnapshotInfo:
        return SnapshotInfo(
            name.id, name.sequence, name.step, name.milestone, file=name.file,
            path=self._files.path(name.file), bad=bad,
        )  # fmt: skip

    def _skip(
        self, skipped: builtins.list[SkippedSnapshot], info: SnapshotInfo, reason: str
    ) -> None:
        skipped.append(SkippedSnapshot(info, reason))
        self._record("skipped", info, reason=reason, file=info.file)

    def _record(self, action: str, info: SnapshotInfo, **detail: Any) -> None:
        if self.recorder is None:
            return
        from ..trace.events import Snapshot

        self.recorder.record(Snapshot, snapshot_id=info.id, action=action, detail=detail)

    def _where(self) -> str:
        return "memory"


class SnapshotStore(_Store):
    """Snapshots as JSON files in ``directory`` (created if missing).

    Each save writes a temp file, fsyncs it, renames it into place and fsyncs the
    directory, holding a lock file (``flock``) so writers in several processes never
    collide; a restarted process finds the existing snapshots and continues their sequence.
    ``keep`` recent snapshots are kept, plus every milestone. ``recorder`` (anything with
    ``record(cls, **fields)``) receives ``Snapshot`` events; ``clock.now()`` stamps
    ``created`` (the wall clock without one). Files over ``max_bytes`` are neither written
    nor read. ``fsync=False`` skips the fsyncs: for benchmarks and tests only.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        keep: int = 5,
        *,
        recorder: Recorder | None = None,
        clock: Clock | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        fsync: bool = True,
    ) -> None:
        super().__init__(keep, recorder, clock, max_bytes)
        self.directory = Path(directory)
        self._files = self._open(fsync)

    def _open(self, fsync: bool) -> Directory:
        try:
            return Directory(self.directory, fsync=fsync)
        except OSError as exc:
            message = f"cannot use {self.directory} for snapshots: {exc.strerror or exc}"
            raise (OSError(exc.errno, message) if exc.errno else OSError(message)) from exc

    def _where(self) -> str:
        return str(self.directory)

    def __repr__(self) -> str:
        return f"SnapshotStore({str(self.directory)!r}, keep={self.keep})"


class MemorySnapshotStore(_Store):
    """The same store in memory: same envelope, checks, pruning and events, no disk (for
    tests, and runners that need no restart). ``files`` maps file names to their bytes."""

    def __init__(
        self,
        keep: int = 5,
        *,
        recorder: Recorder | None = None,
        clock: Clock | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        super().__init__(keep, recorder, clock, max_bytes)
        self._memory = Memory()
        self._files = self._memory

    @property
    def files(self) -> dict[str, bytes]:
        """The stored files by name (the same bytes a :class:`SnapshotStore` writes)."""
        return self._memory.files

    def __repr__(self) -> str:
        return f"MemorySnapshotStore(keep={self.keep})"


def _sequence(file: str) -> int:
    name = parse_name(file.removesuffix(BAD_SUFFIX))
    return name.sequence if name is not None else 0


def _snapshots(names: list[str]) -> list[Name]:
    """The snapshot files among ``names``, newest first."""
    parsed = (parse_name(n) for n in names)
    return sorted((n for n in parsed if n is not None), key=lambda n: n.sequence, reverse=True)


def _markers(names: list[str]) -> set[str]:
    """The snapshot files marked bad."""
    return {n[: -len(BAD_SUFFIX)] for n in names if n.endswith(BAD_SUFFIX)}


def _with_header(info: SnapshotInfo, header: dict[str, Any], size: int) -> SnapshotInfo:
    label = header.get("label")
    created = header.get("created")
    return replace(
        info,
        label=label if isinstance(label, str) else None,
        created=float(created)
        if isinstance(created, (int, float)) and not isinstance(created, bool)
        else None,
        size=size,
    )


def _health(check: HealthCheck | None, state: Any) -> str | None:
    """Why ``check`` rejects ``state``, or ``None`` when it passes."""
    if check is None:
        return None
    try:
        if check(state):
            return None
    except Exception as exc:
        return f"health check raised {type(exc).__name__}: {safe_str(exc, 200)}"
    return "health check failed"
