"""Fixes that need no judgement: patterns, lengths, formats and bounds where a mechanical
change makes the value valid without changing what it says; declines where it would.

- ``pattern_correction``: the value with outer whitespace trimmed, in Unicode's compatibility
  form (full-width ``，`` and ``３`` as ``,`` and ``3``), in upper or lower case,
  without inner spaces or separators; taken when exactly one of those matches the pattern. A
  number written with grouping or a decimal comma (``1.050,00``), or with fewer decimals than
  the pattern asks (``250``), in the one plain layout the pattern takes (``1050.00``); marks
  that could be read either way (``1.050``) are declined.
- ``length_correction``: outer whitespace trimmed; truncating or padding is declined.
- ``format_correction``: an email without ``mailto:`` or a display name, or spoken (``bob at
  example dot com``), a UUID without
  braces or ``urn:uuid:`` (hyphens added to 32 hex digits), a URI without surrounding
  brackets or spaces. Dates go to :mod:`.dates`.
- ``clamp_value`` (the seed's CLAMP_VALUE_TO_MIN) always declines: an out-of-range value
  may be on another scale, and clamping even a page size changes the results asked for.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from .codes import minor_digits
from .fixes import Context, Decline, Fix, shown
from .money import stated_amounts
from .phones import PHONE_FORMATS, fix_phone
from .reconcile import spoken_email

__all__ = ["clamp", "cron_without_seconds", "fix_format", "fix_length", "fix_pattern"]

#: Mechanical changes, by how much they change: the smallest that fits wins.
_TRANSFORMS: tuple[tuple[str, int, Callable[[str], str]], ...] = (
    ("trimmed", 0, str.strip),
    # full-width forms as CJK input methods type them ("，" "３"): Unicode's compatibility form
    ("in its Unicode compatibility form (NFKC)", 0,
     lambda s: unicodedata.normalize("NFKC", s).strip()),
    ("with its first letter in upper case", 1, lambda s: s.strip()[:1].upper() + s.strip()[1:]),
    ("with its first two letters in upper case", 1,
     lambda s: s.strip()[:2].upper() + s.strip()[2:]),
    ("with its first three letters in upper case", 1,
     lambda s: s.strip()[:3].upper() + s.strip()[3:]),
    ("in upper case", 2, lambda s: s.strip().upper()),
    ("in lower case", 2, lambda s: s.strip().lower()),
    # "s3://acme-media" for a bucket's name: the name itself, when the address holds no more
    ("without its URI scheme", 3, lambda s: _without_scheme(s)),
    ("without spaces", 3, lambda s: re.sub(r"\s+", "", s)),
    ("without separators", 3, lambda s: re.sub(r"[\s\-_./()]+", "", s)),
    # "+44 7700 900123" where the pattern takes E.164's digits alone (no "+" or "00")
    ("as an international number's digits alone", 3, lambda s: _international_digits(s)),
    ("with its second year in full", 3, lambda s: _full_second_year(s)),
    ("in upper case without spaces", 4, lambda s: re.sub(r"\s+", "", s).upper()),
    ("without separators, in upper case", 4, lambda s: re.sub(r"[\s\-_./()]+", "", s).upper()),
)  # fmt: skip


_INTERNATIONAL = re.compile(r"\s*(?:\+|00)\s*(?P<n>[1-9][\d\s().\-]{5,24})\s*")


def _international_digits(text: str) -> str:
    """An international phone number (``+``/``00``, then digits and separators) as its
    digits alone, country code first (``+86 139 1234 5678`` -> ``8613912345678``); other
    text as it is."""
    match = _INTERNATIONAL.fullmatch(text)
    return re.sub(r"\D", "", match["n"]) if match is not None else text


_FIVE_FIELDS = re.compile(r"\b(?:5|five) fields\b", re.IGNORECASE)


def cron_without_seconds(value: str, message: str) -> str | None:
    """A cron expression of six fields whose first is a seconds field (Quartz, Spring:
    ``0 30 2 * * 1-5``) as the standard five (``30 2 * * 1-5``), where the tool's error says
    it counts five fields; None otherwise (a seconds field other than 0 would be lost)."""
    fields = value.split()
    if len(fields) != 6 or fields[0] != "0" or not _FIVE_FIELDS.search(message[:2000]):
        return None
    if not all(re.fullmatch(r"[\w*/,?#L-]+", f) for f in fields):
        return None
    return " ".join(fields[1:])


def _without_scheme(text: str) -> str:
    """The name an address of only a scheme and a name writes (``s3://acme-media`` ->
    ``acme-media``); other text (an address with a path, a query, a user) as it is."""
    match = re.fullmatch(r"\s*[A-Za-z][A-Za-z0-9+.\-]*://(?P<n>[^/?#\s@:]+)/?\s*", text)
    return match["n"] if match is not None else text


def _full_second_year(text: str) -> str:
    """A span of two years written short ("2020-21", a season or fiscal year) with the second
    in full ("2020-2021"); other text as it is."""
    match = re.fullmatch(r"\s*((\d{2})(\d{2}))\s*([-/\u2013])\s*(\d{2})\s*", text)
    if match is None or int(match[5]) != (int(match[3]) + 1) % 100:
        return text
    year = int(match[1]) + 1
    return f"{match[1]}{match[4]}{year}"


def fix_pattern(value: Any, pattern: str, ctx: Context) -> Fix | Decline:
    """``value`` changed only in case, outer whitespace or separators to match ``pattern``."""
    if not isinstance(value, str):
        return Decline("pattern_correction", f"{shown(value)} is not text")
    try:
        compiled = re.compile(pattern)
    except re.error:
        return Decline("pattern_correction", f"the schema's pattern {pattern!r} does not compile")
    written = _task_spelling(value, compiled, ctx.task)
    if written is not None:
        why = f"{shown(value)} is written {written!r} in the task, which matches {pattern!r}"
        return Fix("pattern_correction", written, 0.9, why)
    found: list[tuple[str, int, str]] = []
    for how, size, transform in _TRANSFORMS:
        candidate = transform(value)
        if _joins_words(value, candidate):
            continue
        known = candidate in {c for _, _, c in found}
        if candidate != value and not known and compiled.search(candidate):
            found.append((how, size, candidate))
    if found:
        # the smallest change that fits wins ("mg12ab" -> "MG12ab", not "MG12AB"), unless two
        # equally small changes fit differently
        (how, size, candidate), *rest = found
        rivals = [c for _, other, c in rest if other == size]
        if rivals:
            return Decline(
                "pattern_correction", f"{shown(value)} could become {candidate!r} or {rivals[0]!r}"
            )
        return Fix(
            "pattern_correction", candidate, 0.9, f"{shown(value)} {how} matches {pattern!r}"
        )
    decimal = _decimal_layout(value, compiled)
    if decimal is not None:
        why = f"{shown(value)} is the number {decimal}, written as {pattern!r} asks"
        return Fix("pattern_correction", decimal, 0.9, why)
    return Decline(
        "pattern_correction",
        f"{shown(value)} does not match {pattern!r} and no mechanical change fits",
    )


#: Words apart: two letters, then word characters, then at least one more word after spaces
#: (written so that no two parts can take the same characters: linear on any value).
_WORDS = re.compile(r"[^\W\d_]{2}\w*(?:\s+\w+)+")
#: Longer than this, a value is no name whose words could be joined or respelt.
_NAME_MAX = 200


def _joins_words(value: str, candidate: str) -> bool:
    """Whether ``candidate`` joins words ``value`` writes apart (``New Onboarding Flow`` ->
    ``NewOnboardingFlow``): words run together say a new name, not the same one; groups of a
    code (``GB29 NWBK``) or digits are not words here."""
    inner = value.strip()
    if len(inner) > _NAME_MAX or not _WORDS.fullmatch(inner) or re.search(r"\s", candidate.strip()):
        return False
    return all(re.search(r"[^\W\d_]", w) for w in inner.split()) and not inner.isupper()


def _task_spelling(value: str, compiled: re.Pattern[str], task: str | None) -> str | None:
    """The one token of the task that writes ``value``'s words with other separators and
    matches the pattern (``checkout v3`` where the task names ``checkout-v3``); None when
    there is none or more than one."""
    if not task or len(value) > _NAME_MAX or not re.search(r"\s", value.strip()):
        return None
    key = re.sub(r"[\W_]+", "", value).casefold()
    seen = {t.strip(".,;:!?\"'()[]") for t in task[:2000].split()}
    hits = {t for t in seen if t != value and re.sub(r"[\W_]+", "", t).casefold() == key}
    hits = {t for t in hits if compiled.search(t)}
    return hits.pop() if len(hits) == 1 else None


_GROUPED = re.compile(r"\d{1,3}(?:(?P<g>[.,\s\u00a0\u202f'])\d{3})*(?:(?P<d>[.,])\d+)?")


def _number_of(text: str) -> str | None:
    """The plain decimal (``1050.00``) a number written with grouping and a decimal mark
    stands for (``1.050,00``, ``1,050.00``, ``1 050,5``, ``250``), or None where the marks do
    not say which is which (``1.050``: a thousand and fifty, or one point oh five)."""
    text = text.strip()
    if re.fullmatch(r"\d{1,3}[.,]\d{3}", text):
        return None  # one mark before three digits: grouping or a decimal mark, either
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return text
    match = _GROUPED.fullmatch(text)
    if match is None:
        return None
    group, mark = match["g"], match["d"]
    if group is None and mark is not None:  # "12,5": a comma with no grouping is a decimal mark
        return text.replace(",", ".") if mark == "," and not re.search(r",\d{3}$", text) else None
    if group is None or group == mark:
        return None
    digits = text.replace(group, "")
    return digits.replace(mark, ".") if mark else digits


def _decimal_layout(value: str, compiled: re.Pattern[str]) -> str | None:
    """The number ``value`` writes, in the one layout with 0 to 4 decimals that the pattern
    takes (``250`` -> ``250.00`` for ``^[0-9]+\\.[0-9]{2}$``); never rounds a digit away."""
    plain = _number_of(value)
    if plain is None or compiled.search(value):
        return None
    whole, _, frac = plain.partition(".")
    fits = []
    for places in range(len(frac.rstrip("0")), 5):
        candidate = whole + ("." + (frac + "0" * places)[:places] if places else "")
        if compiled.search(candidate):
            fits.append(candidate)
    return fits[0] if len(fits) == 1 else None


def fix_length(value: Any, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline:
    """Outer whitespace trimmed when that fits the length bounds; declines otherwise."""
    if isinstance(value, str):
        trimmed = value.strip()
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        if trimmed != value and len(trimmed) >= low and (high is None or len(trimmed) <= high):
            return Fix("length_correction", trimmed, 0.95, "outer whitespace trimmed")
        if high is not None and len(value) > high:
            return Decline(
                "length_correction",
                f"{len(value)} characters where at most {high} are allowed: cutting it changes it",
            )
        return Decline("length_correction", f"{len(value)} characters where {low} are needed")
    return Decline("length_correction", "the number of items is what was asked for")


_MAILTO = re.compile(r"(?:mailto:)?(?:[^<>]*<\s*([^<>\s]+@[^<>\s]+)\s*>|\s*([^\s<>]+@[^\s<>]+))")
_HEX32 = re.compile(r"^[0-9a-fA-F]{32}$")
#: A URL the tool sends data to (a callback, a webhook), not one it reads.
_SENDS_TO = re.compile(
    r"callback|webhook|hook_?url|notify|notification|\bsends?\b|\bpost(?:s|ed)? to\b|redirect",
    re.IGNORECASE,
)
#: A host name with a top-level domain of letters (``www.example.com/pricing?x=1``): what
#: a browser's address bar reads as ``https://``. Not a bare word, not an IP, not a path.
_WEB_ADDRESS = re.compile(
    r"^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]{2,24}(?::\d{1,5})?"
    r"(?:[/?#][^\s]*)?$"
)


_URL_IN_TEXT = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s<>\"']+")


def _task_urls_extending(address: str, task: str | None) -> list[str]:
    """The addresses the task writes (with their scheme) that are ``address`` or go on from
    it: a scheme-less value is the task's address, cut."""
    if not task:
        return []
    found = []
    for match in _URL_IN_TEXT.finditer(task[:4000]):
        url = match.group(0).rstrip(".,;:!?)]")
        rest = url.split("://", 1)[1]
        if rest.casefold().startswith(address.casefold()):
            tail = rest[len(address) :]
            if not tail or not (tail[0].isalnum() or tail[0] in "-_"):
                found.append(url)
    return list(dict.fromkeys(found))


