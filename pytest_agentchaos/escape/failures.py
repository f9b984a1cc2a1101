"""What a tool's result reports as a failure, for tools that return failures as data.

A shell wrapper returns a non-zero exit code, an MCP server ``isError`` with text content, an
HTTP API an error object or an error status; prose opens with ``ERROR:`` or a traceback.
:func:`failure_text` finds the failure and says it in words (an error object by its type
and message, MCP text content by its text), so it is compared as a raised error's message is.
"""

from __future__ import annotations

import json
import re
from itertools import islice
from typing import Any

from ..saferepr import safe_repr, safe_str
from .field_names import flat_name
from .normalize import parse_json_text

__all__ = ["FAILURE_FIELDS", "as_text", "failure_text", "has_failure_field"]


#: Result fields that hold a failure's text, in the order they are read.
_ERROR_TEXT = ("stderr", "error", "message", "detail", "output", "stdout", "content")
_EXIT_CODES = ("exit_code", "exitCode", "returncode", "return_code", "exit_status")
#: Fields that wrap a tool's own result: MCP's text content and structured content, and a
#: ``data`` / ``result`` envelope; a failure inside them is the result's failure.
_ENVELOPES = ("structuredContent", "data", "result")
FAILURE_FIELDS = frozenset(
    {*_EXIT_CODES, *_ENVELOPES, "is_error", "isError", "success", "ok", "status", "error",
     "content"}
)  # fmt: skip


#: A failure reported by a field of a text's ``name=value`` pairs: a non-zero exit code, an
#: error flag, a false success, an error status (the fields :func:`failure_text` reads in data).
_FAILURE_PAIR = re.compile(
    r"""\b(?:exit[_ ]?code|exit[_ ]?status|return[_ ]?code)["']?\s{0,3}[=:]?\s{0,3}-?[1-9]\d*\b
    |\bis_?error["']?\s{0,3}[=:]\s{0,3}true\b
    |\b(?:success|ok)["']?\s{0,3}[=:]\s{0,3}false\b
    |\bstatus["']?\s{0,3}[=:]\s{0,3}["']?(?:error|failed|failure)\b
    |\breturned\ non-zero\ exit\ status\b""",
    re.IGNORECASE | re.VERBOSE,
)
#: A text that opens with an error, as shells, CLIs and servers print one: ``ERROR: ...``,
#: ``Error from server (NotFound): ...``, ``fatal: ...``, ``ValueError: ...``,
#: ``Traceback (most recent call last):``, ``bash: foo: command not found``, ``错误：...``.
_ERROR_HEAD = re.compile(
    r"""\s{0,8}
    (?:(?:error|fatal|failed|failure|exception)(?:\s?\(\w+\)|\ from\ \w+(?:\ \(\w+\))?)?
        \s?[:：](?!\s*\d+\s*(?:[,;]|$))
      |\[\s?(?:error|fatal|failed|failure)\s?\]
      |[A-Z]\w{0,40}(?:Error|Exception|Failure|Fault)\b[^:\n]{0,40}?:
      |Traceback\ \(most\ recent\ call\ last\)
      |(?:ba|z|k|c|tc|da)?sh:\ (?:line\ \d+:\ |\d+:\ )?[^:\n]{1,80}:\ (?:command\ )?not\ found
      |(?:错误|异常|失败|报错)[:：])""",
    re.IGNORECASE | re.VERBOSE,
)
#: How much of a text result is read for such pairs.
_FAILURE_SCAN = 4096


