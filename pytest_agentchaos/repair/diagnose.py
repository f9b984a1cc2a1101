"""Diagnosis: what is wrong with a call, from the schema and from the tool's own error.

Two sources, merged:
- the schema: ``jsonschema``'s structured errors (:meth:`.ToolSpec.problems`);
- the tool's error: a JSON body first (FastAPI / pydantic ``detail`` lists, zod-style issue
  lists as MCP servers return them, OpenAI-style ``{"error": {"param": ...}}``), then an
  ordered table of message patterns (:data:`ERROR_PATTERNS`, the seed's error -> strategy
  map), which a policy can extend in front.

A transient error (a timeout, a 5xx, a 429, any "rate limit" message whatever its status, as
the escape stack's :class:`~..escape.classify.ErrorClassifier` decides) is no parameter
error: the call is retried with the same arguments. A missing tool or endpoint (404, "unknown
tool") is not one either: another route is needed, which no repair of the arguments gives.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..escape.classify import ErrorClass, ErrorClassifier
from ..saferepr import safe_str
from .reading import (
    ERROR_POLICY,
    ErrorReading,
    FieldEvidence,
    auth_error,
    between,
    business_rule,
    json_body,
    named_fields,
    not_found,
    prose_of,
    pydantic_issues,
    quoted_values,
    resolve_name,
    strftime_layout,
    strip_location,
)
from .spec import Problem, ToolSpec

__all__ = [
    "error_text",
    "ERROR_PATTERNS",
    "Diagnosis",
    "ErrorPattern",
    "diagnose",
    "error_problems",
]

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
}

#: Texts of a missing tool or endpoint: another route is needed (the seed's ALTERNATIVE_ROUTE).
_NO_ROUTE = re.compile(
    r"\b(?:unknown|no such|unsupported|invalid) (?:tool|function|endpoint|method|operation)\b"
    r"|\b(?:tool|function|endpoint) (?:\S+ )?(?:not found|does not exist|is not available)\b"
    r"|\b404 not found\b",
    re.IGNORECASE,
)
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

#: A rate limit is transient whatever status it comes with (some APIs send 400 or 403).
_RATE_LIMIT = re.compile(
    r"rate[ _-]?limit|too many requests|quota exceeded|throttl|请求过于频繁|限流", re.IGNORECASE
)
_TYPES = {
    "int": "integer", "integer": "integer", "number": "number", "float": "number",
    "string": "string", "str": "string", "boolean": "boolean", "bool": "boolean",
    "array": "array", "list": "array", "object": "object", "dict": "object",
}  # fmt: skip


@dataclass(frozen=True)
class Diagnosis:
    """What is wrong with a call.

    ``kind``: ``valid`` (nothing found), ``parameter`` (``problems`` says what), ``transient``
    (retry with the same arguments), ``route`` (a missing tool or endpoint: another route
    is needed), ``auth`` (the caller is refused), ``business`` (a rule of the tool's own
    refuses the request) or ``unknown`` (an error that names no parameter and no value).
    :data:`~.reading.ERROR_POLICY` says what the repairer does with each.
    """

    kind: str
    problems: tuple[Problem, ...] = ()
    reason: str = ""
    error_class: ErrorClass | None = field(default=None, compare=False)
    #: what the tool's error says, read apart from the call's own problems
    reading: ErrorReading | None = field(default=None, compare=False)


def diagnose(
    spec: ToolSpec | None,
    args: Mapping[str, Any],
    error: BaseException | str | int | None = None,
    *,
    classifier: ErrorClassifier | None = None,
    patterns: Sequence[ErrorPattern] = ERROR_PATTERNS,
) -> Diagnosis:
    """Diagnose ``args`` (and the tool's ``error``: an exception, its message, an HTTP status
    or a response body)."""
    error_class = None
    text = ""
    status: int | None = None
    if error is not None:
        try:
            error_class = (classifier or ErrorClassifier()).classify(error)
        except Exception:  # an error whose text cannot be read: judged by its type alone
            name = type(error).__name__ if isinstance(error, BaseException) else None
            error_class = (classifier or ErrorClassifier()).classify(exception=name)
        text = error_text(error)
        head = text[:8000]
        limited = _RATE_LIMIT.search(head)
        if error_class.transient or limited:
            category = error_class.category if error_class.transient else "rate_limit"
            return Diagnosis(
                "transient", reason=f"{category}: retry as is", error_class=error_class
            )
        status = _status(error)
        if isinstance(error, int) and status == 404:
            return Diagnosis(
                "route", reason="the tool or endpoint does not exist", error_class=error_class
            )
    problems = list(spec.problems(args)) if spec is not None else []
    reading = read_error(text, spec, args, patterns, status) if error is not None else None
    if reading is not None and reading.kind in ("auth", "business", "route"):
        policy = ERROR_POLICY[reading.kind][1]
        return Diagnosis(reading.kind, reason=f"{reading.reason}: {policy}",
                         error_class=error_class, reading=reading)  # fmt: skip
    if reading is not None:
        known = {p.path for p in problems}
        for problem in reading.problems:
            if problem.path not in known:
                problems.append(problem)
                known.add(problem.path)
    if problems:
        reason = "; ".join(f"{p.field}: {p.message}" for p in problems[:5])
        return Diagnosis("parameter", tuple(problems), reason, error_class, reading)
    if error is not None:
        shown = text[:200] if text else str(error)
        return Diagnosis(
            "unknown", reason=f"the error names no parameter: {shown}", error_class=error_class,
            reading=reading,
        )  # fmt: skip
    return Diagnosis("valid")


def read_error(
    text: str,
    spec: ToolSpec | None,
    args: Any,
    patterns: Sequence[ErrorPattern] = ERROR_PATTERNS,
    status: int | None = None,
) -> ErrorReading:
    """What a (non-transient) tool error says: its kind, the fields it points at with the
    span that says so, and the problems it names (see :mod:`.reading`)."""
    head = text[:8000]
    structured = _structured(head, spec, args)
    if structured:
        return _reading("parameter", structured, True)
    body = json_body(head)
    coded = _codes(body)
    auth = auth_error(head) if status not in (400, 422) and "not_found" not in coded else None
    if status in (401, 403, 407) or auth:
        return ErrorReading("auth", reason=f"the tool says {auth or status}")
    prose = prose_of(body) if body is not None else None
    words = prose if prose is not None else head
    rule = business_rule(words)
    if rule is not None or status in (402, 409):
        return ErrorReading("business", reason=f"the tool says {rule or status}")
    found = error_problems(words, spec, patterns, args)
    if found:
        return _reading("parameter", found, False)
    missing = not_found(words)
    values = quoted_values(words, args)
    named = named_fields(words, spec, args)
    if values:
        kind = "not_found" if missing else "parameter"
        problems = [_prose_problem("rejected", e, words, spec) for e in _best(values)]
        return _reading(kind, problems, False)
    if named:
        problems = [_prose_problem(_prose_kind(words), e, words, spec) for e in _best(named)]
        return _reading("parameter", problems, False)
    if status == 404 or _NO_ROUTE.search(words):
        return ErrorReading("route", reason="the tool or endpoint does not exist")
    return ErrorReading("unknown", reason="the error names no parameter and no value of the call")


def _codes(body: Any) -> str:
    """The machine codes a JSON error body carries (``code``, ``type``), lowercased."""
    found: list[str] = []
    stack, seen = [body], 0
    while stack and seen < 50:
        item = stack.pop()
        seen += 1
        if isinstance(item, Mapping):
            for key in ("code", "type", "reason", "status"):
                if isinstance(item.get(key), str):
                    found.append(item[key].lower())
            stack.extend(v for v in item.values() if isinstance(v, (Mapping, list)))
        elif isinstance(item, list):
            stack.extend(item[:20])
    return " ".join(found)


def _best(evidence: list[FieldEvidence]) -> list[FieldEvidence]:
    """The surest evidence only (a weaker reading beside a surer one is noise), at most 5."""
    top = max(e.confidence for e in evidence)
    return [e for e in evidence if e.confidence >= top - 0.05][:5]


def _reading(kind: str, problems: list[Problem], structured: bool) -> ErrorReading:
    fields = tuple(FieldEvidence(p.path, p.message[:120], 1.0 if structured else 0.9)
                   for p in problems)  # fmt: skip
    expected = problems[0].expected if len(problems) == 1 else None
    reason = "; ".join(f"{p.field}: {p.message[:80]}" for p in problems[:3])
    return ErrorReading(kind, fields, expected, tuple(problems), reason, structured)


def _prose_kind(text: str) -> str:
    lowered = text.lower()
    if between(text) is not None:
        return "range"
    if "received undefined" in lowered:
        return "missing"
    return next((k for words, k in _MESSAGE_KINDS if any(w in lowered for w in words)),
                "rejected")  # fmt: skip


#: Allowed values an error lists in prose ("Valid states for this team: Backlog, Todo, Done").
_LISTING = re.compile(
    r"\b(?:valid|allowed|supported|available|accepted|possible|permitted)\s+(?P<noun>[\w ]{0,40}?)"
    r"(?:\bare\b|\bis\b|:)\s*(?P<values>[^\n]{3,400})"
    r"|\b(?:expected|must be|should be)\s+one of\s*:?\s*(?P<values2>[^\n]{2,400})"
    r"|\bdid you mean\s*:?\s*(?P<values3>[^\n?]{1,200})",
    re.IGNORECASE,
)
#: "Rooms: Atlas, Borealis, Cosmos": the field's own noun, then the values there are.
_NOUN_LIST = re.compile(r"\b(?P<noun>[A-Za-z]+?)s?:\s*(?P<values>[^\n:.;]{3,400})")


def _prose_problem(kind: str, evidence: FieldEvidence, text: str, spec: ToolSpec | None) -> Problem:
    schema = dict(spec.schema_at(evidence.path)) if spec is not None else {}
    expected: Any = None
    bounds = between(text)
    if kind == "range" and bounds is not None:
        low, high = (int(b) if b.is_integer() else b for b in bounds)
        schema["minimum"], schema["maximum"] = low, high  # the tool's own bounds decide
        expected = [low, high]
    listing = _LISTING.search(text[:2000])
    listed_text = None
    if listing is not None and not re.search(
        r"format|layout|pattern", listing["noun"] or "", re.IGNORECASE
    ):
        listed_text = listing["values"] or listing["values2"] or listing["values3"]
    field_name = str(evidence.path[-1]).lower() if evidence.path else ""
    for noun in _NOUN_LIST.finditer(text[:2000]):
        if listed_text is None and field_name and noun["noun"].lower() == field_name:
            listed_text = noun["values"]
    if listed_text is not None and kind in ("rejected", "enum"):
        values = _values(listed_text.split("\n")[0])
        did_you_mean = listing is not None and bool(listing["values3"])
        if len(values) >= 2 or (did_you_mean and len(values) == 1):
            kind, expected = "enum", values
            schema["enum"] = values
    if kind == "enum" and expected is None:
        listed = re.search(r"(?:one of|permitted:|allowed(?: values)?(?: are)?:?|expected)\s*(.+)",
                           text, re.IGNORECASE)  # fmt: skip
        if listed:
            expected = _values(listed.group(1))
            schema.setdefault("enum", expected)
    if kind in ("missing", "unknown"):
        kind = "rejected"  # a field the call holds (one it lacks is made missing when fixed)
    layout = strftime_layout(text)
    if layout is not None:
        kind = "format"
        schema["x-strftime"] = layout
    return Problem(kind, evidence.path, text[:300], "error_prose", expected=expected,
                   schema=schema, source="error")  # fmt: skip


def _structured(text: str, spec: ToolSpec | None, args: Any) -> list[Problem]:
    """Problems from the error's own structure: a pydantic ``ValidationError`` printed as text
    (FastMCP), or a JSON body's issue list."""
    issues = pydantic_issues(text)
    if issues:
        return list(_issues(issues, spec, "loc", "msg", "type"))
    return list(_from_json(text, spec))


