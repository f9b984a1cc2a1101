"""Report counters: a number field of a reported state that rises by one on every report.

A checkpointer stamps each save with a version, a harness numbers its reports, a graph
runtime counts its supersteps: the field rises by one at every report whatever the state
holds. Such a field says how many reports there were, not what the agent did, so two
reports of the same state that differ only in it are the same state.

What tells it from a count of work (``"processed": 8``) is its behaviour across *different*
states: a count of work rises where work is done, a report counter rises at every report,
also from one state to another that has nothing else in common with it. A field is taken
for a report counter when it rose by one at every report since the run's first (a stamp on
every report), or at :data:`EVIDENCE` reports in a row, and one of those rises came between
two states that differ in something else; it is one no longer when it does not rise by one.
A work count that rises at the reports where work is done, and stays at the others, is none.
A state logged as ``name=value`` text (``summary=..., messages=7``) is read alike: its
whole-number pairs are its number fields, the rest of the text what else it says.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

__all__ = ["EVIDENCE", "ReportCounters"]

#: Rises by one in a row before a field is taken for a report counter.
EVIDENCE = 2
#: Fields followed at most (past it, the memory starts over).
_MAX_FIELDS = 256
#: A whole-number ``name=value`` pair of a state logged as text (``messages=7``,
#: ``"step": 3``, ``轮次：2``); not a decimal, a ratio, a time or a date (``2.5``, ``3/10``,
#: ``12:30``, ``2026-11-28``).
_PAIR = re.compile(
    r"(?<![\w-])(?P<name>[^\W\d][\w-]{0,47})[\"']?\s{0,3}[=:：]\s{0,3}(?P<value>\d{1,9})"
    r"(?![\w.,%/:-]\d|[\w%/])"
)
#: How much of a state's text is read for such pairs.
_PAIR_SCAN = 4096


class ReportCounters:
    """Learns, over one run's state reports, the number fields that count the reports."""

    __slots__ = (
        "_broken", "_last", "_previous", "_reports", "_rises", "_seen_at", "_where", "counters",
    )  # fmt: skip

    def __init__(self) -> None:
        self._last: dict[tuple[str, ...], int] = {}  # field path -> its latest value
        self._rises: dict[tuple[str, ...], int] = {}  # field path -> rises by one in a row
        self._where: dict[tuple[str, ...], set[str]] = {}  # the states it rose at (two)
        self._seen_at: dict[tuple[str, ...], str] = {}  # field path -> the latest state it was in
        self._previous = ""  # the latest report without its numbers
        self._broken: set[tuple[str, ...]] = set()  # once did not rise by one
        self._reports = 0  # the dict states reported so far
        #: the field paths taken for report counters now
        self.counters: set[tuple[str, ...]] = set()

    def mask(self, state: Any) -> Any:
        """``state`` with each report counter's value replaced by ``"<tick>"`` (after
        learning from this report). A state that is no dict is returned as it is."""
        if type(state) is not dict:
            return state
        self._reports += 1
        fields = list(_numbers(state))
        if not fields:
            return state
        if len(self._last) > _MAX_FIELDS:
            self.__init__()  # type: ignore[misc]  # bounded: start over
        rising = {p for p, v in fields if (b := self._last.get(p)) is not None and v == b + 1}
        # what else the report says (the state without its numbers): another state?
        rest = _without(state, {p for p, _ in fields})
        rest_digest = repr(rest)
        ticked: set[tuple[str, ...]] = set()
        for path, value in fields:
            if path in rising:
                rises = self._rises[path] = self._rises.get(path, 0) + 1
                where = self._where.setdefault(path, set())
                if len(where) < 2:
                    # the rise came between the report that last held the field and this one:
                    # from one state to another when they differ (a save stamped on leaving a
                    # state too)
                    where.add(rest_digest)
                    where.add(self._seen_at.get(path, rest_digest))
                # rising at every report since the first, or EVIDENCE times in a row, and
                # between two different states (a count of work rises where work is done)
                stamped = rises == self._reports - 1 and path not in self._broken
                if len(where) >= 2 and rises >= 2 and (rises >= EVIDENCE or stamped):
                    self.counters.add(path)
                elif stamped and rises == 1 and rest_digest != self._previous:
                    # on the first two reports, from one state to another: taken for one at
                    # this report alone until it rises again at a third (where a count of
                    # work, rising at its own state alone, is told apart)
                    ticked.add(path)
            else:
                if path in self._last:
                    self._broken.add(path)
                self._rises[path] = 0
                self._where.pop(path, None)
                self.counters.discard(path)
            self._last[path] = value
            self._seen_at[path] = rest_digest
        self._previous = rest_digest
        if not self.counters and not ticked:
            return state
        return _ticked(state, self.counters | ticked, ())

    def mask_text(self, text: str) -> str:
        """A state logged as text with each report counter's value replaced by ``<tick>``:
        its whole-number ``name=value`` pairs read as the number fields of a state given as
        data (a name said twice is read as no field), the rest of the text as what else the
        report says. A text without such pairs is returned as it is (a report all the same,
        as a state given as data without a number field is)."""
        pairs = list(_PAIR.finditer(text)) if len(text) <= _PAIR_SCAN else []
        said = Counter(m.group("name") for m in pairs)
        once = {n for n, times in said.items() if times == 1}
        fields: dict[str, Any] = {
            m.group("name"): int(m.group("value")) for m in pairs if m.group("name") in once
        }
        if not fields:
            self._reports += 1
            return text
        cut, at = [], 0
        for m in pairs:
            cut.append(text[at : m.start("value")])
            at = m.end("value")
        cut.append(text[at:])
        fields["\x00text"] = "\x00".join(cut)  # what else the report says
        masked = self.mask(fields)
        if masked is fields:
            return text
        out, at = [], 0
        for m in pairs:
            if masked.get(m.group("name")) == "<tick>":
                out.append(text[at : m.start("value")] + "<tick>")
                at = m.end("value")
        out.append(text[at:])
        return "".join(out)


def _numbers(state: dict[Any, Any]) -> list[tuple[tuple[str, ...], int]]:
    """The whole-number fields of a state and of the objects in it, one level down."""
    out: list[tuple[tuple[str, ...], int]] = []
    for key, value in state.items():
        if type(key) is not str:
            continue
        if type(value) is int:
            out.append(((key,), value))
        elif type(value) is dict:
            out.extend(((key, k), v) for k, v in value.items() if type(k) is str and type(v) is int)
    return out


def _without(state: dict[Any, Any], paths: set[tuple[str, ...]]) -> Any:
    """The state without the fields at ``paths``: what else the report says."""
    out = {k: v for k, v in state.items() if (k,) not in paths}
    for path in paths:
        if len(path) == 2 and type(out.get(path[0])) is dict:
            out[path[0]] = {k: v for k, v in out[path[0]].items() if (path[0], k) not in paths}
    return out


def _ticked(state: dict[Any, Any], counters: set[tuple[str, ...]], at: tuple[str, ...]) -> Any:
    out: dict[Any, Any] = {}
    for key, value in state.items():
        path = (*at, key)
        if type(value) is int and path in counters:
            out[key] = "<tick>"
        elif type(value) is dict and not at:
            out[key] = _ticked(value, counters, path)
        else:
            out[key] = value
    return out
