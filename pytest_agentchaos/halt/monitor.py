"""The halt monitor: hard limits first, then the heuristics' scores combined into one risk
against a threshold (seed 004's weighted monitor), with a decision that names what fired. A
halt needs one heuristic at its full strikes (three strikes of one pattern) as well: several
heuristics that each count the same event once or twice do not add up to one.

    monitor = HaltMonitor(task="Summarise the three reports")
    for output in agent_steps():
        decision = monitor.observe(output)
        if decision.halt:               # decision.reason: "repetition (3/3): step 5 repeats
            break                       # step 3 (semantic, 0.93) and adds no new information"
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ChaosConfigError
from ..escape.normalize import mask_text
from ..saferepr import safe_str
from .artefacts import artefacts
from .embed import (
    MISSING_EXTRA,
    MULTILINGUAL_PACKAGE,
    CachedEmbedder,
    Embedder,
    LexicalEmbedder,
    MultilingualEmbedder,
    SentenceEmbedder,
)
from .heuristics import (
    Heuristic,
    Observation,
    Signal,
    Watch,
    check_heuristics,
    heuristic_name,
)
from .policy import HaltPolicy
from .quantities import Known
from .state import plain, state_key
from .streaks import Lows, error_class, error_classes, signature
from .text import MAX_TEXT, acronyms, capitalised, cjk_share, digest, names, tokens
from .values import Counters, loop_place, read

__all__ = ["HaltDecision", "HaltMonitor"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class HaltDecision:
    """``halt``: stop now. ``score``: the combined risk (0 to 1). ``fired``: the heuristics
    with a strike this step or a full score, most sure first. ``reason``: why, in words.
    ``hard``: a hard limit (steps, seconds, tokens) decided. ``signals``: every heuristic's
    signal for this step."""

    halt: bool
    score: float
    fired: tuple[str, ...] = ()
    reason: str = ""
    step: int = 0
    hard: bool = False
    signals: tuple[Signal, ...] = field(default=(), repr=False)


class HaltMonitor:
    """Watches one run step by step; see the module's docstring.

    ``embedder``: ``None`` for the sentence model of the ``semantic`` extra (without the extra,
    building the monitor is a ``ChaosConfigError`` naming it), ``"lexical"`` (or a
    :class:`~.embed.LexicalEmbedder`) or any :class:`~.embed.Embedder`; each
    distinct text is encoded once. CJK text is never compared by the English model's cosine.

    ``cjk_embedder``: what CJK text (Chinese, Japanese, Korean) is compared with beside its
    character bigrams. ``None``: the multilingual sentence model
    (:class:`~.embed.MultilingualEmbedder`, in the ``semantic`` extra) where it is installed and
    the monitor is not lexical; else character bigrams only (:attr:`cjk_semantic` says which).
    ``"lexical"``: character bigrams only. Or any :class:`~.embed.Embedder`.

    ``heuristics``: heuristics of your own, read after the built-in ones (see
    :class:`~.heuristics.Heuristic`): each strike counts toward its own three strikes like a
    built-in's, and its name appears in the decision."""

    def __init__(
        self,
        task: str = "",
        embedder: Embedder | str | None = None,
        policy: HaltPolicy | None = None,
        heuristics: Sequence[Heuristic] = (),
        cjk_embedder: Embedder | str | None = None,
    ) -> None:
        __tracebackhide__ = True
        if not isinstance(task, str):
            raise TypeError(f"HaltMonitor(task=...) takes the task's text, got {task!r}")
        if isinstance(embedder, str) and embedder == "lexical":
            embedder = LexicalEmbedder()
        elif embedder is None:
            if not SentenceEmbedder.available():  # now, not at the first paraphrase mid-run
                raise ChaosConfigError(f"HaltMonitor: {MISSING_EXTRA}")
            embedder = SentenceEmbedder()
        elif isinstance(embedder, str) or not isinstance(embedder, Embedder):
            raise TypeError(
                "embedder must be None, 'lexical' or have encode(texts) -> vectors; "
                f"got {embedder!r}"
            )
        cjk = _cjk_embedder(cjk_embedder, lexical=isinstance(embedder, LexicalEmbedder))
        if policy is not None and not isinstance(policy, HaltPolicy):
            raise TypeError(f"HaltMonitor(policy=...) takes a HaltPolicy, got {policy!r}")
        self.policy = policy or HaltPolicy()
        self.heuristics = check_heuristics(heuristics)
        self._weights = {
            heuristic_name(h): float(getattr(h, "weight", 1.0)) for h in self.heuristics
        }
        self.embedder = CachedEmbedder(embedder)
        #: The embedder CJK text is compared with (cached), or None: character bigrams only.
        self.cjk_embedder = CachedEmbedder(cjk) if cjk is not None else None
        self.watch = self._watch(task)
        self.steps = 0
        self.seconds = 0.0
        self.tokens_used = 0
        self.history: list[HaltDecision] = []
        self.run_watch: Any = None
        #: The :class:`~.interventions.Responder` answering this monitor's decisions, if any.
        self.responder: Any = None
        self._seen_info: set[str] = set()
        #: every word said so far (a quoted text of them, reordered, is no news)
        self._seen_words: set[str] = set()
        self._counters = Counters()
        self._known = Known()
        self._learn_task(task)
        # each tool's last failure without error text: (signature, counts, error classes, values)
        self._quiet: dict[str, tuple[str, frozenset[str], frozenset[str], frozenset[str]]] = {}
        #: the calls (tool, arguments) that have worked so far, and the tool of the last step
        #: when it was one never made before (a change not tried yet: what fails next is the
        #: outcome of a new attempt)
        self._calls: set[tuple[str, str]] = set()
        self._changed: str | None = None
        #: the failure counts each tool's failures stated since it last worked
        self._lows = Lows()

    @classmethod
    def for_run(cls, run: Any, task: str = "", **kwargs: Any) -> HaltMonitor:
        """A monitor reading a chaos run (the ``chaos`` fixture) from its trace: each model
        result and tool result is a step; strikes are ``Detection`` events (detector
        ``halt``), a decision to stop is a ``Halt`` event. The profile's ``[halt]`` table is
        its policy unless ``policy=`` is given. Its latest decision: :attr:`decision`."""
        __tracebackhide__ = True
        from .watch import RunWatch

        if "policy" not in kwargs:
            profile = getattr(run, "profile", None)
            kwargs["policy"] = profile.policy("halt") if profile is not None else HaltPolicy()
        monitor = cls(task, **kwargs)
        monitor.run_watch = RunWatch(monitor, run.trace, run.session)
        return monitor

    def reset(self) -> None:
        """Forget the run's strikes and what it has seen (after a rollback or a restart the
        agent starts over, and what it says again is no repetition); its steps, seconds and
        tokens still count toward the hard limits."""
        self.watch = self._watch(self.watch.task)
        self._seen_info = set()
        self._seen_words = set()
        self._counters = Counters()
        self._known = Known()
        self._learn_task(self.watch.task)
        self._quiet = {}
        self._calls = set()
        self._changed = None
        self._lows = Lows()
        if self.run_watch is not None:
            self.run_watch.halted = None

    def _learn_task(self, task: str) -> None:
        """What the task says is known from the start: a value or a name it gives ("the
        199 prefix", "Cannot use import statement") said again by the agent is no news."""
        if not task:
            return
        reading = read(task)
        self._known.restated([v for _, v in reading.numbers], reading.quantities)
        self._seen_info |= reading.values
        self._seen_info |= {f"name:{n}" for n in capitalised(reading.masked)}
        self._seen_words |= tokens(task)

    def _part_of_seen(self, value: str) -> bool:
        """Whether ``value`` (with a letter, three characters or more) is a part of a longer
        value said before, standing apart in it (not "1.2.3" of "1.2.30")."""
        if len(value) < 3 or len(value) > 200 or not any(c.isalpha() for c in value):
            return False
        for seen in self._seen_info:
            at = seen.find(value) if len(seen) > len(value) else -1
            while at >= 0:
                end = at + len(value)
                if (at == 0 or not seen[at - 1].isalnum()) and (
                    end == len(seen) or not seen[end].isalnum()
                ):
                    return True
                at = seen.find(value, at + 1)
        return False

    def _watch(self, task: str) -> Watch:
        return Watch(
            self.policy, task, self.embedder, extra=self.heuristics, cjk_embedder=self.cjk_embedder
        )

    @property
    def cjk_semantic(self) -> bool:
        """Whether CJK text is compared by a sentence model (else by character bigrams only)."""
        return self.cjk_embedder is not None

    @property
    def decision(self) -> HaltDecision:
        """The latest decision (a quiet one before any step)."""
        return self.history[-1] if self.history else HaltDecision(False, 0.0)

    def observe(
        self,
        output: Any,
        tool: str | None = None,
        ok: bool | None = None,
        progress: float | None = None,
        state: Any = None,
        *,
        error: Any = None,
        tokens_used: int | None = None,
        seconds: float | None = None,
        args: Any = None,
        worked: str | None = None,
    ) -> HaltDecision:
        """Read one step: the agent's ``output`` (text, or anything: read as text), the
        ``tool`` it called and whether that was ``ok`` (with the tool's ``error``), the
        ``progress`` it reports (None: no signal, not zero), the environment's ``state`` after
        the step (any value; None: not logged; a state seen again with nothing new since, or
        standing still while progress rises, is a strike), the tokens it used and the seconds
        it took (virtual), and the ``args`` of the tool call (so that the same call failing again is
        told from another call failing). ``worked`` names another call that worked at this
        step (the model call that wrote ``output``, as its failures were named in ``tool``):
        the failures it had are no streak any more. Returns the decision for this step."""
        text = as_text(output)
        index = self.steps
        self.steps += 1
        self.tokens_used += int(tokens_used or 0)
        self.seconds += float(seconds or 0.0)
        error_text = None if error is None else safe_str(error, 2000)
        # information as values in one writing, monotone counters left out; what a tool's
        # error says is news too ("4 failed" after "12 failed")
        reading = read(text)
        counters = self._counters.drop(index, reading.numbers)
        # a number said before in another writing or unit ("1.28 km" after "1,280 m", "1.2k"
        # after "1203") is that number: compared as it, and no news
        restated = self._known.restated(
            [v for _, v in reading.numbers], reading.quantities, reading.approximate
        )
        canonical = None if args is None else _canonical(args)
        after_change = self._changed is not None and self._changed != tool
        self._changed = None
        fresh = False
        if ok is True and tool is not None and canonical is not None:
            if (tool, canonical) not in self._calls:
                self._changed = tool
                fresh = True
            if len(self._calls) > 100_000:  # bounded memory for endless runs
                self._calls.clear()
            self._calls.add((tool, canonical))
        # a call that worked names the item it worked on ("page 4"): its number is no loop
        # counter there, unless a word says it counts the agent's own repetitions ("[iter
        # 5]", "attempt 3", "step: 9", "第3轮"); talk and failures that only count their own
        # attempts say nothing new
        loops = {v for place, v in reading.numbers if loop_place(place)}
        if ok is True:
            counters &= frozenset(loops - {v for p, v in reading.numbers if not loop_place(p)})
        # a count toward a total whose count is a counter a loop word names ("iteration 4/20"
        # after "3/20") counts too: the total said again is no news
        counters |= {v for v in reading.values if (c := _of_total(v)) in counters and c in loops}
        info = frozenset(restated.get(v, v) for v in (reading.values - counters) - reading.weak)
        counted = reading.counted
        if error_text:
            said_error = read(error_text)
            info |= said_error.values
            counted |= said_error.counted
        # a part of a value said before ("stg-db:5432/app" of "DATABASE_URL=postgres://stg-
        # db:5432/app") is no news either
        new = frozenset(v for v in info - self._seen_info if not self._part_of_seen(v))
        # a quoted text whose every word the run has said before is those words reordered
        # (the same query shuffled), not news
        # a words' value (a quoted text, a thing counted) is news by a fact it brings: a word
        # with a digit or a name the run has not said; a new plain word around what was said
        # ("env sort" after "env") is new wording, not a new fact. A working call's own words
        # (a new search query) are what it did: news as before
        words = tokens(text)
        named = names(reading.masked)
        new = frozenset(
            v for v in new
            if " " not in v
            or (not set(v.split()) <= self._seen_words if ok is True
                else _brings_fact(v, self._seen_words, named))
        )  # fmt: skip
        self._seen_info |= info
        self._seen_words |= words
        # a name not said before ("left the Leipzig hub on Monday") is news where the step
        # says something else than before (the heuristics judge that)
        # (read with values masked: "2 MiB" is a size, not a name)
        said = {f"name:{n}" for n in names(reading.masked) if n not in acronyms(text)}
        # a name the run has already seen as a value ("ImportError" in an error) is no news
        new_names = frozenset(n for n in said - self._seen_info if n[5:] not in self._seen_info)
        self._seen_info |= said
        if len(self._seen_info) > 100_000:  # bounded memory for endless runs
            self._seen_info = set(info)
        if len(self._seen_words) > 100_000:
            self._seen_words = set(words)
        given = state is not None
        step = Observation(
            index=index,
            output=text,
            tool=tool,
            ok=ok,
            error=error_text,
            progress=float(progress) if _number(progress) else None,  # type: ignore[arg-type]
            tokens=tokens(reading.masked),
            info=info,
            digest=digest(text),
            cjk=cjk_share(text) >= 0.3,
            new_info=new,
            new_names=new_names,
            args=canonical,
            seconds=float(seconds) if seconds is not None and _number(seconds) else None,
            worked=worked,
            shape=digest(reading.masked),
            masked=reading.masked,
            artefacts=artefacts(text),
            state=state_key(state) if given else None,
            state_value=plain(state) if given else None,
            failure=self._failure(
                tool, ok, error_text, text, new, reading.counted, info, after_change
            ),
            lower=self._lows.lower(tool, ok, counted),
            fresh=fresh,
        )
        signals = tuple(self.watch.read(step))
        decision = self._decide(step, signals)
        self.history.append(decision)
        return decision

    def _failure(
        self,
        tool: str | None,
        ok: bool | None,
        error: str | None,
        text: str,
        new: frozenset[str],
        counted: frozenset[str],
        info: frozenset[str] = frozenset(),
        after_change: bool = False,
    ) -> str | None:
        """What makes this failure the same as another (None unless the call failed). With
        error text: its class or its masked text (:func:`.streaks.signature`). Without: the
        tool's output says what failed, in words that vary; it is the same failure as the
        tool's previous one when it names no value new to the run (a count, a path, a test)
        and states the same counts, and another failure otherwise; right after another tool's
        call never made before worked (``after_change``: an edit not tried yet), a failure
        that says nothing of what failed is the outcome of a new attempt, not the same
        failure again."""
        if ok is not False:
            return None
        if error and tool is not None and _exit_only(error):
            # "exit 2" says that it failed, not what failed: the output says that
            return signature(None, f"{error}\n{text}")
        if error or tool is None:
            return signature(error, text)
        kind = error_classes(text)
        previous = self._quiet.get(tool)
        before = previous[3] if previous else frozenset()
        # a value new to the run that is only a part of one the last failure named (the test
        # of "tests/a.py::test_x") names nothing new
        hard = {v for v in new if _HARD.search(v) and not any(v in old for old in before)}
        # the same failure in other words names one class of error as the last did (the
        # exception, the refused connection), or names none
        same_class = not kind or not previous or not previous[2] or bool(kind & previous[2])
        if (
            previous is not None
            and not after_change
            and not hard
            and not _recounted(counted, previous[1])
            and same_class
        ):
            # what this wording names joins the failure (a class said first in other words)
            self._quiet[tool] = (previous[0], previous[1], previous[2] | kind, before | info)
            return previous[0]
        mark = f"quiet:{tool}:{self.steps}:{','.join(sorted(kind))}"
        self._quiet[tool] = (mark, counted, kind, info)
        return mark

    def _decide(self, step: Observation, signals: Sequence[Signal]) -> HaltDecision:
        hard = self._limit()
        if hard:
            return HaltDecision(True, 1.0, ("limits",), hard, step.index, True, tuple(signals))
        remaining = 1.0
        for signal in signals:
            weight = self._weights.get(signal.heuristic)
            if weight is None:
                weight = self.policy.weight(signal.heuristic)
            remaining *= 1.0 - weight * signal.score
        risk = round(1.0 - remaining, 6)
        ranked = sorted((s for s in signals if s.strike or s.score >= 1.0), key=lambda s: -s.score)
        fired = tuple(s.heuristic for s in ranked)
        # three strikes of one pattern, and the weighted risk high enough: heuristics that each
        # count the same event (a return to an old state is a state strike, a failure again
        # and a step with nothing new) are not three independent patterns
        halt = risk >= self.policy.threshold and any(s.score >= 1.0 for s in signals)
        reason = "; ".join(
            f"{s.heuristic} ({s.strikes}/{self.policy.strikes}): {s.reason}"
            for s in ranked
            if s.reason
        )
        return HaltDecision(halt, risk, fired, reason, step.index, False, tuple(signals))

    def _limit(self) -> str:
        p = self.policy
        if p.max_steps and self.steps > p.max_steps:
            return f"limits: {self.steps} steps, over the limit of {p.max_steps}"
        if p.max_seconds and self.seconds > p.max_seconds:
            return f"limits: {self.seconds:g} s, over the limit of {p.max_seconds:g} s"
        if p.max_tokens and self.tokens_used > p.max_tokens:
            return f"limits: {self.tokens_used} tokens, over the limit of {p.max_tokens}"
        return ""


