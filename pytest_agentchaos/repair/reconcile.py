"""A value the tool refused, reconciled with the task's own spelling of it.

A model often sends a value the user wrote, spelt its own way: in another case (``aapl``
for ``AAPL``), with other separators or spaces (``sku 0042`` for ``SKU-0042``), without its
accents (``Krakow`` for ``Kraków``), cut short or without a prefix (``0107`` for
``htl_0107``, ``SKU-1180`` for ``SKU-1180-B``), with one character dropped (``Reykjavk``), as
a type word in place of the id the task writes beside it (``issue`` for ``ENG-142``), as a
name where the task writes the code or id the field takes beside it (``Paris`` for ``CDG`` in
"Paris CDG", ``Ana Silva`` for ``12`` in "author 12 (Ana Silva)"), as a
spoken e-mail address (``bob at example dot com``), or as a bare number for an id the task
writes with a prefix (``77`` for ``ENG-77``). Each relation is checked between the refused
value and the task's spans; the repair is made only when exactly one span of the task is so
related and it fits the field's schema. When the task writes the refused value exactly as it
was sent, the tool genuinely does not have it: declined.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from .fixes import Context, Decline, Fix, shown
from .spec import checker_for
from .words import find_word, name_tokens

__all__ = ["reconcile", "spoken_email", "stated", "task_spans", "written_beside"]

_STRATEGY = "rejected_value_correction"
#: A token of the task: letters and digits joined by the marks ids and names use.
#: A token of the task; a channel's ``#`` or a mention's ``@`` the task writes is part of it.
_TOKEN = re.compile(r"(?:(?<![\w@#])[@#])?[^\W_](?:[\w.@/+:-]*[^\W_])?")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
#: A type word ("issue", "pull request"): letters only, words apart by spaces.
_TYPE_WORD = re.compile(r"[^\W\d_]+(?: [^\W\d_]+){0,2}")


def task_spans(task: str) -> list[str]:
    """The task's tokens and runs of up to four words, as written."""
    head = task[:4000]
    spans = [m.group(0).rstrip(".:") for m in _TOKEN.finditer(head)]
    words = [m.group(0) for m in re.finditer(r"\S+", head)]
    for size in (2, 3, 4):
        for i in range(len(words) - size + 1):
            run = " ".join(words[i : i + size]).strip(".,;:!?\"'()")
            spans.append(run)
    return [s for s in dict.fromkeys(spans) if s]


def _squash(text: str) -> str:
    return re.sub(r"[\W_]+", "", _plain(text).casefold())


def _plain(text: str) -> str:
    """``text`` without its accents (NFKD, combining marks dropped)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _one_edit(a: str, b: str) -> bool:
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    from rapidfuzz.distance import OSA

    return bool(OSA.distance(a, b) == 1)


def _relation(value: str, span: str) -> str | None:
    """How ``span`` of the task relates to the refused ``value``, or None."""
    if span == value:
        return None
    if span.casefold() == value.casefold():
        return "in the task's case"
    if _plain(span) == value or _plain(span).casefold() == _plain(value).casefold():
        return "with the task's accents"
    squashed, target = _squash(value), _squash(span)
    if squashed and squashed == target and re.search(r"[\W_]", span + value):
        return "with the task's separators"
    if len(squashed) >= 3 and " " not in span and target != squashed:
        if target.endswith(squashed) and re.search(r"[\W_]", span[: len(span) - len(value)]):
            return "with the prefix the task writes"
        # cut short, but keeping what tells it apart: "ORD" of "ORD-0107" or "2025" of
        # "2025-07-14" is the part every such id or date shares
        telling = 2 * len(squashed) > len(target) and (
            not re.search(r"\d", span) or re.search(r"\d", value)
        )
        if target.startswith(squashed) and re.search(r"[\W_]", span[len(value) :][:1]) and telling:
            return "in full, as the task writes it"
    low, other = value.casefold(), span.casefold()
    # "Closed" / "close": a word and its inflection (an id with digits has none)
    inflected = (low.startswith(other) or other.startswith(low)) and not re.search(r"\d", low)
    if len(value) >= 5 and " " not in value and not inflected and _one_edit(low, other):
        return "with the character the call dropped"
    # a short code one character off, of the same shape ("VNB" for "VNP", "scr" for "src"):
    # one letter replaced or two swapped, never one added or dropped
    same_shape = len(span) == len(value) and _shape(span) == _shape(value)
    if 3 <= len(value) < 5 and same_shape and _one_edit(value, span) and not inflected:
        return "one character off: the task's spelling"
    return None


#: Relations by nearness alone (an edit apart): evidence only when the task writes no other
#: value shaped like the one chosen.
_NEAR = frozenset({"with the character the call dropped", "one character off: the task's spelling"})


def _rival(
    span: str, value: str, task: str, taken: set[str], schema: Mapping[str, Any]
) -> str | None:
    """Another token of the task shaped like ``span`` (``RLT-380`` beside ``RLT-381``) that
    the field would take and no other field of the call holds (a word of the sentence is
    none): with it, a span an edit away from the refused value is chosen by nearness, not by
    what the task says."""
    shape = _shape(span)
    for token in task_spans(task):
        if token in (span, value) or token in taken or " " in token:
            continue
        if _PLAIN_WORD.fullmatch(token):
            continue  # "the" beside "src": a word of the sentence, not a rival value
        if _shape(token) == shape and _fits(token, schema):
            return token
    return None


def _shape(text: str) -> str:
    """Each character's class: upper, lower, digit or itself (``VNP`` -> ``AAA``)."""
    return "".join(
        "A" if c.isupper() else "a" if c.islower() else "9" if c.isdigit() else c for c in text
    )


