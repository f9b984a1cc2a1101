"""Learned volatility: what changes on every call of a tool while the rest stays equal.

Masking by shape (:mod:`.normalize`) misses the short handles and counters that have none:
``job=7``, ``run r-12``, ``item_3``, ``scratch_4``. What gives them away is their behaviour
across repeats: the same tool, called again with otherwise equal content, answers with the
same text except at one or two numbers, and those numbers change on every call.

:class:`Volatility` reads an action as its canonical text (masked arguments, outcome, masked
result) split at its digit runs: the text between them is the action's *skeleton*, the runs
are its *positions*. Two calls of a tool with equal skeletons are compared position by
position. A call that differs from the previous one of its skeleton only at a few positions,
the same positions that changed at the comparison before too, gets the previous call's key
(so a loop whose laps differ in a handle is seen from its third lap on: the second lap is
the first evidence, never enough by itself). A position that stayed
equal is never masked; calls whose skeletons differ (any other content) are never merged.

Only a handle's kind of token can change by itself: an identifier (``r-12``, ``item_3``,
``eyJZQOKlCTn``), a number named by ``#``, or a bare number that counts up by one from call
to call (``job=7``, ``job=8``). A bare number that moves otherwise is a quantity, and a
quantity that moves is news (a poll's progress 8 -> 21, a queue draining 12 -> 5, ``57/400``
files indexed). Nor:
- a change in the arguments (``page=2``, ``step2``): the agent asked for something else
  (a handle it passes back is masked before, by :mod:`.provenance`);
- more than ``max_values`` distinct new values in one call (a page of new rows);
- a percentage, a decimal or a fraction (``45%``, ``0.25``, ``3/10``), even one counting up
  by one or moving both ways.

In a state (``fields=False``), a number field rising is work done (``"processed": 8``), unless
its name says it counts rounds (``step``, ``loop_count``, ``numTurns``, ``回合数``): rising by
one while the rest stays equal, that counts the reports.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

__all__ = ["Volatility"]

#: Positions: words holding a digit (``7``, ``item_3``, ``sp_362c8d23``; a handle glued to a
#: name by a dash, ``r-12``, is judged by its neighbours)... Read as ``\b\w*\d\w*`` reads: the
#: word's letters before its first digit are taken possessively (``*+``: they hold no digit,
#: so giving one back never helps), and a word without a digit is given up at its end, not
#: walked back letter by letter: the same splits at under half the cost in ASCII text.
_DIGITS = re.compile(r"(\b[^\W\d]*+\d\w*+)")
#: The same for a text of ASCII characters alone, where it splits alike at a third of the cost
#: (the engine then reads no Unicode tables).
_ASCII_DIGITS = re.compile(_DIGITS.pattern, re.ASCII)
#: ...or, in a text holding an opaque token (eight or more letters mixing case, a cursor),
#: whole tokens: identifiers holding a digit, and opaque tokens.
_OPAQUE = re.compile(r"(?<![A-Za-z0-9_-])(?=[A-Za-z_-]{8})[A-Za-z_-]*[a-z][A-Z]")
_TOKENS = re.compile(
    r"((?<![A-Za-z0-9_-])(?:[A-Za-z_-]*\d[A-Za-z0-9_-]*"
    r"|(?=[A-Za-z_-]{8})[A-Za-z_-]*[a-z][A-Z][A-Za-z_-]*)(?![A-Za-z0-9_-]))"
)
#: What every opaque token holds (a lower-case letter before an upper-case one): a text
#: without it holds none, and this finds out faster than :data:`_OPAQUE`. Written from the
#: upper-case letter back: a pattern that begins with a character class lets the engine skip
#: ahead to the next capital in C, where ``[a-z][A-Z]`` tries every position (half the cost).
_CASE_CHANGE = re.compile(r"[A-Z](?<=[a-z][A-Z])")
_RATIO = re.compile(r"\s?(?:/|of|out of)\s?$")
#: Groups (tool and skeleton) remembered; past this the memory starts over.
_MAX_GROUPS = 4096
#: Texts longer than this are keyed as they are (no learning): bounded work per call.
_MAX_TEXT = 16384
#: Positions compared in one call at most (a text with more digit runs is keyed as it is).
_MAX_POSITIONS = 256
#: Argument texts up to this long have their split remembered (a tool's calls repeat their
#: arguments far more than their results), up to this many texts.
_MEMO_TEXT = 1024
_MEMO_SIZE = 1024


def _opaque(text: str) -> bool:
    return _CASE_CHANGE.search(text) is not None and _OPAQUE.search(text) is not None


class _Group:
    """The calls of one tool with one skeleton: the latest one's positions, the key its
    chain has, and the positions that changed at the latest comparison (None before the
    first; empty after one where nothing changed: a position must then change twice in a row
    before it is taken for volatile)."""

    __slots__ = ("args", "key", "learned", "random", "rest", "steps", "tick")

    def __init__(self, args: list[str], rest: list[str], key: str, tick: int) -> None:
        self.args = args
        self.rest = rest
        self.key = key
        self.tick = tick  # the call that last reported it
        self.learned: tuple[tuple[int, ...], tuple[int, ...]] | None = None
        self.steps: dict[int, int] = {}  # position -> how much its number rose last time
        self.random: set[int] = set()  # positions whose number went both up and down


def _digest(args: str, rest: str) -> str:
    text = f"{args}\x1f{rest}"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


class Volatility:
    """Keys actions, learning per tool which positions change by themselves. One per run."""

    __slots__ = ("_args", "_calls", "_groups", "_recurred", "fields", "max_step", "max_values")

    def __init__(self, max_values: int = 2, max_step: int = 8, *, fields: bool = True) -> None:
        self.max_values = max_values
        self.max_step = max_step
        #: whether a number field counting up (``{"job": 8}``) can be a handle, as in a
        #: result; in a state a number field that rises is the work done (``"processed":
        #: 8``), and only a number in a text counts ("Please continue 8")...
        self.fields = fields
        #: ...or, once a lap is seen repeating (:meth:`recurred`), a number field rising by
        #: one: a count of rounds (``"revision": 3``), not of work
        self._calls = 0
        self._recurred = 0
        self._groups: dict[str, _Group] = {}
        # argument text -> [whether it holds an opaque token, then for each splitter (digit
        # runs, whole tokens) its positions and its part of the skeleton, made when needed]
        self._args: dict[str, list[Any]] = {}

    def key(self, tool: str, args: str, rest: str) -> str:
        """The digest of a call of ``tool`` from its canonical texts: ``args`` (the masked
        arguments) and ``rest`` (outcome, masked result or error). Equal texts give equal
        digests; a text that differs from the previous call of its skeleton only at the
        positions that changed last time too, by few values, gets that call's digest."""
        self._calls += 1
        if len(args) + len(rest) > _MAX_TEXT:
            return _digest(args, rest)
        # whole tokens where an opaque one is (rarer, slower: so a cursor is a position too)
        known = self._args.get(args)
        if known is None:
            known = [_opaque(args), None, None]
            if len(args) <= _MEMO_TEXT:
                if len(self._args) >= _MEMO_SIZE:
                    self._args.clear()
                self._args[args] = known
        # _opaque(rest), inline
        opaque = known[0] or (
            _CASE_CHANGE.search(rest) is not None and _OPAQUE.search(rest) is not None
        )
        splitter = _TOKENS if opaque else _DIGITS
        which = 2 if opaque else 1
        split = known[which]
        if split is None:  # the argument text's positions, and its part of the skeleton
            parts = splitter.split(args)
            split = known[which] = (parts[1::2], "\x1f".join(parts[0::2]))
        nums_args, args_skeleton = split
        if splitter is _DIGITS and rest.isascii():
            split_rest = _ASCII_DIGITS.split(rest)
        else:
            split_rest = splitter.split(rest)
        if not nums_args and len(split_rest) == 1:
            return _digest(args, rest)  # no digit: nothing can vary by itself
        nums_rest = split_rest[1::2]
        if len(nums_args) + len(nums_rest) > _MAX_POSITIONS:
            return _digest(args, rest)
        skeleton = "\x1f".join([tool, args_skeleton, "\x1e", *split_rest[0::2]])
        groups = self._groups
        group = groups.get(skeleton)
        if group is not None:
            before, was = group.rest, group.args
            if len(nums_rest) != len(before) or len(nums_args) != len(was):
                # an equal skeleton with other positions: a text holding the separator
                # itself (a state's raw text can), so other content: never merged
                group = None
        if group is None:
            if len(groups) >= _MAX_GROUPS:
                groups.clear()
            key = _digest(args, rest)
            groups[skeleton] = _Group(nums_args, nums_rest, key, self._calls)
            return key
        changed_args = () if nums_args == was else _changed(nums_args, was)
        changed_rest = () if nums_rest == before else _changed(nums_rest, before)
        group.args, group.rest = nums_args, nums_rest
        if not changed_args and not changed_rest:
            group.learned = ((), ())  # every position stayed equal: none of them is volatile
            group.tick = self._calls
            return group.key
        changes = (changed_args, changed_rest)
        # judged only when the same positions changed as last time: else only what the
        # comparison teaches for the next one (steps, random numbers) is kept
        judged = group.learned == changes or (
            # a state's field whose name says it counts rounds (a step, a save's version),
            # rising while the rest stays equal, is its own evidence from the first change
            not self.fields and not changed_args and _named_rounds(split_rest, changed_rest, before)
        )
        if changed_args:
            # only a display label's running counter changes by itself, and then the call's
            # outcome stays equal: the agent asked for nothing else and got nothing new
            group.tick = self._calls
            group.learned = changes
            if (
                judged
                and not changed_rest
                and self.fields
                and _label_counter(args, nums_args, was, changed_args)
            ):
                return group.key
            group.key = _digest(args, rest)
            return group.key
        volatile = self._volatile(split_rest, group, before, ((), changed_rest), judged)
        group.tick = self._calls
        group.learned = changes
        if volatile and judged:
            return group.key
        group.key = _digest(args, rest)
        return group.key

    def recurred(self) -> None:
        """Say that the next call's text came back exactly (a lap of the run repeats): from
        then on, a state's number field rising by one is a count of rounds."""
        self._recurred = self._calls + 1

    def _volatile(
        self,
        split_rest: list[str],
        group: _Group,
        before: list[str],
        changes: tuple[tuple[int, ...], tuple[int, ...]],
        judged: bool = True,
    ) -> bool:
        """Whether the changed positions can be ones that change by themselves: few new
        values, each a handle's kind of token, and no changed argument. Not ``judged``: only
        the steps and the random numbers are learned (the answer is not asked for)."""
        changed_args, changed_rest = changes
        if not changed_rest or changed_args:
            return False  # the agent asked for something else
        if len(changed_rest) > self.max_values:
            new = {split_rest[2 * i + 1] for i in changed_rest}
            if len(new) > self.max_values:
                return False  # many new values
        steps, last = {}, group.steps
        if not judged:
            group.random = set()
        ok = True
        for i in changed_rest:
            step = _step(split_rest[2 * i + 1], before[i])
            if step is not None:
                steps[i] = step
                previous = last.get(i)
                if previous is not None and step * previous < 0:
                    group.random.add(i)  # up, then down: no quantity moves that way
            if not judged:
                continue
            name = None if self.fields else _field_name(split_rest[2 * i])
            rounds = name is not None and _counts_rounds(name)
            if (
                name is not None
                and not rounds
                and (
                    self._recurred <= group.tick
                    or not (step == 1 or (_counts_messages(name) and step == last.get(i)))
                )
            ):
                step = None  # a number field of a state: a count of work done
            # a round counter's first rise is its own step (one per action of a lap)
            previous = last.get(i, step if rounds else None)
            if not _handle_like(split_rest, i, step, previous, self.max_step):
                # a random number (a pid, a port) changes by itself only when it is the one
                # thing that changed: two numbers moving are more likely measurements
                ok = ok and i in group.random and len(changed_rest) == 1
                ok = ok and not _quantity(split_rest, i)  # a decimal's digits: a measure
        group.steps = steps
        return ok