def _cjk_embedder(choice: Any, lexical: bool) -> Embedder | None:
    """The embedder for CJK text that ``cjk_embedder=choice`` names (see :class:`HaltMonitor`)."""
    if choice is None:
        if lexical:
            return None
        if not MultilingualEmbedder.available():
            _say_bigrams_only()
            return None
        return MultilingualEmbedder()
    if isinstance(choice, str) and choice == "lexical":
        return None
    if isinstance(choice, str) or not isinstance(choice, Embedder):
        raise TypeError(
            f"cjk_embedder must be None, 'lexical' or have encode(texts) -> vectors; got {choice!r}"
        )
    return choice


@functools.cache
def _say_bigrams_only() -> None:
    """Once per process: without the multilingual model, CJK text is compared by bigrams."""
    logger.info(
        "halt monitor: CJK text is compared by character bigrams only; the multilingual "
        "sentence model needs the package %r (the 'semantic' extra)",
        MULTILINGUAL_PACKAGE[0],
    )


#: A value that tells one failure from another: a number, a path, a name with a digit, a
#: test id (not a quoted message in words).
_HARD = re.compile(r"\d|[./_:]\w")


def _exit_only(error: str) -> bool:
    """Whether an error text is only an exit status ("exit 2", "Command failed with exit code
    1"): the same for every failure of a command."""
    kinds = error_class(error)
    return len(error) <= 80 and bool(kinds) and all(k.startswith("exit:") for k in kinds.split(","))


