"""Fault kinds of the rebirth runner: ``crash`` on its ``step`` channel and ``corrupt_snapshot``
on its ``snapshot`` channel.

In a chaos run the :class:`~pytest_agentchaos.phoenix.PhoenixRunner` asks the plan before each
step it runs and before each snapshot load, as the injectors ask it before each call. The
target is the runner's name (its agent's class name by default), so ``tools`` globs pick a
runner. On ``step`` the index counts the steps the runner has run (replays after a rebirth
included) and ``args`` hold ``step``, the agent's step number; on ``snapshot`` the index counts
loads and ``args`` describe the newest snapshot file (``file``, ``bytes``, ``checked_from``:
where its checksummed part begins, ``version``: its format version).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from ..saferepr import short
from .effects import Effect, Failure
from .kinds import CallInfo, FaultKind, register
from .params import choice, fail, integer, number, one_or_many, text

__all__ = ["MAX_MESSAGE", "SNAPSHOT_MODES", "Crash", "CorruptSnapshot", "corrupt"]

#: How ``corrupt_snapshot`` may damage a file.
SNAPSHOT_MODES = ("truncate", "bitflip", "version")
#: The longest message a ``crash`` may carry.
MAX_MESSAGE = 500
#: The most of a file ``truncate`` keeps: a cut this deep always breaks the JSON.
_MAX_KEEP = 0.9

_VERSION = re.compile(rb'"version"\s*:\s*-?\d+')


def _message(value: Any, where: str) -> str:
    message: str = text(value, where)
    if len(message) > MAX_MESSAGE:
        raise fail(where, f"at most {MAX_MESSAGE} characters, got {len(message)}")
    return message


_fraction = number(minimum=0, maximum=1)


@register
class Crash(FaultKind):
    """The runner's step raises an unexpected exception (``InjectedCrash``, a ``RuntimeError``)
    instead of running; the runner treats it as a crash of the agent's step function.
    ``message`` is what the exception says (``"injected crash"`` by default)."""

    name = "crash"
    summary = "the agent's step raises an unexpected exception instead of running (PhoenixRunner)"
    params = {"message": _message}
    defaults = {"message": "injected crash"}
    details = {"message": _message}
    channels = ("step",)

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any]:
        return {"message": self.values["message"]}

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        step = call.args.get("step")
        at = f"step {step} of {call.target}" if step is not None else call.target
        return Effect(failure=Failure("crash", f"{detail['message']} ({at})"))


@register
class CorruptSnapshot(FaultKind):
    """The newest snapshot file is damaged before the runner loads it, by one of ``mode``
    (all three by default, drawn by the seeded RNG): ``truncate`` keeps at most 90% of its
    bytes, ``bitflip`` flips one bit in its checked part (the checksum and the state),
    ``version`` rewrites its format version to another release's (one older or one newer).
    Each damage is one the store's checks catch: the load skips the file, with the reason,
    and restores an older snapshot. It does not fire when there is no snapshot."""

    name = "corrupt_snapshot"
    summary = "the newest snapshot is truncated, bit-flipped or given another format version"
    params = {"mode": one_or_many(choice(SNAPSHOT_MODES))}
    defaults = {"mode": SNAPSHOT_MODES}
    channels = ("snapshot",)
    details = {
        "mode": choice(SNAPSHOT_MODES),
        "keep": _fraction,
        "position": _fraction,
        "bit": integer(minimum=0, maximum=7),
        "version": integer(minimum=0),
    }
    optional_details = ("keep", "position", "bit", "version")

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any] | None:
        if not call.args.get("bytes"):
            return None  # nothing to corrupt
        modes = self.values["mode"]
        mode = modes[rng.randrange(len(modes))] if len(modes) > 1 else modes[0]
        if mode == "truncate":
            return {"mode": mode, "keep": round(rng.uniform(0, _MAX_KEEP), 3)}
        if mode == "bitflip":
            return {"mode": mode, "position": round(rng.random(), 6), "bit": rng.randrange(8)}
        current = call.args.get("version")
        current = current if isinstance(current, int) and not isinstance(current, bool) else 1
        others = [v for v in (current - 1, current + 1) if v >= 0]
        return {"mode": mode, "version": others[rng.randrange(len(others))]}

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        fixed = dict(detail)
        start = call.args.get("checked_from", 0)
        start = start if isinstance(start, int) and not isinstance(start, bool) else 0
        return Effect(transform=lambda data: corrupt(fixed, data, start))


def corrupt(detail: Mapping[str, Any], data: bytes, start: int = 0) -> bytes:
    """``data`` damaged as ``detail`` says (a ``corrupt_snapshot`` decision).

    ``truncate`` keeps the first ``keep`` fraction of the bytes (always cutting at least two,
    so a JSON document's closing brace goes); ``bitflip`` flips bit ``bit`` of the byte at
    ``position`` (a fraction) of the part from ``start`` on; ``version`` rewrites the first
    ``"version": <n>`` field to ``version`` (data without one is returned unchanged).
    """
    mode = detail.get("mode")
    if mode == "truncate":
        keep = int(float(detail.get("keep", 0.5)) * len(data))
        return data[: max(0, min(keep, len(data) - 2))]
    if mode == "bitflip":
        if not data:
            return data
        start = min(max(0, start), len(data) - 1)
        offset = start + int(float(detail.get("position", 0.5)) * (len(data) - start))
        flipped = bytearray(data)
        flipped[min(offset, len(data) - 1)] ^= 1 << int(detail.get("bit", 0))
        return bytes(flipped)
    if mode == "version":
        version = int(detail.get("version", 0))
        return _VERSION.sub(b'"version": %d' % version, data, count=1)
    raise ValueError(f"unknown corrupt_snapshot mode {short(mode)}")
