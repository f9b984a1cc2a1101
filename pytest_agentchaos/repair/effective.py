"""The effective schema: what a field's description says beyond its JSON Schema.

Tools often state constraints only in prose: allowed values ("Allowed: date, rating",
"One of dall-e-2, dall-e-3", "Options include 'Value', 'Flexible'", each quoted in
parentheses after its gloss: "local branches ('local') or all branches ('all')"), ranges
("between 1 and 30", "from 1 (normal) to 4 (urgent)", "(1-20, default 10)", "max 50000"),
the unit or currency ("in meters", "in euros", "in degrees Celsius", a name ending
``_minutes``), defaults phrased as facts or instructions ("Default: snippet,id", "defaults
to 'units'", "use X if none is given") and glosses of values ("0 = No priority, 1 =
Urgent", "standard (Kelvin), metric (Celsius)"). Each is compiled once per sub-schema into
:class:`Rules`, with the span of the description it came from (its provenance), and the
repairer checks every round and the final call against them as against the schema itself.
An open list ("etc.") constrains nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .enums import FUNCTION_WORDS
from .spec import Problem, checker_for, nullable_branch
from .units import unit_name, unit_of
from .words import name_tokens

__all__ = ["Rules", "effective_problems", "relayout", "rules_for", "shape_of"]


@dataclass(frozen=True)
class Rules:
    """What one field's description says: ``enum`` (allowed values), ``minimum`` and
    ``maximum``, ``unit``, ``default`` (``has_default`` tells a default of None from none;
    ``default_if_unstated``: the description makes it an instruction for when the user states
    no value, "use X if none is given", which only the task can show to hold),
    ``layout`` (an example the description gives a value's format by, digits and marks
    only: "in the format '1234567890.123456'"), ``glosses`` (a word or phrase -> the value
    it glosses) and ``provenance`` (constraint ->
    the span of the description that states it)."""

    enum: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    unit: str | None = None
    default: Any = None
    has_default: bool = False
    default_if_unstated: bool = False
    layout: str = ""
    glosses: Mapping[str, Any] = field(default_factory=dict)
    provenance: Mapping[str, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.enum or self.minimum is not None or self.maximum is not None
                    or self.unit or self.has_default or self.glosses or self.layout)  # fmt: skip


_EMPTY = Rules()
_CACHE: dict[str, Rules] = {}

_LIST_HEAD = re.compile(
    r"\b(?:allowed(?: values)?(?: are)?|one of(?: the followings?)?|options(?: include| are)?"
    r"|valid values(?: are)?|possible values(?: are)?|must be one of|accepted values(?: are)?"
    # "One route restriction: tolls, highways or ferries": one of what the colon lists
    r"|(?P<one>one(?:\s+[a-z]+){1,3}(?=\s*:)))"
    r"\s*:?\s*(?P<list>[^.;\n]{1,300})",
    re.IGNORECASE,
)
_BETWEEN = re.compile(
    r"\bbetween\s+(?P<a>-?\d+(?:\.\d+)?)\s+(?:and|to)\s+(?P<b>-?\d+(?:\.\d+)?)"
    r"|\b(?:from|range(?:s)? from)\s+(?P<c>-?\d+(?:\.\d+)?)(?:\s*\([^)]{1,40}\))?\s+to\s+"
    r"(?P<d>-?\d+(?:\.\d+)?)"
    r"|\((?P<e>-?\d+(?:\.\d+)?)\s*-\s*(?P<f>-?\d+(?:\.\d+)?)\b",
    re.IGNORECASE,
)
_MAX = re.compile(r"\((?:max(?:imum)?)\s+(?P<m>\d+(?:\.\d+)?)\b", re.IGNORECASE)
_DEFAULT = re.compile(
    r"\bdefault(?:s)?(?: value)?(?: is| to|:)?\s+"
    r"(?P<v>'[^']{1,60}'|\"[^\"]{1,60}\"|\[[^\]]{0,120}\]|[^\s.,;)]+(?:,[^\s.,;)]+)*)",
    re.IGNORECASE,
)
_USE_IF = re.compile(
    r"\buse\s+(?P<v>'[^']{1,60}'|\"[^\"]{1,60}\"|\S+)\s+(?:as\s+[^.,;]{1,40}?\s+)?"
    r"(?:if|when|unless)\s+(?:none|not|no)\b",
    re.IGNORECASE,
)
_GLOSS_EQ = re.compile(
    r"(?P<v>-?(?<!\d)\d+(?:\.\d+)?)\s*=\s*(?P<w>[A-Za-z][\w ]{0,30}?)(?=\s*(?:,|;|\.|$))"
)
_WORD_BEFORE_QUOTED = re.compile(
    r"\b(?P<w>[A-Za-z]{3,30})\s*\(\s*(?P<q>[\"'`])(?P<v>[^\"'`()]{1,40})(?P=q)\s*\)"
)
_GLOSS_PAREN = re.compile(r"(?<![^\s(),])(?P<v>[^\s(),]+)\s*\((?P<w>[A-Za-z][\w ]{0,30})\)")
_UNIT_SAID = re.compile(r"(?:单位|單位|単位|단위)\s*[:：]?\s*(?P<u>[^\s\d，,。；;（()）:：]{1,6})")
#: A description that opens with the unit its number counts, in the plural, then what is
#: counted ("Minutes before re-notifying", "Seconds to wait before the next channel").
_UNIT_FIRST = re.compile(
    r"\s*(?P<u>[A-Za-z]{3,20}s)\s+(?:to|before|until|after|between|since|of|for|per)\b"
)
_UNIT_IN = re.compile(
    r"\bin\s+(?P<u>[a-z]+)\b(?:\s+per\s+(?P<per>[a-z]+)\b|\s+(?P<v>[a-z]+)\b)?", re.IGNORECASE
)
#: An example given as a value's format: digits and marks only (letters are a date's or a
#: name's layout, read elsewhere), two runs of digits at least.
_FORMAT_EXAMPLE = re.compile(
    r"\b(?:in the format|formatted as|format(?: is)?:?)\s+"
    r"['\"`](?P<x>\+?\d+(?:[.:/,_+-]\d+)+)['\"`]",
    re.IGNORECASE,
)
_QUOTED_IN_PARENS = re.compile(
    r"\(\s*(?:'([\w.:/+-]{1,40})'|\"([\w.:/+-]{1,40})\"|`([\w.:/+-]{1,40})`)\s*\)"
)
#: Words that end a listed value's run and are no value.
_OPEN = re.compile(r"\betc\b|\.\.\.|\band (?:so on|more)\b|\be\.g\.|\bsuch as\b", re.IGNORECASE)


def rules_for(schema: Mapping[str, Any], name: str = "") -> Rules:
    """The rules a sub-schema's description states (cached by the schema and name)."""
    if not isinstance(schema, Mapping):
        return _EMPTY
    schema = nullable_branch(schema) or schema
    description = schema.get("description")
    if not isinstance(description, str) or not description.strip():
        unit = _unit_of_name(name)
        return Rules(unit=unit) if unit else _EMPTY
    try:
        key = name + "\x00" + json.dumps(schema, sort_keys=True, default=repr)[:4000]
    except (TypeError, ValueError, RecursionError):
        return _EMPTY
    found = _CACHE.get(key)
    if found is None:
        found = _compile(schema, description[:2000], name)
        if len(_CACHE) > 4096:
            _CACHE.clear()
        _CACHE[key] = found
    return found


