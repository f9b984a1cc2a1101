"""Explicit schedules as data: the entries a user writes, the decisions a plan replays, the
one-line marker and the schedule file. Free of pytest.

A user writes an entry as ``{"target": "search", "call": 2, "kind": "rate_limit",
"retry_after": 30}``: which call of which target (``channel`` is ``"tool"`` unless it says
``"http"`` or ``"model"``), what happens to it, and the kind's decided details (the ones left
out take the kind's defaults). A plan replays the *decision* form that a trace records
(``Trace.schedule()``: ``channel``, ``target``, ``index``, ``kind``, ``detail``).
"""

from __future__ import annotations

import json
import math
import os
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..config import choice, fail, integer, text
from ..faults.kinds import CALL_CHANNELS, CallInfo, kind_class
from ..saferepr import safe_repr, short

__all__ = [
    "BEYOND",
    "FILE_FORMAT",
    "ScheduleFile",
    "decisions",
    "entries",
    "marker_line",
    "parse_schedule",
    "read_schedule_file",
    "unfired",
    "write_schedule_file",
]

#: What happens to the calls a schedule does not name: fault-free, or drawn from the profile.
BEYOND = ("none", "profile")
#: The version of the schedule file's layout.
FILE_FORMAT = 1

_PLACE_KEYS = ("target", "call", "kind", "channel")
#: Detail keys always shown, even at their default: the severity a reader looks for.
_SHOWN = ("seconds", "retry_after")


def _defaults(kind: str, channel: str, target: str, index: int) -> dict[str, Any]:
    """The detail a kind decides with its default parameters (``{}`` when it needs the call's
    arguments to decide, such as ``malformed_params``)."""
    cls = kind_class(kind, "kind")
    call = CallInfo(channel, target, index, 0.0, {}, None, True, 1_000)
    try:
        found = cls().decide(random.Random(0), call)
    except Exception:  # noqa: BLE001 - a kind that cannot decide blind: the user says it all
        found = None
    return dict(found) if found else {}


def _entry(raw: Any, where: str) -> dict[str, Any]:
    """One user entry as the decision a plan replays."""
    if not isinstance(raw, Mapping):
        raise fail(
            where,
            f"a schedule entry must be a dict such as {{'target': 'search', 'call': 1, "
            f"'kind': 'timeout'}}, got {short(raw)}",
        )
    for key in ("target", "call", "kind"):
        if key not in raw:
            raise fail(where, f"missing {key!r} (an entry needs target, call and kind)")
    target = text(raw["target"], f"{where}: target")
    index = integer(minimum=1)(raw["call"], f"{where}: call")
    channel = choice(CALL_CHANNELS)(raw.get("channel", "tool"), f"{where}: channel")
    cls = kind_class(raw["kind"], f"{where}: kind")
    if channel not in cls.channels:
        raise fail(f"{where}: channel", f"kind {cls.name!r} cannot hit a {channel} call")
    given = {k: v for k, v in raw.items() if k not in _PLACE_KEYS}
    unknown = sorted(str(k) for k in given if k not in cls.details)
    if unknown:
        allowed = ", ".join([*_PLACE_KEYS, *cls.details])
        raise fail(
            where, f"unknown key {short(unknown[0])} for kind {cls.name!r}; allowed: {allowed}"
        )
    detail = {**_defaults(cls.name, channel, target, index), **given}
    detail = cls.check_detail(detail, f"{where}")
    return {"channel": channel, "target": target, "index": index, "kind": cls.name,
            "detail": detail}  # fmt: skip


def parse_schedule(raw: Any, where: str = "schedule") -> tuple[dict[str, Any], ...]:
    """The decisions of a user's schedule (a list of entries), validated: a bad entry is a
    ``ChaosConfigError`` naming it (``<where>[i]``), its key and what is allowed; two entries
    for one call are refused."""
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Sequence):
        raise fail(where, f"expected a list of schedule entries, got {short(raw)}")
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str, int]] = set()
    for i, item in enumerate(raw):
        entry = _entry(item, f"{where}[{i}]")
        place = (entry["channel"], entry["target"], entry["index"])
        if place in seen:
            raise fail(f"{where}[{i}]", f"a second entry for call {place[2]} of {place[1]!r}")
        seen.add(place)
        out.append(entry)
    return tuple(out)


