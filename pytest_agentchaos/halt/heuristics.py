"""The halt heuristics: each reads the run step by step and says whether this step is one
more *strike* of the pattern it watches (and why).

Three strikes halt: a heuristic's score is its strikes in its window over ``strikes`` (3 by
default), capped at 1. Every heuristic is independent and cheap; repetition tries the
cheapest test first (a digest, then token overlap, then embeddings).

Healthy work often *looks* repetitive: page after page in one template, polls of a job, a
sweep over parameters. What it has and a spiral has not is new information (numbers,
identifiers, quoted values: :func:`.text.information`) or rising progress. A step that brings
either is no strike of repetition, oscillation or self-reference, however similar it reads.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from ..escape.normalize import error_template, mask_text
from .embed import CachedEmbedder, cosine
from .policy import HEURISTICS, HaltPolicy
from .text import STOPWORDS, keywords, overlap

__all__ = ["Observation", "Signal", "Watch"]


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
    failures: Counter[tuple[str, str]] = field(default_factory=Counter)
    last_progress: float | None = None
    flat: int = 0
    claimed_at: int | None = None
    completed_at: int | None = None
    task_words: frozenset[str] = frozenset()
    on_topic_seen: bool = False
    last_informative: int = -1
    vocabulary: frozenset[str] = frozenset()
    off_topic: int = 0
    stale: int = 0

    def __post_init__(self) -> None:
        self.task_words = _stems(keywords(self.task))
        for name in HEURISTICS:
            self.strikes[name] = deque()

    # -- the step ---------------------------------------------------------------------------

    def read(self, step: Observation) -> list[Signal]:
        """Every heuristic's signal for ``step`` (then ``step`` joins the history)."""
        similar = self._similar(step)
        rising = self._progress_rises(step)
        exact = any(how == "exact" for _, how, _ in similar)
        # a counter that rises while the output is the very same is no progress
        # a tool call that worked and says something new (not a repeat) did something
        acted = step.ok is True and not similar
        informative = bool(step.new_info) or (rising and not exact) or acted
        # a repetition counts when nothing informative happened since what it repeats (a
        # poll's "waiting" between rising counts is no spiral)
        similar = [s for s in similar if s[0].index >= self.last_informative]
        if informative:
            self.last_informative = step.index
        signals = [
            self._repetition(step, similar, informative),
            self._novelty(step, informative),
            self._progress(step),
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

    def _similar(self, step: Observation) -> list[tuple[Observation, str, float]]:
        """Earlier outputs in the window that say the same as ``step``: (which, how, score)."""
        recent = list(self.history)[-self.policy.window :]
        found: list[tuple[Observation, str, float]] = []
        if not step.output.strip():
            return found
        pending: list[Observation] = []
        for old in recent:
            if not old.output.strip():
                continue
            if old.digest == step.digest:
                found.append((old, "exact", 1.0))
                continue
            if not old.tokens or not step.tokens:
                continue
            jaccard = overlap(old.tokens, step.tokens)
            limit = self.policy.cjk_overlap if step.cjk else self.policy.lexical_overlap
            if jaccard >= limit:
                found.append((old, "lexical", jaccard))
            elif not step.cjk and not old.cjk and self.embedder is not None:
                pending.append(old)
        if pending and self.embedder is not None:
            vectors = self.embedder.encode([step.output] + [o.output for o in pending])
            for old, vector in zip(pending, vectors[1:], strict=True):
                score = cosine(vectors[0], vector)
                if score >= self.policy.semantic_similarity:
                    found.append((old, "semantic", score))
        return found

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

    def _progress(self, step: Observation) -> Signal:
        value = step.progress
        if value is None:
            return self._signal("progress", step, False, "")
        last, self.last_progress = self.last_progress, value
        if last is None or value > last:
            self.flat = 0
            self._reset("progress")
            return self._signal("progress", step, False, "")
        self.flat += 1
        working = bool(step.new_info)  # new information while the counter waits: work
        strike = not working and (self.flat >= self.policy.stagnation_steps or value < last)
        how = "falls" if value < last else f"has not risen for {self.flat} steps"
        return self._signal(
            "progress", step, strike, f"progress {how} (at {value:g})", window=10**9
        )

    def _apology(self, step: Observation) -> Signal:
        claims = bool(_APOLOGY.search(step.output[:4000]))
        strike = False
        if step.ok is False and self.claimed_at is not None:
            same = self.failures.get((step.tool or "", error_template(step.error)), 0) > 0
            strike = same
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
            self.off_topic = 0
            self._reset("drift")
            return self._signal("drift", step, False, "")
        self.off_topic += 1
        # an aside or two is work too (a look-up, a note): the third in a row is drift
        strike = self.on_topic_seen and self.off_topic >= 3
        return self._signal(
            "drift", step, strike, "the output shares nothing with the task or the work on it",
            window=10**9,
        )  # fmt: skip

    def _tool_failure(self, step: Observation) -> Signal:
        """The same call failing the same way (its error with volatile details masked), in
        a row or between other steps; a success of that tool clears its failures, and an
        error that changes is another failure, not a streak."""
        if step.tool is not None and step.ok is True:
            for failed in [k for k in self.failures if k[0] == step.tool]:
                del self.failures[failed]
        strike = False
        reason = ""
        if step.tool is not None and step.ok is False:
            # volatile details masked (ids, times, temp paths), counts kept: "4 failed" after
            # "12 failed" is an error changing toward success
            key = (step.tool, mask_text(step.error or "")[:2000])
            self.failures[key] += 1
            strike = self.failures[key] >= 2  # once is a fault; twice the same is a pattern
            reason = f"{step.tool} failed the same way {self.failures[key]} times: {key[1][:120]}"
        worst = max(self.failures.values(), default=0)
        score = min(1.0, worst / self.policy.strikes) if worst >= 2 else 0.0
        return Signal("tool_failure", strike, worst, score, reason if strike else "")


_APOLOGY = re.compile(
    r"\b(?:sorry|apologi[sz]e|apologies|my (?:mistake|bad|apologies)|i (?:have|'ve) (?:now )?"
    r"(?:fixed|corrected|resolved)|(?:this|that|it) should (?:now )?(?:work|be fixed)|"
    r"let me (?:fix|correct) (?:that|this|it))\b|抱歉|对不起|不好意思|我的错|已(?:经)?修(?:复|正)|"
    r"这次应该",
    re.IGNORECASE,
)
_SELF = re.compile(
    r"\b(?:as i (?:said|mentioned|noted|explained)(?: (?:before|earlier|above))?|"
    r"(?:my|the) (?:previous|earlier|last) (?:response|answer|message|reply|output)|"
    r"as an ai\b|i am (?:an ai|a language model)|i (?:will|'ll) (?:now )?(?:re-?examine|"
    r"reconsider|review) my|let me (?:re-?think|reconsider|re-?evaluate) my)\b|"
    r"如前所述|我之前(?:说|提到|的回答)|作为(?:一个)?(?:AI|人工智能|语言模型)|我刚才(?:说|的回答)",
    re.IGNORECASE,
)
_DONE = re.compile(
    r"\b(?:task (?:is )?(?:complete|completed|done|finished)|all (?:tasks? )?(?:are )?done|"
    r"i have (?:completed|finished) (?:the|your|all)|final answer)\b|任务(?:已经?)?完成|已全部完成|"
    r"最终答案",
    re.IGNORECASE,
)


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