_SPOKEN = re.compile(
    r"^\s*(?P<user>[\w.+-]+)\s+(?:at|\(at\)|\[at\])\s+(?P<host>[\w-]+(?:\s+(?:dot|\(dot\)|\[dot\])"
    r"\s+[\w-]+)+)\s*$",
    re.IGNORECASE,
)


def spoken_email(value: str) -> str | None:
    """``bob at example dot com`` -> ``bob@example.com``; None for anything else."""
    match = _SPOKEN.match(value[:200])
    if match is None:
        return None
    host = re.sub(r"\s+(?:dot|\(dot\)|\[dot\])\s+", ".", match["host"], flags=re.IGNORECASE)
    return f"{match['user']}@{host}"


def _fits(candidate: Any, schema: Mapping[str, Any]) -> bool:
    """Whether the schema takes ``candidate``, and it has the shape of the ids the field's
    description shows by example (``SNS-000231``), where it shows one."""
    if not schema:
        return True
    if isinstance(candidate, str) and not _shaped(candidate, schema):
        return False
    try:
        return bool(checker_for(schema).is_valid(candidate))
    except Exception:
        return False


def _shaped(text: str, schema: Mapping[str, Any]) -> bool:
    """Whether ``text`` has the shape of the description's prefixed example, a suffix after a
    mark allowed (True when the description shows none)."""
    from .bare_numbers import example_shape

    shape = example_shape(str(schema.get("description", "")))
    if shape is None:
        return True
    head = shape.match(text)  # the example's shape, then the end or a mark (SKU-1180-B)
    return head is not None and (head.end() == len(text) or not text[head.end()].isalnum())


def _beside(value: str, task: str) -> Iterator[str]:
    """Id-like tokens (holding a digit) the task writes right after ``value`` used as a
    type word ("issue ENG-142")."""
    pattern = (
        rf"(?<![\w]){re.escape(value)}\s+(?:#|no\.?\s*|number\s+)?"
        r"(?P<id>[\w][\w.:/-]*\d[\w.:/-]*)"
    )
    for match in re.finditer(pattern, task[:4000], re.IGNORECASE):
        yield match["id"].rstrip(".")


#: A token written in parentheses right after a value ("Ana Silva (12)", "北京（110000）").
_PAREN_AFTER = re.compile(r"\s*[(\[]\s*(?P<t>[^()\[\]\s,;]{1,40})\s*[)\]]")
#: A token written right before a value in parentheses ("author 12 (Ana Silva)").
_PAREN_BEFORE = re.compile(r"(?P<t>[^()\[\]\s,;]{1,40})\s*[(\[]\s*$")
#: A token written right after / before a value, a space apart ("Paris CDG").
#: A word as prose writes it (lower case, or capitalised at a sentence's start): a code
#: written beside a value has digits or more capitals than that ("CDG", "110000").
_PLAIN_WORD = re.compile(r"[A-Z]?[a-z]+")
#: Characters that join the parts of one token (a path, an address, a handle).
_JOINERS = frozenset("/\\@#_~-")
_NEXT = re.compile(r"\s+(?P<t>[^\s,;()\[\]]{1,40})")
_ALTERNATIVE = re.compile(r"\s*(?:,|/|\bor\b|\band\b|或|和)\s*(?P<t>[^\s,;()\[\]]{1,40})")
_PREVIOUS = re.compile(r"(?P<t>[^\s,;()\[\]]{1,40})\s+$")
#: Schema keywords that tell one text from another: a token fitting them is evidence.
_TELLING = ("enum", "const", "pattern", "format", "minLength", "maxLength")


