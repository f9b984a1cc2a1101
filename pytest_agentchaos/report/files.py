"""Writing a report file whole or not at all: a temporary file beside it, then a rename, so
a reader never sees half of it and an earlier version stays whole if the write fails."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_atomic"]


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically; returns ``path``. A symlink stays a link (its
    target is replaced); the file keeps its permissions, and a new one gets those the umask
    gives (``mkstemp``'s 0600 would hide a CI artifact from its readers). Raises ``OSError``."""
    target = Path(os.path.realpath(path))
    try:
        mode = target.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = _default_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}-", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(path)
