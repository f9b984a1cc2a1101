"""Negation scope, read plainly: whether a text says no to a word (a negation within a few
words before it), for a yes/no field sent a negative quantifier ("none") that could mean "no"
or "no value", and whether the task writes a value only to refuse it ("not gold", "anything
but express", "instead of ORD-12"): no evidence for that value."""

from __future__ import annotations

import re

from .words import name_tokens

__all__ = ["NONE_WORDS", "negated_in_task", "refused_in_task"]

#: Negative quantifiers: "no" for a yes/no only where the task itself says no to the field.
NONE_WORDS = frozenset({"none", "never", "nothing", "nobody"})
_NEGATION = re.compile(r"\b(?:no|not|never|none|without)\b|n['\u2019]t\b", re.IGNORECASE)


def negated_in_task(name: str, task: str | None) -> bool:
    """Whether the task negates the field's own word: a word sharing its first four letters
    with a word of the field's name stands within six words after a negation ("don't send
    any notifications" for ``notify``)."""
    stems = {w[:4] for w in name_tokens(name or "") if len(w) >= 4}
    if not task or not stems:
        return False
    head = task[:4000]
    for match in _NEGATION.finditer(head):
        after = re.findall(r"[^\W\d_]+", head[match.end() :])[:6]
        if any(w.lower()[:4] in stems for w in after if len(w) >= 4):
            return True
    return False


#: Words that refuse what follows them, one or two words on ("not gold", "anything but the
#: express", "instead of ORD-12", "except on Mondays").
_REFUSING = re.compile(
    r"(?:\b(?:no|not|never|without|except|excluding|instead of|other than|rather than|"
    r"anything but|but not)|n['\u2019]t)\s+(?:[\w-]+\s+)?$",
    re.IGNORECASE,
)


def refused_in_task(value: str, task: str | None) -> bool:
    """Whether the task writes ``value`` (as words of its own, any case), and every time
    within two words after a word that refuses it: the task says it does not want it."""
    from .words import find_word

    if not task or len(value.strip()) < 2:
        return False
    text, wanted = task[:4000].casefold(), value.strip().casefold()
    at = find_word(text, wanted)
    if at < 0:
        return False
    while at >= 0:
        if not _REFUSING.search(text[max(0, at - 40) : at]):
            return False
        at = find_word(text, wanted, at + 1)
    return True
