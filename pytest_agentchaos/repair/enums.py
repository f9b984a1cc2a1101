"""Enum values (the seed's ENUM_VALUE_CORRECTION): what the model wrote matched to one of the
values the schema allows, or declined when it could be more than one.

In order, each step taken only when exactly one value answers it:
1. the same value up to case, whitespace and separators (``"Business"``, ``"premium-economy"``
   for ``premium_economy``);
2. a synonym from the policy's table (``{"cabin_class": {"coach": "economy"}}`` or
   ``{"coach": "economy"}``);
3. one typo away from exactly one value (a letter missing, added, replaced, or two
   neighbours swapped; one per eight letters): ``"frist"``, ``"prmeium economy"`` (not
   ``economy``);
4. the value named as a whole phrase inside what was written (``"business class"``); a longer
   value that contains a shorter one wins (``"premium economy seat"``);
5. a fuzzy match (rapidfuzz) at or above the policy's score, clear of the runner-up;
6. the one allowed value the task names beside a value that is the task's own phrase
   (:mod:`.task_enums`).
Otherwise it declines, naming the candidates.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import permutations
from typing import Any

from .fixes import Context, Decline, Fix, shown

__all__ = ["match_enum", "normal"]

_SEPARATORS = re.compile(r"[\s_\-./]+")
_NEGATED = re.compile(
    r"(?:^|\s)(?:not|no|never|without|except|anything but|other than|non|avoid|exclude)(?:\s|$)"
)
#: How far ahead of the runner-up a fuzzy match must be to be taken.
_FUZZY_MARGIN = 8.0


def normal(text: str) -> str:
    """``text`` lowercased with runs of whitespace and separators as one space."""
    return _SEPARATORS.sub(" ", text.casefold()).strip()


def match_enum(value: Any, allowed: Sequence[Any], ctx: Context) -> Fix | Decline | None:
    """The allowed value ``value`` stands for, or why it cannot be told; None when ``value``
    is already allowed. A value read out of another spelling is declined when the task names
    other allowed values and not it: the task asked for one of those."""
    found = _match_enum(value, allowed, ctx)
    if not isinstance(found, Fix) or not isinstance(found.value, str) or not ctx.task:
        return found
    if isinstance(value, str) and normal(value) == normal(found.value):
        return found  # the value sent, written differently: the model's own choice
    from .task_enums import members_named, words_of

    named = members_named([a for a in allowed if isinstance(a, str)], ctx.task)
    mine = words_of(found.value)
    # a value named that shares a word with the one read is part of it, not another choice
    if named and not any(mine & words_of(other) for other in named):
        return Decline(
            "enum_value_correction",
            f"{shown(value)} reads as {found.value!r}, but the task names {_listed(named)}",
        )
    return found


def _match_enum(value: Any, allowed: Sequence[Any], ctx: Context) -> Fix | Decline | None:
    if value in allowed and not isinstance(value, bool):
        return None
    choices = [a for a in allowed if isinstance(a, str)]
    if isinstance(value, bool) and choices:
        return _polarity(value, choices, ctx)
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return Decline("enum_value_correction", f"{shown(value)} is none of {_listed(allowed)}")
    text = str(value)
    wanted = normal(text)
    numeric = [a for a in allowed if isinstance(a, (int, float)) and not isinstance(a, bool)]
    for number in numeric:  # "2" for the integer 2 is a type conversion's, but cheap here
        if wanted == normal(str(number)):
            return Fix(
                "enum_value_correction", number, 0.95, f"{shown(text)} is the value {number}"
            )
    same = [a for a in choices if normal(a) == wanted]
    if len(same) == 1:
        return _fix(same[0], 0.97, f"{shown(text)} is {same[0]!r} written differently")
    synonym = _synonym(wanted, choices, ctx)
    if synonym is not None:
        return _fix(synonym, 0.95, f"{shown(text)} is a synonym of {synonym!r}")
    polar = _bare_polarity(wanted, choices)
    if polar is not None:
        return _fix(polar, 0.9, f"{shown(text)} for a field whose {wanted!r} is {polar!r}", "cue")
    if _NEGATED.search(wanted):  # "not business": what is not wanted, not what is
        return Decline(
            "enum_value_correction", f"{shown(text)} says what is not wanted, not what is"
        )
    near = _near_miss(wanted, choices)
    if isinstance(near, Decline):
        return near
    if near is not None:
        return _fix(near, 0.9, f"{shown(text)} is {near!r} with a typo", "similarity")
    common = _common_synonym(wanted, choices)
    if common is not None:
        return _fix(common, 0.9, f"{shown(text)} is what {common!r} is commonly called")
    reordered = _reordered(wanted, choices)
    if reordered is not None:
        return _fix(reordered, 0.9, f"{shown(text)} is {reordered!r}: the same words, joined in "
                    "another order")  # fmt: skip
    inside = _named_inside(wanted, choices)
    if len(inside) == 1:
        extra = _modifiers(wanted, inside[0], ctx)
        if extra:
            return Decline(
                "enum_value_correction",
                f"{shown(text)} holds {inside[0]!r}, but {' '.join(extra)!r} modifies it: "
                "that is another value than the one allowed",
            )
        return _fix(inside[0], 0.9, f"{shown(text)} names {inside[0]!r}", "containment")
    if len(inside) > 1:
        return Decline(
            "enum_value_correction", f"{shown(text)} names several values: {_listed(inside)}"
        )
    initials = [
        c
        for c in choices
        if len(wanted.split()) >= 2
        and normal(c).replace(" ", "") == "".join(w[0] for w in wanted.split())
    ]
    if len(initials) == 1:
        why = f"{shown(text)} has the initials {initials[0]!r}"
        return _fix(initials[0], 0.9, why, "similarity")
    measured = _same_quantity(text, choices)
    if measured is not None:
        return _fix(measured, 0.9, f"{shown(text)} is the same amount as {measured!r}")
    base = inflected(wanted, choices)
    if base is not None:
        return _fix(base, 0.9, f"{shown(text)} is an inflection of {base!r}")
    part = _part_of(wanted, choices)
    if part is not None:
        return _fix(part, 0.85, f"{shown(text)} is part of {part!r} and of no other value")
    short = _shortened(wanted, choices)
    if short is not None:
        return _fix(short, 0.85, f"{shown(text)} and {short!r} are one word, one of them cut "
                    "short")  # fmt: skip
    headed = _cjk_head(wanted, choices)
    if headed is not None:
        return _fix(headed, 0.85, f"{shown(text)} is the head of {headed!r}, the one value "
                    "that ends in it")  # fmt: skip
    fuzzy = _fuzzy(text, wanted, choices, ctx, allowed)
    if isinstance(fuzzy, Decline):
        from .task_enums import named_by_task

        told = named_by_task(text, choices, ctx.task)
        if told is not None:
            return _fix(told, 0.85, f"{shown(text)} is the task's own phrase, and the task "
                        f"names {told!r} in it or beside it")  # fmt: skip
    return fuzzy


def _bare_polarity(wanted: str, choices: list[str]) -> str | None:
    """The one allowed value of the polarity a bare yes/no word has (``no`` where the values
    are ``create_prorations, none, always_invoice``)."""
    for words in (_NEGATIVE, _POSITIVE):
        if wanted in words:
            same = [c for c in choices if normal(c) in words]
            return same[0] if len(same) == 1 else None
    return None


def _reordered(wanted: str, choices: list[str]) -> str | None:
    """The one value written with the same words joined in another order (``tar.gz`` for
    ``gztar``): no word added, none left out."""
    words = wanted.split()
    if not 2 <= len(words) <= 4:
        return None
    joined = {"".join(p) for p in permutations(words)}
    found = [c for c in choices if normal(c).replace(" ", "") in joined]
    return found[0] if len(found) == 1 else None


def _shortened(wanted: str, choices: list[str]) -> str | None:
    """The one value that is ``wanted`` cut short, or that ``wanted`` cuts short, as one word
    (``asc`` for ``ascending``, ``fraud`` for ``fraudulent``, ``二等`` for ``二等座``): what is
    cut is the end of the same word, at least half of it (a short ending such as ``-ish``
    makes another word: ``openish`` is no ``open``), not a word of its own (``extra large`` is
    no ``large``)."""
    if " " in wanted:
        return None
    found = []
    for choice in choices:
        other = normal(choice)
        if " " in other or other == wanted:
            continue
        short, long = sorted((wanted, other), key=len)
        if not long.startswith(short) or not long[len(short)].isalnum():
            continue  # "tolls|highways" is two values, not "tolls" written out
        if all(_ideograph(c) for c in short):  # each a morpheme: two are a word
            if len(short) >= 2:
                found.append(choice)
        elif len(short) >= 3 and 2 * len(short) <= len(long):
            found.append(choice)
    return found[0] if len(found) == 1 else None


def _cjk_head(wanted: str, choices: list[str]) -> str | None:
    """The one value written in ideographs that ends in ``wanted`` (two ideographs at least):
    a Chinese compound puts its head last, and the words before it qualify it (``专票`` for
    ``数电专票``, where ``数电普票`` is the other kind)."""
    if len(wanted) < 2 or not all(_ideograph(c) for c in wanted):
        return None
    found = [
        c for c in choices
        if len(c) > len(wanted) and c.endswith(wanted) and all(_ideograph(x) for x in c)
    ]  # fmt: skip
    return found[0] if len(found) == 1 else None


def _ideograph(char: str) -> bool:
    """Whether a character is a CJK ideograph (a morpheme of its own: two are a word)."""
    return unicodedata.name(char, "").startswith("CJK UNIFIED IDEOGRAPH")


def _common_synonym(wanted: str, choices: list[str]) -> str | None:
    """The one allowed value ``wanted`` abbreviates, by standard data or by the plain rule of
    abbreviation: a unit's CLDR names (``°F``, ``deg. F``, ``degrees Fahrenheit`` for
    ``fahrenheit``; ``km`` for ``kilometers``) or the initial of exactly one value of words
    (``F`` for ``fahrenheit`` among ``celsius, fahrenheit``; ``L`` for ``large``)."""
    meant = [c for c in choices if wanted in _unit_names(normal(c))]
    if len(meant) == 1:
        return meant[0]
    if len(wanted) == 1 and wanted.isalpha():
        words = [normal(c) for c in choices]
        if all(len(w) >= 3 and w.isalpha() for w in words):
            initial = [c for c, w in zip(choices, words, strict=True) if w[0] == wanted]
            return initial[0] if len(initial) == 1 else None
    return None


@lru_cache(maxsize=512)
def _unit_names(value: str) -> frozenset[str]:
    """The English CLDR names (long, short, narrow; via Babel, the ``repair`` extra) of the
    one unit whose long name ends in ``value`` or is it; empty without Babel or such a unit."""
    try:
        from babel import Locale
    except ImportError:
        return frozenset()
    names = Locale("en")._data["unit_display_names"]
    exact, ending = [], []
    for unit in names:
        shown = {n: normal(str(names[unit].get(n, ""))) for n in ("long", "short", "narrow")}
        if shown["long"] in (value, value + "s"):
            exact.append(shown)
        elif shown["long"].endswith(" " + value):
            ending.append(shown)
    found = exact or ending
    if len(found) != 1:
        return frozenset()
    return frozenset(n for n in found[0].values() if n and n != value)


def _stems(text: str) -> str:
    """``text``'s words in the singular: "toll roads" -> "toll road"."""
    return " ".join(_stem(w) for w in text.split())


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _part_of(wanted: str, choices: list[str]) -> str | None:
    """The one value whose words hold every word written ("Delta" for "Delta Airlines",
    "customer requested" for "requested_by_customer", "hearts" for "reactions-heart")."""
    words = {_stem(w) for w in wanted.split()}
    if not words or all(len(w) < 3 for w in words):
        return None
    holding = [c for c in choices if words <= {_stem(w) for w in normal(c).split()}]
    return holding[0] if len(holding) == 1 else None


