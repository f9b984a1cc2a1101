"""Problems from a tool error's own structure: a pydantic ``ValidationError`` printed as text
(FastMCP), a JSON body's issue list (FastAPI / pydantic ``detail``, zod-style issue lists as
MCP servers return them, JSON:API ``errors`` with their ``source``, OpenAI-style
``{"error": {"param": ...}}``)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from .paths import get, has, path_of
from .reading import json_body, prose_of, pydantic_issues, strip_location
from .spec import Problem, ToolSpec

__all__ = ["MESSAGE_KINDS", "TYPE_WORDS", "json_problems", "listed_values",
           "structured_problems"]  # fmt: skip

TYPE_WORDS = {
    "int": "integer", "integer": "integer", "number": "number", "float": "number",
    "string": "string", "str": "string", "boolean": "boolean", "bool": "boolean",
    "array": "array", "list": "array", "object": "object", "dict": "object",
    "decimal": "number",
}  # fmt: skip


def structured_problems(text: str, spec: ToolSpec | None, args: Any) -> list[Problem]:
    """Problems from the error's own structure: a pydantic ``ValidationError`` printed as text
    (FastMCP), or a JSON body's issue list."""
    issues = pydantic_issues(text)
    if issues:
        return list(_issues(issues, spec, "loc", "msg", "type", args))
    found = list(json_problems(text, spec, args))
    if found:
        return found
    body = json_body(text)
    prose = prose_of(body) if body is not None else None
    if prose and prose != text:  # a gateway's JSON around a server's own error text
        return structured_problems(prose, spec, args)
    return list(located_lines(text, spec))


#: ``<location>: <message>``: how validators print one issue a line (jsonschema's CLI,
#: ``ValueError(f"{field}: {msg}")``, many MCP servers); the location is a dotted / indexed path.
_LOCATED = re.compile(
    r"(?<![\w.\[\]/])(?P<loc>[A-Za-z_]\w*(?:\.\w+|\[\d+\])*)\s*:\s+(?=(?P<msg>[^\n;]+))"
)


#: What may stand before an issue's location: the text's start, a line's, a list's mark, or
#: the prefix the issue follows (``ValueError:``).
_ISSUE_STARTS = frozenset(":;,\n\r-*•([{")


def located_lines(text: str, spec: ToolSpec | None) -> Iterator[Problem]:
    """Issues printed ``location: message``, one per line or ``;``-separated, where the location
    is a parameter of the tool (its first segment, once an HTTP location is dropped): a word
    before a colon that names no parameter (``ValueError:``, ``Error executing tool x:``) is
    the text's prefix, not a location."""
    if spec is None or not spec.properties:
        return
    seen: set[tuple[Any, ...]] = set()
    head = text[:4000]
    for match in _LOCATED.finditer(head):
        before = head[: match.start()].rstrip(" \t")
        if before and before[-1] not in _ISSUE_STARTS:
            continue  # "not a valid email address: ...": a word of a sentence, no location
        parts = strip_location(list(path_of(match["loc"])), spec)
        if not parts or parts[0] not in spec.properties or tuple(parts) in seen:
            continue
        seen.add(tuple(parts))
        yield _problem_for(parts, match["msg"].strip(), "", spec)


def listed_values(text: str) -> list[str]:
    """Allowed values as a message lists them: ``economy, business or first``, ``['a', 'b']``,
    ``"a" | "b"``."""
    text = text.strip().strip("[]().")
    quoted = re.findall(r"['\"`]([^'\"`]+)['\"`]", text)
    if quoted:
        return quoted
    # values apart by commas keep a slash of their own ("main, release/2026.11")
    apart = r"\s*(?:,|\||\bor\b|\band\b)\s*" if "," in text else r"\s*(?:\||/|\bor\b|\band\b)\s*"
    parts = re.split(apart, text)
    return [p.strip() for p in parts if p.strip() and len(p.strip()) < 40][:50]


