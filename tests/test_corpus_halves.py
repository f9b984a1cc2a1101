"""The labelled corpora (fixtures/loops/, fixtures/spirals/) come in two halves: the rules are
developed on dev/, the recorded figures come from test/ (issue 29). Both halves load, share no
id, and the test halves are as varied as the issue asks."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import loop_corpus  # noqa: E402
import spiral_corpus  # noqa: E402

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def _chinese(case: loop_corpus.Case) -> bool:
    text = repr(case.actions)
    return len(_CJK.findall(text)) >= 20


def test_the_loop_halves_load_apart_and_together() -> None:
    dev, test = loop_corpus.load(split="dev"), loop_corpus.load(split="test")
    assert {loop_corpus.split_of(c) for c in dev} == {"dev"}
    assert {loop_corpus.split_of(c) for c in test} == {"test"}
    assert not {c.id for c in dev} & {c.id for c in test}
    assert len(loop_corpus.load()) == len(dev) + len(test)
    assert len(test) >= 150
    assert sum(map(_chinese, test)) * 5 >= len(test)  # a fifth in Chinese
    assert 0.4 <= sum(c.loop for c in test) / len(test) <= 0.7


def test_the_spiral_halves_load_apart_and_together() -> None:
    dev = spiral_corpus.load(split="dev")
    test = spiral_corpus.load(split="test")
    assert {spiral_corpus.split_of(r) for r in dev} == {"dev"}
    assert {spiral_corpus.split_of(r) for r in test} == {"test"}
    assert not {r.id for r in dev} & {r.id for r in test}
    assert len(test) >= 100
    assert sum(r.language == "zh" for r in test) * 5 >= len(test)
    for kind in spiral_corpus.KINDS:
        assert any(r.kind == kind for r in test), kind


def test_the_test_halves_hold_the_representations_users_log() -> None:
    runs = spiral_corpus.load(split="test")
    steps = [s for r in runs for s in r.steps]
    assert sum(not isinstance(s.output, str) for s in steps) >= 20  # structured messages
    assert sum(s.ok is False and s.error is None for s in steps) >= 10  # no error text
    assert sum(any(s.has_state for s in r.steps) for r in runs) >= 15
    assert sum(all(s.tool is None for s in r.steps) for r in runs) >= 15  # chat-only
    cases = loop_corpus.load(split="test")
    results = [a["result"] for c in cases for a in c.actions if "result" in a]
    assert sum(isinstance(r, str) and r.lstrip()[:1] in "{[" for r in results) >= 30
    assert sum(isinstance(r, (dict, list)) for r in results) >= 30
    no_message = [c for c in cases if any("error" in a and not a.get("message") for a in c.actions)]
    assert len(no_message) >= 20


def test_a_split_that_does_not_exist_is_refused() -> None:
    with pytest.raises(ValueError, match="split must be one of"):
        loop_corpus.load(split="train")
    with pytest.raises(ValueError, match="split must be one of"):
        spiral_corpus.load(split="train")
