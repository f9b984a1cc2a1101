"""Fault specs and the seeded, deterministic ``FaultPlan``.

A plan resolves, call by call, into concrete decisions ("call 4 of `search`: 429,
Retry-After 30"). The decisions are written to the trace as ``FaultInjected`` events, and
:meth:`FaultPlan.from_schedule` replays a schedule (read back from a trace, or proposed by a
search such as hypothesis) without drawing anything.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

from ..config import check_table, choice, integer, text
from ..rng import stable_int, stable_random, stable_uniform
from ..saferepr import short
from .kinds import CHANNELS, CallInfo, FaultKind, kind_class
from .params import fail
from .selectors import SELECTOR_KEYS, Selector, parse_selector


@dataclass(frozen=True, slots=True)
class FaultSpec:
    """One fault: a kind (what happens) and a selector (to which calls)."""

    kind: FaultKind
    selector: Selector = Selector()

    def __post_init__(self) -> None:
        self.kind.check_selector(self.selector.tools, f"fault {short(self.kind.name)}")

    def applies_to(self, channel: str) -> bool:
        """Whether this fault may hit calls on ``channel`` (its kind and selector allow it)."""
        allowed = self.selector.channels or self.kind.channels
        return channel in allowed and channel in self.kind.channels

    def to_dict(self) -> dict[str, Any]:
        """The fault as a table: ``kind``, its parameters and its selector's keys."""
        out: dict[str, Any] = {"kind": self.kind.name}
        out.update({k: list(v) if isinstance(v, tuple) else v for k, v in self.kind.values.items()})
        out.update(self.selector.to_dict())
        return out


class Decision(NamedTuple):
    """A fault that fires on one call, with its concrete detail (a tuple: made for every
    call a fault hits)."""

    fault: int
    kind: FaultKind
    detail: dict[str, Any]


def parse_fault(raw: Any, where: str) -> FaultSpec:
    """Build a spec from one fault table/dict such as ``{"kind": "timeout", "seconds": 5}``."""
    if not isinstance(raw, Mapping):
        raise fail(where, f"a fault must be a table/dict with a 'kind', got {short(raw)}")
    if "kind" not in raw:
        raise fail(where, "missing 'kind'")
    cls = kind_class(raw["kind"], f"{where}: kind")
    allowed = set(SELECTOR_KEYS) | set(cls.params) | {"kind"}
    unknown = sorted((k for k in raw if k not in allowed), key=str)
    if unknown:
        own = f"{', '.join(sorted(cls.params))}, and " if cls.params else ""
        raise fail(
            where,
            f"unknown key {short(unknown[0])} for fault kind {cls.name!r}; allowed: "
            f"{own}selector keys {', '.join(SELECTOR_KEYS)}",
        )
    selector = parse_selector(raw, where)
    cls.check_selector(selector.tools if "tools" in raw else None, where)
    spec = FaultSpec(cls.from_config(raw, where), selector)
    if spec.selector.channels and not any(c in cls.channels for c in spec.selector.channels):
        raise fail(
            where,
            f"kind {short(cls.name)} cannot apply to channels {list(spec.selector.channels)}; "
            f"it applies to {', '.join(_CHANNEL_NAMES.get(c, c) for c in cls.channels)}",
        )
    return spec


def parse_faults(raw: Any, where: str) -> tuple[FaultSpec, ...]:
    """Build the specs of a ``faults`` list (``None``: no faults)."""
    if raw is None:
        return ()
    if isinstance(raw, (Mapping, str, bytes, bytearray)) or not isinstance(raw, Sequence):
        raise fail(where, f"'faults' must be a list of fault tables, got {short(raw)}")
    return tuple(parse_fault(f, f"{where}[{i}]") for i, f in enumerate(raw))


def _fault_keys(faults: Sequence[FaultSpec]) -> list[str]:
    """A stable key per fault from its content (and how many identical faults precede it),
    so adding or reordering other faults does not change this fault's draws."""
    seen: dict[str, int] = {}
    keys = []
    for spec in faults:
        digest = stable_int(json.dumps(spec.to_dict(), sort_keys=True, default=repr))
        occurrence = seen.get(str(digest), 0)
        seen[str(digest)] = occurrence + 1
        keys.append(f"{digest:x}.{occurrence}")
    return keys


