"""The labelled repair corpus (fixtures/repair/) is well formed: what the bench measures on."""

from __future__ import annotations

import sys
from pathlib import Path

import jsonschema

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import repair_corpus  # noqa: E402


def test_the_corpus_loads_and_is_as_large_as_issue_12_asks() -> None:
    cases = repair_corpus.load()
    assert len(cases) >= 250
    assert len({(c.file, c.tool) for c in cases}) >= 40
    assert sum(c.expected is None for c in cases) >= 60
    assert {c.category for c in cases} == set(repair_corpus.CATEGORIES)


def test_every_expected_call_validates_against_its_tool() -> None:
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    for case in repair_corpus.load():
        jsonschema.Draft202012Validator.check_schema(case.schema)
        if case.expected is not None:
            validator = jsonschema.Draft202012Validator(case.schema, format_checker=checker)
            assert validator.is_valid(case.expected), case.id
        if case.category == "valid":
            assert case.expected == case.args, case.id
