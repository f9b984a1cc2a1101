"""What the quiet faults make of a call's real output, in the output's own shape.

A tool that fails quietly still answers in its usual shape: its envelope, its types, its
JSON text. These functions read that shape from the output itself, never from a list of
field names grown from one example:

- **the data is the lists.** In a dict that holds a list anywhere below it (through dicts),
  the lists are the data and the other values describe it (a status, a query, page
  metadata); in a dict with no list, its nested dicts are the data (records).
- **page metadata is read from its names' words**, split from ``snake_case`` and
  ``camelCase`` (``nextPageToken`` -> next, page, token), after the paging conventions of
  public APIs: a boolean that says more exists (``has_more`` of Stripe and OpenAI lists,
  ``hasNextPage`` of GraphQL connections, ``IsTruncated`` of AWS, ``incomplete_results`` of
  GitHub search) becomes false; where the next page is (``next`` of Django REST framework,
  ``next_cursor`` of Slack and Notion, ``nextPageToken`` of Google APIs, ``NextToken`` of AWS,
  ``nextLink`` of Azure) becomes null; a count of the whole (``count``, ``total_count``,
  ``totalResults``, ``numFound``) at least as large as the list becomes the list's new size.
- **JSON text stays JSON text** of the same kind (``str`` or ``bytes``), its separators
  kept; any other text is prose.

Each function returns the new output, or :data:`~.effects.UNCHANGED` when the output gives
it nothing to act on. None changes its input in place (a tool may return an object it keeps,
such as a cached dict): containers are copied along the path that changes. Iterators are
never consumed (the agent may need them): only :func:`emptied` acts on one, by returning an
empty iterator instead. Recursion stops :data:`MAX_DEPTH` levels down, so a cyclic or deeply
nested output costs no more than a shallow one; text longer than :data:`MAX_JSON_TEXT` is
prose (it is not parsed), so a 100 MB output stays cheap.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

from .effects import UNCHANGED

__all__ = [
    "MAX_DEPTH",
    "MAX_JSON_TEXT",
    "cut_short",
    "emptied",
    "errored",
    "injected",
    "key_words",
]

#: How deep the functions look into nested outputs.
MAX_DEPTH = 32
#: Text longer than this (in characters or bytes) is not parsed as JSON.
MAX_JSON_TEXT = 8 * 1024 * 1024

_JSON_START = re.compile(r"\s*[\[{]")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

#: Words of the names of page metadata (see the module doc).
_MORE = frozenset({"more", "next", "truncated", "incomplete"})
_NEXT = frozenset({"next"})
_COUNT = frozenset({"total", "count", "found"})


def key_words(key: object) -> frozenset[str]:
    """The lower-case words of a field name (``nextPageToken`` -> next, page, token)."""
    if not isinstance(key, str):
        return frozenset()
    return frozenset(w.lower() for w in _WORDS.findall(key))


# -- the kinds of values ------------------------------------------------------------------


def _is_seq(value: Any) -> bool:
    """A list or a tuple that is not a record (a named tuple)."""
    return isinstance(value, list) or (
        isinstance(value, tuple) and not hasattr(type(value), "_fields")
    )


def _is_collection(value: Any) -> bool:
    return _is_seq(value) or isinstance(value, (set, frozenset, dict))


def _fields(value: Any) -> dict[str, Any] | None:
    """The fields of a record object (a dataclass, a pydantic model, a named tuple), by name;
    ``None`` for anything else."""
    try:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if f.init}
        model_fields = getattr(type(value), "model_fields", None)
        if isinstance(model_fields, Mapping) and callable(getattr(value, "model_copy", None)):
            return {name: getattr(value, name) for name in model_fields}
        names = getattr(type(value), "_fields", None)
        if isinstance(value, tuple) and isinstance(names, tuple):
            return dict(zip(names, value, strict=False))
    except Exception:  # an object whose attributes raise: not a record we can rebuild
        return None
    return None


def _rebuilt(value: Any, changes: Mapping[str, Any]) -> Any:
    """A record object with ``changes`` made (a copy), or :data:`UNCHANGED` when its type
    refuses them (a validator of its own)."""
    try:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return dataclasses.replace(value, **changes)
        if isinstance(value, tuple):
            return value._replace(**changes)  # type: ignore[attr-defined]
        return value.model_copy(update=dict(changes))
    except Exception:
        return UNCHANGED


def _copy_dict(value: dict[Any, Any]) -> dict[Any, Any]:
    return dict(value) if type(value) is dict else copy.copy(value)


def _with_items(value: Any, items: list[Any]) -> Any:
    """A list or tuple of ``value``'s own type holding ``items``."""
    if type(value) is list:
        return items
    if type(value) is tuple:
        return tuple(items)
    if isinstance(value, list):
        new = copy.copy(value)
        new[:] = items
        return new
    try:
        return type(value)(items)
    except Exception:
        return tuple(items)


