"""Arguments sent as JSON text: whether a tool's error is about the text itself (its syntax,
which reading the text leniently has already dealt with), and the CJK input method's full-width
delimiters read as JSON's own."""

from __future__ import annotations

import json
import re

from ..saferepr import safe_str

__all__ = ["about_the_syntax", "ascii_delimiters", "closing_brackets"]

#: Words of a parser's message about JSON syntax (Python's json, pydantic's ``json_invalid``,
#: JavaScript's ``JSON.parse``, Go's and Java's decoders).
_PARSE_WORDS = re.compile(
    r"pars|syntax|invalid|decod|unexpected|expecting|unterminated|malformed|trailing comma",
    re.IGNORECASE,
)


def about_the_syntax(text: str, error: BaseException | str | int | None) -> bool:
    """Whether ``error`` is the tool's complaint about ``text`` not being JSON: never for a text
    that is valid JSON; for one that is not, when the error is a JSON decoding error, repeats
    the message Python's own decoder gives for the text, or names JSON with a parser's word
    (``Invalid JSON: trailing comma``, ``Unexpected token } in JSON at position 80``)."""
    if error is None or isinstance(error, int):
        return False
    try:
        json.loads(text)
    except (ValueError, RecursionError) as exc:
        own = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
    else:
        return False  # valid JSON: the error is about what it says, not how it is written
    if isinstance(error, json.JSONDecodeError):
        return True
    message = error if isinstance(error, str) else safe_str(error, 2000)
    message = message[:2000]
    if own and own.lower() in message.lower():
        return True
    return bool(re.search(r"\bjson\b", message, re.IGNORECASE) and _PARSE_WORDS.search(message))


#: Full-width punctuation a CJK input method types where JSON wants its ASCII delimiters.
_FULL_WIDTH = str.maketrans({"，": ",", "：": ":", "｛": "{", "｝": "}", "［": "[", "］": "]"})
#: A JSON string (double or single quoted), or a run of text between strings.
_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")


def ascii_delimiters(text: str) -> str:
    """``text`` with full-width delimiters *outside* its strings made JSON's own
    (``"2026-11-01"，"date_to"`` -> ``"2026-11-01","date_to"``); what a string holds is kept."""
    out: list[str] = []
    at = 0
    for match in _STRING.finditer(text):
        out.append(text[at : match.start()].translate(_FULL_WIDTH))
        out.append(match.group(0))
        at = match.end()
    out.append(text[at:].translate(_FULL_WIDTH))
    return "".join(out)


_CLOSER = {"{": "}", "[": "]"}


def closing_brackets(text: str) -> str | None:
    """``text`` with the closing brackets it lacks at its end (``{"a": [1, 2]`` ->
    ``{"a": [1, 2]}``), for an object whose text stops right after a complete value: a closing
    bracket or a closed string. None when nothing is missing, when the text stops inside a
    string, inside a list (``"tags": ["a", "b"`` may have lost items), or after a number or a
    literal (``"limit": 1`` may be ``10`` cut short)."""
    body = text.strip()
    if not body.startswith("{") or body[-1:] not in ('"', "}", "]"):
        return None
    stack: list[str] = []
    quoted = False
    escaped = False
    for char in body:
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in _CLOSER:
            stack.append(_CLOSER[char])
        elif char in "}]":
            if not stack or stack.pop() != char:
                return None
            if not stack:
                return None  # the object closed before the text ends: not a cut-off text
    if quoted or not stack or "]" in stack:
        return None  # a list left open may have lost items past the cut: not ours to end
    return body + "".join(reversed(stack))