def _recounted(now: frozenset[str], before: frozenset[str]) -> bool:
    """Whether a count stated in both differs ("2 failed" after "3 failed"; "failed" and
    "failures" are one word here)."""
    counts: dict[str, str] = {}
    for pair in before:
        n, _, word = pair.partition(" ")
        counts[word[:4]] = n
    for pair in now:
        n, _, word = pair.partition(" ")
        if counts.get(word[:4], n) != n:
            return True
    return False


def as_text(output: Any) -> str:
    """An output as the heuristics read it: text as it is; a structured message (a dict or a
    list, or JSON text of one) as its fields, one ``key: value`` line each, so that its keys
    and quotes are format, not information; anything else as its (safe) ``str``."""
    if isinstance(output, str):
        head = output.lstrip()[:1]
        if head not in ("{", "[") or len(output) > 200_000:
            return output
        try:
            output = json.loads(output)
        except ValueError:
            return str(output)
    if isinstance(output, (Mapping, list, tuple)):
        lines: list[str] = []
        _flatten(plain(output), "", lines)
        return "\n".join(lines)[:MAX_TEXT]
    return safe_str(output, MAX_TEXT)


def _flatten(value: Any, key: str, lines: list[str]) -> None:
    if len(lines) > 2000:
        return
    if isinstance(value, dict):
        for name, item in value.items():
            _flatten(item, name, lines)
    elif isinstance(value, list):
        for item in value:
            _flatten(item, key, lines)
    elif value is not None and value != "":
        lines.append(f"{key}: {value}" if key else str(value))


def _canonical(args: Any) -> str:
    """A call's arguments as text that is equal for the same call (key order aside, volatile
    details such as ids, times and temp paths masked)."""
    try:
        text = json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)[:4000]
    except Exception:  # keys that do not sort, values whose str() raises
        text = safe_str(args, 4000)
    return mask_text(text)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _of_total(value: str) -> str | None:
    """The count of a count toward a total ("4" of "4/20"), or None for another value."""
    count, slash, total = value.partition("/")
    return count if slash and count.isdigit() and total.isdigit() else None


def _brings_fact(value: str, seen: set[str], named: frozenset[str]) -> bool:
    """Whether a value of several words has one the run has not said that is a fact: with a
    digit, or a name (capitalised in the text)."""
    unseen = [w for w in value.split() if w not in seen]
    return len(unseen) > 1 or any(any(c.isdigit() for c in w) or w in named for w in unseen)
