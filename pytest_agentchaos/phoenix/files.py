"""Where snapshot files live: a directory (atomic writes, a lock between processes) or memory.

Both hold named byte strings behind the same small surface, so the store's logic (naming,
pruning, checking) is written once.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

try:  # pragma: no cover - the import succeeds on every POSIX system
    import fcntl
except ImportError:  # pragma: no cover - Windows: only threads are kept apart
    fcntl = None  # type: ignore[assignment]

__all__ = ["TEMP_PREFIX", "LOCK_NAME", "Directory", "Files", "Memory", "TooLarge"]

#: Temp files a writer renames into place; every reader ignores them.
TEMP_PREFIX = ".tmp-"
#: The lock file writers hold while they choose a sequence number, write and prune.
LOCK_NAME = ".lock"


class TooLarge(Exception):
    """A file is larger than the reader's cap; ``size`` is its size in bytes."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


class Files(Protocol):
    """Named byte strings: what the store needs from where snapshots are kept."""

    def names(self) -> list[str]:
        """Every file name, temp files included; ``[]`` when there is no place yet."""
        ...

    def read(self, name: str, max_bytes: int) -> bytes:
        """The file's bytes; :class:`TooLarge` over ``max_bytes``, ``OSError`` unreadable,
        ``FileNotFoundError`` gone."""
        ...

    def head(self, name: str, limit: int) -> tuple[bytes, int]:
        """The first ``limit`` bytes and the whole size."""
        ...

    def write(self, name: str, data: bytes) -> None:
        """Replace ``name`` with ``data`` atomically: a reader sees all of it or none."""
        ...

    def delete(self, name: str) -> None:
        """Remove ``name`` (gone already is fine)."""
        ...

    def locked(self) -> contextlib.AbstractContextManager[None]:
        """Held while a writer chooses a sequence number, writes and prunes."""
        ...

    def clean_temp(self) -> None:
        """Remove temp files a crashed writer left (called with the lock held)."""
        ...

    def path(self, name: str) -> Path | None:
        """Where the file is on disk, if it is on disk."""
        ...


class Directory:
    """Files in a directory (created if missing). Writes go to a temp file in the same
    directory, are flushed and fsynced, renamed over the final name, and the directory is
    fsynced; ``fsync=False`` skips both fsyncs (for benchmarks and tests only)."""

    def __init__(self, directory: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.directory = Path(directory)
        self.fsync = fsync
        self._threads = threading.Lock()
        self.directory.mkdir(parents=True, exist_ok=True)

    def names(self) -> list[str]:
        try:
            return os.listdir(self.directory)
        except FileNotFoundError:
            return []

    def read(self, name: str, max_bytes: int) -> bytes:
        with open(self.directory / name, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                raise TooLarge(size)
            data = fh.read(max_bytes + 1)
        if len(data) > max_bytes:  # grew since fstat: not a file our writers make
            raise TooLarge(len(data))
        return data

    def head(self, name: str, limit: int) -> tuple[bytes, int]:
        with open(self.directory / name, "rb") as fh:
            return fh.read(limit), os.fstat(fh.fileno()).st_size

    def write(self, name: str, data: bytes) -> None:
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=self.directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                if self.fsync:
                    os.fsync(fh.fileno())
            os.replace(tmp, self.directory / name)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        if self.fsync:
            self.sync_directory()

    def sync_directory(self) -> None:
        """fsync the directory, so a rename or unlink survives a power cut; skipped where
        directories cannot be opened or synced."""
        try:
            fd = os.open(self.directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:  # pragma: no cover - Windows
            return
        try:
            os.fsync(fd)
        except OSError:  # pragma: no cover - file systems without directory fsync
            pass
        finally:
            os.close(fd)

    def delete(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.directory / name)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        with self._threads:
            if fcntl is None:  # pragma: no cover - no locks between processes
                yield
                return
            fd = os.open(self.directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # closing the last descriptor releases the lock

    def clean_temp(self) -> None:
        if fcntl is None:  # pragma: no cover - another process may be writing its temp file
            return
        for name in self.names():
            if name.startswith(TEMP_PREFIX):
                self.delete(name)

    def path(self, name: str) -> Path | None:
        return self.directory / name


class Memory:
    """Files in a dict: the same surface without a disk (tests, runs that need no restart)."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self._lock = threading.RLock()

    def names(self) -> list[str]:
        with self._lock:
            return list(self.files)

    def read(self, name: str, max_bytes: int) -> bytes:
        with self._lock:
            try:
                data = self.files[name]
            except KeyError:
                raise FileNotFoundError(name) from None
        if len(data) > max_bytes:
            raise TooLarge(len(data))
        return data

    def head(self, name: str, limit: int) -> tuple[bytes, int]:
        data = self.read(name, 1 << 62)
        return data[:limit], len(data)

    def write(self, name: str, data: bytes) -> None:
        with self._lock:
            self.files[name] = bytes(data)

    def delete(self, name: str) -> None:
        with self._lock:
            self.files.pop(name, None)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        with self._lock:
            yield

    def clean_temp(self) -> None:
        """Nothing to clean: memory writes are never half done."""

    def path(self, name: str) -> Path | None:
        return None