#: The name of the field a number is the value of, from the text before it: ``"step":``,
#: ``step=``, ``step: ``.
_FIELD_NAME = re.compile(r"([^\W\d][\w-]{0,47})[\"']?\s{0,3}[:=：]\s{0,3}[\"']?$")
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[^\W\d_A-Za-z]+")
#: Words of a field's name that make its number a count of the agent's own rounds (``step``,
#: ``loop_count``, ``numTurns``, ``轮次``): rising by one on every report while the rest
#: stays equal, it counts the reports, not work done (``processed``, ``rows_loaded``).
_ROUND_WORDS = frozenset(
    {"step", "steps", "turn", "turns", "round", "rounds", "loop", "loops", "cycle", "cycles",
     "pass", "passes", "iteration", "iterations", "iter", "attempt", "attempts", "try",
     "tries", "retry", "retries", "tick", "ticks", "hop", "hops", "lap", "laps",
     # a revision's number: rising while what it numbers stays equal (the same plan, the
     # same draft proposed again), it counts the rounds of revising, not a new revision
     "revision", "revisions", "rev", "version"}
)  # fmt: skip
#: A name's last word that makes it the version of what the words before name: a save's
#: version (``checkpoint_v``, ``state_version``, ``draftRev``), rising while the rest stays
#: equal, counts the saves.
_VERSION_WORDS = frozenset({"version", "revision", "rev", "v", "ver"})
#: What such a version numbers: the agent's own saved state, not the thing it works on (a
#: ``schema_version`` or ``firmware_v`` rising is a migration's or an upgrade's progress).
_SAVED_WORDS = frozenset(
    {"checkpoint", "ckpt", "chkpt", "state", "save", "saved", "snapshot", "snap", "draft",
     "plan", "memory", "scratchpad"}
)  # fmt: skip
#: The same in Chinese, where a name is one run of characters: its ending says it.
_CJK_ROUNDS = ("轮", "轮次", "轮数", "回合", "回合数", "迭代", "迭代次数", "次数", "步数")
#: A Chinese name's ending that makes it a version (``草稿版本``); what comes before it names
#: what it numbers, as the words before ``_version`` do (``数据库版本``: a database's).
_CJK_VERSIONS = ("版本号", "版本", "修订号", "修订")
#: A Chinese name's ending that names the agent's own saved state (``草稿``, ``检查点``).
_CJK_SAVED = ("检查点", "存档", "快照", "草稿", "状态", "计划", "记忆", "保存")


