"""Run diff: where two runs' traces part ways, with the events around that point and the fault
decisions that differ, for ``python -m pytest_agentchaos diff A.json B.json`` and the HTML
report's comparison of a case's passing and failing runs; free of pytest.

Traces are read as plain JSON documents (not rebuilt as events): a trace from another version,
or one an agent filled with hostile values, is still compared and shown as text. Two events
are the same when every field but the virtual time ``t`` is (``RunStarted`` is the same by its
type: its test id and seed differ between runs by design, and the header shows them); memory
addresses in recorded reprs (``0x7f3e...``) are masked, as a replay's comparison does.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..saferepr import safe_repr, safe_str

__all__ = [
    "CONTEXT",
    "MAX_BYTES",
    "Divergence",
    "FaultChange",
    "TraceDiff",
    "TraceFileError",
    "diff_data",
    "diff_lines",
    "diff_traces",
    "read_trace_file",
    "trace_problem",
]

#: The largest trace file read (a recorded value is capped at 64 KiB, a long run is a few MB).
MAX_BYTES = 256 * 2**20
#: Events shown before the divergence, and after it on each side.
CONTEXT = 3
#: Characters of one field's value shown in a line.
_VALUE = 120
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")


class TraceFileError(ValueError):
    """A file that is no trace: the message is one line naming it and what is wrong."""


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} bytes"  # pragma: no cover


def read_trace_file(path: str | os.PathLike[str], max_bytes: int = MAX_BYTES) -> dict[str, Any]:
    """The trace document at ``path``, checked to be one (an object with a list of events,
    each an object with a ``type``); :class:`TraceFileError` (one line) otherwise."""
    where = os.fspath(path)

    def bad(problem: str) -> TraceFileError:
        return TraceFileError(f"{where}: {problem}")

    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise bad("is a directory, not a trace file")
        if not stat.S_ISREG(info.st_mode):
            raise bad("is not a regular file")
        if info.st_size > max_bytes:
            raise bad(
                f"{_size(info.st_size)} is more than a trace may be ({_size(max_bytes)}; "
                "--max-bytes raises it)"
            )
        with open(path, "rb") as fh:
            raw = fh.read(max_bytes + 1)
    except TraceFileError:
        raise
    except FileNotFoundError:
        raise bad("no such file") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        raise bad(f"cannot read it: {getattr(exc, 'strerror', None) or exc}") from None
    if len(raw) > max_bytes:  # grew while read
        raise bad(f"more than a trace may be ({_size(max_bytes)}; --max-bytes raises it)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise bad(f"not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise bad("empty, not a trace")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise bad(f"not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise bad("nested too deeply to be a trace") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise bad(f"not readable JSON: {safe_str(exc, 120)}") from None
    problem = trace_problem(data)
    if problem is not None:
        raise bad(problem)
    return data  # type: ignore[no-any-return]


def trace_problem(data: Any) -> str | None:
    """What makes ``data`` no trace document the diff can read (None: it is one)."""
    if not isinstance(data, dict) or not isinstance(data.get("events"), list):
        found = type(data).__name__ if not isinstance(data, dict) else "an object without events"
        return f"not a pytest-agentchaos trace (expected an object with 'events', found {found})"
    version = data.get("format", 1)
    if type(version) is not int or version != 1:
        return f"trace format {safe_repr(version, 40)} is not supported (expected 1)"
    for i, event in enumerate(data["events"]):
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            return f"event #{i} is not an object with a 'type'"
    meta = data.get("meta", {})
    if meta is not None and not isinstance(meta, dict):
        return f"'meta' is {type(meta).__name__}, expected an object"
    return None


# --- comparing ------------------------------------------------------------------------------


def _masked(value: Any) -> Any:
    if isinstance(value, str):
        return _ADDRESS.sub("0x?", value) if "0x" in value else value
    if isinstance(value, dict):
        return {str(k): _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _key(event: Mapping[str, Any]) -> str:
    """What makes two events the same (see the module doc)."""
    if event.get("type") == "RunStarted":
        return "RunStarted"
    kept = {k: v for k, v in event.items() if k != "t"}
    try:
        return json.dumps(_masked(kept), sort_keys=True, ensure_ascii=False, default=str)
    except (ValueError, TypeError, RecursionError):  # nested nearly as deep as JSON allows
        return safe_repr(kept, 100_000)


_CallKey = tuple[str, str, int]


def _decisions(events: Sequence[Mapping[str, Any]]) -> dict[_CallKey, list[dict[str, Any]]]:
    """The fault decisions by call: (channel, target, call number) -> each fault's kind and
    detail, in the order they fired."""
    found: dict[_CallKey, list[dict[str, Any]]] = {}
    for event in events:
        if event.get("type") != "FaultInjected":
            continue
        index = event.get("index")
        call = (
            safe_str(event.get("channel", "tool"), 40),
            safe_str(event.get("target", ""), 200),
            index if type(index) is int else -1,
        )
        decision = {"kind": safe_str(event.get("kind", ""), 60), "detail": event.get("detail", {})}
        found.setdefault(call, []).append(decision)
    return found


@dataclass(frozen=True)
class Divergence:
    """The first event at which the runs differ: its position (``at``; one trace may have ended
    there: its side is None), the events both ran before it and those after it on each side."""

    at: int
    a: dict[str, Any] | None
    b: dict[str, Any] | None
    before: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    after_a: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    after_b: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


@dataclass(frozen=True)
class FaultChange:
    """A call whose fault decisions differ: each side's (empty: no fault fired there)."""

    channel: str
    target: str
    index: int
    a: list[dict[str, Any]]
    b: list[dict[str, Any]]


