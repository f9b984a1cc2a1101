"""Countries, currencies and languages: one entity written in another of its standard forms.

A model often sends a country's name where the tool wants its ISO 3166-1 code (``Germany``
for ``DE``), a code where it wants the name, an alias the standard retired (``UK`` for
``GB``), a currency's name or sign for its ISO 4217 code (``euros``, ``€`` for ``EUR``), a
language's name for its ISO 639 code (``French`` for ``fr``). The tables are the Unicode
CLDR's, as Babel ships them (the ``repair`` extra; imported on first use): English names,
plural currency names, currency signs, and CLDR's aliases of codes. No table of our own.

Which table a field holds is read from its own words (name and description: a country, a
currency, a language); which form it wants from its schema (a pattern, an enum) and its
description (``English name``, ``ISO ... code``, the forms of its examples). A repair is made
only when the value is one entity of that table and exactly one other form of it fits; a
value the tool refused is not offered back in the form it was refused in, nor in another
form the schema and description do not name (the tool may not have the entity at all: a
refused ``JPY`` is no evidence the field takes ``Japanese Yen``). A currency sign
stands for a currency only when no other currency writes its sign as that one with a prefix
(``$`` is also ``A$``, ``CA$``...: no one currency; ``€`` is the euro's alone).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .fixes import Context, Decline, Fix, shown
from .spec import checker_for
from .words import name_tokens

__all__ = ["Entity", "entity_of", "minor_digits", "recode", "sign_currencies", "table_of"]

_STRATEGY = "standard_code_correction"
TABLES = ("country", "currency", "language")
#: The words that name each table in a field's name or description (the tables' own names,
#: the standards' numbers and the usual short forms of identifiers).
_TABLE_WORDS: dict[str, tuple[str, ...]] = {
    "country": ("country", "countries", "3166"),
    "currency": ("currency", "currencies", "4217"),
    "language": ("language", "languages", "lang", "639"),
}


@dataclass(frozen=True)
class Entity:
    """One entity of a table: its canonical code and English name, and the form a value
    was written in (``code``, ``name``, ``alias``, ``sign``)."""

    table: str
    code: str
    name: str
    written_as: str


@dataclass(frozen=True)
class _Table:
    codes: Mapping[str, str]  # canonical code -> English name
    by_name: Mapping[str, tuple[str, ...]]  # casefolded name -> codes
    aliases: Mapping[str, str]  # retired or three-letter code -> canonical code


@lru_cache(maxsize=4)
def _table(kind: str) -> _Table | None:
    """The CLDR table of ``kind`` (English), or None without Babel."""
    try:
        from babel import Locale
        from babel.core import get_global
    except ImportError:  # the repair extra is not installed: no table, no repair
        return None
    en = Locale("en")
    by_name: dict[str, set[str]] = {}
    aliases: dict[str, str] = {}
    if kind == "country":
        codes = {c: n for c, n in en.territories.items() if len(c) == 2 and c.isalpha()}
        for alias, targets in get_global("territory_aliases").items():
            if len(targets) == 1 and targets[0] in codes and alias.isalpha():
                aliases[alias.upper()] = targets[0]
    elif kind == "language":
        codes = {c: n for c, n in en.languages.items() if c.isalpha() and len(c) in (2, 3)}
        for alias, target in get_global("language_aliases").items():
            if alias.isalpha() and len(alias) == 3 and target in codes:
                aliases[alias.upper()] = target
    else:
        codes = {c: n for c, n in en.currencies.items() if len(c) == 3 and c.isalpha()}
        plural = en._data.get("currency_names_plural", {})
        for code in codes:
            for form in dict(plural.get(code, {})).values():
                by_name.setdefault(str(form).casefold(), set()).add(code)
    for code, name in codes.items():
        by_name.setdefault(name.casefold(), set()).add(code)
    return _Table(codes, {k: tuple(sorted(v)) for k, v in by_name.items()}, aliases)


@lru_cache(maxsize=1)
def _signs() -> Mapping[str, tuple[str, ...]]:
    """Each currency sign (not itself a code) -> the currencies it may stand for: those whose
    English sign it is, or ends (``$`` for USD, and for AUD whose sign is ``A$``)."""
    try:
        from babel import Locale
    except ImportError:
        return {}
    symbols = {c: s for c, s in Locale("en").currency_symbols.items() if s and s != c}
    found: dict[str, set[str]] = {}
    for code, sign in symbols.items():
        if not re.search(r"[A-Za-z]", sign):
            found.setdefault(sign, set()).add(code)
    for sign in list(found):
        for code, other in symbols.items():
            if other != sign and other.endswith(sign):
                found[sign].add(code)
    return {s: tuple(sorted(c)) for s, c in found.items()}


def sign_currencies(sign: str) -> tuple[str, ...]:
    """The currencies a sign may stand for (``€`` -> ``("EUR",)``; ``$`` -> many)."""
    return _signs().get(sign.strip(), ())


def minor_digits(currency: str) -> int | None:
    """Digits of a currency's minor unit (ISO 4217 as CLDR gives it: USD 2, JPY 0)."""
    try:
        from babel.numbers import get_currency_precision
    except ImportError:
        return None
    if currency.upper() not in (_table("currency") or _Table({}, {}, {})).codes:
        return None
    return int(get_currency_precision(currency.upper()))