def _name_words(name: str) -> list[str]:
    """A field's name as lowercase words (``draftRev`` -> draft, rev); a Chinese run ending in
    a version (``草稿版本``) as what it numbers and ``version``, a saved state's name read as
    ``save`` and a round's as ``step``."""
    words: list[str] = []
    for word in _NAME_WORDS.findall(name):
        word = word.lower()
        head = next((word[: -len(v)] for v in _CJK_VERSIONS if word.endswith(v)), None)
        if head is not None:
            if head:
                words.append("save" if head.endswith(_CJK_SAVED) else head)
            words.append("version")
        elif word.endswith(_CJK_ROUNDS):
            words.append("step")
        else:
            words.append("save" if word.endswith(_CJK_SAVED) and not word.isascii() else word)
    return words


def _named_rounds(split_rest: list[str], changed: tuple[int, ...], before: list[str]) -> bool:
    """Whether every changed position is a number that rose, in a field whose name says it
    counts rounds (:func:`_counts_rounds`)."""
    for i in changed:
        name = _field_name(split_rest[2 * i])
        step = _step(split_rest[2 * i + 1], before[i])
        if name is None or step is None or step <= 0 or not _counts_rounds(name):
            return False
    return True


def _field_name(head: str) -> str | None:
    """The name of the field whose value follows ``head``; None for a number in free text."""
    found = _FIELD_NAME.search(head[-64:])
    return None if found is None else found.group(1)