def _unit_of_name(name: str) -> str | None:
    """The unit a name states by one of its words (``radius_m``, ``days_ahead``)."""
    tokens = name_tokens(name)
    if len(tokens) < 2:
        return None
    units = {u for t in tokens if len(t) > 2 and (u := unit_name(t)) is not None}
    if not units and (last := unit_name(tokens[-1])) is not None:
        units = {last}  # radius_m, timeout_s, ttl_h
    return units.pop() if len(units) == 1 else None


def _typed(raw: str, schema: Mapping[str, Any]) -> Any:
    text = raw.strip().strip("'\"")
    kind = schema.get("type")
    if kind in ("integer", "number"):
        try:
            number = float(text)
        except ValueError:
            return None
        return int(number) if kind == "integer" and number.is_integer() else number
    if kind == "boolean":
        return {"true": True, "false": False}.get(text.lower())
    if kind == "array" and raw.strip().startswith("["):
        try:
            return json.loads(raw.strip().replace("'", '"'))
        except ValueError:
            return None
    return text


def _listed(text: str) -> list[str]:
    quoted = re.findall(r"'([^']{1,40})'|\"([^\"]{1,40})\"|`([^`]{1,40})`", text)
    if quoted:
        return [next(v for v in q if v) for q in quoted]
    parts = re.split(r"\s*(?:,|\||/|\bor\b|\band\b)\s*", text.strip())
    return [p.strip() for p in parts if p.strip()]


