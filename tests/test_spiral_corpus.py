"""The labelled spiral corpus (fixtures/spirals/) is well formed: what the halt bench measures
on."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import spiral_corpus  # noqa: E402


def test_the_corpus_is_well_formed_and_as_large_as_issue_14_asks() -> None:
    runs = spiral_corpus.check()
    spirals = [run for run in runs if run.spiral]
    healthy = [run for run in runs if not run.spiral]
    assert len(runs) >= 90
    assert len(spirals) >= 45
    assert len(healthy) >= 40
    counts = spiral_corpus.tally(runs)
    for kind in spiral_corpus.KINDS:
        assert sum(counts[kind, lang] for lang in spiral_corpus.LANGUAGES) >= 4, kind
    chinese = [run for run in runs if run.language == "zh"]
    assert len(chinese) >= 20
    assert any(run.spiral for run in chinese)
    assert any(not run.spiral for run in chinese)