def error_problems(
    text: str,
    spec: ToolSpec | None = None,
    patterns: Sequence[ErrorPattern] = ERROR_PATTERNS,
    args: Any = None,
) -> list[Problem]:
    """The problems a tool's error text names: from a JSON body when it is one, else from the
    first patterns that match (one problem per field, each a field of the call or schema)."""
    text = text[:8000]
    found = list(_from_json(text, spec))
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
            "exclusive", _path(pair[0]), match.group(0)[:300], row.name, expected=pair,
            schema={}, source="error",
        )  # fmt: skip
        return
    for name in names:
        if not quoted and not groups.get("fields") and name.lower() in _NOT_FIELDS:
            continue  # "value for 'x' must be...": an unquoted word there is not the field
        path = _path(name.rstrip("."))
        if spec is not None and args is not None:
            resolved = resolve_name(name, spec, args)
            if resolved is None:
                continue  # a name that is no field of the call or schema: no phantom
            path = resolved[0]
        schema = dict(spec.schema_at(path)) if spec is not None else {}
        expected: Any = expected_text or None
        if row.kind == "enum" and expected_text:
            expected = _values(expected_text)
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
            expected = _TYPES.get(expected_text.lower(), expected_text)
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


def _path(name: str) -> tuple[str | int, ...]:
    parts: list[str | int] = []
    for piece in re.split(r"\.|\[|\]", name):
        if piece:
            parts.append(int(piece) if piece.isdigit() else piece)
    return tuple(parts)


