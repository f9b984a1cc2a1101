"""A scripted model turn: what the fake provider answers, the same for every provider API.

A turn is text (``content``), tool calls, or both, with optional token usage and finish
reason. Each wire format (:mod:`.openai_chat`, :mod:`.openai_responses`,
:mod:`.anthropic_messages`) renders one turn as its API's response body or SSE stream.

Script authors write turns as dicts (``{"content": "..."}``, ``{"tool_calls": [{"name":
"search", "arguments": {"q": "x"}}]}``) or plain strings; :func:`parse_turn` checks them and
says what is wrong in one line that names where the turn came from.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...config import fail
from ...saferepr import short, type_name

__all__ = [
    "FINISH_REASONS",
    "ToolCallSpec",
    "Turn",
    "arguments_text",
    "parse_turn",
    "text_of",
]

#: The neutral finish reasons a turn may name; each format maps them to its own.
FINISH_REASONS = ("stop", "tool_calls", "length", "content_filter")

_TURN_KEYS = ("content", "tool_calls", "usage", "finish_reason")
_CALL_KEYS = ("name", "arguments", "id")
_USAGE_KEYS = ("input_tokens", "output_tokens")


@dataclass(frozen=True)
class ToolCallSpec:
    """One tool call of a turn.

    ``arguments``: a JSON-able value (usually a dict), serialised compactly; or a ``str``
    sent verbatim (it may be invalid JSON on purpose). ``id``: the call id the provider
    sends (``call_...`` / ``toolu_...``); generated deterministically when ``None``.
    """

    name: str
    arguments: Any = None
    id: str | None = None


@dataclass(frozen=True)
class Turn:
    """What the scripted model answers in one call.

    ``content``: the text (``None``: no text; ``""``: an empty text). ``usage``:
    ``(input_tokens, output_tokens)``, or ``None`` to have the format estimate them from
    the request's and the turn's text length. ``finish_reason``: one of
    :data:`FINISH_REASONS`, or ``None`` for ``"tool_calls"`` when the turn calls tools,
    else ``"stop"``.
    """

    content: str | None = None
    tool_calls: tuple[ToolCallSpec, ...] = ()
    usage: tuple[int, int] | None = None
    finish_reason: str | None = None

    @property
    def finish(self) -> str:
        """The neutral finish reason: the given one, else derived from the tool calls."""
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"


def text_of(turn: Turn) -> str:
    """The turn's text, ``""`` when it has none."""
    return turn.content or ""


def arguments_text(call: ToolCallSpec) -> str:
    """The call's arguments as the JSON text the provider sends: a ``str`` verbatim, any other
    value serialised (``None`` as ``{}``, no arguments)."""
    if isinstance(call.arguments, str):
        return call.arguments
    value = {} if call.arguments is None else call.arguments
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def parse_turn(value: object, where: str) -> Turn:
    """A :class:`Turn` from a script's value.

    Accepts a :class:`Turn` (returned as is), a ``str`` (``{"content": str}``), or a dict
    with ``content`` (a str; a dict or list is serialised to JSON text, for structured
    output), ``tool_calls`` (a list of ``{"name", "arguments"?, "id"?}``), ``usage``
    (``{"input_tokens": n, "output_tokens": m}``) and ``finish_reason`` (one of
    :data:`FINISH_REASONS`). Anything else is a ``ChaosConfigError`` (a ``ValueError``)
    whose one-line message names ``where`` and what is wrong.
    """
    __tracebackhide__ = True
    if isinstance(value, Turn):
        return value
    if isinstance(value, str):
        return Turn(content=value)
    if not isinstance(value, Mapping):
        raise fail(
            where,
            f"a turn is a str or a dict with 'content' and/or 'tool_calls', got "
            f"{type_name(value)} {short(value)}",
        )
    unknown = sorted(str(k) for k in value if k not in _TURN_KEYS)
    if unknown:
        raise fail(where, f"unknown key {unknown[0]!r}; allowed: {', '.join(_TURN_KEYS)}")
    content = _content(value.get("content"), where)
    calls = _tool_calls(value.get("tool_calls"), where)
    if content is None and not calls:
        raise fail(where, "an empty turn: give 'content' (\"\" for an empty text) or 'tool_calls'")
    usage = _usage(value.get("usage"), f"{where}: usage")
    finish = value.get("finish_reason")
    if finish is not None and finish not in FINISH_REASONS:
        raise fail(
            where, f"finish_reason: {short(finish)} is not one of {', '.join(FINISH_REASONS)}"
        )
    return Turn(content=content, tool_calls=calls, usage=usage, finish_reason=finish)