#: Words that say no / off: one allowed value of this polarity is what ``false`` means.
_NEGATIVE = frozenset({"no", "off", "false", "none", "never", "disabled", "disable", "n"})
_POSITIVE = frozenset({"yes", "on", "true", "enabled", "enable", "y", "always"})


def _polarity(value: bool, choices: list[str], ctx: Context) -> Fix | Decline:
    """A yes/no sent where the enum has words: the one value of that polarity (``False`` for
    ``off`` or ``no``); for ``True`` among several non-negative values, the one the task
    names (``"every week"`` for ``weekly``); else declined."""
    negative = [c for c in choices if normal(c) in _NEGATIVE]
    positive = [c for c in choices if normal(c) in _POSITIVE]
    if not value and len(negative) == 1:
        return _fix(negative[0], 0.9, f"{value!r} for a field whose 'no' is {negative[0]!r}")
    if value and len(positive) == 1:
        return _fix(positive[0], 0.9, f"{value!r} for a field whose 'yes' is {positive[0]!r}")
    if value and negative and ctx.task:
        task = f" {' '.join(_stems(normal(ctx.task)).split())} "
        named = [
            c for c in choices if c not in negative
            and any(f" {_stem(w)} " in task for w in {normal(c), _base(normal(c))} if w)
        ]  # fmt: skip
        if len(named) == 1:
            return _fix(named[0], 0.85, f"{value!r}, and the task names {named[0]!r}")
    return Decline("enum_value_correction", f"{value!r} as text would be a guess")