def fix_format(value: Any, fmt: str, ctx: Context) -> Fix | Decline | None:
    """An email, UUID or URI cleaned of wrapping; None for formats this does not know."""
    if not isinstance(value, str):
        return None
    if fmt in ("email", "idn-email"):
        match = _MAILTO.fullmatch(value.strip())  # stripped: no space run is scanned twice
        if match:
            address = match[1] or match[2]
            local, _, domain = address.rpartition("@")
            fixed = f"{local}@{domain.lower().rstrip('.')}"
            if fixed != value:
                return Fix("format_correction", fixed, 0.9, f"the address in {shown(value)}")
            return None  # already an address: nothing to fix
        spoken = spoken_email(value)  # "li.wei at example dot cn", as people say it
        if spoken is not None:
            return Fix("format_correction", spoken, 0.9, f"{shown(value)} is {spoken}, spoken")
        return Decline("format_correction", f"{shown(value)} holds no email address")
    if fmt == "uuid":
        text = value.strip().strip("{}").removeprefix("urn:uuid:").strip()
        if _HEX32.match(text):
            text = str(uuid.UUID(text))
        try:
            fixed = str(uuid.UUID(text))
        except ValueError:
            return Decline("format_correction", f"{shown(value)} is not a UUID")
        if fixed != value:
            return Fix("format_correction", fixed, 0.95, f"the UUID in {shown(value)}")
        return None
    if fmt in PHONE_FORMATS:
        return fix_phone(value, ctx)
    if fmt in ("uri", "iri", "uri-reference", "url"):
        fixed = value.strip().strip("<>\"'").strip()
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://\S", fixed) and " " in fixed:
            encoded = fixed.replace(" ", "%20")  # a space inside a URI, percent-encoded
            return Fix("format_correction", encoded, 0.9, "the URI with its spaces encoded")
        if fixed != value and re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", fixed):
            return Fix("format_correction", fixed, 0.95, "the URI without what surrounded it")
        if _WEB_ADDRESS.match(fixed):
            written = _task_urls_extending(fixed, ctx.task)
            if len(written) == 1:
                why = f"{shown(value)} is the start of the address the task writes"
                return Fix("format_correction", written[0], 0.85, why)
            if written:
                why = f"{shown(value)} starts {written[0]!r} and {written[1]!r}"
                return Decline("format_correction", why)
        if _WEB_ADDRESS.match(fixed) and _SENDS_TO.search(ctx.name + " " + ctx.description):
            return Decline(
                "format_correction",
                f"{shown(value)} has no scheme, and the tool sends data there: whether it goes "
                "over http or https is for the user to say",
            )
        if _WEB_ADDRESS.match(fixed) and fmt != "uri-reference":
            return Fix(
                "format_correction",
                "https://" + fixed,
                0.85,
                f"{shown(value)} is a web address without its scheme: https, as browsers take it",
            )
        return Decline(
            "format_correction", f"{shown(value)} is not a URI (its scheme is not for us to choose)"
        )
    return None