class FaultPlan:
    """Decides, deterministically under ``seed``, which fault (if any) hits each call.

    At most one fault fires per call: the first in plan order whose selector matches, whose
    ``max_count`` is not used up, whose probability draw passes and which can apply (a
    ``repeated_output`` needs a previous output). A plan holds the state of one run.
    """

    def __init__(self, faults: Iterable[FaultSpec] = (), seed: int = 0) -> None:
        self.faults: tuple[FaultSpec, ...] = tuple(faults)
        self.seed = seed
        self._fired = [0] * len(self.faults)
        self._matched = [False] * len(self.faults)
        self._keys = _fault_keys(self.faults)
        self._schedule: dict[tuple[str, str, int], Decision] | None = None
        #: a schedule's unnamed calls are drawn from ``faults`` (``beyond="profile"``)
        self._beyond = False
        self._by_channel: dict[str, tuple[int, ...]] = {
            channel: tuple(i for i, f in enumerate(self.faults) if f.applies_to(channel))
            for channel in CHANNELS
        }
        # (channel, target) -> the faults whose channel and tools match: computed once per
        # target, so a call that no fault can hit costs one dict lookup
        self._by_target: dict[tuple[str, str], tuple[int, ...]] = {}

    @classmethod
    def from_schedule(
        cls,
        schedule: Iterable[Mapping[str, Any]],
        faults: Sequence[FaultSpec] = (),
        *,
        beyond: str = "none",
        seed: int = 0,
    ) -> FaultPlan:
        """A plan that replays exactly the decisions in ``schedule`` (see ``Trace.schedule``).

        Each entry needs ``channel``, ``target``, ``index``, ``kind`` and the ``detail`` its kind
        decided (``fault``, the fault's position in the plan, is informative); every
        entry is validated first (a bad one is a ``ChaosConfigError`` naming it and its key).
        ``beyond`` says what happens to the calls the schedule does not name: ``"none"``
        (the default) leaves them fault-free, ``"profile"`` lets ``faults`` decide them under
        ``seed`` as a seeded plan would.
        """
        if isinstance(schedule, (str, bytes, Mapping)) or not isinstance(schedule, Iterable):
            raise fail("schedule", f"expected a list of decisions, got {short(schedule)}")
        beyond = choice(BEYOND)(beyond, "schedule: beyond")
        plan = cls(faults, seed)
        table: dict[tuple[str, str, int], Decision] = {}
        for i, entry in enumerate(schedule):
            where = f"schedule[{i}]"
            check_table(entry, _ENTRY_KEYS, where, "a schedule entry")
            missing = [k for k in _ENTRY_KEYS[:4] if k not in entry]
            if missing:
                raise fail(where, f"missing {short(missing[0])}")
            channel = choice(CHANNELS)(entry["channel"], f"{where}: channel")
            target = text(entry["target"], f"{where}: target")
            index = integer(minimum=1)(entry["index"], f"{where}: index")
            kind_cls = kind_class(entry["kind"], f"{where}: kind")
            detail = kind_cls.check_detail(entry.get("detail", {}), f"{where}: detail")
            fault = integer(minimum=-1)(entry.get("fault", -1), f"{where}: fault")
            if (channel, target, index) in table:
                raise fail(
                    where, f"a second decision for call {index} of {channel} {short(target)}"
                )
            table[(channel, target, index)] = Decision(fault, kind_cls(), detail)
        plan._schedule = table
        if beyond == "profile":
            plan._beyond = True
            for c, t, _ in table:  # a scheduled target is a candidate even if no fault matches
                plan._by_target[(c, t)] = (*plan.candidates(c, t), -1)
            plan._by_channel = {
                c: (*plan._by_channel[c], -1)
                if any(k[0] == c for k in table)
                else plan._by_channel[c]
                for c in CHANNELS
            }
            return plan
        plan._by_channel = {c: (0,) if any(k[0] == c for k in table) else () for c in CHANNELS}
        plan._by_target = {(c, t): (0,) for c, t, _ in table}
        return plan

    @property
    def replaying(self) -> bool:
        """Whether the plan replays a recorded schedule (see :meth:`from_schedule`)."""
        return self._schedule is not None

    @property
    def needs_previous(self) -> bool:
        """Whether a fault may replay an earlier output of a call (``repeated_output``,
        ``stale_output``, ``paraphrased_output``): only then does a run keep outputs."""
        return self.depth > 0

    @property
    def depth(self) -> int:
        """How many of each target's latest outputs a run keeps for the faults that replay
        them (0: none)."""
        return max((kind.depth(detail) for kind, detail in self._replaying()), default=0)

    @property
    def keeps_first(self) -> bool:
        """Whether a run also keeps each target's first output (``stale_output``)."""
        return any(kind.keeps_first(detail) for kind, detail in self._replaying())

    def _replaying(self) -> list[tuple[FaultKind, Mapping[str, Any] | None]]:
        """Each kind of the plan with its decided detail (``None``: any it may decide)."""
        drawn: list[tuple[FaultKind, Mapping[str, Any] | None]] = [
            (f.kind, None) for f in self.faults
        ]
        if self._schedule is not None:
            named: list[tuple[FaultKind, Mapping[str, Any] | None]] = [
                (d.kind, d.detail) for d in self._schedule.values()
            ]
            return named + drawn if self._beyond else named
        return drawn

    def fired(self) -> list[int]:
        """How many times each fault has fired so far."""
        return list(self._fired)

    def active(self, channel: str) -> bool:
        """Whether any fault (or recorded decision) can hit calls on ``channel``: when not,
        callers skip :meth:`decide` altogether (the cheap path of every call)."""
        return bool(self._by_channel.get(channel))

    def candidates(self, channel: str, target: str) -> tuple[int, ...]:
        """The faults that may hit calls of ``target`` on ``channel`` (empty: none can, and
        :meth:`decide` need not be asked)."""
        key = (channel, target)
        found = self._by_target.get(key)
        if found is None:
            if self._schedule is not None and not self._beyond:
                return ()
            found = tuple(
                i
                for i in self._by_channel.get(channel, ())
                if self.faults[i].selector.matches_target(target)
            )
            for i in found:
                self._matched[i] = True
            self._by_target[key] = found
        return found

    def unmatched(self) -> list[int]:
        """Indexes of the faults whose ``tools`` matched no call so far (a typo in a glob,
        or a tool the agent never called): worth telling the user."""
        if self._schedule is not None and not self._beyond:
            return []
        return [i for i, matched in enumerate(self._matched) if not matched]

    def unreached(self, calls: Mapping[tuple[str, str], int]) -> list[tuple[str, str, int, str]]:
        """The scheduled decisions (channel, target, call, kind) whose call the run never made,
        given how many calls each (channel, target) received: a target that is never called
        (a typo?) or a call number past the last one."""
        if self._schedule is None:
            return []
        return [
            (channel, target, index, decision.kind.name)
            for (channel, target, index), decision in sorted(self._schedule.items())
            if calls.get((channel, target), 0) < index
        ]

    def decide(self, call: CallInfo) -> Decision | None:
        """The decision for ``call``, or ``None`` when no fault fires."""
        if self._schedule is not None:
            decision = self._schedule.get((call.channel, call.target, call.index))
            if decision is not None and not decision.kind.fits(decision.detail, call):
                return None
            if decision is not None or not self._beyond:
                return decision
        for i in self.candidates(call.channel, call.target):
            if i < 0:  # the marker of a scheduled target (see from_schedule)
                continue
            spec = self.faults[i]
            sel = spec.selector
            if sel.max_count is not None and self._fired[i] >= sel.max_count:
                continue
            if not sel.matches_call(call):  # its tools matched the target already
                continue
            key = (self.seed, self._keys[i], call.channel, call.target, call.index)
            if sel.probability < 1.0 and stable_uniform("p", *key) >= sel.probability:
                continue
            detail = spec.kind.decide(cast(random.Random, _LazyRandom(key)), call)
            if detail is None:
                continue
            self._fired[i] += 1
            return Decision(i, spec.kind, detail)
        return None


class _LazyRandom:
    """The ``random.Random`` a kind decides with, seeded only when the kind draws from it:
    most decisions (one status, fixed seconds, no parameters) draw nothing, and seeding a
    ``Random`` from a hash is most of what a fault that fires costs."""

    __slots__ = ("_key", "_rng")

    def __init__(self, key: tuple[Any, ...]) -> None:
        self._key = key
        self._rng: random.Random | None = None

    def __getattr__(self, name: str) -> Any:
        rng = self._rng
        if rng is None:
            rng = self._rng = stable_random("d", *self._key)
        return getattr(rng, name)


#: What a schedule's plan does with the calls it does not name.
BEYOND = ("none", "profile")

_ENTRY_KEYS = ("channel", "target", "index", "kind", "detail", "fault")

#: How errors name the rebirth runner's channels.
_CHANNEL_NAMES = {
    "step": "step (a PhoenixRunner's steps)",
    "snapshot": "snapshot (a PhoenixRunner's snapshot loads)",
}
