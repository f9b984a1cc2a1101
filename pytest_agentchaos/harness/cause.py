"""Why a run ended: the exception the test's call raised, as the trace's ``RunEnded`` event
records it (``detail["error"]``), so every report can say it without the test's traceback.

``where`` is the deepest frame of the user's own code: not pytest's, not this package's (the
runtime, see :mod:`pytest_agentchaos.runtime`), not the standard library's nor an installed
framework's (under ``site-packages``).
"""

from __future__ import annotations

import linecache
import os
import sys
import sysconfig
from functools import lru_cache
from types import TracebackType
from typing import Any

from ..saferepr import safe_str
from .unwind import is_agent_frame

__all__ = ["MESSAGE_LIMIT", "error_detail", "is_users_file", "status_of_error"]

#: The longest message kept (characters; longer ones end with an ellipsis).
MESSAGE_LIMIT = 500


def status_of_error(error: BaseException) -> str:
    """``interrupted`` for a Ctrl-C (``KeyboardInterrupt``), else ``error``; hard halts and a
    framework's caps are told apart by the caller."""
    return "interrupted" if isinstance(error, KeyboardInterrupt) else "error"


@lru_cache(maxsize=1)
def _library_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    found = {
        os.path.normcase(os.path.realpath(paths[key]))
        for key in ("stdlib", "platstdlib", "purelib", "platlib")
        if paths.get(key)
    }
    found.update(
        os.path.normcase(os.path.realpath(p))
        for p in sys.path
        if p.rstrip(os.sep).endswith(("site-packages", "dist-packages"))
    )
    return tuple(sorted(found))


@lru_cache(maxsize=4096)
def is_users_file(filename: str) -> bool:
    """Whether ``filename`` is the user's own source: a real file outside the standard
    library and the installed packages."""
    if not filename or filename.startswith("<"):  # <string>, <frozen runpy>
        return False
    parts = filename.replace("\\", "/").split("/")
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    real = os.path.normcase(os.path.realpath(filename))
    return not any(real == d or real.startswith(d + os.sep) for d in _library_dirs())


def _users_frame(tb: TracebackType | None) -> tuple[str, int, str] | None:
    """(file, line, function) of the deepest frame of the user's own code in ``tb``."""
    found = None
    while tb is not None:
        frame = tb.tb_frame
        if is_agent_frame(frame) and is_users_file(frame.f_code.co_filename):
            found = (frame.f_code.co_filename, tb.tb_lineno, frame.f_code.co_name)
        tb = tb.tb_next
    return found


def _shown(filename: str) -> str:
    try:
        shown = os.path.relpath(filename)
    except ValueError:  # another drive (Windows)
        return filename
    return filename if shown.startswith("..") else shown


def _last(tb: TracebackType | None) -> TracebackType | None:
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def _message(error: BaseException) -> str:
    """``str(error)``; for an ``assert`` pytest rewrote, what it says without pytest's
    explanation (the values shown there depend on ``-v``: a replay run without it would
    record another message): the assert's own message, else its statement."""
    text = safe_str(error, 100 * MESSAGE_LIMIT)
    if isinstance(error, AssertionError):
        head, explained, _ = text.partition("\nassert ")
        if explained:
            return safe_str(head, MESSAGE_LIMIT)
        if text.startswith("assert "):
            last = _last(error.__traceback__)
            if last is not None:
                line = linecache.getline(last.tb_frame.f_code.co_filename, last.tb_lineno)
                if line.strip().startswith("assert"):
                    return safe_str(line.strip(), MESSAGE_LIMIT)
    return safe_str(text, MESSAGE_LIMIT)


def error_detail(error: BaseException) -> dict[str, Any]:
    """``{"type", "message", "where"}`` of ``error`` (``where`` left out when no frame of the
    user's own code is in its traceback); the message is capped at :data:`MESSAGE_LIMIT`."""
    detail: dict[str, Any] = {
        "type": safe_str(type(error).__name__, 120),
        "message": _message(error),
    }
    found = _users_frame(error.__traceback__)
    if found is not None:
        filename, line, function = found
        detail["where"] = f"{_shown(filename)}:{line} in {function}"
    return detail
