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

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..escape.classify import ErrorClass, ErrorClassifier
from ..saferepr import safe_str
from .error_bodies import MESSAGE_KINDS, listed_values, structured_problems
from .error_patterns import ERROR_PATTERNS, ErrorPattern, error_problems
from .paths import get, has
from .reading import (
    ERROR_POLICY,
    ErrorReading,
    FieldEvidence,
    auth_error,
    between,
    business_rule,
    json_body,
    kind_fields,
    named_fields,
    not_found,
    prose_of,
    quoted_values,
    strftime_layout,
)
from .spec import Problem, ToolSpec
from .words import name_tokens

__all__ = [
    "error_text",
    "ERROR_PATTERNS",
    "Diagnosis",
    "ErrorPattern",
    "diagnose",
    "error_problems",
]


_NO_ROUTE = re.compile(
    r"\b(?:unknown|no such|unsupported|invalid) (?:tool|function|endpoint|method|operation)\b"
    r"|\b(?:tool|function|endpoint) (?:\S+ )?(?:not found|does not exist|is not available)\b"
    r"|\b404 not found\b",
    re.IGNORECASE,
)

#: A rate limit is transient whatever status it comes with (some APIs send 400 or 403).
_RATE_LIMIT = re.compile(
    r"rate[ _-]?limit|too many requests|quota exceeded|throttl|请求过于频繁|限流", re.IGNORECASE
)


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


def _lists_parameters(problem: Problem, names: set[str]) -> bool:
    """Whether an error's list of allowed values is the tool's own parameter names (an
    unknown key's error listing the keys there are), not values of the field."""
    listed = problem.expected if problem.kind == "enum" else None
    if not isinstance(listed, list) or len(listed) < 2 or not names:
        return False
    keys = {v for v in listed if isinstance(v, str) and v in names}
    own = problem.path[-1] if problem.path else None
    # several of the tool's keys, and this field's own name or most of the keys: a key list
    return len(keys) >= 2 and (own in keys or len(keys) * 2 > len(names))


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
        names = set(spec.parameters.get("properties") or ()) if spec is not None else set()
        for problem in reading.problems:
            if _lists_parameters(problem, names):
                continue  # "must be one of: Bucket, Prefix, ...": the tool's keys, no values
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
    structured = structured_problems(head, spec, args)
    body = json_body(head)
    if structured:
        return _reading("parameter", [_listed_in_body(p, body, args) for p in structured], True)
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
    missing = not_found(words.replace("_", " "))  # "channel_not_found" too
    values = quoted_values(words, args)
    named = named_fields(words, spec, args)
    # "new_address must not be empty when reason is '地址错误'", "closedate is required when
    # dealstage is closedlost": the value quoted is the condition; the field the error names
    # and the call lacks is what is wrong
    absent = [e for e in named if not has(args, e.path)] if values else []
    if absent:
        problems = [_prose_problem("missing", e, words, spec) for e in _best(absent)]
        return _reading("parameter", problems, False)
    if values:
        kind = "not_found" if missing else "parameter"
        problems = [_prose_problem("rejected", e, words, spec) for e in _best(values)]
        problems = [_listed_in_body(p, body, args) for p in problems]
        return _reading(kind, _not_found(problems, kind), False)
    if named:
        problems = [_prose_problem(_prose_kind(words), e, words, spec) for e in _best(named)]
        return _reading("parameter", problems, False)
    if status == 404 or _NO_ROUTE.search(words):
        return ErrorReading("route", reason="the tool or endpoint does not exist")
    spoken = kind_fields(words, spec, args)
    if len(spoken) == 1:  # the one value of the call the error's words speak of
        kind = "not_found" if missing else "parameter"
        problems = [_prose_problem("rejected", spoken[0], words, spec)]
        return _reading(kind, _not_found(problems, kind), False)
    return ErrorReading("unknown", reason="the error names no parameter and no value of the call")


def _listed_in_body(problem: Problem, body: Any, args: Any) -> Problem:
    """A refused value as an enum of the values the error body lists for its field: a member
    of two or more strings whose key names the field (``"available_plans"`` for ``plan``)."""
    if problem.kind != "rejected" or not isinstance(body, Mapping) or not problem.path:
        return problem
    own = {_singular(t) for t in name_tokens(str(problem.path[-1]))}
    sent = get(args, problem.path)
    for key, listed in list(body.items())[:50]:
        if not (isinstance(listed, list) and 2 <= len(listed) <= 200):
            continue
        if not all(isinstance(v, str) for v in listed) or sent in listed:
            continue
        if own & {_singular(t) for t in name_tokens(str(key))}:
            schema = {**problem.schema, "enum": list(listed)}
            return dataclasses.replace(problem, kind="enum", expected=list(listed), schema=schema)
    return problem


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _not_found(problems: list[Problem], kind: str) -> list[Problem]:
    """A refused value the tool says it does not have is marked so (``expected``): the task
    writing it as sent then means it is genuinely not there."""
    if kind != "not_found":
        return problems
    return [
        dataclasses.replace(p, expected="not_found")
        if p.kind == "rejected" and p.expected is None else p
        for p in problems
    ]  # fmt: skip


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
    return next((k for words, k in MESSAGE_KINDS if any(w in lowered for w in words)),
                "rejected")  # fmt: skip


