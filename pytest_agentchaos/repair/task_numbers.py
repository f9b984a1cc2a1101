"""A number the task gives for a field it names ("3 nights", "PR 17", "qty: 2", "#17"), and the
words that make such a number something else: a rate, an amount in a currency, a measure in
another unit than the field's, a label after the singular of a plural field."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .fixes import Fix

__all__ = ["NUMBER", "NUMBER_WORDS", "measured_otherwise", "name_words", "number_near"]

NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "a single": 1, "single": 1,
}  # fmt: skip
NUMBER = r"(\d+(?:\.\d+)?|" + "|".join(NUMBER_WORDS) + ")"


def name_words(name: str) -> set[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    words = {w.lower() for w in re.split(r"[_\W]+", spaced) if len(w) > 1}
    words |= {short for w in words for short in _SHORT.get(w, ())}
    return words | {w.rstrip("s") for w in words} | {w + "s" for w in words}


def measured_otherwise(number: Any, task: str, schema: Mapping[str, Any], name: str) -> bool:
    """Whether the task writes ``number`` in another currency or unit than the field's
    description (or name) states: "max 90 pounds" for a price in euros is no 90 euros."""
    from .audit import _other_currency, described_currency
    from .effective import rules_for
    from .money import currency_codes
    from .units import unit_name

    wanted = described_currency(str(schema.get("description", "")))
    unit = rules_for(schema, name).unit
    if wanted is None and unit is None:
        return False
    digits = re.escape(str(number))
    for match in re.finditer(
        rf"(?<![\w.])(?P<pre>[^\w\s]?)\s?{digits}(?![\w.]?\d)\s?(?P<post>[^\W\d]+|[^\w\s])?",
        task[:4000],
    ):
        marks = [m for m in (match["pre"], match["post"]) if m]
        for mark in marks:
            if wanted is not None and (currency_codes(mark) or _is_sign(mark)):
                sign = _sign_name(mark)
                if _other_currency(sign or mark.lower(), wanted):
                    return True
            if unit is not None and len(mark) > 0:
                written = unit_name(mark.rstrip("."))
                if written is not None and written != unit:
                    return True
    return False


def _is_sign(mark: str) -> bool:
    import unicodedata

    return len(mark) == 1 and unicodedata.category(mark) == "Sc"


def _sign_name(mark: str) -> str | None:
    from .audit import currency_of

    return currency_of(f"{mark}1") if _is_sign(mark) else None


def _name_words_as_given(name: str) -> set[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return {w.lower() for w in re.split(r"[_\W]+", spaced) if len(w) > 1}


#: Words that make a number a rate ("150 euros a night", "3 per day"): a closed class.
_RATE = frozenset({"a", "an", "per", "each", "every"})


def _measures_another(between: list[str]) -> bool:
    """Whether words between a number and a field's name say the number measures something
    else: a rate's article, a currency, a unit."""
    from .money import currency_codes
    from .units import unit_of

    for word in between:
        word = word.lower()
        if word in _RATE or currency_codes(word) or (len(word) > 2 and unit_of(word) is not None):
            return True
    return False


#: How a task writes some words of parameter names ("PR 17" for a pull request's number).
_SHORT = {"pull": ("pr",), "request": ("req",), "quantity": ("qty",), "number": ("no",)}


def number_near(
    words: set[str],
    task: str,
    integer: bool,
    name: str = "",
    held: frozenset[str] | set[str] = frozenset(),
) -> Fix | None:
    if not words:
        return None
    noun = "(?:" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + ")"
    before = re.compile(
        rf"\b(?P<n>{NUMBER})(?:\s+|-)(?P<between>(?:[a-z]+\s+){{0,2}}?)(?P<noun>{noun})\b",
        re.IGNORECASE,
    )
    after = re.compile(
        rf"\b(?P<noun>{noun})\s*(?P<tie>[:=]|of|is|are|count)?\s*(?P<n>{NUMBER})\b",
        re.IGNORECASE,
    )
    plural = {w for w in _name_words_as_given(name) if len(w) > 3 and w.endswith("s")}
    values = set()
    for pattern in (before, after):
        for match in pattern.finditer(task):
            parts = match.groupdict()
            if parts.get("between") and _measures_another(parts["between"].split()):
                continue  # "150 euros a night": the number is an amount of euros
            if pattern is after and not parts.get("tie") and parts["noun"].lower() + "s" in plural:
                continue  # "room 12" is a room's label, not a count of rooms
            word = parts["n"].lower()
            if word.split()[-1] in held:
                continue  # "a single room" where "single" is the room type: one token, one field
            number = float(NUMBER_WORDS.get(word, word))
            values.add(int(number) if number.is_integer() else number)
    if not values and words & {"number", "id", "no"}:  # "#17": the one number so marked
        values = {int(m.group(1)) for m in re.finditer(r"(?<![\w&])#\s?(\d+)\b", task)}
    if len(values) != 1:
        return None
    value = values.pop()
    if integer and not float(value).is_integer():
        return None
    return Fix(
        "infer_missing_param", value, 0.9, f"the task gives {value} next to the field's name"
    )