#: Words that may qualify a count in its name (``loop_count``, ``num_steps``, ``turnNo``).
_COUNT_WORDS = frozenset({"count", "counter", "num", "number", "no", "nr", "n", "total"})


def _counts_rounds(name: str) -> bool:
    """Whether a field's name says it counts rounds: a round word, at most qualified as a
    count (``step``, ``loop_count``, ``numTurns``); not a position in something else
    (``current_step``, ``step_index``: where a plan is, which moves as it progresses)."""
    words = _name_words(name)
    if len(words) > 1 and words[-1] in _VERSION_WORDS and not _SAVED_WORDS.isdisjoint(words):
        return True  # the version of a save (``checkpoint_v``, ``draftRevision``)
    rounds = [w for w in words if w in _ROUND_WORDS]
    return bool(rounds) and all(w in _ROUND_WORDS or w in _COUNT_WORDS for w in words)


#: Words of a field's name that make its number the size of the conversation itself
#: (``messages``, ``num_messages``, ``history_len``, ``消息数``): each lap adds the same few
#: messages to it whatever the lap did, so once a lap came back, rising by the same step as
#: last time it counts rounds, not work.
_MESSAGE_WORDS = frozenset(
    {"message", "messages", "msg", "msgs", "history", "transcript", "conversation", "chat",
     "len", "length", "size"}
)  # fmt: skip
_CJK_MESSAGES = ("消息", "消息数", "对话", "对话长度", "历史")


def _counts_messages(name: str) -> bool:
    """Whether a field's name says it counts the conversation's messages (``messages``,
    ``message_count``, ``history_len``); not what the messages did (``tool_calls``)."""
    words = [w.lower() for w in _NAME_WORDS.findall(name)]
    words = ["messages" if w.endswith(_CJK_MESSAGES) else w for w in words]
    sized = [w for w in words if w in _MESSAGE_WORDS and w not in ("len", "length", "size")]
    return bool(sized) and all(w in _MESSAGE_WORDS or w in _COUNT_WORDS for w in words)


