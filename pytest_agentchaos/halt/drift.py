"""Drift: steps off the task's words and off the work it led to, or unrequested work after
the agent said the task was done.

Shared words are weighted by rarity: a word (nearly) every step uses, such as a format's
"Thought:" or "Action:", weighs nothing, and so do the labels that open a line and the tools'
names, learnt as they come. Topic words come only from steps on the task or from steps on the
work it led to that progressed, and age out when the work moves on; being back on the topic
halves the drift, it does not clear it. A step touching the task or that work by one word
only is no drift, but its other words do not join the topic (a tangent would lead the topic
away): words join from steps sharing two, or from a step whose progress counter rose. Word
forms are one word ("remove", "removing").
The task's own values are topic as written, a quoted stopword (`is`) or a symbol (`==`)
too, and a handle is read by its words ("search-api-6c4-abc" names "search" and "api").

After the agent says the work is done in other words ("rotation done.", "That's the
answer.", a message's status "done", "已修复"; not a part, "2/14 jobs done"), each further
call that touches none of the task's words is unrequested work: a strike at once. A reply
reporting the result, or a call on the task's own things, is not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .observation import Observation
from .text import information, keywords
from .text import stems as _text_stems

__all__ = ["Topic", "Verdict"]

#: A strike window that never ends: drift counts over the whole run.
FOREVER = 10**9


@dataclass(frozen=True)
class Verdict:
    """What the drift check says of one step: ``strike`` (with its ``reason``), the strike
    window (None: the policy's), and whether the step is back on the topic (``decay``: the
    drift so far is halved)."""

    strike: bool
    reason: str = ""
    window: int | None = FOREVER
    decay: bool = False


@dataclass
class Topic:
    """A run's topic as the drift check keeps it: the task's words, the words of the work on
    it, the format's own words, and how far off the topic the latest steps are."""

    task: str = ""
    task_words: frozenset[str] = frozenset()
    #: the task's values and names as written (`is`, ``utils/money.py``): topic whatever they
    #: are, a stopword quoted or an identifier
    task_values: frozenset[str] = frozenset()
    completed_at: int | None = None
    on_topic_seen: bool = False
    #: topic words admitted from steps that progressed, with the step that last used them
    vocabulary: dict[str, int] = field(default_factory=dict)
    #: in how many steps each content word appeared (rarity weighting of shared words)
    seen_in: dict[str, int] = field(default_factory=dict)
    off_topic: int = 0
    off_talk: int = 0
    adrift: int = 0
    steps_read: int = 0
    format_words: frozenset[str] = frozenset()
    #: the step that said the work was done in other words ("rotation done.", "已修复")
    claimed_at: int | None = None
    #: what the latest step of a series did, as its next step would do it again: a call's tool
    #: and arguments with their numbers masked, or (no call) its text with its values masked
    last_move: tuple[str | None, str] | None = None

    def __post_init__(self) -> None:
        self.task_words = stems(keywords(self.task))
        self.task_values = frozenset(v for v in information(self.task) if not _NUMBER.match(v))

    def read(self, step: Observation, informative: bool, rising: bool = False) -> Verdict:
        """Whether ``step`` is one more step adrift (``informative``: it brought news or
        progress; ``rising``: the run's own progress counter rose, so the step is the work,
        whatever its words). Talk (no call) off the topic twice in a row is drift at once;
        actions, a third step in a row."""
        head = step.output[:4000]
        done = _DONE.search(head) and step.ok is not False
        if done and self.completed_at is None:
            self.completed_at = step.index
            return Verdict(False, window=None)
        if self.completed_at is not None and step.index > self.completed_at:
            return Verdict(
                True, f"the agent goes on after saying the task was done (step {self.completed_at})"
            )
        if not (self.task_words or self.task_values) or not step.output.strip():
            return Verdict(False, window=None)
        if self.claimed_at is not None and step.index > self.claimed_at:
            return self._after_claim(step)
        if self.claimed_at is None and step.ok is not False and _claims_done(head, step):
            self.claimed_at = step.index
        # the format's own words: the labels that open a line ("Thought:", "Action Input:",
        # a structured message's keys) and the tools' names, learnt as they come
        self.format_words |= (
            stems(
                frozenset(
                    w.casefold() for m in _LABEL.finditer(step.output[:4000]) for w in m[1].split()
                )
                | frozenset({step.tool.casefold()} if step.tool else ())
            )
            - self.task_words
        )
        info, content = self._content(step)
        move = _move(step)
        continues = informative and move is not None and move == self.last_move
        if move is not None:
            # (a failed call or a reply without values between two steps of a series, the
            # range that failed in a bisection, does not end it)
            self.last_move = move
        self.steps_read += 1
        for word in content:
            self.seen_in[word] = self.seen_in.get(word, 0) + 1
        if len(self.seen_in) > 50_000:
            self.seen_in = {w: n for w, n in self.seen_in.items() if n > 1}
        for word, last in list(self.vocabulary.items()):
            if step.index - last > _TOPIC_AGE:
                del self.vocabulary[word]  # the work moved on: an old step's words age out
        task_shared = (content & self.task_words) | (info & self.task_values)
        # a word of (nearly) every step, on the topic or off it, is the format's, not the
        # topic's ("Thought", "Action", a JSON message's keys): it weighs nothing
        common = {
            w for w in content
            if self.steps_read >= 4 and self.seen_in[w] >= 0.9 * self.steps_read
            and w not in self.task_words
        }  # fmt: skip
        work_shared = (content & self.vocabulary.keys()) - common
        # a step that progressed needs one shared word, any other two
        on_task = len(task_shared) >= 1 or (rising and step.ok is not False)
        on_work = len(work_shared)
        if on_task or on_work >= (1 if informative else 2):
            self.on_topic_seen = True
            # (a reply on the task by one word is the talk itself: its words are topic)
            if (
                len(task_shared) >= (1 if step.tool is None else 2)
                or rising
                or (informative and on_work >= 2)
            ):
                # well on the task or on the work it led to (two words), or the work itself
                # (its counter rose): its words are topic; a step that touches either by one
                # word is no drift, but its other words do not become the topic (a tangent
                # would then lead the topic away)
                for word in content - common:
                    self.vocabulary[word] = step.index
            for word in work_shared:
                self.vocabulary[word] = step.index
            self.off_topic = self.off_talk = self.adrift = 0
            return Verdict(False, decay=True)
        if step.tool is not None and step.ok is True and step.new_info:
            # a call that worked and brought values the run had not seen is the work yielding
            # results, whatever its words (a turbine's figures, a ledger's rows): word overlap
            # alone is no evidence against it; drift strikes on steps that bring nothing new
            return Verdict(False)
        if continues:
            # the next step of a series the last step began (the same call on the same item
            # with another number: a poll, a range narrowed, a page turned; the same sentence
            # with new values: a sweep) is no further off the topic than that step was
            return Verdict(False)
        self.off_topic += 1
        self.off_talk = self.off_talk + 1 if step.tool is None else 0
        # an aside or two is work too (a look-up, a note): the third in a row is drift. Talk
        # (no call) off the topic twice in a row is drift at once: an action's words are a
        # terse label of work whose topic is in its tool and arguments; talk's are all it has.
        # One strike per step further adrift by either count, not one per count
        adrift = max(self.off_topic - 2, self.off_talk - 1)
        strike = self.on_topic_seen and adrift > self.adrift
        self.adrift = max(self.adrift, adrift)
        return Verdict(strike, "the output shares nothing with the task or the work on it")

    def _content(self, step: Observation) -> tuple[frozenset[str], frozenset[str]]:
        """The step's information tokens, an identifier also read in parts ("6c4 abc api
        search": a handle's words; a call in brackets gives its argument, as in ReAct's
        "track_parcel[SF14239]"), and its content words: word stems without the format's."""
        info = step.info | {p for v in step.info for p in _PARTS.split(v) if p}
        return info, stems(step.tokens | info) - _FORMAT - self.format_words

    def _after_claim(self, step: Observation) -> Verdict:
        """A step after the agent said, in other words than :data:`_DONE`'s, that the work
        was done: more work (a call) that touches none of the task's words is unrequested
        work, a strike at once; a reply (a report of the result) or a call on the task's own
        things is not, and does not clear the strikes either."""
        info, content = self._content(step)
        shared = (content & self.task_words) | (info & self.task_values)
        if step.tool is None or len(shared) >= 1:
            return Verdict(False)
        return Verdict(
            True,
            f"the agent goes on with other work after saying it was done (step {self.claimed_at})",
        )


