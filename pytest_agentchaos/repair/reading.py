"""Reading a tool's error: what kind of refusal it is, which fields it points at and why.

An :class:`ErrorReading` is ``{kind, fields: [(path, evidence, confidence)], expected}``,
read from the error's own structure where it has one (pydantic's ``str()`` of a
``ValidationError`` as FastMCP servers return it, FastAPI's ``detail`` list, zod issue lists,
JSON:API ``errors``, OpenAI-style ``error.param``, a JSON body whose ``error`` is prose) and
from prose otherwise: a parameter named in plain words (any case, words apart for ``_`` or
camelCase, a nested key), a value of the call quoted back, "must be between A and B".

Each kind of error has an explicit policy (:data:`ERROR_POLICY`): a parameter error is
repaired; a transient one (timeout, 5xx, rate limit) is retried as is; an authorisation
error, a business rule the schema cannot express, a missing tool or an error that points at
nothing is declined, each with its own reason; a "not found" of a value of the call is
repaired only from the task's own spelling of that value (declined where the task writes it
as it was sent).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .spec import Problem, ToolSpec
from .words import find_word, name_tokens, prose_forms, squash

__all__ = [
    "ERROR_KINDS",
    "ERROR_POLICY",
    "ErrorReading",
    "FieldEvidence",
    "business_rule",
    "call_fields",
    "kind_fields",
    "pydantic_issues",
    "quoted_values",
    "resolve_name",
]

#: What an error can be, as far as repair goes.
ERROR_KINDS = ("parameter", "not_found", "transient", "route", "auth", "business", "unknown")

#: What the repairer does for each kind of error, and why.
ERROR_POLICY: Mapping[str, tuple[str, str]] = {
    "parameter": ("repair", "the error points at arguments: they are repaired from evidence"),
    "not_found": (
        "repair",
        "a value of the call was not found: repaired only where the task spells it otherwise",
    ),
    "transient": ("retry", "a transient failure: the call is retried as it is"),
    "route": ("decline", "the tool or endpoint does not exist: another route is needed"),
    "auth": (
        "decline",
        "the tool refuses the caller, not the arguments: no repair of them gives access",
    ),
    "business": (
        "decline",
        "the tool refuses the request by a rule of its own: changing the arguments to pass it "
        "would change what was asked",
    ),
    "unknown": ("decline", "the error names no parameter and no value of the call"),
}


@dataclass(frozen=True)
class FieldEvidence:
    """One field an error points at: its path in the call, the span of the error that says
    so, and how sure the reading is (an issue's ``loc`` 1.0, a quoted key 0.95, the key's
    words in prose 0.8, a quoted value of the call 0.85)."""

    path: tuple[str | int, ...]
    evidence: str
    confidence: float


@dataclass(frozen=True)
class ErrorReading:
    """What a tool's error says (see the module's doc)."""

    kind: str
    fields: tuple[FieldEvidence, ...] = ()
    expected: Any = None
    problems: tuple[Problem, ...] = ()
    reason: str = ""
    structured: bool = False  # read from the error's own structure, not its prose

    @property
    def action(self) -> str:
        """``repair``, ``retry`` or ``decline``: :data:`ERROR_POLICY` for this kind."""
        return ERROR_POLICY.get(self.kind, ERROR_POLICY["unknown"])[0]


# -- paths of the call and the schema ---------------------------------------------------------


def call_fields(spec: ToolSpec | None, args: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """``(path, name)`` of every key the call holds and every property the schema declares
    where the call holds its object, at any depth (bounded); names are the last key."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    seen: set[tuple[str | int, ...]] = set()
    stack: list[tuple[tuple[str | int, ...], Any, Any]] = [
        ((), args, spec.parameters if spec else {})
    ]
    while stack and len(found) < 400:
        path, value, schema = stack.pop()
        schema = schema if isinstance(schema, Mapping) else {}
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        if isinstance(value, Mapping) or (not path and not isinstance(value, list)):
            keys = list(value) if isinstance(value, Mapping) else []
            for key in [*keys, *(k for k in props if k not in keys)]:
                if not isinstance(key, str):
                    continue
                where = (*path, key)
                if where not in seen:
                    seen.add(where)
                    found.append((where, key))
                child = value.get(key) if isinstance(value, Mapping) else None
                if len(where) < 6:
                    stack.append((where, child, props.get(key, {})))
        elif isinstance(value, list) and len(path) < 6:
            items = schema.get("items", {})
            for i, item in enumerate(value[:50]):
                stack.append(((*path, i), item, items))
    return found


