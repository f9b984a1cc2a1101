"""Malformed parameters: realistic ways a model gets a tool's arguments wrong.

Each mutation looks at the arguments (and the tool's JSON Schema when there is one),
returns the keys it can corrupt, and produces a concrete, JSON-able decision that
:func:`apply_mutation` replays on the arguments.

With a schema, only a corruption the schema rejects is drawn (validated with jsonschema,
formats asserted): a corruption the tool's own contract cannot tell from a real request (a
number moved within no bounds, a key added where extra keys are allowed) is no test of an
agent. ``out_of_range`` needs bounds (``minimum``, ``maximum`` and their exclusive forms),
with or without a schema around them.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import random
import re
from collections.abc import Mapping
from typing import Any

_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ].*)?$")
_DATE_FORMATS = ("%B %d, %Y", "%d/%m/%Y", "%m/%d/%Y", "%Y.%m.%d", "%d %b %Y", "%Y%m%d")

MUTATIONS = (
    "wrong_type",
    "reformat_date",
    "out_of_range",
    "missing_required",
    "invalid_enum",
    "unknown_key",
    "formatted_number",
    "unit_suffix",
    "scalar_for_list",
)


def parameters_schema(schema: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The object schema of a tool's parameters, accepting the common wrappers.

    Plain JSON Schema, OpenAI's ``{"parameters": ...}`` (also under ``"function"``) and
    Anthropic's ``{"input_schema": ...}``.
    """
    if not schema:
        return {}
    if "function" in schema and isinstance(schema["function"], Mapping):
        schema = schema["function"]
    for key in ("parameters", "input_schema"):
        inner = schema.get(key)
        if isinstance(inner, Mapping):
            return inner
    return schema


def _props(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, Mapping) else {}


