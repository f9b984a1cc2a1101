"""Type conversion (the seed's SCHEMA_TYPE_CONVERSION) and lists: a value of the wrong JSON
type turned into the type the schema asks for, when the conversion keeps its meaning (a value
where a list is due: :mod:`.lists`).

Converted: numeric strings (``"3"``, ``"1,200"``, ``"$45"``, ``"1.200,50"``), whole floats
to integers, booleans as words, numbers to strings, JSON text of an array or object, a single
value into a list (``wrap_in_list``) and a one-item list out of it (``unwrap_list``).

Declined, with the reason: a fraction where an integer is asked for (rounding changes it), a
percentage or a unit (another scale), a separator that could be a decimal point or a thousands
separator (``"1.200"``, ``"1,5"``), a yes/no as a number, several values where one is asked
for, and one value where the task says there are several.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from .bare_numbers import number_for_a_day, prefixed_example, standalone, task_spelling
from .codes import entity_of
from .effective import rules_for
from .fixes import Context, Decline, Fix, schema_types
from .lists import to_array
from .money import minor_scale, read_money, stated_amounts
from .negation import NONE_WORDS, negated_in_task
from .numbers import percent_of
from .objects import coordinates, json_written, lone_field
from .units import unit_name

__all__ = ["convert", "parse_number"]

_TRUE = frozenset({"true", "yes", "y", "on", "1", "enabled", "enable", "t"})
_FALSE = frozenset({"false", "no", "n", "off", "0", "disabled", "disable", "f"})
_NULL = frozenset({"null", "none", "nil", ""})
#: The longest text read as a number (a longer one is some other text, not a number).
_NUMBER_LIMIT = 100
_GROUPED = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")  # 1,200 and 1,200.50
_EU_GROUPED = re.compile(r"^[+-]?\d{1,3}(?:\.\d{3})+,\d+$")  # 1.200,50
_PLAIN = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$")
_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip


def parse_number(text: str) -> tuple[float | None, str]:
    """``(number, "")`` for a number written as text, or ``(None, why not)``."""
    raw = text.strip().lower().replace("\u00a0", " ").replace("_", "")
    if not raw:
        return None, "an empty string is no number"
    if len(raw) > _NUMBER_LIMIT:
        return None, f"{len(raw):,} characters are too long to be a number"
    if raw.endswith("%"):
        return None, f"{text!r} is a percentage: the tool may want 0-1 or 0-100"
    money = read_money(raw)  # a sign or an ISO 4217 code (CLDR), not a currency's name
    marked = money is not None and (len(money.mark) == 3 or not money.mark.isalpha())
    stripped = (money.number if marked and money is not None else raw).strip()
    if stripped in _WORDS:
        return float(_WORDS[stripped]), ""
    compact = stripped.replace(" ", "")
    if re.match(r"^[+-]?\d{1,3}(?:\.\d{3})+$", compact):  # 1.200: 1.2, or 1200 written in German
        return None, f"in {text!r} the separator may be a decimal point or a thousands separator"
    if _PLAIN.match(compact):
        return float(compact), ""
    if _GROUPED.match(compact):
        return float(compact.replace(",", "")), ""
    if _EU_GROUPED.match(compact):
        return float(compact.replace(".", "").replace(",", ".")), ""
    if re.match(r"^[+-]?\d+,\d{1,2}$", compact):
        return None, f"in {text!r} the separator may be a decimal point or a thousands separator"
    if re.match(r"^[+-]?[\d.,]+\s*[a-zµ°]+$", stripped):
        return None, f"{text!r} carries a unit: the tool's may be another"
    return None, f"{text!r} is not a number"


def convert(value: Any, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline | None:
    """``value`` converted to a type ``schema`` allows, or why not; None when the schema names
    no type or the value already has one of its types."""
    types = schema_types(schema)
    if not types or has_type(value, types):
        return None
    reasons: list[str] = []
    for target in sorted(types, key=lambda t: t == "null"):  # null last: a value is meant
        found = _CONVERT[target](value, schema, ctx)
        if isinstance(found, Fix):
            return found
        if isinstance(found, Decline):
            if found.strategy != "schema_type_conversion":
                return found  # a list strategy's own verdict
            reasons.append(found.reason)
    want = " or ".join(types)
    reason = reasons[0] if reasons else f"{_short(value)} cannot become {want}"
    return Decline("schema_type_conversion", reason)


def has_type(value: Any, types: list[str]) -> bool:
    for kind in types:
        if kind == "integer" and _is_int(value):
            return True
        if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if kind == "string" and isinstance(value, str):
            return True
        if kind == "boolean" and isinstance(value, bool):
            return True
        if kind == "array" and isinstance(value, list):
            return True
        if kind == "object" and isinstance(value, Mapping):
            return True
        if kind == "null" and value is None:
            return True
    return False


def _is_int(value: Any) -> bool:
    # a whole float is no int here: JSON Schema lets 3.0 pass, a Python tool may not, so when
    # a tool's error asks for an integer, 3.0 becomes 3
    return isinstance(value, int) and not isinstance(value, bool)


def _fix(value: Any, confidence: float, reason: str) -> Fix:
    return Fix("schema_type_conversion", value, confidence, reason)


def _no(reason: str) -> Decline:
    return Decline("schema_type_conversion", reason)


def _to_integer(value: Any, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline | None:
    if isinstance(value, float) and not math.isfinite(value):
        return _no(f"{value!r} is not a finite number")
    if isinstance(value, float):
        if value.is_integer():
            return _fix(int(value), 0.95, f"{value!r} is the whole number {int(value)}")
        percent = percent_of(value, schema, ctx)
        if percent is not None:
            return percent
        if _CENTS_HINT.search(str(schema.get("description", ""))):
            minor = _minor_amount(value, ctx)
            if minor is not None:
                return minor
        return _no(f"{value!r} is not a whole number: rounding it would change it")
    number = _to_number(value, schema, ctx)
    if not isinstance(number, Fix):
        return number
    got = number.value
    if not float(got).is_integer():
        return Decline(
            number.strategy, f"{_short(value)} is not a whole number: rounding it would change it"
        )
    return Fix(number.strategy, int(got), number.confidence, number.reason)


def _to_number(value: Any, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline | None:
    if isinstance(value, bool):
        return _no("a yes/no is not a number")
    if isinstance(value, (int, float)):
        return None  # already a number: the integer check above decides
    if isinstance(value, list) and len(value) == 1 and not isinstance(value[0], (list, dict)):
        return _unwrap(value, schema, ctx)
    if not isinstance(value, str):
        return _no(f"{_short(value)} is not a number")
    described = _described(value, schema, ctx)
    if described is not None:
        return described
    number, why = parse_number(value)
    if number is None:
        from .numbers import labelled_number

        generic = why.endswith("is not a number") or "carries a unit" in why
        labelled = labelled_number(value, schema, ctx) if generic and "%" not in value else None
        if labelled is not None:
            return labelled
        stamp = _epoch(value, schema, ctx)
        if stamp is not None:
            return stamp
        fraction = _fraction_stated(value, ctx)
        if fraction is not None:
            return fraction
        return _no(why)
    if math.isinf(number) or math.isnan(number):
        return _no(f"{value!r} is not a finite number")
    shown = int(number) if number.is_integer() else number
    return _fix(shown, 0.95, f"the number {value!r} written as {shown!r}")


_EPOCH_HINT = re.compile(r"unix|posix|epoch|seconds since", re.IGNORECASE)
_CENTS_HINT = re.compile(r"cents|smallest currency unit|minor unit", re.IGNORECASE)
_FRACTION_HINT = re.compile(r"as a decimal|as a fraction|e\.?g\.?,? ?\d+% is 0\.", re.IGNORECASE)
_WITH_UNIT = re.compile(r"^\s*(?P<num>[\d.,]+)\s*(?P<unit>[a-zµ]+)\s*$", re.IGNORECASE)


def _described(value: str, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline | None:
    """A number written with what the field's description settles: a currency (checked
    against the call's own currency field, converted to cents where the field counts cents),
    a percentage where the field wants a fraction, a unit the field is in. None when the
    text carries none of these."""
    description = str(schema.get("description", ""))
    money = read_money(value)
    if money is not None:
        currencies = money.currencies
        given = _currency_of(ctx.args)
        if given is not None:
            known = entity_of(given, "currency")
            code = known.code if known is not None else given.upper()
            if code not in currencies:
                return _no(f"{value!r} is in {money.mark}, the call's currency is {code}")
            currencies = (code,)
        number, why = parse_number(money.number)
        if number is None:
            return _no(why)
        if _CENTS_HINT.search(description):
            digits = minor_scale(currencies)
            whole = "." not in money.number and not _stated(number, currencies, ctx.task)
            if digits is None or whole:
                return _no(f"{value!r}: dollars or cents? the field counts the smallest unit")
            cents = round(number * 10**digits)
            return _fix(cents, 0.9, f"{value!r} in the smallest currency unit: {cents}")
        shown = int(number) if number.is_integer() else number
        return _fix(shown, 0.9, f"the amount {value!r} written as {shown!r}")
    if _CENTS_HINT.search(description) and re.fullmatch(r"\s*[\d.,]+\s*", value):
        return _no(f"{value!r}: dollars or cents? the field counts the smallest unit")
    if value.strip().endswith("%"):
        percent = percent_of(value, schema, ctx)
        if percent is not None:
            return percent
        number, why = parse_number(value.strip()[:-1])
        if number is not None and _FRACTION_HINT.search(description):
            fraction = round(number / 100, 10)
            return _fix(fraction, 0.9, f"{value!r} as the fraction the field wants: {fraction}")
        return None
    unit = _WITH_UNIT.match(value)
    if unit:
        written = unit_name(unit["unit"].rstrip("."))
        if written is not None and written == rules_for(schema, ctx.name or "").unit:
            number, why = parse_number(unit["num"])
            if number is None:
                return _no(why)
            shown = int(number) if number.is_integer() else number
            return _fix(shown, 0.9, f"{value!r} in the field's own unit: {shown!r}")
    return None


def _stated(number: float, currencies: tuple[str, ...], task: str | None) -> bool:
    """Whether the task states ``number`` with a mark of one of ``currencies``: an amount
    in whole units, as people write money."""
    return any(
        amount == number and set(marks) & set(currencies)
        for amount, marks in stated_amounts(task or "")
    )


def _minor_amount(value: float, ctx: Context) -> Fix | None:
    """A fractional amount where the field counts the smallest unit (``19.99`` for cents):
    the amount in that unit, when the call's currency (or the task's mark on the same
    amount) says how many digits it has and the value has no more."""
    given = _currency_of(ctx.args)
    marks = [m for amount, m in stated_amounts(ctx.task or "") if amount == value]
    if given is not None:
        known = entity_of(given, "currency")
        currencies: tuple[str, ...] = (known.code,) if known is not None else ()
    else:
        currencies = marks[0] if len(marks) == 1 else ()
    digits = minor_scale(currencies) if currencies and marks else None
    if not digits:
        return None
    scaled = value * 10**digits
    if abs(scaled - round(scaled)) > 1e-6:
        return None
    cents = round(scaled)
    why = f"{value!r} in whole units, as the task writes it; the field counts the smallest: {cents}"
    return _fix(cents, 0.9, why)


def _currency_of(args: Mapping[str, Any]) -> str | None:
    for key, item in args.items():
        if isinstance(key, str) and "currency" in key.lower() and isinstance(item, str):
            return item.strip().lower()
    return None


def _yes_no_beside(value: bool, name: str, task: str) -> str | None:
    """The word for ``value`` the task writes right after the field's name (``DRY_RUN true``,
    ``VERBOSE=False``, ``debug: yes``), as written; None when it writes none or another."""
    pattern = rf"(?<![\w]){re.escape(name)}\s*[=:]?\s*(?P<w>[A-Za-z]+)\b"
    for match in re.finditer(pattern, task[:4000]):
        word = match["w"]
        if len(word) > 1 and word.lower() in (_TRUE if value else _FALSE):
            return word
    return None


def _fraction_stated(value: str, ctx: Context) -> Fix | None:
    """A percentage (``"95%"``) for a number the task itself writes as the fraction
    (``> 0.95``): that fraction; None where the task does not (0-1 or 0-100 is then unknown)."""
    match = re.fullmatch(r"\s*(\d{1,3}(?:\.\d+)?)\s*%\s*", value)
    if match is None or not ctx.task:
        return None
    fraction = round(float(match[1]) / 100, 10)
    written = f"{fraction:g}"
    if not re.search(rf"(?<![\d.]){re.escape(written)}(?![\d.])", ctx.task[:4000]):
        return None
    return _fix(fraction, 0.9, f"{value!r} is {written}, the fraction the task writes")


def _sibling_zone(ctx: Context) -> Any:
    """The one IANA time zone another field of the call holds under a zone's name
    (``timezone``, ``tz``, ``cron_timezone``), as a ``ZoneInfo``; None otherwise."""
    from zoneinfo import ZoneInfo

    from .words import name_tokens

    found = []
    for key, held in ctx.args.items():
        if key == ctx.name or not isinstance(held, str) or "/" not in held:
            continue
        if not {"timezone", "tz", "zone"} & set(name_tokens(str(key))):
            continue
        try:
            found.append(ZoneInfo(held))
        except Exception:
            continue
    return found[0] if len(found) == 1 else None


def _epoch(value: str, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline | None:
    """A date-time written out where the field wants a Unix timestamp (its description says
    so); None when the field says nothing of the kind."""
    if not _EPOCH_HINT.search(str(schema.get("description", ""))):
        return None
    from .dates import read_date

    try:
        day, moment, _ = read_date(value, ctx.now)
    except ValueError as exc:
        return _no(str(exc))
    if moment is not None and moment.tzinfo is None:
        zone = _sibling_zone(ctx)  # "start": "02:00" beside "timezone": "Europe/Berlin"
        moment = moment.replace(tzinfo=zone) if zone is not None else moment
    if moment is None or moment.tzinfo is None:
        return _no(f"{value!r} gives no time zone: the timestamp would be a guess")
    stamp = int(_dt.datetime.combine(day, moment).timestamp())
    return _fix(stamp, 0.95, f"{value!r} as a Unix timestamp")


def _to_boolean(value: Any, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline | None:
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return _fix(True, 0.95, f"{value!r} means true")
        if word in _FALSE:
            return _fix(False, 0.95, f"{value!r} means false")
        if word in NONE_WORDS and negated_in_task(ctx.name, ctx.task):
            # "none" may be "no value" as much as "no"; the task saying no to it settles it
            return _fix(False, 0.9, f"{value!r}, and the task says no to {ctx.name}")
        return _no(f"{value!r} is neither yes nor no")
    if isinstance(value, (int, float)) and value in (0, 1):
        return _fix(bool(value), 0.9, f"{value!r} as a yes/no")
    if isinstance(value, list) and len(value) == 1:
        return _unwrap(value, schema, ctx)
    return _no(f"{_short(value)} is not a yes/no")


#: Names of text fields that often hold digits: a number there is the text it was meant as.
_DIGIT_TEXT = re.compile(
    r"(?:^|_|\b)(?:zip|postal|postcode|code|id|number|num|no|phone|tel|year|page|version|ts|"
    r"pin|account|ref|reference|sku|isbn|flight|room|seat|gate|extension)(?:$|_|\b)",
    re.IGNORECASE,
)


def _to_string(value: Any, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline | None:
    if isinstance(value, bool) and isinstance(schema.get("enum"), list):
        from .enums import match_enum  # a yes/no for an enum of words: its polarity

        return match_enum(value, schema["enum"], ctx)
    if isinstance(value, bool) and ctx.name and ctx.task:
        spelt = _yes_no_beside(value, ctx.name, ctx.task)
        if spelt is not None:  # "DRY_RUN true": the task's own spelling of the value
            return _fix(spelt, 0.9, f"{value!r} as the task writes it beside {ctx.name}: {spelt!r}")
    if isinstance(value, bool) or value is None:
        return _no(f"{_short(value)} as text would be a guess")
    if isinstance(value, (int, float)):
        text = (
            str(value)
            if isinstance(value, int)
            else (str(int(value)) if value.is_integer() else repr(value))
        )
        # a number is the text it was meant as where text is made of digits (a zip code, an
        # id) or where the schema can check it; in any other text field it says nothing
        # about what was meant ("origin": 3)
        spelled = task_spelling(value, text, ctx.task)
        if spelled is not None:
            return _fix(spelled, 0.9, f"the number {value!r} as the task writes it: {spelled!r}")
        dated = number_for_a_day(text, schema, ctx)
        if dated is not None:
            return dated
        example = prefixed_example(str(schema.get("description", "")))
        if example is not None:
            return _no(
                f"the number {value!r} where the description's example {example!r} has a "
                "prefix, which the task does not write with it"
            )
        checked = any(k in schema for k in ("pattern", "format", "enum", "const"))
        spaced = re.sub(r"([a-z])([A-Z])", r"\1_\2", ctx.name)
        said = ctx.task is not None and any(
            standalone(ctx.task, m.start()) for m in re.finditer(
                rf"(?<![\w.]){re.escape(text)}(?![\w])", ctx.task[:4000])
        )  # fmt: skip
        if checked or _DIGIT_TEXT.search(spaced) or said:
            return _fix(text, 0.9, f"the number {value!r} as text")
        return _fix(text, 0.6, f"the number {value!r} as text, in a field not made of digits")
    described = str(schema.get("description", ""))
    plain = isinstance(value, list) and all(
        isinstance(v, (str, int)) and not isinstance(v, bool) for v in value
    )
    if plain and len(value) > 1 and _COMMAND.search(f"{ctx.name} {described}"):
        # an argv where a command line is due: one line; items with spaces may each be a
        # whole command ("git status", "git log"), which one line would not say
        if any(re.search(r"\s", str(v)) or not str(v) for v in value):
            return _no(f"{_short(value)}: several commands, or words with spaces, not one line")
        line = " ".join(str(v) for v in value)
        return _fix(line, 0.9, f"the command's words as one command line: {line!r}")
    if plain and len(value) > 1 and _JOIN_HINT.search(described):
        joined = ",".join(str(v) for v in value)
        return _fix(joined, 0.9, "the list joined as the field's comma-separated text")
    written = json_written(value, ctx.task)
    if written is not None:  # the task writes the object as the text the tool wants
        return _fix(written, 0.9, f"{_short(value)} as the task writes it, JSON text")
    if isinstance(value, list) and value:
        return _unwrap(value, schema, ctx)  # one item taken out; several declined
    return _no(f"{_short(value)} is not text")


#: A field that holds a command line, by its name or description ("cmd", "The command line").
_COMMAND = re.compile(r"(?:^|_|\b)(?:cmd|command(?:[ _]?line)?|shell)(?:$|_|\b)", re.IGNORECASE)
_JOIN_HINT = re.compile(r"comma[- ]separated|separated by commas", re.IGNORECASE)


def _to_object(value: Any, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline | None:
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            parsed = json.loads(value)
        except ValueError:
            return _no(f"{_short(value)} looks like an object but is not valid JSON")
        if isinstance(parsed, dict):
            return _fix(parsed, 0.95, "the object was sent as JSON text")
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], Mapping):
        return _unwrap(value, schema, ctx)
    point = coordinates(value, schema)
    if point is not None:
        return point
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        held = lone_field(value, schema)
        if held is not None:
            return Fix("wrap_in_object", {held: value}, 0.85,
                       f"{_short(value)} is the object's one field {held!r}")  # fmt: skip
    return _no(f"{_short(value)} is not an object")


def _to_null(value: Any, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline | None:
    if isinstance(value, str) and value.strip().lower() in _NULL:
        return _fix(None, 0.9, f"{value!r} means no value")
    return _no(f"{_short(value)} is not empty")


def _unwrap(value: list[Any], schema: Mapping[str, Any], ctx: Context) -> Fix | Decline:
    if len(value) != 1:
        return Decline("unwrap_list", f"{len(value)} values where one is asked for")
    inner = value[0]
    types = schema_types(schema)
    if types and not has_type(inner, types):
        converted = convert(inner, schema, ctx)
        if isinstance(converted, Fix):
            return Fix(
                "unwrap_list",
                converted.value,
                min(0.9, converted.confidence),
                f"a one-item list where one value is asked for; {converted.reason}",
            )
        return Decline("unwrap_list", converted.reason if converted else "no conversion")
    return Fix("unwrap_list", inner, 0.9, "a one-item list where one value is asked for")


_CONVERT = {
    "integer": _to_integer,
    "number": _to_number,
    "boolean": _to_boolean,
    "string": _to_string,
    "array": to_array,
    "object": _to_object,
    "null": _to_null,
}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
