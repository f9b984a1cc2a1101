"""The README: short, its example true under any profile, its two commands the ones CI runs,
and, with the documentation, in plain words."""

from __future__ import annotations

import re

import pytest
from docs_blocks import ROOT, blocks, pages

README = ROOT / "README.md"


def _block(title: str) -> str:
    (block,) = [b for b in blocks(README) if b.title == title]
    return block.text


@pytest.mark.parametrize("profile", ["none", "flaky", "spiral"])
def test_thirty_second_example_passes_under_any_session_profile(
    pytester: pytest.Pytester, profile: str
) -> None:
    pytester.makepyfile(test_x=_block("test_x.py"))
    result = pytester.runpytest("-v", f"--chaos-profile={profile}", "--chaos-seed=1")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "PASSED  test_x.py::test_agent_retries_timeouts  profile=none *faults=timeout:2 *"
            "vtime=63.0s verdict=must_halt=ok"
        ]
    )


def test_the_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def test_the_readme_shows_the_two_commands_ci_runs() -> None:
    """The test command of the README is the one ``.ci/run`` runs, and so is the examples' one."""
    shell = [b.text.strip() for b in blocks(README) if b.kind == "shell"]
    suite = next(c for c in shell if c.endswith("pytest -n 2"))
    examples = next(c for c in shell if c.endswith("pytest examples --chaos-profile=flaky"))
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'uv pip install -q -e ".[dev,semantic,frameworks]"' in ci
    assert 'uv pip install -e ".[dev,semantic,frameworks]"' in suite
    assert "python -m pytest -p no:cacheprovider -n 2\n" in ci
    assert "pytest examples --chaos-profile=flaky" in examples
    assert "python -m pytest -p no:cacheprovider examples --chaos-profile=flaky" in ci
    assert "pip install torch==2.13.0 uv" in suite and "torch==2.13.0 uv" in ci


#: Words a user never saw: the project's own history and the documents it was built from.
INTERNAL = re.compile(
    r"seed \d{3}\b|the seed's|the lecture|lecture's|issue #?\d+|issues? \d+"
    r"|before issue|the design card",
    re.IGNORECASE,
)


@pytest.mark.parametrize("page", pages(), ids=[str(p.relative_to(ROOT)) for p in pages()])
def test_the_docs_speak_plain_words(page) -> None:  # type: ignore[no-untyped-def]
    found = [
        f"{page.relative_to(ROOT)}:{n}: {m.group(0)!r}"
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        for m in INTERNAL.finditer(line)
    ]
    assert found == []