#: Allowed values an error lists in prose ("Valid states for this team: Backlog, Todo, Done").
_LISTING = re.compile(
    r"\b(?:valid|allowed|supported|available|accepted|possible|permitted)\s+(?P<noun>[\w ]{0,40}?)"
    r"(?:\bare\b|\bis\b|:)\s*(?P<values>[^\n]{3,400})"
    r"|\b(?:expected|must be|should be)\s+one of\s*:?\s*(?P<values2>[^\n]{2,400})"
    r"|\bdid you mean\s*:?\s*(?P<values3>[^\n?]{1,200})",
    re.IGNORECASE,
)
#: A regular expression the error quotes as what the value must match.
_QUOTED_REGEX = re.compile(
    r"\b(?:must|should|does not|doesn't|did not|failed to) match (?:the )?(?:regex|regular "
    r"expression|pattern)\s*:?\s*(?P<q>[\"'`])(?P<re>\^[^\n]{1,300}?\$)(?P=q)",
    re.IGNORECASE,
)
#: "Rooms: Atlas, Borealis, Cosmos": the field's own noun, then the values there are (a
#: dot inside a value, as in ``release/2026.11``, is part of it; one a space follows ends it).
_NOUN_LIST = re.compile(r"\b(?P<noun>[A-Za-z]+):\s*")
_NOUN_VALUES = re.compile(r"(?:[^\n:.;]|\.(?=\S)){3,400}")


def _names_field(noun: str, field_name: str, schema: Mapping[str, Any]) -> bool:
    """Whether an error's plural noun ("jobs", "Known branches") names the field: its name,
    a word of its name (``job_name``), or the first word of its description ("Branch or tag
    to build")."""
    word = noun.lower()
    forms = {word, word.removesuffix("s"), word.removesuffix("es")} - {""}
    if not field_name or not forms:
        return False
    if field_name in forms or forms & set(name_tokens(field_name)):
        return True
    words = re.findall(r"[A-Za-z]+", str(schema.get("description", ""))[:80].lower())
    return bool(words) and words[0] in forms


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
    head = text[:2000]
    for noun in _NOUN_LIST.finditer(head):  # "Job Not Found: 'x' (jobs: a, b)": each noun
        after = _NOUN_VALUES.match(head, noun.end())
        # "Unknown ref: 'x'. Known branches: a, b": the value sent is no listing
        if (
            after
            and listed_text is None
            and _names_field(noun["noun"], field_name, schema)
            and len(listed_values(after.group(0).split("\n")[0])) >= 2
        ):
            listed_text = after.group(0)
    if listed_text is not None and kind in ("rejected", "enum"):
        values = listed_values(listed_text.split("\n")[0])
        did_you_mean = listing is not None and bool(listing["values3"])
        if len(values) >= 2 or (did_you_mean and len(values) == 1):
            kind, expected = "enum", values
            schema["enum"] = values
            schema["x-listed-by-error"] = True  # what the tool has, not a closed vocabulary
    if kind == "enum" and expected is None:
        listed = re.search(r"(?:one of|permitted:|allowed(?: values)?(?: are)?:?|expected)\s*(.+)",
                           text, re.IGNORECASE)  # fmt: skip
        if listed:
            expected = listed_values(listed.group(1))
            schema.setdefault("enum", expected)
    quoted = _QUOTED_REGEX.search(text[:2000])
    if quoted is not None and kind in ("rejected", "format") and "pattern" not in schema:
        try:  # botocore: 'Invalid bucket name "V": Bucket name must match the regex "R"'
            re.compile(quoted["re"])
        except re.error:
            quoted = None
        if quoted is not None:
            kind, expected = "pattern", quoted["re"]
            schema["pattern"] = quoted["re"]
    dated = {"date", "time", "datetime", "timestamp"} & set(name_tokens(str(field_name)))
    if kind == "format" and not schema.get("format") and not dated:
        kind = "rejected"  # "the stock code or date is not known": said of the code too
    if kind in ("missing", "unknown"):
        kind = "rejected"  # a field the call holds (one it lacks is made missing when fixed)
    layout = strftime_layout(text)
    if layout is not None:
        kind = "format"
        schema["x-strftime"] = layout
    return Problem(kind, evidence.path, text[:300], "error_prose", expected=expected,
                   schema=schema, source="error")  # fmt: skip


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