_CAPS = re.compile(
    r"^(?:limit|max_?results|max_?items|page_?size|per_?page|top_?k|top_?n|"
    r"num_?results|n_?results|max_?tokens)$",
    re.IGNORECASE,
)


def clamp(value: Any, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline:
    """An out-of-range value is declined: it may be on another scale (a percentage as 0-100
    for a 0-1 field, cents for units), and even a page size brought within its bounds returns
    other results than were asked for. Unless the task asks for the bound itself: "as many
    per page as it allows" (the maximum), "the first page" (a minimum of 0 or 1), or states
    the value without the sign the call gave it ("60 minutes before" for ``-60``)."""
    low, high = _bound(schema, "minimum"), _bound(schema, "maximum")
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):  # a count as text
        inner = clamp(int(value), {k: v for k, v in schema.items() if k != "type"}, ctx)
        if isinstance(inner, Fix) and isinstance(inner.value, (int, float)):
            return Fix(inner.strategy, str(int(inner.value)), inner.confidence, inner.reason)
        return inner
    if isinstance(value, (int, float)) and not isinstance(value, bool) and ctx.task:
        task = ctx.task[:4000]
        if high is not None and value > high and _MOST.search(task):
            return Fix("clamp_value", high, 0.9, f"the task asks for the most allowed: {high}")
        words = {w for w in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", ctx.name.lower()) if w}
        if (
            low in (0, 1)
            and value < low
            and any(re.search(rf"\bfirst {re.escape(w)}\b", task, re.IGNORECASE) for w in words)
        ):
            return Fix("clamp_value", low, 0.9, f"the task asks for the first one: {low}")
        if (
            value < 0
            and low is not None
            and low >= 0
            and (high is None or -value <= high)
            and re.search(rf"(?<![\w.-]){re.escape(shown(-value))}(?![\w.])", task)
        ):
            if ctx.choices_beside:  # "set -3" may mean "decrement 3": the sign is meant
                return Decline(
                    "clamp_value",
                    f"{shown(value)} is below {low}, and the task says {-value}: the sign may "
                    f"be what {', '.join(ctx.choices_beside)} should say, not a slip",
                    beside=ctx.choices_beside,
                )
            return Fix("clamp_value", -value, 0.85, f"the task says {-value}: the sign is a slip")
    scaled = _minor_units(value, low, high, ctx)
    if scaled is not None:
        return scaled
    from .numbers import stated_in_unit

    stated = stated_in_unit(value, low, high, ctx)  # a day sent in ms to a field in seconds
    if stated is not None:
        return stated
    glossed = _glossed_in_task(value, low, high, ctx)  # "the highest" for "1 (highest)"
    if glossed is not None:
        return glossed
    where = f"{low}..{high}" if low is not None and high is not None else "its bounds"
    return Decline(
        "clamp_value",
        f"{shown(value)} is outside {where}: it may be on another scale, and clamping it would "
        "change what was asked",
    )


def _glossed_in_task(value: Any, low: Any, high: Any, ctx: Context) -> Fix | None:
    """An out-of-bounds number where the task names, by the word the field's description
    glosses it with, exactly one value within the bounds ("the highest priority" where the
    description says "1 (highest) to 5"): that value."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not ctx.task:
        return None
    from .effective import rules_for
    from .words import find_word

    glosses = rules_for({"description": ctx.description, "type": "number"}, ctx.name).glosses
    task = ctx.task[:4000].casefold()
    named = {
        v for word, v in glosses.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and len(word) > 3
        and (low is None or v >= low) and (high is None or v <= high)
        and find_word(task, word.casefold()) >= 0
    }  # fmt: skip
    if len(named) != 1:
        return None
    chosen = named.pop()
    chosen = int(chosen) if float(chosen).is_integer() else chosen
    why = f"{shown(value)} is outside its bounds; the task names {chosen} by its description's word"
    return Fix("clamp_value", chosen, 0.85, why)


#: A field counted in a currency's smallest unit, as its description says.
_MINOR_UNITS = re.compile(r"\bcents?\b|smallest currency unit|minor units?", re.IGNORECASE)


def _minor_units(value: Any, low: float | None, high: float | None, ctx: Context) -> Fix | None:
    """A value too small (for the schema or the tool) in a field counted in cents, which is
    the amount the task states in whole units ("$25" sent as 25): the amount in cents."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not ctx.task:
        return None
    if (high is not None and value > high) or not _MINOR_UNITS.search(ctx.description):
        return None  # too big is no amount in whole units; a field not in cents
    currency = next(
        (v.lower() for k, v in ctx.args.items()
         if isinstance(k, str) and "currency" in k.lower() and isinstance(v, str)),
        None,
    )  # fmt: skip
    if currency is not None and minor_digits(currency) == 0:
        return None  # a currency without a minor unit (ISO 4217 as CLDR gives it)
    amounts = {amount for amount, _currencies in stated_amounts(ctx.task)}
    if amounts != {float(value)}:
        return None
    cents = round(value * 100)
    if (low is not None and cents < low) or (high is not None and cents > high):
        return None
    why = f"the task says {shown(value)} in whole units, and the field counts cents: {cents}"
    return Fix("unit_conversion", cents, 0.85, why)


#: A task asking for as many (much, long) as a tool allows.
_MOST = re.compile(
    r"\bas (?:many|much|long|large|big|far)\b[^.;]{0,60}?\bas\b[^.;]{0,40}?"
    r"\b(?:allow(?:s|ed)?|possible|permitted|(?:it|they|you|we) can)\b"
    r"|\b(?:the )?(?:maximum|most) (?:allowed|possible|permitted)\b"
    r"|\bmax(?:ed)? (?:it |them |that |this )?out\b|\bmax(?:imi[sz]e)? out\b",
    re.IGNORECASE,
)


def _bound(schema: Mapping[str, Any], side: str) -> int | float | None:
    """The schema's inclusive bound on one side (an exclusive one of an integer field made
    inclusive), or None."""
    bound = schema.get(side)
    if isinstance(bound, (int, float)) and not isinstance(bound, bool):
        return bound
    exclusive = schema.get("exclusiveMaximum" if side == "maximum" else "exclusiveMinimum")
    integer = schema.get("type") == "integer"
    if isinstance(exclusive, int) and not isinstance(exclusive, bool) and integer:
        return exclusive - 1 if side == "maximum" else exclusive + 1
    return None
