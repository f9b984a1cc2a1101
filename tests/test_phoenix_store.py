"""Snapshot stores: atomic, checksummed, versioned JSON; the newest healthy snapshot comes back,
every damaged one is skipped with its reason; restarts, several writers and hostile states."""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agentchaos.clock.clock import VirtualClock
from pytest_agentchaos.escape.recorder import TraceRecorder
from pytest_agentchaos.phoenix import (
    FORMAT_VERSION,
    LoadedSnapshot,
    MemorySnapshotStore,
    SnapshotError,
    SnapshotInfo,
    SnapshotStore,
    from_state,
    to_state,
)
from pytest_agentchaos.trace.events import Snapshot

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(params=["disk", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> SnapshotStore | MemorySnapshotStore:
    if request.param == "disk":
        return SnapshotStore(tmp_path / "snaps", keep=3)
    return MemorySnapshotStore(keep=3)


def read(store: SnapshotStore | MemorySnapshotStore, info: SnapshotInfo) -> bytes:
    if isinstance(store, MemorySnapshotStore):
        return store.files[info.file]
    assert info.path is not None
    return info.path.read_bytes()


def write(store: SnapshotStore | MemorySnapshotStore, info: SnapshotInfo, data: bytes) -> None:
    if isinstance(store, MemorySnapshotStore):
        store.files[info.file] = data
    else:
        assert info.path is not None
        info.path.write_bytes(data)


# --- the state protocol -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Page:
    url: str
    links: tuple[str, ...] = ()


@dataclasses.dataclass
class AgentState:
    step: int
    pages: tuple[Page, ...]
    current: Page | None = None
    notes: dict[str, list[int]] = dataclasses.field(default_factory=dict)


class Planner:
    """An object with its own state protocol."""

    def __init__(self, goal: str, tried: set[str]) -> None:
        self.goal = goal
        self.tried = tried

    def to_state(self) -> dict[str, Any]:
        return {"goal": self.goal, "tried": sorted(self.tried)}

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> Planner:
        return cls(data["goal"], set(data["tried"]))


class Memory(pydantic.BaseModel):
    facts: list[str]
    score: float
    extra: dict[str, int] = {}


class Color(str, enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


def test_round_trip_of_plain_data(store: SnapshotStore | MemorySnapshotStore) -> None:
    state = {"s": "héllo \ud800", "n": [1, -2.5, 0.0, -0.0, 10**30], "b": True, "z": None}
    info = store.save(state, step=7, label="plain")
    loaded = store.load_latest()
    assert loaded is not None
    assert loaded.state == state
    assert list(loaded.state) == ["b", "n", "s", "z"]  # canonical JSON: keys come back sorted
    assert json.dumps(loaded.state) == json.dumps(state, sort_keys=True)  # -0.0, surrogate
    assert (loaded.info.step, loaded.info.label, loaded.info.id) == (7, "plain", info.id)
    assert loaded.skipped == ()


def test_round_trip_of_a_nested_dataclass(store: SnapshotStore | MemorySnapshotStore) -> None:
    state = AgentState(3, (Page("a", ("b", "c")), Page("b")), Page("c"), {"x": [1, 2]})
    store.save(state, step=3)
    loaded = store.load_latest()
    assert loaded is not None
    assert loaded.state["pages"] == [{"url": "a", "links": ["b", "c"]}, {"url": "b", "links": []}]
    assert from_state(AgentState, loaded.state) == state


def test_round_trip_of_an_object_with_to_state(store: SnapshotStore | MemorySnapshotStore) -> None:
    store.save({"planner": Planner("find", {"b", "a"})}, step=1)
    loaded = store.load_latest()
    assert loaded is not None
    assert loaded.state == {"planner": {"goal": "find", "tried": ["a", "b"]}}
    planner = from_state(Planner, loaded.state["planner"])
    assert (planner.goal, planner.tried) == ("find", {"a", "b"})


def test_round_trip_of_a_pydantic_model(store: SnapshotStore | MemorySnapshotStore) -> None:
    model = Memory(facts=["sky is blue"], score=0.5, extra={"k": 1})
    store.save(model, step=2)
    loaded = store.load_latest()
    assert loaded is not None
    assert from_state(Memory, loaded.state) == model


def test_enums_and_tuples_become_plain_json() -> None:
    assert to_state({"c": Color.RED, "l": Level.HIGH, "t": (1, (2,))}) == {
        "c": "red",
        "l": 3,
        "t": [1, [2]],
    }
    state = {"a": [1, 2]}
    assert to_state(state) is state  # plain data is checked, not copied


def test_from_state_names_what_cannot_be_rebuilt() -> None:
    with pytest.raises(SnapshotError, match=r"cannot rebuild Memory from state: model_validate"):
        from_state(Memory, {"facts": "not a list"})
    with pytest.raises(SnapshotError, match=r"cannot rebuild AgentState from state: expected"):
        from_state(AgentState, [1])
    with pytest.raises(SnapshotError, match=r"cannot rebuild AgentState from state: TypeError"):
        from_state(AgentState, {"nope": 1})
    with pytest.raises(SnapshotError, match=r"cannot rebuild set from state: it has no"):
        from_state(set, [1])
    with pytest.raises(SnapshotError, match=r"cannot rebuild dict from state: got list"):
        from_state(dict, [1])
    assert from_state(dict, {"a": 1}) == {"a": 1}


# --- hostile states -----------------------------------------------------------------------


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


class RaisingToState:
    def to_state(self) -> Any:
        raise ValueError("half built")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class HostileAttributes:
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # pytest's parametrize looks for __name__
            raise AttributeError(name)
        raise RuntimeError(f"boom: {name}")


def _cyclic() -> dict[str, Any]:
    state: dict[str, Any] = {"a": {"b": []}}
    state["a"]["b"].append(state["a"])
    return state


def _deep(levels: int) -> list[Any]:
    top: list[Any] = []
    inner = top
    for _ in range(levels):
        inner.append([])
        inner = inner[0]
    return top


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"seen": {1, 2}}, r"^state\['seen'\]: set is not JSON data \(allowed: dict/list"),
        ({"x": [1.0, float("nan")]}, r"^state\['x'\]\[1\]: nan is not JSON data"),
        ({"x": float("-inf")}, r"^state\['x'\]: -inf is not JSON data"),
        ({"raw": b"\x00"}, r"^state\['raw'\]: bytes is not JSON data"),
        ({1: "one"}, r"^state: key 1 \(int\) is not a string"),
        ({"t": {("a", 1): 2}}, r"^state\['t'\]: key \('a', 1\) \(tuple\) is not a string"),
        (_cyclic(), r"^state\['a'\]\['b'\]\[0\]: cycle \(refers back to state\['a'\]"),
        ({"deep": _deep(200)}, r"^state\['deep'\]\[0\]\[0\].*: nested deeper than 128 levels$"),
        ({"o": BadRepr()}, r"^state\['o'\]: BadRepr is not JSON data"),
        ({"o": [RaisingToState()]}, r"^state\['o'\]\[0\]: RaisingToState.to_state\(\) raised "),
        (HostileAttributes(), r"^state: HostileAttributes is not JSON data"),
        ({"cls": Page}, r"^state\['cls'\]: class Page is not JSON data$"),
        (Page("a", (object(),)), r"^state\['links'\]\[0\]: object is not JSON data"),  # type: ignore[arg-type]
    ],
)
def test_a_state_that_is_not_json_data_is_refused_with_where_and_what(
    store: SnapshotStore | MemorySnapshotStore, state: Any, message: str
) -> None:
    with pytest.raises(SnapshotError, match=message) as caught:
        store.save(state, step=1)
    assert "\n" not in str(caught.value)
    assert len(str(caught.value)) < 300
    assert store.list() == []  # nothing was written