def _has_list(value: Any, depth: int = 0) -> bool:
    """Whether a list (or tuple) is in ``value``, or below it through dicts and records."""
    if depth > MAX_DEPTH:
        return False
    if _is_seq(value):
        return True
    children = value if isinstance(value, dict) else _fields(value)
    if children is None:
        return False
    return any(_has_list(v, depth + 1) for v in children.values())


# -- JSON text ----------------------------------------------------------------------------


def _via_json(value: Any, act: Callable[[Any], Any]) -> Any:
    """``act`` applied to the JSON object or array that ``value`` (text or bytes) holds,
    written back as text of the same kind; ``None`` when ``value`` is not such JSON text."""
    if isinstance(value, (bytes, bytearray)):
        if len(value) > MAX_JSON_TEXT or not re.match(rb"\s*[\[{]", value):
            return None
        try:
            text = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return None
    elif isinstance(value, str):
        if len(value) > MAX_JSON_TEXT or not _JSON_START.match(value):
            return None
        text = value
    else:
        return None
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return None
    new = act(parsed)
    if new is UNCHANGED:
        return UNCHANGED
    compact = '": ' not in text and '", ' not in text
    out = json.dumps(
        new,
        ensure_ascii=False,
        indent=2 if "\n" in text.strip() else None,
        separators=(",", ":") if compact else None,
    )
    return out.encode("utf-8") if isinstance(value, (bytes, bytearray)) else out


# -- page metadata --------------------------------------------------------------------------


def _no_more(meta: Any, before: int, after: int, skip: object = None, depth: int = 0) -> Any:
    """``meta`` (a dict or record on the path to a list cut from ``before`` to ``after``
    items) with its page metadata saying no more exists (see the module doc); ``skip`` is the
    key of the path itself, left alone. The same ``meta`` object when nothing in it is page
    metadata."""
    children = meta if isinstance(meta, dict) else _fields(meta)
    if children is None or depth > MAX_DEPTH:
        return meta
    changes: dict[Any, Any] = {}
    for key, value in children.items():
        if key == skip:
            continue
        words = key_words(key)
        if isinstance(value, bool):
            if value and words & _MORE:
                changes[key] = False
        elif value is None:
            continue
        elif words & _NEXT and isinstance(value, (str, int, float)):
            changes[key] = None
        elif isinstance(value, int) and words & _COUNT and before > 0 and value >= before:
            if value != after:
                changes[key] = after
        elif isinstance(value, dict) and not _has_list(value, depth + 1):
            inner = _no_more(value, before, after, None, depth + 1)  # pageInfo, links, meta
            if inner is not value:
                changes[key] = inner
    if not changes:
        return meta
    if not isinstance(meta, dict):
        rebuilt = _rebuilt(meta, changes)
        return meta if rebuilt is UNCHANGED else rebuilt
    new = _copy_dict(meta)
    new.update(changes)
    return new


# -- empty_output -------------------------------------------------------------------------


async def _no_items() -> AsyncIterator[Any]:
    return
    yield  # pragma: no cover - makes this an async generator