def _as_schema_wants(token: str, schema: Mapping[str, Any]) -> Any:
    """``token`` as the value the schema takes: the number it writes, for a numeric field."""
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if ("integer" in kinds or "number" in kinds) and re.fullmatch(r"-?\d+", token):
        return int(token)
    if "number" in kinds and re.fullmatch(r"-?\d+\.\d+", token):
        return float(token)
    return token


def _telling(schema: Mapping[str, Any]) -> bool:
    kinds = schema.get("type")
    if kinds not in (None, "string", ["string"]):
        return True
    return any(k in schema for k in _TELLING)


def written_beside(value: str, schema: Mapping[str, Any], task: str, held: list[str]) -> list[Any]:
    """The values the schema takes that the task writes right beside ``value``: in parentheses
    after or around it ("北京（110000）", "author 12 (Ana Silva)"), or a space apart where the
    schema tells values apart (a pattern, an enum, a number: "Paris CDG" for an airport code).
    A token another field of the call holds fills that field, not this one."""
    text = unicodedata.normalize("NFKC", task[:4000])
    mine = unicodedata.normalize("NFKC", value).strip()
    if len(mine) < 2:
        return []
    found: dict[str, Any] = {}
    ascii_word = mine[:1].isascii() and mine[:1].isalnum()
    at = text.find(mine)
    while at >= 0:
        before, after = text[:at], text[at + len(mine) :]
        edge = (before[-1:].isascii() and before[-1:].isalnum()) or (
            after[:1].isascii() and after[:1].isalnum()
        )
        # a part of a longer token ("s3://acme-media" in "s3://acme-media/thumbnails/") is
        # no mention of its own: what is beside the whole token is not beside the value
        joined = (
            after[:1] in _JOINERS
            or before[-1:] in _JOINERS
            or (after[:1] in ".:" and after[1:2].isalnum())
        )
        if not (ascii_word and edge) and not joined:
            tokens = []
            paren = _PAREN_AFTER.match(after)
            if paren is not None:
                tokens.append((paren["t"], True))
            if before.rstrip().endswith(("(", "[")) and after.lstrip().startswith((")", "]")):
                around = _PAREN_BEFORE.search(before.rstrip())
                if around is not None:
                    tokens.append((around["t"], True))
            near = _NEXT.match(after)
            if near is not None:
                tokens.append((near["t"], False))
                # "Paris CDG or ORY": an alternative written next to it is as much beside it
                other = _ALTERNATIVE.match(after[near.end() :])
                if other is not None:
                    tokens.append((other["t"], False))
            near = _PREVIOUS.search(before)
            if near is not None:
                tokens.append((near["t"], False))
            for token, in_parens in tokens:
                token = token.strip(".:!?")
                if not token or token == mine or token in held:
                    continue
                if not (_telling(schema) or (in_parens and re.search(r"\d", token))):
                    continue  # any text fits a free text field: no evidence
                if not in_parens and _PLAIN_WORD.fullmatch(token):
                    continue  # "use", "List": a word of the sentence, not a code beside it
                candidate = _as_schema_wants(token, schema)
                # a code beside the value where the value itself does not fit; in
                # parentheses, a gloss of it whether or not it fits
                if _fits(candidate, schema) and (in_parens or not _fits(value, schema)):
                    found.setdefault(token, candidate)
        at = text.find(mine, at + 1)
    return list(found.values())


def stated(value: str, task: str) -> bool:
    """Whether the task writes ``value`` as it is (same case, a whole token)."""
    head = task[:4000]
    at = find_word(head, value, joined="@/-")
    while at >= 0:
        before = head[at - 1] if at > 0 else ""
        after = head[at + len(value) : at + len(value) + 2]
        if before != "." and not (after[:1] == "." and after[1:].isalnum()):
            return True
        at = find_word(head, value, at + 1, joined="@/-")
    return False


#: The last word of a field name that holds identifiers (a closed class of English nouns).
_ID_NOUNS = frozenset({"id", "ids", "key", "code", "number", "no", "ref", "uuid", "slug"})


def _holds_ids(name: str) -> bool:
    """Whether a field's name says it holds an identifier (``resource_id``, ``orderNumber``)."""
    words = name_tokens(name)
    return bool(words) and words[-1] in _ID_NOUNS


