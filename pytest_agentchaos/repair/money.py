"""Amounts of money as people write them: a number with a currency's sign or ISO 4217 code
before or after it (``$25``, ``CHF 250``, ``12,50 €``), read with CLDR's tables
(:mod:`.codes`): which currencies the mark may stand for, and how many digits their minor
unit has (so ``$19.99`` is 1999 cents, and ``¥500`` no different in yen's smallest unit)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .codes import entity_of, minor_digits, sign_currencies

__all__ = ["Money", "currency_codes", "minor_scale", "read_money", "stated_amounts"]

#: A mark, then a number, or a number, then a mark: the mark is what is not digits or spaces.
_MARKED = re.compile(
    r"(?P<pre>[^\d\s.,+-]{1,4})\s*(?P<a>[+-]?\d[\d.,]*)|(?P<b>[+-]?\d[\d.,]*)\s*(?P<post>[^\d\s.,+-]{1,4})"
)


@dataclass(frozen=True)
class Money:
    """A number written with a currency mark: the number as written, the mark, and the ISO
    codes the mark may stand for (one for ``€`` or ``CHF``, several for ``$``)."""

    number: str
    mark: str
    currencies: tuple[str, ...]


def _currencies(mark: str) -> tuple[str, ...]:
    found = entity_of(mark, "currency")
    if found is not None and found.written_as in ("code", "sign"):
        return (found.code,) if found.written_as == "code" else sign_currencies(mark)
    return sign_currencies(mark) or _names().get(mark.lower(), ())


@lru_cache(maxsize=1)
def _names() -> dict[str, tuple[str, ...]]:
    """A currency's English name as a task writes it after a number, singular or plural, whole
    or its last word (``euros``, ``US dollars``, ``dollars``, ``yen``) -> the ISO 4217 codes it
    may name, from CLDR (via Babel, the ``repair`` extra); empty without Babel."""
    try:
        from babel import Locale
    except ImportError:
        return {}
    data = Locale("en")._data
    found: dict[str, set[str]] = {}
    for code, plural in data["currency_names_plural"].items():
        for name in {*dict(plural).values(), data["currency_names"].get(code, "")}:
            name = str(name).lower()
            for key in {name, name.rsplit(" ", 1)[-1]}:
                if len(key) >= 3 and key.replace(" ", "").isalpha():
                    found.setdefault(key, set()).add(code)
    return {key: tuple(sorted(codes)) for key, codes in found.items()}


def currency_codes(currency: str) -> tuple[str, ...]:
    """The ISO 4217 codes a currency's code, sign or English name may stand for (``usd``,
    ``€``, ``euros``, ``dollar``: several for a name many currencies share); empty when CLDR
    (Babel) knows none."""
    mark = currency.strip()
    if re.fullmatch(r"[A-Za-z]{3}", mark) and entity_of(mark.upper(), "currency") is not None:
        return (mark.upper(),)
    found = _currencies(mark)
    if not found and mark.lower().endswith("s"):
        found = _names().get(mark.lower()[:-1], ())
    return tuple(c for c in found if c not in _NO_CURRENCY)


#: ISO 4217's codes for no currency at all (``XXX``, whose CLDR name is "Unknown Currency",
#: and the testing code): the word "currency" names none.
_NO_CURRENCY = frozenset({"XXX", "XTS"})


def read_money(text: str) -> Money | None:
    """The amount ``text`` is, as a whole, when it is a number with a currency's mark."""
    raw = text.strip()
    if len(raw) > 40:
        return None
    match = _MARKED.fullmatch(raw)
    if match is None:
        return None
    mark = (match["pre"] or match["post"]).strip()
    currencies = _currencies(mark)
    if not currencies:
        return None
    return Money(match["a"] or match["b"], mark, currencies)


def minor_scale(currencies: tuple[str, ...] | list[str]) -> int | None:
    """The digits of the minor unit all of ``currencies`` share (2 for USD and AUD alike),
    or None when they differ or none is known."""
    digits = {minor_digits(c) for c in currencies}
    if len(digits) != 1 or None in digits:
        return None
    return digits.pop()


#: A number with a mark before or after it, as a task writes it in running text.
_IN_TEXT = re.compile(
    r"(?<![\w.])(?P<pre>[^\w\s.,]{1,3}|[A-Z]{3})\s?(?P<a>\d[\d,]*(?:\.\d+)?)(?![\d.,]?\d)"
    r"|(?<![\w.])(?P<b>\d[\d,]*(?:\.\d+)?)\s?(?P<post>[^\w\s.,]{1,3}|[A-Z]{3}|[a-z]{3,12})(?!\w)"
)


def stated_amounts(task: str) -> list[tuple[float, tuple[str, ...]]]:
    """The amounts of money a task states with a currency's mark: ``(number, currencies)``."""
    found: list[tuple[float, tuple[str, ...]]] = []
    for match in _IN_TEXT.finditer(task[:4000]):
        mark = match["pre"] or match["post"]
        currencies = _currencies(mark)
        if not currencies:
            continue
        number = (match["a"] or match["b"]).replace(",", "")
        try:
            found.append((float(number), currencies))
        except ValueError:
            continue
    return found
