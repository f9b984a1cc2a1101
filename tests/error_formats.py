"""Re-rendering a tool's error in other real formats, for the metamorphic tests of
``tests/test_repair_error_formats.py``.

An error is first taken apart *here*, independently of the repairer: into a list of issues
``(loc, msg, type)`` where it carries one (pydantic ``str()``, ``errors()`` JSON, FastAPI 422,
zod issue lists, RFC 7807 ``invalid-params``, JSON:API ``errors``, OpenAI ``error.param``),
otherwise into its prose (the message without an MCP or exception prefix, or the prose of a
JSON body). Each part is then written back in the formats real servers and clients emit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

Issue = tuple[tuple[Any, ...], str, str]

_PYDANTIC_HEAD = re.compile(r"\b\d+ validation errors? for \S+[ \t]*$", re.M)
_PYDANTIC_ISSUE = re.compile(
    r"^(?P<loc>\S[^\n]*)\n  (?P<msg>[^\n]*?)(?: \[type=(?P<type>[\w.]+)[^\n]*\])?$", re.M
)
_PREFIXES = (
    re.compile(r"^Error executing tool [\w.-]+:\s*"),
    re.compile(r"^MCP error -?\d+:\s*(?:Invalid arguments for tool [\w.-]+:\s*)?"),
    re.compile(r"^(?:[A-Z]\w*(?:Error|Exception)):\s*"),
)


def _json(text: str) -> Any:
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    try:
        return json.loads(text[start:])
    except ValueError:
        return None


def _loc_of(item: dict[str, Any]) -> tuple[Any, ...] | None:
    for key in ("loc", "path"):
        if isinstance(item.get(key), list):
            return _unlocated(tuple(item[key]))
    for key in ("name", "field", "param"):
        if isinstance(item.get(key), str):
            parts = re.split(r"[.\[\]]+", item[key])
            return _unlocated(tuple(int(p) if p.isdigit() else p for p in parts if p))
    source = item.get("source")
    if isinstance(source, dict):
        pointer = source.get("pointer") or source.get("parameter")
        if isinstance(pointer, str):
            parts = pointer.strip("/").split("/")
            return _unlocated(tuple(int(p) if p.isdigit() else p for p in parts if p))
    return None


def _unlocated(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """A location without FastAPI's leading ``body`` / ``query`` (each renderer adds its own)."""
    if len(loc) > 1 and loc[0] in ("body", "query", "path"):
        return loc[1:]
    return loc


def issues(text: str) -> list[Issue] | None:
    """The issues of a structured error, or None where it is prose."""
    if _PYDANTIC_HEAD.search(text):
        found = []
        body = text[_PYDANTIC_HEAD.search(text).end() :]
        for m in _PYDANTIC_ISSUE.finditer(body.strip("\n")):
            loc = tuple(int(p) if p.isdigit() else p for p in m["loc"].split("."))
            found.append((loc, m["msg"], m["type"] or "value_error"))
        return found or None
    body = _json(text)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        inner = body["error"]
        if isinstance(inner.get("param"), str) and isinstance(inner.get("message"), str):
            return [
                (
                    _unlocated(tuple(inner["param"].split("."))),
                    inner["message"],
                    str(inner.get("code") or inner.get("type") or "value_error"),
                )
            ]
    if isinstance(body, dict):
        for key in ("detail", "errors", "issues", "invalid-params"):
            if isinstance(body.get(key), list):
                body = body[key]
                break
    if isinstance(body, list) and body and all(isinstance(i, dict) for i in body):
        found = []
        for item in body:
            loc = _loc_of(item)
            msg = (
                item.get("msg")
                or item.get("message")
                or item.get("detail")
                or item.get("reason")
                or item.get("code")
            )
            if loc is None or not isinstance(msg, str):
                return None
            found.append((loc, msg, str(item.get("type") or item.get("code") or "value_error")))
        return found
    return None


#: Members of a JSON error body that say no more than its prose does.
_PLAIN_MEMBERS = {"error", "message", "detail", "title", "status", "type", "statusCode"}