def _compile(schema: Mapping[str, Any], description: str, name: str) -> Rules:
    values: dict[str, Any] = {}
    provenance: dict[str, str] = {}
    kind = schema.get("type")
    if kind in ("string", None) and "enum" not in schema:
        head = _LIST_HEAD.search(description)
        if (
            head is not None
            and not _OPEN.search(head["list"])
            # after "one <thing>:" only a choice ("a, b or c"), not the parts of one value
            and (head["one"] is None or re.search(r"\bor\b|\|", head["list"]))
        ):
            listed = _listed(head["list"])
            if 2 <= len(listed) <= 40 and all(re.fullmatch(r"[\w$.+:/-]{1,40}", v) for v in listed):
                values["enum"] = tuple(listed)
                provenance["enum"] = head.group(0)[:200]
    if kind in ("string", None) and "enum" not in schema and "enum" not in values:
        # "local branches ('local'), remote branches ('remote') or all branches ('all')":
        # each value quoted in parentheses after the words that gloss it
        quoted = _QUOTED_IN_PARENS.findall(description)
        if 2 <= len(quoted) <= 40 and not _OPEN.search(description):
            values["enum"] = tuple(dict.fromkeys(next(v for v in q if v) for q in quoted))
            spans = [m.group(0) for m in _QUOTED_IN_PARENS.finditer(description)]
            provenance["enum"] = "; ".join(spans)[:200]
    numeric = kind in ("integer", "number") or (
        kind == "string" and bool(re.search(r"\bhow many\b|\bnumber of\b", description, re.I))
    )
    if numeric:
        bounds = _BETWEEN.search(description)
        if bounds is not None:
            pairs = [
                (bounds["a"], bounds["b"]),
                (bounds["c"], bounds["d"]),
                (bounds["e"], bounds["f"]),
            ]
            low, high = next((float(a), float(b)) for a, b in pairs if a is not None)
            if low <= high:
                values["minimum"], values["maximum"] = low, high
                provenance["range"] = bounds.group(0)
        most = _MAX.search(description)
        if most is not None and "maximum" not in values:
            values["maximum"] = float(most["m"])
            provenance["range"] = most.group(0)
    unit = _unit_of_name(name)
    if unit is None:
        for match in _UNIT_IN.finditer(description):
            word = match["u"]
            if len(word) > 2 and unit_name(word) is None and unit_of(word) and match["v"]:
                word = match["v"].lower()  # "in degrees Celsius": a measure word, its scale
            if len(word) > 2 and unit_name(word) is not None:
                unit = unit_name(word)
                per = unit_name(match["per"]) if match["per"] else None
                if per is not None:  # "in bits per second": a rate
                    unit = f"{unit} / {per}"
                provenance["unit"] = match.group(0)
                break
    if unit is None:  # "Minutes before re-notifying", "Seconds to wait": the unit first
        first = _UNIT_FIRST.match(description)
        if first is not None and unit_name(first["u"].lower()) is not None:
            unit = unit_name(first["u"].lower())
            provenance["unit"] = first.group(0)
    if unit is None:  # "单位：米", "単位: キロメートル": a unit named after the word for unit
        said = _UNIT_SAID.search(description)
        if said is not None and unit_name(said["u"]) is not None:
            unit = unit_name(said["u"])
            provenance["unit"] = said.group(0)
    if unit:
        values["unit"] = unit
    for pattern in (_DEFAULT, _USE_IF):
        said = pattern.search(description)
        if said is None:
            continue
        typed = _typed(said["v"], schema)
        if typed is not None and typed != "" and _fits(typed, schema, values.get("enum")):
            values["default"], values["has_default"] = typed, True
            values["default_if_unstated"] = pattern is _USE_IF
            provenance["default"] = said.group(0)
            break
    example = _FORMAT_EXAMPLE.search(description) if kind in ("string", None) else None
    if example is not None and "pattern" not in schema and "format" not in schema:
        values["layout"] = example["x"]
        provenance["layout"] = example.group(0)
    glosses: dict[str, Any] = {}
    for match in _GLOSS_EQ.finditer(description):
        glosses[_plain(match["w"])] = _typed(match["v"], schema)
    for match in _GLOSS_PAREN.finditer(description):
        value = _typed(match["v"], schema)
        allowed = schema.get("enum") or values.get("enum")
        if value is not None and (not allowed or value in allowed):
            glosses[_plain(match["w"])] = value
    for match in _WORD_BEFORE_QUOTED.finditer(description):
        # 'archived automatically ("always") or not ("manual")': the word before a quoted
        # value in parentheses glosses it (a function word or a no glosses nothing)
        allowed = schema.get("enum") or values.get("enum")
        word = match["w"].lower()
        named = word not in FUNCTION_WORDS and not _NEGATED.search(word)
        if allowed and match["v"] in allowed and named:
            glosses.setdefault(word, match["v"])
    for words, raw in _listed_glosses(description):
        value = _typed(raw, schema)
        allowed = schema.get("enum") or values.get("enum")
        if value is not None and (not allowed or value in allowed):
            glosses.setdefault(_plain(words), value)
    glosses = {k: v for k, v in glosses.items() if v is not None and k}
    if glosses:
        values["glosses"] = glosses
        provenance["glosses"] = "; ".join(f"{k} = {v}" for k, v in list(glosses.items())[:6])
    if not values:
        return _EMPTY
    return Rules(**values, provenance=provenance)


