"""Online loop detection: is the agent repeating itself *now*?

Three detectors share one pass over the action stream:

- **repeat**: the stream ends with a block of ``p`` actions repeated ``k`` times in a row,
  for any period ``min_period <= p <= max_period`` (the block must not itself repeat a
  shorter block: "A A" twice is four A's, a period-1 loop). For each ``p`` a match-run counter holds
  how many of the latest actions equal the one ``p`` before; the suffix is a ``k``-fold
  repeat iff that run reaches ``(k - 1) * p``. Cost per action: O(max_period), whatever the
  history length (the seed's full rescan is O(n^3) and keeps flagging loops long broken).
- **state**: the same state digest seen ``state_repeats`` times in the recent window.
- **node**: a node visited ``node_visits`` times within the last ``node_window_events``
  actions or ``node_window_seconds`` virtual seconds.

Alarms are about the present: once the agent stops repeating, they stop.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..config import Validator, check_fields, count, fail, integer, number, parse_table
from ..saferepr import short
from .history import ActionKey, digest


@dataclass(frozen=True, slots=True)
class LoopPolicy:
    """Thresholds of the loop detectors (``[escape.loops]`` in a profile)."""

    min_period: int = 1
    max_period: int = 8
    repeats_period_1: int = 4  # identical actions in a row before a 1-step loop is reported
    repeats: int = 2  # repeats of a longer block
    state_repeats: int = 3
    state_window: int = 64
    node_visits: int = 5
    node_window_events: int = 20
    node_window_seconds: float = 60.0

    def __post_init__(self) -> None:
        check_fields(self, _FIELDS, "LoopPolicy")
        _check_periods(self.min_period, self.max_period, "LoopPolicy")

    def repeats_for(self, period: int) -> int:
        """How many repeats of a block of ``period`` actions make a loop."""
        return self.repeats_period_1 if period == 1 else self.repeats

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str = "[escape.loops]") -> LoopPolicy:
        """Validate an ``[escape.loops]`` table; errors name ``where``, the key and what is
        allowed. Missing keys keep their defaults."""
        values = parse_table(raw, _FIELDS, where, "loops")
        _check_periods(
            values.get("min_period", _DEFAULT.min_period),
            values.get("max_period", _DEFAULT.max_period),
            where,
        )
        return cls(**values)


#: The fields of a :class:`LoopPolicy` (the keys of an ``[escape.loops]`` table).
#: The longest repeating block the detector looks for.
MAX_PERIOD = 256

_FIELDS: dict[str, Validator] = {
    # every action costs O(max_period): a longer block than this is no loop worth a test
    "min_period": integer(minimum=1, maximum=MAX_PERIOD),
    "max_period": integer(minimum=1, maximum=MAX_PERIOD),
    "repeats_period_1": count(minimum=2),
    "repeats": count(minimum=2),
    "state_repeats": count(minimum=2),
    "state_window": count(),
    "node_visits": count(minimum=2),
    "node_window_events": count(),
    "node_window_seconds": number(minimum=0, exclusive_min=True, unit="seconds", finite=False),
}


def _check_periods(min_period: int, max_period: int, where: str) -> None:
    if min_period > max_period:
        raise fail(
            f"{where}: min_period", f"must be <= max_period ({max_period}), got {short(min_period)}"
        )


#: Where ``from_dict`` finds the defaults a cross-field rule needs (a slotted dataclass has
#: no class attributes to read them from).
_DEFAULT = LoopPolicy()


@dataclass(frozen=True, slots=True)
class Loop:
    """One current alarm: what repeats, how often, and since which step."""

    kind: str  # "repeat" | "state" | "node"
    period: int  # block length for "repeat"; 0 otherwise
    repeats: int  # full repeats so far (visits for "node", sightings for "state")
    keys: tuple[ActionKey, ...]  # the repeating block (or the key that recurs)
    began_step: int
    new: bool  # the first report of this episode
    subject: str = ""  # the node or state digest, for "node" and "state"

    def to_detail(self) -> dict[str, Any]:
        """Plain data for a trace ``Detection`` event."""
        return {
            "period": self.period,
            "repeats": self.repeats,
            "block": [k.describe() for k in self.keys],
            "began_step": self.began_step,
            "subject": self.subject,
        }

    def describe(self) -> str:
        """One line for humans: what repeats, how often and since which step."""
        if self.kind == "repeat":
            block = " -> ".join(k.describe() for k in self.keys)
            return (
                f"{block} repeated {self.repeats}x (period {self.period}) "
                f"since step {self.began_step}"
            )
        if self.kind == "node":
            return f"node {self.subject} visited {self.repeats}x since step {self.began_step}"
        return f"state {self.subject} seen {self.repeats}x since step {self.began_step}"


class LoopDetector:
    """Feed it actions with :meth:`observe`; it returns the loops happening now."""

    def __init__(self, policy: LoopPolicy | None = None) -> None:
        self.policy = policy = policy or LoopPolicy()
        # (hash, key, step) of the latest actions: hashes make most comparisons int compares
        self._recent: deque[tuple[int, ActionKey, int]] = deque(maxlen=policy.max_period + 1)
        self._run = [0] * (policy.max_period + 1)
        self._run_began = [0] * (policy.max_period + 1)
        # proper divisors of each period: a block that is a power of a shorter one ("A A")
        # is that shorter loop, judged by that period's threshold
        self._divisors = [
            [d for d in range(1, p) if p % d == 0] for p in range(policy.max_period + 1)
        ]
        self._repeating = False
        self._states: deque[str] = deque()
        self._state_counts: dict[str, int] = {}
        self._state_first: dict[str, int] = {}
        self._recurring: set[str] = set()
        self._visits: dict[str, deque[tuple[int, float, int]]] = {}
        self._node_alarm: set[str] = set()
        self._n = 0

    def observe(
        self,
        key: ActionKey,
        step: int,
        t: float,
        *,
        state: Any = None,
        node: str | None = None,
    ) -> list[Loop]:
        """Take one action; return the alarms that hold after it (empty when none)."""
        n = self._n
        self._n += 1
        alarms: list[Loop] = []
        repeat = self._repeat(key, step)
        if repeat is not None:
            alarms.append(repeat)
        if state is not None:
            found = self._state(state if isinstance(state, str) else digest(state), key, step)
            if found is not None:
                alarms.append(found)
        visited = node if node is not None else key.node
        if visited is not None:
            found = self._node(visited, key, n, step, t)
            if found is not None:
                alarms.append(found)
        return alarms

    def _repeat(self, key: ActionKey, step: int) -> Loop | None:
        policy, recent, run, began = self.policy, self._recent, self._run, self._run_began
        size = len(recent)
        h = hash(key)
        fired: Loop | None = None
        for p in range(1, policy.max_period + 1):
            if p <= size:
                ph, pkey, pstep = recent[size - p]
                if ph == h and pkey == key:
                    if run[p] == 0:
                        began[p] = pstep  # the first block's first step
                    run[p] += 1
                else:
                    run[p] = 0
            if fired is None and run[p] and p >= policy.min_period:
                k = policy.repeats_period_1 if p == 1 else policy.repeats
                if run[p] >= (k - 1) * p and all(run[d] < p - d for d in self._divisors[p]):
                    block = tuple(e[1] for e in list(recent)[size - p + 1 :]) + (key,)
                    fired = Loop("repeat", p, run[p] // p + 1, block, began[p], not self._repeating)
        recent.append((h, key, step))
        self._repeating = fired is not None
        return fired

    def _state(self, state: str, key: ActionKey, step: int) -> Loop | None:
        policy = self.policy
        self._states.append(state)
        self._state_counts[state] = self._state_counts.get(state, 0) + 1
        self._state_first.setdefault(state, step)
        if len(self._states) > policy.state_window:
            old = self._states.popleft()
            self._state_counts[old] -= 1
            if not self._state_counts[old]:
                del self._state_counts[old]
                self._state_first.pop(old, None)
                self._recurring.discard(old)
        count = self._state_counts[state]
        if count < policy.state_repeats:
            self._recurring.discard(state)
            return None
        new = state not in self._recurring
        self._recurring = {state}  # alarms are about now: only the current state recurs
        return Loop("state", 0, count, (key,), self._state_first[state], new, state)

    def _node(self, node: str, key: ActionKey, n: int, step: int, t: float) -> Loop | None:
        policy = self.policy
        visits = self._visits.get(node)
        if visits is None:
            visits = self._visits[node] = deque(maxlen=policy.node_visits)
        visits.append((n, t, step))
        if len(visits) == policy.node_visits:
            first_n, first_t, first_step = visits[0]
            recent = n - first_n < policy.node_window_events
            if recent or t - first_t <= policy.node_window_seconds:
                new = node not in self._node_alarm
                self._node_alarm = {node}
                return Loop("node", 0, policy.node_visits, (key,), first_step, new, node)
        self._node_alarm.discard(node)
        return None