def test_a_deep_but_acceptable_state_is_fine(store: SnapshotStore | MemorySnapshotStore) -> None:
    store.save({"deep": _deep(120)}, step=1)
    assert store.load_latest() is not None


def test_save_checks_its_arguments(tmp_path: Path) -> None:
    for keep in (0, -1, 2.5, True, "3", None):
        with pytest.raises(ValueError, match=r"keep must be an int >= 1"):
            SnapshotStore(tmp_path, keep=keep)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"keep must be an int >= 1"):
            MemorySnapshotStore(keep=keep)  # type: ignore[arg-type]
    store = MemorySnapshotStore(max_bytes=100)
    for step in (-1, 1.0, True, None):
        with pytest.raises(ValueError, match=r"step must be an int >= 0"):
            store.save({}, step=step)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"label must be a str"):
        store.save({}, step=1, label=3)  # type: ignore[arg-type]
    with pytest.raises(
        SnapshotError, match=r"^state: \d+ bytes as a snapshot, over max_bytes=100$"
    ):
        store.save({"x": "y" * 200}, step=1)


def test_an_unwritable_directory_is_an_oserror_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(OSError, match=r"cannot use .*file/snaps for snapshots"):
        SnapshotStore(blocker / "snaps")
    store = SnapshotStore(tmp_path / "gone")
    (tmp_path / "gone").rmdir()
    (tmp_path / "gone").write_text("now a file")
    with pytest.raises(OSError, match=r"cannot save a snapshot in .*gone") as caught:
        store.save({}, step=1)
    assert isinstance(caught.value, NotADirectoryError)


