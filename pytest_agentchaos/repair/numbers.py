"""A number written with words around it where a number is due.

- a label: ``"50 per page"``, ``"top 5"``, ``"first 20"``, ``"3 lines"``, ``"two adults"``:
  the number, when the other words are the field's own words, function words, or the task
  writes the whole text; never when a word changes the number's sense (``"last 20"``,
  ``"at least 5"``, ``"over 10"``);
- a magnitude suffix: ``"10k"``, ``"1.5M"``;
- a percentage for a field counted in percent (its name or description says so): ``"75%"``
  is 75; a fraction (``0.4``) is 40 only where the task writes "40%" itself;
- a duration in hours and minutes: ``"1h30"``, ``"2 hours 15 minutes"``, into the field's
  unit (``duration_minutes``: 90);
- a unit: ``"2 km"``, ``"1 hour"``, ``"2h"``, ``"2 weeks"``: converted with a units library
  (``pint``, the ``repair`` extra) into the unit the field is in (its name's last word,
  ``radius_m``, or its description, "in meters"); declined when the field states no unit,
  when the units measure different things, when one is not a whole multiple of the other
  (miles and meters, pounds and kilograms: converting changes the value the user gave) or
  when the result is not whole for an integer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .effective import rules_for
from .fixes import Context, Decline, Fix, schema_types, shown
from .units import registry as _registry
from .units import unit_of as _unit
from .words import name_tokens

__all__ = ["in_percent", "labelled_number", "percent_of", "quantity"]

_STRATEGY = "schema_type_conversion"
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "a dozen": 12,
}  # fmt: skip
_NUMBER = re.compile(
    r"(?<![\w.])(?P<num>[+-]?\d+(?:\.\d+)?)(?P<mag>[kK]|M)?(?![\w.°])"
    r"|(?<![\w.])(?P<num2>[+-]?\d+(?:\.\d+)?)"
    r"(?P<unit>[a-zA-Zµ°]+|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{1,6})(?![\w.])"
)
#: A duration in hours and minutes ("1h30", "1 h 30 min", "2 hours and 15 minutes").
_HOURS_MINUTES = re.compile(
    r"(?P<h>\d{1,3})\s*(?:h|hr|hrs|hours?)\s*(?:and\s+)?(?P<m>[0-5]?\d)\s*(?:m|min|mins|minutes?)?"
)
#: Words that change what a number means (a bound, an end, an exclusion): a closed class.
_SENSE = frozenset(
    {"last", "bottom", "least", "most", "over", "under", "above", "below", "more", "less",
     "fewer", "than", "minus", "except", "not", "no", "max", "min", "maximum", "minimum",
     "before", "after", "ago", "every", "each", "per cent", "percent", "half", "double",
     "times", "x", "off"}
)  # fmt: skip
_FUNCTION = frozenset(
    {"a", "an", "the", "of", "for", "in", "on", "at", "to", "per", "by", "with", "top", "first",
     "just", "only", "about", "around", "some", "up"}
)  # fmt: skip


def labelled_number(value: str, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline | None:
    """The number ``value`` writes with a label, a suffix or a unit (see the module), a
    decline when the words change its sense or its unit cannot be settled, None when it
    holds no one number."""
    text = " ".join(value.strip().split())
    if not text or len(text) > 80:
        return None
    coded = _initial_coded(text, ctx.name or "") if _ONE_HIGHEST.search(ctx.description) else None
    if coded is not None:  # "P2" for a priority, "S1" for a severity
        return Fix(_STRATEGY, coded, 0.85, f"{shown(value)} is level {coded}: its letter is "
                   f"the initial of {ctx.name}")  # fmt: skip
    lowered = text.lower()
    hours = _HOURS_MINUTES.fullmatch(lowered)
    if hours is not None:  # "1h30", "2 hours 15 minutes": one duration in two units
        field_unit = rules_for(schema, ctx.name or "").unit
        if field_unit is None:
            return Decline(_STRATEGY, f"{shown(value)} is a duration, and the field states no "
                           "unit to convert it to")  # fmt: skip
        minutes = int(hours["h"]) * 60 + int(hours["m"])
        return _convert(minutes, "minute", field_unit, "integer" in schema_types(schema), value)
    spelled = [w for w in _NUMBER_WORDS if re.search(rf"\b{w}\b", lowered)]
    matches = list(_NUMBER.finditer(text))
    if len(matches) + len(spelled) != 1:
        return None
    integer = "integer" in schema_types(schema)
    if spelled:
        number: float = float(_NUMBER_WORDS[spelled[0]])
        rest = re.sub(rf"\b{spelled[0]}\b", " ", lowered).split()
        unit_word = None
    else:
        match = matches[0]
        raw = match["num"] or match["num2"]
        number = float(raw)
        if match["mag"]:
            number *= 1_000 if match["mag"] in "kK" else 1_000_000
        unit_word = match["unit"]
        rest = (lowered[: match.start()] + " " + lowered[match.end() :]).split()
    rest = [w.strip(".,:;()") for w in rest if w.strip(".,:;()")]
    if any(w in _SENSE for w in rest):
        return None  # a word there changes what the number means: not read
    name = ctx.name or ""
    field_unit = rules_for(schema, name).unit
    units = [w for w in ([unit_word] if unit_word else []) + rest if _unit(w) is not None]
    if unit_word and not units:
        return None  # "5x", "3rd": no unit this knows
    if units:
        if len(units) > 1 or len(rest) > (0 if unit_word else 1):
            return None
        if field_unit is None:
            return Decline(_STRATEGY, f"{shown(value)} carries a unit, and the field states "
                           "none to convert it to")  # fmt: skip
        converted = _convert(number, units[0], field_unit, integer, value)
        spelt = _spelt_in_task(number, units[0], ctx.task)
        if isinstance(converted, Decline) and spelt is not None:  # "5m" and "5 minute timeout"
            return _convert(number, spelt, field_unit, integer, value)
        return converted
    own = set(name_tokens(name)) | set(re.findall(r"[a-z]+", ctx.description.lower()[:500]))
    stated = bool(ctx.task) and text.lower() in " ".join((ctx.task or "").lower().split())
    loose = [w for w in rest if w not in _FUNCTION and w not in own and w.rstrip("s") not in own]
    if loose and not stated:
        return None
    if integer and not number.is_integer():
        return Decline(_STRATEGY, f"{shown(value)} is not a whole number")
    result = int(number) if number.is_integer() else number
    why = f"the number in {shown(value)}" + (", as the task writes it" if stated else "")
    return Fix(_STRATEGY, result, 0.9, why)


#: A description that says its level 1 is the highest, as P1/S1 levels count: only then is
#: "P2" the field's 2 (Todoist's API counts the other way: its p1 is the API's 4).
_ONE_HIGHEST = re.compile(
    r"\b1\s*(?:\(\s*(?:highest|most urgent|most severe|top)\s*\)|(?:is|=)\s*(?:the\s+)?"
    r"(?:highest|most urgent|most severe))",
    re.IGNORECASE,
)


def _initial_coded(text: str, name: str) -> int | None:
    """The number of a level written with the field's initial before it (``P2`` for a
    ``priority``, ``S1`` for a ``severity``); None otherwise. Read only where the field's
    description says 1 is the highest level (the P1 convention)."""
    match = re.fullmatch(r"\s*([A-Za-z])[-\s]?(\d{1,3})\s*", text)
    words = name_tokens(name)
    if match is None or len(words) != 1 or len(words[0]) < 4:
        return None
    return int(match[2]) if match[1].lower() == words[0][0] else None


def _spelt_in_task(number: float, written: str, task: str | None) -> str | None:
    """The unit the task writes in full after the same number, when ``written`` abbreviates
    it and is another unit to the library ("5m" is 5 metres; "a 5 minute timeout" says
    minutes): the task's own word, else None."""
    if not task or len(written) > 2:
        return None
    shown = f"{number:g}"
    for match in re.finditer(rf"(?<![\w.]){re.escape(shown)}[\s-]*([A-Za-z]{{3,12}})", task[:4000]):
        word = match[1]
        unit = _unit(word)
        if (
            unit is not None
            and word.lower().startswith(written.lower())
            and str(unit) != str(_unit(written))
        ):
            return word
    return None


