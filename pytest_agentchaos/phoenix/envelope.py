"""The snapshot file format: names, the JSON envelope, and the checks a reader makes.

A snapshot is one JSON object, the envelope::

    {"format": "pytest-agentchaos-snapshot", "version": 1, "id": "snap-000000000017",
     "step": 42, "label": null, "milestone": false, "created": 1718000000.0,
     "checksum": "sha256:<hex>",
    "state": <the state as canonical JSON>}

``checksum`` is the SHA-256 of the canonical JSON of ``state`` (sorted keys, no spaces,
ASCII only). The writer puts the header on the first line and the state, verbatim in its
canonical form, last, so a reader hashes the state's bytes without encoding them again and
``list()`` reads headers from the first line only; a reader still accepts any layout of the
same object (it then re-encodes the state to check it).

File names sort by a sequence number that only grows:
``snap-000000000017-step-000042.json``, ``-milestone`` before ``.json`` for a milestone (so
pruning never has to read a file). ``<name>.bad`` marks a snapshot not to restore.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from ..saferepr import safe_str, short

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "BAD_SUFFIX",
    "Damaged",
    "Decoded",
    "Name",
    "canonical",
    "checked_from",
    "decode",
    "encode",
    "parse_header",
    "parse_name",
]

#: The ``format`` of every snapshot envelope.
FORMAT_NAME = "pytest-agentchaos-snapshot"
#: The envelope version this code writes and reads.
FORMAT_VERSION = 1
#: Suffix of the marker file that says a snapshot must not be restored.
BAD_SUFFIX = ".bad"

_NAME = re.compile(r"snap-(\d{12,})-step-(\d{6,})(-milestone)?\.json")
_STATE_KEY = ',\n"state":'
_END = "}\n"
_CHECKSUM_KEY = b'"checksum": "'


class Damaged(Exception):
    """A snapshot that must not be restored; the message is the short reason."""


@dataclass(frozen=True, slots=True)
class Name:
    """What a snapshot's file name says about it."""

    sequence: int
    step: int
    milestone: bool

    @property
    def id(self) -> str:
        """The snapshot's id: ``snap-`` and its sequence number."""
        return f"snap-{self.sequence:012d}"

    @property
    def file(self) -> str:
        """The file name."""
        tail = "-milestone" if self.milestone else ""
        return f"{self.id}-step-{self.step:06d}{tail}.json"


@dataclass(frozen=True, slots=True)
class Decoded:
    """A snapshot that passed every check: its header fields and its state."""

    header: dict[str, Any]
    state: Any


def parse_name(file: str) -> Name | None:
    """The snapshot a file name stands for; ``None`` for any other file (temp files, markers,
    the lock)."""
    match = _NAME.fullmatch(file)
    if match is None:
        return None
    name = Name(int(match[1]), int(match[2]), match[3] is not None)
    return name if name.file == file else None  # extra leading zeros: not a name we write


def canonical(state: Any) -> str:
    """The canonical JSON of ``state``: sorted keys, no spaces, ASCII only, no NaN."""
    return json.dumps(
        state, sort_keys=True, ensure_ascii=True, allow_nan=False, separators=(",", ":")
    )


def checksum(text: str) -> str:
    """``sha256:<hex>`` of a canonical JSON text."""
    return "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()


def encode(name: Name, state_text: str, label: str | None, created: float) -> bytes:
    """The bytes of a snapshot file for state already in canonical JSON."""
    header = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "id": name.id,
        "step": name.step,
        "label": label,
        "milestone": name.milestone,
        "created": created,
        "checksum": checksum(state_text),
    }
    head = json.dumps(header, ensure_ascii=True, allow_nan=False)
    return "".join((head[:-1], _STATE_KEY, state_text, _END)).encode("ascii")


