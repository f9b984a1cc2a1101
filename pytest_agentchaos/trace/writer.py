"""Writing a trace as JSON one event at a time, so a long run never exists twice in memory."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from .events import Event
from .values import capture

__all__ = ["dump_event", "write_trace"]

#: No cap when re-encoding a stray value at write time: the recorded values are capped already.
_NO_CAP = 1 << 62


#: One encoder per indent, reused (``json.dumps`` with options builds one per call).
_ENCODERS: dict[int | None, json.JSONEncoder] = {}


def _encoder(indent: int | None) -> json.JSONEncoder:
    encoder = _ENCODERS.get(indent)
    if encoder is None:
        encoder = _ENCODERS[indent] = json.JSONEncoder(
            ensure_ascii=False, allow_nan=False, indent=indent
        )
    return encoder


def dump_event(data: Mapping[str, Any], indent: int | None = None) -> str:
    """One event (or the meta table) as JSON text that encodes as UTF-8; values that are not
    JSON data (written by hand into an event, not through the session) are made so with
    :func:`capture`, and text with lone surrogates (undecodable file names) is escaped."""
    try:
        text = _encoder(indent).encode(data)
    except Exception:
        text = _encoder(indent).encode(capture(dict(data), _NO_CAP))
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(json.loads(text), ensure_ascii=True, indent=indent)
    return text


def _write(
    fh: IO[str], fmt: int, meta: Mapping[str, Any], events: Iterable[Event], indent: int | None
) -> None:
    fh.write(f'{{"format": {fmt}, "meta": {dump_event(meta)}, "events": [')
    sep = "\n" if indent is not None else ""
    first = True
    for event in events:
        fh.write(sep if first else "," + sep)
        fh.write(dump_event(event.to_dict()))
        first = False
    fh.write(sep + "]}\n")


def write_trace(
    target: str | os.PathLike[str] | IO[str],
    fmt: int,
    meta: Mapping[str, Any],
    events: Iterable[Event],
    indent: int | None = None,
) -> None:
    """Write a trace to ``target`` (a path, replaced atomically, or an open text file).

    ``indent`` set puts one event per line (each event stays on its line).
    """
    if not isinstance(target, (str, os.PathLike)):
        _write(target, fmt, meta, events, indent)
        return
    path = Path(target)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            _write(fh, fmt, meta, events, indent)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