def _as_date(value: Any) -> _dt.date | None:
    if not isinstance(value, str):
        return None
    m = _ISO_DATE.match(value)
    if not m:
        return None
    try:
        return _dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def candidates(mutation: str, args: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """Keys that ``mutation`` can corrupt in ``args`` (sorted, for determinism)."""
    props = _props(schema)
    if mutation == "wrong_type":
        return sorted(k for k, v in args.items() if v is not None)
    if mutation == "reformat_date":
        return sorted(
            k
            for k, v in args.items()
            if _as_date(v) is not None
            or (
                isinstance(props.get(k), Mapping)
                and props[k].get("format") in ("date", "date-time")
                and _as_date(v) is not None
            )
        )
    if mutation == "out_of_range":  # only where there are bounds to break
        return sorted(
            k
            for k, v in args.items()
            if isinstance(v, (int, float))
            and not isinstance(v, bool)
            and isinstance(props.get(k), Mapping)
            and any(_bound(props[k], b) is not None for b in _BOUNDS)
        )
    if mutation == "missing_required":
        if schema:  # with a schema, only keys it requires are "required"
            required = schema.get("required")
            return sorted(k for k in required if k in args) if isinstance(required, list) else []
        return sorted(args)
    if mutation == "invalid_enum":
        return sorted(
            k
            for k in args
            if isinstance(props.get(k), Mapping) and isinstance(props[k].get("enum"), list)
        )
    if mutation == "unknown_key":
        return sorted(args) if args else ["extra"]
    if mutation in ("formatted_number", "unit_suffix"):
        return sorted(
            k
            for k, v in args.items()
            if isinstance(v, (int, float))
            and not isinstance(v, bool)
            and (mutation == "unit_suffix" or abs(v) >= 1000 or _money(k))
        )
    if mutation == "scalar_for_list":
        return sorted(k for k, v in args.items() if isinstance(v, list) and v)
    raise ValueError(f"unknown mutation {mutation!r}")


def _money(name: str) -> bool:
    return bool(re.search(r"amount|price|cost|total|fee|budget|salary", name, re.IGNORECASE))


_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def _bound(prop: Mapping[str, Any], name: str) -> float | None:
    """A numeric bound of a property (a draft-4 boolean ``exclusiveMinimum`` is no bound)."""
    value = prop.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


def decide(
    rng: random.Random,
    allowed: tuple[str, ...],
    args: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
) -> dict[str, Any] | None:
    """Pick one applicable mutation and key; ``None`` when nothing applies. With a schema,
    only a corruption it rejects (where the agent's own arguments met it) is picked: draws
    that it would accept are set aside and another is drawn."""
    schema = parameters_schema(schema)
    options = [(m, k) for m in allowed for k in candidates(m, args, schema)]
    checker = _Rejects.of(schema, args) if schema and options else None
    while options:
        mutation, key = options.pop(rng.randrange(len(options)))
        detail = _decide_one(rng, mutation, key, args, schema)
        if checker is None or checker.rejects(apply_mutation(args, detail)):
            return detail
    return None


class _Rejects:
    """Whether a tool's schema rejects corrupted arguments for a reason the agent's own
    arguments did not already give (formats asserted)."""

    _cache: dict[int, tuple[Mapping[str, Any], Any]] = {}

    def __init__(self, validator: Any, args: Mapping[str, Any]) -> None:
        self.validator = validator
        self.before = self._errors(args)

    @classmethod
    def of(cls, schema: Mapping[str, Any], args: Mapping[str, Any]) -> _Rejects | None:
        """A checker for ``schema``, or None when the schema cannot be used to validate (the
        corruption is then drawn as without a schema)."""
        found = cls._cache.get(id(schema))
        if found is None or found[0] is not schema:
            try:
                from jsonschema.validators import validator_for

                kind = validator_for(schema)
                validator = kind(schema, format_checker=kind.FORMAT_CHECKER)
            except Exception:  # noqa: BLE001 - an unusable schema: no way to tell
                return None
            if len(cls._cache) >= 64:
                cls._cache.clear()
            found = cls._cache[id(schema)] = (schema, validator)
        try:
            return cls(found[1], args)
        except Exception:  # noqa: BLE001 - a schema jsonschema cannot apply ($ref, ...)
            return None

    def _errors(self, args: Mapping[str, Any]) -> set[tuple[Any, ...]]:
        return {
            (tuple(map(str, e.absolute_path)), str(e.validator), str(e.message))
            for e in self.validator.iter_errors(dict(args))
        }

    def rejects(self, corrupted: Mapping[str, Any]) -> bool:
        try:
            return bool(self._errors(corrupted) - self.before)
        except Exception:  # noqa: BLE001 - cannot tell: draw it, as without a schema
            return True


def _decide_one(
    rng: random.Random,
    mutation: str,
    key: str,
    args: Mapping[str, Any],
    schema: Mapping[str, Any],
) -> dict[str, Any]:
    """The decision of ``mutation`` on ``key``."""
    prop = _props(schema).get(key)
    prop = prop if isinstance(prop, Mapping) else {}
    original = args.get(key)
    detail: dict[str, Any] = {"mutation": mutation, "key": key}
    if mutation == "missing_required":
        # the value is gone: only a task that states it can bring it back
        detail.update(original=original, repairable=False)
        return detail
    if mutation == "unknown_key":
        new_key = _misspell(rng, key, set(args)) if key in args else "extra_param"
        detail.update(key=new_key, value=original if key in args else "unexpected")
        detail["repairable"] = True  # the extra key goes, the call is what it was
        return detail
    detail["original"] = original
    if mutation == "wrong_type":
        detail["value"] = _wrong_type(rng, original)
    elif mutation == "reformat_date":
        date = _as_date(original)
        assert date is not None
        detail["value"] = date.strftime(_DATE_FORMATS[rng.randrange(len(_DATE_FORMATS))])
    elif mutation == "out_of_range":
        detail["value"] = _out_of_range(rng, original, prop)
    elif mutation == "invalid_enum":
        detail["value"] = _not_in_enum(rng, list(prop["enum"]), original)
    elif mutation == "formatted_number":
        text = f"{original:,}" if isinstance(original, int) else f"{original:,.2f}"
        detail["value"] = f"${text}" if _money(key) and rng.random() < 0.5 else text
    elif mutation == "unit_suffix":
        unit = _UNITS[rng.randrange(len(_UNITS))]
        detail["value"] = f"{original} {unit}"
    elif mutation == "scalar_for_list":
        items = list(original) if isinstance(original, list) else [original]
        detail["value"] = items[0] if len(items) == 1 else ", ".join(map(str, items))
    detail["repairable"] = repairable(mutation, original, detail["value"], prop)
    return detail


def repairable(mutation: str, original: Any, value: Any, prop: Mapping[str, Any]) -> bool:
    """Whether the corrupted ``value`` still holds what ``original`` said, so a repair can
    bring back the same request: a number as text or as a word, a date in another unambiguous
    layout, an enum value in another case or with a suffix. Not: a value out of range (what
    was meant is gone), a date whose day and month could be swapped, a string replaced by its
    length, a list joined into text, a number outside the enum."""
    if mutation == "unknown_key":
        return True
    if mutation in ("missing_required", "out_of_range"):
        return False
    if mutation == "reformat_date":
        date = _as_date(original)
        if date is None or not isinstance(value, str):
            return False
        numeric = re.fullmatch(r"(\d{1,2})/(\d{1,2})/\d{4}", value)
        return not (numeric and date.day <= 12 and date.day != date.month)
    if mutation == "wrong_type":
        if isinstance(original, str) and isinstance(value, int) and not isinstance(value, bool):
            # "2" sent as 2, where the schema can tell digits are its text (a pattern, a
            # format, an enum); in free text a number says nothing of what was meant, and a
            # string's length is not the string
            checked = any(k in prop for k in ("pattern", "format", "enum", "const"))
            return str(value) == original and checked
        # a list joined into text: its items cannot be told apart again
        return not (isinstance(original, (list, tuple)) and isinstance(value, str))
    if mutation == "formatted_number":
        return isinstance(original, int) or (
            isinstance(original, float) and original == round(original, 2)
        )
    if mutation == "unit_suffix":
        return False  # the tool's unit may be another: what was meant cannot be known
    if mutation == "scalar_for_list":
        return isinstance(original, list) and len(original) == 1  # a joined list is lost
    if mutation == "invalid_enum":
        # a variant of the agent's own value; a number outside the enum says nothing
        return isinstance(value, str) and isinstance(original, str) and value != "unknown"
    return False


def apply_mutation(args: Mapping[str, Any], detail: Mapping[str, Any]) -> dict[str, Any]:
    """Return a copy of ``args`` with the decided mutation applied."""
    out = dict(args)
    if detail["mutation"] == "missing_required":
        out.pop(detail["key"], None)
    else:
        out[detail["key"]] = detail["value"]
    return out


def _wrong_type(rng: random.Random, value: Any) -> Any:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value) if rng.random() < 0.5 else _spell(value)
    if isinstance(value, float):
        return f"{value}"
    if isinstance(value, str):
        try:
            return int(value)  # "2" -> 2: the model sent a number where a string was due
        except ValueError:
            return [value] if rng.random() < 0.5 else len(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, Mapping):
        return json.dumps(value, default=str)
    return str(value)