def _absorbs(value: str, span: str, taken: set[str]) -> bool:
    """Whether ``span`` adds to ``value`` what another field of the call holds already
    ("s3://bucket/photos" for a bucket when the prefix field holds "photos/")."""
    at = span.casefold().find(value.strip().casefold())
    if at < 0:
        return False
    added = (span[:at] + " " + span[at + len(value.strip()) :]).casefold()
    pieces = [p for p in re.split(r"[\s/:._-]+", added) if len(p) >= 3]
    others = {t.casefold().strip("/") for t in taken if len(t) >= 3}
    return any(piece in other.split("/") or piece == other for piece in pieces for other in others)


def _held(ctx: Context) -> list[str]:
    """The values the call's other fields hold, at any depth (one task token, one field)."""
    from .reading import leaf_values

    return [
        str(v) for path, v in leaf_values(ctx.args)
        if path[-1] != ctx.name and isinstance(v, (str, int)) and not isinstance(v, bool)
    ]  # fmt: skip


def reconcile(value: Any, schema: Mapping[str, Any], ctx: Context) -> Fix | Decline | None:
    """The task's own spelling of a refused value (see the module), a decline when the task
    writes the value as sent, or None when nothing relates them."""
    task = ctx.task or ""
    if isinstance(value, bool) or not task:
        return None
    if isinstance(value, (int, float)) and schema.get("type") == "string":
        digits = str(value)
        found = {
            t for t in task_spans(task)
            if " " not in t and t != digits and re.fullmatch(rf"[^\W\d_][\w./-]*?[\W_]?{digits}", t)
            and _fits(t, schema)
        }  # fmt: skip
        if len(found) == 1:
            token = found.pop()
            return Fix(_STRATEGY, token, 0.85, f"the task writes {shown(value)} as {token!r}")
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        return None
    # a type word is a word ("issue"), not an identifier of its own ("rm-fuji"); the id beside
    # it is one no other field of the call holds (one task token fills one field)
    held = _held(ctx)
    beside = {
        t for t in _beside(value, task)
        if _fits(t, schema) and not any(t in other for other in held)
    }  # fmt: skip
    # a type word: words of letters, or any text without the shape the field's ids have
    # ("co2 sensor" where the description's example is "SNS-000231")
    kind_word = _TYPE_WORD.fullmatch(value) or not _shaped(value, schema)
    # where any text fits (a city, a title), a word is a value of its own, not a kind whose id
    # the task writes next: only a field that tells values apart or holds ids takes that id
    if len(beside) == 1 and kind_word and (_telling(schema) or _holds_ids(ctx.name)):
        token = beside.pop()
        why = f"{shown(value)} is the kind of thing; the task writes its id {token!r}"
        return Fix(_STRATEGY, token, 0.85, why)
    glossed = written_beside(value, schema, task, held)
    if len(glossed) == 1:
        token = glossed[0]
        why = f"the task writes {token!r} beside {shown(value)}, and the field takes it"
        return Fix(_STRATEGY, token, 0.85, why)
    email = spoken_email(value)
    if email is not None and _fits(email, schema):
        return Fix(_STRATEGY, email, 0.9, f"{shown(value)} is the address {email}, spoken")
    bare = value.rstrip(".,;:!?")
    if bare != value and len(bare) >= 2 and _fits(bare, schema) and stated(bare, task):
        why = f"{shown(value)} without the punctuation that ends the task's sentence"
        return Fix(_STRATEGY, bare, 0.85, why)
    if stated(value, task):
        return Decline(
            _STRATEGY,
            f"the tool refused {shown(value)}, which the task writes just as it was sent: "
            "the tool does not have it",
        )
    related: dict[str, str] = {}
    # a span another field of the call holds already fills that field: one task token, one field
    taken = set(_held(ctx))
    for span in task_spans(task):
        if span in taken:
            continue
        how = _relation(value, span)
        if how is not None and _fits(span, schema) and not _absorbs(value, span, taken):
            related.setdefault(span, how)
    # a span that holds another related one is the same mention, written longer: keep the
    # shortest reading of each mention
    spans = [s for s in related if not any(o != s and o in s for o in related)]
    if len(spans) == 1:
        span = spans[0]
        rival = _rival(span, value, task, taken, schema) if related[span] in _NEAR else None
        if rival is not None:
            return Decline(
                _STRATEGY,
                f"{shown(value)} is a character away from {span!r}, and the task also writes "
                f"{rival!r} of the same shape: nearness does not tell which is meant",
            )
        # a span one edit away is chosen by nearness alone: weak evidence, a model's first
        near = "similarity" if related[span] in _NEAR else ""
        return Fix(_STRATEGY, span, 0.85, f"{shown(value)} {related[span]}: {span!r}", near)
    if len(spans) > 1:
        return Decline(_STRATEGY, f"{shown(value)} could be {spans[0]!r} or {spans[1]!r}")
    return None
