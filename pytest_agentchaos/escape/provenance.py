"""Value provenance: a value a tool result issued and the agent passes back is a handle.

A job id, a cursor, a run handle, a scratch directory: the agent did not choose it, a tool
gave it, and a stuck agent that resubmits, polls or retries gets a fresh one every lap. Such a
value is told apart by where it came from, not by its shape: first seen in a tool's result,
then passed back as (part of) an argument. There it is ``<handle>``, and so it is in the
result of the call that passed it (``status(job=<handle>)`` -> ``job <handle> pending``), so
two laps that differ only in their handles key alike, and two calls with other content never
do (only the handle is masked). Other results keep it: they were keyed before it was a handle,
and a lap must key as the one before it did.

A value the agent passed before any result showed it is the agent's own choice (a query, a
file it names) and never becomes a handle. Nor does an item the agent works through: ids that
one listing issued together and the agent passes one after another in the same argument are
the same call on different items. A handle is *fresh*: issued after the value the same
argument held last time was used.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["HANDLE", "Provenance"]

#: What a handle is masked to.
HANDLE = "<handle>"

#: The tokens of a text that can be handles: a run of word characters and ``.-/:`` holding a
#: digit (``7``, ``r-12``, ``item_3``, ``./scratch_3``, ``job:41``). A token is a whole run, so it
#: starts only where a run starts: a long run with no digit is scanned once, not once per letter.
_TOKEN = re.compile(r"(?<![\w./:-])[\w./:-]*\d[\w./:-]*")
#: The same for a text of ASCII characters alone: it finds the same tokens there at a third of
#: the cost (the engine reads no Unicode tables).
_ASCII_TOKEN = re.compile(_TOKEN.pattern, re.ASCII)
_DIGIT = re.compile(r"\d")


def _token_pattern(text: str) -> re.Pattern[str]:
    return _ASCII_TOKEN if text.isascii() else _TOKEN


#: What may precede a one-digit handle in a text: ``job=7``, ``job: 7``, ``#7``.
_NAMED = ("=", ":", "#")
#: A value longer than this is content, not a handle; a table bigger than this starts over.
_MAX_VALUE = 120
_MAX_VALUES = 4096
#: How much of one value is read for tokens, and how many leaves of one value are read.
_TEXT_LIMIT = 4096
_LEAVES = 512


class Provenance:
    """Remembers the values tool results issued, and which of them came back as arguments.

    Use one per run: :meth:`args` masks the handles in a call's arguments (and learns the
    values that become handles there), :meth:`result` masks known handles in what a call
    returned and records the values it issues. Both return new data; inputs are not changed.
    """

    __slots__ = ("_candidates", "_given", "_handles", "_issued", "_passed", "_slots", "_tick")

    def __init__(self) -> None:
        self._issued: dict[str, int] = {}  # value first seen in a result -> when
        self._given: set[str] = set()  # values the agent passed before any result issued them
        self._handles: set[str] = set()  # issued values passed back: masked everywhere
        self._slots: dict[tuple[str, str], tuple[str, int]] = {}  # argument -> (value, when)
        self._passed: set[str] = set()  # the handles the latest call's arguments passed
        self._tick = 0
        # a short result text -> the candidate handles it holds (results repeat their texts)
        self._candidates: dict[str, tuple[str, ...]] = {}

    @property
    def handles(self) -> frozenset[str]:
        """The values known to be handles so far."""
        return frozenset(self._handles)

    def args(self, tool: str, args: Any, more: bool = False) -> Any:
        """``args`` of a call of ``tool`` with every handle masked: a leaf equal to a value a
        result issued, or a token of a text leaf that is one (``cat ./scratch_3/out.txt``).
        ``more``: these are more arguments of the call whose others were read just before
        (its URL's path), whose handles stay passed."""
        self._tick += 1
        if self._passed and not more:
            self._passed = set()
        issued = self._issued
        if not issued:
            self._walk_given(args, [_LEAVES])
            return args
        if type(args) is not dict:
            if isinstance(args, Mapping):
                return {k: self._walk(v, (tool, str(k)), [_LEAVES]) for k, v in args.items()}
            return self._walk(args, (tool, ""), [_LEAVES])
        # most arguments are a few texts and numbers that no result issued: read inline
        handles, given = self._handles, self._given
        out = {}
        for k, v in args.items():
            kind = type(v)
            if kind is str:
                if len(v) > _MAX_VALUE or (v not in issued and v not in handles):
                    digit = _DIGITS_IN.get(v)
                    if digit is None:
                        digit = _DIGIT.search(v, 0, _TEXT_LIMIT) is not None
                        if len(v) <= _MEMO_TEXT:
                            if len(_DIGITS_IN) >= _MEMO_SIZE:
                                _DIGITS_IN.clear()
                            _DIGITS_IN[v] = digit
                    if not digit:
                        out[k] = v  # no value a result issued, no token that could be one
                        continue
            elif kind is int:
                text = str(v)
                if text not in issued and text not in handles:
                    if len(given) >= _MAX_VALUES:
                        given.clear()
                    given.add(text)  # the agent's own choice
                    out[k] = v
                    continue
            elif kind is bool or v is None:
                out[k] = v
                continue
            out[k] = self._walk(v, (tool, str(k)), [_LEAVES])
        return out

    def result(self, value: Any) -> Any:
        """``value`` (what the latest call returned) with the handles its arguments passed
        masked; its candidate values are recorded as issued (those the agent did not pass
        first)."""
        self._tick += 1
        masked = self._walk(value, None, [_LEAVES]) if self._passed else value
        self._issue(value, [_LEAVES])
        return masked

    # -- internals -----------------------------------------------------------------------------

    def _walk(self, value: Any, slot: tuple[str, str] | None, budget: list[int]) -> Any:
        if budget[0] <= 0:
            return value
        budget[0] -= 1
        kind = type(value)
        if kind is str or isinstance(value, str):
            return self._text(str(value), slot)
        if kind is bool or value is None:
            return value
        if kind is int or (isinstance(value, int) and not isinstance(value, bool)):
            found = self._match(str(value), slot)
            return value if found is None else found
        if isinstance(value, Mapping):
            return {k: self._walk(v, slot, budget) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._walk(v, slot, budget) for v in value]
        return value

    def _text(self, text: str, slot: tuple[str, str] | None) -> str:
        if slot is None:
            if text in self._passed:
                return HANDLE
        elif len(text) <= _MAX_VALUE and (text in self._issued or text in self._handles):
            found = self._match(text, slot)
            return text if found is None else found
        if _DIGIT.search(text[:_TEXT_LIMIT]) is None:
            return text
        head, tail = text[:_TEXT_LIMIT], text[_TEXT_LIMIT:]
        tokens = _token_pattern(head)
        return tokens.sub(lambda m: self._token(m.group(0), slot), head) + tail

    def _token(self, token: str, slot: tuple[str, str] | None) -> str:
        found = self._match(token, slot)
        if found is not None:
            return found
        # a path or a handle with a prefix: its longest issued piece (./scratch_3/out.txt)
        for piece in _pieces(token):
            found = self._match(piece, slot)
            if found is not None:
                return token.replace(piece, found, 1)
        return token

    def _match(self, value: str, slot: tuple[str, str] | None) -> str | None:
        """``<handle>`` for a handle; in an argument (``slot``), an issued value that is fresh
        for its argument becomes one."""
        if slot is None:
            return HANDLE if value in self._passed else None
        issued = self._issued.get(value)
        if issued is None and value not in self._handles:
            self._remember(self._given, value)
            return None
        last = self._slots.get(slot)
        self._slots[slot] = (value, self._tick)
        if len(self._slots) > _MAX_VALUES:
            self._slots.clear()
        if value in self._handles and (last is None or last[0] == value):
            self._passed.add(value)
            return HANDLE
        if issued is not None and (last is None or last[0] == value or issued > last[1]):
            self._handles.add(value)
            self._passed.add(value)
            return HANDLE
        return None

    def _walk_given(self, value: Any, budget: list[int]) -> None:
        if budget[0] <= 0:
            return
        budget[0] -= 1
        if isinstance(value, str):
            if len(value) <= _MAX_VALUE:
                self._remember(self._given, value)
            if _DIGIT.search(value[:_TEXT_LIMIT]) is not None:
                head = value[:_TEXT_LIMIT]
                for token in _token_pattern(head).findall(head):
                    self._remember(self._given, token)
        elif isinstance(value, int) and not isinstance(value, bool):
            self._remember(self._given, str(value))
        elif isinstance(value, Mapping):
            for item in value.values():
                self._walk_given(item, budget)
        elif isinstance(value, (list, tuple)):
            for item in value:
                self._walk_given(item, budget)

    def _issue(self, value: Any, budget: list[int]) -> None:
        """Record the candidate handles of a result: its scalars holding a digit and the
        tokens of its texts (iteratively, at most ``budget`` leaves: every result pays it)."""
        issued, given, tick = self._issued, self._given, self._tick
        found = self._found(value, budget[0])
        if found is not None and len(issued) + len(found) < _MAX_VALUES:
            # every leaf read, and no room to run out: the order they were found in is moot
            for text in found:
                if text not in issued and text not in given:
                    issued[text] = tick
            return
        self._issue_in_order(value, budget)

    def _found(self, value: Any, budget: int) -> list[str] | None:
        """The candidate handles of a plain JSON result read container by container (its
        texts and numbers at once, not stacked one by one): the same values as
        :meth:`_issue_in_order` finds, in another order. None when that order can matter
        (more than ``budget`` leaves: which are read depends on it) or the result holds other
        types than JSON's (read as :meth:`_issue_in_order` reads them)."""
        if type(value) is not dict and type(value) is not list:
            return None
        memo = self._candidates
        recall = memo.get
        found: list[str] = []
        todo = [value]
        pop, push = todo.pop, todo.append
        leaves = 1  # every container's items count, as every item popped does in order
        while todo:
            item = pop()
            items = item.values() if type(item) is dict else item
            leaves += len(items)
            if leaves > budget:
                return None
            for leaf in items:
                kind = type(leaf)
                if kind is str:
                    known = recall(leaf)
                    if known is None:
                        known = _candidates(leaf)
                        if len(leaf) <= _MEMO_TEXT:
                            if len(memo) >= _MEMO_SIZE:
                                memo.clear()
                            memo[leaf] = known
                    if known:
                        found += known
                elif kind is dict or kind is list or kind is tuple:
                    push(leaf)
                elif kind is int:
                    text = str(leaf)
                    if len(text) <= _MAX_VALUE:
                        found.append(text)
                elif not (kind is float or kind is bool or leaf is None):
                    return None  # a mapping, a text or a number of another type
        return found

    def _issue_in_order(self, value: Any, budget: list[int]) -> None:
        """:meth:`_issue` in the order the values are found (last item first), for a result
        where it can matter: one with more leaves than the budget, or a table filling up."""
        issued, given, tick = self._issued, self._given, self._tick
        memo = self._candidates
        recall = memo.get
        found: list[str] = []
        todo = [value]
        pop, extend = todo.pop, todo.extend
        leaves = budget[0]
        while todo and leaves > 0:
            item = pop()
            leaves -= 1
            kind = type(item)
            if kind is str:
                known = recall(item)
                if known is None:
                    known = _candidates(item)
                    if len(item) <= _MEMO_TEXT:
                        if len(memo) >= _MEMO_SIZE:
                            memo.clear()
                        memo[item] = known
                found += known
            elif kind is dict:
                extend(item.values())
            elif kind is list or kind is tuple:
                extend(item)
            elif kind is int:
                text = str(item)
                if len(text) <= _MAX_VALUE:
                    found.append(text)
            elif isinstance(item, Mapping):
                extend(item.values())
            elif isinstance(item, str):
                todo.append(str(item))
        if len(issued) + len(found) < _MAX_VALUES:  # no room to run out: recorded as found
            for text in found:
                if text not in issued and text not in given:
                    issued[text] = tick
            return
        fresh = [text for text in found if text not in issued and text not in given]
        if len(issued) + len(fresh) < _MAX_VALUES:
            issued.update(dict.fromkeys(fresh, tick))
            return
        for text in fresh:  # each at most _MAX_VALUE long
            if text not in issued:
                if len(issued) >= _MAX_VALUES:
                    issued.clear()
                issued[text] = tick

    def _add(self, text: str) -> None:
        if text not in self._given and text not in self._issued and len(text) <= _MAX_VALUE:
            if len(self._issued) >= _MAX_VALUES:
                self._issued.clear()
            self._issued[text] = self._tick

    @staticmethod
    def _remember(table: set[str], text: str) -> None:
        if len(table) >= _MAX_VALUES:
            table.clear()
        table.add(text)


#: Result texts up to this long have their candidate handles remembered, up to this many
#: texts (then the memory starts over).
_MEMO_TEXT = 256
_MEMO_SIZE = 16384
#: Short argument texts -> whether they hold a digit: agents pass the same texts (a query, a
#: path, a mode) again and again, and a dict lookup costs a fifth of the search.
_DIGITS_IN: dict[str, bool] = {}


def _candidates(item: str) -> tuple[str, ...]:
    """The candidate handles of one result text, in the order they are recorded: the text
    itself (short, holding a digit), then its tokens holding a digit and their pieces."""
    if _DIGIT.search(item) is None:
        return ()
    if len(item) <= _MAX_VALUE and _token_pattern(item).fullmatch(item) is not None:
        # one token (most result leaves: AC123, 0.58s, a timestamp): the text, then its pieces
        # (what _scanned finds in it, without the scan)
        if "/" not in item and ":" not in item:
            return (item,)
        return tuple(dict.fromkeys((item, *_pieces(item))))
    return _scanned(item)


def _scanned(item: str) -> tuple[str, ...]:
    """:func:`_candidates` of a text holding a digit, read token by token."""
    found: list[str] = []
    if len(item) <= _MAX_VALUE and item.strip() == item:
        found.append(item)
    text = item[:_TEXT_LIMIT]
    for match in _token_pattern(text).finditer(text):
        token = match.group(0)
        if len(token) < 2 and text[match.start() - 1 : match.start()] not in _NAMED:
            continue  # a lone digit is a handle only when named (job=7, #7)
        found.append(token)
        if "/" in token or ":" in token:
            found.extend(_pieces(token))
    # a text found twice is recorded (or skipped) the first time: the second changes nothing
    return tuple(dict.fromkeys(t for t in found if len(t) <= _MAX_VALUE))


def _pieces(token: str) -> list[str]:
    """The parts of a path-like token that hold a digit (``./scratch_3/out.txt`` ->
    ``./scratch_3``, ``scratch_3``), longest first (of two as long, the first in the token)."""
    if "/" not in token and ":" not in token:
        return []
    out: dict[str, None] = {}  # ordered: equally long pieces keep the token's order
    prefix = None
    for part in token.replace(":", "/").split("/"):  # at both (a str method: no regex)
        prefix = part if prefix is None else f"{prefix}/{part}"
        if part and _DIGIT.search(part):
            out[part] = None
            if prefix != part:
                out[prefix] = None
    return sorted(out, key=len, reverse=True)
