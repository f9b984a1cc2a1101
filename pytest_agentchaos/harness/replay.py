"""Replay from a file: re-run a test with the fault decisions its trace recorded, not with
those its plan would draw now (``--chaos-replay=PATH``), so a CI failure reproduces on a
laptop after the profile changed. Free of pytest.

``PATH`` is a trace file, an ``index.json`` or a report dir (its ``index.json`` names each
test's trace). A run that makes another call than the recorded one (other arguments, a call
the recorded run did not make, or fewer calls) *diverges*: :class:`Divergence` says where.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import fail
from ..errors import ChaosConfigError
from ..profiles.budgets import Budgets, parse_budgets
from ..saferepr import safe_repr, safe_str
from ..trace.events import Event, ModelCall, ToolCall

__all__ = [
    "REPLAY_DIR",
    "Divergence",
    "Recorded",
    "ReplayPlace",
    "ReplaySource",
    "load_source",
    "replay_place",
]

_WHERE = "--chaos-replay"
#: The ``detector`` of the ``Detection`` a diverging replay records.
DETECTOR = "replay"

_CallKey = tuple[str, str, int]


@dataclass(frozen=True)
class Recorded:
    """What a recorded run decided and did: enough to run it again the same way."""

    test: str
    seed: int
    profile: str
    budgets: Budgets | None
    schedule: list[dict[str, Any]]
    #: each call (channel, target, index) -> its arguments as recorded (canonical JSON)
    calls: dict[_CallKey, str]
    #: the calls in the order the recorded run made them
    order: list[_CallKey]
    source: Path


class ReplaySource:
    """The recorded runs a ``--chaos-replay`` path holds, by node id (each trace read when
    its test runs)."""

    def __init__(self, path: Path, traces: Mapping[str, Path], meta: Mapping[str, Any]) -> None:
        self.path = path
        self.traces = dict(traces)
        #: the session's seed, profile option and runs, when the file says
        self.meta = dict(meta)

    def options(
        self, seed: int | None, profile_option: str | None, runs: int | None, registry: Any
    ) -> tuple[int | None, str | None, int, bool]:
        """The session seed, profile option and runs of a replay: those given, else the
        recorded ones, so the ids of the recorded runs are collected again. A recorded matrix
        is taken whole (a profile gone since replays under ``none``'s tables); a single
        recorded profile only while it exists. The last item: whether the profile option is
        the recorded matrix (its gone profiles need no checking)."""
        meta = self.meta
        seed = seed if seed is not None else meta.get("session_seed")
        recorded = str(meta.get("profile_option") or "").strip()
        matrix = profile_option is None and "," in recorded
        single = profile_option is None and bool(recorded) and registry.path(recorded) is not None
        if matrix or single:
            profile_option = recorded
        return seed, profile_option, runs or meta.get("runs") or 1, matrix

    def reads_from(self, directory: Path) -> bool:
        """Whether this source's files are in ``directory`` (a report dir a replay must not
        write: its traces and index are the recording)."""
        try:
            root = directory.resolve()
            return any(p.resolve().is_relative_to(root) for p in (self.path, *self.traces.values()))
        except (OSError, RuntimeError, ValueError):  # a path that cannot be resolved
            return True  # not written: the safe answer

    def own_dirs(
        self, report_dir: Path | None, trace_dir: Path | None
    ) -> tuple[Path | None, Path | None]:
        """The report dir and trace dir of this replay, never one it reads from: a report dir
        that holds what it replays gives way to its ``replay/`` folder, a trace dir that holds
        it (or lies in a report dir that gave way) to the report dir's ``traces/`` folder;
        ``None`` where there is no such place (nothing is written there)."""
        moved = report_dir
        if report_dir is not None and self.reads_from(report_dir):
            moved = report_dir / REPLAY_DIR
            if self.reads_from(moved):
                moved = None
        if trace_dir is not None and (
            self.reads_from(trace_dir)
            or (moved != report_dir and report_dir is not None and _inside(trace_dir, report_dir))
        ):
            trace_dir = moved / "traces" if moved is not None else None
        for folder in (moved, trace_dir):
            try:
                if folder is not None:
                    folder.mkdir(parents=True, exist_ok=True)
            except OSError:
                return None, None
        return moved, trace_dir

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.traces

    def recorded(self, node_id: str) -> Recorded:
        """The recorded run of ``node_id``; ``ChaosConfigError`` (one line naming the file)
        when its trace cannot be read or is not one."""
        path = self.traces[node_id]
        data = _read_json(path)
        if not isinstance(data, dict) or "events" not in data:
            raise fail(f"{_WHERE}: {path}", "not a pytest-agentchaos trace (no 'events')")
        return _recorded(data, path)


def load_source(raw: str, cwd: Path) -> ReplaySource:
    """Read what ``--chaos-replay=raw`` names (relative to ``cwd``): a trace file, an index
    file or a report dir. ``ChaosConfigError``, one line naming the file and what is wrong."""
    if not raw.strip():
        raise fail(_WHERE, "expected a trace file or a report dir, got an empty path")
    path = cwd / Path(raw).expanduser()
    if path.is_dir():
        index = path / "index.json"
        if not index.is_file():
            raise fail(f"{_WHERE}: {path}", "a directory without index.json (not a report dir)")
        path = index
    data = _read_json(path)
    if isinstance(data, dict) and "events" in data:
        meta = data.get("meta")
        test = meta.get("test") if isinstance(meta, dict) else None
        if not isinstance(test, str) or not test:
            raise fail(f"{_WHERE}: {path}", "the trace names no test (meta.test)")
        _check_format(data, path, "trace")
        return ReplaySource(path, {test: path}, _session(meta, path))
    if isinstance(data, dict) and "tests" in data and isinstance(data["tests"], list):
        _check_format(data, path, "index")
        traces: dict[str, Path] = {}
        for i, entry in enumerate(data["tests"]):
            if not isinstance(entry, dict) or not isinstance(entry.get("node_id"), str):
                raise fail(f"{_WHERE}: {path}", f"tests[{i}] is not a test entry with a node_id")
            trace = entry.get("trace")
            if isinstance(trace, str) and "\0" in trace:
                raise fail(f"{_WHERE}: {path}", f"tests[{i}].trace is not a file name (a NUL byte)")
            if isinstance(trace, str) and trace:
                traces[entry["node_id"]] = path.parent / trace
        if not traces:
            raise fail(f"{_WHERE}: {path}", "the index names no trace file (traces not written)")
        return ReplaySource(path, traces, _session(data, path))
    raise fail(f"{_WHERE}: {path}", "neither a pytest-agentchaos trace nor a report index")


def _inside(path: Path, directory: Path) -> bool:
    try:
        return path.resolve().is_relative_to(directory.resolve())
    except (OSError, RuntimeError, ValueError):
        return True


def _session(meta: Any, path: Path) -> dict[str, Any]:
    """The recorded session's seed, profile option and runs, checked like the options that
    set them (a seed is a non-negative integer; runs 1 to ``MAX_RUNS``)."""
    if not isinstance(meta, dict):
        return {}
    from .spec import MAX_RUNS

    found = {k: meta[k] for k in ("session_seed", "profile_option", "runs") if k in meta}
    found = {k: v for k, v in found.items() if v is not None}
    where = f"{_WHERE}: {path}"
    seed = found.get("session_seed")
    if seed is not None and (type(seed) is not int or seed < 0):
        raise fail(where, f"session_seed is {safe_repr(seed, 40)}, not a non-negative integer")
    runs = found.get("runs")
    if runs is not None and (type(runs) is not int or not 1 <= runs <= MAX_RUNS):
        raise fail(where, f"runs is {safe_repr(runs, 40)}, not 1 to {MAX_RUNS}")
    option = found.get("profile_option")
    if option is not None and (not isinstance(option, str) or "\0" in option):
        raise fail(where, f"profile_option is {safe_repr(option, 40)}, not a profile name")
    return found


def _check_format(data: Mapping[str, Any], path: Path, what: str) -> None:
    version = data.get("format", 1)
    if type(version) is not int or version != 1:
        raise fail(
            f"{_WHERE}: {path}",
            f"{what} format {safe_repr(data.get('format'), 40)} is not supported (expected 1)",
        )


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise fail(f"{_WHERE}: {path}", "no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: a NUL in the name
        reason = getattr(exc, "strerror", None) or str(exc)
        raise fail(f"{_WHERE}: {path}", f"cannot read it: {reason}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(
            f"{_WHERE}: {path}", f"not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise fail(f"{_WHERE}: {path}", "nested too deeply to be a recording") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise fail(f"{_WHERE}: {path}", f"not readable JSON: {safe_str(exc, 120)}") from None


def _recorded(data: Mapping[str, Any], path: Path) -> Recorded:
    from ..trace.trace import Trace

    where = f"{_WHERE}: {path}"
    try:
        trace = Trace.from_dict(dict(data))
    except RecursionError:
        raise fail(where, "nested too deeply to be a recording") from None
    except (ValueError, TypeError) as exc:
        raise fail(where, str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    meta = trace.meta if isinstance(trace.meta, dict) else {}
    seed, profile = meta.get("seed"), meta.get("profile")
    if type(seed) is not int or not isinstance(profile, str):
        raise fail(where, "the trace's meta has no seed and profile")
    if seed < 0:
        raise fail(where, f"the trace's seed is {seed}, not a non-negative integer")
    if "\0" in profile:
        raise fail(where, f"the trace's profile {safe_repr(profile, 40)} is not a profile name")
    try:
        budgets = parse_budgets(meta.get("budgets"), "budgets") if "budgets" in meta else None
    except ChaosConfigError as exc:
        raise fail(where, f"meta: {exc}") from None
    schedule = trace.schedule()
    try:  # checked now, to name the file (the run would only name the entry)
        from ..faults.plan import FaultPlan

        FaultPlan.from_schedule(schedule)
    except ChaosConfigError as exc:
        raise fail(where, f"its recorded faults: {exc}") from None
    calls: dict[_CallKey, str] = {}
    order: list[_CallKey] = []
    for event in trace:
        found = _call(event)
        if found is not None and found[0] not in calls:
            calls[found[0]] = found[1]
            order.append(found[0])
    return Recorded(
        test=str(meta.get("test", "")),
        seed=seed,
        profile=profile,
        budgets=budgets,
        schedule=schedule,
        calls=calls,
        order=order,
        source=path,
    )


def _call(event: Event) -> tuple[_CallKey, str] | None:
    if isinstance(event, ToolCall):
        return (event.channel, event.tool, event.index), _canonical(event.args)
    if isinstance(event, ModelCall):
        return ("model", event.model, event.index), _canonical(event.input)
    return None


#: A memory address in a recorded repr (``<Db object at 0x7f3e...>``): another each run.
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")


def _canonical(value: Any) -> str:
    """A call's arguments as text that compares equal after a JSON round trip, memory
    addresses masked (an object recorded as its repr is the same object in a replay)."""
    try:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = safe_repr(value, 2000)
    return _ADDRESS.sub("0x?", text) if "0x" in text else text


class Divergence:
    """Watches a replayed run's calls against the recorded ones (by channel, target and call
    number, so threads that interleave differently do not diverge) and keeps the first
    difference; :meth:`finish` also notes recorded calls the replay never made."""

    def __init__(self, recorded: Recorded, subscribe: Callable[[Callable[[Event], None]], Any]):
        self.recorded = recorded
        self.first: str | None = None
        self.seen: set[_CallKey] = set()
        self._unsubscribe = subscribe(self)

    def __call__(self, event: Event) -> None:
        found = _call(event)
        if found is None:
            return
        key, args = found
        self.seen.add(key)
        if self.first is not None:
            return
        expected = self.recorded.calls.get(key)
        channel, target, index = key
        what = f"call {index} of {channel} {target!r}"
        if expected is None:
            self.first = f"at step {event.step}: {what} was not made in the recorded run"
        elif expected != args:
            self.first = (
                f"at step {event.step}: {what} had other arguments: recorded "
                f"{_cut(expected)}, now {_cut(args)}"
            )

    def finish(self) -> str | None:
        """Stop watching; the divergence (None: the replay made the recorded calls)."""
        self._unsubscribe()
        if self.first is None:
            missing = [k for k in self.recorded.order if k not in self.seen]
            if missing:
                channel, target, index = missing[0]
                self.first = (
                    f"it ended without {len(missing)} recorded call(s), the first: "
                    f"call {index} of {channel} {target!r}"
                )
        return self.first


def _cut(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


#: The folder of a report dir that a replay of its recording writes its own report into.
REPLAY_DIR = "replay"


@dataclass(frozen=True)
class ReplayPlace:
    """Where a session that replays a recorded one writes its report, and why."""

    #: the recording's report dir, left as it was
    recording: Path
    #: this session's report dir (its traces in ``traces/``)
    report_dir: Path
    #: how many of the recorded runs this session runs again, of how many
    rerun: int
    recorded: int


def replay_place(report_dir: Path, seed: int, collected: Iterable[str]) -> ReplayPlace | None:
    """The place of this session's report when ``report_dir`` holds the recording of a
    session under the same seed (``--chaos-seed`` of its replay command) of which this
    session runs only some runs: writing there would drop the others from its index and
    replace the traces a later ``--chaos-replay`` reads. ``None``: write in place (no
    recording, another seed, or every recorded run runs again)."""
    index = report_dir / "index.json"
    try:
        if not index.is_file():
            return None
        data = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None  # not a recording this session could lose: a new report replaces it
    if not isinstance(data, dict) or type(data.get("session_seed")) is not int:
        return None
    if data["session_seed"] != seed:
        return None
    tests = data.get("tests")
    if not isinstance(tests, list):
        return None
    recorded = {t["node_id"] for t in tests if isinstance(t, dict) and isinstance(
        t.get("node_id"), str)}  # fmt: skip
    ids = set(collected)
    if not recorded or recorded <= ids:
        return None
    return ReplayPlace(report_dir, report_dir / REPLAY_DIR, len(recorded & ids), len(recorded))