def failure_text(result: Any, status: int | None = None, _depth: int = 0) -> str | None:
    """The error a call's result reports, for tools that return failures as data: an HTTP
    status >= 400, ``is_error``/``isError`` true, ``success``/``ok`` false, a non-zero exit
    code, ``status`` "error"/"failed", or a non-empty ``error`` field; in a JSON text, the
    same fields of the data it holds; in prose, the same as ``name=value`` pairs
    (``exit_code=1``, ``success: false``, ``[exit code 1]``); inside an envelope, the
    failure of what it wraps (MCP text content, ``data``, ``result``). An error object is
    told by its type and message (``ValueError: bad id``), not as its JSON. None for a
    result that reports no failure."""
    failed = status is not None and status >= 400
    if not failed and type(result) is dict and not has_failure_field(result):
        return None  # no field that could report a failure (most results)
    if isinstance(result, str) and result.lstrip()[:1] == "{":
        # the same fields in a JSON text, read as the data it holds; under an error status
        # too, so an error body is told by what its error says, not by its JSON text (whose
        # quoted values the template masks: every error body would look alike)
        parsed = parse_json_text(result)
        if isinstance(parsed, dict):
            return failure_text(parsed, status, _depth + 1)
    if not failed and isinstance(result, str):
        # name=value pairs ("exit_code=1", "success: false", "[exit code 1]") in prose
        found = _FAILURE_PAIR.search(result, 0, _FAILURE_SCAN)
        if found is not None:  # the rest is the failure's text, as a data's error field is
            return (result[: found.start()] + result[found.end() :]).strip() or result
        if _ERROR_HEAD.match(result) is not None:
            return result  # a shell's or a server's error text, as the tool handed it back
        return None
    if isinstance(result, dict):
        code = next((result[k] for k in _EXIT_CODES if k in result), None)
        failed = (
            failed
            or result.get("is_error") is True
            or result.get("isError") is True
            or result.get("success") is False
            or result.get("ok") is False
            or (isinstance(code, int) and not isinstance(code, bool) and code != 0)
            or _failed_status(result)
            or _holds_error(result.get("error"))
        )
        named = None if failed else _named_failure(result)
        if named is not None:
            return named
        if not failed:
            return None if _depth > 2 else _wrapped_failure(result, _depth)
        for field in _ERROR_TEXT:
            text = result.get(field)
            if text is not None and not (type(text) in (str, list, dict) and not text):
                return _said(text, 0) or as_text(text)
        return as_text(result)
    if not failed:
        return None
    return result if isinstance(result, str) else as_text(result)


def _failed_status(result: dict[Any, Any]) -> bool:
    """Whether a result's ``status`` reports the call's failure: "error" (JSend: the call's
    own) always; "failed" / "failure" unless it is a record's state."""
    said = _text_of(result.get("status")).lower()
    if said == "error":
        return True
    return said in ("failed", "failure") and not _describes_a_record(result)


def _describes_a_record(result: dict[Any, Any]) -> bool:
    """Whether a ``status`` "failed" is the state of a record the call fetched (a failed job
    being triaged: ``{"job": "etl-7", "status": "failed", "reason": "OOM"}``), not the call's
    own failure: no error text says what went wrong with the call, and the result carries data
    of its own beside its status (a bare ``{"status": "failed"}`` or one with a ``message`` is
    the call's)."""
    if any(result.get(field) for field in _ERROR_TEXT):
        return False
    return any(
        type(k) is str
        and k not in FAILURE_FIELDS
        and k not in _ERROR_TEXT  # an empty message or output is no record's data
        and flat_name(k) not in _CALL_METADATA
        for k in list(result)[:64]
    )


#: Fields that describe the call, not a record (lowercased, without ``_`` / ``-``): its
#: request's ids and timing, its HTTP code, the caller's attempt.
_CALL_METADATA = frozenset(
    {"requestid", "traceid", "spanid", "correlationid", "timestamp", "time", "ts", "took",
     "duration", "elapsed", "elapsedms", "latencyms", "code", "statuscode", "httpstatus",
     "attempt", "retry", "retries"}
)  # fmt: skip