def emptied(value: Any) -> Any:
    """``value`` emptied in its own shape: ``[]``, ``{}``, ``""``, an envelope with its data
    emptied (``{"status": "ok", "results": [...], "total": 12}`` -> ``{"status": "ok",
    "results": [], "total": 0}``), a record dict as ``{}``, a record object (dataclass,
    pydantic model, named tuple) with its list and dict fields emptied, JSON text as JSON
    text, an iterator as an empty one. :data:`UNCHANGED` for what is empty already or has no
    empty form (``None``, numbers, other objects)."""
    if isinstance(value, (str, bytes, bytearray)):
        via = _via_json(value, emptied)
        if via is not None:
            return via
        return value[:0] if value else UNCHANGED
    if hasattr(value, "__anext__"):
        return _no_items()
    if isinstance(value, Iterator):
        return iter(())
    new, _ = _emptied(value, 0)
    return new


def _emptied(value: Any, depth: int) -> tuple[Any, int]:
    """(``value`` emptied or :data:`UNCHANGED`, how many items the largest list emptied in it
    held)."""
    if depth > MAX_DEPTH:
        return UNCHANGED, 0
    if _is_seq(value):
        return (_with_items(value, []), len(value)) if len(value) else (UNCHANGED, 0)
    if isinstance(value, (set, frozenset)):
        return (type(value)(), len(value)) if value else (UNCHANGED, 0)
    if isinstance(value, dict):
        if not value:
            return UNCHANGED, 0
        if not _has_list(value) and not any(
            isinstance(v, dict) or _fields(v) is not None for v in value.values()
        ):
            record = _copy_dict(value)  # a record: its empty form has no fields
            record.clear()
            return record, 0
        return _emptied_envelope(value, depth)
    fields = _fields(value)
    if fields is None:
        return UNCHANGED, 0
    changes, most = _emptied_children(fields, depth)
    if not changes:
        return UNCHANGED, 0
    rebuilt = _rebuilt(value, changes)
    return (UNCHANGED, 0) if rebuilt is UNCHANGED else (_no_more(rebuilt, most, 0), most)


def _emptied_children(children: Mapping[Any, Any], depth: int) -> tuple[dict[Any, Any], int]:
    """The emptied form of each child that is data (see the module doc), and the size of the
    largest list emptied."""
    holds_list = any(_has_list(v, depth + 1) for v in children.values())
    changes: dict[Any, Any] = {}
    most = 0
    for key, child in children.items():
        if _is_seq(child) or isinstance(child, (set, frozenset)):
            new, n = _emptied(child, depth + 1)
        elif isinstance(child, dict) or _fields(child) is not None:
            if holds_list and not _has_list(child, depth + 1):
                continue  # metadata beside the data (pageInfo, links): adjusted below
            new, n = _emptied(child, depth + 1)
        else:
            continue
        if new is not UNCHANGED:
            changes[key] = new
            most = max(most, n)
    return changes, most


def _emptied_envelope(value: dict[Any, Any], depth: int) -> tuple[Any, int]:
    changes, most = _emptied_children(value, depth)
    if not changes:
        return UNCHANGED, 0
    new = _copy_dict(value)
    new.update(changes)
    return _no_more(new, most, 0), most


# -- partial_output -------------------------------------------------------------------------


def _longest(value: Any, depth: int = 0) -> tuple[tuple[Any, ...], int] | None:
    """(the path to the longest list in ``value``, reached through dicts and records from
    the top, its length); the first one found when several are as long."""
    if depth > MAX_DEPTH:
        return None
    if _is_seq(value):
        return (), len(value)
    children = value if isinstance(value, dict) else _fields(value)
    if children is None:
        return None
    best: tuple[tuple[Any, ...], int] | None = None
    for key, child in children.items():
        found = _longest(child, depth + 1)
        if found is not None and (best is None or found[1] > best[1]):
            best = ((key, *found[0]), found[1])
    return best


def _replaced(value: Any, key: Any, child: Any) -> Any:
    """A copy of a dict or record ``value`` whose ``key`` holds ``child``."""
    if isinstance(value, dict):
        new = _copy_dict(value)
        new[key] = child
        return new
    return _rebuilt(value, {key: child})


