"""Amounts the task states in another currency than the field holding them.

A call can be valid by its schema and still ask for something else than the user did: the
task says "$19.99" and the call sends ``1999`` to ``price_eur_cents``; it says "800 GBP" and
the call sends ``amount: 800, currency: "EUR"``. Sent as it is, the tool would move euros.
Converting is for a tool the user supplies, so such a call is declined, naming why.

A field's currency is read from evidence only, in this order: a currency code among its
name's words (``price_eur_cents``), the currency field beside it sharing a word of its name
(``sell_amount`` and ``sell_currency``), the call's one currency field, its description
("in euros"). The
task's amounts are read with their marks by CLDR's tables (:mod:`.money`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from .audit import described_currency
from .codes import entity_of
from .money import currency_codes, stated_amounts
from .words import name_tokens

__all__ = ["amount_in_other_currency", "measure_in_other_unit"]

#: Words of a name that say what kind of field it is, not whose amount it holds.
_GENERIC = frozenset({"amount", "currency", "code", "value", "total", "price", "ccy"})


@lru_cache(maxsize=512)
def _amounts(task: str) -> tuple[tuple[float, tuple[str, ...]], ...]:
    return tuple(stated_amounts(task))


def _codes_of(value: Any) -> set[str]:
    return set(currency_codes(value)) if isinstance(value, str) and value.strip() else set()


def _field_currency(
    key: str, schema: Mapping[str, Any], args: Mapping[str, Any], held: dict[str, set[str]]
) -> set[str]:
    words = name_tokens(key)
    named = {
        w.upper()
        for w in words
        if len(w) == 3 and (found := entity_of(w.upper(), "currency")) and found.code == w.upper()
    }
    if named:
        return named
    mine = set(words) - _GENERIC
    beside = [codes for other, codes in held.items() if mine & (set(name_tokens(other)) - _GENERIC)]
    if len(beside) == 1:
        return beside[0]
    if len(held) == 1:  # the call's own currency says more than a description's wording
        return next(iter(held.values()))
    described = described_currency(str(schema.get("description", "")))
    return set(currency_codes(described)) if described else set()


def amount_in_other_currency(
    args: Mapping[str, Any], schema: Mapping[str, Any], task: str | None
) -> str | None:
    """Why the call is declined when a number it sends is an amount the task states only in
    another currency than its field's (see the module); None otherwise."""
    if not task or not isinstance(schema, Mapping):
        return None
    amounts = _amounts(task[:4000])
    if not amounts:
        return None
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return None
    held = {
        key: codes
        for key, value in args.items()
        if "currency" in name_tokens(key) and (codes := _codes_of(value))
    }
    for key, value in args.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        sub = properties.get(key)
        wanted = _field_currency(key, sub if isinstance(sub, Mapping) else {}, args, held)
        if not wanted:
            continue
        minor = bool({"cents", "cent", "minor"} & set(name_tokens(key)))
        stated = [
            codes
            for number, codes in amounts
            if number == value or (minor and round(number * 100) == value)
        ]
        if stated and not any(set(codes) & wanted for codes in stated):
            other = "/".join(sorted(stated[0])[:3])
            return (
                f"{key}: the task states {value if not minor else value / 100:g} in {other}, "
                f"and the field holds {'/'.join(sorted(wanted))}: converting it is for a tool "
                "the user supplies"
            )
    return None


_MEASURED = re.compile(r"(?<![\w.])(?P<n>\d+(?:\.\d+)?)\s?(?P<u>[^\W\d_]{1,20})")


def measure_in_other_unit(
    args: Mapping[str, Any], schema: Mapping[str, Any], task: str | None
) -> str | None:
    """Why the call is declined when a number it sends is a measure the task states only in
    another unit than its field's (``delay_seconds: 5`` for "5 minutes"); None otherwise. The
    field's unit is its name's or its description's (:func:`.effective.rules_for`)."""
    from .effective import rules_for
    from .units import unit_name

    if not task or not isinstance(schema, Mapping):
        return None
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return None
    measures = [(float(m["n"]), m["u"]) for m in _MEASURED.finditer(task[:4000])]
    if not measures:
        return None
    for key, value in args.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        sub = properties.get(key)
        unit = rules_for(sub, key).unit if isinstance(sub, Mapping) else None
        if unit is None or _out_of_bounds(value, sub):
            continue  # out of its bounds: the range repair reads the task's quantity then
        written = [unit_name(word) for number, word in measures if number == value]
        written = [w for w in written if w is not None]
        if written and unit not in written:
            return (
                f"{key}: the task states {value:g} in {written[0]}s, and the field is in "
                f"{unit}s: converting it is for a tool the user supplies"
            )
    return None


def _out_of_bounds(value: float, schema: Any) -> bool:
    """Whether ``value`` breaks the bounds ``schema`` (or its one non-null branch) states."""
    from .spec import nullable_branch

    if not isinstance(schema, Mapping):
        return False
    schema = nullable_branch(schema) or schema
    low, high = schema.get("minimum"), schema.get("maximum")
    below = isinstance(low, (int, float)) and value < low
    return bool(below or (isinstance(high, (int, float)) and value > high))
