"""Model texts keyed so that near-duplicates share a key, framing aside.

Words in common at least ``similarity`` (the same values: a short text's numbers and
identifiers, its inline code) make two texts one; a reply that hands back code is keyed by the
code; the previous text with its one number counted up is that text. A reply behind a new
opening or closing line (:mod:`.framing`) is the reply it says again: what stays is compared
with earlier whole replies, and with earlier replies without their framing when it hands
something over. A text found to say again two earlier keys merges them.
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence

from .framing import holds_content, remainders
from .history import digest
from .texts import artefact, fenced_code, inline_artefact, text_shingles

__all__ = ["ReplyEmbedder", "ReplyTexts"]

#: An optional comparison of what replies mean: a model's text -> a vector. Two replies whose
#: vectors' cosine is at least the semantic similarity, with the same values (numbers,
#: names, inline code, code), are one reply said in new words. Given in Python through
#: ``LoopPolicy.reply_embedder`` (nothing wires one by default); without one, replies are
#: compared by their words alone.
ReplyEmbedder = Callable[[str], Sequence[float]]

#: How many distinct model texts (and replies without their framing) near-duplicates are
#: looked for among.
_RECENT_TEXTS = 64
#: How many exact model texts keep their key (a cache: bounded, oldest dropped first).
_EXACT_TEXTS = 1024


class ReplyTexts:
    """The model texts of one run, keyed (see the module). One per run."""

    def __init__(
        self,
        similarity: float,
        embed: ReplyEmbedder | None = None,
        semantic_similarity: float = 0.9,
    ) -> None:
        self.similarity = similarity
        self.embed = embed
        self.semantic_similarity = semantic_similarity
        #: how many replies were encoded by ``embed`` (each distinct text at most once)
        self.encoded = 0
        # (values, unit vector, key) of the recent replies encoded
        self._meanings: deque[tuple[frozenset[str], tuple[float, ...], str]] = deque(
            maxlen=_RECENT_TEXTS
        )
        # text -> (tokens, values, key): the exact model texts seen, and the latest of them
        self._texts: OrderedDict[str, tuple[frozenset[str], frozenset[str], str]] = OrderedDict()
        self._last_text: tuple[frozenset[str], frozenset[str], str] | None = None
        # (tokens, values, key, without its framing?) of the recent model texts
        self._recent: deque[tuple[frozenset[str], frozenset[str], str, bool]] = deque(
            maxlen=_RECENT_TEXTS
        )
        self._alias: dict[str, str] = {}  # a text's key -> the key of the reply it says again

    def key(self, text: str) -> str:
        """The key of a model's text: the key of the recent text it says again, or its own."""
        known = self._texts.get(text)
        if known is not None:
            self._texts.move_to_end(text)
            self._last_text = known
            return self._resolve(known[2])
        words, plain = _said(text)
        fenced_text = fenced_code(text)
        fenced = _code_value(fenced_text)
        values = plain | fenced
        code = artefact(text, fenced_text)
        if code is None and "`" in text:
            code = inline_artefact(text)  # a regex, a formula handed back inline
        # a reply that hands back code says what the code says, whatever the words around it
        key = None if code is None else digest(["artefact", code])
        last = self._last_text
        if key is None and (
            values
            and last is not None
            and _counted_up(values, last[1])
            and words - values == last[0] - last[1]
        ):
            # the previous text again with its one number counted up by one ("I'm thinking...
            # 1", then "... 2"): a counter, not what the text says
            key = self._resolve(last[2])
        cores = [] if code is not None else remainders(text)
        if code is None and "`" in text:
            # code behind framing on both sides ("Tricky! Try: <code>. It captures both."):
            # the reply without its framing hands it back
            for core in cores:
                code = artefact(core) or inline_artefact(core)
                if code is not None:
                    key, cores = digest(["artefact", code]), []
                    break
        shingled = [_with_code(core, _said(core)) for core in cores]
        if shingled and not plain:
            # a short reply behind framing that made it long: its numbers and names are
            # still what it says ("Attempt 2: as of 20:10, GMV 13.77M")
            values = shingled[0][1] | fenced
        for core, (core_words, core_values) in zip(cores, shingled, strict=True):
            if key is not None:
                break
            # the reply behind a new opening or closing line: the same reply when what stays
            # says again a whole earlier reply, or hands over what an earlier one did. Read
            # before the whole text, whose framing words may be shared with another reply
            content = bool(core_values) or holds_content(core)
            key = self._near(core_words, core_values, stripped=True, content=content)
        if key is None:
            key = self._near(words, values, stripped=False)
        meaning = None
        if self.embed is not None and code is None and not fenced:
            # a chat reply (not code): what it means, compared when its words found nothing
            meaning = self._meaning(text)
            if key is None and meaning is not None:
                key = self._same_meaning(meaning, values)
        if key is None:
            key = digest([sorted(words), sorted(values)]) if words else digest(text)
        self._remember((words, values, key, False))
        if meaning is not None:
            self._meanings.append((values, meaning, key))
        for core_words, core_values in shingled:
            self._remember((core_words, core_values, key, True))
        said = self._texts[text] = (words, values, key)
        self._last_text = said
        if len(self._texts) > _EXACT_TEXTS:
            self._texts.popitem(last=False)
        return key

    def _near(
        self,
        words: frozenset[str],
        values: frozenset[str],
        *,
        stripped: bool,
        content: bool = False,
    ) -> str | None:
        """The key of the recent text ``words`` say again (words in common >= the
        similarity, the same values), or None. A reply without its framing is compared with
        earlier whole replies, and with earlier replies without theirs only when it hands
        something over (``content``): two bare sentences that stay when a new one is taken
        off (a status line after each new section) say nothing about which part is framing.
        Every other key the text says again is the same reply: it is merged into the one
        returned."""
        best, found, others = 0.0, None, []
        size = len(words)
        for other, other_values, other_key, core in self._recent:
            if values != other_values or (stripped and core and not content):
                continue  # a short text's numbers and identifiers are what it says
            both = len(words & other)
            union = size + len(other) - both
            share = both / union if union else 1.0
            if share >= self.similarity:
                other_key = self._resolve(other_key)
                if share > best:
                    if found is not None:
                        others.append(found)
                    found, best = other_key, share
                else:
                    others.append(other_key)
        for other_key in others:
            if other_key != found and found is not None:
                if len(self._alias) >= _EXACT_TEXTS:
                    self._alias.clear()
                self._alias[other_key] = found
        return found

    def _meaning(self, text: str) -> tuple[float, ...] | None:
        """``text`` encoded by the embedder, as a unit vector; None when it gives nothing
        usable (an empty or zero vector, a non-number)."""
        assert self.embed is not None
        self.encoded += 1
        try:
            vector = tuple(float(x) for x in self.embed(text))
        except (TypeError, ValueError):
            return None
        norm = math.sqrt(sum(x * x for x in vector))
        if not vector or not norm or math.isnan(norm) or math.isinf(norm):
            return None
        return tuple(x / norm for x in vector)

    def _same_meaning(self, meaning: tuple[float, ...], values: frozenset[str]) -> str | None:
        """The key of the recent reply that means what ``meaning`` does (cosine at least the
        semantic similarity) and names the same values, or None. A reply that changes only a
        number, a name or the code it hands over is another reply, however close in meaning."""
        best, found = self.semantic_similarity, None
        for other_values, other, other_key in self._meanings:
            if other_values != values or len(other) != len(meaning):
                continue
            cos = sum(a * b for a, b in zip(meaning, other, strict=True))
            if cos >= best:
                best, found = cos, self._resolve(other_key)
        return found

    def _remember(self, entry: tuple[frozenset[str], frozenset[str], str, bool]) -> None:
        """Keep a text (or a reply without its framing) among the recent ones, once."""
        if entry not in self._recent:
            self._recent.append(entry)

    def _resolve(self, key: str) -> str:
        """The key a text's key was merged into (a reply found to be another said again)."""
        for _ in range(8):
            merged = self._alias.get(key)
            if merged is None or merged == key:
                return key
            key = merged
        return key