def json_problems(text: str, spec: ToolSpec | None, args: Any = None) -> Iterator[Problem]:
    """The problems a JSON error body (from its first ``{`` or ``[``) lists."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return
    body: Any
    try:
        body = json.loads(text[min(starts) :])
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser takes
        return
    yield from _body_problems(body, spec, args)


def _body_problems(body: Any, spec: ToolSpec | None, args: Any = None) -> Iterator[Problem]:
    if isinstance(body, Mapping):
        if isinstance(body.get("detail"), list):  # FastAPI / pydantic
            yield from _issues(body["detail"], spec, "loc", "msg", "type", args)
            return
        for key in ("issues", "invalid-params", "invalid_params", "violations"):
            if isinstance(body.get(key), list):  # zod; RFC 7807 (name, reason); Google-style
                yield from _issues(body[key], spec, "path", "message", "code", args)
                return
        inner = body.get("error")
        if isinstance(inner, Mapping):
            if isinstance(inner.get("param"), str):  # OpenAI style
                yield _problem_for(
                    _rebased(list(path_of(inner["param"])), spec, args),
                    str(inner.get("message", "")),
                    str(inner.get("code") or inner.get("type") or ""),
                    spec,
                )
                return
            yield from _body_problems(inner, spec, args)
            return
        if isinstance(body.get("errors"), list):
            yield from _issues(body["errors"], spec, "path", "message", "code", args)
    elif isinstance(body, list):  # zod's issue list (MCP servers)
        yield from _issues(body, spec, "path", "message", "code", args)


def _issues(
    issues: Iterable[Any],
    spec: ToolSpec | None,
    loc: str,
    msg: str,
    code: str,
    args: Any = None,
) -> Iterator[Problem]:
    for issue in issues:
        if not isinstance(issue, Mapping):
            continue
        where = (
            issue.get(loc) or issue.get("loc") or issue.get("path") or issue.get("field")
            or issue.get("param") or issue.get("parameter") or _source(issue)
            or issue.get("pointer") or []
        )  # fmt: skip
        if not where and isinstance(issue.get("name"), str):  # RFC 7807 invalid-params
            where = issue["name"]
        if isinstance(where, str):
            where = _location_parts(where)
        parts = strip_location([p for p in where if p != ""], spec)
        union = _union_at(parts, spec, args)
        parts = _rebased(parts if union is None else union, spec, args)
        problem = _problem_for(
            parts,
            _issue_text(issue, msg),
            str(issue.get(code) or issue.get("code") or issue.get("type") or ""),
            spec,
            issue,
        )
        if union is not None:  # no member of the union there took the value: that value
            problem = dataclasses.replace(problem, kind="union", expected=None)
        yield problem


def _location_parts(where: str) -> list[str]:
    """An issue's location written as text -> its parts. A JSON pointer (RFC 6901:
    ``/a~1b`` is the member ``a/b``, ``~0`` is ``~``) or one written as a URI fragment (RFC
    6901 section 6, RFC 9457's example: ``#/a%20b``, percent-decoded first); a bare ``#`` or
    ``/`` is the whole body, no field; else a dotted path."""
    if where.startswith("#"):  # a URI fragment: percent-encoded, "#" alone is the document
        where = unquote(where[1:])
        if not where.startswith("/"):
            return []  # "#" (the root) or "#name" (an anchor, no member's name): no field
    if where.startswith("/"):  # ~1 first, then ~0: "~01" is the member "~1"
        return [p.replace("~1", "/").replace("~0", "~") for p in where.split("/")]
    return where.split(".")


#: How pydantic tags the member of a union an issue is in (``feature.geometry.coordinates.
#: Position2D``, ``filter.must.`list[union[...]]`.0.FieldCondition.match``, ``value.bool``): a
#: model's class name, a validator's name with brackets, a backticked type, a scalar type.
_TAG = re.compile(
    r"`[^`]*`|[\w-]+\[.*\]|[A-Z]\w*|str|int|float|bool|bytes|decimal|none|dict|list"
    r"|constrained-\w+|literal\[.*\]"
)


def _union_at(parts: list[Any], spec: ToolSpec | None, args: Any) -> list[Any] | None:
    """Where a union failed, when pydantic's location names a union member (a part shaped
    as a tag that is no key of the call's object there nor a property its schema names): the
    location up to that tag. Every member's issues (one member's missing field, another's
    type) are then one problem, the value no member took, not fields to add. None when the
    location names no member."""
    if spec is None or not isinstance(args, Mapping) or len(parts) < 2:
        return None
    for at, part in enumerate(parts):
        tag = at > 0 and isinstance(part, str) and _TAG.fullmatch(part) is not None
        # a last part is a tag only where the schema there is a union: a missing key of a
        # free-form object ("headers" -> "Authorization") is a key, whatever its case
        if (
            tag
            and not _key_at(part, tuple(parts[:at]), spec, args)
            and (at < len(parts) - 1 or _is_union(spec.schema_at(tuple(parts[:at]))))
        ):
            return parts[:at]
    return None


def _is_union(schema: Any) -> bool:
    """Whether a schema (or its items') is a union: ``anyOf`` / ``oneOf`` or several types."""
    if not isinstance(schema, Mapping):
        return False
    items = schema.get("items")
    return (
        bool(schema.get("anyOf") or schema.get("oneOf"))
        or (isinstance(schema.get("type"), list) and len(schema["type"]) > 1)
        or (isinstance(items, Mapping) and bool(items.get("anyOf") or items.get("oneOf")))
    )


def _key_at(name: str, at: tuple[Any, ...], spec: ToolSpec, args: Mapping[str, Any]) -> bool:
    """Whether ``name`` is a key of the call's object at ``at``, or a property the schema
    there (or one of its union's branches) names."""
    value = get(args, at) if has(args, at) else None
    if isinstance(value, Mapping) and name in value:
        return True
    schema = spec.schema_at(at)
    branches = [schema, *(b for k in ("anyOf", "oneOf", "allOf") for b in schema.get(k) or [])]
    return any(
        isinstance(b, Mapping)
        and isinstance(b.get("properties"), Mapping)
        and name in b["properties"]
        for b in branches
    )


def _rebased(parts: list[Any], spec: ToolSpec | None, args: Any) -> list[Any]:
    """A location as a *nested* model reports it: pydantic's ``N validation errors for
    VectorParams`` then ``distance`` when the call sends ``vectors.distance`` (the SDK
    validated the inner object on its own). A location whose head names no parameter of the
    tool is moved under the one place of the call that holds it, when exactly one does;
    otherwise it stays as written."""
    if (
        spec is None
        or not parts
        or not isinstance(parts[0], str)
        or parts[0] in spec.properties
        or not isinstance(args, Mapping)
    ):
        return parts
    found = [at for at in _containers(args, ()) if at and has(args, (*at, *parts))]
    return [*found[0], *parts] if len(found) == 1 else parts


def _containers(value: Any, at: tuple[Any, ...], depth: int = 0) -> Iterator[tuple[Any, ...]]:
    """The path of every object and list in the call (its own structure; bounded)."""
    if depth > 8:
        return
    if isinstance(value, Mapping):
        yield at
        for key, item in list(value.items())[:200]:
            yield from _containers(item, (*at, key), depth + 1)
    elif isinstance(value, list):
        yield at
        for index, item in enumerate(value[:200]):
            yield from _containers(item, (*at, index), depth + 1)


def _issue_text(issue: Mapping[str, Any], key: str) -> str:
    """An issue's message under whichever member its format uses (pydantic ``msg``, zod
    ``message``, JSON:API ``detail`` / ``title``, RFC 7807 ``reason``)."""
    for name in (key, "msg", "message", "detail", "reason", "description", "title"):
        value = issue.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return ""


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
    "decimal_parsing": "type", "decimal_type": "type", "float_type": "type", "bool_type": "type",
    "enum": "enum", "literal_error": "enum", "invalid_enum_value": "enum",
    "date_from_datetime_parsing": "format", "date_parsing": "format", "datetime_parsing": "format",
    "invalid_date": "format", "invalid_string": "format",
    "greater_than_equal": "range", "less_than_equal": "range", "greater_than": "range",
    "less_than": "range", "too_small": "range", "too_big": "range",
    "string_too_short": "length", "string_too_long": "length",
    "string_pattern_mismatch": "pattern",
}  # fmt: skip