# --- keeping, pruning, restarting ---------------------------------------------------------


def test_keeps_the_newest_snapshots_and_every_milestone(
    store: SnapshotStore | MemorySnapshotStore,
) -> None:
    for step in range(1, 11):
        store.save({"step": step}, step=step, milestone=step in (2, 5))
    listed = store.list()
    assert [i.step for i in listed] == [10, 9, 8, 5, 2]
    assert [i.milestone for i in listed] == [False, False, False, True, True]
    assert [i.sequence for i in listed] == [10, 9, 8, 5, 2]
    assert listed[-1].file == "snap-000000000002-step-000002-milestone.json"


def test_bad_snapshots_do_not_count_towards_keep(
    store: SnapshotStore | MemorySnapshotStore,
) -> None:
    for step in range(1, 4):
        store.save({"step": step}, step=step)
    store.mark_bad(store.list()[0])
    store.save({"step": 4}, step=4)  # keeps 4, 2, 1 (good) and 3 (bad, but newer than 1)
    assert [(i.step, i.bad) for i in store.list()] == [
        (4, False),
        (3, True),
        (2, False),
        (1, False),
    ]
    store.save({"step": 5}, step=5)
    assert [i.step for i in store.list()] == [5, 4, 3, 2]
    store.save({"step": 6}, step=6)
    assert [(i.step, i.bad) for i in store.list()] == [(6, False), (5, False), (4, False)]
    if isinstance(store, SnapshotStore):
        assert not list(store.directory.glob("*.bad"))  # markers went with their snapshots


def test_a_restarted_store_finds_the_snapshots_and_continues_the_sequence(
    tmp_path: Path,
) -> None:
    first = SnapshotStore(tmp_path, keep=2)
    for step in (1, 2, 3):
        first.save({"step": step}, step=step)
    again = SnapshotStore(tmp_path, keep=2)
    loaded = again.load_latest()
    assert loaded is not None
    assert (loaded.state, loaded.info.sequence) == ({"step": 3}, 3)
    info = again.save({"step": 1}, step=1)  # a rebirth saves an older step: still newest
    assert info.sequence == 4
    assert info.file == "snap-000000000004-step-000001.json"
    newest = SnapshotStore(tmp_path).load_latest()
    assert newest is not None
    assert newest.state == {"step": 1}


