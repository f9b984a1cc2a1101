"""Online loop detection: is the agent repeating itself *now*?

One pass over the agent's actions (tool, HTTP and model calls, node visits, reported states)
feeds four rules:

- **repeat**: a stream ends with a block of ``p`` actions (``min_period <= p <= max_period``)
  that occurred ``repeats`` times in a row (``repeats_period_1`` for a single action). Two
  streams are watched: the tool calls alone, so the model's text between identical calls does
  not hide them, and every action, so a loop of model outputs and node visits is seen too.
  For each ``p`` a counter holds how many of the latest actions equal the one ``p`` before;
  the end of the stream is a ``k``-fold repeat iff it reaches ``(k - 1) * p``: O(max_period)
  per action, whatever the history's length.
- **same error**: one tool failing with the same error (its tool and error template alone,
  the arguments' words taken out) ``error_streak`` times while the arguments vary, each
  failure within ``error_streak_window`` actions of the one before. Other calls may come
  between, even ones that work; only a call of the failing tool that works ends the streak.
- **state**: the same state seen ``state_repeats`` times within ``state_window`` actions,
  with no progress between the first sighting and the last.
- **node**: a node visited ``node_visits`` times in the same state (or with none reported)
  within ``node_window_events`` actions (or, when virtual time moves,
  ``node_window_seconds``), with no progress in between.

*Progress* is something new that stays new: a call that worked with a new result, a new
state or node, seen for the first time and not seen again since. A failure is never progress,
whatever its message: a cycle whose failing step fails differently each lap learns nothing.
A hub whose every visit leads to new work makes progress; an agent cycling through the same
states in a shuffled order does not, as each state it "discovers" on the first lap recurs on
the next.

Alarms are about the present. A loop holds until the repetition really stops: a repeat until
a call breaks the block (the model's text in between does not), a state or node loop until
progress is made or the window passes. :meth:`LoopDetector.observe` returns the loops that
hold after each action, marking the ones that just began.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from .history import ActionKey, digest
from .loop_policy import MAX_PERIOD, KeyFunction, LoopCall, LoopPolicy

__all__ = ["MAX_PERIOD", "KeyFunction", "Loop", "LoopCall", "LoopDetector", "LoopPolicy"]


@dataclass(frozen=True, slots=True)
class Loop:
    """One current alarm: what repeats, how often, and since which step.

    ``kind`` is ``repeat``, ``state`` or ``node``. For a repeat, ``rule`` says what repeats:
    ``block`` (the same actions; ``stream`` is ``tool`` or ``all``) or ``same_error`` (the same
    error while the arguments vary); for a state, ``state`` (a state the agent reported) or
    ``action`` (a tool call with its result, recurring in any order).
    """

    kind: str
    period: int  # block length for "repeat"; 0 otherwise
    repeats: int  # occurrences so far (visits for "node", sightings for "state")
    keys: tuple[ActionKey, ...]  # the repeating block (or the key that recurs)
    began_step: int
    new: bool  # the first report of this episode
    subject: str = ""  # the node or state digest, for "node" and "state"
    stream: str = ""
    rule: str = ""

    def to_detail(self) -> dict[str, Any]:
        """Plain data for a trace ``Detection`` event."""
        detail: dict[str, Any] = {
            "period": self.period,
            "repeats": self.repeats,
            "block": [k.describe() for k in self.keys],
            "began_step": self.began_step,
            "subject": self.subject,
        }
        if self.kind == "repeat":
            detail["stream"] = self.stream
        if self.rule:
            detail["rule"] = self.rule
        return detail

    def describe(self) -> str:
        """One line for humans: what repeats, how often and since which step."""
        if self.kind == "repeat":
            block = " -> ".join(k.describe() for k in self.keys)
            if self.rule == "same_error":
                return (
                    f"{block} failed the same way {self.repeats}x in a row with varying "
                    f"arguments since step {self.began_step}"
                )
            return (
                f"{block} repeated {self.repeats}x (period {self.period}) "
                f"since step {self.began_step}"
            )
        if self.kind == "node":
            return f"node {self.subject} visited {self.repeats}x since step {self.began_step}"
        block = " -> ".join(k.describe() for k in self.keys)
        return (
            f"{block} recurred {self.repeats}x with nothing new in between "
            f"since step {self.began_step}"
        )


class _Periodic:
    """Whether a stream of keys ends with a block repeated enough times."""

    __slots__ = (
        "divisors", "hashes", "max_p", "min_p", "need", "need1", "recent", "run", "run_began",
        "running",
    )  # fmt: skip

    def __init__(self, policy: LoopPolicy) -> None:
        self.min_p, self.max_p = policy.min_period, policy.max_period
        self.need1, self.need = policy.repeats_period_1, policy.repeats
        # (hash, key, step) of the latest actions: hashes make most comparisons int compares
        self.recent: deque[tuple[int, ActionKey, int]] = deque(maxlen=self.max_p + 1)
        self.hashes: deque[int] = deque(maxlen=self.max_p)  # of the latest max_p keys
        self.run = [0] * (self.max_p + 1)
        self.running = False  # whether any period's counter is above zero
        self.run_began = [0] * (self.max_p + 1)
        # proper divisors of each period: a block that is a power of a shorter one ("A A")
        # is that shorter loop, judged by that period's threshold
        self.divisors = [[d for d in range(1, p) if p % d == 0] for p in range(self.max_p + 1)]

    def reset(self) -> None:
        """Forget the stream so far: what comes next is judged on its own."""
        self.recent.clear()
        self.hashes.clear()
        self.run = [0] * (self.max_p + 1)
        self.running = False

    def push(self, key: ActionKey, step: int) -> tuple[int, int, int, tuple[ActionKey, ...]] | None:
        """Take the next key; returns ``(period, occurrences, began_step, block)`` when the
        stream now ends with a loop."""
        recent, run, began = self.recent, self.run, self.run_began
        h = key._hash  # hashed once when made (a slot read: no call per action)
        if h not in self.hashes:  # new to the latest max_p keys: no period repeats now
            if self.running:
                self.run = [0] * (self.max_p + 1)
                self.running = False
            recent.append((h, key, step))
            self.hashes.append(h)
            return None
        size = len(recent)
        found = None
        for p in range(1, self.max_p + 1):
            if p <= size:
                ph, pkey, pstep = recent[size - p]
                if ph == h and (pkey is key or pkey._identity == key._identity):
                    if run[p] == 0:
                        began[p] = pstep  # the first block's first step
                    run[p] += 1
                else:
                    run[p] = 0
            if found is None and run[p] and p >= self.min_p:
                k = self.need1 if p == 1 else self.need
                if run[p] >= (k - 1) * p and all(run[d] < p - d for d in self.divisors[p]):
                    found = p
        recent.append((h, key, step))
        self.hashes.append(h)
        self.running = True
        if found is None:
            return None
        block = tuple(e[1] for e in list(recent)[-found:])
        return found, run[found] // found + 1, began[found], block


class _Novelty:
    """Which items (action keys, states, nodes) are new, and whether something new that has
    stayed new (a singleton) appeared since a position: progress."""

    __slots__ = ("order", "seen", "singles", "window")

    def __init__(self, window: int) -> None:
        self.window = window
        # item -> [sightings within the window, position of the first of them]
        self.seen: dict[Hashable, list[int]] = {}
        self.order: deque[tuple[int, Hashable]] = deque()
        self.singles: list[tuple[int, Hashable]] = []

    def see(self, item: Hashable, pos: int) -> bool:
        """Count a sighting of ``item`` at ``pos``; returns whether it is new to the window."""
        seen = self.seen
        entry = seen.get(item)
        sighting = (pos, item)
        if entry is None:
            seen[item] = [1, pos]
            singles = self.singles
            singles.append(sighting)
            if len(singles) > 2 * self.window:
                # the singles still alive (as _live says, inline: this scans them all)
                self.singles = [
                    s
                    for s in singles
                    if (e := seen.get(s[1])) is not None and e[0] == 1 and e[1] == s[0]
                ]
        else:
            entry[0] += 1
        order = self.order
        order.append(sighting)
        oldest = pos - self.window
        if order[0][0] <= oldest:
            while order and order[0][0] <= oldest:
                _, old = order.popleft()
                known = seen[old]
                if known[0] > 1:
                    known[0] -= 1
                else:
                    del seen[old]
        return entry is None

    def progress_since(self, pos: int) -> bool:
        """Whether an item first seen after ``pos`` has not been seen again."""
        singles = self.singles
        while singles:
            last, item = singles[-1]
            entry = self.seen.get(item)
            if entry is not None and entry[0] == 1 and entry[1] == last:
                return last > pos
            singles.pop()
        return False


@dataclass
class _Held:
    """A loop that holds: the alarm, and where the agent last continued it."""

    loop: Loop
    continued: int


class LoopDetector:
    """Feed it actions with :meth:`observe`; it returns the loops happening now."""

    def __init__(self, policy: LoopPolicy | None = None) -> None:
        self.policy = policy = policy or LoopPolicy()
        self._tools = _Periodic(policy)
        self._all = _Periodic(policy)
        # (channel, tool) -> [coarse key, failures, first step, position of the latest, key,
        # whether the arguments varied]
        self._streaks: dict[tuple[str, str | None], list[Any]] = {}
        window = max(512, 4 * max(policy.state_window, policy.node_window_events))
        self._novelty = _Novelty(window)
        # item -> (position, step) of its latest state_repeats sightings
        self._sightings: dict[Hashable, list[tuple[int, int]]] = {}
        self._last_state: str | None = None
        # (position, item) of the latest sightings the recurrence rule counted
        self._recurring: deque[tuple[int, Hashable]] = deque(maxlen=policy.state_window + 1)
        self._cycle: frozenset[Hashable] = frozenset()  # the items of the latest state loop
        self._item: Hashable | None = None  # this action's recurrence item
        self._last_tool: Hashable | None = None  # the identity of the latest tool call
        self._visits: dict[tuple[str, str | None], deque[tuple[int, float, int]]] = {}
        self._held: dict[str, _Held] = {}
        self._tool_loop: Loop | None = None  # the tool stream's loop: model text leaves it
        self._tool_pos = -1  # the position of the latest tool call
        self._moved = -1  # the position of the latest node or state seen for the first time
        self._n = 0

    @property
    def actions(self) -> int:
        """How many actions were observed."""
        return self._n

    def observe(
        self,
        key: ActionKey,
        step: int,
        t: float,
        *,
        state: Any = None,
        node: str | None = None,
    ) -> list[Loop]:
        """Take one action (``state``: what the agent reported of its state, any JSON-able
        value or a digest; ``node``: the node visited, when ``key`` is not a visit itself);
        return the loops that hold after it, the ones that just began marked ``new``."""
        pos = self._n
        self._n += 1
        # the key's slots are read directly, and its identity tuple (hashed and compared in C)
        # stands for it in the tables: the rules look an action up a dozen times
        stream = key._stream
        identity = key._identity
        visited = node if node is not None else (key._node if stream == "node" else None)
        novelty = self._novelty
        if stream == "tool":
            # something new between two tool calls (a new node, a new state): the calls
            # before it are not repeated by the calls after it
            if self._tool_pos >= 0 and novelty.progress_since(self._tool_pos):
                self._tools.reset()
            if key._coarse is None and (key._outcome is None or key._outcome == "ok"):
                novelty.see(identity, pos)  # it succeeded (ActionKey.succeeded)
        if visited is not None and novelty.see(("node", visited), pos):
            self._moved = pos  # somewhere new: a held same-error alarm ends
        subject = None
        entered = False
        sighted = None  # ("state", subject): one tuple for the novelty and recurrence tables
        if state is not None:
            subject = state if isinstance(state, str) else digest(state)
            entered = subject != self._last_state  # staying in a state is one sighting
            self._last_state = subject
            sighted = ("state", subject)
            if entered and novelty.see(sighted, pos):
                self._moved = pos

        # kind -> (the loop, whether this action continued it)
        found: dict[str, tuple[Loop, bool]] = {}
        repeat = self._repeat(key, step, stream, pos)
        if repeat is not None:
            found["repeat"] = repeat
        seen = None
        self._item = None
        if subject is not None and (entered or visited is not None):
            # a visit is an action even when the state stays; a bare report is not
            item: tuple[str, ...] = (
                ("visit", visited, subject)
                if visited is not None
                else sighted or ("state", subject)
            )
            self._item = item
            seen = self._state(item, subject, key, step, pos)
        if seen is None and stream == "tool":
            # the same call and result, recurring in any order (the same call again at once
            # is the repeat rule's: repeats_period_1)
            self._item = identity
            if identity != self._last_tool:
                seen = self._state(identity, None, key, step, pos)
            self._last_tool = identity
        if seen is not None:
            found["state"] = (seen, True)
        if visited is not None:
            seen = self._node(visited, subject, key, step, t, pos)
            if seen is not None:
                found["node"] = (seen, True)
        return self._episodes(found, pos)

    @property
    def holding(self) -> bool:
        """Whether a loop holds now."""
        return bool(self._held)

    def finish(self) -> list[str]:
        """The run ended: the kinds of the loops that hold but that the agent's last action
        did not continue (it stopped repeating, then the run ended). They are dropped."""
        last = self._n - 1
        ended = [kind for kind, held in self._held.items() if held.continued < last]
        for kind in ended:
            del self._held[kind]
        return ended

    # -- the rules -------------------------------------------------------------------------

    def _repeat(self, key: ActionKey, step: int, stream: str, pos: int) -> tuple[Loop, bool] | None:
        """The repeat that holds after this action, and whether the action continued it: the
        tool stream's (a block, else a same-error streak: model text and the nodes and states
        of the cycle between the calls leave it as it is; a new node or state ends it), else
        the stream of every action's."""
        every = self._all.push(key, step)
        if stream == "tool":
            block = self._tools.push(key, step)
            streak = self._same_error(key, step, pos)
            self._tool_pos = pos
            if block is not None:
                self._tool_loop = self._loop(block, "tool")
                return self._tool_loop, True
            if streak is not None:
                self._tool_loop = streak[0]
                return streak
            self._tool_loop = None
        if every is not None:
            return self._loop(every, "all"), True
        loop = self._tool_loop
        if loop is not None:
            if loop.rule == "same_error":
                streak = self._live_streak(pos)
                if streak is not None:
                    return streak[0], False
                self._tool_loop = None  # the failures are too far apart now
            elif self._novelty.progress_since(self._tool_pos):
                self._tool_loop = None  # a new node or state between the calls: moved on
            else:
                return loop, False
        return None

    @staticmethod
    def _loop(found: tuple[int, int, int, tuple[ActionKey, ...]], stream: str) -> Loop:
        period, occurrences, began, block = found
        return Loop("repeat", period, occurrences, block, began, False, "", stream, "block")

    def _same_error(self, key: ActionKey, step: int, pos: int) -> tuple[Loop, bool] | None:
        """The same-error streak that holds after this tool call, and whether this call
        continued it. A failure continues its tool's streak when it fails the same way within
        the window; a call of that tool that works ends it; other tools leave it be."""
        streaks = self._streaks
        tool = (key._channel, key._tool)
        coarse = key._coarse
        if coarse is None:
            if not streaks:
                return None  # no tool is failing (most calls)
            streaks.pop(tool, None)  # the failing tool works: its streak ends
            live = self._live_streak(pos)  # another tool's call between tries is part of it
            return None if live is None else (live[0], True)
        streak = streaks.get(tool)
        window = self.policy.error_streak_window
        if streak is None or streak[0] != coarse or pos - streak[3] > window:
            streak = streaks[tool] = [coarse, 0, step, pos, key, False]
            if len(streaks) > 64:  # bounded: drop the streaks the window has passed
                for other in [t for t, s in streaks.items() if pos - s[3] > window]:
                    del streaks[other]
        elif key._identity != streak[4]._identity or self._tool_pos != streak[3]:
            # the arguments varied, or other calls came between (an edit before each
            # recompile): the identical call again at once is the repeat rule's
            streak[5] = True
        streak[1] += 1
        streak[3] = pos
        streak[4] = key
        if streak[1] >= self.policy.error_streak and streak[5]:
            return self._streak_loop(streak), True
        return self._live_streak(pos)

    def _live_streak(self, pos: int) -> tuple[Loop, bool] | None:
        """The longest streak at its threshold whose latest failure is within the window,
        with no new node or state since (other tools' calls leave its alarm be, even ones
        that work; an agent that went somewhere new has left it)."""
        best = None
        window, need = self.policy.error_streak_window, self.policy.error_streak
        moved = self._moved
        for streak in self._streaks.values():
            live = streak[1] >= need and streak[5] and pos - streak[3] <= window
            live = live and moved <= streak[3]
            if live and (best is None or streak[1] > best[1]):
                best = streak
        return None if best is None else (self._streak_loop(best), False)

    @staticmethod
    def _streak_loop(streak: list[Any]) -> Loop:
        _, count, began, _, key, _ = streak
        return Loop("repeat", 1, count, (key,), began, False, "", "tool", "same_error")

    def _state(
        self, item: Hashable, subject: str | None, key: ActionKey, step: int, pos: int
    ) -> Loop | None:
        """Recurrence: ``item`` (a reported state, ``subject`` its digest; or a tool call with
        its result, the identity of ``key``, ``subject`` None) sighted ``state_repeats`` times
        within ``state_window`` actions, with nothing new since the first of them."""
        policy = self.policy
        recent = self._recurring
        recent.append((pos, item))
        sightings = self._sightings.get(item)
        if sightings is None:  # a first sighting (most are): no more to check
            if len(self._sightings) > 4 * policy.state_window:
                self._forget(self._sightings, pos - policy.state_window)
            self._sightings[item] = [(pos, step)]
            return None
        sightings.append((pos, step))
        k, window = policy.state_repeats, policy.state_window
        if len(sightings) > k:
            del sightings[0]
        if len(sightings) < k:
            return None
        first, first_step = sightings[0]
        if pos - first > window or self._novelty.progress_since(first):
            return None
        # three laps: every state or call seen since the first sighting came round as often
        # (a hub state, sighted between every other one, is not three laps by itself)
        table = self._sightings
        for at, other in reversed(recent):
            if at < first:
                break
            seen = table.get(other)
            if seen is None or len(seen) < k or pos - seen[0][0] > window:
                return None
        self._cycle = frozenset(other for at, other in recent if at >= first)
        rule = "action" if subject is None else "state"
        if subject is None:  # a recurring call: described only when it alarms
            subject = key.describe()
        held = self._held.get("state")
        began = held.loop.began_step if held is not None else first_step
        loop = Loop("state", 0, policy.state_repeats, (key,), began, False, subject, "", rule)
        return loop

    def _node(
        self, node: str, subject: str | None, key: ActionKey, step: int, t: float, pos: int
    ) -> Loop | None:
        """A node visited ``node_visits`` times in the same state (``subject``: the state's
        digest, when the agent reports one) within the window, with no progress since the
        first of them. A node visited in other states, no progress made, is the state rule's
        to judge (a hub in two states alternating is two laps, not five visits)."""
        policy = self.policy
        visits = self._visits.get((node, subject))
        if visits is None:
            if len(self._visits) > 4 * policy.node_window_events:
                self._forget(self._visits, pos - policy.node_window_events)
            visits = self._visits[(node, subject)] = deque(maxlen=policy.node_visits)
        visits.append((pos, t, step))
        if len(visits) < policy.node_visits:
            return None
        first_pos, first_t, first_step = visits[0]
        if t > first_t:  # virtual time moves: the window is in seconds
            recent = t - first_t <= policy.node_window_seconds
        else:  # it does not (a run on frozen time): the window is in actions
            recent = pos - first_pos < policy.node_window_events
        if not recent or self._novelty.progress_since(first_pos):
            return None
        return Loop("node", 0, policy.node_visits, (key,), first_step, False, node)

    @staticmethod
    def _forget(table: dict[Any, Any], before: int) -> None:
        """Drop the subjects last seen before ``before`` (keeps the tables bounded)."""
        # entries are never empty (made with their first sighting); inline: this scans it all
        for subject in [s for s, seen in table.items() if seen[-1][0] < before]:
            del table[subject]

    # -- episodes --------------------------------------------------------------------------

    def _episodes(self, found: dict[str, tuple[Loop, bool]], pos: int) -> list[Loop]:
        """Loops found now continue or begin episodes; a held state or node loop stays while
        no progress is made and its window has not passed."""
        held = self._held
        if not held and not found:
            return []
        for kind in [k for k in held if k not in found]:
            if not self._still(kind, held[kind], pos):
                del held[kind]
        alarms = []
        for kind, (loop, continued) in found.items():
            current = held.get(kind)  # another node or state of the same cycle continues it
            if current is None:
                held[kind] = _Held(loop, pos)
                alarms.append(_renew(loop, True))
                continue
            current.loop = loop
            if continued:
                current.continued = pos
            alarms.append(loop)
        alarms.extend(h.loop for kind, h in held.items() if kind not in found)
        return alarms

    def _still(self, kind: str, held: _Held, pos: int) -> bool:
        """Whether a state or node loop not seen again at this action still holds."""
        if kind == "repeat" or self._novelty.progress_since(held.continued):
            return False
        if kind == "state" and self._item is not None and self._item not in self._cycle:
            return False  # a call or state from outside the cycle: it was left
        window = self.policy.state_window if kind == "state" else self.policy.node_window_events
        return pos - held.continued <= window


def _renew(loop: Loop, new: bool) -> Loop:
    return Loop(
        loop.kind,
        loop.period,
        loop.repeats,
        loop.keys,
        loop.began_step,
        new,
        loop.subject,
        loop.stream,
        loop.rule,
    )
