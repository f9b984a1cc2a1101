"""Writing a trace as JSON one event at a time, so a long run never exists twice in memory."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import IO, Any

from .events import Event
from .values import capture

__all__ = ["dump_event", "write_trace"]

#: No cap when re-encoding a stray value at write time: the recorded values are capped already.
_NO_CAP = 1 << 62


#: One encoding function per indent, reused: ``json.dumps`` with options builds an encoder
#: per call, and even ``JSONEncoder.encode`` builds its C scanner per call; a trace's
#: thousands of small events pay that each time.
_ENCODERS: dict[int | None, Callable[[Any], str]] = {}


def _encoder(indent: int | None) -> Callable[[Any], str]:
    encode = _ENCODERS.get(indent)
    if encode is None:
        encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False, indent=indent)
        encode = encoder.encode
        if indent is None and c_make_encoder is not None:
            # no circular-reference markers: a cycle ends in RecursionError, which
            # dump_event answers like any value JSON cannot take
            scan = c_make_encoder(
                None, encoder.default, encode_basestring, None,
                encoder.key_separator, encoder.item_separator, False, False, False,
            )  # fmt: skip

            def encode(data: Any) -> str:
                return "".join(scan(data, 0))

        _ENCODERS[indent] = encode
    return encode


def dump_event(data: Mapping[str, Any], indent: int | None = None) -> str:
    """One event (or the meta table) as JSON text that encodes as UTF-8; values that are not
    JSON data (written by hand into an event, not through the session) are made so with
    :func:`capture`, and text with lone surrogates (undecodable file names) is escaped."""
    try:
        text = _encoder(indent)(data)
    except Exception:
        text = _encoder(indent)(capture(dict(data), _NO_CAP))
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
