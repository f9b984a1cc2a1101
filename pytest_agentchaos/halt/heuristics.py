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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..escape.classify import ErrorClassifier
from ..escape.normalize import mask_text
from .content import apologises, changes_approach, refers_to_itself, waits
from .drift import Topic
from .embed import CachedEmbedder
from .observation import Heuristic, Observation, Signal, check_heuristics, heuristic_name
from .policy import HEURISTICS, HaltPolicy
from .similarity import CLOSE, Match, redoes, says_again, similar
from .streaks import Failures
from .text import names, tokens
from .values import read

__all__ = [
    "CLOSE",
    "Heuristic",
    "Match",
    "Observation",
    "Signal",
    "Watch",
    "check_heuristics",
    "heuristic_name",
]


@dataclass
class Watch:
    """The heuristics' shared memory of a run, and the heuristics themselves."""

    policy: HaltPolicy
    task: str = ""
    embedder: CachedEmbedder | None = None
    extra: tuple[Heuristic, ...] = ()
    #: What CJK text is compared with beside its character bigrams (None: bigrams only).
    cjk_embedder: CachedEmbedder | None = None
    history: deque[Observation] = field(default_factory=deque)
    strikes: dict[str, deque[int]] = field(default_factory=dict)
    clusters: deque[int] = field(default_factory=deque)
    cluster_of: dict[int, int] = field(default_factory=dict)
    failures: Failures = field(init=False)
    topic: Topic = field(init=False)
    last_progress: float | None = None
    #: the total the progress counter counts toward, once a step says it ("[3/8]")
    total: float | None = None
    flat: int = 0
    claimed_at: int | None = None
    last_informative: int = -1
    last_news: int = -1
    #: the whole numbers the task states ("label the 50 snippets"): a counter standing at one
    #: of them has counted the whole task
    task_counts: frozenset[float] = frozenset()
    #: the latest step informative on its own, and the latest announced change taken as news
    real_at: int = -1
    changed_at: int = -2
    rose_at: int = -1
    named: set[str] = field(default_factory=set)
    stale: int = 0
    state_at: dict[str, int] = field(default_factory=dict)
    states: deque[str] = field(default_factory=deque)
    returned_at: int = -2
    #: the task's words (a query of them is no new query)
    task_tokens: frozenset[str] = frozenset()
    #: the latest step that waited (:func:`.content.waits`), and the repeats spaced by waits so far
    waited_at: int = -1
    spaced: int = 0

    def __post_init__(self) -> None:
        self.topic = Topic(self.task)
        self.named = set(names(self.task))
        self.task_tokens = tokens(self.task)
        self.task_counts = frozenset(
            float(v) for _, v in read(self.task).numbers if v.isdigit() and int(v) > 1
        )
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
        if step.ok is not False and waits(step):
            # the agent waits (for a job, a backoff, a readiness check): time passes, nothing
            # is said or done; the wait says again what the last one said by nature. Only the
            # progress and the state read it; what it spaces is judged by the next step
            self.waited_at = step.index
            timed = {
                "progress": self._progress(step, []),
                "state": self._state(step, False, self._progress_rises(step), self.rose_at),
            }
            signals = [
                timed[name] if name in timed else self._signal(name, step, False, "", window=10**9)
                for name in HEURISTICS
            ]  # (a wait ages no strike out: the window is the next step's)
            return signals + self._custom(step)
        known = self._known()
        similar, close = self._similar(step, known)
        redone = self._redoes(step, close)
        self.named |= names(step.masked or step.output)
        rising = self._progress_rises(step)
        rose_before = self.rose_at
        exact = any(how == "exact" for _, how, _ in similar)
        handed_back = any(how == "artefact" for _, how, _ in similar)
        news = (bool(step.new_info) or (bool(step.new_names) and not close)) and not handed_back
        # a counter that rises while the output says the same again (in any words) is no
        # progress; a tool call that worked and neither repeats nor redoes an earlier step
        # did something
        acted = (
            step.ok is True
            and not similar
            and not redone
            and not _confirms(step, close, self.history)
        )
        # a rising counter excuses a bare status line said again ("still importing"), not a
        # step that says the same about the same items (an item counted again) nor the very
        # same text; a call on an item not called before (the next day, class or file of a
        # series, said in the same template) is the next item counted, not one again
        counted_again = exact or (bool(similar) and bool(step.info) and not step.fresh)
        # a state never seen before: the environment moved (a logged state is evidence both
        # ways: one seen again with nothing new since is a strike of its own)
        moved = step.state is not None and step.state not in self.state_at
        # a failure whose stated count reaches a new low (fewer tests failing) is progress
        informative = news or (rising and not counted_again) or acted or moved or step.lower
        if informative:
            self.real_at = step.index
        elif (
            self.real_at > self.changed_at
            and not exact
            and not handed_back
            and not redone
            and changes_approach(step, known)
        ):
            # an announced change of approach naming what it does now (a nudge worked) is
            # news once: a second change with nothing new since is a spiral's "another way"
            self.changed_at = step.index
            news = informative = True
        if news:
            self.last_news = step.index
        # a repetition counts when nothing informative happened since what it repeats (a
        # poll's "waiting" between rising counts is no spiral); a reply with no call that
        # hands back an artefact handed back before is a repeat whatever came between (the
        # user turned it down, asked again, and gets it again)
        similar = [
            s for s in similar
            if s[0].index >= self.last_informative or (s[1] == "artefact" and step.tool is None)
        ]  # fmt: skip
        # a step that says again a value of a repetition (the same total worked out once
        # more, with a new intermediate sum) brings something, but does not end it
        restates = informative and not similar and not rising and self._restates(step)
        if informative and not restates:
            self.last_informative = step.index
        signals = [
            self._repetition(step, similar, informative, restates),
            self._novelty(step, informative),
            # each redo while the counter waits, a repetition or not: a halt needs one
            # heuristic's full strikes, so one event in two heuristics adds no early halt
            self._progress(step, redone, moved, acted),
            self._apology(step),
            self._self_reference(step, informative),
            self._oscillation(step, similar, informative),
            self._drift(step, informative, rising),
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

    def _known(self) -> frozenset[str]:
        """The words and values said so far: the task's and the remembered steps'."""
        return self.task_tokens.union(*(o.tokens | o.info for o in self.history))

    def _similar(
        self, step: Observation, known: frozenset[str] = frozenset()
    ) -> tuple[list[Match], list[Match]]:
        """Earlier outputs in the window that say the same as ``step``, and those at least
        close to it (:func:`.similarity.similar`)."""
        recent = list(self.history)[-self.policy.window :]
        seen = frozenset().union(*(o.tokens | o.info for o in self.history))
        return similar(
            step, recent, self.policy, self.embedder, self.named, self.cjk_embedder, seen,
            known,
        )  # fmt: skip

    def _redoes(self, step: Observation, matches: list[Match]) -> list[Observation]:
        """The earlier steps in the window that ``step`` does again
        (:func:`.similarity.redoes`)."""
        recent = list(self.history)[-self.policy.window :]
        return redoes(step, matches, recent, self.named, self.task_tokens)

    # -- the heuristics -------------------------------------------------------------------------

    def _repetition(
        self, step: Observation, similar: list[Any], informative: bool, restates: bool = False
    ) -> Signal:
        strike = bool(similar) and not informative
        if not similar and informative and not restates:
            self._decay("repetition")
        if not strike:
            return self._signal("repetition", step, False, "")
        old, how, score = max(similar, key=lambda s: s[2])
        window = None
        if self._spaced(step, similar):
            # a poll after a wait, the same as the one before the wait: worth a few polls, so
            # every other one counts (over a window as long as the waits make it)
            self.spaced += 1
            window = self.policy.window * 2
            if self.spaced % 2:
                return self._signal("repetition", step, False, "", window=window)
        reason = (f"step {step.index} repeats step {old.index} ({how}, {score:.2f}) and adds "
                  "no new information")  # fmt: skip
        return self._signal(
            "repetition", step, True, reason, window=window, how=how, like=old.index
        )

    def _spaced(self, step: Observation, similar: list[Any]) -> bool:
        """Whether ``step`` says again what it says after a wait since (a poll, a check)."""
        return all(self.waited_at > old.index for old, _, _ in similar)

    def _restates(self, step: Observation) -> bool:
        """Whether ``step`` says again all the values of a step that struck as a repetition
        (the same total worked out once more, with an intermediate sum that is new): it brings
        something, but not what ends the repetition, so the evidence stands (no decay)."""
        struck = set(self.strikes["repetition"])
        return any(
            old.index in struck and old.info and old.info <= step.info for old in self.history
        )

    def _novelty(self, step: Observation, informative: bool) -> Signal:
        """Steps that bring nothing new (no number, name or value not seen before, no rising
        progress), however they are worded: a paraphrase spiral says the same in new words."""
        if informative:
            self.stale = 0
            self._decay("novelty")
            return self._signal("novelty", step, False, "")
        if self.waited_at == step.index - 1 and step.tool is not None:
            # a check right after a wait that finds nothing new: the wait's, not the agent's
            return self._signal("novelty", step, False, "", window=10**9)
        self.stale += 1
        strike = self.stale >= self.policy.novelty_steps
        reason = f"{self.stale} steps in a row bring no new information"
        return self._signal("novelty", step, strike, reason, window=10**9)

    def _progress_rises(self, step: Observation) -> bool:
        if step.progress is None:
            return False  # no signal: unknown, not zero
        for value in step.info:  # "[3/8] done" with progress 3: the counter's total is 8
            done, slash, total = value.partition("/")
            if slash and done.isdigit() and total.isdigit() and float(done) == step.progress:
                self.total = self.total or float(total) or None
        rises = self.last_progress is not None and step.progress > self.last_progress
        return rises and not self._over_total(step)

    def _over_total(self, step: Observation) -> bool:
        """Whether the step's progress counts past the total the run's own counter gave
        ("[9/8]"): an item counted again, not progress."""
        return self.total is not None and step.progress is not None and step.progress > self.total

    def _progress(
        self,
        step: Observation,
        redone: list[Observation],
        moved: bool = False,
        acted: bool = False,
    ) -> Signal:
        """A counter that falls, or stays flat while the agent redoes work it did since the
        counter last rose (a strike at once) or brings nothing new for a while (after
        ``stagnation_steps``). New information while the counter waits is work: a step of
        it, or one just before (drafting a section, then checking it); a failure whose stated
        count reaches a new low (:attr:`.Observation.lower`) is the work moving as a rise is."""
        value = step.progress
        if value is None:
            return self._signal("progress", step, False, "")
        last, self.last_progress = self.last_progress, value
        if self._over_total(step):
            return self._signal(
                "progress", step, True,
                f"progress counts past its own total ({value:g} of {self.total:g})", window=10**9,
            )  # fmt: skip
        if last is None or value > last or step.lower:
            self.flat = 0
            self.rose_at = step.index
            self._reset("progress")
            return self._signal("progress", step, False, "")
        self.flat += 1
        # (the same call that failed then and works now is no redo: its outcome is news, a
        # check passing after the fix it asked for)
        redo = next(
            (
                o for o in reversed(redone)
                if o.index >= self.rose_at and not (o.ok is False and step.ok is True)
            ),
            None,
        )  # fmt: skip
        # (a call that worked and redoes nothing is work, not idling: closing the tickets
        # after the last one was counted)
        # (a counter standing at the count the task gives has counted the task: what
        # follows, checking and fixing, is no stagnation of it)
        idle = (
            value not in self.task_counts
            and self.flat >= self.policy.stagnation_steps
            and step.index - self.last_news >= 2
            and not acted
        )
        # a state never seen before is the environment moving: work between two counts
        # (drain, upgrade, reboot one host, then count it), not a redo nor idling, unless
        # the step says it does that again (a file polished once more changes it too)
        busy = moved and not says_again(step)
        strike = not step.new_info and (value < last or (not busy and (redo is not None or idle)))
        how = (
            "falls" if value < last
            else f"stays flat while step {step.index} redoes step {redo.index}" if redo
            else f"has not risen for {self.flat} steps"
        )  # fmt: skip
        return self._signal(
            "progress", step, strike, f"progress {how} (at {value:g})", window=10**9
        )

    def _apology(self, step: Observation) -> Signal:
        """The same failure again after the agent said it was sorry or had fixed it; in a
        conversation (replies, no tool call), a reply apologising for the reply before it
        when that one apologised too: the user turned both down, and each such turn is one
        more. A reply that apologises for nothing halves the evidence (a refinement
        apologises now and then, an apology loop every turn)."""
        claims = apologises(step.output)
        strike = False
        if step.ok is False and self.claimed_at is not None:
            strike = self.failures.seen(step.tool or "", step.failure or step.error)
        reply = step.tool is None and step.ok is None and step.worked is None
        after_reply = (
            bool(self.history) and self.history[-1].tool is None and (self.history[-1].ok is None)
        )
        # the first apology in a row is a retry (one is normal); each further one a strike
        again = self.claimed_at is not None and self.claimed_at == step.index - 1
        retracts = reply and claims and after_reply and again and not strike
        if reply and after_reply and not claims:
            self._decay("apology")
        if claims:
            self.claimed_at = step.index
        if step.ok is True:
            self.claimed_at = None
            self._reset("apology")
        repeated = claims and any(o.digest == step.digest for o in self.history)
        reason = (
            "the same failure again after the agent said it was sorry or had fixed it"
            if strike
            else "the agent apologises for its last answer again (turned down again)"
            if retracts and not repeated
            else "the same apology again"
        )  # fmt: skip
        return self._signal("apology", step, strike or repeated or retracts, reason)

    def _self_reference(self, step: Observation, informative: bool) -> Signal:
        talks = refers_to_itself(step.output)
        strike = talks and not informative
        return self._signal(
            "self_reference", step, strike,
            "the agent talks about itself or its earlier answers, not the task",
        )  # fmt: skip

    def _oscillation(self, step: Observation, similar: list[Any], informative: bool) -> Signal:
        """Two answers, or two calls, in turn (A -> B -> A): a step joins the cluster of the
        earlier steps it says again, or whose very call (tool and arguments) it makes again
        (an edit applied, undone, applied again, whatever the words around it)."""
        olds = [old.index for old, _, _ in similar]
        calls = []
        if step.args is not None:
            calls = [o.index for o in self.history if o.tool == step.tool and o.args == step.args]
            olds += calls
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
            # (a call made again: its first return is a strike, whatever came before)
            and (len(c) < 4 or c[-2] == c[-4] or bool(calls)) and not informative
        )  # fmt: skip
        if not strike and informative:
            self._decay("oscillation")
        return self._signal(
            "oscillation", step, strike,
            f"steps alternate between two answers (A -> B -> A) at step {step.index}",
        )  # fmt: skip

    def _drift(self, step: Observation, informative: bool, rising: bool = False) -> Signal:
        """Steps off the task's words and off the work it led to (:mod:`.drift`); a step
        whose progress counter rises is the work."""
        verdict = self.topic.read(step, informative, rising)
        if verdict.decay:
            self._decay("drift")
        return self._signal("drift", step, verdict.strike, verdict.reason, window=verdict.window)

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
        elif (
            last is not None and not informative and not rising and rose_before <= last
            # a step that leaves the state where a return to it left it (the check after
            # an undo) is that return's, not another strike
            and not (previous == key and self.returned_at == step.index - 1)
        ):  # fmt: skip
            strike = True
            if previous != key:
                self.returned_at = step.index
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


def _confirms(step: Observation, close: list[Match], earlier: Iterable[Observation]) -> bool:
    """Whether a call that worked only confirms what an earlier step said: it states values,
    all known to the run (none new, no new name), all stated by one earlier step, and either
    its words are at least close to that step's (the same finding, checked through another
    tool) or the values are all measurements (numbers), not names of things: the same reading
    taken again through another tool, in whatever words, is no news, while an action on a
    known item (closing ticket T-6116, named before) is work."""
    if not step.info or step.new_info or step.new_names:
        return False
    if any(step.info <= old.info for old, _, _ in close):
        return True
    if not all(_MEASUREMENT.fullmatch(value) for value in step.info):
        return False
    return any(step.info <= old.info for old in earlier)


#: A value that is a number: a reading, a count, an amount (not an id such as ``T-6116``).
_MEASUREMENT = re.compile(r"[~-]?\d+(?:\.\d+)?%?")