@dataclass(frozen=True)
class TraceDiff:
    """Two traces compared: their metadata, lengths and how each ended, the first divergence
    and the fault decisions that differ."""

    meta_a: dict[str, Any]
    meta_b: dict[str, Any]
    events_a: int
    events_b: int
    end_a: str
    end_b: str
    divergence: Divergence | None
    faults: list[FaultChange]

    @property
    def identical(self) -> bool:
        """No event and no fault decision differs."""
        return self.divergence is None and not self.faults


def _ending(events: Sequence[Mapping[str, Any]]) -> str:
    """How a run ended: its ``RunEnded`` status and the error that ended it, if any."""
    for event in reversed(events):
        if event.get("type") == "RunEnded":
            status = safe_str(event.get("status", "?"), 40)
            detail = event.get("detail")
            error = detail.get("error") if isinstance(detail, dict) else None
            if isinstance(error, dict) and error.get("type"):
                message = safe_str(error.get("message", ""), 200).splitlines()
                text = f"{safe_str(error['type'], 80)}: {message[0] if message else ''}"
                return f"{status} ({text.rstrip(': ')})"
            return status
    return "no RunEnded event (cut short)"


def diff_traces(a: Mapping[str, Any], b: Mapping[str, Any], context: int = CONTEXT) -> TraceDiff:
    """Compare two trace documents (as :func:`read_trace_file` gives them)."""
    events_a: list[dict[str, Any]] = list(a.get("events") or [])
    events_b: list[dict[str, Any]] = list(b.get("events") or [])
    at = 0
    shorter = min(len(events_a), len(events_b))
    while at < shorter and _key(events_a[at]) == _key(events_b[at]):
        at += 1
    divergence = None
    if at < max(len(events_a), len(events_b)):
        divergence = Divergence(
            at,
            events_a[at] if at < len(events_a) else None,
            events_b[at] if at < len(events_b) else None,
            [(i, events_a[i]) for i in range(max(0, at - context), at)],
            [(i, events_a[i]) for i in range(at + 1, min(len(events_a), at + 1 + context))],
            [(i, events_b[i]) for i in range(at + 1, min(len(events_b), at + 1 + context))],
        )
    decided_a, decided_b = _decisions(events_a), _decisions(events_b)
    changes = []
    for call in sorted(decided_a.keys() | decided_b.keys()):
        one, other = decided_a.get(call, []), decided_b.get(call, [])
        if _key({"d": one}) != _key({"d": other}):
            changes.append(FaultChange(*call, one, other))
    meta_a, meta_b = a.get("meta"), b.get("meta")
    return TraceDiff(
        dict(meta_a) if isinstance(meta_a, Mapping) else {},
        dict(meta_b) if isinstance(meta_b, Mapping) else {},
        len(events_a),
        len(events_b),
        _ending(events_a),
        _ending(events_b),
        divergence,
        changes,
    )


# --- showing --------------------------------------------------------------------------------


def _number(value: Any, width: int, digits: int | None = None) -> str:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or value != value or abs(value) > 1e15:  # NaN, inf, absurd
        return "?".rjust(width)
    return (f"{value:.{digits}f}" if digits is not None else str(int(value))).rjust(width)


def _name(value: Any) -> str:
    """A field or type name as written, unless it is no identifier: then its repr."""
    return value if isinstance(value, str) and value.isidentifier() else safe_repr(value, 40)