_UNITS = ("km", "kg", "mi", "lbs", "USD", "EUR", "%", "ms", "GB")

_NUMBER_WORDS = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
)


def _spell(value: int) -> str:
    return (
        _NUMBER_WORDS[value] if 0 <= value < len(_NUMBER_WORDS) else f"{value:,}".replace(",", " ")
    )


def _out_of_range(rng: random.Random, value: Any, prop: Mapping[str, Any]) -> Any:
    """A number past one of the property's bounds (``candidates`` only offers keys that have
    one): at an exclusive bound itself, or 1, 10 or 100 (1000 above) beyond it."""
    low = _bound(prop, "minimum")
    low_x = _bound(prop, "exclusiveMinimum")
    high = _bound(prop, "maximum")
    high_x = _bound(prop, "exclusiveMaximum")
    lows = [b for b in (low, low_x) if b is not None]
    highs = [b for b in (high, high_x) if b is not None]
    is_int = isinstance(value, int)
    if lows and (not highs or rng.random() < 0.5):
        gap = rng.choice((1, 10, 100))
        edge = max(lows)
        out = edge - gap
    else:
        gap = rng.choice((1, 10, 1000))
        edge = min(highs)
        out = edge + gap
    if is_int and float(out).is_integer():
        return int(out)
    return float(out)


def _not_in_enum(rng: random.Random, enum: list[Any], original: Any = None) -> Any:
    """A value outside ``enum``: a variant of the value the agent chose (its case, a suffix,
    another separator), as a model writes it wrong; the agent's choice is still in it."""
    strings = [e for e in enum if isinstance(e, str)]
    if strings:
        # the agent's own value, even one outside the enum ("business class"): what it meant
        # stays in the corrupted text
        base = original if isinstance(original, str) else strings[rng.randrange(len(strings))]
        swapped = _transpose(rng, base)
        variants = [
            base.upper(),
            base.replace("_", " ").title() + " Class"
            if "class" not in base.lower()
            else base.title(),
            base + "s",
            base.replace("_", "-").replace(" ", "-") + "-class",
            *([swapped] if swapped else []),
        ]
        variants = [v for v in variants if v not in enum]
        if variants:
            return variants[rng.randrange(len(variants))]
    numbers = [e for e in enum if isinstance(e, (int, float)) and not isinstance(e, bool)]
    if numbers:
        return max(numbers) + 1
    return "unknown"


def _transpose(rng: random.Random, word: str) -> str | None:
    """``word`` with two neighbouring letters swapped (a typo), or None for a short word."""
    letters = [i for i in range(1, len(word) - 2) if word[i].isalpha() and word[i + 1].isalpha()]
    if len(word) < 5 or not letters:
        return None
    i = letters[rng.randrange(len(letters))]
    if word[i] == word[i + 1]:
        return None
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def _misspell(rng: random.Random, key: str, taken: set[str]) -> str:
    """A plausible typo of ``key`` that is not already an argument name."""
    candidates = [key[:i] + key[i + 1 :] for i in range(1, len(key) - 1)]  # drop one letter
    rng.shuffle(candidates)
    for candidate in [*candidates, key + "_", key + "_value"]:
        if candidate and candidate not in taken and candidate != key:
            return candidate
    n = 2
    while f"{key}_{n}" in taken:
        n += 1
    return f"{key}_{n}"
