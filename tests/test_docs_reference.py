"""The reference pages follow the code: their tables are generated from the code's own tables
when the site is built (``docs/hooks/reference.py``); these tests fail when the generator, the
hand-written meanings or the prose pages drift from what the code accepts."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from docs_blocks import DOCS, ROOT, pages

HOOKS = DOCS / "hooks"


def _load(name: str) -> ModuleType:
    sys.path.insert(0, str(HOOKS))
    try:
        spec = importlib.util.spec_from_file_location(name, HOOKS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(HOOKS))


reference = _load("reference")


def test_every_key_the_code_has_is_described_and_nothing_else() -> None:
    assert reference.problems() == []


def test_every_placeholder_of_the_reference_pages_renders() -> None:
    found = []
    for page in sorted((DOCS / "reference").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        found += reference.PLACEHOLDER.findall(text)
        rendered = reference.render(text)
        assert "<!-- generated:" not in rendered
    assert sorted(found) == sorted(reference.GENERATORS)  # each table on one page, all used


def test_the_options_and_ini_keys_are_those_pytest_knows(pytester: pytest.Pytester) -> None:
    """Against a real session's parser: the help lists every option and ini key the plugin
    registered, and the generated tables list the same."""
    help_text = pytester.runpytest("--help").stdout.str()
    registered = set(re.findall(r"--agentchaos-([\w-]+)", help_text))
    ini = set(re.findall(r"^  (chaos_\w+) ", help_text, re.M))
    options_table, ini_table = reference.options_table(), reference.ini_table()
    assert registered and registered == set(re.findall(r"`--agentchaos-([\w-]+)`", options_table))
    assert ini and ini == set(re.findall(r"^\| `(chaos_\w+)`", ini_table, re.M))


def test_every_marker_argument_is_in_the_reference_and_on_its_verdict_page() -> None:
    from pytest_agentchaos.harness.spec import MARKERS

    table = reference.markers()
    for marker in MARKERS:
        arguments = reference.marker_args(marker)
        assert arguments, marker
        section = table[table.index(f"### `{marker}`") :]
        for argument in arguments:
            assert f"| `{argument}` |" in section, (marker, argument)
        if marker != "chaos":
            page = DOCS / "verdicts" / f"{marker.replace('_', '-')}.md"
            text = page.read_text(encoding="utf-8")
            documented = re.findall(r"^\| `(\w+)` \|", text[text.index("## Arguments") :], re.M)
            assert set(documented) >= set(arguments), (page.name, set(arguments) - set(documented))


def test_every_fault_kind_is_in_the_reference_and_on_the_faults_page() -> None:
    from pytest_agentchaos.faults.kinds import KINDS

    generated = set(re.findall(r"^\| `(\w+)` \|", reference.fault_kinds(), re.M))
    assert generated == set(KINDS)
    text = (DOCS / "faults-and-profiles.md").read_text(encoding="utf-8")
    table = text[text.index("## The kinds") : text.index("### Quiet faults")]
    assert set(re.findall(r"^\| `(\w+)` \|", table, re.M)) == set(KINDS)


def test_every_stack_table_key_is_in_the_reference() -> None:
    tables = reference.sections_tables()
    for section, path, keys in reference.walk_sections():
        dotted = ".".join((section, *path))
        part = tables[tables.index(f"### `[{dotted}]`") :]
        for key in keys:
            assert f"`{key}`" in part, (dotted, key)


def test_a_key_the_code_gains_fails_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check has teeth: a new selector key without a meaning is named."""
    import pytest_agentchaos.faults.selectors as selectors

    monkeypatch.setattr(selectors, "SELECTOR_KEYS", (*selectors.SELECTOR_KEYS, "jitter_ms"))
    assert reference.problems() == ["SELECTOR_KEYS: jitter_ms: no description"]


def test_what_a_key_accepts_is_read_from_its_validator() -> None:
    budgets = reference.budgets_table()
    assert "| `max_seconds` | a finite number of seconds, > 0 |" in budgets
    markers = reference.markers()
    assert "| `runs` | `1` | an integer >= 1, <= 10000 |" in markers


@pytest.mark.parametrize("page", pages(), ids=[str(p.relative_to(ROOT)) for p in pages()])
def test_every_option_the_prose_names_exists(page: Path) -> None:
    from pytest_agentchaos.plugin.options import OPTIONS

    known = {name for name, _ in OPTIONS}
    text = page.read_text(encoding="utf-8")
    named = set(re.findall(r"--(?:agentchaos|chaos)-([a-z][\w-]*[a-z])", text))
    assert named <= known, sorted(named - known)
    not_ini = {"chaos_mcp_proxy", "chaos_agent", "chaos_model", "chaos_middleware"}
    not_ini |= {"chaos_profiles", "chaos_toolset"}  # functions, a fixture, a folder
    ini = set(re.findall(r"\bchaos_[a-z_]+[a-z]\b", text)) - not_ini
    declared = {name for name, *_ in reference.declared().ini}
    assert ini <= declared, sorted(ini - declared)
