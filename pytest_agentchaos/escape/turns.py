"""What a model's newest input turn brings to a conversation: a new request, or a nudge.

A chat model answers its newest turn, so a reply is keyed with that turn: the same reply to
a new question is another action (a label per review, an acknowledgement per pasted
paragraph). But a user who only nudges ("continue", "next", "are you there?", "进度怎么样")
asks nothing new, and a model handing back the same reply to each nudge repeats itself
however the nudges are worded.

Which of the two a turn is, is read from evidence rather than from a list of nudge words:
the tokens the turn adds to what the conversation said before it (every earlier turn and
reply the run showed; words, and for Chinese and Japanese single characters, two to a
word). A turn is a *nudge* when it adds no number and no identifier, and at most
``limit`` words, fewer than the reply it gets says: a one-word label answering a new
one-word item answers it, a sentence handed back to a three-word nudge ignores it. A turn
equal to the one before it (or with its one number counted up by one: "continue (2)", also
inside a name it is part of: "auto-reply 2/10") is read as that one was.

A reply that says again what one of the latest replies said, and says more than twice what
its turn added, ignored that turn whatever it brought (the same clarifying question after the
user answered it, the same code in a new apology); a reply with no word in it answers
nothing. Both are keyed as replies to a nudge.
"""

from __future__ import annotations

import re
import unicodedata
from collections import deque
from collections.abc import Mapping
from typing import Any

from .history import digest
from .texts import COUNTER_WORDS

__all__ = ["NUDGE", "Turns", "weight", "words"]

#: What the replies to nudges are keyed with instead of the nudge: they answer nothing new.
NUDGE = "<nudge>"

#: How much of one text is read for its tokens.
_TEXT_LIMIT = 4000
#: Tokens remembered per run; past this the memory starts over (turns then look new: a miss,
#: never a false alarm).
_MAX_SEEN = 65536
#: Earlier messages of a message list read at most, per call.
_BACKLOG = 16

_CJK = "\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+(?:['’][^\W_{_CJK}]+)*")
_PLACEHOLDER = re.compile(r"<[a-z]+>")
_CJK_CHAR = re.compile(rf"[{_CJK}]")
#: Turns remembered by their shape (past this: start over).
_MAX_TURNS = 1024
#: A runner's count of turns or tries in a turn ("[turn 4]", "attempt #3", "第3次"): the
#: number says how many, not what to do.
_COUNTED = re.compile(
    r"(?P<word>\b(?:"
    + "|".join(w for w in COUNTER_WORDS if w.isascii())
    + r")\w*\W{0,3}|第\s?)\d{1,6}",
    re.IGNORECASE,
)
#: A name of something rather than a word: a capital inside a word (``PayPal``, ``iPhone``)
#: or a word joined to another by ``.``, ``_``, ``/`` (``app.py``, ``user_42``, ``src/app``).
_IDENTIFIER = re.compile(r"[^\W_]+(?:[._/][^\W_]+)+|[^\W\d_]*[a-z][A-Z][^\W_]*")


def words(text: str) -> set[str]:
    """The distinct tokens of ``text``: its words (NFKC, casefolded), its Chinese or Japanese
    characters one by one, and its identifiers whole (``PayPal``, ``app.py``, ``user_42``,
    marked by a leading ``#``); masked placeholders (``<time>``) are no words."""
    head = unicodedata.normalize("NFKC", text[:_TEXT_LIMIT])
    if "<" in head:
        head = _PLACEHOLDER.sub(" ", head)
    found = set(_TOKEN.findall(head.casefold()))
    found.update("#" + m.casefold() for m in _IDENTIFIER.findall(head))
    return found


def weight(tokens: set[str]) -> float:
    """How many words ``tokens`` make: a Chinese or Japanese character counts half (a word
    there is two characters on average)."""
    cjk = sum(1 for t in tokens if _CJK_CHAR.match(t))
    names = sum(1 for t in tokens if t[0] == "#")  # each also counted by its words
    return len(tokens) - names - cjk / 2