def _convert(
    number: float, written: str, field_unit: str, integer: bool, value: str
) -> Fix | Decline:
    try:
        registry = _registry()
        quantity = registry.Quantity(number, _unit(written)).to(field_unit)
    except Exception as exc:
        return Decline(_STRATEGY, f"{shown(value)} is not in {field_unit}s and cannot become "
                       f"them ({type(exc).__name__})")  # fmt: skip
    factor = float(registry.Quantity(1, _unit(written)).to(field_unit).magnitude)
    whole = [f for f in (factor, 1 / factor if factor else 0.0) if f >= 1]
    if not whole or abs(whole[0] - round(whole[0])) > 1e-9:
        return Decline(_STRATEGY, f"{shown(value)} is in another system of units than "
                       f"{field_unit}s: converting it changes the value the user gave")  # fmt: skip
    magnitude = float(quantity.magnitude)
    if integer and abs(magnitude - round(magnitude)) > 1e-9:
        return Decline(_STRATEGY, f"{shown(value)} is {magnitude:g} {field_unit}s: not whole")
    result: float | int = round(magnitude) if integer or magnitude.is_integer() else magnitude
    return Fix("unit_conversion", result, 0.9, f"{shown(value)} is {result} {field_unit}s")


def quantity(text: str) -> Any:
    """``"24 hours"``, ``"24h"``, ``"14d"`` as a quantity of the units library; None for
    anything else (or without the library)."""
    match = re.fullmatch(
        r"\s*(\d+(?:\.\d+)?)\s*([A-Za-zµ]{1,12}|[^\x00-\x7f\d\s]{1,6})\s*", text[:40]
    )
    if match is None:
        return None
    unit = _unit(match[2])
    if unit is None:
        return None
    try:
        return _registry().Quantity(float(match[1]), unit)
    except Exception:
        return None