#: One item of a list of numbered glosses: "1 返回下一级", "2: two levels", "0 - none".
_GLOSS_ITEM = re.compile(
    r"^\s*(?P<v>-?\d+)\s*(?:[:：=\-–]\s*|\s+)(?P<w>[^\d\s].{0,40}?)\s*[.。]?\s*$"
)
#: Words that say no: in English, and the CJK negators (不 没 無 无 非 未 勿 别 否).
_NEGATED = re.compile(r"\b(?:no|not|never|none|without|don't|doesn't)\b|[不没沒無无非未勿别否]")


def _listed_glosses(description: str) -> list[tuple[str, str]]:
    """``(words, value)`` of a description that lists numbered glosses, items apart by
    semicolons or lines ("子级行政区：0 不返回下级行政区；1 返回下一级；2 返回下两级"): two
    items at least, each value once."""
    head = description[:1000]
    pieces = re.split(r"[;；\n]", head)
    if len(pieces) < 2:
        return []
    if "：" in pieces[0] or ":" in pieces[0]:
        pieces[0] = re.split(r"[:：]", pieces[0], maxsplit=1)[1]
    found = []
    for piece in pieces:
        match = _GLOSS_ITEM.match(piece)
        if match is not None:
            found.append((match["w"], match["v"]))
    values = [v for _, v in found]
    if len(found) < 2 or len(set(values)) != len(values):
        return []
    return found


def _stems(text: str) -> str:
    """Words without a plural's ``s`` or an adverb's ``-ly``: "levels" and "level",
    "automatically" and "automatic" are one word to a fragment."""
    return " ".join(_stem(w) for w in text.split())