def _values(text: str) -> list[str]:
    """Allowed values as a message lists them: ``economy, business or first``, ``['a', 'b']``,
    ``"a" | "b"``."""
    text = text.strip().strip("[]().")
    quoted = re.findall(r"['\"`]([^'\"`]+)['\"`]", text)
    if quoted:
        return quoted
    parts = re.split(r"\s*(?:,|\||/|\bor\b|\band\b)\s*", text)
    return [p.strip() for p in parts if p.strip() and len(p.strip()) < 40][:50]


def _from_json(text: str, spec: ToolSpec | None) -> Iterator[Problem]:
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return
    body: Any
    try:
        body = json.loads(text[min(starts) :])
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser takes
        return
    yield from _body_problems(body, spec)


def _body_problems(body: Any, spec: ToolSpec | None) -> Iterator[Problem]:
    if isinstance(body, Mapping):
        if isinstance(body.get("detail"), list):  # FastAPI / pydantic
            yield from _issues(body["detail"], spec, "loc", "msg", "type")
            return
        if isinstance(body.get("issues"), list):
            yield from _issues(body["issues"], spec, "path", "message", "code")
            return
        inner = body.get("error")
        if isinstance(inner, Mapping):
            if isinstance(inner.get("param"), str):  # OpenAI style
                yield _problem_for(
                    list(_path(inner["param"])),
                    str(inner.get("message", "")),
                    str(inner.get("code") or inner.get("type") or ""),
                    spec,
                )
                return
            yield from _body_problems(inner, spec)
            return
        if isinstance(body.get("errors"), list):
            yield from _issues(body["errors"], spec, "path", "message", "code")
    elif isinstance(body, list):  # zod's issue list (MCP servers)
        yield from _issues(body, spec, "path", "message", "code")