#: A label's running counter: a name (at least three letters) and a number, maybe joined by
#: ``-`` or ``_`` (``noop3``, ``probe-12``, ``run_7``).
_LABEL_COUNTER = re.compile(r"(?P<stem>[^\W\d_]{3,})[-_]?(?P<n>\d{1,6})")


def _label_counter(args: str, now: list[str], before: list[str], changed: tuple[int, ...]) -> bool:
    """Whether the one argument position that changed is a display label's running counter:
    a name with a number that rose by one (``noop2`` -> ``noop3``), the name said elsewhere in
    the arguments too (``{"cmd": "echo noop", "name": "noop3"}``: the label restates what the
    call does, it is not the thing the call is about: ``{"name": "bucket3"}``)."""
    if len(changed) != 1:
        return False
    token, old = now[changed[0]], before[changed[0]]
    a, b = _LABEL_COUNTER.fullmatch(token), _LABEL_COUNTER.fullmatch(old)
    if a is None or b is None or a.group("stem") != b.group("stem"):
        return False
    if int(a.group("n")) != int(b.group("n")) + 1:
        return False
    stem = a.group("stem")
    # the name as a word of its own in a value: not the label itself (``noop3``, ``noop_3``),
    # not a field's name (``{"step": "step3"}`` asks for step 3)
    said = re.search(rf"(?<![^\W_]){re.escape(stem)}(?![^\W_]|[-_]?\d|\"\s*:)", args, re.IGNORECASE)
    return said is not None


def _changed(now: list[str], before: list[str]) -> tuple[int, ...]:
    """The positions where two equally long lists differ."""
    if len(now) == 1:  # most often one or two positions: no generator to make
        return (0,)  # (only asked when the lists differ)
    return tuple([i for i, a in enumerate(now) if a != before[i]])


def _step(token: str, old: str) -> int | None:
    """How much a bare number rose since the last call (None when either is no number)."""
    if token.isdigit() and old.isdigit() and len(token) < 10 and len(old) < 10:
        return int(token) - int(old)
    return None


def _quantity(parts: list[str], i: int) -> bool:
    """Whether digit run ``i`` of a split text is part of a percentage, a decimal or a
    fraction (``45%``, ``0.333``, ``3/10``, ``3 of 10``): a measure, never a handle."""
    head, tail = parts[2 * i], parts[2 * i + 2]
    if tail[:1] in ("%", ".") or head[-1:] == "/" or head.endswith(" of "):
        return True
    if head[-1:] == ".":  # a decimal's fraction, after its whole part (not ``<hex>.2834@``)
        return (head == "." and i > 0) or head[-2:-1].isdigit()
    return 2 * i + 3 < len(parts) and _RATIO.match(tail) is not None


def _handle_like(
    parts: list[str], i: int, step: int | None, last: int | None, max_step: int
) -> bool:
    """Whether token ``i`` of a split text (``parts[2 * i + 1]``) is a handle's kind of
    token: an identifier, a number named by ``#``, or a counter (a bare number that rose by
    one, or by the same step as last time, at most ``max_step``: one per action of a lap).
    (A random number, one that went both up and down, is judged by the caller.) A quantity
    moves one way (a poll's progress, a queue draining); a percentage, a fraction, a decimal,
    a date or a range is never a handle."""
    head, tail = parts[2 * i], parts[2 * i + 2]
    token = parts[2 * i + 1]
    if not token.isdigit():  # a whole token: r-12, item_3, 7a, eyJZQOKlCTn
        return not token.replace("-", "").replace("_", "").isdigit()  # not 2026-11-26, 3_4

    last_char = head[-1:]
    if tail[:1].isalpha() or tail[:1] == "_" or last_char.isalpha() or last_char == "_":
        return True  # a digit run glued to a name: 7a, 12_b, r12, item_3
    if last_char == "-" and head[-2:-1].isalpha():
        return True  # r-12 (not 3-4, a range; not 2026-11-26, a date)
    if last_char == "-" or tail[:1] == "-":
        return False
    if _quantity(parts, i):
        return False
    if head[-1:] == "#":
        return True  # #41
    if step is None or last is None:
        return False
    return step == 1 or (step == last and 1 <= step <= max_step)