def table_of(name: str, description: str = "") -> str | None:
    """The one table (``country``, ``currency``, ``language``) a field's name or description
    names, or None (none, or several)."""
    words = set(name_tokens(name)) | set(re.findall(r"[a-z0-9]+", description[:500].lower()))
    named = [t for t in TABLES if words & set(_TABLE_WORDS[t])]
    return named[0] if len(named) == 1 else None


def entity_of(value: Any, table: str) -> Entity | None:
    """The one entity of ``table`` that ``value`` writes (a code, an alias, a name, or for a
    currency its sign), or None."""
    data = _table(table)
    if data is None or not isinstance(value, str) or not 1 <= len(value.strip()) <= 60:
        return None
    text = value.strip()
    upper, folded = text.upper(), text.casefold()
    canonical = {c.upper(): c for c in data.codes}
    if text.isalpha() and upper in canonical and len(text) <= 3:
        code = canonical[upper]
        return Entity(table, code, data.codes[code], "code")
    if text.isalpha() and upper in data.aliases:
        code = data.aliases[upper]
        return Entity(table, code, data.codes[code], "alias")
    named = data.by_name.get(folded, ())
    if len(named) == 1:
        return Entity(table, named[0], data.codes[named[0]], "name")
    if table == "currency":
        signs = sign_currencies(text)
        if len(signs) == 1:
            return Entity(table, signs[0], data.codes[signs[0]], "sign")
    return None


#: Words of a description that ask for a code, and for a name.
_CODE_WORDS = re.compile(
    r"\b(?:code|codes|iso|alpha-?[23]|two-letter|three-letter|2-letter|3-letter|abbreviation)\b",
    re.IGNORECASE,
)
_NAME_WORDS = re.compile(r"\b(?:name|names|spelled out|in full)\b", re.IGNORECASE)
#: Examples a description gives: quoted values and the words after "e.g.", "such as"...
_EXAMPLES = re.compile(
    r"['\"`‘“]([^'\"`’”]{1,40})['\"`’”]"
    r"|\b(?:e\.g\.|eg|i\.e\.|such as|like|for example|default(?:s)?(?: is| to)?)[:,]?\s+"
    r"([\w/ -]{1,40})",
    re.IGNORECASE,
)


