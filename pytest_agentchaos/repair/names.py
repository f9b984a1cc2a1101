"""Parameter names the model got wrong: a key that is not a parameter but obviously names one.

A key the schema does not list is renamed to the one parameter it names, when that parameter
is not given already:

- the same name in another case or style (``exclude_patterns`` -> ``excludePatterns``,
  ``To`` -> ``to``, ``from`` -> ``_from``), or in the singular or plural (``assignee`` ->
  ``assignees``);
- a name sharing a word with exactly one parameter the call lacks, when that parameter is
  required (``pr_number`` -> ``pull_number``, ``file_path`` -> ``path``, ``channel`` ->
  ``channel_id``);
- a common alias of exactly one parameter the call lacks (``q`` -> ``query``, ``from`` ->
  ``origin``, ``title`` -> ``summary``), from :data:`ALIASES`.

This runs whether the schema forbids other keys or not: a tool that drops unknown keys
silently loses what they said, so a misnamed key is a problem either way. A key that names no
parameter is left to the schema (dropped where it forbids unknown keys).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["ALIASES", "rename_keys"]

#: Names models use for a parameter, by the words a parameter's name is made of.
ALIASES: dict[str, tuple[str, ...]] = {
    "q": ("query", "search", "keyword", "keywords", "term"),
    "query": ("q", "search", "keyword", "keywords", "term"),
    "search": ("query", "q"),
    "from": ("origin", "source", "start", "sender", "from_"),
    "to": ("destination", "target", "end", "recipient", "to_"),
    "origin": ("from", "source", "start"),
    "destination": ("to", "target", "end"),
    "start": ("origin", "from", "begin"),
    "end": ("destination", "to", "finish"),
    "title": ("summary", "name", "subject", "heading"),
    "summary": ("title", "name", "subject"),
    "subject": ("title", "summary"),
    "name": ("title",),
    "body": ("content", "text", "message"),
    "text": ("content", "body", "message"),
    "message": ("content", "text", "body"),
    "content": ("text", "body", "message"),
    "task": ("content", "text", "title"),
    "limit": ("count", "max", "max_results", "per_page", "page_size"),
    "count": ("limit", "max_results", "num_results", "n"),
    "num_results": ("count", "limit", "max_results"),
    "max_results": ("count", "limit", "num_results"),
    "n": ("count", "limit"),
    "party_size": ("number_of_seats", "seats", "guests", "people"),
    "guests": ("number_of_seats", "party_size", "people"),
    "people": ("number_of_seats", "party_size", "guests"),
    "type": ("kind", "category"),
    "kind": ("type", "category"),
    "url": ("uri", "link"),
    "link": ("url", "uri"),
    # abbreviations
    "lat": ("latitude",),
    "lng": ("longitude",),
    "lon": ("longitude",),
    "long": ("longitude",),
    "latitude": ("lat",),
    "longitude": ("lng", "lon"),
    "desc": ("description",),
    "description": ("desc",),
    "qty": ("quantity",),
    "quantity": ("qty",),
    "msg": ("message",),
    "addr": ("address",),
    "tz": ("timezone", "time_zone"),
    "dir": ("directory", "path"),
}


def words(name: str) -> list[str]:
    """The words of a parameter's name: ``excludePatterns`` -> ``["exclude", "patterns"]``."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w.lower() for w in re.split(r"[\W_]+", spaced) if w]