def _base(word: str) -> str:
    """A word without an inflectional ending (``weekly`` -> ``week``)."""
    for suffix in sorted(_SUFFIXES, key=len, reverse=True):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _same_quantity(text: str, choices: list[str]) -> str | None:
    """The one allowed value that is the same amount of the same unit (``24 hours`` and
    ``24h``), read by the units library; None without it or where none is."""
    try:
        from .numbers import quantity
    except ImportError:  # pragma: no cover
        return None
    mine = quantity(text)
    if mine is None:
        return None
    same = []
    for choice in choices:
        other = quantity(choice)
        try:
            if other is not None and abs((other - mine).to_base_units().magnitude) < 1e-9:
                same.append(choice)
        except Exception:
            continue
    return same[0] if len(same) == 1 else None


def _fix(value: Any, confidence: float, reason: str, evidence: str = "") -> Fix:
    return Fix("enum_value_correction", value, confidence, reason, evidence)


def _synonym(wanted: str, choices: list[str], ctx: Context) -> str | None:
    tables: list[Mapping[str, Any]] = []
    by_field = ctx.synonyms.get(ctx.name) if ctx.name else None
    if isinstance(by_field, Mapping):
        tables.append(by_field)
    tables.append(ctx.synonyms)
    for table in tables:
        for word, target in table.items():
            if isinstance(target, str) and normal(str(word)) == wanted and target in choices:
                return target
            listed = isinstance(target, (list, tuple)) and word in choices  # value -> [words]
            if listed and any(normal(str(w)) == wanted for w in target):
                return str(word)
    return None