def _issues(
    issues: Iterable[Any], spec: ToolSpec | None, loc: str, msg: str, code: str
) -> Iterator[Problem]:
    for issue in issues:
        if not isinstance(issue, Mapping):
            continue
        where = (
            issue.get(loc) or issue.get("loc") or issue.get("path") or issue.get("field")
            or issue.get("param") or issue.get("parameter") or _source(issue) or []
        )  # fmt: skip
        if isinstance(where, str):
            where = where.split("/") if where.startswith("/") else where.split(".")
        parts = strip_location([p for p in where if p != ""], spec)
        yield _problem_for(
            parts,
            str(
                issue.get(msg)
                or issue.get("message")
                or issue.get("detail")
                or issue.get("title")
                or ""
            ),  # fmt: skip
            str(issue.get(code) or ""),
            spec,
            issue,
        )


def _source(issue: Mapping[str, Any]) -> Any:
    """Where a JSON:API error points: ``source.parameter`` (a query parameter) or
    ``source.pointer`` (``/data/attributes/name``)."""
    source = issue.get("source")
    if isinstance(source, Mapping):
        return source.get("parameter") or source.get("pointer")
    return None


_CODES = {
    "missing": "missing", "value_error.missing": "missing", "required": "missing",
    "extra_forbidden": "unknown", "value_error.extra": "unknown", "unrecognized_keys": "unknown",
    "invalid_type": "type", "int_parsing": "type", "float_parsing": "type", "bool_parsing": "type",
    "int_from_float": "type", "string_type": "type", "int_type": "type", "list_type": "type",
    "enum": "enum", "literal_error": "enum", "invalid_enum_value": "enum",
    "date_from_datetime_parsing": "format", "date_parsing": "format", "datetime_parsing": "format",
    "invalid_date": "format", "invalid_string": "format",
    "greater_than_equal": "range", "less_than_equal": "range", "greater_than": "range",
    "less_than": "range", "too_small": "range", "too_big": "range",
    "string_too_short": "length", "string_too_long": "length",
    "string_pattern_mismatch": "pattern",
}  # fmt: skip


