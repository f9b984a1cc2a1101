"""Selectors: which calls a fault may hit.

All conditions must hold: tool-name globs, channel, nth call / first N / every k-th,
virtual-time window and a total ``max_count``. ``probability`` is drawn last, from a stable
hash of (seed, fault, channel, tool, call index), so one tool's draws do not depend on how
calls to other tools interleave.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..saferepr import short
from .kinds import CHANNELS, CallInfo
from .params import choice, fail, integer, number, one_or_many

SELECTOR_KEYS = ("tools", "channels", "probability", "first", "nth", "every", "max_count", "window")


@dataclass(frozen=True, slots=True)
class Selector:
    """Conditions on a call; ``None`` means "no condition"."""

    tools: tuple[str, ...] = ("*",)
    channels: tuple[str, ...] | None = None
    probability: float = 1.0
    first: int | None = None
    nth: tuple[int, ...] | None = None
    every: int | None = None
    max_count: int | None = None
    window: tuple[float, float] | None = None
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        regex = "|".join(f"(?:{fnmatch.translate(g)})" for g in self.tools)
        object.__setattr__(self, "_pattern", re.compile(regex))

    def matches_target(self, target: str) -> bool:
        """Whether ``target`` (a tool or route name) matches one of the ``tools`` globs."""
        return self._pattern.match(target) is not None

    def matches(self, call: CallInfo) -> bool:
        """Every condition but ``probability`` and ``max_count`` (the plan owns those)."""
        return self.matches_call(call) and self.matches_target(call.target)

    def matches_call(self, call: CallInfo) -> bool:
        """Every condition but the ``tools`` globs, ``probability`` and ``max_count``: for a
        call whose target is known to match."""
        if self.channels is not None and call.channel not in self.channels:
            return False
        if self.first is not None and call.index > self.first:
            return False
        if self.nth is not None and call.index not in self.nth:
            return False
        if self.every is not None and call.index % self.every != 0:
            return False
        return self.window is None or self.window[0] <= call.t < self.window[1]

    def to_dict(self) -> dict[str, Any]:
        """The selector's keys of a fault table: ``tools`` and every condition that is set."""
        out: dict[str, Any] = {"tools": list(self.tools)}
        for key in SELECTOR_KEYS[1:]:
            value = getattr(self, key)
            if value is not None and not (key == "probability" and value == 1.0):
                out[key] = list(value) if isinstance(value, tuple) else value
        return out


def _globs(value: Any, where: str) -> tuple[str, ...]:
    def one(v: Any, w: str) -> str:
        if not isinstance(v, str) or not v:
            raise fail(w, f"expected a tool-name glob (a non-empty string), got {short(v)}")
        return v

    return tuple(one_or_many(one)(value, where))


def _window(value: Any, where: str) -> tuple[float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise fail(where, f"expected [start, end] in virtual seconds, got {short(value)}")
    start = number(minimum=0)(value[0], where)
    end = value[1] if value[1] == math.inf else number(minimum=0)(value[1], where)
    if end <= start:
        raise fail(where, f"window end {end:g} must be after start {start:g}")
    return (start, end)


def parse_selector(raw: Mapping[str, Any], where: str) -> Selector:
    """Build a selector from the selector keys of one fault table."""
    kw: dict[str, Any] = {}
    if "tools" in raw:
        kw["tools"] = _globs(raw["tools"], f"{where}: tools")
    if "channels" in raw:
        kw["channels"] = one_or_many(choice(CHANNELS))(raw["channels"], f"{where}: channels")
    if "probability" in raw:
        kw["probability"] = number(minimum=0, maximum=1)(
            raw["probability"], f"{where}: probability"
        )
    for key in ("first", "every", "max_count"):
        if key in raw:
            kw[key] = integer(minimum=1)(raw[key], f"{where}: {key}")
    if "nth" in raw:
        kw["nth"] = one_or_many(integer(minimum=1))(raw["nth"], f"{where}: nth")
    if "window" in raw:
        kw["window"] = _window(raw["window"], f"{where}: window")
    return Selector(**kw)
