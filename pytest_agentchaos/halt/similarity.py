"""Which earlier steps a step says again, and which it does again: what repetition,
oscillation and the progress check read.

A step *says the same* as an earlier one when the two are equal once their values are masked
(and it names no value the other did not), hand back the same artefact, restate the same short
answer, or share enough: token overlap (words; CJK character bigrams) or, for other text, the
cosine of sentence embeddings. It is *close* (a paraphrase) :data:`CLOSE` below those limits.
A step *redoes* an earlier one when it is the same call again, or the same tool saying the same
or nearly the same about nothing that step did not name, or saying it does that again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .content import says_more
from .embed import CachedEmbedder, cosine
from .observation import Observation
from .policy import HaltPolicy
from .text import STOPWORDS, acronyms, names, overlap, stems, tokens

__all__ = ["CLOSE", "Match", "redoes", "requery", "says_again", "similar"]

#: How far below the policy's limit for "says the same" (``semantic_similarity``, or
#: ``cjk_overlap`` for CJK text) two outputs are still *close*: a paraphrase. Close is no
#: repetition by itself; it makes a step that names nothing new a redo of the earlier one.
CLOSE = 0.2

#: An earlier step, how it matches (``exact``, ``artefact``, ``restated``, ``lexical``,
#: ``semantic``) and how closely.
Match = tuple[Observation, str, float]


def similar(
    step: Observation,
    recent: Sequence[Observation],
    policy: HaltPolicy,
    embedder: CachedEmbedder | None,
    named: set[str],
    cjk_embedder: CachedEmbedder | None = None,
    seen: frozenset[str] = frozenset(),
    known: frozenset[str] = frozenset(),
) -> tuple[list[Match], list[Match]]:
    """The outputs of ``recent`` that say the same as ``step`` (which, how, score), and every
    one that is at least *close* to it: a paraphrase, its similarity :data:`CLOSE` below the
    policy's limit for saying the same. Texts are compared with their values masked; only the
    very same values say the same ("pinning 2.6.4" after "pinning 1.10.13" reads alike, but
    is the other answer). The same artefact handed back (code, a query, a formula) says the
    same whatever the words around it, and so does a short answer restating the same values
    with nothing else new (no name outside ``named``, the names said so far; no new content
    words or announced change of approach beyond ``known``, the words the run and its task
    said so far: :func:`.content.says_more`). CJK text is
    compared by its character bigrams, then (``cjk_embedder``, a multilingual model) by the
    cosine of its masked text against ``cjk_semantic_similarity``; never by ``embedder``, an
    English model that scores unrelated Chinese sentences 0.44-0.54."""
    found: list[Match] = []
    close: list[Match] = []
    if not step.output.strip():
        return found, close
    pending: list[Observation] = []
    pending_cjk: list[Observation] = []
    short = len(step.tokens) <= _SHORT
    # a short answer that says something new besides its values restates nothing
    more = short and says_more(step, known | seen)
    for old in recent:
        if not old.output.strip():
            continue
        if old.digest == step.digest or (old.shape == step.shape and step.info <= old.info):
            found.append((old, "exact", 1.0))
            continue
        if (
            step.artefacts
            and old.tool == step.tool
            and (step.artefacts <= old.artefacts or _retouched(step.artefacts, old.artefacts, seen))
        ):
            found.append((old, "artefact", 1.0))
            continue
        if not old.tokens or not step.tokens or not step.info <= old.info:
            continue  # naming a value that one did not: about something else (unencoded)
        if (
            short
            and old.tool == step.tool
            and old.args == step.args
            and _restates(step, old, named)
            and not more
        ):
            found.append((old, "restated", 1.0))
            continue
        jaccard = overlap(old.tokens, step.tokens)
        limit = policy.cjk_overlap if step.cjk else policy.lexical_overlap
        if jaccard >= limit:
            found.append((old, "lexical", jaccard))
        elif not step.cjk and not old.cjk and embedder is not None:
            pending.append(old)
        elif (step.cjk or old.cjk) and cjk_embedder is not None:
            pending_cjk.append(old)
        elif jaccard >= limit - CLOSE:
            close.append((old, "lexical", jaccard))
    if pending and embedder is not None:
        vectors = embedder.encode([step.output] + [o.output for o in pending])
        _cosines(vectors, pending, policy.semantic_similarity, found, close)
    if pending_cjk and cjk_embedder is not None:
        # values masked: the values were compared above, in one writing
        vectors = cjk_embedder.encode(
            [step.masked or step.output] + [o.masked or o.output for o in pending_cjk]
        )
        _cosines(vectors, pending_cjk, policy.cjk_semantic_similarity, found, close)
    return found, found + close


def _restates(step: Observation, old: Observation, named: set[str]) -> bool:
    """Whether the short answer ``step`` restates ``old``: it names no name the run has not
    said (``named``), and either states values, all of them ``old``'s, or states none but
    names only names ``old`` named ("The owner is Dana Ortiz" after "reach Dana Ortiz")."""
    mine = _names(step)
    if not mine <= named:
        return False
    if step.info:
        return True  # (its values are all old's: checked by the caller)
    return bool(mine) and mine <= _names(old)


def _retouched(mine: frozenset[str], theirs: frozenset[str], seen: frozenset[str]) -> bool:
    """Whether each of the artefacts ``mine`` is one of ``theirs`` retouched: the same words
    (names, keywords, literals; its own variables renamed) but for a few, and none that the
    run has not said before (brackets, signs, spacing, a word moved). A fix brings a word of
    its own: a clause, a column, a literal, a call."""
    for artefact in mine:
        words = _CODE_WORD.findall(artefact)
        best = 0.0
        for other in theirs:
            others = _CODE_WORD.findall(other)
            added = set(words) - set(others)
            if any(w not in seen and not _RENAMED.fullmatch(w) for w in added):
                continue
            union = set(words) | set(others)
            best = max(best, len(set(words) & set(others)) / len(union) if union else 1.0)
        if best < _RETOUCHED:
            return False
    return True


_CODE_WORD = re.compile(r"[^\W\d_][\w]*|\d+(?:\.\d+)?")
_RENAMED = re.compile(r"v\d+")
#: The share of its words an artefact keeps when it is only retouched.
_RETOUCHED = 0.75


def _cosines(
    vectors: Sequence[Sequence[float]],
    olds: list[Observation],
    limit: float,
    found: list[Match],
    close: list[Match],
) -> None:
    """The step's vector (first) against each earlier step's: the same at ``limit``, close
    :data:`CLOSE` below it."""
    for old, vector in zip(olds, vectors[1:], strict=True):
        score = cosine(vectors[0], vector)
        if score >= limit:
            found.append((old, "semantic", score))
        elif score >= limit - CLOSE:
            close.append((old, "semantic", score))


def redoes(
    step: Observation,
    matches: list[Match],
    recent: Sequence[Observation],
    named: set[str],
    task: frozenset[str] = frozenset(),
) -> list[Observation]:
    """The steps of ``recent`` that ``step`` does again: the same call (tool and arguments,
    when both are known) or the same query reworded (:func:`requery`; ``task``: the task's
    words), or the same tool (or none) saying the same or nearly the same (``matches``) about
    nothing that step did not name. A step with new information, or a call with other
    arguments, does something else."""
    if step.new_info:
        return []
    found = {}
    close = {old.index for old, _, _ in matches}
    if step.args is not None:
        mine = _call(step)
        found = {o.index: o for o in recent if o.args is not None and _call(o) == mine}
        found.update((o.index, o) for o in requery(step, recent, task))
    # it says it does something again: what it names that a step of the same tool did
    again = stems(step.tokens | step.info) if _AGAIN.search(step.output[:4000]) else frozenset()
    # words close to an earlier step's but about a thing not named before: the next item
    fresh = bool(_names(step) - named)
    for old in recent:
        if old.tool != step.tool or not step.info <= old.info:
            continue
        if step.args is not None and old.args is not None:
            continue  # other arguments: another call
        if (old.index in close and not fresh) or again & stems(old.tokens | old.info):
            found[old.index] = old
    return [found[i] for i in sorted(found)]


def requery(
    step: Observation, recent: Sequence[Observation], task: frozenset[str] = frozenset()
) -> list[Observation]:
    """The earlier calls of ``step``'s tool that it only asks again in other words: its
    arguments' words are the words of those calls and of the ``task``, in any order, and it
    shares at least half its words with one of them (the same query shuffled, trimmed or
    with a task word put back). A word asked for the first time makes it another query."""
    if step.args is None:
        return []
    mine = _ask(step.args)
    olds = [o for o in recent if o.tool == step.tool and o.args is not None and o.args != step.args]
    if len(mine) < 2 or not olds:
        return []
    asked = frozenset().union(*(_ask(o.args or "") for o in olds))
    if not mine <= asked | task:
        return []
    return [o for o in olds if overlap(mine, _ask(o.args or "")) >= 0.5]


def _ask(args: str) -> frozenset[str]:
    """The words an argument text asks for (keys and stopwords aside)."""
    return frozenset(w for w in tokens(_KEYS.sub(" ", args)) if w not in STOPWORDS)


#: A JSON key ("q": ...): the call's format, not what it asks.
_KEYS = re.compile(r'"[^"\n]{1,40}"\s*:')


def says_again(step: Observation) -> bool:
    """Whether ``step`` says it does something again ("once more", "re-reading", 再次)."""
    return bool(_AGAIN.search(step.output[:4000]))


def _names(step: Observation) -> frozenset[str]:
    """The names a step says, read with its values masked ("2 MiB" is a size) and without
    all-capital words (units, labels)."""
    return names(step.masked or step.output) - acronyms(step.output)


def _call(step: Observation) -> tuple[str | None, str]:
    """A call as the same call again would be: its tool and its (masked) arguments."""
    return step.tool, step.args or ""


#: The agent says it does something again: a retry, a re-check, one more pass.
_AGAIN = re.compile(
    r"\b(?:again|once more|one more (?:time|try|attempt|pass|check|look|confirmation)|"
    r"another (?:try|attempt|pass|look)|double-check\w*|re-\w+|back(?![-\w])|revert\w*|"
    r"restor\w*|undo\w*)|"
    r"再(?:次|一次|一遍|试|查|看一|检查|通读|跑|运行|执行|提交)|重新|又一次|改回|恢复",
    re.IGNORECASE,
)
#: Up to this many tokens (values masked), an answer restated with the same values and no
#: new name says the same, whatever its words.
_SHORT = 30