def _move(step: Observation) -> tuple[str | None, str] | None:
    """What ``step`` does, as the next step of a series does it again: a call that worked, as
    its tool and its arguments with their numbers masked (None when the arguments are not
    given: the item is unknown; None for a failed call: a call failing again is a retry,
    which the failure heuristics judge, not a series advancing on its results), or a reply's
    text with its values masked (None without a value in it)."""
    if step.tool is not None:
        if step.args is None or step.ok is not True:
            return None
        return step.tool, _DIGITS.sub("#", step.args)
    if not step.info or not step.masked:
        return None
    return None, step.shape


def _claims_done(text: str, step: Observation) -> bool:
    """Whether ``text`` says the work is done (:data:`_CLAIM`), not a part of it: no count
    beside the claim ("2/14 jobs done", "已完成 35%"), no progress counter on the step."""
    if step.progress is not None:
        return False
    return any(not _COUNT.search(text[max(0, m.start() - 40) : m.end() + 20])
               for m in _CLAIM.finditer(text))  # fmt: skip


def stems(words: frozenset[str] | set[str]) -> frozenset[str]:
    """:func:`.text.stems`, and a Latin word's final "e" dropped, so that "remove" and
    "removing", "rotate" and "rotated" are one topic word."""
    return frozenset(
        w[:-1] if len(w) > 4 and w.endswith("e") and w.isascii() and w.isalpha() else w
        for w in _text_stems(words)
    )


_NUMBER = re.compile(r"^[\d.,:%+-]+$")
_DIGITS = re.compile(r"\d+")


_DONE = re.compile(
    r"\b(?:task (?:is )?(?:complete|completed|done|finished)|all (?:tasks? )?(?:are )?done|"
    r"i have (?:completed|finished) (?:the|your|all)|final answer)\b|任务(?:已经?)?完成|已全部完成|"
    r"最终答案",
    re.IGNORECASE,
)
#: Saying the work is done in other words: a line ending in "done" / "resolved" / "fixed"
#: (a problem "resolved," or "fixed," closing a clause too; "Step done, next ..." is a part),
#: "that's the answer", a structured message's status "done", "已修复" / "已完成" / "搞定".
_CLAIM = re.compile(
    r"\b(?:done|complete|completed|resolved|fixed|finished)[^\S\n]*[.!]?[^\S\n]*$|"
    r"\b(?:resolved|fixed),|"
    r"\bthat(?:'s| is) the answer\b|\"status\":\s*\"(?:done|complete|completed)\"|"
    r"\b(?:all|everything) (?:is )?(?:done|complete)\b|已修复|已完成|完成了|搞定|都完成",
    re.IGNORECASE | re.MULTILINE,
)
#: Where an information token breaks into parts: spaces, brackets, "=", separators.
_PARTS = re.compile(r"[\s\[\](){}<>=,;]+")
#: A count beside a claim: a part is done, not the work.
_COUNT = re.compile(r"\d+\s*(?:/|of|%|％)\s*\d*|[0-9]+\s*(?:个|项|条|列|页)")
_LABEL = re.compile(r"^[^\S\n]*([A-Za-z_][\w ]{0,30}?)\s*:", re.MULTILINE)
#: Topic words unused for this many steps age out.
_TOPIC_AGE = 24
#: Format words of agent transcripts (ReAct, JSON messages): never topic.
_FORMAT = frozenset(
    {
        "thought", "action", "observation", "input", "output", "final", "answer", "tool",
        "tool_input", "args", "arguments", "result", "results", "step", "content", "role",
        "assistant", "user", "message", "type", "text", "name", "value",
        "思考", "行动", "观察", "结果", "输入", "输出", "答案", "一下", "我们", "进行",
        "现在", "然后", "这个", "那个", "可以", "需要", "问题", "一个", "看看", "已经",
    }
)  # fmt: skip