def cut_short(value: Any) -> Any:
    """``value`` with its longest list (reached through dicts from the top; the output itself
    when it is a list) cut to half its items, at least one dropped, and the page metadata of
    the dicts above it saying no more exists (see the module doc), so nothing tells that
    items are missing. JSON text stays text. :data:`UNCHANGED` when there is no list of two
    items or more (plain text, scalars, iterators are left alone)."""
    if isinstance(value, (str, bytes, bytearray)):
        via = _via_json(value, cut_short)
        return UNCHANGED if via is None else via
    found = _longest(value)
    if found is None or found[1] < 2:
        return UNCHANGED
    path, size = found
    keep = size // 2
    return _cut_at(value, path, size, keep)


def _cut_at(value: Any, path: tuple[Any, ...], size: int, keep: int) -> Any:
    if not path:
        return _with_items(value, list(value[:keep]))
    key, rest = path[0], path[1:]
    children = value if isinstance(value, dict) else _fields(value)
    assert children is not None
    child = _cut_at(children[key], rest, size, keep)
    if child is UNCHANGED:
        return UNCHANGED
    new = _replaced(value, key, child)
    if new is UNCHANGED:
        return UNCHANGED
    return _no_more(new, size, keep, skip=key)


# -- error_in_body --------------------------------------------------------------------------

#: A success word's failure word, in the same style (the value's case is kept).
_FAILED = {
    "ok": "error",
    "success": "failure",
    "successful": "failed",
    "succeeded": "failed",
    "completed": "failed",
    "complete": "failed",
    "done": "failed",
    "passed": "failed",
}
_FAILURES = frozenset({"error", "failure", "failed", "fail", "errored"})
_SUCCESS_FLAGS = frozenset({"success", "ok", "succeeded", "successful"})


def _same_case(word: str, like: str) -> str:
    if like.isupper():
        return word.upper()
    if like[:1].isupper():
        return word.capitalize()
    return word


def _failed_status(value: Any) -> Any:
    """The failure counterpart of a ``status`` value (``"ok"`` -> ``"error"``, ``"Success"``
    -> ``"Failure"``, ``True`` -> ``False``, 200 -> 500), or :data:`UNCHANGED` (a failure
    already, or no value of a known style)."""
    if isinstance(value, bool):
        return False if value else UNCHANGED
    if isinstance(value, int):
        return 500 if 200 <= value < 300 else UNCHANGED
    if not isinstance(value, str) or not value.strip():
        return UNCHANGED
    word = value.strip()
    if word.lower() in _FAILURES:
        return UNCHANGED
    return _same_case(_FAILED.get(word.lower(), "error"), word)


def errored(value: Any, message: str) -> Any:
    """``value`` as a normal answer whose body says the call failed with ``message``: an
    envelope's ``status`` turned to its failure counterpart in the same style and its
    ``success`` / ``ok`` flags false, its lists emptied, ``message`` in its ``error`` or
    ``message`` field (added as ``message`` beside a status it failed, else as an ``error``
    object); a list becomes ``{"error": {"message": ...}}``; text (and ``None``: the tool
    answered nothing) becomes ``"Error: <message>"``; JSON text stays JSON text. A record
    object (dataclass, pydantic model) changes only when it has a status or success field.
    :data:`UNCHANGED` for numbers, iterators and other objects."""
    if isinstance(value, (str, bytes, bytearray)):
        via = _via_json(value, lambda parsed: errored(parsed, message))
        if via is not None:
            return via
        sentence = f"Error: {message}"
        return sentence.encode("utf-8") if isinstance(value, (bytes, bytearray)) else sentence
    if value is None:
        return f"Error: {message}"
    if _is_seq(value):
        return {"error": {"message": message}}
    if isinstance(value, dict):
        new, _ = _emptied_envelope(value, 0) if _has_list(value) else (UNCHANGED, 0)
        new = _copy_dict(value) if new is UNCHANGED else new
        return _say_failed(new, message, add=True)
    fields = _fields(value)
    if fields is None:
        return UNCHANGED
    changes = _say_failed(dict(fields), message, add=False)
    if changes is UNCHANGED:
        return UNCHANGED
    return _rebuilt(value, {k: v for k, v in changes.items() if fields.get(k) is not v})