def describe(event: Mapping[str, Any], limit: int = 400) -> str:
    """One line for an event, as the failure report shows one: step, virtual time, type and
    its non-empty fields (values cut, control characters escaped by ``repr``)."""
    body = ", ".join(
        f"{_name(k)}={safe_repr(v, _VALUE)}"
        for k, v in event.items()
        if k not in ("type", "step", "t") and v not in (None, {}, [], "")
    )
    kind = _name(event.get("type", "?"))
    line = (
        f"#{_number(event.get('step'), 0).strip():<4} t={_number(event.get('t'), 9, 3)}s "
        f"{kind}({body})"
    )
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _who(name: str, meta: Mapping[str, Any], events: int, end: str) -> str:
    test = safe_str(meta.get("test", "?"), 200)
    return (
        f"{name}: {test} seed={safe_str(meta.get('seed', '?'), 24)} "
        f"profile={safe_str(meta.get('profile', '?'), 60)}: {events} events, ended {end}"
    )


def _decision_text(decisions: list[dict[str, Any]]) -> str:
    if not decisions:
        return "no fault"
    return "; ".join(
        f"{d['kind']} {safe_repr(d['detail'], _VALUE)}" if d["detail"] else str(d["kind"])
        for d in decisions
    )


def diff_lines(
    found: TraceDiff, names: tuple[str, str] = ("A", "B"), most_faults: int | None = None
) -> list[str]:
    """The diff for humans: who each run is, the first divergence with the events around it,
    and the fault decisions that differ (the first ``most_faults`` of them; or that the runs
    are the same)."""
    a, b = names
    lines = [
        _who(a, found.meta_a, found.events_a, found.end_a),
        _who(b, found.meta_b, found.events_b, found.end_b),
    ]
    if found.identical:
        return [*lines, "no divergence: the same events and fault decisions"]
    d = found.divergence
    if d is None:
        lines.append("the same events (but for virtual time); the fault decisions differ:")
    else:
        lines.append(f"first divergence at event {d.at}:")
        lines += [f"  {'both':<4} {i:>5}  {describe(e)}" for i, e in d.before]
        for name, event in ((a, d.a), (b, d.b)):
            text = describe(event) if event is not None else "(the run ended before it)"
            lines.append(f"> {name:<4} {d.at:>5}  {text}")
        for name, after in ((a, d.after_a), (b, d.after_b)):
            lines += [f"  {name:<4} {i:>5}  {describe(e)}" for i, e in after]
    if found.faults:
        lines.append(f"fault decisions that differ ({len(found.faults)}):")
        shown = found.faults if most_faults is None else found.faults[:most_faults]
        for c in shown:
            call = f"call {c.index} of {c.channel} {c.target!r}"
            lines.append(f"  {call}: {a} {_decision_text(c.a)}; {b} {_decision_text(c.b)}")
        if len(shown) < len(found.faults):
            lines.append(f"  ... and {len(found.faults) - len(shown)} more")
    elif d is not None:
        lines.append("the fault decisions are the same: the runs parted ways on their own")
    return lines


def _side(meta: Mapping[str, Any], events: int, end: str, path: str | None) -> dict[str, Any]:
    side = {k: meta.get(k) for k in ("test", "seed", "profile")}
    return {"file": path, **side, "events": events, "ended": end}


def diff_data(found: TraceDiff, paths: tuple[str | None, str | None] = (None, None)) -> Any:
    """The diff as JSON data (``--json``): ``identical``, each run (``a``, ``b``), the
    ``divergence`` (null when none) with events as ``{"at": position, "event": ...}``, and
    ``faults``: each call whose decisions differ, with each side's ``[{kind, detail}]``."""
    d = found.divergence

    def at(pairs: list[tuple[int, dict[str, Any]]]) -> list[dict[str, Any]]:
        return [{"at": i, "event": e} for i, e in pairs]

    return {
        "identical": found.identical,
        "a": _side(found.meta_a, found.events_a, found.end_a, paths[0]),
        "b": _side(found.meta_b, found.events_b, found.end_b, paths[1]),
        "divergence": None if d is None else {
            "at": d.at, "a": d.a, "b": d.b, "before": at(d.before),
            "after_a": at(d.after_a), "after_b": at(d.after_b),
        },
        "faults": [
            {"channel": c.channel, "target": c.target, "index": c.index, "a": c.a, "b": c.b}
            for c in found.faults
        ],
    }  # fmt: skip


def read_pair(
    path_a: str | os.PathLike[str], path_b: str | os.PathLike[str], max_bytes: int = MAX_BYTES
) -> TraceDiff:
    """Read two trace files and compare them (:class:`TraceFileError` for a bad one)."""
    return diff_traces(read_trace_file(Path(path_a), max_bytes), read_trace_file(path_b, max_bytes))