def _content(value: object, where: str) -> str | None:
    __tracebackhide__ = True
    if value is None:
        return None
    if isinstance(value, str):
        return _unicode(value, f"{where}: content")
    if isinstance(value, (dict, list)):
        return _json_text(value, f"{where}: content")
    raise fail(
        where,
        f"content: must be a str (or a dict/list, sent as JSON text), got {type_name(value)} "
        f"{short(value)}",
    )


def _tool_calls(value: object, where: str) -> tuple[ToolCallSpec, ...]:
    __tracebackhide__ = True
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise fail(where, f"tool_calls: must be a list of calls, got {type_name(value)}")
    calls = []
    seen: set[str] = set()
    for i, raw in enumerate(value):
        at = f"{where}: tool_calls[{i}]"
        if isinstance(raw, ToolCallSpec):
            call = raw
        else:
            if not isinstance(raw, Mapping):
                raise fail(at, f"a call is a dict with 'name' and 'arguments', got {short(raw)}")
            unknown = sorted(str(k) for k in raw if k not in _CALL_KEYS)
            if unknown:
                raise fail(at, f"unknown key {unknown[0]!r}; allowed: {', '.join(_CALL_KEYS)}")
            call = ToolCallSpec(
                name=raw.get("name"),  # type: ignore[arg-type]  # checked below
                arguments=raw.get("arguments", {}),
                id=raw.get("id"),
            )
        if not isinstance(call.name, str) or not call.name:
            raise fail(at, f"name: must be a non-empty str, got {short(call.name)}")
        if call.id is not None and (not isinstance(call.id, str) or not call.id):
            raise fail(at, f"id: must be a non-empty str, got {short(call.id)}")
        if call.id is not None:
            if call.id in seen:
                raise fail(at, f"id: {call.id!r} is used by an earlier call of this turn")
            seen.add(call.id)
        if isinstance(call.arguments, str):
            _unicode(call.arguments, f"{at}: arguments")
        else:
            _json_text(call.arguments, f"{at}: arguments")
        calls.append(call)
    return tuple(calls)


def _usage(value: object, where: str) -> tuple[int, int] | None:
    __tracebackhide__ = True
    if value is None:
        return None
    if isinstance(value, (tuple, list)) and len(value) == 2:
        pair = {"input_tokens": value[0], "output_tokens": value[1]}
    elif isinstance(value, Mapping):
        unknown = sorted(str(k) for k in value if k not in _USAGE_KEYS)
        if unknown:
            raise fail(where, f"unknown key {unknown[0]!r}; allowed: {', '.join(_USAGE_KEYS)}")
        missing = [k for k in _USAGE_KEYS if k not in value]
        if missing:
            raise fail(where, f"missing {missing[0]!r}; give both {' and '.join(_USAGE_KEYS)}")
        pair = dict(value)
    else:
        raise fail(where, f"must be {{'input_tokens': n, 'output_tokens': m}}, got {short(value)}")
    for key, n in pair.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise fail(where, f"{key}: must be an int >= 0, got {short(n)}")
    return (pair["input_tokens"], pair["output_tokens"])


def _unicode(text: str, where: str) -> str:
    """``text`` if it can go on the wire as UTF-8 (no lone surrogate), else a
    ``ChaosConfigError``."""
    __tracebackhide__ = True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise fail(
            where, f"not valid Unicode text (a lone surrogate at index {exc.start})"
        ) from None
    return text


def _json_text(value: object, where: str) -> str:
    """``value`` as compact JSON text, or a ``ChaosConfigError`` saying why it is not JSON."""
    __tracebackhide__ = True
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise fail(where, f"not JSON-serialisable: {exc}") from None
    except RecursionError:
        raise fail(where, "not JSON-serialisable: nested too deeply") from None
    return _unicode(text, where)


def estimate_tokens(text: str) -> int:
    """A deterministic token estimate: one token per 4 characters, rounded up."""
    return math.ceil(len(text) / 4)