def _say_failed(body: dict[Any, Any], message: str, *, add: bool) -> Any:
    """``body`` (a copy) saying it failed; ``add``: fields may be added (a dict)."""
    failed = False
    for key, value in list(body.items()):
        words = key_words(key)
        if words == {"status"}:
            new = _failed_status(value)
            if new is not UNCHANGED:
                body[key], failed = new, True
        elif isinstance(value, bool) and value and words and words <= _SUCCESS_FLAGS:
            body[key], failed = False, True
    error_key = next((k for k in body if key_words(k) == {"error"}), None)
    message_key = next((k for k in body if key_words(k) == {"message"}), None)
    if error_key is not None:
        current = body[error_key]
        if isinstance(current, dict):
            body[error_key] = {**current, "message": message}
        else:
            body[error_key] = message
    elif message_key is not None and (failed or isinstance(body[message_key], str)):
        body[message_key] = message
    elif not add:
        return body if failed else UNCHANGED
    elif failed:
        body["message"] = message
    else:
        body["error"] = {"message": message}
    return body


# -- injected_instruction ---------------------------------------------------------------------


def _prose_key(fields: Mapping[Any, Any]) -> Any:
    """The key of the longest text in ``fields`` that reads as prose (it has a space), else
    ``None``: where an instruction hides best (a snippet, a description, a page's content)."""
    best, size = None, -1
    for key, value in fields.items():
        if isinstance(value, str) and " " in value and len(value) > size:
            best, size = key, len(value)
    return best


def _appended(text: str, instruction: str) -> str:
    return f"{text}\n\n{instruction}" if text else instruction


def injected(value: Any, instruction: str) -> Any:
    """``value`` carrying ``instruction``: appended to text (JSON text stays JSON text, the
    instruction inside it); in a dict, appended to the prose of the first item of its
    longest list (a result's snippet or description), else to its own longest prose field,
    else in a new ``note`` field; in a list, in its first item; in a record object, in its
    prose field. :data:`UNCHANGED` for ``None``, numbers, empty lists, iterators and objects
    with no text field."""
    if isinstance(value, (str, bytes, bytearray)):
        via = _via_json(value, lambda parsed: injected(parsed, instruction))
        if via is not None:
            return via
        if isinstance(value, (bytes, bytearray)):
            try:
                return _appended(bytes(value).decode("utf-8"), instruction).encode("utf-8")
            except UnicodeDecodeError:
                return UNCHANGED
        return _appended(value, instruction)
    return _injected(value, instruction, 0)


def _injected(value: Any, instruction: str, depth: int, item: bool = False) -> Any:
    """``item``: ``value`` is an item of a list (a result), whose own prose comes first."""
    if depth > MAX_DEPTH:
        return UNCHANGED
    if isinstance(value, str):
        return _appended(value, instruction)
    if _is_seq(value):
        if not value:
            return UNCHANGED
        first = _injected(value[0], instruction, depth + 1, item=True)
        if first is UNCHANGED:
            return UNCHANGED
        return _with_items(value, [first, *value[1:]])
    children = value if isinstance(value, dict) else _fields(value)
    if children is None:
        return UNCHANGED
    prose = _prose_key(children)
    if item and prose is not None:
        return _replaced(value, prose, _appended(children[prose], instruction))
    found = _longest(value)
    if found is not None and found[0] and found[1] > 0:
        key = found[0][0]
        inner = _injected(children[key], instruction, depth + 1)
        if inner is not UNCHANGED:
            return _replaced(value, key, inner)
    if prose is not None:
        return _replaced(value, prose, _appended(children[prose], instruction))
    if not isinstance(value, dict):
        return UNCHANGED
    new = _copy_dict(value)
    key = next(k for k in ("note", "notes", "_note", "agent_note") if k not in value)
    new[key] = instruction
    return new