def _stem(word: str) -> str:
    if len(word) > 7 and word.endswith("ically"):
        return word[:-4]  # automatically -> automatic
    if len(word) > 5 and word.endswith("ly"):
        return word[:-2]  # directly -> direct
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _plain(text: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", text.casefold()))


def _fits(value: Any, schema: Mapping[str, Any], enum: Any) -> bool:
    if enum and value not in enum:
        return False
    try:
        return bool(checker_for(schema).is_valid(value))
    except Exception:
        return False


def gloss(value: Any, rules: Rules) -> Any:
    """The value a word stands for by the description's glosses, or None."""
    if not isinstance(value, str) or not rules.glosses:
        return None
    plain = _plain(value)
    if plain in rules.glosses:
        return rules.glosses[plain]
    # a fragment of exactly one gloss ("下一级" of "返回下一级"): for text written without
    # spaces a run of characters, else whole words; the gloss's other words are its own
    if len(plain) < 2:
        return None
    spaced = " " in plain or plain.isascii()
    holding = {
        v for k, v in rules.glosses.items()
        if (f" {_stems(plain)} " in f" {_stems(k)} " if spaced else plain in k)
        and not _NEGATED.search(k.replace(plain, " "))  # "下级" of "不返回下级": said no to
    }  # fmt: skip
    return holding.pop() if len(holding) == 1 else None


def effective_problems(spec: Any, args: Any) -> list[Problem]:
    """What the call breaks of what its fields' descriptions state (values outside a prose
    enum or range), as problems whose ``source`` is ``description``."""
    from .reading import leaf_values

    found: list[Problem] = []
    if not isinstance(args, Mapping):
        return found
    _tagged_problems(args, spec.resolved, (), found, 0)
    for path, value in leaf_values(args):
        if isinstance(value, bool) or value is None:
            continue
        name = next((str(p) for p in reversed(path) if isinstance(p, str)), "")
        schema = spec.schema_at(path)
        rules = rules_for(schema, name)
        dated = _off_layout(value, schema, path)
        if dated is not None:
            found.append(dated)
            continue
        if rules.empty:
            continue
        if rules.enum and isinstance(value, str) and value not in rules.enum:
            merged = {**schema, "enum": list(rules.enum)}
            found.append(Problem("enum", path, f"{value!r} is not one of the values its "
                                 f"description allows ({rules.provenance.get('enum', '')})",
                                 "description", list(rules.enum), value, merged,
                                 "description"))  # fmt: skip
            continue
        if (
            rules.layout
            and isinstance(value, str)
            and not re.fullmatch(shape_of(rules.layout), value)
        ):
            merged = {**schema, "pattern": f"^{shape_of(rules.layout)}$",
                      "x-layout-example": rules.layout}  # fmt: skip
            found.append(Problem("pattern", path, f"{value!r} is not in the format its "
                                 f"description gives ({rules.provenance.get('layout', '')})",
                                 "description", merged["pattern"], value, merged,
                                 "description"))  # fmt: skip
            continue
        number = _number(value)
        if number is None:
            continue
        low, high = rules.minimum, rules.maximum
        if (low is not None and number < low) or (high is not None and number > high):
            merged = dict(schema)
            if low is not None:
                merged.setdefault("minimum", int(low) if low.is_integer() else low)
            if high is not None:
                merged.setdefault("maximum", int(high) if high.is_integer() else high)
            found.append(Problem("range", path, f"{value!r} is outside what its description "
                                 f"allows ({rules.provenance.get('range', '')})", "description",
                                 [low, high], value, merged, "description"))  # fmt: skip
    return found


def _off_layout(value: Any, schema: Mapping[str, Any], path: Any) -> Problem | None:
    """A text that is no date in the layout the field's description names (``"26"`` where it
    says ``YYYY-MM-DD``), as a ``format`` problem; None when it is one, or nothing is named."""
    import datetime as dt

    from .date_layouts import described_layout

    if not isinstance(value, str):
        return None
    layout = described_layout(schema)
    if layout is None:
        return None
    try:
        dt.datetime.strptime(value, layout)
    except ValueError:
        shown = dt.date(2024, 10, 26).strftime(layout)
        return Problem("format", path, f"{value!r} is not a date written as {shown!r}, as its "
                       "description asks", "description", None, value, schema,
                       "description")  # fmt: skip
    return None


def shape_of(example: str) -> str:
    """A regex of the values written like ``example``: each run of digits any run of digits,
    each mark itself (``1234567890.123456`` -> ``\\d+\\.\\d+``)."""
    return "".join(r"\d+" if part.isdigit() else re.escape(part)
                   for part in re.findall(r"\d+|\D", example))  # fmt: skip


def relayout(value: str, example: str) -> str | None:
    """``value``'s digits with the marks ``example`` writes between its own, where the value
    has exactly the example's digits and no marks of its own (``1729587600123456`` ->
    ``1729587600.123456``); None otherwise."""
    if not value.isdigit():
        return None
    runs = re.findall(r"\d+|\D", example)
    if sum(len(r) for r in runs if r.isdigit()) != len(value):
        return None
    out, at = [], 0
    for part in runs:
        if part.isdigit():
            out.append(value[at : at + len(part)])
            at += len(part)
        else:
            out.append(part)
    return "".join(out)


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+(?:\.\d+)?\s*", value):
        return float(value)
    return None


def tagged_branch(value: Any, schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The member of a union of objects that ``value`` names by a tag: a field every member
    has with a default of its own (pydantic's ``channel: ChannelType = "sms"``), whose value
    in ``value`` is exactly one member's default. Where each member types the field by the
    shared enum, any member accepts any tag, and a looser member accepts what the tagged one
    refuses; the tag says which one it is. None where no field tells the members apart."""
    branches = schema.get("anyOf") or schema.get("oneOf")
    if not isinstance(value, Mapping) or not isinstance(branches, list):
        return None
    members = [b for b in branches if isinstance(b, Mapping)
               and isinstance(b.get("properties"), Mapping)]  # fmt: skip
    if len(members) < 2:
        return None
    for key, sent in list(value.items())[:50]:
        if not isinstance(sent, str):
            continue
        fields = [m["properties"].get(key) for m in members]
        tags = [f.get("default") for f in fields if isinstance(f, Mapping)]
        if len(tags) != len(members) or not all(isinstance(t, str) for t in tags):
            continue
        if len(set(tags)) == len(tags) and tags.count(sent) == 1:
            return members[tags.index(sent)]
    return None


def _tagged_problems(
    value: Any, schema: Any, path: tuple[Any, ...], found: list[Problem], depth: int
) -> None:
    """The texts of objects a union's tag names a member for (:func:`tagged_branch`) that
    break that member's patterns, as problems of kind ``pattern``."""
    if depth > 20 or not isinstance(schema, Mapping):
        return
    schema = nullable_branch(schema) or schema
    if isinstance(value, Mapping):
        tagged = tagged_branch(value, schema)
        if tagged is not None:
            schema = tagged
            for key, text in value.items():
                child = schema["properties"].get(key)
                pattern = child.get("pattern") if isinstance(child, Mapping) else None
                if not (isinstance(text, str) and isinstance(pattern, str)):
                    continue
                try:
                    if re.search(pattern, text):
                        continue
                except re.error:
                    continue
                why = f"{text!r} does not match {pattern!r}, the shape of the member its tag names"
                found.append(
                    Problem("pattern", (*path, key), why, "description", pattern, text, child,
                            "description")
                )  # fmt: skip
        props = schema.get("properties")
        for key, item in value.items():
            if isinstance(props, Mapping) and isinstance(props.get(key), Mapping):
                _tagged_problems(item, props[key], (*path, key), found, depth + 1)
    elif isinstance(value, list):
        items = schema.get("items")
        for i, item in enumerate(value[:200]):
            _tagged_problems(item, items, (*path, i), found, depth + 1)