def decode(name: Name, data: bytes) -> Decoded:
    """Check a snapshot file's bytes against its name; raises :class:`Damaged` with the
    reason when it must not be restored."""
    if not data:
        raise Damaged("empty")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Damaged(f"not UTF-8 (byte {exc.start})") from None
    split = _split(text)
    if split is not None:
        header = _loads(split[0] + "}")
        if isinstance(header, dict) and "state" not in header:
            _check_header(header, name)
            state_text = split[1]
            if checksum(state_text) != header["checksum"]:
                raise Damaged("checksum mismatch")
            return Decoded(header, _loads(state_text))
    envelope = _loads(text)
    if not isinstance(envelope, dict):
        raise Damaged(f"not a snapshot envelope: a JSON {_json_type(envelope)}")
    _check_header(envelope, name)
    if "state" not in envelope:
        raise Damaged("not a snapshot envelope: no state")
    state = envelope.pop("state")
    try:
        state_text = canonical(state)
    except (ValueError, RecursionError) as exc:
        raise Damaged(f"not JSON data: {safe_str(exc, 120)}") from None
    if checksum(state_text) != envelope["checksum"]:
        raise Damaged("checksum mismatch")
    return Decoded(envelope, state)


def parse_header(head: bytes) -> dict[str, Any] | None:
    """The header fields from the first bytes of a snapshot file (its first line), or
    ``None`` when they cannot be read. Not a check: the state is not looked at."""
    line, sep, _ = head.partition(b"\n")
    if not sep or not line.endswith(b","):
        return None
    try:
        header = json.loads(line[:-1] + b"}")
    except (ValueError, RecursionError):
        return None
    return header if isinstance(header, dict) else None


def checked_from(data: bytes) -> int:
    """Where the checked part of a snapshot file in the writer's layout begins: the value of
    its checksum, which the state and the closing brace follow. A change to any byte from there
    on is caught by :func:`decode` (the checksum no longer matches, or the JSON breaks); the
    label and creation time before it are not checked. 0 for another layout."""
    line_end = data.find(b"\n")
    head = data[:line_end] if line_end >= 0 else data
    at = head.rfind(_CHECKSUM_KEY)
    return at + len(_CHECKSUM_KEY) - 1 if at >= 0 else 0


def _split(text: str) -> tuple[str, str] | None:
    """(header text without its closing brace, state text) in the writer's layout."""
    head_end = text.find(_STATE_KEY)
    if head_end < 0 or not text.startswith("{") or not text.endswith(_END):
        return None
    if "\n" in text[:head_end]:
        return None
    return text[:head_end], text[head_end + len(_STATE_KEY) : -len(_END)]


def _loads(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        raise Damaged(f"{'truncated' if cut else 'not JSON'}: {safe_str(exc, 120)}") from None
    except ValueError as exc:
        raise Damaged(f"not JSON: {safe_str(exc, 120)}") from None
    except RecursionError:
        raise Damaged("not JSON: nested too deeply to read") from None


def _no_constant(word: str) -> Any:
    raise ValueError(f"{word} is not JSON")


def _check_header(header: dict[str, Any], name: Name) -> None:
    if header.get("format") != FORMAT_NAME:
        raise Damaged(f"not a snapshot envelope: format {short(header.get('format'))}")
    version = header.get("version")
    if version != FORMAT_VERSION or type(version) is not int:
        raise Damaged(f"unknown version {short(version)} (this reader knows {FORMAT_VERSION})")
    expected = {"id": name.id, "step": name.step, "milestone": name.milestone}
    for key, want in expected.items():
        if header.get(key) != want or type(header.get(key)) is not type(want):
            raise Damaged(
                f"not a snapshot envelope: {key} {short(header.get(key))} does not match "
                f"its file name"
            )
    label = header.get("label")
    created = header.get("created")
    digest = header.get("checksum")
    if not (label is None or isinstance(label, str)):
        raise Damaged("not a snapshot envelope: label is not a string")
    if not (created is None or (type(created) in (int, float) and math.isfinite(created))):
        raise Damaged("not a snapshot envelope: created is not a number")
    if not isinstance(digest, str) or not digest.startswith("sha256:"):
        raise Damaged("not a snapshot envelope: no sha256 checksum")


def _json_type(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )
