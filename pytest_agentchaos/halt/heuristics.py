"""The halt heuristics: each reads the run step by step and says whether this step is one
more *strike* of the pattern it watches (and why).

Three strikes halt: a heuristic's score is its strikes in its window over ``strikes`` (3 by
default), capped at 1. Every heuristic is independent and cheap; repetition tries the
cheapest test first (a digest, then token overlap, then embeddings).

Healthy work often *looks* repetitive: page after page in one template, polls of a job, a
sweep over parameters. What it has and a spiral has not is new information (numbers,
identifiers, quoted values: :func:`.text.information`) or rising progress. A step that brings
either is no strike of repetition, oscillation or self-reference, however similar it reads.

A tool call that worked counts as work even when its words name nothing new, unless it
*redoes* an earlier step: the same call again (tool and arguments, when given), or the same
tool with words close to an earlier step's (a paraphrase, :data:`CLOSE` below the limit for
"the same") or saying it does that again ("again", "once more", "re-reading"), about nothing
that step did not name. A paraphrase spiral re-reads, re-searches and re-announces; templated
work names another item each time.

Information is evidence, not a veto (:mod:`.values`): values are compared in one writing
(digits, number words, Chinese numerals, units), monotone counters are no news, texts are
compared with their values masked, and an informative step *decays* the evidence gathered so
far (halves it) instead of clearing it. Rising progress excuses no paraphrase: a counter of
tasks done that rises while the agent says the same again in new words is still a repeat.
With a logged state, a state seen again with nothing new since, or standing still while
progress rises, is a strike of ``state``. Your own heuristics (:class:`Heuristic`) run beside
these.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..escape.classify import ErrorClassifier
from ..escape.normalize import mask_text
from .embed import CachedEmbedder, cosine
from .policy import HEURISTICS, HaltPolicy
from .streaks import Failures
from .text import STOPWORDS, keywords, names, overlap

__all__ = ["CLOSE", "Heuristic", "Observation", "Signal", "Watch", "check_heuristics"]

#: How far below the policy's limit for "says the same" (``semantic_similarity``, or
#: ``cjk_overlap`` for CJK text) two outputs are still *close*: a paraphrase. Close is no
#: repetition by itself; it makes a step that names nothing new a redo of the earlier one.
CLOSE = 0.2


@dataclass(frozen=True)
class Observation:
    """One step as the heuristics read it (built by the monitor)."""

    index: int
    output: str
    tool: str | None
    ok: bool | None
    error: str | None
    progress: float | None
    tokens: frozenset[str]
    info: frozenset[str]
    digest: str
    cjk: bool
    new_info: frozenset[str] = frozenset()
    #: capitalised names not seen before: news only in a step that repeats nothing
    new_names: frozenset[str] = frozenset()
    #: The tool call's arguments as text (canonical JSON, volatile details masked), or None
    #: when not given.
    args: str | None = None
    #: Seconds (virtual in a chaos run) since the previous step, when known.
    seconds: float | None = None
    #: A call that worked at this step besides ``tool`` (the model call whose answer the
    #: output is): its failures so far are no streak any more.
    worked: str | None = None
    #: The digest of the output with its values masked (:func:`.values.masked`).
    shape: str = ""
    #: The output with its values masked.
    masked: str = ""
    #: The artefacts the output hands back (code, a query, a formula), normalised.
    artefacts: frozenset[str] = frozenset()
    #: The state's key (:func:`.state.state_key`), or None when no state was logged.
    state: str | None = None
    #: The state as bounded plain data (for heuristics of your own), or None.
    state_value: Any = None
    #: What makes this failure the same as another (:func:`.streaks.signature`); None
    #: unless the call failed.
    failure: str | None = None


@runtime_checkable
class Heuristic(Protocol):
    """A heuristic of your own: called with each step and the steps before it (the most
    recent last, up to four windows of them), it returns a strike's reason (a non-empty
    string, or ``True``) or no strike (``False``, ``None``, ``""``). Its ``name`` (a function's
    ``__name__`` unless it has a ``name``) names it in decisions and must differ from the
    built-in heuristics'; an optional ``weight`` (0 to 1, default 1) is its weight in the risk.

        def same_board(step, history):
            return bool(history) and step.state == history[-1].state and "board unchanged"

        HaltMonitor(task, heuristics=[same_board])
    """

    def __call__(self, step: Observation, history: Sequence[Observation]) -> object: ...


def heuristic_name(heuristic: Any) -> str:
    """The name a heuristic of your own goes by."""
    name = getattr(heuristic, "name", None) or getattr(heuristic, "__name__", None)
    return name if isinstance(name, str) else type(heuristic).__name__


def check_heuristics(heuristics: Any) -> tuple[Heuristic, ...]:
    """``heuristics`` checked: callables with distinct names that are not built-in names, and
    weights from 0 to 1. Raises ``TypeError`` / ``ValueError`` naming the one at fault."""
    if heuristics is None:
        return ()
    if isinstance(heuristics, (str, bytes)) or not isinstance(heuristics, (list, tuple)):
        raise TypeError(
            "HaltMonitor(heuristics=...) takes a list of callables "
            f"(step, history) -> reason or None, got {heuristics!r}"
        )
    names: set[str] = set()
    for h in heuristics:
        if not callable(h):
            raise TypeError(
                f"HaltMonitor(heuristics=...): {h!r} is not callable; a heuristic is called "
                "as heuristic(step, history) and returns a strike's reason or None"
            )
        name = heuristic_name(h)
        if not name or name == "<lambda>":
            raise ValueError(
                "HaltMonitor(heuristics=...): a lambda has no name; give the heuristic a "
                "`name` attribute or define it with def"
            )
        if name in HEURISTICS or name == "limits":
            raise ValueError(
                f"HaltMonitor(heuristics=...): {name!r} is a built-in heuristic's name; "
                f"built-in: {', '.join(HEURISTICS)}"
            )
        if name in names:
            raise ValueError(f"HaltMonitor(heuristics=...): two heuristics are named {name!r}")
        weight = getattr(h, "weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight <= 1:
            raise ValueError(
                f"HaltMonitor(heuristics=...): {name!r} has weight {weight!r}; a number from 0 to 1"
            )
        names.add(name)
    return tuple(heuristics)


@dataclass(frozen=True)
class Signal:
    """What one heuristic says of one step: ``strike`` (this step is one more occurrence),
    ``strikes`` (occurrences in its window), ``score`` (0 to 1) and ``reason``."""

    heuristic: str
    strike: bool
    strikes: int
    score: float
    reason: str = ""
    detail: dict[str, Any] = field(default_factory=dict)


Match = tuple[Observation, str, float]


@dataclass
class Watch:
    """The heuristics' shared memory of a run, and the heuristics themselves."""

    policy: HaltPolicy
    task: str = ""
    embedder: CachedEmbedder | None = None
    extra: tuple[Heuristic, ...] = ()
    history: deque[Observation] = field(default_factory=deque)
    strikes: dict[str, deque[int]] = field(default_factory=dict)
    clusters: deque[int] = field(default_factory=deque)
    cluster_of: dict[int, int] = field(default_factory=dict)
    failures: Failures = field(init=False)
    last_progress: float | None = None
    flat: int = 0
    claimed_at: int | None = None
    completed_at: int | None = None
    task_words: frozenset[str] = frozenset()
    on_topic_seen: bool = False
    last_informative: int = -1
    last_news: int = -1
    rose_at: int = -1
    #: topic words admitted from steps that progressed, with the step that last used them
    vocabulary: dict[str, int] = field(default_factory=dict)
    #: in how many steps each content word appeared (rarity weighting of shared words)
    seen_in: dict[str, int] = field(default_factory=dict)
    named: set[str] = field(default_factory=set)
    off_topic: int = 0
    off_talk: int = 0
    adrift: int = 0
    steps_read: int = 0
    stale: int = 0
    format_words: frozenset[str] = frozenset()
    state_at: dict[str, int] = field(default_factory=dict)
    states: deque[str] = field(default_factory=deque)

    def __post_init__(self) -> None:
        self.task_words = _stems(keywords(self.task))
        self.named = set(names(self.task))
        self.failures = Failures(span=self.policy.window * 2)
        for name in HEURISTICS:
            self.strikes[name] = deque()
        for h in self.extra:
            self.strikes[heuristic_name(h)] = deque()

    # -- the step ---------------------------------------------------------------------------

    def read(self, step: Observation) -> list[Signal]:
        """Every heuristic's signal for ``step`` (then ``step`` joins the history)."""
        if step.ok is False and not step.output.strip():
            # a call that failed and said nothing (a timeout the agent will retry): only the
            # failure heuristics read it (the same failure after "sorry, fixed"; a streak);
            # it repeats nothing, and brings no news nor drift
            apology = self._apology(step)  # before the streak counts this failure
            failure = self._tool_failure(step, False)
            quiet = {"apology": apology, "tool_failure": failure}
            signals = [
                quiet[name] if name in quiet else self._signal(name, step, False, "")
                for name in HEURISTICS
            ]
            return signals + self._custom(step)
        similar, close = self._similar(step)
        redone = self._redoes(step, close)
        self.named |= names(step.output)
        rising = self._progress_rises(step)
        rose_before = self.rose_at
        exact = any(how == "exact" for _, how, _ in similar)
        handed_back = any(how == "artefact" for _, how, _ in similar)
        news = (bool(step.new_info) or (bool(step.new_names) and not close)) and not handed_back
        if news:
            self.last_news = step.index
        # a counter that rises while the output says the same again (in any words) is no
        # progress; a tool call that worked and neither repeats nor redoes an earlier step
        # did something
        acted = step.ok is True and not similar and not redone
        # a rising counter excuses a bare status line said again ("still importing"), not a
        # step that says the same about the same items (an item counted again) nor the very
        # same text
        counted_again = exact or (bool(similar) and bool(step.info))
        informative = news or (rising and not counted_again) or acted
        # a repetition counts when nothing informative happened since what it repeats (a
        # poll's "waiting" between rising counts is no spiral)
        similar = [s for s in similar if s[0].index >= self.last_informative]
        if informative:
            self.last_informative = step.index
        signals = [
            self._repetition(step, similar, informative),
            self._novelty(step, informative),
            # a redo that is a repetition too is the repetition's strike, not a second one
            self._progress(step, [] if similar else redone),
            self._apology(step),
            self._self_reference(step, informative),
            self._oscillation(step, similar, informative),
            self._drift(step, informative),
            self._tool_failure(step, rising),
            self._state(step, informative, rising, rose_before),
        ]
        signals += self._custom(step)
        self.history.append(step)
        while len(self.history) > self.policy.window * 4:
            self.history.popleft()
        return signals

    def _signal(self, name: str, step: Observation, strike: bool, reason: str,
                window: int | None = None, **detail: Any) -> Signal:  # fmt: skip
        marks = self.strikes[name]
        if strike:
            marks.append(step.index)
        span = window or self.policy.window
        while marks and marks[0] <= step.index - span:
            marks.popleft()
        count = len(marks)
        score = min(1.0, count / self.policy.strikes)
        return Signal(name, strike, count, score, reason if strike else "", detail)

    def _reset(self, name: str) -> None:
        self.strikes[name].clear()

    def _decay(self, name: str) -> None:
        """One informative step halves the evidence (the oldest strikes go): it does not
        clear it."""
        marks = self.strikes[name]
        for _ in range((len(marks) + 1) // 2):
            marks.popleft()

    # -- similarity ---------------------------------------------------------------------------

    def _similar(self, step: Observation) -> tuple[list[Match], list[Match]]:
        """Earlier outputs in the window that say the same as ``step`` (which, how, score),
        and every earlier output that is at least *close* to it: a paraphrase, its similarity
        :data:`CLOSE` below the policy's limit for saying the same. Texts are compared with
        their values masked; only the very same values say the same ("pinning 2.6.4" after
        "pinning 1.10.13" reads alike, but is the other answer). The same artefact handed back
        (code, a query, a formula) says the same whatever the words around it, and so does a
        short answer restating the same values with nothing else new."""
        recent = list(self.history)[-self.policy.window :]
        found: list[Match] = []
        close: list[Match] = []
        if not step.output.strip():
            return found, close
        pending: list[Observation] = []
        short = len(step.tokens) <= _SHORT
        for old in recent:
            if not old.output.strip():
                continue
            if old.digest == step.digest or (old.shape == step.shape and step.info <= old.info):
                found.append((old, "exact", 1.0))
                continue
            if step.artefacts and step.artefacts <= old.artefacts and old.tool == step.tool:
                found.append((old, "artefact", 1.0))
                continue
            if not old.tokens or not step.tokens or not step.info <= old.info:
                continue  # naming a value that one did not: about something else (unencoded)
            if (short and step.info and old.tool == step.tool
                    and old.args == step.args and names(step.output) <= self.named):  # fmt: skip
                found.append((old, "restated", 1.0))
                continue
            jaccard = overlap(old.tokens, step.tokens)
            limit = self.policy.cjk_overlap if step.cjk else self.policy.lexical_overlap
            if jaccard >= limit:
                found.append((old, "lexical", jaccard))
            elif not step.cjk and not old.cjk and self.embedder is not None:
                pending.append(old)
            elif jaccard >= limit - CLOSE:
                close.append((old, "lexical", jaccard))
        if pending and self.embedder is not None:
            vectors = self.embedder.encode([step.output] + [o.output for o in pending])
            limit = self.policy.semantic_similarity
            for old, vector in zip(pending, vectors[1:], strict=True):
                score = cosine(vectors[0], vector)
                if score >= limit:
                    found.append((old, "semantic", score))
                elif score >= limit - CLOSE:
                    close.append((old, "semantic", score))
        return found, found + close

    def _redoes(self, step: Observation, matches: list[Match]) -> list[Observation]:
        """The earlier steps in the window that ``step`` does again: the same call (tool and
        arguments, when both are known), or the same tool (or none) saying the same or nearly
        the same about nothing that step did not name. A step with new information, or a call
        with other arguments, does something else."""
        if step.new_info:
            return []
        found = {}
        close = {old.index for old, _, _ in matches}
        recent = list(self.history)[-self.policy.window :]
        if step.args is not None:
            mine = _call(step)
            found = {o.index: o for o in recent if o.args is not None and _call(o) == mine}
        # it says it does something again: what it names that a step of the same tool did
        again = (
            _stems(step.tokens | step.info) if _AGAIN.search(step.output[:4000]) else frozenset()
        )
        # words close to an earlier step's but about a thing not named before: the next item
        fresh = bool(names(step.output) - self.named)
        for old in recent:
            if old.tool != step.tool or not step.info <= old.info:
                continue
            if step.args is not None and old.args is not None:
                continue  # other arguments: another call
            if (old.index in close and not fresh) or again & _stems(old.tokens | old.info):
                found[old.index] = old
        return [found[i] for i in sorted(found)]

    # -- the heuristics -------------------------------------------------------------------------

    def _repetition(self, step: Observation, similar: list[Any], informative: bool) -> Signal:
        strike = bool(similar) and not informative
        if not similar and informative:
            self._decay("repetition")
        if not strike:
            return self._signal("repetition", step, False, "")
        old, how, score = max(similar, key=lambda s: s[2])
        reason = (f"step {step.index} repeats step {old.index} ({how}, {score:.2f}) and adds "
                  "no new information")  # fmt: skip
        return self._signal("repetition", step, True, reason, how=how, like=old.index)

    def _novelty(self, step: Observation, informative: bool) -> Signal:
        """Steps that bring nothing new (no number, name or value not seen before, no rising
        progress), however they are worded: a paraphrase spiral says the same in new words."""
        if informative:
            self.stale = 0
            self._decay("novelty")
            return self._signal("novelty", step, False, "")
        self.stale += 1
        strike = self.stale >= self.policy.novelty_steps
        reason = f"{self.stale} steps in a row bring no new information"
        return self._signal("novelty", step, strike, reason, window=10**9)

    def _progress_rises(self, step: Observation) -> bool:
        if step.progress is None:
            return False  # no signal: unknown, not zero
        return self.last_progress is not None and step.progress > self.last_progress

    def _progress(self, step: Observation, redone: list[Observation]) -> Signal:
        """A counter that falls, or stays flat while the agent redoes work it did since the
        counter last rose (a strike at once) or brings nothing new for a while (after
        ``stagnation_steps``). New information while the counter waits is work: a step of
        it, or one just before (drafting a section, then checking it)."""
        value = step.progress
        if value is None:
            return self._signal("progress", step, False, "")
        last, self.last_progress = self.last_progress, value
        if last is None or value > last:
            self.flat = 0
            self.rose_at = step.index
            self._reset("progress")
            return self._signal("progress", step, False, "")
        self.flat += 1
        redo = next((o for o in reversed(redone) if o.index >= self.rose_at), None)
        idle = self.flat >= self.policy.stagnation_steps and step.index - self.last_news >= 2
        strike = not step.new_info and (value < last or redo is not None or idle)
        how = (
            "falls" if value < last
            else f"stays flat while step {step.index} redoes step {redo.index}" if redo
            else f"has not risen for {self.flat} steps"
        )  # fmt: skip
        return self._signal(
            "progress", step, strike, f"progress {how} (at {value:g})", window=10**9
        )

    def _apology(self, step: Observation) -> Signal:
        claims = bool(_APOLOGY.search(step.output[:4000]))
        strike = False
        if step.ok is False and self.claimed_at is not None:
            strike = self.failures.seen(step.tool or "", step.failure or step.error)
        if claims:
            self.claimed_at = step.index
        if step.ok is True:
            self.claimed_at = None
            self._reset("apology")
        repeated = claims and any(o.digest == step.digest for o in self.history)
        reason = (
            "the same failure again after the agent said it was sorry or had fixed it"
            if strike else "the same apology again"
        )  # fmt: skip
        return self._signal("apology", step, strike or repeated, reason)

    def _self_reference(self, step: Observation, informative: bool) -> Signal:
        talks = bool(_SELF.search(step.output[:4000]))
        strike = talks and not informative
        return self._signal(
            "self_reference", step, strike,
            "the agent talks about itself or its earlier answers, not the task",
        )  # fmt: skip

    def _oscillation(self, step: Observation, similar: list[Any], informative: bool) -> Signal:
        olds = [old.index for old, _, _ in similar]
        known = [self.cluster_of[i] for i in olds if i in self.cluster_of]
        cluster = min(known) if known else step.index
        self.cluster_of[step.index] = cluster
        for gone in [i for i in self.cluster_of if i <= step.index - self.policy.window * 4]:
            del self.cluster_of[gone]
        c = self.clusters
        c.append(cluster)
        while len(c) > 4:
            c.popleft()
        strike = (
            len(c) >= 3 and c[-1] == c[-3] and c[-1] != c[-2]
            and (len(c) < 4 or c[-2] == c[-4]) and not informative
        )  # fmt: skip
        if not strike and informative:
            self._decay("oscillation")
        return self._signal(
            "oscillation", step, strike,
            f"steps alternate between two answers (A -> B -> A) at step {step.index}",
        )  # fmt: skip

    def _drift(self, step: Observation, informative: bool) -> Signal:
        """Steps off the task's words and off the work it led to, weighted by rarity (a word
        every step uses, such as a format's "Thought:" or "Action:", weighs next to nothing);
        topic words come only from steps on the topic that progressed, and age out; being
        back on topic halves the drift, it does not clear it. Talk (no call) off the topic
        twice in a row is drift at once; actions, a third step in a row."""
        done = _DONE.search(step.output[:4000]) and step.ok is not False
        if done and self.completed_at is None:
            self.completed_at = step.index
            return self._signal("drift", step, False, "")
        if self.completed_at is not None and step.index > self.completed_at:
            return self._signal(
                "drift", step, True,
                f"the agent goes on after saying the task was done (step {self.completed_at})",
                window=10**9,
            )  # fmt: skip
        if not self.task_words or not step.output.strip():
            return self._signal("drift", step, False, "")
        # the format's own words: the labels that open a line ("Thought:", "Action Input:",
        # a structured message's keys) and the tools' names, learnt as they come
        self.format_words |= (
            _stems(
                frozenset(
                    w.casefold() for m in _LABEL.finditer(step.output[:4000]) for w in m[1].split()
                )
                | frozenset({step.tool.casefold()} if step.tool else ())
            )
            - self.task_words
        )
        content = _stems(step.tokens | step.info) - _FORMAT - self.format_words
        self.steps_read += 1
        for word in content:
            self.seen_in[word] = self.seen_in.get(word, 0) + 1
        if len(self.seen_in) > 50_000:
            self.seen_in = {w: n for w, n in self.seen_in.items() if n > 1}
        for word, last in list(self.vocabulary.items()):
            if step.index - last > _TOPIC_AGE:
                del self.vocabulary[word]  # the work moved on: an old step's words age out
        task_shared = content & self.task_words
        # a word of (nearly) every step, on the topic or off it, is the format's, not the
        # topic's ("Thought", "Action", a JSON message's keys): it weighs nothing
        common = {
            w for w in content
            if self.steps_read >= 4 and self.seen_in[w] >= 0.9 * self.steps_read
            and w not in self.task_words
        }  # fmt: skip
        work_shared = (content & self.vocabulary.keys()) - common
        # a step that progressed needs one shared word, any other two
        if _weight(task_shared) >= 1 or _weight(work_shared) >= (1 if informative else 2):
            self.on_topic_seen = True
            if informative or _weight(task_shared) >= 1:
                # on the task, or on the work it led to with progress: its words are topic
                for word in content - common:
                    self.vocabulary[word] = step.index
            for word in work_shared:
                self.vocabulary[word] = step.index
            self.off_topic = self.off_talk = self.adrift = 0
            self._decay("drift")
            return self._signal("drift", step, False, "", window=10**9)
        self.off_topic += 1
        self.off_talk = self.off_talk + 1 if step.tool is None else 0
        # an aside or two is work too (a look-up, a note): the third in a row is drift. Talk
        # (no call) off the topic twice in a row is drift at once: an action's words are a
        # terse label of work whose topic is in its tool and arguments; talk's are all it has.
        # One strike per step further adrift by either count, not one per count
        adrift = max(self.off_topic - 2, self.off_talk - 1)
        strike = self.on_topic_seen and adrift > self.adrift
        self.adrift = max(self.adrift, adrift)
        return self._signal(
            "drift", step, strike, "the output shares nothing with the task or the work on it",
            window=10**9,
        )  # fmt: skip

    def _tool_failure(self, step: Observation, rising: bool) -> Signal:
        """The same failure again (see :mod:`.streaks`): the same tool failing the same way
        until it works, or the same call (tool and arguments) failing the same way within
        twice the window, whatever worked between. An error that changes is another
        failure, not a streak, and so is rising progress. With no error text, the failure is
        what the output says (:func:`.streaks.signature`)."""
        failures = self.failures
        if rising:
            failures.clear()
        if step.worked is not None:
            failures.success(step.worked, None)
        if step.tool is not None and step.ok is True:
            failures.success(step.tool, step.args)
        strike = False
        reason = ""
        if step.tool is not None and step.ok is False:
            # a transient error (a timeout, a 5xx, a 429, a dropped connection) retried after
            # a wait is worth a few retries: every other one counts (retried at once, or with
            # no time known, it is hammering: each counts)
            transient = bool(step.seconds) and (
                _TRANSIENT.classify(None, message=step.error or "").transient
            )
            count = failures.failure(
                step.index, step.tool, step.args, step.failure or step.error, transient
            )
            strike = count >= 2  # once is a fault; twice the same is a pattern
            how = " (transient, retried after a wait: every other one counts)" if transient else ""
            reason = (f"{step.tool} failed the same way{how}: "
                      f"{mask_text(step.error or step.output or '')[:120]}")  # fmt: skip
        worst = failures.worst(step.index)
        score = min(1.0, worst / self.policy.strikes) if worst >= 2 else 0.0
        return Signal("tool_failure", strike, worst, score, reason if strike else "")

    #: Classifies a failure's message (no per-tool state: only ``transient`` is read).
    def _state(
        self, step: Observation, informative: bool, rising: bool, rose_before: int
    ) -> Signal:
        """The environment's state (when logged): seen again with nothing new since (back
        where it was, or standing still while the agent talks), two states alternating, or
        standing still while progress rises (the counter contradicts the state)."""
        key = step.state
        if key is None:
            return self._signal("state", step, False, "")
        last = self.state_at.get(key)
        previous = self.states[-1] if self.states else None
        strike = False
        reason = ""
        if previous == key and rising:
            strike = True
            reason = f"progress rises (to {step.progress:g}) while the state stands still"
        elif last is not None and not informative and not rising and rose_before <= last:
            strike = True
            reason = (
                "the state has not changed and nothing new was said" if previous == key
                else f"the state is back to that of step {last} with nothing new since"
            )  # fmt: skip
        elif informative and previous != key:
            self._decay("state")
        self.state_at[key] = step.index
        self.states.append(key)
        while len(self.states) > 4:
            self.states.popleft()
        if len(self.state_at) > 10_000:
            self.state_at = {k: i for k, i in self.state_at.items() if i > step.index - 100}
        return self._signal("state", step, strike, reason, window=self.policy.window * 2)

    def _custom(self, step: Observation) -> list[Signal]:
        """The heuristics of your own: each one's strike counts like a built-in's."""
        signals = []
        history = tuple(self.history)
        for heuristic in self.extra:
            name = heuristic_name(heuristic)
            said = heuristic(step, history)
            if said is None or isinstance(said, (bool, str)):
                reason = said if isinstance(said, str) else (f"{name} fired" if said else "")
                signals.append(self._signal(name, step, bool(said), reason))
            else:
                raise TypeError(
                    f"halt heuristic {name!r} returned {said!r}; it returns a strike's reason "
                    "(a string or True) or no strike (None, False or '')"
                )
        return signals


#: Classifies a failure's message (no per-tool state: only ``transient`` is read).
_TRANSIENT = ErrorClassifier()

_APOLOGY = re.compile(
    r"\b(?:sorry|apologi[sz]e|apologies|my (?:mistake|bad|apologies)|i (?:have|'ve) (?:now )?"
    r"(?:fixed|corrected|resolved)|(?:this|that|it) should (?:now )?(?:work|be fixed)|"
    r"let me (?:fix|correct) (?:that|this|it))\b|抱歉|对不起|不好意思|我的错|已(?:经)?修(?:复|正)|"
    r"这次应该",
    re.IGNORECASE,
)
#: The agent says it does something again: a retry, a re-check, one more pass.
_AGAIN = re.compile(
    r"\b(?:again|once more|one more (?:time|try|attempt|pass|check|look|confirmation)|"
    r"another (?:try|attempt|pass|look)|double-check\w*|re-\w+|back(?![-\w])|revert\w*|"
    r"restor\w*|undo\w*)|"
    r"再(?:次|一次|一遍|试|查|看一|检查|通读|跑|运行|执行|提交)|重新|又一次|改回|恢复",
    re.IGNORECASE,
)
_SELF = re.compile(
    r"\b(?:as i (?:said|mentioned|noted|explained)(?: (?:before|earlier|above))?|"
    r"(?:my|the) (?:previous|earlier|last) (?:response|answer|message|reply|output)|"
    r"as an ai\b|i am (?:an ai|a language model)|i (?:will|'ll) (?:now )?(?:re-?examine|"
    r"reconsider|review) my|let me (?:re-?think|reconsider|re-?evaluate) my)\b|"
    r"如前所述|我之前(?:说|提到|的回答)|作为(?:一个)?(?:AI|人工智能|语言模型)|我刚才(?:说|的回答)|"
    r"我(?:的)?(?:上一条|上一个|前面的|之前的|刚才的)(?:消息|回复|回答|输出)",
    re.IGNORECASE,
)
_DONE = re.compile(
    r"\b(?:task (?:is )?(?:complete|completed|done|finished)|all (?:tasks? )?(?:are )?done|"
    r"i have (?:completed|finished) (?:the|your|all)|final answer)\b|任务(?:已经?)?完成|已全部完成|"
    r"最终答案",
    re.IGNORECASE,
)


def _call(step: Observation) -> tuple[str | None, str]:
    """A call as the same call again would be: its tool and its (masked) arguments."""
    return step.tool, step.args or ""


def _stems(words: frozenset[str] | set[str]) -> frozenset[str]:
    """Topic words for the drift check: parts of joined words ("cursor-based", "tools/list")
    too, stopwords out, and a light stem of Latin words ("webhooks", "retrying" as "webhook",
    "retry"), so that a step about the task's things shares words with it."""
    found: set[str] = set()
    for word in words:
        parts = [p for p in re.split(r"[-/._:]+", word) if p != word]
        for part in {word, *parts}:
            # a part of a joined word is a topic word when it is a word ("py" of "dates.py",
            # "md", "vs" are not)
            short = len(part) < (3 if part is not word and part.isascii() else 2)
            if short or part in STOPWORDS or _cjk_function(part):
                continue
            found.add(_STEM.sub("", part) if len(part) > 4 and part.isascii() else part)
    return frozenset(found)


_STEM = re.compile(r"(?:ing|ed|(?<=ch|sh|ss)es|(?<=x)es|(?<!s)s)$")
_LABEL = re.compile(r"^[^\S\n]*([A-Za-z_][\w ]{0,30}?)\s*:", re.MULTILINE)
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
#: Chinese function characters (particles, pronouns, measure words): a character pair with
#: one of them is grammar ("里的", "这个", "一份"), not a topic.
_FUNCTION_CHARS = frozenset(
    "的了和是在我你他她它们这那个一不也就都而及与或被把让给对从到请吗呢吧啊么里些着过"
)


def _cjk_function(part: str) -> bool:
    return bool(_CJK_CHAR.match(part)) and any(ch in _FUNCTION_CHARS for ch in part)


def _weight(words: set[str] | frozenset[str]) -> float:
    """Shared topic words as evidence: a word counts 1, a CJK character pair a half (one
    generic pair is not a topic)."""
    return sum(1.0 for w in words)


#: Up to this many tokens (values masked), an answer restated with the same values and no
#: new name says the same, whatever its words.
_SHORT = 30
#: Topic words unused for this many steps age out.
_TOPIC_AGE = 24
#: The rarity-weighted share of words that puts a step on the topic.
_ON_TOPIC = 1.0
#: Format words of agent transcripts (ReAct, JSON messages): never topic.
_FORMAT = frozenset(
    [
        "thought",
        "action",
        "observation",
        "input",
        "output",
        "final",
        "answer",
        "tool",
        "tool_input",
        "args",
        "arguments",
        "result",
        "results",
        "step",
        "content",
        "role",
        "assistant",
        "user",
        "message",
        "type",
        "text",
        "name",
        "value",
    ]
) | frozenset(
    {
        "思考",
        "行动",
        "观察",
        "结果",
        "输入",
        "输出",
        "答案",
        "一下",
        "我们",
        "进行",
        "现在",
        "然后",
        "这个",
        "那个",
        "可以",
        "需要",
        "问题",
        "一个",
        "看看",
        "已经",
    }
)