def test_temp_files_of_a_crashed_writer_are_ignored_and_cleaned(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    store.save({"ok": 1}, step=1)
    (tmp_path / ".tmp-crashed").write_bytes(b'{"format": "pytest-agentchaos-snapshot", "ver')
    (tmp_path / "notes.txt").write_text("not ours")
    (tmp_path / "snap-0000000000009-step-000001.json").write_text("{}")  # not a name we write
    assert [i.step for i in store.list()] == [1]
    loaded = store.load_latest()
    assert loaded is not None
    assert (loaded.state, loaded.skipped) == ({"ok": 1}, ())
    store.save({"ok": 2}, step=2)
    assert not (tmp_path / ".tmp-crashed").exists()
    assert (tmp_path / "notes.txt").exists()
    assert store.save({"ok": 3}, step=3).sequence == 3


def test_a_directory_removed_under_the_store_has_no_snapshots(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path / "snaps")
    (tmp_path / "snaps").rmdir()
    assert (store.list(), store.load_latest(), store.last_skipped) == ([], None, ())


def test_the_file_is_a_json_envelope(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path, clock=VirtualClock())
    info = store.save({"b": [1, 2], "a": "x"}, step=42, label="first")
    assert info.path is not None
    envelope = json.loads(info.path.read_text("utf-8"))
    canonical = b'{"a":"x","b":[1,2]}'
    assert envelope == {
        "format": "pytest-agentchaos-snapshot",
        "version": FORMAT_VERSION,
        "id": "snap-000000000001",
        "step": 42,
        "label": "first",
        "milestone": False,
        "created": 0.0,
        "checksum": "sha256:" + hashlib.sha256(canonical).hexdigest(),
        "state": {"a": "x", "b": [1, 2]},
    }
    assert info.path.name == "snap-000000000001-step-000042.json"
    assert info.size == info.path.stat().st_size


def test_an_envelope_in_another_layout_still_loads_when_its_checksum_holds(
    store: SnapshotStore | MemorySnapshotStore,
) -> None:
    info = store.save({"b": 1, "a": [True, None]}, step=1, label="x")
    envelope = json.loads(read(store, info))
    write(store, info, json.dumps(envelope, indent=2, ensure_ascii=False).encode())
    loaded = store.load_latest()
    assert loaded is not None
    assert (loaded.state, loaded.info.label) == ({"b": 1, "a": [True, None]}, "x")
    envelope["state"]["b"] = 2
    write(store, info, json.dumps(envelope, indent=2).encode())
    assert store.load_latest() is None
    assert [s.reason for s in store.last_skipped] == ["checksum mismatch"]


# --- damaged snapshots --------------------------------------------------------------------


def _envelope_with(data: bytes, **changes: Any) -> bytes:
    envelope = json.loads(data)
    envelope.update(changes)
    return json.dumps(envelope).encode()


DAMAGES = [
    ("empty", lambda data: b"", "empty"),
    ("truncated", lambda data: data[: len(data) // 2], "truncated: "),
    ("cut at the end", lambda data: data[:-3], "truncated: Expecting ',' delimiter"),
    ("garbage", lambda data: b"#!" + data, "not JSON: Expecting value: line 1 column 1"),
    ("not utf-8", lambda data: data.replace(b'"label"', b'"lab\xffl"'), "not UTF-8 (byte "),
    ("checksum", lambda data: data.replace(b'"step":2', b'"step":9'), "checksum mismatch"),
    ("version", lambda data: _envelope_with(data, version=2), "unknown version 2 (this reader"),
    ("format", lambda data: _envelope_with(data, format="x"), "not a snapshot envelope: format"),
    ("a list", lambda data: b"[1, 2]", "not a snapshot envelope: a JSON array"),
    (
        "no state",
        lambda data: b'{"format": "pytest-agentchaos-snapshot", "version": 1}',
        "not a snapshot envelope: id None does not match its file name",
    ),  # fmt: skip
    ("step", lambda data: _envelope_with(data, step=3), "not a snapshot envelope: step 3 does"),
    (
        "NaN",
        lambda data: data.replace(b'"created": ', b'"created": NaN, "x": '),
        "not JSON: NaN is not JSON",
    ),  # fmt: skip
    ("too large", lambda data: data + b" " * 5000, "too large (5"),
]


@pytest.mark.parametrize(("damage", "expected"), [(d[1], d[2]) for d in DAMAGES],
                         ids=[d[0] for d in DAMAGES])  # fmt: skip
def test_a_damaged_snapshot_is_skipped_with_its_reason_for_the_next_older(
    store: SnapshotStore | MemorySnapshotStore, damage: Any, expected: str
) -> None:
    store.max_bytes = 4096
    store.save({"step": 1}, step=1, label="one")
    newest = store.save({"step": 2}, step=2, label="two")
    write(store, newest, damage(read(store, newest)))
    loaded = store.load_latest()
    assert loaded is not None
    assert loaded.state == {"step": 1}
    assert loaded.info.label == "one"
    assert [(s.info.file, s.reason[: len(expected)]) for s in loaded.skipped] == [
        (newest.file, expected)
    ]
    assert store.last_skipped == loaded.skipped
    listed = store.list()  # a damaged file is still listed, by what its name says
    assert [(i.step, i.sequence) for i in listed] == [(2, 2), (1, 1)]
    with pytest.raises(SnapshotError, match=r"^snapshot snap-000000000002-step-000002.json: "):
        store.load(newest)


def test_when_nothing_is_healthy_the_skipped_are_still_there(
    store: SnapshotStore | MemorySnapshotStore,
) -> None:
    assert store.load_latest() is None
    assert not store.last_skipped
    one = store.save({"step": 1}, step=1)
    two = store.save({"step": 2}, step=2)
    write(store, two, b"")
    store.mark_bad(one)
    assert store.load_latest() is None
    assert [(s.info.step, s.reason) for s in store.last_skipped] == [
        (2, "empty"),
        (1, "marked bad"),
    ]
    assert store.load(one).state == {"step": 1}  # explicitly asked for: loads anyway


def test_health_check_failing_or_raising_skips_the_snapshot(
    store: SnapshotStore | MemorySnapshotStore,
) -> None:
    for step in (1, 2, 3):
        store.save({"step": step}, step=step)

    class Hostile(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no str")

    def check(state: dict[str, int]) -> bool:
        if state["step"] == 3:
            raise KeyError("loop detected")
        if state["step"] == 2:
            raise Hostile
        return True

    loaded = store.load_latest(health_check=check)
    assert loaded is not None
    assert loaded.state == {"step": 1}
    reasons = [s.reason for s in loaded.skipped]
    assert reasons[0] == "health check raised KeyError: 'loop detected'"
    assert reasons[1].startswith("health check raised Hostile: <")
    assert reasons[1].endswith("Hostile (str failed: RuntimeError)>")
    loaded = store.load_latest(health_check=lambda state: state["step"] < 3)
    assert loaded is not None
    assert loaded.state == {"step": 2}
    assert [s.reason for s in loaded.skipped] == ["health check failed"]
    assert store.load_latest(health_check=lambda state: 0) is None
    assert len(store.last_skipped) == 3


def test_mark_bad_survives_a_restart(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    store.save({"step": 1}, step=1)
    loaded = store.load_latest()
    store.save({"step": 2}, step=2)
    newest = store.load_latest()
    assert loaded is not None and newest is not None
    store.mark_bad(newest.info)
    again = SnapshotStore(tmp_path).load_latest()
    assert again is not None
    assert again.state == {"step": 1}
    assert [(s.info.step, s.reason) for s in again.skipped] == [(2, "marked bad")]
    assert [i.bad for i in SnapshotStore(tmp_path).list()] == [True, False]


def test_a_snapshot_pruned_while_loading_is_not_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = MemorySnapshotStore()
    store.save({"step": 1}, step=1)
    newest = store.save({"step": 2}, step=2)
    files = store._files
    real = files.read

    def read_once(name: str, max_bytes: int) -> bytes:
        if name == newest.file:
            files.delete(name)  # another process pruned it between list and read
        return real(name, max_bytes)

    monkeypatch.setattr(files, "read", read_once)
    loaded = store.load_latest()
    assert loaded is not None
    assert (loaded.state, loaded.skipped) == ({"step": 1}, ())


def test_mark_bad_of_a_pruned_snapshot_is_a_no_op(
    store: SnapshotStore | MemorySnapshotStore,
) -> None:
    first = store.save({}, step=1)
    for step in (2, 3, 4):
        store.save({}, step=step)
    store.mark_bad(first)
    assert all(not i.bad for i in store.list())


# --- events -------------------------------------------------------------------------------


def test_snapshot_events_are_recorded_small(tmp_path: Path) -> None:
    recorder = TraceRecorder()
    store = SnapshotStore(tmp_path, keep=2, recorder=recorder)
    first = store.save({"secret": "x" * 1000}, step=1, label="start", milestone=True)
    second = store.save({"secret": "y" * 1000}, step=2)
    (tmp_path / second.file).write_bytes(b"{")
    loaded = store.load_latest()
    assert loaded is not None
    store.mark_bad(loaded.info)
    events = recorder.trace.of_type(Snapshot)
    assert [(e.snapshot_id, e.action) for e in events] == [
        ("snap-000000000001", "saved"),
        ("snap-000000000002", "saved"),
        ("snap-000000000002", "skipped"),
        ("snap-000000000001", "restored"),
        ("snap-000000000001", "marked_bad"),
    ]
    assert events[0].detail == {"step": 1, "label": "start", "milestone": True, "bytes": first.size}
    assert events[2].detail["file"] == second.file
    assert events[2].detail["reason"].startswith("truncated: ")
    assert events[3].detail == {"step": 1}
    assert all("secret" not in json.dumps(e.detail) for e in events)


# --- damage of every kind, by search ------------------------------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.lists(JSON, min_size=2, max_size=3),
    damage=st.one_of(
        st.tuples(st.just("cut"), st.floats(0, 1)),
        st.tuples(st.just("flip"), st.floats(0, 1), st.integers(0, 7)),
    ),
)
def test_damage_to_the_newest_file_never_restores_a_state_that_was_not_saved(
    data: list[Any], damage: tuple[Any, ...]
) -> None:
    store = MemorySnapshotStore(keep=5)
    saved = [{"step": n, "data": value} for n, value in enumerate(data, 1)]
    infos = [store.save(state, step=n) for n, state in enumerate(saved, 1)]
    newest = infos[-1]
    original = store.files[newest.file]
    if damage[0] == "cut":
        damaged = original[: int(damage[1] * (len(original) - 1))]
    else:
        at = int(damage[1] * (len(original) - 1))
        damaged = original[:at] + bytes([original[at] ^ (1 << damage[2])]) + original[at + 1 :]
    store.files[newest.file] = damaged
    loaded = store.load_latest()
    assert loaded is not None  # the older snapshots are intact
    assert loaded.state in saved
    index = saved.index(loaded.state)
    assert _canonical(loaded.state) == _canonical(saved[index])
    if loaded.info.sequence == newest.sequence:
        # it passed although damaged: the damage missed the state (JSON whitespace, the
        # header's label or time), and the state's checksum was verified
        assert _canonical(loaded.state) == _canonical(saved[-1])
        assert loaded.skipped == ()
    else:
        assert index == len(saved) - 2
        assert [s.info.sequence for s in loaded.skipped] == [newest.sequence]


# --- several writers ----------------------------------------------------------------------

_WRITER = textwrap.dedent(
    """
    import sys
    from pytest_agentchaos.phoenix import SnapshotStore
    directory, who, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = SnapshotStore(directory, keep=int(sys.argv[4]))
    print("ready", flush=True)
    sys.stdin.readline()
    for n in range(count):
        info = store.save({"who": who, "n": n, "pad": "x" * (n * 50)}, step=n)
        print(info.sequence, flush=True)
    """
)


@pytest.mark.parametrize("keep", [1000, 3])
def test_two_processes_saving_to_one_directory(tmp_path: Path, keep: int) -> None:
    count = 40
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(tmp_path), who, str(count), str(keep)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )  # fmt: skip
        for who in "ab"
    ]
    for writer in writers:
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    for writer in writers:  # both start at once
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    sequences = []
    for writer in writers:
        out, _ = writer.communicate(timeout=60)
        assert writer.returncode == 0
        sequences += [int(line) for line in out.split()]
    assert sorted(sequences) == list(range(1, 2 * count + 1))  # unique, no gaps
    store = SnapshotStore(tmp_path, keep=keep)
    listed = store.list()
    assert len(listed) == min(keep, 2 * count)
    assert [i.sequence for i in listed] == sorted(sequences, reverse=True)[: len(listed)]
    for info in listed:
        loaded: LoadedSnapshot = store.load(info)
        assert loaded.state["n"] == info.step
        assert loaded.state["pad"] == "x" * (info.step * 50)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("snap-")) == [".lock"]