def entries(schedule: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Decisions (``Trace.schedule()`` or :func:`parse_schedule`) as a user writes them."""
    out = []
    for d in schedule:
        entry: dict[str, Any] = {"target": d["target"], "call": d["index"], "kind": d["kind"]}
        if d.get("channel", "tool") != "tool":
            entry["channel"] = d["channel"]
        defaults = _defaults(d["kind"], d.get("channel", "tool"), d["target"], d["index"])
        for key, value in dict(d.get("detail") or {}).items():
            shown = key in _SHOWN or (key == "status" and d["kind"] == "http_error")
            if shown or key not in defaults or defaults[key] != value:
                entry[key] = value
        out.append(entry)
    return out


def decisions(schedule: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """User entries back as decisions (for a file read from disk)."""
    return list(parse_schedule(schedule))


def _literal(value: Any) -> str:
    """``value`` as a Python literal (whole floats without their ``.0``)."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def marker_line(
    schedule: Sequence[Mapping[str, Any]], *, seed: int | None = None, beyond: str = "none"
) -> str:
    """The ready-to-paste marker that replays ``schedule`` (decisions), on one line."""
    extra = "" if beyond == "none" else f", beyond={beyond!r}"
    pinned = "" if seed is None else f", seed={seed}"
    return f"@pytest.mark.chaos(schedule={_literal(entries(schedule))}{extra}{pinned})"


def unfired(
    schedule: Sequence[Mapping[str, Any]],
    fired: Sequence[Mapping[str, Any]],
    calls: Mapping[tuple[str, str], int],
) -> list[str]:
    """The decisions of ``schedule`` that did not fire in a run whose trace's schedule is
    ``fired`` and which made ``calls`` (per channel and target), each said with why: the call
    never came (the run made fewer, or none of that target), or it came and the fault did not
    apply to it."""
    done = {(d.get("channel", "tool"), d["target"], d["index"]) for d in fired}
    out = []
    for d in schedule:
        channel, target, index = d.get("channel", "tool"), d["target"], d["index"]
        if (channel, target, index) in done:
            continue
        made = calls.get((channel, target), 0)
        if not made:
            why = f"no {channel} call of {safe_repr(target, 60)} was made"
        elif made < index:
            why = f"the run made {made} such call(s)"
        else:
            why = "the call came and the fault did not apply to it"
        out.append(f"call {index} of {safe_repr(target, 60)} ({d['kind']}): {why}")
    return out


class ScheduleFile(dict):  # type: ignore[type-arg]
    """A schedule file's content: ``test``, ``seed``, ``profile``, ``beyond``, ``schedule``
    (user entries) and what it does to the test (``failure``, ``marker``)."""

    @property
    def decisions(self) -> tuple[dict[str, Any], ...]:
        """The schedule as decisions a plan replays."""
        return parse_schedule(self["schedule"], f"{self.get('path', 'schedule file')}: schedule")


def write_schedule_file(
    path: Path,
    *,
    test: str,
    schedule: Sequence[Mapping[str, Any]],
    seed: int,
    profile: str,
    beyond: str = "none",
    failure: Mapping[str, Any] | None = None,
) -> Path:
    """Write a schedule file (atomically: a reader never sees half a file); returns ``path``."""
    data = {
        "format": FILE_FORMAT,
        "test": test,
        "seed": seed,
        "profile": profile,
        "beyond": beyond,
        "schedule": entries(schedule),
        "marker": marker_line(schedule, seed=seed, beyond=beyond),
    }
    if failure is not None:
        data["failure"] = dict(failure)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def read_schedule_file(path: Path) -> ScheduleFile:
    """Read and check a schedule file: ``ChaosConfigError``, one line naming the file and what
    is wrong (not JSON, not a schedule file, a bad entry)."""
    where = str(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise fail(where, "no such schedule file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(where, f"cannot read it: {getattr(exc, 'strerror', None) or exc}") from None
    except json.JSONDecodeError as exc:
        raise fail(where, f"not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except (ValueError, RecursionError):
        raise fail(where, "not readable JSON") from None
    if not isinstance(raw, dict) or "schedule" not in raw:
        raise fail(where, "not a schedule file (no 'schedule' list)")
    if raw.get("format", FILE_FORMAT) != FILE_FORMAT:
        raise fail(
            where, f"format {safe_repr(raw.get('format'), 20)} is not supported (expected 1)"
        )
    for key, check in (("test", text), ("profile", text)):
        if key in raw:
            raw[key] = check(raw[key], f"{where}: {key}")
    if "seed" in raw:
        raw["seed"] = integer(minimum=0)(raw["seed"], f"{where}: seed")
    raw["beyond"] = choice(BEYOND)(raw.get("beyond", "none"), f"{where}: beyond")
    found = ScheduleFile(raw)
    found["path"] = where
    found.decisions  # noqa: B018 - validates every entry now
    return found