#: Words of an issue's message -> the problem kind, for issues without a known code.
_MESSAGE_KINDS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("in the past", "past date", "before today", "in the future", "future date"), "past"),
    (("required", "missing"), "missing"),
    (("extra", "not permitted", "unrecognized"), "unknown"),
    (("one of", "enum", "permitted:"), "enum"),
    (("date", "format"), "format"),
    (("greater", "less", "at least", "at most"), "range"),
    (("valid integer", "valid number", "type"), "type"),
)


def _problem_for(
    parts: Sequence[Any],
    message: str,
    code: str,
    spec: ToolSpec | None,
    issue: Mapping[str, Any] | None = None,
) -> Problem:
    path = tuple(int(p) if isinstance(p, int) or str(p).isdigit() else str(p) for p in parts)
    kind = _CODES.get(code)
    if issue is not None and str(issue.get("received", "")).lower() in ("undefined", "missing"):
        kind = "missing"  # zod: a required key not sent
    if kind is None:
        lowered = message.lower()
        kind = next(
            (k for words, k in _MESSAGE_KINDS if any(w in lowered for w in words)), "rejected"
        )  # the tool refused the value and its words say no more
    schema = dict(spec.schema_at(path)) if spec is not None else {}
    if kind == "format" and "date" in code and "format" not in schema:
        # pydantic's date_parsing / date_from_datetime_parsing: the field is a date
        schema["format"] = "date-time" if code.startswith("datetime") else "date"
    expected: Any = None
    if issue is not None:
        ctx = issue.get("ctx") if isinstance(issue.get("ctx"), Mapping) else {}
        options = issue.get("options") or (ctx or {}).get("expected")
        if kind == "enum" and options:
            expected = list(options) if isinstance(options, list) else _values(str(options))
            schema.setdefault("enum", expected)
        if kind == "type" and isinstance(issue.get("expected"), str):
            expected = _TYPES.get(issue["expected"], issue["expected"])
            schema.setdefault("type", expected)
        for key, keyword in (
            ("ge", "minimum"),
            ("le", "maximum"),
            ("minimum", "minimum"),
            ("maximum", "maximum"),
        ):
            bound = (ctx or {}).get(key, issue.get(key))
            if kind == "range" and isinstance(bound, (int, float)):
                schema.setdefault(keyword, bound)
    if kind == "enum" and expected is None:
        listed = re.search(r"(?:one of|permitted:|expected)\s*(.+)", message, re.IGNORECASE)
        if listed:
            expected = _values(listed.group(1))
            schema.setdefault("enum", expected)
    return Problem(
        kind, path, message[:300], code, expected=expected, schema=schema, source="error"
    )


def error_text(error: BaseException | str | int) -> str:
    """What a tool's error says: its text, an exception's message and its response body."""
    if isinstance(error, str):
        return error
    if isinstance(error, int):
        return ""
    parts = [safe_str(error, 20_000)]
    response = getattr(error, "response", None)
    body = getattr(response, "text", None)
    if isinstance(body, str) and body:
        parts.append(body)
    return "\n".join(parts)


def _status(error: BaseException | str | int) -> int | None:
    if isinstance(error, int) and not isinstance(error, bool):
        return error
    if isinstance(error, BaseException):
        for holder in (error, getattr(error, "response", None)):
            code = getattr(holder, "status_code", None) or getattr(holder, "status", None)
            if isinstance(code, int) and not isinstance(code, bool):
                return code
    return None
