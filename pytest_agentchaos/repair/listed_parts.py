"""A part of a text value that the tool's error quotes and refuses, beside the values the
tool accepts in its place: a search's qualifier (GitHub's ``'opened' is not a valid value
for the 'state' qualifier (open, closed)``), a filter's attribute (Meilisearch's ``Attribute
`genre` is not filterable. Available filterable attributes are: `genres, rating, year```).

The part is replaced, where the value holds it once as a word of its own, by the one listed
value that is the same word inflected (a plural's ``s``, a past's ``ed``, an ``ing``): the
word the call meant, in the form the tool takes. Another word (``closed`` for ``shut``) is a
choice the error does not make: no repair.
"""

from __future__ import annotations

import re

__all__ = ["listed_part"]

#: A part of the value the error quotes: one word or identifier, in quotes or backticks.
_QUOTED = re.compile(r"'([\w.:-]{1,60})'|\"([\w.:-]{1,60})\"|`([\w.:-]{1,60})`")
#: Where an error lists accepted values: in parentheses, or after a colon or "one of".
_LISTS = re.compile(r"\(([^()]{1,300})\)|(?::|\bone of:?)\s*([^.;()\n]{1,300})", re.IGNORECASE)
_ITEM = re.compile(r"[\w.:-]{1,60}")
#: An inflection's ending -> the endings the bare word must have for it (English spelling:
#: ``es`` after a sibilant, ``d`` after an ``e``, ``s`` after anything else).
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
    """Whether ``part`` and ``item`` are one word, one of them with an inflection's ending
    the other lacks, spelled as English spells it: ``genre``/``genres``, ``open``/``opened``,
    ``create``/``created``, ``category``/``categories`` (``y`` -> ``ies``), ``tag``/``tagged``
    (a one-syllable word ending consonant-vowel-consonant doubles its last letter: ``star``
    -> ``starred``, never ``stared``); at least three letters."""
    a, b = part.lower(), item.lower()
    if a == b or min(len(a), len(b)) < 3:
        return False
    short, long = (a, b) if len(a) < len(b) else (b, a)
    if short.endswith("y") and len(short) > 3 and short[-2] not in _VOWELS:
        return long in (short[:-1] + "ies", short[:-1] + "ied", short + "ing")
    if not long.startswith(short):
        return False
    ending = long[len(short) :]
    if ending == "es":
        return short.endswith(_SIBILANT)
    if ending == "s":
        return not short.endswith(_SIBILANT)
    if ending == "d":
        return short.endswith("e")  # create/created, not car/card
    if _doubles(short):  # tag -> tagged, star -> starred: the doubled letter, then the ending
        return ending in (short[-1] + "ed", short[-1] + "ing")
    return ending in ("ed", "ing") and not short.endswith("e")


_VOWELS = "aeiou"


def _doubles(word: str) -> bool:
    """Whether ``word`` doubles its last letter before ``ed`` / ``ing``: one syllable (one
    group of vowels) ending consonant-vowel-consonant, the last not ``w``, ``x`` or ``y``."""
    groups = re.findall(f"[{_VOWELS}]+", word)
    return (
        len(groups) == 1
        and len(word) >= 3
        and word[-1] not in _VOWELS + "wxy"
        and word[-2] in _VOWELS
        and word[-3] not in _VOWELS
    )