#: A field's name, lowercased without ``_`` / ``-``, that holds an error's code or message
#: (``errcode``, ``error_code``, ``errorMessage``, ``errmsg``), a list of errors (GraphQL's
#: and JSON:API's ``errors``). A state field saying "failed" (``buildStatus``) is not read: it
#: describes the record fetched (a failed build being triaged), not the call.
_ERROR_CODE_NAME = re.compile(r"(?:err|error)(?:code|no|num|number)")
_ERROR_MESSAGE_NAME = re.compile(
    r"(?:err|error)(?:msg|message|detail|details|description|text|reason)"
)
#: What an error code or message says when there is no error.
_NO_ERROR = frozenset({"0", "ok", "success", "succeeded", "none", "no error", "no errors", ""})
#: How many values :func:`_texts` reads at most (a cyclic or widely shared ``errors`` value).
_TEXT_NODES = 256
#: A field name -> its kind ("code", "message", "errors") or "" (bounded memo).
_NAMES: dict[Any, str] = {}


def _name_kind(name: Any) -> str:
    """What a result's field holds by its name's convention: an error's ``code`` or
    ``message``, ``errors``; "" for any other field."""
    if type(name) is not str:  # a key of another type (whose hash or eq may raise) is no name
        return ""
    known = _NAMES.get(name)
    if known is None:
        flat = flat_name(name)
        if flat == "errors":
            known = "errors"
        elif _ERROR_CODE_NAME.fullmatch(flat):
            known = "code"
        elif _ERROR_MESSAGE_NAME.fullmatch(flat):
            known = "message"
        else:
            known = ""
        if len(_NAMES) >= 4096:
            _NAMES.clear()
        _NAMES[name] = known
    return known


def _text_of(value: Any) -> str:
    """A field's value when it is a text; "" for anything else (never its ``str``)."""
    return value if type(value) is str else ""


def _holds_error(value: Any) -> bool:
    """Whether an ``error`` field holds an error: a non-empty text, list or object, a number
    but zero, or any other value but None and False (read by type, never by a value's own
    ``__eq__``)."""
    if value is None or value is False:
        return False
    if type(value) in (str, list, dict, int, float):
        return bool(value)  # "error": 0 says there is none
    return True


def _no_error(value: Any) -> bool:
    """Whether an error code or message says there is none (``0``, ``0.0``, ``"ok"``)."""
    if type(value) in (int, float):
        return bool(value == 0)
    return type(value) is str and value.strip().lower().rstrip(".!") in _NO_ERROR


def has_failure_field(result: dict[Any, Any]) -> bool:
    """Whether a result has a field that could report a failure: one of
    :data:`FAILURE_FIELDS`, or a field named as an error's code or message, a list of
    errors (``errcode``, ``errorMessage``, ``errors``)."""
    if not FAILURE_FIELDS.isdisjoint(result):
        return True
    return any(_name_kind(name) for name in result)


def _named_failure(result: dict[Any, Any]) -> str | None:
    """The failure a result reports by its fields' naming conventions: a non-empty list of
    ``errors``; an error code that is not zero (``"errcode": 45009``, ``"errorCode":
    "BUILD_FAILED"``); an error message that is not itself "none" or "ok", when no error
    code and no ``ok`` / ``success`` / ``status`` field says there is none (``"errmsg": "ok"``
    beside ``"errcode": 0`` is no failure). Told by its code and message; None when none."""
    codes: list[Any] = []
    messages: list[str] = []
    for name, value in result.items():
        kind = _name_kind(name)
        if not kind:
            continue
        if kind == "errors":
            texts = _texts(value) if isinstance(value, (list, dict)) and value else []
            if texts:  # an errors value holding no text ({"count": 0}, {"email": []}) says none
                # each error by every text it holds, its details too (GraphQL's
                # ``extensions``): two errors with one generic message differ in them
                return ": ".join(texts)
        elif kind == "code":
            if type(value) in (int, float, str):  # a code is a number or a text, never a bool
                codes.append(value)
        elif isinstance(value, str) and not _no_error(value):
            messages.append(value)
    said_none = any(_no_error(c) for c in codes) or _reports_success(result)
    coded = [c for c in codes if not _no_error(c)]
    if not (coded or (messages and not said_none)):
        return None
    return ": ".join([safe_str(c, 200) for c in coded] + messages)


