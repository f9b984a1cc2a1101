"""The paraphrase corpus (fixtures/paraphrases/) is well formed and as large as the
``paraphrased_output`` fault needs: answer groups, phrase families and frames per language."""

from __future__ import annotations

import re
import string
import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "paraphrases"
LANGUAGES = ("en", "zh")
# language: (answer groups, phrase families, frames)
MINIMUMS = {"en": (40, 80, 8), "zh": (25, 50, 6)}
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# English phrases are lowercase, but for the pronoun "I" and its contractions.
PRONOUN_I = re.compile(r"\bI(?='|\b)")
PUNCTUATION = string.punctuation + "，。！？；：、“”‘’（）《》…—·"


def load(language: str) -> dict[str, Any]:
    with (CORPUS / f"{language}.toml").open("rb") as fh:
        return tomllib.load(fh)


def norm(text: str) -> str:
    """Lowercased, punctuation removed, whitespace collapsed."""
    kept = "".join(" " if ch in PUNCTUATION else ch for ch in text.casefold())
    return " ".join(kept.split())


@pytest.fixture(scope="module", params=LANGUAGES)
def corpus(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    return request.param, load(request.param)


def test_keys_and_types(corpus: tuple[str, dict[str, Any]]) -> None:
    language, data = corpus
    assert set(data) == {"language", "frames", "answers", "phrases"}
    assert data["language"] == language
    assert isinstance(data["frames"], list)
    assert all(isinstance(f, str) for f in data["frames"])
    assert isinstance(data["answers"], list)
    for group in data["answers"]:
        assert set(group) == {"texts"}, group
        assert isinstance(group["texts"], list)
        assert all(isinstance(t, str) and t.strip() for t in group["texts"]), group
    assert isinstance(data["phrases"], list)
    for family in data["phrases"]:
        assert set(family) == {"family"}, family
        assert isinstance(family["family"], list)
        assert all(isinstance(p, str) for p in family["family"]), family


def test_counts_meet_the_minimums(corpus: tuple[str, dict[str, Any]]) -> None:
    language, data = corpus
    answers, phrases, frames = MINIMUMS[language]
    assert len(data["answers"]) >= answers
    assert len(data["phrases"]) >= phrases
    assert len(data["frames"]) >= frames


def test_answer_groups_hold_distinct_texts(corpus: tuple[str, dict[str, Any]]) -> None:
    _, data = corpus
    for group in data["answers"]:
        texts = group["texts"]
        assert 3 <= len(texts) <= 5, texts
        normalised = [norm(t) for t in texts]
        assert len(set(normalised)) == len(texts), f"near-equal texts in {texts}"


def test_no_text_is_in_two_answer_groups(corpus: tuple[str, dict[str, Any]]) -> None:
    # The fault looks an earlier answer up by its text: one text, one group.
    _, data = corpus
    seen: dict[str, int] = {}
    for i, group in enumerate(data["answers"]):
        for text in group["texts"]:
            key = norm(text)
            assert seen.setdefault(key, i) == i, f"{text!r} in groups {seen[key]} and {i}"


def test_phrase_families(corpus: tuple[str, dict[str, Any]]) -> None:
    language, data = corpus
    owner: dict[str, int] = {}
    for i, family in enumerate(data["phrases"]):
        members = family["family"]
        assert len(members) >= 2, members
        assert len({p.casefold() for p in members}) == len(members), f"repeated in {members}"
        for phrase in members:
            assert phrase.strip() == phrase and phrase, f"empty or padded phrase in {members}"
            key = phrase.casefold()
            assert owner.setdefault(key, i) == i, f"{phrase!r} in families {owner[key]} and {i}"
            if language == "en":
                assert 1 <= len(phrase.split()) <= 5, phrase
                assert PRONOUN_I.sub("i", phrase).islower(), f"not lowercase: {phrase!r}"
            else:
                assert len(phrase) <= 8, phrase
                assert CJK.search(phrase), phrase


def test_frames_hold_the_text_once(corpus: tuple[str, dict[str, Any]]) -> None:
    _, data = corpus
    frames = data["frames"]
    assert len(set(frames)) == len(frames)
    for frame in frames:
        assert frame.count("{text}") == 1, frame
        assert frame.replace("{text}", "").strip(), f"frame adds nothing: {frame!r}"


def test_chinese_texts_are_chinese() -> None:
    data = load("zh")
    texts = [t for group in data["answers"] for t in group["texts"]]
    texts += [p for family in data["phrases"] for p in family["family"]]
    texts += [f.replace("{text}", "") for f in data["frames"]]
    for text in texts:
        assert CJK.search(text), f"no CJK characters in {text!r}"
