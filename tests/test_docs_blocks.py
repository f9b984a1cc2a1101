"""Every code block of the README and of the documentation runs, as its directive says.

A page is one reader's project: its blocks run in order in one folder, so a module written
by a ``file`` block is there for the ``test`` blocks after it, and the documented output of
a command is compared with what the command prints now (see :mod:`docs_blocks`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from docs_blocks import ROOT, Block, blocks, commands, missing_lines, pages

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PAGES = pages()


def _extras() -> set[str]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return set(tomllib.load(f)["project"]["optional-dependencies"])


# -- shell lines: the options they use exist --------------------------------------------------


def _pytest_options(args: list[str], where: str) -> None:
    from pytest_agentchaos.plugin.options import OPTIONS

    known = dict(OPTIONS)
    tokens = iter(args)
    for token in tokens:
        match = re.match(r"^--(?:agentchaos|chaos)-([\w-]+)(=.*)?$", token)
        if not match:
            continue
        name, value = match[1], match[2]
        assert name in known, f"{where}: {token}: no such option"
        attrs = known[name]
        if attrs.get("action") == "store_true":
            assert value is None, f"{where}: {token}: the option takes no value"
            continue
        given = value[1:] if value is not None else next(tokens, None)
        assert given is not None and not given.startswith("-"), f"{where}: {token}: no value"
        convert = attrs.get("type")
        if convert is not None and not given.startswith(("$", "<")):
            try:
                convert(given)
            except argparse.ArgumentTypeError as exc:
                pytest.fail(f"{where}: {token}: {exc}")


def _parses(parser: argparse.ArgumentParser, args: list[str], where: str) -> None:
    try:
        parser.parse_args(args)
    except SystemExit:
        pytest.fail(f"{where}: {parser.prog} {shlex.join(args)}: the command line is refused")


def check_command(argv: list[str], where: str) -> None:
    """One command a reader types: its ``pytest-agentchaos`` options and extras exist."""
    while argv and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[0]):  # FOO=bar before it
        argv = argv[1:]
    if not argv:
        return
    text = " ".join(argv)
    for found in re.findall(r"(?:pytest-agentchaos|^\.|\s\.)\[([^\]]+)\]", text):
        for extra in found.split(","):
            assert extra.strip() in _extras(), f"{where}: no extra {extra.strip()!r}"
    program = Path(argv[0]).name
    python = re.fullmatch(r"python(3(\.\d+)?)?", program) is not None
    if program == "pytest":
        _pytest_options(argv[1:], where)
    elif python and argv[1:3] == ["-m", "pytest"]:
        _pytest_options(argv[3:], where)
    elif python and argv[1:3] == ["-m", "pytest_agentchaos"]:
        from pytest_agentchaos import cli

        _parses(cli._parser(), argv[3:], where)
    elif program == "agentchaos-mcp":
        from pytest_agentchaos.adapters.mcp_client import cli as mcp_cli

        _parses(mcp_cli._parser(), argv[1:], where)


def check_shell(text: str, where: str) -> None:
    for argv in commands(text):
        check_command(argv, where)


# -- running a page ---------------------------------------------------------------------------


class PageRun:
    """The state of one page's run: its folder, the last output, the blocks skipped."""

    def __init__(self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pytester = pytester
        self.monkeypatch = monkeypatch
        self.output: str | None = None
        self.result: pytest.RunResult | None = None
        self.skipped: list[str] = []
        self.skipping = False
        pytester.syspathinsert()  # modules the page writes import in-process runs too
        path = os.pathsep.join(filter(None, [str(pytester.path), str(ROOT)]))
        monkeypatch.setenv("PYTHONPATH", path + os.pathsep + os.environ.get("PYTHONPATH", ""))
        monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")  # the SDK would send traces

    # each kind --------------------------------------------------------------------------------

    def write(self, block: Block, default: str | None = None) -> Path:
        name = block.options.get("path") or block.title or default
        assert name, f"{block.where}: a file block needs path= or a title"
        path = self.pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(block.text, encoding="utf-8")
        return path

    def pytest(self, args: list[str]) -> pytest.RunResult:
        result = self.pytester.runpytest(*args)
        self.keep(result)
        return result

    def process(self, argv: list[str]) -> pytest.RunResult:
        result = self.pytester.run(*argv, timeout=240)
        self.keep(result)
        return result

    def keep(self, result: pytest.RunResult) -> None:
        self.result = result
        self.output = "\n".join([*result.outlines, *result.errlines])

    def judge(self, block: Block) -> None:
        assert self.result is not None
        outcomes = block.options.get("outcomes")
        if outcomes is not None:
            expected = {k: int(v) for k, v in (o.split("=") for o in outcomes.split())}
            try:
                self.result.assert_outcomes(**expected)
            except AssertionError as exc:
                pytest.fail(f"{block.where}: outcomes: {exc}\n{self.output}")
        if "ret" in block.options:
            assert int(self.result.ret) == int(block.options["ret"]), (
                f"{block.where}: exit status {self.result.ret}\n{self.output}"
            )

    def compare(self, block: Block, documented: str, output: str | None) -> None:
        assert output is not None, f"{block.where}: output of what? nothing has run yet"
        capture = os.environ.get("AGENTCHAOS_DOCS_CAPTURE")
        if capture:  # writing the docs: keep the real output to copy from, judge nothing
            name = f"{block.where.replace('/', '_').replace(':', '_')}.txt"
            with open(Path(capture) / name, "a", encoding="utf-8") as f:
                f.write(output + "\n")
            return
        missing = missing_lines(documented, output)
        assert not missing, (
            f"{block.where}: the documented output is not what runs now; first line not found "
            f"in order: {missing[0]!r}\n--- the real output ---\n{output}"
        )

    def command(self, argv: list[str], where: str) -> None:
        program = Path(argv[0]).name
        python = re.fullmatch(r"python(3(\.\d+)?)?", program) is not None
        if program == "pytest":
            self.pytest(argv[1:])
        elif python and argv[1:3] == ["-m", "pytest"]:
            self.pytest(argv[3:])
        elif python:
            self.process([sys.executable, *argv[1:]])
        elif program == "agentchaos-mcp":
            self.process([str(Path(sys.executable).parent / program), *argv[1:]])
        else:
            self.process(argv)

    def run_console(self, block: Block) -> None:
        sections: list[tuple[str, list[str]]] = []
        for line in block.text.splitlines():
            if line.startswith("$ "):
                sections.append((line[2:], []))
            elif sections:
                sections[-1][1].append(line)
            elif line.strip():
                pytest.fail(f"{block.where}: a run block starts with its '$ ' command")
        assert sections, f"{block.where}: a run block has no '$ ' command"
        for command, expected in sections:
            (argv,) = list(commands(command))  # it runs: the real parsers judge its options
            self.command(argv, block.where)
            self.compare(block, "\n".join(expected), self.output)
        self.judge(block)

    def check(self, block: Block) -> None:
        kind = block.kind
        requires = block.options.get("requires", "").split()
        missing = [m for m in requires if importlib.util.find_spec(m) is None]
        if missing:
            self.skipped.append(f"{block.where} needs {', '.join(missing)}")
            self.skipping = True
            return
        if kind == "output" and self.skipping:
            return
        self.skipping = False
        if kind == "file":
            self.write(block)
        elif kind == "test":
            path = self.write(block, "test_example.py")
            self.pytest([path.name, *shlex.split(block.options.get("args", ""))])
            self.judge(block)
        elif kind == "run":
            self.run_console(block)
        elif kind == "output":
            self.compare(block, block.text, self.output)
        elif kind == "python":
            path = self.write(block, "example.py")
            self.process([sys.executable, path.name])
            expected = int(block.options.get("ret", "0"))
            assert self.result is not None
            assert self.result.ret == expected, (
                f"{block.where}: the script exited {self.result.ret}\n{self.output}"
            )
        elif kind == "profile":
            name = block.options["name"]
            (self.pytester.path / "chaos_profiles").mkdir(exist_ok=True)
            (self.pytester.path / "chaos_profiles" / f"{name}.toml").write_text(block.text)
            result = self.pytester.runpytest("--chaos-list-profiles")
            assert result.ret == 0, f"{block.where}: the profile does not load\n{result.stdout}"
            listed = re.search(rf"^\s+{re.escape(name)}\b.*$", result.stdout.str(), re.M)
            assert listed and "BROKEN" not in listed[0], f"{block.where}: {listed}"
        elif kind == "ini":
            text = block.text if block.text.lstrip().startswith("[") else "[pytest]\n" + block.text
            (self.pytester.path / "pytest.ini").write_text(text)
            result = self.pytester.runpytest("--co", "-q")
            assert result.ret in (0, 5), f"{block.where}: the ini is refused\n{result.stderr}"
        elif kind == "shell":
            check_shell(block.text, block.where)
        elif kind == "workflow":
            import yaml

            workflow: Any = yaml.safe_load(block.text)
            steps = [s for job in workflow["jobs"].values() for s in job["steps"]]
            assert any("run" in s for s in steps), f"{block.where}: a workflow that runs nothing"
            for step in steps:
                if "run" in step:
                    check_shell(step["run"], block.where)
        elif kind == "json":
            data = json.loads(block.text)
            schema = block.options.get("schema")
            if schema:
                import jsonschema

                from pytest_agentchaos.report.artifacts import schema_path

                jsonschema.validate(data, json.loads(schema_path(schema).read_text()))
        else:  # pragma: no cover - the parser refuses unknown kinds
            raise AssertionError(kind)


def _required() -> bool:
    return os.environ.get("AGENTCHAOS_REQUIRE_FRAMEWORKS") == "1"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_block_of_the_page_runs_as_documented(
    page: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = PageRun(pytester, monkeypatch)
    for block in blocks(page):
        run.check(block)
    if run.skipped:
        message = "blocks skipped: " + "; ".join(run.skipped)
        if _required():
            pytest.fail(f"AGENTCHAOS_REQUIRE_FRAMEWORKS=1 but {message}")
        pytest.skip(message)


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_block_has_a_directive(page: Path) -> None:
    bare = [b.where for b in blocks(page) if b.kind is None]
    assert bare == [], f"blocks without a <!-- check: ... --> directive: {bare}"


def test_the_documentation_has_pages_and_blocks() -> None:
    """Guard against the checks above passing on nothing: a moved folder, a renamed page."""
    assert (ROOT / "docs" / "index.md") in PAGES and len(PAGES) > 30
    assert sum(len(blocks(p)) for p in PAGES) > 100
