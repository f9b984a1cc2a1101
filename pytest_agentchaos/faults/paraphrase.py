"""Paraphrases of an earlier answer, for the ``paraphrased_output`` fault: the same meaning in
other words, so that only a semantic check can tell the answer is repeated.

The words come from a corpus (``fixtures/paraphrases/{en,zh}.toml``, shipped in the wheel):
groups of whole answers that say the same thing, families of phrases that can stand for each
other, and frames ("In other words: {text}"). An answer that is one of a group's texts becomes
another text of its group; otherwise its known phrases are swapped for others of their family;
when too little changed, it is wrapped in a frame (a frame already around it is swapped, never
stacked). The result depends only on the text and ``variant``, and always differs from the text.
Structured outputs keep their shape: the prose among their strings is paraphrased, keys and
identifiers are not. Objects that are not JSON-like come back unchanged.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["Corpus", "corpus", "corpus_dir", "paraphrase", "paraphrase_value"]

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_END = " \t\r\n.!?。！？…"
#: Keys whose string values are names or identifiers, never prose.
_KEEP_KEYS = frozenset({
    "id", "role", "type", "object", "model", "name", "finish_reason", "stop_reason", "url",
    "uri", "href", "path", "status", "code", "tool", "tool_call_id", "call_id", "index",
    "arguments", "function", "language", "lang", "mime_type", "media_type",
})  # fmt: skip
_MAX_DEPTH = 12


def corpus_dir() -> Path:
    """Where the paraphrase corpus is: inside the wheel, or the source checkout's fixtures."""
    packaged = resources.files("pytest_agentchaos").joinpath("paraphrases")
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "fixtures" / "paraphrases"


def _norm(text: str) -> str:
    return " ".join(text.casefold().strip(_END).split())


@dataclass(frozen=True)
class Corpus:
    """One language's paraphrases: answer groups (by normalised text), phrase families (by
    phrase), frames and the pattern that finds the phrases in a text (longest first)."""

    language: str
    answers: Mapping[str, tuple[str, ...]]
    families: Mapping[str, tuple[str, ...]]
    frames: tuple[str, ...]
    pattern: re.Pattern[str] | None
    unframe: tuple[tuple[re.Pattern[str], int], ...]

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Corpus:
        language = str(data.get("language", ""))
        answers: dict[str, tuple[str, ...]] = {}
        for group in data.get("answers", ()):
            texts = tuple(str(t) for t in group["texts"])
            for t in texts:
                answers.setdefault(_norm(t), texts)
        families: dict[str, tuple[str, ...]] = {}
        for family in data.get("phrases", ()):
            members = tuple(str(p) for p in family["family"])
            for p in members:
                families.setdefault(p.casefold(), members)
        frames = tuple(str(f) for f in data.get("frames", ()))
        pattern = None
        if families:
            alternatives = "|".join(re.escape(p) for p in sorted(families, key=len, reverse=True))
            if language == "zh":
                pattern = re.compile(f"(?:{alternatives})")
            else:
                pattern = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)
        unframe = []
        for i, frame in enumerate(frames):
            head, _, tail = frame.partition("{text}")
            regex = re.compile(rf"\A{re.escape(head)}(?P<text>.+?){re.escape(tail)}\Z", re.S)
            unframe.append((regex, i))
        return cls(language, answers, families, frames, pattern, tuple(unframe))


@lru_cache(maxsize=4)
def corpus(language: str) -> Corpus:
    """The corpus of ``language`` (``"en"`` or ``"zh"``), read once per process."""
    if language not in ("en", "zh"):
        raise ValueError(f"no paraphrase corpus for language {language!r}; known: en, zh")
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    path = corpus_dir() / f"{language}.toml"
    with path.open("rb") as fh:
        return Corpus.from_data(tomllib.load(fh))


def _language(text: str) -> str:
    letters = [c for c in text if not c.isspace()]
    cjk = sum(1 for c in letters if _CJK.match(c))
    return "zh" if letters and cjk / len(letters) >= 0.3 else "en"


def _other(members: tuple[str, ...], current: str, variant: int) -> str:
    """A member other than ``current`` (by ``variant``); ``current`` when there is none."""
    others = [m for m in members if _norm(m) != _norm(current)]
    return others[variant % len(others)] if others else current


def _match_case(new: str, old: str) -> str:
    if old[:1].isupper() and new[:1].islower():
        return new[:1].upper() + new[1:]
    return new


def paraphrase(text: str, variant: int = 0) -> str:
    """``text`` in other words (see the module's docstring); never ``text`` itself."""
    if not text.strip():
        return text
    c = corpus(_language(text))
    core, framed = text, -1
    for regex, i in c.unframe:
        m = regex.match(text)
        if m:
            core, framed = m.group("text"), i
            break
    group = c.answers.get(_norm(core))
    if group is not None:
        out = _other(group, core, variant)
        if _norm(out) != _norm(core):
            return out
    swaps = 0

    def swap(m: re.Match[str]) -> str:
        nonlocal swaps
        old = m.group(0)
        new = _other(c.families[old.casefold()], old, variant + swaps)
        swaps += new != old
        return _match_case(new, old) if c.language == "en" else new

    changed = c.pattern.sub(swap, core) if c.pattern is not None else core
    if swaps >= 2 or (swaps and framed < 0 and len(core) < 40):
        return changed
    frames = [f for i, f in enumerate(c.frames) if i != framed]
    if not frames:
        return changed if changed != text else f"{text} {text}"
    frame = frames[variant % len(frames)]
    if c.language == "en" and frame.index("{text}") > 0 and changed[:1].isupper():
        second = changed[1:2]
        if not second.isupper():  # "In other words, the build ..." (not for "API ...")
            changed = changed[:1].lower() + changed[1:]
    return frame.replace("{text}", changed)


def paraphrase_value(value: Any, variant: int = 0, _depth: int = 0) -> Any:
    """``value`` with its prose paraphrased: a string; the strings of JSON-like mappings and
    lists (not those under identifier keys such as ``id``, ``role`` or ``url``); ``bytes`` as
    UTF-8 text. Anything else comes back unchanged."""
    if isinstance(value, str):
        return paraphrase(value, variant) if _prose(value) else value
    if _depth >= _MAX_DEPTH:
        return value
    if isinstance(value, bytes):
        try:
            return paraphrase_value(value.decode(), variant, _depth + 1).encode()
        except UnicodeDecodeError:
            return value
    if type(value) is dict:
        return {
            k: v if k in _KEEP_KEYS else paraphrase_value(v, variant, _depth + 1)
            for k, v in value.items()
        }
    if type(value) in (list, tuple):
        items = [paraphrase_value(v, variant, _depth + 1) for v in value]
        return items if type(value) is list else tuple(items)
    return value


def _prose(text: str) -> bool:
    """Words, not an identifier, a number or a URL."""
    s = text.strip()
    if not s or "://" in s[:12]:
        return False
    if _CJK.search(s):
        return len(s) >= 4
    return len(s.split()) >= 2 and any(ch.isalpha() for ch in s)