def resolve_name(
    name: str, spec: ToolSpec | None, args: Any
) -> tuple[tuple[str | int, ...], float] | None:
    """The path of the call or schema a name in an error stands for: a dotted path that is
    one, a key written in another case or style, or the one field whose last words it is."""
    name = name.strip().strip("'\"`").rstrip(".:,;")
    if not name:
        return None
    fields = call_fields(spec, args)
    dotted = _dotted(name)
    for path, _key in fields:
        if path == dotted:
            return path, 1.0
    exact = [p for p, key in fields if key == name]
    if len(exact) == 1 or (exact and len(exact[0]) == 1):
        return exact[0], 1.0
    flat = squash(name)
    same = [p for p, key in fields if squash(key) == flat and flat]
    if len(same) == 1:
        return same[0], 0.9
    tail = name_tokens(name)
    ending = [p for p, key in fields if len(tail) and name_tokens(key)[-len(tail) :] == tail]
    if len(ending) == 1 and len(flat) >= 3:
        return ending[0], 0.75
    return None


def _dotted(name: str) -> tuple[str | int, ...]:
    parts: list[str | int] = []
    for piece in re.split(r"\.|\[|\]|/", name):
        if piece:
            parts.append(int(piece) if piece.isdigit() else piece)
    return tuple(parts)


# -- structure ---------------------------------------------------------------------------------

#: Where an HTTP framework says a parameter came from: dropped only at the head of a location.
_LOCATIONS = frozenset(
    {"body", "query", "path", "params", "arguments", "data", "attributes", "header", "headers",
     "form", "cookie", "json", "kwargs", "args"}
)  # fmt: skip


def strip_location(parts: Sequence[Any], spec: ToolSpec | None) -> list[Any]:
    """A location without the HTTP-location prefix (``["body", "query"]`` -> ``["query"]``
    where ``query`` is a parameter; a parameter named ``body`` is kept)."""
    rest = list(parts)
    props = spec.properties if spec is not None else {}
    while len(rest) > 1 and isinstance(rest[0], str) and rest[0] in _LOCATIONS:
        if rest[0] in props and rest[1] not in props:
            break
        rest = rest[1:]
    if (
        len(rest) == 1
        and isinstance(rest[0], str)
        and rest[0] in _LOCATIONS
        and rest[0] not in props
        and props
    ):
        return []  # the whole body: no one field
    return rest


#: pydantic's ``str(ValidationError)``: a location line, then the message and its type.
_PYDANTIC_HEAD = re.compile(r"(?<!\d)(\d+) validation errors? for (\S+)")
_PYDANTIC_ISSUE = re.compile(
    r"^(?P<loc>\S[^\n]*)\n\s+(?P<msg>[^\n]*?)\s*\[type=(?P<type>[\w.]+)(?P<rest>[^\]\n]*)\]",
    re.MULTILINE,
)

_LOC_PART = re.compile(r"`[^`\n]*`|[^.]+")


def pydantic_issues(text: str) -> list[dict[str, Any]]:
    """The issues of a pydantic ``ValidationError`` printed as text (``str(e)``), as the
    dicts ``e.errors()`` gives: ``loc``, ``msg``, ``type`` and ``ctx`` where printed."""
    head = _PYDANTIC_HEAD.search(text)
    if head is None:
        return []
    issues: list[dict[str, Any]] = []
    for match in _PYDANTIC_ISSUE.finditer(text, head.end()):
        loc_text = match["loc"].strip()
        if loc_text.startswith(("For further", "http")):
            continue
        # a union member's tag is one part though it holds dots: `list[union[...,...]]`
        loc = [int(p) if p.isdigit() else p for p in _LOC_PART.findall(loc_text)]
        issue: dict[str, Any] = {"loc": loc, "msg": match["msg"], "type": match["type"]}
        value = re.search(r"input_value=(.*?)(?:, input_type=|$)", match["rest"])
        if value:
            issue["input"] = value[1]
        issues.append(issue)
        if len(issues) >= 50:
            break
    return issues


