"""Shrinking a failing schedule to a minimal one that fails the same way. Free of pytest.

Delta debugging over the schedule's decisions, in the order a reader cares about: first the
fewest faults (drop halves, quarters ... then single faults), then the earliest calls (move a
target's faults to its first calls, close the gaps between them), then the mildest severities
(bisect each fault's ``seconds`` / ``retry_after`` down to the least that still fails, rounded
to the plainest number there). The passes repeat until none changes the schedule. Every step is
deterministic, so the same failing schedule and the same agent shrink to the same result.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["SEVERITY", "Shrunk", "Shrinker", "canonical", "schedule_key"]

Decision = Mapping[str, Any]
Schedule = tuple[Decision, ...]

#: The severity key of a kind's decided detail and its mildest value: what shrinking lowers.
SEVERITY: dict[str, tuple[str, float]] = {
    "latency": ("seconds", 0.0),
    "timeout": ("seconds", 0.0),
    "rate_limit": ("retry_after", 0.0),
    "slow_first_token": ("seconds", 0.0),
}


def canonical(schedule: Sequence[Decision]) -> Schedule:
    """The schedule in call order (channel, target, call), each decision a plain dict."""
    items = [
        {
            "channel": d.get("channel", "tool"),
            "target": d["target"],
            "index": int(d["index"]),
            "kind": d["kind"],
            "detail": dict(d.get("detail") or {}),
        }
        for d in schedule
    ]
    return tuple(sorted(items, key=lambda d: (d["index"], d["channel"], d["target"])))


def schedule_key(schedule: Sequence[Decision]) -> str:
    """A stable text key of a schedule (to remember what was tried)."""
    return json.dumps(canonical(schedule), sort_keys=True, default=repr)


@dataclass(frozen=True)
class Shrunk:
    """The minimal schedule found, how many attempts shrinking made, and whether it ran out of
    attempts before the passes settled."""

    schedule: Schedule
    attempts: int
    exhausted: bool


class _OutOfAttempts(Exception):
    pass


class Shrinker:
    """Shrink ``schedule`` under ``fails(schedule) -> bool`` (it still fails the same way),
    making at most ``budget`` calls of ``fails`` (a schedule tried before is not run again)."""

    def __init__(self, fails: Callable[[Schedule], bool], budget: int = 200) -> None:
        self._fails = fails
        self.budget = budget
        self.attempts = 0
        self._seen: dict[str, bool] = {}

    def test(self, schedule: Sequence[Decision]) -> bool:
        """Whether ``schedule`` fails the same way (remembered; counts one attempt if new)."""
        candidate = canonical(schedule)
        key = schedule_key(candidate)
        found = self._seen.get(key)
        if found is None:
            if self.attempts >= self.budget:
                raise _OutOfAttempts
            self.attempts += 1
            found = self._seen[key] = bool(self._fails(candidate))
        return found

    def shrink(self, schedule: Sequence[Decision]) -> Shrunk:
        """The smallest, earliest, mildest schedule reached from ``schedule`` (which fails)."""
        current = canonical(schedule)
        self._seen[schedule_key(current)] = True
        exhausted = False
        try:
            while True:
                before = current
                current = self._fewer(current)
                current = self._earlier(current)
                current = self._milder(current)
                if current == before:
                    break
        except _OutOfAttempts:
            exhausted = True
            current = self._best
        return Shrunk(current, self.attempts, exhausted)

    # The best schedule so far, kept as each pass accepts one (what an interrupted shrink ends
    # with).
    _best: Schedule = ()

    def _accept(self, candidate: Sequence[Decision]) -> Schedule:
        self._best = canonical(candidate)
        return self._best

    def _fewer(self, current: Schedule) -> Schedule:
        """Drop chunks of decisions, halves first, then ever smaller, down to single ones."""
        self._best = current
        size = max(1, len(current) // 2)
        while current and size >= 1:
            start = 0
            removed = False
            while start < len(current):
                candidate = current[:start] + current[start + size :]
                if candidate != current and candidate and self.test(candidate):
                    current = self._accept(candidate)
                    removed = True
                else:
                    start += size
            if size == 1 and not removed:
                break
            size = size // 2 if size > 1 else 1
            if size == 1 and not removed and len(current) <= 1:
                break
        return current

    def _earlier(self, current: Schedule) -> Schedule:
        """Move faults to earlier calls of their target: a whole target's block to its first
        call, then each fault right after the one before it, then one call earlier."""
        self._best = current
        changed = True
        while changed:
            changed = False
            for place in sorted({(d["channel"], d["target"]) for d in current}):
                mine = [d for d in current if (d["channel"], d["target"]) == place]
                low = min(d["index"] for d in mine)
                for shift in sorted({low - 1, (low - 1) // 2, 1} - {0}, reverse=True):
                    if shift <= 0 or shift > low - 1:
                        continue
                    moved = [
                        {**d, "index": d["index"] - shift}
                        if (d["channel"], d["target"]) == place
                        else d
                        for d in current
                    ]
                    if self.test(moved):
                        current = self._accept(moved)
                        changed = True
                        break
            for i in range(len(current)):
                d = current[i]
                same = sorted(
                    e["index"]
                    for e in current
                    if (e["channel"], e["target"]) == (d["channel"], d["target"])
                    and e["index"] < d["index"]
                )
                floor = same[-1] + 1 if same else 1
                for index in sorted({floor, d["index"] - 1}):
                    if not floor <= index < d["index"]:
                        continue
                    moved = [*current[:i], {**d, "index": index}, *current[i + 1 :]]
                    if self.test(moved):
                        current = self._accept(moved)
                        changed = True
                        break
                if changed:
                    break
        return current

    def _milder(self, current: Schedule) -> Schedule:
        """Lower each fault's severity to the least that still fails (bisection)."""
        self._best = current
        for i in range(len(current)):
            d = current[i]
            found = SEVERITY.get(d["kind"])
            if found is None or found[0] not in d["detail"]:
                continue
            key, mildest = found
            high = float(d["detail"][key])
            if high <= mildest:
                continue

            def at(
                value: float, i: int = i, d: Decision = d, key: str = key, base: Schedule = current
            ) -> Schedule:
                return (
                    *base[:i],
                    {**d, "detail": {**d["detail"], key: value}},
                    *base[i + 1 :],
                )

            if self.test(at(mildest)):
                current = self._accept(at(mildest))
                continue
            low = mildest
            while high - low > max(0.05 * high, 0.01):
                middle = round((low + high) / 2, 3)
                if self.test(at(middle)):
                    high = middle
                else:
                    low = middle
            for step in _STEPS:  # the plainest number that still fails: what a reader keeps
                plain = round(math.floor(low / step + 1) * step, 3)
                if not low < plain < high:
                    continue
                if self.test(at(plain)):
                    high = plain
                    break
                low = plain
            if high != float(d["detail"][key]):
                current = self._accept(at(high))
        return current


#: The steps of the plain numbers tried between a passing and a failing severity.
_STEPS = (100.0, 50.0, 10.0, 5.0, 1.0, 0.5, 0.1, 0.05, 0.01)
