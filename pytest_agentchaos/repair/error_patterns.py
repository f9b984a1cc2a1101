"""The error -> problem table: ordered message patterns (:data:`ERROR_PATTERNS`, the seed's
error -> strategy map) that read the field, and where the message says it the allowed values,
layout, type or bound, from a tool's error text; a policy can extend the table in front."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .error_bodies import TYPE_WORDS, json_problems, listed_values
from .paths import path_of
from .reading import resolve_name
from .spec import Problem, ToolSpec

__all__ = ["ERROR_PATTERNS", "ErrorPattern", "error_problems"]

#: A field's name, quoted or not; bounded, so a long token costs each pattern linear time.
_FIELD = r"(?<![\w.\-\[\]'\"`])['\"`]?(?P<field>[A-Za-z_][\w.\-\[\]]{0,79})['\"`]?"


@dataclass(frozen=True)
class ErrorPattern:
    """One row of the error -> problem table: a regex over the error text whose named groups
    give ``field`` and, where the message says it, ``expected`` (allowed values, a layout, a
    type or a bound); ``kind`` is the :class:`~.spec.Problem` kind it reports, ``keyword``
    the schema keyword it stands for (``minimum`` for a lower bound...)."""

    name: str
    regex: str
    kind: str
    keyword: str = ""

    def compiled(self) -> re.Pattern[str]:
        return _compiled(self.regex)

    def may_match(self, lowered: str) -> bool:
        """A cheap test first: whether the lowercased text holds one of the words every match
        of a default row holds (a profile's own rows are always tried)."""
        words = _HINTS.get(self.name)
        return words is None or any(w in lowered for w in words)


@functools.lru_cache(maxsize=512)
def _compiled(regex: str) -> re.Pattern[str]:
    return re.compile(regex, re.IGNORECASE)


#: The default table, most specific first. Field names are read from the message; allowed
#: values, layouts, types and bounds too where the message gives them.
ERROR_PATTERNS: tuple[ErrorPattern, ...] = (
    ErrorPattern(
        "python_missing_arguments",
        r"missing \d+ required (?:positional |keyword-only )?arguments?: (?P<fields>.+)",
        "missing",
    ),
    ErrorPattern(
        "python_unexpected_argument",
        r"(?:got an )?unexpected keyword argument " + _FIELD,
        "unknown",
    ),
    ErrorPattern(
        "additional_properties",
        r"additional properties are not allowed \(" + _FIELD + r" (?:was|were) unexpected\)",
        "unknown",
    ),
    ErrorPattern(
        "required_property", _FIELD + r" is a required (?:property|field|parameter)", "missing"
    ),
    ErrorPattern(  # an identifier, not a word of prose: "due_at is required", "dueAt is ..."
        "is_required",
        r"(?<![\w.\-'\"`])['\"`]?(?P<field>(?-i:[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*))"
        r"['\"`]? is (?:required|mandatory)\b(?! (?:to|for|in order)\b)",
        "missing",
    ),
    ErrorPattern(
        "missing_parameter",
        r"(?:missing|no) (?:required |mandatory )?(?:parameter|argument|field|property|key|value)"
        r"s?(?: for)?[:\s]+" + _FIELD,
        "missing",
    ),
    ErrorPattern(
        "parameter_required",
        r"(?:parameter|argument|field|property) " + _FIELD + r" (?:is )?(?:required|missing)",
        "missing",
    ),
    ErrorPattern(
        "unknown_parameter",
        r"(?:unknown|unrecognized|unrecognised|unexpected|invalid|unsupported) "
        r"(?:parameter|argument|field|property|key)(?: name)?s?[:\s]+" + _FIELD,
        "unknown",
    ),
    ErrorPattern(
        "date_layout",
        r"(?:invalid )?(?:date(?:time)? )?format (?:for|of|in) "
        + _FIELD
        + r"[^\n]{0,120}?(?:expected|use|should be|must be|required)[:\s]*(?P<expected>"
        r"YYYY-MM-DD(?:[T ]HH:MM(?::SS)?)?|[DMY]{2,4}[/.\-][DMY]{2,4}[/.\-][DMY]{2,4}"
        r"|ISO[ -]?8601|RFC ?3339)",
        "format",
    ),
    ErrorPattern(
        "date_must_be",
        _FIELD + r"[^.\n]{0,40}? (?:must|should) be (?:a |an |in )?(?:valid )?(?:the )?"
        r"(?:format )?(?P<expected>YYYY-MM-DD|ISO[ -]?8601(?: date)?|date(?:-time)?)\b",
        "format",
    ),
    ErrorPattern(
        "mutually_exclusive",
        r"(?:cannot|can't|can ?not|must not|may not|do not|don't) (?:both )?(?:specify|use|set"
        r"|provide|pass|send|combine|give|supply|include) (?:both )?"
        + _FIELD
        + r",? (?:and|&|with|together with) "
        + _FIELD.replace("field", "other"),
        "exclusive",
    ),
    ErrorPattern(
        "are_mutually_exclusive",
        _FIELD + r",? and " + _FIELD.replace("field", "other") + r" (?:are|is) mutually exclusive",
        "exclusive",
    ),
    ErrorPattern(
        "in_the_past",
        _FIELD + r"[^.\n]{0,40}? (?:is|was|cannot be|can't be|must not be|may not be) "
        r"(?:in the past|a past date|before today|already past)"
        r"|" + _FIELD.replace("field", "later") + r"[^.\n]{0,40}? (?:must|should) be "
        r"(?:in the future|a future date|today or later|after today)",
        "past",
    ),
    ErrorPattern(
        "one_of",
        _FIELD + r":?(?: value)? (?:must|should) be one of[:\s]+(?P<expected>.+)",
        "enum",
    ),
    ErrorPattern(
        "invalid_value_one_of",
        r"(?:invalid|unsupported|unknown|bad) (?:value|option|choice)\s*(?:for |of )?"
        + _FIELD
        + r"[^\n]{0,120}?(?:one of|allowed(?: values)?(?: are)?|valid (?:values|options) (?:are|is)"
        r"|expected)[:\s]+(?P<expected>.+)",
        "enum",
    ),
    ErrorPattern(
        "must_be_at_least",
        _FIELD + r"[^.\n]{0,30}? (?:must|should) be (?:>=|at least|greater than or equal to"
        r"|no less than|a minimum of) (?P<expected>-?\d+(?:\.\d+)?)",
        "range",
        "minimum",
    ),
    ErrorPattern(
        "must_be_at_most",
        _FIELD + r"[^.\n]{0,30}? (?:must|should) be (?:<=|at most|less than or equal to"
        r"|no more than|a maximum of) (?P<expected>-?\d+(?:\.\d+)?)",
        "range",
        "maximum",
    ),
    ErrorPattern(
        "must_be_type",
        _FIELD + r"[^.\n]{0,30}? (?:must|should) be (?:an? |of type )?(?P<expected>integer|int"
        r"|number|float|string|str|boolean|bool|array|list|object|dict)\b",
        "type",
    ),
    ErrorPattern(  # the Python clients openapi-generator writes (ApiTypeError), NoneType aside
        "openapi_client_type",
        r"invalid type for variable " + _FIELD + r"\. required value type is (?:one of \["
        r"(?:NoneType, )?)?(?P<expected>int|float|str|bool|list|dict)\b",
        "type",
    ),
    ErrorPattern(
        "expected_type_for",
        r"expected (?:an? )?(?P<expected>integer|number|string|boolean|array|object)"
        r"[^.\n]{0,40}? (?:for|at|in) " + _FIELD,
        "type",
    ),
)

#: Words every match of a default row holds, tried before its regex (which backtracks over
#: a long text): a row whose words are absent cannot match.
_HINTS: dict[str, tuple[str, ...]] = {
    "python_missing_arguments": ("missing",),
    "python_unexpected_argument": ("unexpected keyword",),
    "additional_properties": ("additional properties",),
    "required_property": ("required",),
    "is_required": ("required", "mandatory"),
    "missing_parameter": ("missing", "no "),
    "parameter_required": ("required", "missing"),
    "unknown_parameter": ("unknown", "unrecogni", "unexpected", "invalid", "unsupported"),
    "date_layout": ("format",),
    "date_must_be": ("must", "should"),
    "mutually_exclusive": ("both", " and ", "&", " with "),
    "are_mutually_exclusive": ("mutually exclusive",),
    "in_the_past": ("past", "before today", "future", "after today", "or later"),
    "one_of": ("one of",),
    "invalid_value_one_of": ("invalid", "unsupported", "unknown", "bad "),
    "must_be_at_least": (">=", "at least", "greater than", "no less", "minimum"),
    "must_be_at_most": ("<=", "at most", "less than", "no more", "maximum"),
    "must_be_type": ("must", "should"),
    "expected_type_for": ("expected",),
    "openapi_client_type": ("invalid type for variable",),
}

#: How much of an error text the patterns read.
_PATTERN_HEAD = 1000

#: Words a pattern may read where a field's name stands, that never are one.
_NOT_FIELDS = frozenset(
    {
        "a", "an", "the", "for", "of", "to", "in", "on", "at", "it", "its", "this", "that",
        "value", "values", "input", "inputs", "parameter", "parameters", "param", "params",
        "argument", "arguments", "field", "fields", "property", "key", "option", "is", "be",
        "must", "should",
    }
)  # fmt: skip


def error_problems(
    text: str,
    spec: ToolSpec | None = None,
    patterns: Sequence[ErrorPattern] = ERROR_PATTERNS,
    args: Any = None,
) -> list[Problem]:
    """The problems a tool's error text names: from a JSON body when it is one, else from the
    first patterns that match (one problem per field, each a field of the call or schema)."""
    text = text[:8000]
    found = list(json_problems(text, spec, args))
    if found:
        return found
    head = text[:_PATTERN_HEAD]  # an error names its parameter early; the rest is detail
    seen: set[tuple[str | int, ...]] = set()
    lowered = head.lower()
    for row in patterns:
        if not row.may_match(lowered):
            continue
        for match in row.compiled().finditer(head):
            for problem in _from_match(row, match, spec, args):
                if problem.path not in seen:
                    seen.add(problem.path)
                    found.append(problem)
    return found


def _from_match(
    row: ErrorPattern, match: re.Match[str], spec: ToolSpec | None, args: Any = None
) -> Iterator[Problem]:
    groups = match.groupdict()
    names: list[str]
    slot = "later" if groups.get("later") else "field"
    if groups.get("fields"):
        names = re.findall(r"['\"](\w+)['\"]", groups["fields"])
    else:
        names = [groups[slot]] if groups.get(slot) else []
    expected_text = (groups.get("expected") or "").strip().rstrip(".")
    quoted = (
        bool(groups.get(slot))
        and match.start(slot) > 0
        and (match.string[match.start(slot) - 1] in "'\"`")
    )
    if row.kind == "exclusive":  # one problem for the pair: which goes is for the strategy
        pair = [groups["field"], groups["other"]]
        if any(n.lower() in _NOT_FIELDS for n in pair) or pair[0] == pair[1]:
            return
        yield Problem(
            "exclusive", path_of(pair[0]), match.group(0)[:300], row.name, expected=pair,
            schema={}, source="error",
        )  # fmt: skip
        return
    for name in names:
        if not quoted and not groups.get("fields") and name.lower() in _NOT_FIELDS:
            continue  # "value for 'x' must be...": an unquoted word there is not the field
        path = path_of(name.rstrip("."))
        if spec is not None and args is not None:
            resolved = resolve_name(name, spec, args)
            if resolved is None:
                continue  # a name that is no field of the call or schema: no phantom
            path = resolved[0]
        schema = dict(spec.schema_at(path)) if spec is not None else {}
        expected: Any = expected_text or None
        if row.kind == "enum" and expected_text:
            expected = listed_values(expected_text)
            schema.setdefault("enum", expected)
        elif row.kind == "format" and expected_text:
            if re.match(r"(?i)date-time|rfc|iso.*t|.*hh", expected_text):
                schema.setdefault("format", "date-time")
            elif "/" in expected_text or "." in expected_text:
                schema.setdefault("description", expected_text)
            else:
                schema.setdefault("format", "date")
        elif row.kind == "range" and expected_text:
            number = float(expected_text)
            expected = int(number) if number.is_integer() else number
            schema.setdefault(row.keyword, expected)
        elif row.kind == "type" and expected_text:
            expected = TYPE_WORDS.get(expected_text.lower(), expected_text)
            schema.setdefault("type", expected)
        yield Problem(
            row.kind,
            path,
            match.group(0)[:300],
            row.keyword or row.name,
            expected=expected,
            schema=schema,
            source="error",
        )