def _squash(name: str) -> str:
    return "".join(words(name))


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def rename_keys(
    args: Mapping[str, Any], schema: Mapping[str, Any]
) -> list[tuple[str, str, float, str]]:
    """``[(key, parameter, confidence, how)]``: the keys of ``args`` the schema does not list
    that name one of its parameters the call lacks."""
    props = schema.get("properties")
    if not isinstance(props, Mapping) or not props:
        return []
    unknown = [k for k in args if isinstance(k, str) and k not in props]
    if not unknown:
        return []
    required = set(schema.get("required", []))
    free = [p for p in props if isinstance(p, str) and p not in args]
    # indexes over the free parameters, built once: each key is looked up, not compared
    by_squash: dict[str, list[str]] = {}
    by_singular: dict[tuple[str, ...], list[str]] = {}
    by_word: dict[str, list[str]] = {}
    for param in free:
        ws = words(param)
        by_squash.setdefault("".join(ws), []).append(param)
        by_singular.setdefault(tuple(_singular(w) for w in ws), []).append(param)
        for w in {_singular(w) for w in ws}:
            by_word.setdefault(w, []).append(param)
    taken: set[str] = set()
    renames: list[tuple[str, str, float, str]] = []
    done: set[str] = set()

    def options(key: str, step: str) -> list[str]:
        ws = words(key)
        if step == "same":
            found = by_squash.get("".join(ws), [])
        elif step == "plural":
            found = by_singular.get(tuple(_singular(w) for w in ws), [])
        elif step == "word":
            mine = {_singular(w) for w in ws}
            near = {p for w in mine for p in by_word.get(w, ())}
            found = [p for p in near if _shared_word(key, p, p in required)]
        elif step == "initials":  # "ttl" for time_to_live
            squashed = "".join(ws)
            found = [
                p for p in free
                if len(words(p)) >= 2 and "".join(w[0] for w in words(p)) == squashed
            ]  # fmt: skip
        elif step == "alias_word":  # "from" for source_timezone: an alias is one of its words
            names = ALIASES.get("".join(ws), ()) + ALIASES.get("_".join(ws), ())
            found = [
                p for p in free
                if p in required and any(_squash(n) in words(p) for n in names)
            ]  # fmt: skip
        else:
            names = ALIASES.get("".join(ws), ()) + ALIASES.get("_".join(ws), ())
            found = [p for n in names for p in by_squash.get(_squash(n), [])]
        return sorted({p for p in found if p not in taken})

    for how, confidence, step in (
        ("in another case or style", 0.97, "same"),
        ("in the singular or plural", 0.93, "plural"),
        ("sharing a word with it", 0.85, "word"),
        ("a common name for it", 0.85, "alias"),
        ("its initials", 0.85, "initials"),
        ("a common name for one of its words", 0.85, "alias_word"),
    ):
        for key in unknown:
            if key in done:
                continue
            found = options(key, step)
            if len(found) == 1:
                renames.append((key, found[0], confidence, how))
                taken.add(found[0])
                done.add(key)
    # by elimination: one key the schema does not list, one required parameter missing, and
    # the key's value fits that parameter's schema
    left = [k for k in unknown if k not in done]
    wanted = [p for p in free if p in required and p not in taken]
    if len(left) == 1 and len(wanted) == 1 and _fits(args[left[0]], props[wanted[0]]):
        renames.append((left[0], wanted[0], 0.85, "by elimination (the one required parameter "
                        "missing, and the value fits it)"))  # fmt: skip
    return renames


def _fits(value: Any, schema: Any) -> bool:
    from .spec import checker_for

    return isinstance(schema, Mapping) and bool(schema) and checker_for(schema).is_valid(value)


def _same_name(key: str, param: str, required: bool) -> bool:
    return _squash(key) == _squash(param)


def _plural(key: str, param: str, required: bool) -> bool:
    a, b = words(key), words(param)
    return len(a) == len(b) and [_singular(w) for w in a] == [_singular(w) for w in b]


def _shared_word(key: str, param: str, required: bool) -> bool:
    # only towards a required parameter the call lacks, and only when it is the one such
    # parameter sharing a word (rename_keys takes a match only when it is unique)
    a = {_singular(w) for w in words(key)}
    b = {_singular(w) for w in words(param)}
    if a <= b or b <= a:  # "travel_mode" for "mode", "type" for "entityType"
        return bool(a & b)
    return required and bool(a & b)


def _alias(key: str, param: str, required: bool) -> bool:
    names = ALIASES.get(_squash(key), ()) + ALIASES.get("_".join(words(key)), ())
    return _squash(param) in {_squash(n) for n in names} or "_".join(words(param)) in names
