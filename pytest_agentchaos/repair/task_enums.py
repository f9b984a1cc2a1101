"""An allowed value the task names, for a value sent that is the task's own phrase.

A model often copies the user's words into an enum field (``most commented``, ``wontfix``
from "won't fix / not planned"): the value is none of the allowed ones, and the task itself
says which one it is when it names exactly one allowed value, and that value is either the
copied phrase's own word inflected (``commented`` -> ``comments``) or written beside the
phrase as its alternative ("/", "or", a comma, parentheses). An allowed value the task names
elsewhere is the task's verb or another thing ("Merge PR 42 as a fast-forward" names
``merge`` and asks for no merge commit): no evidence. A value the task names after a
negation ("not completed") is what is not wanted: declined.
"""

from __future__ import annotations

import re

from .words import name_tokens

__all__ = ["base_form", "members_named", "named_by_task", "words_of"]

#: English inflectional and derivational endings ("commented", "locally"): a closed class.
_SUFFIXES = ("ally", "ing", "es", "ed", "ly", "er", "al", "ic", "s", "d", "e")
_NEGATING = frozenset({"no", "not", "never", "dont", "doesnt", "without", "except", "nor"})
_BETWEEN = r"\s*(?:(?:/|\bor\b|,|\(|\bi\.?e\.?)\s*)+"


def base_form(word: str) -> str:
    """A word without an inflectional ending, a doubled last consonant undone (``planned``
    -> ``plan``; ``comments`` and ``commented`` -> ``comment``)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeiousl":
        word = word[:-1]
    return word


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", _plain(text))


def _plain(text: str) -> str:
    return text[:4000].casefold().replace("'", "").replace("\u2019", "")


def _alternatives(task: str, one: list[str], other: list[str]) -> bool:
    """Whether the task writes two phrases as alternatives of each other: one right after the
    other, apart by "/", "or", a comma, or in parentheses."""
    a = r"\W+".join(re.escape(w) for w in one)
    b = r"\W+".join(re.escape(w) for w in other)
    return bool(re.search(rf"\b{a}{_BETWEEN}{b}\b|\b{b}{_BETWEEN}{a}\b", task))


def named_by_task(text: str, choices: list[str], task: str | None) -> str | None:
    """The one allowed value the task names for ``text`` (see the module), or None."""
    if not task or not choices:
        return None
    spoken = _words(task)
    sent_words = _words(text)
    sent = "".join(sent_words)
    if not sent or len(spoken) > 600:
        return None
    spans = [
        spoken[i:j]
        for i in range(len(spoken))
        for j in range(i + 1, min(len(spoken), i + 5) + 1)
        if "".join(spoken[i:j]) == sent
    ]
    if not spans:
        return None  # the value is not the task's own phrase
    plain = _plain(task)
    own = {base_form(w) for w in sent_words if len(w) >= 3}
    bases = [base_form(w) for w in spoken]
    named: list[str] = []
    for choice in choices:
        words = [base_form(w) for w in _words(" ".join(name_tokens(choice)))]
        if not words or all(len(w) < 3 for w in words):
            continue
        for k in range(len(bases) - len(words) + 1):
            if bases[k : k + len(words)] != words:
                continue
            if k and spoken[k - 1] in _NEGATING:
                return None  # the task says it does not want one of them
            written = spoken[k : k + len(words)]
            if own & set(words) or any(_alternatives(plain, span, written) for span in spans):
                named.append(choice)
                break
    return named[0] if len(named) == 1 else None


_PATHLIKE = re.compile(r"[^\W_][./\\@:][^\W_]|/")


def words_of(choice: str) -> set[str]:
    """An allowed value's words in their base form."""
    return {base_form(w) for w in _words(" ".join(name_tokens(choice)))}


def members_named(choices: list[str], task: str | None) -> list[str]:
    """The allowed values the task writes as words (any inflection), not after a negation nor
    inside a file name, a path or an address (``release.tar.gz`` names no ``tar``)."""
    if not task or not choices:
        return []
    prose = " ".join(t for t in task[:4000].split() if not _PATHLIKE.search(t))
    spoken = _words(prose)[:600]
    bases = [base_form(w) for w in spoken]
    named = []
    for choice in choices:
        words = [base_form(w) for w in _words(" ".join(name_tokens(choice)))]
        if not words or all(len(w) < 3 for w in words):
            continue
        for k in range(len(bases) - len(words) + 1):
            if bases[k : k + len(words)] == words and not (k and spoken[k - 1] in _NEGATING):
                named.append(choice)
                break
    return named
