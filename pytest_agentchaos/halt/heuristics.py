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
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..escape.classify import ErrorClassifier
from ..escape.normalize import mask_text
from .embed import CachedEmbedder, cosine
from .policy import HEURISTICS, HaltPolicy
from .streaks import Failures
from .text import STOPWORDS, keywords, names, overlap

__all__ = ["CLOSE", "Observation", "Signal", "Watch"]

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
    #: The tool call's arguments as text (canonical JSON, volatile details masked), or None
    #: when not given.
    args: str | None = None
    #: Seconds (virtual in a chaos run) since the previous step, when known.
    seconds: float | None = None
    #: A call that worked at this step besides ``tool`` (the model call whose answer the
    #: output is): its failures so far are no streak any more.
    worked: str | None = None


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
    vocabulary: frozenset[str] = frozenset()
    named: set[str] = field(default_factory=set)
    off_topic: int = 0
    off_talk: int = 0
    adrift: int = 0
    stale: int = 0

    def __post_init__(self) -> None:
        self.task_words = _stems(keywords(self.task))
        self.named = set(names(self.task))
        self.failures = Failures(span=self.policy.window * 2)
        for name in HEURISTICS:
            self.strikes[name] = deque()

    # -- the step ---------------------------------------------------------------------------

    def read(self, step: Observation) -> list[Signal]:
        """Every heuristic's signal for ``step`` (then ``step`` joins the history)."""
        if step.ok is False and not step.output.strip():
            # a call that failed and said nothing (a timeout the agent will retry): only the
            # failure heuristics read it (the same failure after "sorry, fixed"; a streak);
            # it repeats nothing, and brings no news nor drift
            apology = self._apology(step)  # before the streak counts this failure
            failure = self._tool_failure(step)
            quiet = {"apology": apology, "tool_failure": failure}
            return [
                quiet[name] if name in quiet else self._signal(name, step, False, "")
                for name in HEURISTICS
            ]
        similar, close = self._similar(step)
        redone = self._redoes(step, close)
        self.named |= names(step.output)
        rising = self._progress_rises(step)
        exact = any(how == "exact" for _, how, _ in similar)
        if step.new_info:
            self.last_news = step.index
        # a counter that rises while the output is the very same is no progress; a tool call
        # that worked and neither repeats nor redoes an earlier step did something
        acted = step.ok is True and not similar and not redone
        informative = bool(step.new_info) or (rising and not exact) or acted
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
            self._drift(step),
            self._tool_failure(step),
        ]
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

    # -- similarity ---------------------------------------------------------------------------

    def _similar(self, step: Observation) -> tuple[list[Match], list[Match]]:
        """Earlier outputs in the window that say the same as ``step`` (which, how, score),
        and every earlier output that is at least *close* to it: a paraphrase, its similarity
        :data:`CLOSE` below the policy's limit for saying the same. Only the very same text
        says the same as a step that names a value it did not ("pinning 2.6.4" after
        "pinning 1.10.13" reads alike to a sentence model, but is the other answer)."""
        recent = list(self.history)[-self.policy.window :]
        found: list[Match] = []
        close: list[Match] = []
        if not step.output.strip():
            return found, close
        pending: list[Observation] = []
        for old in recent:
            if not old.output.strip():
                continue
            if old.digest == step.digest:
                found.append((old, "exact", 1.0))
                continue
            if not old.tokens or not step.tokens or not step.info <= old.info:
                continue  # naming a value that one did not: about something else (unencoded)
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
        again = _stems(step.tokens) if _AGAIN.search(step.output[:4000]) else frozenset()
        # words close to an earlier step's but about a thing not named before: the next item
        fresh = bool(names(step.output) - self.named)
        for old in recent:
            if old.tool != step.tool or not step.info <= old.info:
                continue
            if step.args is not None and old.args is not None:
                continue  # other arguments: another call
            if (old.index in close and not fresh) or again & _stems(old.tokens):
                found[old.index] = old
        return [found[i] for i in sorted(found)]

    # -- the heuristics -------------------------------------------------------------------------

    def _repetition(self, step: Observation, similar: list[Any], informative: bool) -> Signal:
        strike = bool(similar) and not informative
        if not similar and informative:
            self._reset("repetition")
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
            self._reset("novelty")
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
            strike = self.failures.seen(step.tool or "", step.error)
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
            self._reset("oscillation")
        return self._signal(
            "oscillation", step, strike,
            f"steps alternate between two answers (A -> B -> A) at step {step.index}",
        )  # fmt: skip

    def _drift(self, step: Observation) -> Signal:
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
        content = _stems(step.tokens | step.info)
        task_shared = content & self.task_words
        work_shared = content & self.vocabulary
        if task_shared or len(work_shared) >= 2:
            # on the task, or on the work it led to: what this step says is the topic too
            self.on_topic_seen = True
            self.vocabulary |= content
            self.off_topic = self.off_talk = self.adrift = 0
            self._reset("drift")
            return self._signal("drift", step, False, "")
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

    def _tool_failure(self, step: Observation) -> Signal:
        """The same failure again (see :mod:`.streaks`): the same tool failing the same way
        until it works, or the same call (tool and arguments) failing the same way within
        twice the window, whatever worked between. An error that changes is another
        failure, not a streak."""
        failures = self.failures
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
            count = failures.failure(step.index, step.tool, step.args, step.error, transient)
            strike = count >= 2  # once is a fault; twice the same is a pattern
            how = " (transient, retried after a wait: every other one counts)" if transient else ""
            reason = (f"{step.tool} failed the same way{how}: "
                      f"{mask_text(step.error or '')[:120]}")  # fmt: skip
        worst = failures.worst(step.index)
        score = min(1.0, worst / self.policy.strikes) if worst >= 2 else 0.0
        return Signal("tool_failure", strike, worst, score, reason if strike else "")


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
        for part in {word, *re.split(r"[-/._:]+", word)}:
            if len(part) < 2 or part in STOPWORDS:
                continue
            found.add(_STEM.sub("", part) if len(part) > 4 and part.isascii() else part)
    return frozenset(found)


_STEM = re.compile(r"(?:ing|ed|es|s)$")
