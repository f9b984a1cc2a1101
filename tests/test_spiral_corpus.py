"""The labelled spiral corpus (fixtures/spirals/) is well formed: what the halt bench measures
on."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

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


def test_a_step_may_name_its_call_arguments_but_only_with_a_tool(tmp_path: Path) -> None:
    runs = {run.id: run for run in spiral_corpus.check()}
    steps = runs["tool-failure-missing-file-interleaved"].steps
    assert steps[0].args == {"path": "data.json"} and steps[1].args == {"path": "config.yaml"}
    assert runs["exact-same-tax-search"].steps[0].args is None  # not given: unknown
    raw = json.loads((spiral_corpus.CORPUS / "dev" / "healthy_en.json").read_text(encoding="utf-8"))
    raw["runs"] = raw["runs"][:1]
    raw["runs"][0]["steps"][0].update(tool=None, ok=None, args={"page": 1})
    (tmp_path / "bad.json").write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(ValueError, match="step 0: args without a tool"):
        spiral_corpus.load(tmp_path)
