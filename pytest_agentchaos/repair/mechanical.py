"""Fixes that need no judgement: patterns, lengths, formats and bounds where a mechanical
change makes the value valid without changing what it says; declines where it would.

- ``pattern_correction``: the value with outer whitespace trimmed, in upper or lower case,
  without inner spaces or separators; taken when exactly one of those matches the pattern.
- ``length_correction``: outer whitespace trimmed; truncating or padding is declined.
- ``format_correction``: an email without ``mailto:`` or a display name, a UUID without
  braces or ``urn:uuid:`` (hyphens added to 32 hex digits), a URI without surrounding
  brackets or spaces. Dates go to :mod:`.dates`.
- ``clamp_value`` (the seed's CLAMP_VALUE_TO_MIN): only for fields that cap how much comes
  back (``limit``, ``max_results``, ``page_size``, ``top_k``...); any other out-of-range value
  may be on another scale (a percentage as 0-100 for a 0-1 field, cents for units), so it is
  declined.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from .fixes import Context, Decline, Fix

__all__ = ["clamp", "fix_format", "fix_length", "fix_pattern"]

_TRANSFORMS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("trimmed", str.strip),
    ("in upper case", lambda s: s.strip().upper()),
    ("in lower case", lambda s: s.strip().lower()),
    ("without spaces", lambda s: re.sub(r"\s+", "", s)),
    ("without separators", lambda s: re.sub(r"[\s\-_./()]+", "", s)),
    ("in upper case without spaces", lambda s: re.sub(r"\s+", "", s).upper()),
    ("without separators, in upper case", lambda s: re.sub(r"[\s\-_./()]+", "", s).upper()),
)


def fix_pattern(value: Any, pattern: str, ctx: Context) -> Fix | Decline:
    """``value`` changed only in case, outer whitespace or separators to match ``pattern``."""
    if not isinstance(value, str):
        return Decline("pattern_correction", f"{value!r} is not text")
    try:
        compiled = re.compile(pattern)
    except re.error:
        return Decline("pattern_correction", f"the schema's pattern {pattern!r} does not compile")
    found: dict[str, str] = {}
    for how, transform in _TRANSFORMS:
        candidate = transform(value)
        if candidate != value and compiled.search(candidate) and candidate not in found.values():
            found[how] = candidate
    if len(found) == 1:
        how, candidate = next(iter(found.items()))
        return Fix("pattern_correction", candidate, 0.9, f"{value!r} {how} matches {pattern!r}")
    if len(found) > 1:
        shown = " or ".join(repr(c) for c in list(found.values())[:3])
        return Decline("pattern_correction", f"{value!r} could become {shown}")
    return Decline(
        "pattern_correction", f"{value!r} does not match {pattern!r} and no mechanical change fits"
    )


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


_MAILTO = re.compile(
    r"^\s*(?:mailto:)?\s*(?:[^<>]*<\s*([^<>\s]+@[^<>\s]+)\s*>|([^\s<>]+@[^\s<>]+))\s*$"
)
_HEX32 = re.compile(r"^[0-9a-fA-F]{32}$")


def fix_format(value: Any, fmt: str, ctx: Context) -> Fix | Decline | None:
    """An email, UUID or URI cleaned of wrapping; None for formats this does not know."""
    if not isinstance(value, str):
        return None
    if fmt in ("email", "idn-email"):
        match = _MAILTO.match(value)
        if match:
            address = match[1] or match[2]
            local, _, domain = address.rpartition("@")
            fixed = f"{local}@{domain.lower().rstrip('.')}"
            if fixed != value:
                return Fix("format_correction", fixed, 0.9, f"the address in {value!r}")
            return None  # already an address: nothing to fix
        return Decline("format_correction", f"{value!r} holds no email address")
    if fmt == "uuid":
        text = value.strip().strip("{}").removeprefix("urn:uuid:").strip()
        if _HEX32.match(text):
            text = str(uuid.UUID(text))
        try:
            fixed = str(uuid.UUID(text))
        except ValueError:
            return Decline("format_correction", f"{value!r} is not a UUID")
        if fixed != value:
            return Fix("format_correction", fixed, 0.95, f"the UUID in {value!r}")
        return None
    if fmt in ("uri", "iri", "uri-reference", "url"):
        fixed = value.strip().strip("<>\"'").strip()
        if fixed != value and re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", fixed):
            return Fix("format_correction", fixed, 0.95, "the URI without what surrounded it")
        return Decline(
            "format_correction", f"{value!r} is not a URI (its scheme is not for us to choose)"
        )
    return None


_CAPS = re.compile(
    r"^(?:limit|max_?results|max_?items|page_?size|per_?page|top_?k|top_?n|"
    r"num_?results|n_?results|max_?tokens)$",
    re.IGNORECASE,
)


def clamp(value: Any, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline:
    """A cap on how much comes back brought within its bounds; any other value declined."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return Decline("clamp_value", f"{value!r} is not a number")
    low = schema.get("minimum")
    high = schema.get("maximum")
    if not _CAPS.match(ctx.name or ""):
        where = f"{low}..{high}" if low is not None and high is not None else "its bounds"
        return Decline(
            "clamp_value",
            f"{value!r} is outside {where}: it may be on another scale, so clamping would "
            "change what was asked",
        )
    fixed = value
    if isinstance(high, (int, float)) and value > high:
        fixed = high
    if isinstance(low, (int, float)) and value < low:
        fixed = low
    if fixed == value:
        return Decline("clamp_value", f"{value!r} breaks a bound clamping cannot meet")
    return Fix("clamp_value", fixed, 0.85, f"{ctx.name} {value!r} capped at {fixed!r}")
