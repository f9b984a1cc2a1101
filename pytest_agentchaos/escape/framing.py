"""A model reply's framing told from what it says, by the reply's structure.

A model re-prompted often says the same reply again behind a new opening ("Sorry about that!",
"You're right, my bad.", "抱歉，") or a new closing line. Word overlap cannot see through it:
on a short reply the framing is most of the words. Which part is framing is read from the
reply's shape, not from a list of courtesy words: its first sentence (or first clause) or its
last sentence, when that part holds nothing to hand over (no number, no identifier, no code,
no path or URL) and is short. :func:`remainders` gives the reply without each such part; the
keyer compares those with what the run said before (:mod:`.keys`).

Which side is framing is not always decidable from one reply ("The intro covers history. Let
me know if you want more." ends with a line said after every section), so the keyer only
takes a remainder for the reply when it says again a whole earlier reply, or when the
remainder holds something to hand over (:func:`holds_content`): the same code, query or
number behind a new apology.
"""

from __future__ import annotations

import re

from .normalize import mask_text

__all__ = ["holds_content", "remainders"]

#: The most words (a CJK character counting half) a framing part says.
FRAME_WORDS = 12
#: How much of a reply is read for its framing.
_TEXT_LIMIT = 4000

_CJK = "\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff"
#: The end of a sentence: ``.``, ``!``, ``?`` or an ellipsis before a space or the end (not
#: inside ``app.py`` or ``2.4.0``, nor after a list's number, ``1.``), a CJK full stop
#: anywhere, a line break.
_SENTENCE_END = re.compile(r"[.!?…]+['\")\]]*(?=\s|$)|[。！？]+[」』）]*|\n+")
#: A list item's number before its mark (``1.``, or ``1!`` as a re-punctuated list writes it, at
#: the start of a line): no sentence ends there.
_LIST_NUMBER = re.compile(r"(?:^|\n)[ \t]*\d{1,3}[.!?]$")
#: The end of a clause inside a sentence: a comma, a colon or a semicolon before a space, or
#: a CJK one.
_CLAUSE_END = re.compile(r"[,;:](?=\s)|[，、：；]")
_WORD = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_PLACEHOLDER = re.compile(r"<[a-z]+>")
_DIGIT = re.compile(r"\d")
#: What a reply hands over: a digit, code (inline or fenced), a path or URL, a name joined
#: with ``.``, ``_``, ``/`` or ``@`` (``app.py``, ``user_42``), a capital inside a word
#: (``PayPal``), a quoted value (single quotes not inside a word: ``I'm``, ``you're``).
_CONTENT = re.compile(
    r"\d|`|~~~|://|[^\W_][._/@][^\W_]|[a-z][A-Z]|[\"“「『][^\"”」』\n]{1,80}[\"”」』]"
    r"|(?<![^\W\d_])['‘][^'’\n]{1,80}['’](?![^\W\d_])"
)


def holds_content(text: str) -> bool:
    """Whether ``text`` holds something a reply hands over: a number, code, a path or URL, an
    identifier, a quoted value. A sentence without any is framing or plain words. What the
    masking takes for volatile (a logger's time, a counter after ``Attempt``) is none."""
    head = text[:_TEXT_LIMIT]
    if _CONTENT.search(head) is None:
        return False
    return _CONTENT.search(_PLACEHOLDER.sub(" ", mask_text(head))) is not None


def _words(text: str) -> float:
    found = _WORD.findall(text)
    cjk = sum(1 for w in found if len(w) == 1 and re.match(rf"[{_CJK}]", w))
    return len(found) - cjk / 2


def _frame(part: str) -> bool:
    """Whether ``part`` may be framing: it says something, nothing to hand over, briefly."""
    if not _WORD.search(part) or holds_content(part):
        return False
    # what the masking takes for volatile (a logger's time) is no word of it either
    return (
        _words(_PLACEHOLDER.sub(" ", mask_text(part)) if _DIGIT.search(part) else part)
        <= FRAME_WORDS
    )


def _said(text: str) -> bool:
    return _WORD.search(text) is not None


def _opened(text: str) -> str:
    """``text`` without up to three opening clauses that may be framing."""
    for _ in range(3):
        clause = _CLAUSE_END.search(text)
        if clause is None or not _frame(text[: clause.end()]):
            break
        rest = text[clause.end() :].strip()
        if not _said(rest):
            break
        text = rest
    return text


def remainders(text: str) -> list[str]:
    """The reply ``text`` without each part that may be framing (at most :data:`FRAME_WORDS`
    words, nothing to hand over, something said besides it): its first sentence (or, when
    that may not be framing, its first clause), its first two sentences, its last sentence,
    and the sentences that hand something over without their opening clauses. At most six,
    shortest remainder (most taken off) first; none for a reply of one sentence and one
    clause."""
    head = text[:_TEXT_LIMIT].strip()
    out: list[str] = []
    ends = [
        m.end()
        for m in _SENTENCE_END.finditer(head)
        if m.end() < len(head) and not _LIST_NUMBER.search(head, max(0, m.start() - 8), m.end())
    ]
    opened = False
    if ends:
        first, rest = head[: ends[0]], head[ends[0] :].strip()
        if _frame(first) and _said(rest):
            opened = True
            out.append(rest)
            if len(ends) > 1:  # an opening of two ("Sorry about that! Revised table:")
                rest = head[ends[1] :].strip()
                if _frame(head[ends[0] : ends[1]]) and _said(rest):
                    out.append(rest)
        body, last = head[: ends[-1]].strip(), head[ends[-1] :].strip()
        if _frame(last) and _said(body):
            out.append(body)
    if ends:
        # what stays of a reply wrapped at both ends ("亲亲，非常抱歉！<the policy>。还有什么
        # 可以帮您的吗？", "Attempt 2: Sure, <the steps>. Anything else?"): its sentences that
        # hand something over, without the opening clauses of the first
        bounds = [0, *ends, len(head)]
        parts = [head[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
        kept = _opened("".join(p for p in parts if not _frame(p)).strip())
        if kept and len(kept) < len(head) and kept not in out and holds_content(kept):
            out.append(kept)
    if not opened:  # an opening clause ("不好意思，", "Right, ") of a first sentence
        clause = _CLAUSE_END.search(head, 0, ends[0] if ends else len(head))
        if clause is not None:
            first, rest = head[: clause.end()], head[clause.end() :].strip()
            if _frame(first) and _said(rest):
                out.append(rest)
                rest = _opened(rest)  # and the next ones ("第4次尝试：抱歉……，")
                if rest not in out and holds_content(rest):
                    out.append(rest)
    out.sort(key=len)
    return out
