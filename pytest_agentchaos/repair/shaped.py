"""Values a call lacks that the task writes in the shape the field takes: the one country,
currency or language the task names that no other field holds (by CLDR's tables, in the
form the field takes: "this German note into Dutch" with ``target_lang: NL`` gives ``DE``
for ``source_lang``); the one e-mail address the task gives (written out, or spoken: "jane
dot park at northwind dot com") for an e-mail field; and the one token shaped like the
example the field's description gives ("Room number as on the door, e.g. '4.12'": the
task's "4.12")."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .fixes import Fix
from .words import name_tokens

__all__ = ["email_in_task", "entity_in_task", "example_shaped"]

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+(?![\w-])")
#: An address read aloud: "jane dot park at northwind dot com".
_SPOKEN = re.compile(
    r"(?<![\w.])[\w+-]+(?:\s+dot\s+[\w+-]+)*\s+at\s+[\w-]+(?:\s+dot\s+[\w-]+)+(?![\w])",
    re.IGNORECASE,
)
_EXAMPLE = re.compile(
    r"\b(?:e\.g\.|for example|for instance|such as|like)\s*,?\s*['\"`“]?(?P<x>[^\s'\"`”,;)]+)",
    re.IGNORECASE,
)


def _fix(value: Any, reason: str) -> Fix:
    return Fix("infer_missing_param", value, 0.85, reason)


def email_in_task(name: str, schema: Mapping[str, Any], task: str, taken: set[str]) -> Fix | None:
    """The one e-mail address the task gives that no other field holds, for a field that
    takes one (its format, or its name: ``email_address``); None where none or several."""
    words = set(name_tokens(name))
    if schema.get("format") not in ("email", "idn-email") and not words & {"email", "mail"}:
        return None
    from .reconcile import spoken_email

    head = task[:4000]
    found = {m.group(0).rstrip(".") for m in _EMAIL.finditer(head)}
    for match in _SPOKEN.finditer(head):
        user, _, host = match.group(0).rpartition(" at ")
        if user.strip() != user.strip().lower() or not re.search(r"\.?[a-z]{2,6}$", host):
            continue  # "Meet at home dot com": a word of a sentence, not an address's user
        user = re.sub(r"\s+dot\s+", ".", user.strip(), flags=re.IGNORECASE)
        address = spoken_email(f"{user} at {host}")
        if address is not None and _EMAIL.fullmatch(address):
            found.add(address)
    found -= taken
    if len(found) != 1:
        return None
    address = found.pop()
    return _fix(address, f"the one e-mail address the task gives: {address!r}")


def _shape(example: str) -> str | None:
    """A regex of the values written like ``example``: runs of digits, of capitals, of small
    letters, and its marks as they are; None for an example of one run (a plain number or
    word says too little to pick a token by)."""
    runs = re.findall(r"\d+|[A-Z]+|[a-z]+|.", example)
    if len(runs) < 2 or not any(r.isdigit() for r in runs):
        return None
    out = []
    for run in runs:
        if run.isdigit():
            out.append(r"\d+")
        elif run.isalpha() and run.isupper():
            out.append("[A-Z]+")
        elif run.isalpha():
            out.append("[a-z]+")
        else:
            out.append(re.escape(run))
    return "".join(out)


def example_shaped(schema: Mapping[str, Any], task: str, taken: set[str]) -> Fix | None:
    """The one token of the task shaped like the description's example (digits and marks or
    letters as the example has them) that no other field holds; None where none or several."""
    match = _EXAMPLE.search(str(schema.get("description", ""))[:2000])
    if match is None:
        return None
    example = match["x"].rstrip(".")
    shape = _shape(example)
    if shape is None:
        return None
    tokens = {
        t.group(0)
        for t in re.finditer(rf"(?<![\w.\-/:]){shape}(?![\w\-/:]|\.\w)", task[:4000])
    } - taken  # fmt: skip
    if len(tokens) != 1:
        return None
    token = tokens.pop()
    return _fix(token, f"the one span of the task shaped like the description's {example!r}")


#: A name the task writes: capitalised words, one or two (``German``, ``New Zealand``).
_PROPER = re.compile(r"(?<![\w-])[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?(?![\w-])")


def entity_in_task(
    name: str, schema: Mapping[str, Any], task: str, args: Mapping[str, Any]
) -> Fix | None:
    """The one entity of the field's table (country, currency, language) that the task
    names and no other field of the call holds, in the form the field takes; None where
    none or several, or the field holds no table. The task's first word is not read (a
    verb there, "Polish the text", is no language)."""
    from .codes import entity_of, recode, table_of
    from .fixes import Context

    description = str(schema.get("description", ""))
    table = table_of(name, description)
    if table is None:
        return None
    held = set()
    for value in args.values():
        found = entity_of(value, table) if isinstance(value, str) else None
        if found is not None:
            held.add(found.code)
    head = task[:2000]
    first = re.match(r"\s*\S+", head)
    named: dict[str, str] = {}
    for match in _PROPER.finditer(head):
        if first is not None and match.start() < first.end():
            continue
        for words in (match.group(0), *match.group(0).split()):
            entity = entity_of(words, table)
            if entity is not None and entity.written_as == "name":
                named.setdefault(entity.code, words)
                break
    candidates = {code: words for code, words in named.items() if code not in held}
    if len(candidates) != 1:
        return None
    ((code, words),) = candidates.items()
    fixed = recode(words, schema, Context(name, args, task))
    if not isinstance(fixed, Fix):
        return None
    why = f"the one {table} the task names that no field holds: {words!r} ({fixed.value!r})"
    return _fix(fixed.value, why)
