"""The rebirth runner's fault kinds: crash (step channel) and corrupt_snapshot (snapshot
channel): their parameters, their decisions and effects, and that every damage they do is one
the snapshot store catches."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.faults import (
    CALL_CHANNELS,
    CHANNELS,
    KINDS,
    RUNNER_CHANNELS,
    CallInfo,
    FaultPlan,
    corrupt,
    parse_fault,
)
from pytest_agentchaos.inject.errors import InjectedCrash, InjectedFault, failure_exception
from pytest_agentchaos.phoenix import MemorySnapshotStore
from pytest_agentchaos.phoenix.envelope import FORMAT_VERSION, Name, checked_from, decode
from pytest_agentchaos.profiles import ProfileRegistry
from pytest_agentchaos.trace.events import FaultInjected

STEP = CallInfo("step", "Collector", 9, 4.0, {"step": 7})


def snapshot_file(state: Any = None) -> tuple[Name, bytes]:
    """A real snapshot file, as the store writes it."""
    store = MemorySnapshotStore()
    info = store.save({"items": list(range(5)), "page": "seven"} if state is None else state, 3)
    return Name(info.sequence, info.step, info.milestone), store.files[info.file]


def snapshot_call(data: bytes, index: int = 1) -> CallInfo:
    args = {
        "file": "f",
        "bytes": len(data),
        "checked_from": checked_from(data),
        "version": FORMAT_VERSION,
    }
    return CallInfo("snapshot", "Collector", index, 0.0, args)


def kind(**raw: Any) -> Any:
    return parse_fault(raw, "faults[0]").kind


# -- channels --------------------------------------------------------------------------------


def test_the_runner_channels_are_added_and_the_call_kinds_keep_theirs() -> None:
    assert CHANNELS == ("tool", "http", "model", "step", "snapshot")
    assert CALL_CHANNELS + RUNNER_CHANNELS == CHANNELS
    assert KINDS["crash"].channels == ("step",)
    assert KINDS["corrupt_snapshot"].channels == ("snapshot",)
    for name, cls in KINDS.items():
        if name not in ("crash", "corrupt_snapshot"):
            assert set(cls.channels) <= set(CALL_CHANNELS), name


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"kind": "crash", "channels": "http"},
            "faults[0]: kind 'crash' cannot apply to channels ['http']; it applies to step "
            "(a PhoenixRunner's steps)",
        ),
        (
            {"kind": "corrupt_snapshot", "channels": ["tool", "model"]},
            "faults[0]: kind 'corrupt_snapshot' cannot apply to channels ['tool', 'model']; it "
            "applies to snapshot (a PhoenixRunner's snapshot loads)",
        ),
        (
            {"kind": "timeout", "channels": "step"},
            "faults[0]: kind 'timeout' cannot apply to channels ['step']; it applies to tool, "
            "http, model",
        ),
        (
            {"kind": "crash", "channels": "disk"},
            "faults[0]: channels: 'disk' is not one of tool, http, model, step, snapshot",
        ),
        ({"kind": "crash", "message": ""}, "faults[0]: message: expected a non-empty string"),
        ({"kind": "crash", "message": 3}, "faults[0]: message: expected a non-empty string"),
        ({"kind": "crash", "message": "x" * 501}, "faults[0]: message: at most 500 characters"),
        (
            {"kind": "crash", "mode": "truncate"},
            "faults[0]: unknown key 'mode' for fault kind 'crash'; allowed: message, and selector",
        ),
        (
            {"kind": "corrupt_snapshot", "mode": "shred"},
            "faults[0]: mode: 'shred' is not one of truncate, bitflip, version",
        ),
        ({"kind": "corrupt_snapshot", "mode": []}, "faults[0]: mode: must not be an empty list"),
        (
            {"kind": "corrupt_snapshot", "message": "x"},
            "faults[0]: unknown key 'message' for fault kind 'corrupt_snapshot'; allowed: mode",
        ),
    ],
)
def test_bad_runner_faults_name_the_key_and_what_is_allowed(
    raw: dict[str, Any], message: str
) -> None:
    with pytest.raises(ChaosConfigError) as caught:
        parse_fault(raw, "faults[0]")
    assert str(caught.value).startswith(message)


def test_only_the_runner_s_channels_consult_the_runner_faults() -> None:
    plan = FaultPlan(
        [
            parse_fault({"kind": "crash"}, "f"),
            parse_fault({"kind": "timeout", "probability": 0}, "f"),
        ]
    )
    assert plan.active("step") and not plan.active("snapshot")
    assert plan.decide(CallInfo("tool", "Collector", 1, 0.0, {})) is None
    decision = plan.decide(STEP)
    assert decision is not None and decision.kind.name == "crash"


# -- crash -------------------------------------------------------------------------------------


def test_crash_raises_an_injected_runtime_error_naming_the_step() -> None:
    k = kind(kind="crash", message="parser blew up")
    detail = k.decide(random.Random(0), STEP)
    assert detail == {"message": "parser blew up"}
    effect = k.effect(detail, STEP)
    assert effect.failure is not None and effect.failure.kind == "crash"
    assert effect.delay == 0 and effect.args is None and effect.transform is None
    event = FaultInjected(0, 4.0, kind="crash", channel="step", target="Collector", index=9)
    exc = failure_exception(effect.failure, event)
    assert isinstance(exc, InjectedCrash) and isinstance(exc, RuntimeError)
    assert isinstance(exc, InjectedFault) and exc.fault is event
    assert str(exc) == "parser blew up (step 7 of Collector)"
    assert "on step run 9 of 'Collector'" in exc.__notes__[0]


def test_crash_default_message() -> None:
    k = kind(kind="crash")
    effect = k.effect(k.decide(random.Random(1), STEP), STEP)
    assert effect.failure is not None
    assert effect.failure.message == "injected crash (step 7 of Collector)"


# -- corrupt_snapshot --------------------------------------------------------------------------


def test_corrupt_snapshot_draws_every_mode_by_default_and_one_when_given() -> None:
    _, data = snapshot_file()
    call = snapshot_call(data)
    drawn = [kind(kind="corrupt_snapshot").decide(random.Random(s), call) for s in range(200)]
    assert {d["mode"] for d in drawn} == {"truncate", "bitflip", "version"}
    only = kind(kind="corrupt_snapshot", mode="bitflip")
    assert {only.decide(random.Random(s), call)["mode"] for s in range(50)} == {"bitflip"}
    for detail in drawn:
        assert KINDS["corrupt_snapshot"].check_detail(detail, "d") == detail
        if detail["mode"] == "truncate":
            assert 0 <= detail["keep"] <= 0.9
        elif detail["mode"] == "bitflip":
            assert 0 <= detail["position"] < 1 and 0 <= detail["bit"] <= 7
        else:
            assert detail["version"] in (FORMAT_VERSION - 1, FORMAT_VERSION + 1)


def test_corrupt_snapshot_needs_a_file() -> None:
    k = kind(kind="corrupt_snapshot")
    assert k.decide(random.Random(0), CallInfo("snapshot", "Collector", 1, 0.0, {})) is None


def test_decisions_are_seeded_json_data_and_replay_from_the_detail_alone() -> None:
    _, data = snapshot_file()
    call = snapshot_call(data)
    k = kind(kind="corrupt_snapshot")
    for seed in range(30):
        detail = k.decide(random.Random(seed), call)
        assert detail == k.decide(random.Random(seed), call)  # the seed decides
        again = json.loads(json.dumps(detail))  # as a schedule read back from a trace
        fresh = type(k)()  # replay builds the kind without the profile's parameters
        first = k.effect(detail, call).transform
        second = fresh.effect(KINDS["corrupt_snapshot"].check_detail(again, "d"), call).transform
        assert first is not None and second is not None
        assert first(data) == second(data) != data


@pytest.mark.parametrize(
    ("detail", "fragment"),
    [
        ({"mode": "bitflip", "bit": 8}, "bit: must be <= 7"),
        ({"mode": "truncate", "keep": 1.5}, "keep: must be <= 1"),
        ({"mode": "melt"}, "mode: 'melt' is not one of"),
        ({"mode": "version", "version": -1}, "version: must be >= 0"),
        ({"mode": "bitflip", "offset": 3}, "unknown key 'offset'"),
        ({}, "missing 'mode'"),
    ],
)
def test_a_replayed_detail_is_checked(detail: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ChaosConfigError, match=fragment):
        KINDS["corrupt_snapshot"].check_detail(detail, "schedule[0]: detail")
    with pytest.raises(ChaosConfigError, match="missing 'message'"):
        KINDS["crash"].check_detail({}, "schedule[0]: detail")


def reason(name: Name, data: bytes) -> str:
    """Why the store refuses ``data`` (the test fails if it accepts it)."""
    from pytest_agentchaos.phoenix.envelope import Damaged

    with pytest.raises(Damaged) as caught:
        decode(name, data)
    return str(caught.value)


def test_each_mode_is_caught_with_its_reason() -> None:
    name, data = snapshot_file()
    assert reason(name, corrupt({"mode": "truncate", "keep": 0.5}, data)).startswith("truncated")
    assert reason(name, corrupt({"mode": "truncate", "keep": 0.0}, data)) == "empty"
    assert reason(name, corrupt({"mode": "version", "version": 2}, data)) == (
        "unknown version 2 (this reader knows 1)"
    )
    start = checked_from(data)
    assert data[start : start + 8] == b'"sha256:'
    flipped = corrupt({"mode": "bitflip", "position": 0.5, "bit": 0}, data, start)
    assert sum(a != b for a, b in zip(flipped, data, strict=True)) == 1
    assert reason(name, flipped) == "checksum mismatch"
    flipped = corrupt({"mode": "bitflip", "position": 0.3, "bit": 7}, data, start)
    assert reason(name, flipped).startswith("not UTF-8")
    assert corrupt({"mode": "version", "version": 0}, b"no version here") == b"no version here"
    with pytest.raises(ValueError, match="unknown corrupt_snapshot mode"):
        corrupt({"mode": "melt"}, data)


STATES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(state=STATES, position=st.floats(0, 1), bit=st.integers(0, 7), label=st.text(max_size=30))
def test_every_bit_flip_in_the_checked_part_is_caught(
    state: Any, position: float, bit: int, label: str
) -> None:
    store = MemorySnapshotStore()
    info = store.save(state, 5, label=label or None)
    data = store.files[info.file]
    name = Name(info.sequence, info.step, info.milestone)
    damaged = corrupt(
        {"mode": "bitflip", "position": position, "bit": bit}, data, checked_from(data)
    )
    assert damaged != data
    reason(name, damaged)  # refused, whatever the reason


@settings(max_examples=200, deadline=None)
@given(state=STATES, keep=st.floats(0, 0.9))
def test_every_truncation_is_caught(state: Any, keep: float) -> None:
    store = MemorySnapshotStore()
    info = store.save(state, 2)
    data = store.files[info.file]
    reason(
        Name(info.sequence, info.step, info.milestone),
        corrupt({"mode": "truncate", "keep": keep}, data),
    )


# -- profiles ----------------------------------------------------------------------------------


def test_a_profile_with_runner_faults_loads_and_a_wrong_channel_names_the_file(tmp_path) -> None:
    (tmp_path / "reborn.toml").write_text(
        '[[faults]]\nkind = "crash"\nnth = [3]\n\n'
        '[[faults]]\nkind = "corrupt_snapshot"\nmode = ["truncate", "version"]\n'
        "probability = 0.5\n\n[phoenix]\ninterval = 2\n"
    )
    (tmp_path / "wrong.toml").write_text('[[faults]]\nkind = "crash"\nchannels = ["http"]\n')
    registry = ProfileRegistry.default(tmp_path)
    faults = registry.get("reborn").faults
    assert [f.kind.name for f in faults] == ["crash", "corrupt_snapshot"]
    assert faults[1].kind.values["mode"] == ("truncate", "version")
    with pytest.raises(ChaosConfigError) as caught:
        registry.get("wrong")
    text = str(caught.value)
    assert "wrong.toml" in text and "faults[0]" in text and "kind 'crash' cannot apply" in text