#: English words that only carry tense, number or definiteness: "All tasks complete.", "All
#: tasks are complete." and "All tasks have been completed." say one thing. Negations and
#: quantifiers (``not``, ``no``, ``all``) are not among them: they change what is said.
_GRAMMAR_WORDS = frozenset(
    {"a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "am", "has", "have",
     "had"}
)  # fmt: skip
#: A regular English inflection at a word's end (``completed``, ``tasks``): the stem before it
#: is the word compared. Stems keep at least three letters. ``-ing`` stays: "Deploying the
#: release" (under way) does not say "Deployed the release" (done).
_INFLECTION = re.compile(r"(?<=[a-z]{3})(?:ed|es|s|e)$")


def _said(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """What a model's text says, as :func:`text_shingles` reads it, with its English words
    folded: grammar words dropped and regular inflections taken off (see
    :data:`_GRAMMAR_WORDS`); a question keeps a mark of its own ("Is the build green?" does
    not say "The build is green."). Numbers, names, placeholders and other scripts stay as
    they are, and a text of grammar words alone keeps them."""
    words, values = text_shingles(text)
    folded = {
        w if w in values or not w.isascii() or not w.isalpha() else _INFLECTION.sub("", w)
        for w in words
        if w not in _GRAMMAR_WORDS
    }
    if not folded:
        return words, values
    if text.rstrip()[-1:] in ("?", "？"):
        folded.add("<question>")
    return frozenset(folded), values


def _counted_up(values: frozenset[str], before: frozenset[str]) -> bool:
    """Whether ``values`` are ``before`` with one number one higher."""
    if len(values) != len(before):
        return False
    new, old = values - before, before - values
    if len(new) != 1 or len(old) != 1:
        return False
    (a,), (b,) = new, old
    return a.isdigit() and b.isdigit() and len(a) < 10 and int(a) == int(b) + 1


def _code_value(code: str | None) -> frozenset[str]:
    """The code a text hands over in fenced blocks (its :func:`fenced_code`), as one value
    (none without): a long reply whose words are nearly all the same but whose code differs
    (a query's ``LIMIT 10`` made ``LIMIT 20`` on request, one line of a config changed) is
    another reply. A long text's numbers are masked among its words, so the code is kept
    whole here."""
    return frozenset() if code is None else frozenset({"```" + digest(["fenced", code])})


def _with_code(
    text: str, shingles: tuple[frozenset[str], frozenset[str]]
) -> tuple[frozenset[str], frozenset[str]]:
    """``shingles`` with the code ``text`` hands over among its values (:func:`_code_value`)."""
    words, values = shingles
    return words, values | _code_value(fenced_code(text))