#: Words of an issue's message -> the problem kind, for issues without a known code.
MESSAGE_KINDS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("in the past", "past date", "before today", "in the future", "future date"), "past"),
    (("required", "missing"), "missing"),
    (("extra", "not permitted", "unrecognized"), "unknown"),
    (("one of", "enum", "permitted:"), "enum"),
    (("date", "format"), "format"),
    (("greater", "less", "at least", "at most"), "range"),
    (("valid integer", "valid number", "valid decimal", "type"), "type"),
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
            (k for words, k in MESSAGE_KINDS if any(w in lowered for w in words)), "rejected"
        )  # the tool refused the value and its words say no more
    schema = dict(spec.schema_at(path)) if spec is not None else {}
    if (
        kind == "format"
        and "format" not in schema
        and re.search(r"date", f"{code} {message}", re.I)
    ):
        # pydantic's date_parsing / date_from_datetime_parsing: the field is a date
        schema["format"] = "date-time" if code.startswith("datetime") else "date"
    expected: Any = None
    if issue is not None:
        ctx = issue.get("ctx") if isinstance(issue.get("ctx"), Mapping) else {}
        options = issue.get("options") or (ctx or {}).get("expected")
        if kind == "enum" and options:
            expected = list(options) if isinstance(options, list) else listed_values(str(options))
            schema.setdefault("enum", expected)
        if kind == "type" and isinstance(issue.get("expected"), str):
            expected = TYPE_WORDS.get(issue["expected"], issue["expected"])
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
    if kind == "type" and expected is None:  # "42 is not of type 'string'", "expected an int"
        said = re.search(r"(?:of type|expected(?: an?)?|should be an?(?: valid)?)\s+['\"`]?(\w+)",
                         message, re.IGNORECASE)  # fmt: skip
        if said and said[1].lower() in TYPE_WORDS:
            expected = TYPE_WORDS[said[1].lower()]
            schema.setdefault("type", expected)
    if kind == "enum" and expected is None:
        # pydantic's text prints an enum's values after "Input should be" (its errors() put
        # them in ctx.expected)
        listed = re.search(
            r"(?:one of|permitted:|expected|should be)\s*(.+)", message, re.IGNORECASE
        )
        if listed:
            expected = listed_values(listed.group(1))
            schema.setdefault("enum", expected)
    return Problem(
        kind, path, message[:300], code, expected=expected, schema=schema, source="error"
    )
