"""Parsing and validating the chaos markers into plain data, once per test at collection."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ChaosConfigError
from ..profiles.budgets import BUDGET_KEYS, Budgets, parse_budgets

if TYPE_CHECKING:
    from ..faults.plan import FaultSpec

MARKERS = {
    "chaos": (
        "chaos(profile=None, seed=None, faults=[...], max_steps=..., max_tool_calls=..., "
        "max_model_calls=..., max_seconds=..., max_tokens=..., virtual_sleep=False, "
        "freeze_time=False): run this test under a chaos profile, extra faults and budgets"
    ),
    "must_halt": (
        "must_halt(max_steps=..., max_tool_calls=..., max_model_calls=..., max_seconds=..., "
        "max_tokens=...): the agent must stop on its own within these limits"
    ),
    "must_escape": (
        "must_escape(within_steps=None, require_loop=True): every loop the harness detects "
        "must be broken (within that many steps of its detection) and the run must finish"
    ),
    "must_repair": (
        "must_repair(...): malformed parameters must be repaired (not implemented yet: fails)"
    ),
}
CHAOS_MARKERS = tuple(MARKERS)

_CHAOS_KEYS = ("profile", "seed", "faults", "virtual_sleep", "freeze_time", *BUDGET_KEYS)
_ESCAPE_KEYS = ("within_steps", "require_loop")


@dataclass(frozen=True)
class TestChaos:
    """Everything the markers of one test ask for, validated."""

    profile: str | None = None
    seed: int | None = None
    faults: tuple[FaultSpec, ...] = ()
    budgets: Budgets = Budgets()
    halt: Budgets | None = None
    virtual_sleep: bool | None = None
    freeze_time: bool | None = None
    escape: Mapping[str, Any] | None = None
    repair: Mapping[str, Any] | None = None
    marked: tuple[str, ...] = field(default=())
    error: str | None = None


def _kwargs(mark: pytest.Mark, allowed: tuple[str, ...], where: str) -> dict[str, Any]:
    unknown = sorted(set(mark.kwargs) - set(allowed))
    if unknown:
        raise ChaosConfigError(
            f"{where}: unknown argument {unknown[0]!r}; allowed: {', '.join(allowed)}"
        )
    return dict(mark.kwargs)


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ChaosConfigError(f"{where}: expected True or False, got {value!r}")
    return value


def parse_marks(item: pytest.Item) -> TestChaos | None:
    """The test's chaos configuration, or ``None`` when it has no chaos marker."""
    if not any(m.name in MARKERS for m in item.iter_markers()):
        return None
    marks = {name: list(item.iter_markers(name)) for name in CHAOS_MARKERS}
    values: dict[str, Any] = {}
    faults: list[FaultSpec] = []
    budgets = Budgets()
    # iter_markers yields the closest mark first: apply the farthest first so closer ones win.
    for mark in reversed(marks["chaos"]):
        where = "@pytest.mark.chaos"
        if len(mark.args) > 1 or (mark.args and "profile" in mark.kwargs):
            raise ChaosConfigError(
                f"{where}: takes at most one positional argument, the profile name"
            )
        kw = {k: v for k, v in _kwargs(mark, _CHAOS_KEYS, where).items() if v is not None}
        if mark.args:
            kw["profile"] = mark.args[0]
        if "profile" in kw and (not isinstance(kw["profile"], str) or not kw["profile"]):
            raise ChaosConfigError(
                f"{where}: profile: expected a profile name, got {kw['profile']!r}"
            )
        seed = kw.get("seed")
        if "seed" in kw and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ChaosConfigError(f"{where}: seed: expected a non-negative integer, got {seed!r}")
        for key in ("virtual_sleep", "freeze_time"):
            if key in kw:
                kw[key] = _bool(kw[key], f"{where}: {key}")
        if "faults" in kw:
            from ..faults.plan import parse_faults

            faults[:0] = parse_faults(kw.pop("faults"), f"{where}: faults")
        budgets = budgets.override(
            parse_budgets({k: kw.pop(k) for k in BUDGET_KEYS if k in kw}, where)
        )
        values.update(kw)
    halt: Budgets | None = None
    for mark in reversed(marks["must_halt"]):
        where = "@pytest.mark.must_halt"
        if mark.args:
            raise ChaosConfigError(
                f"{where}: takes keyword arguments only ({', '.join(BUDGET_KEYS)})"
            )
        limits = parse_budgets(_kwargs(mark, BUDGET_KEYS, where), where)
        halt = limits if halt is None else halt.override(limits)
    escape: dict[str, Any] | None = None
    for mark in reversed(marks["must_escape"]):
        where = "@pytest.mark.must_escape"
        if mark.args:
            raise ChaosConfigError(
                f"{where}: takes keyword arguments only ({', '.join(_ESCAPE_KEYS)})"
            )
        kw = _kwargs(mark, _ESCAPE_KEYS, where)
        within = kw.get("within_steps")
        if within is not None and (
            isinstance(within, bool) or not isinstance(within, int) or within < 0
        ):
            raise ChaosConfigError(
                f"{where}: within_steps: expected a non-negative integer or None, got {within!r}"
            )
        if "require_loop" in kw:
            kw["require_loop"] = _bool(kw["require_loop"], f"{where}: require_loop")
        escape = {**(escape or {}), **kw}
    repair: dict[str, Any] | None = None
    for mark in reversed(marks["must_repair"]):
        repair = {**(repair or {}), **mark.kwargs}
    return TestChaos(
        profile=values.get("profile"),
        seed=values.get("seed"),
        faults=tuple(faults),
        budgets=budgets,
        halt=halt,
        virtual_sleep=values.get("virtual_sleep"),
        freeze_time=values.get("freeze_time"),
        escape=escape,
        repair=repair,
        marked=tuple(name for name in CHAOS_MARKERS if marks[name]),
    )