_PERCENT_WORDS = frozenset({"percent", "percentage", "pct"})
#: A description that counts in percent, not in a fraction of one.
_PERCENT_TEXT = re.compile(r"\bpercent(?:age)?\b|\d\s*%", re.IGNORECASE)
_FRACTION_TEXT = re.compile(r"\bas a (?:decimal|fraction)\b|\b0(?:\.0+)?\s*(?:-|to)\s*1\b")


def in_percent(schema: Mapping[str, Any], name: str) -> bool:
    """Whether a numeric field counts in percent (0-100): its name says so (``level_percent``,
    ``discount_pct``) or its description does, and nothing says it takes a fraction."""
    description = str(schema.get("description", ""))[:1000]
    if _FRACTION_TEXT.search(description):
        return False
    maximum = schema.get("maximum")
    if isinstance(maximum, (int, float)) and not isinstance(maximum, bool) and maximum <= 1:
        return False
    return bool(_PERCENT_WORDS & set(name_tokens(name)) or _PERCENT_TEXT.search(description))


def percent_of(value: Any, schema: Mapping[str, Any], ctx: Context) -> Fix | None:
    """``"75%"`` as 75 for a field in percent; a fraction (0.4) as the percentage the task
    writes it as ("40%", "40 percent"); None otherwise."""
    if not in_percent(schema, ctx.name):
        return None
    integer = "integer" in schema_types(schema)
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*%\s*", value)
        if match is None:
            return None
        number = float(match[1])
        if integer and not number.is_integer():
            return None
        shown_number = int(number) if number.is_integer() else number
        why = f"{shown(value)} in the field's own unit, percent: {shown_number}"
        return Fix("schema_type_conversion", shown_number, 0.9, why)
    if isinstance(value, float) and 0 < value < 1 and ctx.task:
        hundred = round(value * 100, 6)
        text = f"{hundred:g}"
        if re.search(rf"(?<![\d.]){re.escape(text)}\s*(?:%|percent\b)", ctx.task[:4000]):
            number = int(hundred) if hundred.is_integer() else hundred
            why = f"{value!r} is the fraction; the field is in percent and the task writes {text}%"
            return Fix("schema_type_conversion", number, 0.9, why)
    return None


#: The factors between units of one measure that a number sent on another unit's scale
#: shows: the SI prefixes' steps (milli-, kilo-, mega-) and the clock's (60, 3,600, 86,400).
_SCALE_STEPS = (1_000, 1_000_000, 1_000_000_000, 60, 3_600, 86_400)
_TASK_QUANTITY = re.compile(
    r"(?<![\w.])(?P<n>\d+(?:\.\d+)?|"
    + "|".join(w for w in _NUMBER_WORDS if " " not in w)
    + r")[\s-]?(?P<u>[A-Za-z]{1,12})\b",
    re.IGNORECASE,
)


def stated_in_unit(value: Any, low: Any, high: Any, ctx: Context) -> Fix | None:
    """A number outside its bounds in a field whose description states its unit ("in
    seconds", "Seconds to wait"), where the task states the one quantity of that measure ("after
    one day", "10 minutes") and the number sent is that quantity on another unit's scale (a
    day sent in milliseconds, minutes sent as they are): the task's quantity in the field's
    unit, when that is within the bounds."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value or not ctx.task:
        return None
    field_unit = rules_for({"description": ctx.description}, ctx.name or "").unit
    if field_unit is None:
        return None
    try:
        registry = _registry()
        target = registry.Unit(field_unit)
    except Exception:
        return None
    found: list[float] = []
    for match in _TASK_QUANTITY.finditer(ctx.task[:4000]):
        word = match["u"].lower()
        unit = (_unit(match["u"]) or _unit(word)) if len(word) > 2 else None  # Mbps, Days
        if unit is None or unit.dimensionality != target.dimensionality:
            continue
        raw = match["n"].lower()
        number = float(_NUMBER_WORDS[raw]) if raw in _NUMBER_WORDS else float(raw)
        try:
            found.append(float(registry.Quantity(number, unit).to(target).magnitude))
        except Exception:
            return None
    if len(set(found)) != 1:
        return None  # none, or two quantities of that measure: which one is this field's
    result = found[0]
    if abs(result - round(result)) > 1e-9 or result == value:
        return None
    if (low is not None and result < low) or (high is not None and result > high):
        return None
    ratio = max(abs(value), abs(result)) / min(abs(value), abs(result))
    if not any(abs(ratio - step) < 1e-6 * step for step in (1, *_SCALE_STEPS)):
        return None
    whole = round(result)
    why = f"{shown(value)} is on another scale; the task's quantity is {whole} in {field_unit}"
    return Fix("unit_conversion", whole, 0.85, why)
