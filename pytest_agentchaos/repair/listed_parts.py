"""A part of a text value that the tool's error quotes and refuses, beside the values the
tool accepts in its place: a search's qualifier (GitHub's ``'opened' is not a valid value
for the 'state' qualifier (open, closed)``), a filter's attribute (Meilisearch's ``Attribute
`genre` is not filterable. Available filterable attributes are: `genres, rating, year```).

The part is replaced, where the value holds it once as a word of its own, by the one listed
value that is the same word inflected by English spelling (a plural, a past, an ``ing``): the
word the call meant, in the form the tool takes. Another word (``closed`` for ``shut``) is a
choice the error does not make: no repair.
"""

from __future__ import annotations

import re

__all__ = ["inflections", "listed_part"]

#: A part of the value the error quotes: one word or identifier, in quotes or backticks.
_QUOTED = re.compile(r"'([\w.:-]{1,60})'|\"([\w.:-]{1,60})\"|`([\w.:-]{1,60})`")
#: Where an error lists accepted values: in parentheses, or after a colon or "one of".
_LISTS = re.compile(r"\(([^()]{1,300})\)|(?::|\bone of:?)\s*([^.;()\n]{1,300})", re.IGNORECASE)
_ITEM = re.compile(r"[\w.:-]{1,60}")
#: Endings after which the plural / third person takes ``es``.
_SIBILANT = ("s", "x", "z", "ch", "sh")
#: A longer value or error is not read (hostile input; no query or message is this long).
_LONGEST = 2000


def listed_part(value: str, error: str) -> tuple[str, str, str] | None:
    """``(repaired value, part refused, value listed)`` when ``error`` quotes a part of
    ``value`` (a word of its own, once) and lists accepted values of which exactly one is that
    word inflected; else None."""
    if len(value) > _LONGEST or len(error) > _LONGEST:
        return None
    listed = _listed(error)
    if len(listed) < 2:
        return None
    for match in _QUOTED.finditer(error):
        part = match[1] or match[2] or match[3]
        if part in listed or part == value:
            continue
        places = _places(part, value)
        if len(places) != 1:
            continue
        meant = [item for item in listed if _inflected(part, item)]
        if len(meant) != 1:
            continue
        at = places[0]
        return value[:at] + meant[0] + value[at + len(part) :], part, meant[0]
    return None


def _listed(error: str) -> list[str]:
    """The values of the first list in ``error`` of two or more single words."""
    for match in _LISTS.finditer(error):
        text = (match[1] or match[2] or "").replace("`", "").replace("'", "").replace('"', "")
        # "open, closed, or merged", "open | closed | merged": separators, not items
        items = [i.strip() for i in re.split(r",|\||\bor\b|\band\b", text) if i.strip()]
        if len(items) >= 2 and all(_ITEM.fullmatch(i) for i in items):
            return items
    return []


def _places(part: str, value: str) -> list[int]:
    """Where ``part`` stands in ``value`` as a word of its own (no word character or ``-``
    joined to it on either side)."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(part)}(?![\w-])")
    return [m.start() for m in pattern.finditer(value)]


def _inflected(part: str, item: str) -> bool:
    """Whether ``part`` and ``item`` are one word, one of them a regular English inflection of
    the other (``genre``/``genres``, ``opened``/``open``, ``category``/``categories``,
    ``tag``/``tagged``); at least three letters each."""
    a, b = part.lower(), item.lower()
    if a == b or min(len(a), len(b)) < 3:
        return False
    return b in inflections(a) or a in inflections(b)


_VOWELS = frozenset("aeiou")


def inflections(word: str) -> frozenset[str]:
    """The regular inflections of an English word by its spelling rules: the plural / third
    person (``es`` after a sibilant, ``ies`` for a consonant's ``y``), the past and the
    ``ing`` form (a silent ``e`` dropped, a consonant's ``y`` to ``ied``, a final consonant
    doubled after one vowel: ``tag``/``tagged``, so ``star`` gives ``starred`` and never
    ``stared``, which is ``stare``'s). Where the doubling depends on stress (``open`` /
    ``opened``, ``commit`` / ``committed``: more than one vowel group) both spellings are
    kept. Irregular forms are not guessed."""
    w = word.lower()
    forms: set[str] = set()
    consonant_y = len(w) > 1 and w.endswith("y") and w[-2] not in _VOWELS
    if w.endswith(_SIBILANT):
        forms.add(w + "es")
    elif consonant_y:
        forms.add(w[:-1] + "ies")
    else:
        forms.add(w + "s")
    if consonant_y:
        forms |= {w[:-1] + "ied", w + "ing"}
    elif w.endswith("e"):
        forms.add(w + "d")
        forms.add(w + "ing" if w.endswith(("ee", "ye", "oe")) else w[:-1] + "ing")
    else:
        cvc = (
            len(w) >= 3
            and w[-1] not in _VOWELS
            and w[-1] not in "wxy"
            and w[-2] in _VOWELS
            and w[-3] not in _VOWELS
        )
        doubled = {w + w[-1] + "ed", w + w[-1] + "ing"}
        plain = {w + "ed", w + "ing"}
        if not cvc:
            forms |= plain
        elif len(re.findall(r"[aeiouy]+", w)) == 1:  # one syllable: the consonant doubles
            forms |= doubled
        else:
            forms |= plain | doubled
    return frozenset(forms)
