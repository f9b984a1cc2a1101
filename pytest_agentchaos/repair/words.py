"""Generic linguistic utilities the repairer reads names and texts with: an identifier
tokeniser aware of camelCase, snake_case, kebab-case and digits, and the spellings a name
takes in prose."""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["find_word", "name_tokens", "prose_forms", "squash"]

_PIECES = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b|_)|[A-Z]?[a-z]+|[A-Z]+|\d+")


@lru_cache(maxsize=4096)
def name_tokens(name: str) -> tuple[str, ...]:
    """The words of an identifier, lowercased: ``timeToLive`` -> ``(time, to, live)``,
    ``step2`` -> ``(step, 2)``, ``HTTPServer_url`` -> ``(http, server, url)``."""
    return tuple(p.lower() for p in _PIECES.findall(name[:200]))


def squash(name: str) -> str:
    """An identifier without case or separators: ``Time_To-Live`` -> ``timetolive``."""
    return "".join(name_tokens(name))


@lru_cache(maxsize=4096)
def prose_forms(name: str) -> tuple[str, ...]:
    """How prose writes a parameter's name, longest first: the key itself, its words apart
    (``max results``), and its words run together (``maxresults``)."""
    words = name_tokens(name)
    forms = {name.lower(), " ".join(words), "".join(words), "-".join(words), "_".join(words)}
    return tuple(sorted((f for f in forms if f), key=len, reverse=True))


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def find_word(text: str, needle: str, start: int = 0, *, joined: str = "") -> int:
    """Where ``needle`` stands in ``text`` as a whole (no letter, digit or ``_`` on either
    side, nor any of ``joined``), or -1; plain string search, no regex compiled per needle."""
    if not needle:
        return -1
    at = text.find(needle, start)
    while at >= 0:
        before = text[at - 1] if at > 0 else ""
        after = text[at + len(needle)] if at + len(needle) < len(text) else ""
        edge_ok = not (before and (_word_char(before) or before in joined)) and not (
            after and (_word_char(after) or after in joined)
        )
        if edge_ok:
            return at
        at = text.find(needle, at + 1)
    return -1
