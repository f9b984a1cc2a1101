"""A person's name sent whole where the tool takes its parts, or in parts where it takes it
whole: ``{"name": "Grace Hopper"}`` for ``first_name`` / ``last_name``, and the reverse.

The parts are told by the words of the keys (``first``, ``given``, ``forename`` for the given
name; ``last``, ``family``, ``surname`` for the family name). A whole name is split only where
its parts are plain: ``Family, Given`` as written, or two words of a script that writes the
given name first (Latin letters). Three words or more (a middle name, a compound surname) and
names in scripts that write the family name first are declined: which part is which is not
ours to say. Parts are merged given name first, unless the task writes them the other way
round.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .fixes import Decline, shown
from .results import RepairStep
from .words import name_tokens

__all__ = ["STRATEGY", "person_names"]

STRATEGY = "person_name_correction"

_GIVEN = frozenset({"first", "given", "forename", "fname"})
_FAMILY = frozenset({"last", "family", "surname", "lname", "sur"})
_WHOLE = frozenset({"name", "full", "fullname", "display", "complete"})
_LATIN_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ɏ][A-Za-zÀ-ÖØ-öø-ɏ'’.-]*")


def _part(key: str) -> str | None:
    """``given``, ``family`` or ``whole`` for a key naming a person's name or its part."""
    words = set(name_tokens(key))
    if words & _GIVEN and not words & _FAMILY:
        return "given"
    if words & _FAMILY and not words & _GIVEN:
        return "family"
    if "name" in words and words <= _WHOLE | {"name"}:
        return "whole"
    return None


def _parts(keys: Any) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {"given": [], "family": [], "whole": []}
    for key in keys:
        if isinstance(key, str) and (part := _part(key)) is not None:
            found[part].append(key)
    return found


def person_names(
    args: dict[str, Any], schema: Mapping[str, Any], task: str | None, steps: list[RepairStep]
) -> Decline | None:
    """The call's name split or merged in place to the parts the schema takes (see the
    module), each change a step; a decline where the split is open."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return None
    declared = _parts(props)
    sent = _parts(k for k in args if k not in props)
    given, family, whole = declared["given"], declared["family"], declared["whole"]
    if len(given) == 1 and len(family) == 1 and len(sent["whole"]) == 1:
        key = sent["whole"][0]
        if given[0] in args or family[0] in args or not isinstance(args[key], str):
            return None
        split = _split(args[key])
        if isinstance(split, str):
            return Decline(STRATEGY, f"{key}: {split}")
        first, last = split
        why = f"{shown(args[key])} is the given name {first!r} and the family name {last!r}"
        value = args.pop(key)
        args[given[0]], args[family[0]] = first, last
        steps.append(RepairStep(given[0], "unknown", STRATEGY, value, first, 0.9, why, True))
        steps.append(RepairStep(family[0], "unknown", STRATEGY, value, last, 0.9, why, True))
        return None
    if len(whole) == 1 and len(sent["given"]) == 1 and len(sent["family"]) == 1:
        if whole[0] in args:
            return None
        g_key, f_key = sent["given"][0], sent["family"][0]
        first, last = args[g_key], args[f_key]
        if not (isinstance(first, str) and isinstance(last, str) and first.strip()
                and last.strip()):  # fmt: skip
            return None
        merged = f"{first.strip()} {last.strip()}"
        reverse = f"{last.strip()} {first.strip()}"
        text = (task or "")[:4000].casefold()
        if reverse.casefold() in text and merged.casefold() not in text:
            merged = reverse  # the task writes the family name first
        why = f"{g_key} {shown(first)} and {f_key} {shown(last)} are the one name {merged!r}"
        args.pop(g_key), args.pop(f_key)
        args[whole[0]] = merged
        steps.append(RepairStep(whole[0], "unknown", STRATEGY, {g_key: first, f_key: last},
                                merged, 0.9, why, True))  # fmt: skip
    return None


def _split(name: str) -> tuple[str, str] | str:
    """``(given, family)`` of a plain whole name, or why it is not plain."""
    text = " ".join(name.split())
    if text.count(",") == 1:
        family, given = (p.strip() for p in text.split(","))
        if _LATIN_WORD.fullmatch(family) and _LATIN_WORD.fullmatch(given):
            return given, family
        return f"{shown(name)} is not one family name and one given name"
    words = text.split(" ")
    if len(words) == 2 and all(_LATIN_WORD.fullmatch(w) for w in words):
        return words[0], words[1]
    if len(words) > 2:
        return f"{shown(name)} has {len(words)} words: which are the family name is open"
    return f"{shown(name)} does not say which part is the given name"