def _reports_success(result: dict[Any, Any]) -> bool:
    """Whether a result says it succeeded (``ok`` / ``success`` true, ``status`` "ok" or
    "success"): an error message beside it (``"errmsg": "none"``) reports no failure."""
    status = result.get("status")
    return (
        result.get("ok") is True
        or result.get("success") is True
        or (type(status) is str and status.strip().lower() in ("ok", "success", "succeeded"))
    )


def _texts(value: Any, limit: int = 32) -> list[str]:
    """The texts a value holds (its strings, in order; at most ``limit``), reading at most
    :data:`_TEXT_NODES` values: a cyclic or widely shared structure ends there."""
    out: list[str] = []
    todo, read = [value], 0
    while todo and len(out) < limit and read < _TEXT_NODES:
        item = todo.pop()
        read += 1
        if type(item) is str:
            if item.strip():
                out.append(item)
        elif type(item) is dict:
            todo.extend(reversed(list(islice(item.values(), limit))))
        elif type(item) is list:
            todo.extend(reversed(item[:limit]))
    return out


def _wrapped_failure(result: dict[Any, Any], depth: int) -> str | None:
    """The failure a result's envelope holds: the text of MCP text content (a shell tool's
    output as JSON text), a shell wrapper's standard output holding JSON text (an HTTP
    API's error body that ``curl`` printed, exiting 0), a ``data`` / ``result`` /
    ``structuredContent`` object."""
    content = result.get("content")
    if (
        isinstance(content, list)
        and content
        and all(isinstance(part, dict) and part.get("type") == "text" for part in content)
    ):
        text = "\n".join(str(part.get("text", "")) for part in content[:32])
        return failure_text(text, None, depth + 1)
    out = result.get("stdout")
    if isinstance(out, str) and out.lstrip()[:1] == "{":
        return failure_text(out, None, depth + 1)  # JSON text: read as the data it holds
    for field in _ENVELOPES:
        inner = result.get(field)
        if isinstance(inner, dict):
            return failure_text(inner, None, depth + 1)
    return None


#: The fields of an error object that say what went wrong, in the order they are told.
_ERROR_PARTS = ("type", "code", "name", "title", "reason", "message", "detail", "text", "msg")


def _said(value: Any, depth: int) -> str:
    """What an error field says, as text: a string as it is; an error object
    (``{"type": ..., "message": ...}``) by its type and message; a list of parts (MCP text
    content, a list of errors) by what each says. Its JSON text would make every error look
    alike once the template masks the quoted values."""
    if isinstance(value, str):
        if value.lstrip()[:1] == "{" and depth < 4:  # an error object as JSON text
            parsed = parse_json_text(value)
            if isinstance(parsed, dict):
                return _said(parsed, depth + 1) or value
        return value
    if depth > 4:
        return ""
    if isinstance(value, dict):
        if value.get("type") == "text" and "text" in value:  # a text content part (MCP)
            return _said(value["text"], depth + 1)
        named = [value[k] for k in _ERROR_PARTS if k in value]
        if named and not any(isinstance(v, (str, list, dict)) for v in named):
            return ""  # a bare code ({"code": 7}): its JSON text says it as well
        parts = [_said(v, depth + 1) for v in named]
        if not any(parts):
            parts = [_said(value[k], depth + 1) for k in _ERROR_TEXT if k in value]
        return ": ".join(p for p in parts if p)
    if isinstance(value, list):
        return "\n".join(p for p in (_said(v, depth + 1) for v in value[:32]) if p)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


def as_text(value: Any) -> str:
    """Data as canonical JSON text (its repr when JSON refuses it)."""
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    except Exception:  # too deep, or a key type JSON refuses: keyed by its repr then
        return safe_repr(value, 4000)