class Turns:
    """Reads a run's model calls in order and says, per reply, what it answered: the newest
    turn's digest, or :data:`NUDGE` when that turn was a nudge. One per run.

    ``limit``: the most words a nudge adds (0: no turn is a nudge)."""

    __slots__ = ("_ids", "_last", "_read", "_replies", "_seen", "limit", "valued")

    def __init__(self, limit: int = 3) -> None:
        self.limit = limit
        #: Whether the latest turn read added a number or an identifier to the conversation.
        self.valued = False
        self._seen: set[str] = set()
        # (digest of the latest turn that said something, its key, its tokens)
        self._last: tuple[str, str, set[str]] | None = None
        self._read = 0  # messages of the latest message list read
        self._replies: deque[str] = deque(maxlen=_REPLIES)  # what the latest replies said
        # a turn's tokens with its numbers taken out -> (its id, its tokens), latest first
        self._ids: dict[tuple[str, ...], tuple[str, tuple[str, ...]]] = {}

    def identity(self, turn: Any) -> str:
        """The identity of a turn (the newest of a model's input, masked): its tokens in
        order, so the same turn written in another case, punctuation or spacing is the same
        turn; and a turn that is the one before with its one number counted up by one
        ("[turn 4] continue" after "[turn 3] continue") is that one."""
        text = turn if isinstance(turn, str) else _text(turn)
        head = unicodedata.normalize("NFKC", text[:_TEXT_LIMIT])
        if "<" in head:
            head = _PLACEHOLDER.sub(" <> ", head)  # a masked token: one token, whatever it was
        tokens = tuple(_TOKEN.findall(head.casefold()) or (head.strip(),))
        skeleton = tuple("<n>" if t.isdigit() else t for t in tokens)
        last = self._ids.get(skeleton)
        if last is not None and (tokens == last[1] or _counters_up(tokens, last[1])):
            self._ids[skeleton] = (last[0], tokens)
            return last[0]
        found = digest(["turn", tokens])
        if len(self._ids) >= _MAX_TURNS:
            self._ids.clear()
        self._ids[skeleton] = (found, tokens)
        return found

    @staticmethod
    def uncounted(turn: Any) -> str:
        """The identity of a turn (the newest of a model's input, masked) with a runner's
        counts taken out (``[turn 4]``, ``attempt #3``, ``第3次``): the same observation sent
        again under a new turn number is the same turn, however many turns came between."""
        text = turn if isinstance(turn, str) else _text(turn)
        head = unicodedata.normalize("NFKC", _COUNTED.sub(r"\g<word> ", text[:_TEXT_LIMIT]))
        if "<" in head:
            head = _PLACEHOLDER.sub(" <> ", head)
        return digest(["turn", _TOKEN.findall(head.casefold()) or [head.strip()]])

    def answered(self, input: Any, turn: str, reply: str, content: str | None = None) -> str:  # noqa: A002
        """What a reply answered: ``turn`` (the digest of the newest turn of ``input``), or
        :data:`NUDGE`. ``reply`` is the reply's text, ``content`` the key of what it says
        (near-duplicates share it). Remembers the turn and the reply as said; a turn that
        says nothing (a call with no prompt) is not the turn the next one is compared with."""
        self._earlier(input)
        said = words(_COUNTED.sub(r"\g<word> ", _text(_newest(input))))
        replied = words(reply)
        news = said - self._seen
        self.valued = any(t[0] == "#" or any(c.isdigit() for c in t) for t in news)
        last = self._last
        if last is not None and (last[0] == turn or _counted_up(said, last[2])):
            key = last[1]  # the same turn again (its counter up by one): as it was then
        elif self.limit and (
            not replied  # a reply with no word in it answers nothing
            or self._nudge(news, replied)
            or (content is not None and content in self._replies and _ignored(news, replied))
        ):
            key = NUDGE
        else:
            key = turn
        if said:  # an empty turn (another agent called with no prompt) breaks no chain
            self._last = (turn, key, said)
        self._learn(said)
        self._learn(replied)
        if content is not None:
            self._replies.append(content)
        return key

    def _nudge(self, news: set[str], replied: set[str]) -> bool:
        if self.valued:
            return False  # a number or an identifier: something to act on
        added = weight(news)
        return added <= self.limit and added < weight(replied)

    def _earlier(self, input: Any) -> None:  # noqa: A002
        """Learn what the input says besides its newest turn: the messages of a list before
        the last one (those not read at an earlier call), the other parts of a table."""
        if isinstance(input, list):
            n = len(input)
            start = self._read if self._read <= n - 1 else 0  # else another conversation
            start = max(start, n - 1 - _BACKLOG)  # bounded: the newest messages before it
            for message in input[start : n - 1]:
                self._learn(words(_text(message)))
            self._read = n - 1 if n else 0
        elif isinstance(input, Mapping):
            field = next((f for f in _FIELDS if f in input), None)
            if field is None:
                return  # the whole table is the newest turn
            for name, value in input.items():
                if name != field and isinstance(value, str):
                    self._learn(words(value))

    def _learn(self, tokens: set[str]) -> None:
        if len(self._seen) + len(tokens) > _MAX_SEEN:
            self._seen.clear()
        self._seen |= tokens