def _near_miss(wanted: str, choices: list[str]) -> str | Decline | None:
    """The one value a typo away from ``wanted`` (a letter missing, added, replaced, or two
    neighbours swapped: "frist", "prmeium economy"), counting one typo per eight letters;
    a decline when two values are as near."""
    if len(wanted) < 4:
        return None
    from rapidfuzz.distance import OSA  # imported on first use

    allowed = max(1, len(wanted) // 8)
    near = [(OSA.distance(wanted, normal(c)), c) for c in choices if same_digits(wanted, c)]
    near = [(d, c) for d, c in near if 0 < d <= allowed]
    if not near:
        return None
    best = min(d for d, _ in near)
    closest = [c for d, c in near if d == best]
    if not all(slip_in_a_word(wanted, c) for c in closest):
        shown_all = " or ".join(repr(c) for c in closest[:2])
        return Decline(
            "enum_value_correction",
            f"{shown(wanted)} could be {shown_all}, but not by a slip: the short word that "
            "differs tells the options apart",
        )
    if len(closest) > 1:
        return Decline(
            "enum_value_correction",
            f"{shown(wanted)} could be {closest[0]!r} or {closest[1]!r}: a typo away from each",
        )
    return closest[0]


def same_digits(wanted: str, value: Any) -> bool:
    """Whether two writings hold the same digits in the same order: letters are misspelt,
    numbers are not (``EG-609`` is no typo of ``EG-600``, ``v2`` none of ``v3``), so a typo
    or a fuzzy match never changes a digit."""
    return re.findall(r"\d", wanted) == re.findall(r"\d", normal(str(value)))


def slip_in_a_word(wanted: str, value: Any) -> bool:
    """Whether a misspelling of ``value`` could be ``wanted``: word for word (the same number
    of words), each word that differs is of four letters or more in ``value``. A slip in a
    word of one to three letters (``duze ba`` for ``duze na``) makes another word, often
    the very part that tells two allowed values apart."""
    mine, theirs = wanted.split(), normal(str(value)).split()
    if len(mine) != len(theirs):
        return True
    return all(a == b or len(b) >= 4 for a, b in zip(mine, theirs, strict=True))


def _named_inside(wanted: str, choices: list[str]) -> list[str]:
    padded = f" {_stems(wanted)} "
    named = [c for c in choices if normal(c) and f" {_stems(normal(c))} " in padded]
    # a longer value that contains a shorter one is the one meant ("premium economy")
    return [
        c for c in named if not any(o != c and f" {normal(c)} " in f" {normal(o)} " for o in named)
    ]


#: Function words: what a value written in words may hold besides the value without
#: changing it (articles, determiners, prepositions, politeness), a closed class of English.
FUNCTION_WORDS = frozenset(
    {"a", "an", "the", "one", "some", "any", "this", "that", "these", "those", "of", "for",
     "in", "on", "at", "to", "with", "by", "as", "per", "please", "option", "value", "setting",
     "mode", "type", "kind", "level", "just", "only"}
)  # fmt: skip


def _modifiers(wanted: str, value: str, ctx: Context) -> list[str]:
    """The words written before ``value`` that modify it: English puts a modifier before its
    head ("extra large", "deluxe double"), while words after the value name what it is a
    value of ("business class", "double room"). Function words and the field's own words are
    filler wherever they stand."""
    words = wanted.split()
    own = [_stem(w) for w in _stems(normal(value)).split()]
    stems = [_stem(w) for w in words]
    start = next(
        (i for i in range(len(stems) - len(own) + 1) if stems[i : i + len(own)] == own), None
    )
    if start is None:
        return []
    field_words = set(normal(ctx.name).split()) | set(normal(ctx.description[:500]).split())
    before = [
        w for w in words[:start]
        if w not in FUNCTION_WORDS and w not in field_words and _stem(w) not in field_words
    ]  # fmt: skip
    # after the value, a word names what it is a value of ("business class", "toll roads");
    # a token that is no word ("gz" of "tar.gz", "1" of "v2.1") makes it another value
    after = [w for w in words[start + len(own) :] if not w.isalpha() or len(w) < 3]
    return before + after


def _affixed(wanted: str, value: str) -> bool:
    """Whether ``wanted`` is ``value`` with a prefix or suffix of two letters or more
    ("biweekly" for "weekly"): another word, not a misspelling of it."""
    plain, other = wanted.replace(" ", ""), normal(value).replace(" ", "")
    if len(other) < 3 or other not in plain or len(plain) - len(other) < 2:
        return False
    return not (plain.startswith(other) and plain[len(other) :] in _SUFFIXES)


#: English inflectional and derivational endings that keep a word's meaning for a value
#: ("weekly" for "week", "locally" for "local"); a prefix ("bi-weekly") changes it.
_SUFFIXES = frozenset({"s", "es", "ed", "d", "ing", "ly", "ally", "er", "al", "ic"})


def inflected(wanted: str, choices: list[str]) -> str | None:
    """The one value ``wanted`` is an inflection of (``weekly`` -> ``week``)."""
    found = [
        c for c in choices
        if len(normal(c)) >= 3 and wanted.startswith(normal(c))
        and wanted[len(normal(c)) :] in _SUFFIXES
        or len(wanted) >= 3 and normal(c).startswith(wanted)
        and normal(c)[len(wanted) :] in _SUFFIXES
    ]  # fmt: skip
    return found[0] if len(found) == 1 else None


def _fuzzy(
    text: str, wanted: str, choices: list[str], ctx: Context, allowed: Sequence[Any]
) -> Fix | Decline:
    affixed = [c for c in choices if _affixed(wanted, c)]
    if affixed:
        return Decline(
            "enum_value_correction",
            f"{shown(text)} is {affixed[0]!r} with more to it: another word, not a misspelling",
        )
    if choices and wanted:
        from rapidfuzz import fuzz, process  # imported on first use

        scored = process.extract(
            wanted,
            {c: normal(c) for c in choices if same_digits(wanted, c) and slip_in_a_word(wanted, c)},
            scorer=fuzz.ratio,
            limit=2,
        )
        best_score = scored[0][1] if scored else 0.0
        runner_up = scored[1][1] if len(scored) > 1 else 0.0
        if best_score >= ctx.fuzzy_score:
            best = scored[0][2]
            if best_score - runner_up >= _FUZZY_MARGIN:
                confidence = round(min(0.95, best_score / 100), 3)
                return _fix(best, confidence, f"{shown(text)} is a misspelling of {best!r}")
            second = scored[1][2]
            return Decline(
                "enum_value_correction", f"{shown(text)} could be {best!r} or {second!r}"
            )
    return Decline("enum_value_correction", f"{shown(text)} is none of {_listed(allowed)}")


def _listed(values: Sequence[Any]) -> str:
    shown = ", ".join(repr(v) for v in list(values)[:8])
    return shown + (", ..." if len(values) > 8 else "")