def json_body(text: str) -> Any:
    """The JSON object or list an error text is or ends with, else None."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    try:
        return json.loads(text[min(starts) :])
    except (ValueError, RecursionError):
        return None


def prose_of(body: Any, depth: int = 0) -> str | None:
    """The prose a JSON error body carries where it has no issue list: ``{"error": "..."}``,
    ``{"error": {"message": "..."}}``, ``{"detail": "..."}``, ``{"message": "..."}``, an
    ``exception`` text, or a ``response`` that is itself a JSON body as text."""
    if not isinstance(body, Mapping) or depth > 4:
        return None
    for key in ("error", "detail", "message", "exception", "error_description", "msg",
                "title", "response", "body"):  # fmt: skip
        inner = body.get(key)
        if isinstance(inner, str) and inner.strip():
            nested = json_body(inner) if inner.lstrip()[:1] in "{[" else None
            if isinstance(nested, Mapping):
                found = prose_of(nested, depth + 1)
                if found:
                    return found
                continue
            if not re.search(r"\s", inner.strip()):  # a code ("RecordNotFound"): its words too
                words = _words_beside(body, key)
                return f"{inner}: {words}" if words else inner
            return inner
        if isinstance(inner, Mapping):
            found = prose_of(inner, depth + 1)
            if found:
                return found
    return None


def _words_beside(body: Mapping[str, Any], code_key: str) -> str | None:
    """The prose member of a body beside its code (``{"error": "RecordNotFound",
    "description": "Ticket TCK-0142 not found"}``), or None."""
    for key in ("description", "message", "detail", "error_description", "msg", "title"):
        inner = body.get(key)
        if key != code_key and isinstance(inner, str) and re.search(r"\s", inner.strip()):
            return inner
    return None


_STRFTIME = re.compile(
    r"(?:format|layout)\s*(?:of\s*)?(?:(['\"`])(?P<quoted>[^'\"`\n]{2,40})\1"
    r"|(?P<layout>(?:%[A-Za-z]|[^'\"`\s%]){2,40}))"
)


def strftime_layout(text: str) -> str | None:
    """A ``strftime`` layout an error states (``does not match format '%H:%M:%S'``)."""
    match = _STRFTIME.search(text[:2000])
    layout = match["quoted"] or match["layout"] if match else None
    if not layout or "%" not in layout:
        return None
    return str(layout).rstrip(".,;")


# -- prose -------------------------------------------------------------------------------------

_BETWEEN = re.compile(
    r"\bbetween\s+(?P<low>-?\d+(?:\.\d+)?)\s*(?:and|&|-|to)\s*(?P<high>-?\d+(?:\.\d+)?)\b"
    r"|\b(?:from|in (?:the )?range(?: of)?)\s+\[?(?P<low2>-?\d+(?:\.\d+)?)\s*(?:to|-|\.\.|,)\s*"
    r"(?P<high2>-?\d+(?:\.\d+)?)\]?",
    re.IGNORECASE,
)


def between(text: str) -> tuple[float, float] | None:
    """The bounds of "between A and B" (or "from A to B", "in range [A, B]")."""
    match = _BETWEEN.search(text[:2000])
    if match is None:
        return None
    low = float(match["low"] or match["low2"])
    high = float(match["high"] or match["high2"])
    return (low, high) if low <= high else None


def leaf_values(args: Any) -> list[tuple[tuple[str | int, ...], Any]]:
    """``(path, value)`` of every scalar of the call, at any depth (bounded)."""
    found: list[tuple[tuple[str | int, ...], Any]] = []
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), args)]
    while stack and len(found) < 400:
        path, value = stack.pop()
        if isinstance(value, Mapping):
            stack.extend(((*path, k), v) for k, v in value.items() if isinstance(k, str))
        elif isinstance(value, list):
            stack.extend(((*path, i), v) for i, v in enumerate(value[:50]))
        elif path:
            found.append((path, value))
    return found


_QUOTES = "'\"`«»“”‘’"


def _occurrences(text: str, needle: str) -> list[int]:
    found: list[int] = []
    at = text.find(needle)
    while at >= 0 and len(found) < 20:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


def quoted_values(text: str, args: Any) -> list[FieldEvidence]:
    """Fields whose value the error quotes back (``invalid country: 'Frnace'``,
    ``KeyError: 'Frnace'``, ``user @bob not found``): one evidence per field."""
    head = text[:4000]
    found: list[FieldEvidence] = []
    for path, value in leaf_values(args):
        if isinstance(value, bool) or value is None:
            continue
        shown = value if isinstance(value, str) else repr(value)
        if not isinstance(value, (str, int, float)) or len(shown) < 2 or len(shown) > 300:
            continue
        at = head.find(shown)
        if at < 0:
            continue
        quoted = next(
            (i for i in _occurrences(head, shown)
             if i > 0 and head[i - 1] in _QUOTES and head[i + len(shown) : i + len(shown) + 1]
             in _QUOTES),
            None,
        )  # fmt: skip
        if quoted is not None:
            found.append(FieldEvidence(path, head[quoted - 1 : quoted + len(shown) + 1], 0.9))
            continue
        bare = isinstance(value, str) and len(value) >= 3 and not value.isdigit()
        if bare and find_word(head, str(value)) >= 0:
            found.append(FieldEvidence(path, str(value), 0.75))
        elif isinstance(value, str) and len(value) >= 3 and _after_colon(head, value):
            # "invalid code: 310000", "城市编码不存在：３１００００": the value the message ends on
            found.append(FieldEvidence(path, value, 0.75))
    return found


def _after_colon(text: str, value: str) -> bool:
    """Whether ``value`` follows a colon in ``text`` and ends its sentence or message."""
    return bool(re.search(rf"[:：]\s*{re.escape(value)}\s*(?:$|[.。!！\"'}}\n,，;；])", text))


def named_fields(text: str, spec: ToolSpec | None, args: Any) -> list[FieldEvidence]:
    """Fields the error names in words: the key quoted (0.95) or bare (0.9) as it is, its
    words apart in any case (0.8); a path written with dots (``legs.0.date``)."""
    head = text[:4000]
    lowered = head.lower()
    found: dict[tuple[str | int, ...], FieldEvidence] = {}
    for path, key in call_fields(spec, args):
        best: FieldEvidence | None = None
        dotted = ".".join(str(p) for p in path)
        if len(path) > 1 and find_word(head, dotted, joined=".") >= 0:
            best = FieldEvidence(path, dotted, 0.95)
        if best is None and key in head:
            quoted = next(
                (i for i in _occurrences(head, key)
                 if i > 0 and head[i - 1] in "'\"`" and head[i + len(key) : i + len(key) + 1]
                 in "'\"`"),
                None,
            )  # fmt: skip
            if quoted is not None:
                best = FieldEvidence(path, head[quoted - 1 : quoted + len(key) + 1], 0.95)
        if best is None:
            for form in prose_forms(key):
                if len(form) < 2 or form not in lowered:
                    continue
                at = find_word(lowered, form, joined=".-")
                if at < 0:
                    at = find_word(lowered, form, joined="-")
                    if at >= 0 and lowered[at + len(form) : at + len(form) + 2][:1] == ".":
                        after = lowered[at + len(form) + 1 : at + len(form) + 2]
                        at = -1 if after.isalnum() else at  # "field.Next": no dotted path
                if at >= 0:
                    span = head[at : at + len(form)]
                    sure = span == key or " " in form  # the key itself, or its words apart
                    best = FieldEvidence(path, span, 0.9 if sure else 0.8)
                    break
        if best is not None:
            found[path] = best
    # a nested key and its parent both named: the deeper one is meant
    return [e for p, e in found.items() if not any(o != p and o[: len(p)] == p for o in found)]


#: Words any error may hold that speak of no one field (a closed class: how errors say no).
_ERROR_WORDS = frozenset(
    {"invalid", "error", "errors", "not", "found", "unknown", "value", "values", "field",
     "fields", "parameter", "parameters", "param", "argument", "request", "bad", "must",
     "should", "could", "cannot", "the", "and", "with", "for", "from", "this", "that", "exception",
     "input", "output", "null", "true", "false", "none", "missing", "required", "wrong",
     "unsupported", "unrecognized", "unrecognised", "does", "exist", "such", "failed", "code",
     "message", "status", "detail", "type", "name", "given", "provided", "supplied", "is",
     "are", "was", "has", "have", "please", "try", "again", "any", "one", "format"}
)  # fmt: skip
_LETTERS = re.compile(r"[^\W\d_]{3,}")


def kind_fields(text: str, spec: ToolSpec | None, args: Any) -> list[FieldEvidence]:
    """Fields of the call an error speaks of without naming them: each value the call holds
    whose field's own words (its name's, its description's first sentence) hold a content
    word of the error ("city not found" where ``q`` is the "City name"), or whose name's
    word begins one ("lang" for "language"). Evidence 0.7; the caller takes only one."""
    words = {w.lower() for w in _LETTERS.findall(text[:600])} - _ERROR_WORDS
    if not words or spec is None:
        return []
    found: list[FieldEvidence] = []
    for path, value in leaf_values(args):
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            continue
        name = next((str(p) for p in reversed(path) if isinstance(p, str)), "")
        schema = spec.schema_at(path)
        said = str(schema.get("description", "") if isinstance(schema, Mapping) else "")
        own = {t for t in name_tokens(name) if len(t) >= 3} - _ERROR_WORDS
        own |= {w.lower() for w in _LETTERS.findall(said.split(". ")[0][:200])} - _ERROR_WORDS
        hit = sorted(words & own) or sorted(
            w for w in words for t in name_tokens(name) if len(t) >= 3 and w.startswith(t)
        )
        if hit:
            found.append(FieldEvidence(path, hit[0], 0.7))
    return found


#: The error's words for a refusal by the tool's own rules, not by the arguments' shape.
_BUSINESS = re.compile(
    r"\binsufficient\b|\bnot enough\b|\bexceeds? (?:the |your )?(?:available|account|balance"
    r"|credit|stock|inventory|remaining|daily|monthly|quota)|\bsold out\b|\bout of stock\b"
    r"|\balready (?:exists?|taken|booked|reserved|registered|cancel+ed|closed|merged|in use"
    r"|been)|\bduplicate\b|\bconflict\b|\bnot eligible\b|\bcannot be (?:cancel|refund|modif"
    r"|chang|delet|undone)|\b(?:is|are) (?:closed|locked|archived|suspended|frozen)\b"
    r"|\bno (?:seats|rooms|tables|availability|slots?) (?:left|available)\b"
    r"|\bfully booked\b|\blimit (?:reached|exceeded)\b|\bquota\b",
    re.IGNORECASE,
)
_AUTH = re.compile(
    r"\bunauthori[sz]ed\b|\bnot authori[sz]ed\b|\bforbidden\b|\bpermission(?:s)? (?:denied|to)\b"
    r"|\baccess (?:denied|is denied)\b|\bdo(?:es)? not have (?:permission|access)\b"
    r"|\binvalid (?:api[ _-]?key|token|credentials)\b|\bauthenticat\w+ (?:failed|required)\b"
    r"|\binsufficient (?:scope|permissions?|privileges?)\b|\btoken (?:has )?expired\b",
    re.IGNORECASE,
)
_NOT_FOUND = re.compile(
    r"\bnot found\b|\bdoes(?: not|n't) exist\b|\bno such\b|\bunknown\b|\bcould not find\b"
    r"|\bcouldn't find\b|\bno \w+(?: \w+)? (?:found|matches|matching|named|with)\b|KeyError"
    r"|\bnot (?:a )?(?:recogni[sz]ed|known)\b|\bunrecogni[sz]ed\b",
    re.IGNORECASE,
)


def business_rule(text: str) -> str | None:
    """The span that marks a refusal by a rule of the tool's own, or None."""
    match = _BUSINESS.search(text[:2000])
    return match[0] if match else None


def auth_error(text: str) -> str | None:
    match = _AUTH.search(text[:2000])
    return match[0] if match else None


def not_found(text: str) -> str | None:
    match = _NOT_FOUND.search(text[:2000])
    return match[0] if match else None