_FIELDS = ("content", "user", "input", "prompt", "text", "message")
#: How many of the latest replies a reply is compared with.
_REPLIES = 8


def _ignored(news: set[str], replied: set[str]) -> bool:
    """Whether a reply that says again what an earlier one said ignored the turn it answers:
    it says more than twice what the turn added. A short label or an acknowledgement
    answering new material (a review, a pasted paragraph) says less than the material added,
    and answers it."""
    return 2 * weight(news) < weight(replied) + _run_on(replied)


def _run_on(tokens: set[str]) -> float:
    """What a reply's run-on tokens say beyond one word each: a token of 16 characters or
    more (a degenerate "nynyny...", a run of one character) counts one word per 8."""
    return sum(len(t) // 8 - 1 for t in tokens if len(t) >= 16 and t[0] != "#")


def _counted_up(said: set[str], before: set[str]) -> bool:
    """Whether a turn is the one before with one number one higher ("continue (2)" after
    "continue (1)"): a counter the runner adds, not something to act on."""
    new, old = said - before, before - said
    if len(new) != len(old) or not new:
        return False
    # the counter alone, and the identifiers it is part of ("auto-reply 2/10": ``2`` and
    # ``#2/10``), each of which must be the one before with only the counter changed
    numbers = [t for t in new if t[0] != "#"]
    olds = [t for t in old if t[0] != "#"]
    if len(numbers) != 1 or len(olds) != 1:
        return False
    (a,), (b,) = numbers, olds
    if not (a.isdigit() and b.isdigit() and len(a) < 10 and int(a) == int(b) + 1):
        return False
    if len(new) == 1:
        return True
    counter = re.compile(rf"(?<!\d){a}(?!\d)")
    return {counter.sub(b, t) for t in new if t[0] == "#"} == {t for t in old if t[0] == "#"}


def _counters_up(tokens: tuple[str, ...], before: tuple[str, ...]) -> bool:
    """Whether a turn's tokens are the ones before with each number that changed one higher
    (a runner's counters: "[turn 5] continuation #4" after "[turn 4] continuation #3")."""
    if len(tokens) != len(before):
        return False
    for a, b in zip(tokens, before, strict=True):
        if a != b and not (a.isdigit() and b.isdigit() and len(a) < 10 and int(a) == int(b) + 1):
            return False
    return True


def _newest(value: Any) -> Any:
    """The newest turn of a model's input: the last message of a list, the user's part of a
    ``{"system", "user"}`` table (the first of :data:`_FIELDS` it has), a text as it is."""
    if isinstance(value, list) and value:
        value = value[-1]
    if isinstance(value, Mapping):
        for field in _FIELDS:
            if field in value:
                return value[field]
    return value


def _text(value: Any, budget: int = 64) -> str:
    """The text a turn holds: a string, or the strings of a message or of its parts."""
    if isinstance(value, str):
        return value[:_TEXT_LIMIT]
    out: list[str] = []
    todo = [value]
    while todo and budget > 0:
        budget -= 1
        item = todo.pop()
        if isinstance(item, str):
            out.append(item[:_TEXT_LIMIT])
        elif isinstance(item, Mapping):
            todo.extend(reversed(list(item.values())))
        elif isinstance(item, (list, tuple)):
            todo.extend(reversed(item))
    return " ".join(out)[:_TEXT_LIMIT]
