"""Negation scope, read plainly: whether a text says no to a word (a negation within a few
words before it), for a yes/no field sent a negative quantifier ("none") that could mean "no"
or "no value"."""

from __future__ import annotations

import re

from .words import name_tokens

__all__ = ["NONE_WORDS", "negated_in_task"]

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