def _described_forms(description: str, table: str) -> set[str]:
    """The forms (``code``, ``name``) a field's description asks for, by its words and by
    the forms of its examples; empty when it does not say."""
    forms: set[str] = set()
    for match in _EXAMPLES.finditer(description[:1000]):
        for piece in re.split(r"[/,]| or ", match[1] or match[2] or ""):
            for candidate in (piece.strip(), *piece.split()[:1]):
                found = entity_of(candidate, table)
                if found is not None and found.written_as in ("code", "name"):
                    forms.add(found.written_as)
                    break
    if forms:
        return forms
    if _CODE_WORDS.search(description):
        forms.add("code")
    if _NAME_WORDS.search(description) and not forms:
        forms.add("name")
    return forms


def _example_case(description: str, table: str) -> str | None:
    """``upper`` or ``lower``: how the description writes its example codes (a code in
    capitals anywhere, or one in an example's place), else what it says of case."""
    written = [w for w in re.findall(r"\b[A-Z]{2,3}\b", description[:1000])]
    for match in _EXAMPLES.finditer(description[:1000]):
        written.extend(re.findall(r"\b[A-Za-z]{2,3}\b", match[1] or match[2] or ""))
    for word in written:
        found = entity_of(word, table)
        if found is not None and found.written_as == "code" and (word.isupper() or word.islower()):
            return "upper" if word.isupper() else "lower"
    if re.search(r"\blower ?case\b", description, re.IGNORECASE):
        return "lower"
    if re.search(r"\bupper ?case\b|\bcapital", description, re.IGNORECASE):
        return "upper"
    return None


def recode(
    value: Any, schema: Mapping[str, Any], ctx: Context, *, refused: bool = False
) -> Fix | Decline | None:
    """``value`` in the one standard form of its entity the field takes (see the module),
    a decline when several fit, or None when the field holds no table or ``value`` is no
    entity of it. ``refused``: the tool refused ``value`` as it is, so its own form is out."""
    description = " ".join(filter(None, (ctx.description, str(schema.get("description", "")))))
    table = table_of(ctx.name, description)
    if table is None:
        return None
    found = entity_of(value, table)
    if found is None:
        return None
    forms = _described_forms(description, table)
    conventional = "lower" if table == "language" else "upper"
    case = _example_case(description, table) or conventional
    offers: dict[str, str] = {}
    code = found.code.lower() if case == "lower" else found.code.upper()
    offers[code] = "code"
    other_case = found.code.upper() if case == "lower" else found.code.lower()
    offers.setdefault(other_case, "code")
    offers.setdefault(found.name, "name")
    candidates = [v for v, form in offers.items() if v != value]
    if refused:  # not what the tool refused, written in another case
        candidates = [v for v in candidates if v.casefold() != str(value).casefold()]
    if forms:
        candidates = [v for v in candidates if offers[v] in forms]
    elif refused:
        # refused, and nothing says the field takes another form: the tool may not have it
        # at all, or want another value; the entity's other form is no evidence of either
        return None
    fitting = [v for v in candidates if _fits(v, schema)]
    if not schema_decides(schema):  # only the description's case, when the schema is silent
        fitting = [v for v in fitting if offers[v] != "code" or v in (code,)]
    if len(fitting) == 1:
        what = {"code": "the code", "name": "the name"}[offers[fitting[0]]]
        return Fix(
            _STRATEGY,
            fitting[0],
            0.9,
            f"{shown(value)} is {found.name} ({found.code}, CLDR's {table} table): "
            f"{what} {fitting[0]!r}",
        )
    if len(fitting) > 1:
        return Decline(
            _STRATEGY,
            f"{shown(value)} is {found.name}: {fitting[0]!r} or {fitting[1]!r}, the field "
            "does not say which form",
        )
    return None


def schema_decides(schema: Mapping[str, Any]) -> bool:
    """Whether the schema itself constrains how a text is written (a pattern, an enum)."""
    if "pattern" in schema or "enum" in schema or "const" in schema:
        return True
    branches = schema.get("anyOf") or schema.get("oneOf") or ()
    return any(isinstance(b, Mapping) and schema_decides(b) for b in branches)


def _fits(candidate: str, schema: Mapping[str, Any]) -> bool:
    try:
        return bool(checker_for(schema).is_valid(candidate))
    except Exception:
        return False
