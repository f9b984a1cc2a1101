"""Error messages and model texts reduced to what comparing them needs.

:func:`error_template` masks numbers, quoted values and paths in an error message (after the
volatile tokens :func:`~.normalize.mask_text` masks), so "the same error" survives a changing
line number or file name; :func:`error_signature` also takes out the words the call's own
arguments lent the message; :func:`text_tokens` and :func:`text_shingles` reduce a model's text
to its words (and, for Chinese or Japanese, its characters) for near-duplicate checks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from .normalize import mask_text

__all__ = [
    "SHORT_TEXT",
    "artefact",
    "error_signature",
    "error_template",
    "inline_artefact",
    "reply_text",
    "text_shingles",
    "text_tokens",
]


#: How much of an error message its template keeps (tracebacks run long; the head says it).
_TEMPLATE_LIMIT = 2000

_MESSAGE_PARTS = re.compile(
    r"""
    (?P<url>\b[a-z][a-z0-9+.-]*://[^\s'"`<>]+)
    |(?P<quoted>(?<![A-Za-z])'[^'\n]{0,200}'(?![A-Za-z])|"[^"\n]{0,200}"|`[^`\n]{0,200}`)
    |(?P<path>(?:[A-Za-z]:\\|~?/|\.{1,2}/)[^\s'"`,;:()\[\]{}<>]*
      |\b[\w.-]+(?:/[\w.-]+)+)
    |(?P<number>\d+(?:\.\d+)?)
    """,
    re.VERBOSE,
)
_SPACE = re.compile(r"\s+")


def _message_part(match: re.Match[str]) -> str:
    return f"<{match.lastgroup}>"


def _message_part_but_numbers(match: re.Match[str]) -> str:
    group = match.lastgroup
    return match.group(0) if group == "number" else f"<{group}>"


def _message_part_but_counts(match: re.Match[str]) -> str:
    if match.lastgroup == "number" and _count(match):
        return match.group(0)
    return f"<{match.lastgroup}>"


#: What may stand before a count: the text's start, or a separator (``7 failed, 205 passed``,
#: ``Tests: 3 failed``); a word before a number makes it that word's (``line 10``, ``第 3 行``).
_BEFORE_COUNT = re.compile(r"(?:^|[,;:(\[|\n\u3000-\u303f\uff00-\uff0f\uff1a-\uff20])\s*$")
_AFTER_COUNT = re.compile(r" [^\W\d_]")


def _count(match: re.Match[str]) -> bool:
    """Whether a number is a count: a whole number standing before the word it counts, with
    no word of its own before it (``7 failed``, not ``line 7``, ``1.5 s`` or ``70%``)."""
    text, start, end = match.string, match.start(), match.end()
    if "." in match.group(0) or _AFTER_COUNT.match(text, end) is None:
        return False
    return _BEFORE_COUNT.search(text, max(0, start - 8), start) is not None


def error_template(message: str | None, *, numbers: bool = True, counts: bool = False) -> str:
    """An error message as a template: volatile tokens, URLs, quoted values, paths and
    numbers masked, whitespace collapsed. The same error about another file, line or id
    gives the same template; a different error gives a different one. ``numbers=False``
    keeps the numbers: an error at another line is then another error. ``counts=True`` keeps
    the counts among them (``7 failed, 205 passed``): a failure a tool reports as data, whose
    counts are what the agent reads."""
    if not message:
        return ""
    text = mask_text(message[:_TEMPLATE_LIMIT])
    if not numbers:
        part = _message_part_but_numbers
    else:
        part = _message_part_but_counts if counts else _message_part
    return _SPACE.sub(" ", _MESSAGE_PARTS.sub(part, text)).strip()


_WORD = re.compile(r"<[a-z]+>|[^\W_]+(?:'[^\W_]+)?")
#: How much of a model's text near-duplicate checks read.
_TEXT_LIMIT = 4000


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def text_tokens(text: str) -> frozenset[str]:
    """The distinct words of ``text`` (lowercased, volatile tokens and numbers masked,
    punctuation dropped): what near-duplicate model outputs share. A thought that differs
    from the last one by a count ("attempt 3", "retrying (4/5)") is the same thought."""
    masked = _NUMBER.sub("<n>", mask_text(text[:_TEXT_LIMIT]))
    return frozenset(_WORD.findall(masked.lower()))


#: A text with fewer tokens than this is short: its numbers and identifiers are what it says.
SHORT_TEXT = 16
_CJK = "\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff"
_SHINGLE = re.compile(rf"<[a-z]+>|[{_CJK}]+|[^\W_]+(?:'[^\W_]+)?")
_CJK_RUN = re.compile(rf"[{_CJK}]")
_CJK_NUMERALS = frozenset("零一二三四五六七八九十百千万两")
#: Words (their beginnings) after which a number counts the attempts, not the content
#: (``attempt 3``, ``第3次``).
COUNTER_WORDS = ("attempt", "try", "tries", "retr", "iter", "round", "loop", "pass", "cycle",
                  "turn", "tick", "第", "次", "轮", "遍")  # fmt: skip


def _counter_word(word: str) -> bool:
    return bool(word) and word.startswith(COUNTER_WORDS)


def text_shingles(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """What a model's text says, for near-duplicate checks: ``(tokens, values)``. Tokens are
    its words (lowercased, volatile tokens masked) and, for Chinese or Japanese, its
    characters and character pairs. ``values`` are the numbers and identifiers of a short
    text (fewer than :data:`SHORT_TEXT` tokens), CJK numerals included, unless a counter word
    precedes them: two short texts that differ in them are different ("step 1" and "step
    2", "方案一" and "方案二"), and the words of its paths. A long text's numbers are masked,
    so a thought that differs by a count is the same thought. Masking never empties a text:
    a text of volatile tokens alone (a stream of random chunks) keeps them."""
    head = text[:_TEXT_LIMIT]
    masked = mask_text(head)
    if not _WORD_CHARS.search(_PLACEHOLDER.sub("", masked)):
        masked = head  # masking would leave nothing: the tokens are the content
    words = _SHINGLE.findall(masked.lower())
    tokens: set[str] = set()
    values: set[str] = set()
    count = 0
    for word in words:
        count += (len(word) + 1) // 2 if _CJK_RUN.match(word) else 1
    short = count < SHORT_TEXT
    previous = ""
    for word in words:
        if _CJK_RUN.match(word):
            # characters in a short text (a one-character change costs one token, as a word
            # does), character pairs in a long one (the same characters in another order
            # are another text)
            if short or len(word) == 1:
                tokens.update(word)
            else:
                tokens.update(word[i : i + 2] for i in range(len(word) - 1))
            if short:
                for i, ch in enumerate(word):
                    before = word[i - 1] if i else previous[-1:]
                    if ch in _CJK_NUMERALS and not _counter_word(before):
                        values.add(ch)
        elif any(c.isdigit() for c in word):
            if short and not _counter_word(previous) and not word.startswith("<"):
                values.add(word)
                tokens.add(word)
            else:
                tokens.add(_NUMBER.sub("<n>", word))
        else:
            tokens.add(word)
        previous = word
    if short and "/" in masked:
        # a path names something: its segments' words are what a short text says (list
        # items sharing a long prefix, ``projects/p/services/checkout-api`` then
        # ``.../checkout-worker``, are an enumeration, not the same text)
        for path in _PATH.findall(masked):
            named = _SHINGLE.findall(path.lower())
            if not all(w.isdigit() for w in named):  # (3/5), 11/27/2026: a count, a date
                values.update(named)
    if "`" in masked:
        # inline code (a setting, a command, a name) is what a text hands over: two texts
        # that differ in it say different things however many words they share
        # (spacing around its punctuation aside: ``http: //x;`` is ``http://x;``)
        values.update("`" + _code(c) for c in _INLINE_CODE.findall(masked)[:8])
    if not short and _OPERAND.search(masked) is not None:
        # a long text's numbers are masked (a count that rises is no news), but a literal a
        # comparison or an assignment takes (``>= '2026-11-15'``, ``amount > 500``) is a
        # condition the text hands over: a query whose date window moves is another query
        values.update("=" + _SPACE.sub(" ", m) for m in _OPERAND.findall(masked)[:16])
    if short and ("-" in masked or "_" in masked or "." in masked):
        # a name joined of words and numbers (``us-east-1``, ``eu-central-1``, ``node_3``)
        # is one identifier: another name is another item, not the same text with its
        # number counted up
        for name in _JOINED.findall(masked.lower()):
            parts = _SHINGLE.findall(name)
            if any(p.isdigit() for p in parts) and not all(p.isdigit() for p in parts):
                values.add(name)
    return frozenset(tokens), frozenset(values)


#: A literal holding a digit, taken by a comparison or an assignment operator: a quoted one
#: (``= '2026-11-15'``, ``> "10"``) or a bare number (``<= 500``, ``>=0.95``).
_OPERAND = re.compile(
    r"(?<![-=<>!])(?:[<>!=]=|<>|[<>=])\s{0,2}"
    r"((?:'[^'\n]{0,40}\d[^'\n]{0,40}'|\"[^\"\n]{0,40}\d[^\"\n]{0,40}\"|"
    r"-?\d+(?:[.,]\d+)*)(?!\w|[.,]\d))"
)


def _code(code: str) -> str:
    """Inline code as compared: spacing collapsed, and none around punctuation."""
    return _PUNCT_SPACE.sub(r"\1", _SPACE.sub(" ", code.strip()))


_PUNCT_SPACE = re.compile(r"\s*([^\w\s])\s*")
#: An inline code span (not a fence).
_INLINE_CODE = re.compile(r"(?<!`)`([^`\n]{1,200})`(?!`)")
#: Words and numbers joined by ``-``, ``_`` or ``.`` into one name.
_JOINED = re.compile(r"[^\W_]+(?:[-_.][^\W_]+)+")


#: A path: word characters joined by ``/`` (``src/app.py``, ``projects/p/services/x``).
_PATH = re.compile(r"[^\s/]*[^\W_][^\s/]*(?:/[^\s/]*[^\W_][^\s/]*)+")


_PLACEHOLDER = re.compile(r"<[a-z]+>")
_WORD_CHARS = re.compile(r"[^\W_]")


#: How much of the arguments an error signature reads for the words they lend the message.
_ARGS_LIMIT = 8000


def error_signature(
    message: str | None, args: Any, *, numbers: bool = True, counts: bool = False
) -> str:
    """What stays of an error when the call's own input is taken out: the words of its
    message that do not occur in the call's arguments, in order, without what its template
    (:func:`error_template`) masks (numbers, quoted values, paths, URLs, volatile tokens).
    An error that echoes what it was given ("column 'created' does not exist: SELECT ...",
    "pod 'api-7d9f-2xkqp' not found") has one signature whatever the agent passed, so the
    same error coming back while the arguments vary is seen; a different error keeps a
    different signature. ``numbers=False`` keeps the numbers; ``counts=True`` the counts (a
    failure a tool reports as data, "7 failed" then "5 failed": the count is what the agent
    reads)."""
    if not message:
        return ""
    given: set[str] = set()
    budget = _ARGS_LIMIT
    for text in _strings(args):
        head = text[:budget]
        if "-" in head:
            # a command line's flag names (``-lock-timeout=60s``, ``--force``) are the
            # command's words, not values an error echoes: an error's own "lock" stays
            head = _FLAG.sub(" ", head)
        given.update(w.lower() for w in _ARG_WORD.findall(head))
        budget -= len(text)
        if budget <= 0:
            break
    text = message[:_TEMPLATE_LIMIT]
    if given:
        text = _ARG_WORD.sub(lambda m: " " if _echoed(m.group(0), given) else m.group(0), text)
    words = _WORD.findall(error_template(text, numbers=numbers, counts=counts).lower())
    return " ".join(w for w in words if not w.startswith("<"))


_ARG_WORD = re.compile(r"[^\W_]+")
#: A command-line flag's name: ``-x``, ``--dry-run``, ``-lock-timeout`` (before any ``=value``).
_FLAG = re.compile(r"(?<!\S)--?[A-Za-z][\w-]*")


def _echoed(word: str, given: set[str]) -> bool:
    """Whether a word of an error is one the call's arguments hold: not a short word of two
    letters ("to", "at", "is"), which an error's own wording and a text it was given share
    by chance (a message rewritten each time would move the error's signature)."""
    return word.lower() in given and (len(word) > 2 or not word.isalpha() or not word.isascii())


def _strings(value: Any) -> list[str]:
    """The string and number leaves of plain data, breadth first."""
    out: list[str] = []
    todo = [value]
    while todo and len(out) < 512:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            out.append(str(item))
        elif isinstance(item, Mapping):
            todo.extend(item.values())
        elif isinstance(item, (list, tuple)):
            todo.extend(item)
    return out


#: A fenced block of a model's text (Markdown's ``` or ~~~), its info string after the fence.
_FENCE = re.compile(
    r"^[ \t]{0,3}(`{3,}|~{3,})[^\n]*\n(.*?)(?:^[ \t]{0,3}\1[ \t]*$|\Z)", re.M | re.S
)
#: The least code an artefact holds, and the most words said around it.
_ARTEFACT_CHARS = 16
_ARTEFACT_PROSE = 30


def fenced_code(text: str) -> str | None:
    """The fenced blocks of a model's text (volatile tokens masked, whitespace collapsed),
    when they hold at least 16 characters, whatever is said around them; None otherwise.
    Code is exact: a query whose only change is ``LIMIT 10`` to ``LIMIT 20`` is another
    query, however long the explanation around it."""
    head = text[:_TEXT_LIMIT]
    if "```" not in head and "~~~" not in head:
        return None
    blocks = [_COMMENT_LINE.sub("", m.group(2)) for m in _FENCE.finditer(head)]
    code = "\n".join(_SPACE.sub(" ", mask_text(b)).strip() for b in blocks)
    return code if len(code) >= _ARTEFACT_CHARS else None


#: A whole line of code that is a comment (``# keep first row per id``, ``// fixed``,
#: ``-- corrected``): prose about the code, not the code. A marker glued to a word
#: (``#include``, ``#!/bin/sh``, ``--flag``) is code.
_COMMENT_LINE = re.compile(r"^[ \t]*(?:#|//|--)(?:[ \t][^\n]*)?$\n?", re.M)


def artefact(text: str, code: str | None | Literal[False] = False) -> str | None:
    """What a model's reply hands back, when that is what it is about: its fenced blocks
    (code, a query, a formula; volatile tokens masked, whitespace collapsed), when they hold
    at least 16 characters and at most 30 words are said around them (an apology, "here is
    the fix:"). A reply apologising in new words for the same code hands back the same
    artefact; one that explains code at length is about more than the code. None otherwise.
    ``code``: :func:`fenced_code` of ``text`` when the caller has it already."""
    if code is False:
        code = fenced_code(text)
    if code is None:
        return None
    prose = _FENCE.sub(" ", text[:_TEXT_LIMIT])
    if len(_WORD.findall(prose)) > _ARTEFACT_PROSE:
        return None
    return code


#: Inline code that reads as code (not words in backticks): a span of at least 6 characters
#: holding a bracket, an operator, an anchor or an escape.
_CODE_MARK = re.compile(r"[()\[\]{}=<>^$|*+\\;]")
_INLINE_ARTEFACT_CHARS = 6
#: The most words (a CJK character counting half) said around inline code that is handed
#: back: an opening or a closing line (:data:`~.framing.FRAME_WORDS`).
_INLINE_PROSE = 12


def inline_artefact(text: str) -> str | None:
    """What a short reply hands back in inline code, when that is all it hands back: its
    spans that read as code (a regex, a formula, a command with its operators; volatile
    tokens masked, spacing around punctuation aside), with at most 12 words said around
    them ("Sorry, use `^1\\d{10}$` instead.", "更正：`=VLOOKUP(A2,B:C,2,0)`") and no number
    or name outside them (a logger's time, a counter after "Attempt" aside). The same code
    behind a new apology is the same reply; a reply that also says something else (a cell,
    another value) or explains at length is more than the code. None otherwise."""
    head = text[:_TEXT_LIMIT]
    if "`" not in head or "```" in head or "~~~" in head:
        return None
    spans = _INLINE_CODE.findall(head)
    if not spans or not all(
        len(s.strip()) >= _INLINE_ARTEFACT_CHARS and _CODE_MARK.search(s) for s in spans
    ):
        return None
    # what the masking takes for volatile (a logger's time, a counter after "Attempt") is
    # framing too
    prose = _PLACEHOLDER.sub(" ", mask_text(_INLINE_CODE.sub(" ", head)))
    if "`" in prose or any(c.isdigit() for c in prose):
        return None
    said = _SHINGLE.findall(prose)
    cjk = sum(len(w) for w in said if _CJK_RUN.match(w))
    if len(said) - sum(1 for w in said if _CJK_RUN.match(w)) + cjk / 2 > _INLINE_PROSE:
        return None
    return "\n".join(_code(mask_text(s)) for s in spans)


#: The fields by which a model's message calls a tool: such a message is keyed as its data.
_CALLS = ("tool_calls", "function_call", "tool_use")


def reply_text(output: Any, depth: int = 0) -> str | None:
    """The text of a model's reply: the reply itself when it is text, the content of a
    message that calls no tool (``{"role": "assistant", "content": ...}``, a completion's
    first choice, text content parts); None for data (a message that calls a tool, a
    structured reply), which is keyed as data."""
    if isinstance(output, str):
        return output
    if depth > 3 or type(output) is not dict:
        return None
    if any(output.get(field) for field in _CALLS):
        return None
    choices = output.get("choices")
    if isinstance(choices, list) and choices:
        first = choices[0]
        if type(first) is not dict:
            return None
        return reply_text(first.get("message", first.get("delta", first.get("text"))), depth + 1)
    message = output.get("message")
    if type(message) is dict and "content" not in output:
        return reply_text(message, depth + 1)
    content = output.get("content")
    if isinstance(content, str) and (output.get("role") or len(output) == 1):
        return content
    parts: list[Any] = content if isinstance(content, list) else []
    if parts and all(type(p) is dict and p.get("type") == "text" for p in parts):
        return "\n".join(str(p.get("text", "")) for p in parts)
    return None