def prose(text: str) -> str | None:
    """The message of a prose error, without a client's or exception's prefix, or the prose of a
    JSON body (its ``error`` / ``message`` / ``detail`` text); None where the body says more
    than its prose (a machine code, a parameter, a nested response): rewriting it would lose
    what the error says."""
    body = _json(text)
    if isinstance(body, dict) and text.lstrip().startswith("{"):
        inner = body.get("error")
        if not set(body) <= _PLAIN_MEMBERS or (
            isinstance(inner, dict) and not set(inner) <= _PLAIN_MEMBERS
        ):
            return None
        for key in ("error", "message", "detail", "title"):
            value = body.get(key)
            if isinstance(value, dict):
                value = value.get("message") or value.get("detail")
            if isinstance(value, str) and value.strip():
                return value
        return None
    for prefix in _PREFIXES:
        text = prefix.sub("", text, count=1)
    return text


def _dotted(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc)


def _pydantic_str(found: list[Issue], tool: str) -> str:
    lines = [f"{len(found)} validation error{'s' if len(found) > 1 else ''} for {tool}Arguments"]
    for loc, msg, kind in found:
        lines += [_dotted(loc), f"  {msg} [type={kind}, input_value=..., input_type=str]"]
    return "\n".join(lines)


def _errors_json(found: list[Issue]) -> str:
    return json.dumps(
        [{"type": k, "loc": list(loc), "msg": m, "input": None} for loc, m, k in found]
    )


def _fastapi(found: list[Issue]) -> str:
    return json.dumps(
        {"detail": [{"type": k, "loc": ["body", *loc], "msg": m} for loc, m, k in found]}
    )


def _zod(found: list[Issue], tool: str) -> str:
    issues_ = [{"code": "custom", "path": list(loc), "message": m} for loc, m, _ in found]
    return f"MCP error -32602: Invalid arguments for tool {tool}: {json.dumps(issues_, indent=2)}"


def _problem_params(found: list[Issue]) -> str:
    return json.dumps({
        "type": "about:blank", "title": "Your request parameters didn't validate.", "status": 400,
        "invalid-params": [{"name": _dotted(loc), "reason": m} for loc, m, _ in found],
    })  # fmt: skip


def _jsonapi(found: list[Issue]) -> str:
    errors = [
        {"status": "422", "source": {"pointer": "/" + "/".join(str(p) for p in loc)}, "detail": m}
        for loc, m, _ in found
    ]
    return json.dumps({"errors": errors})


#: Formats for an error that lists issues: name -> render(issues, tool name).
ISSUE_FORMATS: dict[str, Callable[[list[Issue], str], str]] = {
    "pydantic str()": _pydantic_str,
    "pydantic errors() JSON": lambda f, t: _errors_json(f),
    "FastAPI 422 body": lambda f, t: _fastapi(f),
    "zod issues via MCP": _zod,
    "RFC 7807 invalid-params": lambda f, t: _problem_params(f),
    "JSON:API errors": lambda f, t: _jsonapi(f),
    "MCP isError around pydantic str()": lambda f, t: (
        f"Error executing tool {t}: " + _pydantic_str(f, t)
    ),
    "JSON error around pydantic str()": lambda f, t: json.dumps({"error": _pydantic_str(f, t)}),
    "ValueError lines field: message": lambda f, t: (
        "ValueError: " + "; ".join(f"{_dotted(loc)}: {m}" for loc, m, _ in f)
    ),
}

#: Formats for a prose error: name -> render(message, tool name).
PROSE_FORMATS: dict[str, Callable[[str, str], str]] = {
    "MCP isError text": lambda m, t: f"Error executing tool {t}: {m}",
    "ValueError line": lambda m, t: f"ValueError: {m}",
    "JSON error": lambda m, t: json.dumps({"error": m}),
    "JSON message": lambda m, t: json.dumps({"message": m}),
    "JSON detail": lambda m, t: json.dumps({"detail": m}),
    "OpenAI error object": lambda m, t: json.dumps(
        {"error": {"message": m, "type": "invalid_request_error", "param": None, "code": None}}
    ),
    "RFC 7807 problem+json": lambda m, t: json.dumps(
        {"type": "about:blank", "title": "Bad Request", "status": 400, "detail": m}
    ),
}


def renderings(text: str, tool: str) -> dict[str, str]:
    """The error ``text`` in every format its parts fit (see the module's doc)."""
    found = issues(text)
    if found:
        return {name: render(found, tool) for name, render in ISSUE_FORMATS.items()}
    message = prose(text)
    if message is None:
        return {}
    return {name: render(message, tool) for name, render in PROSE_FORMATS.items()}
