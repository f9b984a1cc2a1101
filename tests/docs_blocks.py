"""The code blocks of the README and the documentation pages, and what each one claims.

Every fenced block of a page is preceded by a directive, an HTML comment the rendered page
does not show, that says how the test suite checks it (``tests/test_docs_blocks.py``)::

    <!-- check: test args="-v --chaos-seed=1" outcomes="passed=1" -->

    ```python title="test_agent.py"
    ...
    ```

Kinds:

``file``
    written into the page's folder (``path=``, else the block's ``title``): a module the next
    blocks import, a conftest, a profile.
``test``
    a test file (``path=`` / ``title``, default ``test_example.py``), written and run at once:
    ``pytest <file> <args>``; ``outcomes="passed=1 failed=1"`` must be its outcomes.
``run``
    a console block: each ``$ command`` line runs in the page's folder (``pytest ...``
    in-process, anything else as a process) and the lines after it, up to the next ``$``, must
    be in its output (see :func:`missing_lines`). ``outcomes=`` / ``ret=`` judge the last one.
``output``
    what the last command or ``test`` printed (the same matching).
``python``
    a script run with the project's Python in the page's folder (``ret=``, default 0); an
    ``output`` block after it shows what it printed.
``profile``
    a TOML profile (``name=``): written to ``chaos_profiles/<name>.toml`` and loaded.
``ini``
    a pytest ini file's lines: a session started with them must accept every ``chaos_*`` key.
``shell``
    shell lines a reader runs in their own project: every ``--chaos-*`` option must exist, every
    extra of ``pytest-agentchaos[...]`` must be in the pyproject, and the other commands' options
    must be theirs (``agentchaos-mcp``, ``python -m pytest_agentchaos``).
``workflow``
    a GitHub Actions workflow: YAML whose ``run:`` steps are checked as ``shell`` blocks.
``json``
    JSON text; ``schema=index`` / ``schema=trace`` validates it against the shipped schema.

Every block of every page has one: a block without a directive fails the suite.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

KINDS = ("file", "test", "run", "output", "python", "profile", "ini", "shell", "workflow", "json")

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_DIRECTIVE = re.compile(r"^\s*<!--\s*check:\s*(?P<kind>[\w-]+)(?P<rest>.*?)-->\s*$")
_TITLE = re.compile(r'title="([^"]+)"')


@dataclass
class Block:
    """One fenced block of a page and the directive before it."""

    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    title: str | None
    text: str
    kind: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """The README and every page of the documentation."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def _options(rest: str, where: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for token in shlex.split(rest):
        key, sep, value = token.partition("=")
        if not sep:
            raise ValueError(f"{where}: directive option {token!r} is not key=value")
        options[key] = value
    return options


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page``, each with its directive (``kind`` None: it has none).

    A directive must be followed by its block, blank lines apart; one followed by anything else
    is an error, so a directive cannot silently lose its block."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    pending: tuple[str, dict[str, str], int] | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        directive = _DIRECTIVE.match(line)
        if directive:
            where = f"{page.relative_to(ROOT)}:{i + 1}"
            if directive["kind"] not in KINDS:
                raise ValueError(f"{where}: unknown directive kind {directive['kind']!r}")
            pending = (directive["kind"], _options(directive["rest"], where), i + 1)
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            indent, mark, info = fence["indent"], fence["fence"], fence["info"].strip()
            body: list[str] = []
            j = i + 1
            while j < len(lines):
                closing = lines[j].strip()
                if closing.startswith(mark[0] * len(mark)) and not closing.strip(mark[0]):
                    break
                body.append(lines[j][len(indent) :] if lines[j].startswith(indent) else lines[j])
                j += 1
            title = _TITLE.search(info)
            block = Block(
                page=page,
                line=i + 1,
                lang=info.split()[0] if info else "",
                title=title[1] if title else None,
                text="\n".join(body) + "\n",
            )
            if pending is not None:
                block.kind, block.options = pending[0], pending[1]
                pending = None
            found.append(block)
            i = j + 1
            continue
        if pending is not None and line.strip():
            raise ValueError(
                f"{page.relative_to(ROOT)}:{pending[2]}: a check directive must be followed by "
                f"its code block, got {line.strip()[:60]!r}"
            )
        i += 1
    if pending is not None:
        raise ValueError(f"{page.relative_to(ROOT)}:{pending[2]}: a directive with no block")
    return found


# -- matching documented output against real output ------------------------------------------

_PYTEST_TIME = re.compile(r" in \d+(\.\d+)?s( \([^)]*\))?(?= =+$|$)")


def _normal(line: str) -> str:
    """A line as compared: trailing blanks dropped, pytest's own timing made neutral."""
    line = _PYTEST_TIME.sub(" in Ns", line.rstrip())
    # pytest's closing line, its "=" padding dropped (it depends on the terminal's width)
    return re.sub(r"^=+ (.* in Ns) =+$", r"\1", line)


def _pattern(line: str) -> re.Pattern[str]:
    """A documented line: literal, except that ``...`` inside it stands for any text (a
    temporary path's head, a long value cut short)."""
    parts = [re.escape(p) for p in _normal(line).split("...")]
    return re.compile(".*?".join(parts))


def missing_lines(documented: str, actual: str) -> list[str]:
    """The documented lines not found in ``actual``, in order: the documented block is cut at
    lines that are ``...`` alone into runs of lines that must follow each other in the output;
    the runs must come in their order. Empty: everything is there."""
    out = [_normal(line) for line in actual.splitlines()]
    chunks: list[list[str]] = [[]]
    for line in documented.splitlines():
        if line.strip() == "...":
            chunks.append([])
        elif line.strip():
            chunks[-1].append(line)
    position = 0
    for chunk in (c for c in chunks if c):
        patterns = [_pattern(line) for line in chunk]
        for start in range(position, len(out) - len(chunk) + 1):
            if all(p.fullmatch(out[start + k]) for k, p in enumerate(patterns)):
                position = start + len(chunk)
                break
        else:
            # name the first line of the chunk that is nowhere after the position
            for line, p in zip(chunk, patterns, strict=True):
                if not any(p.fullmatch(o) for o in out[position:]):
                    return [line]
            return chunk  # each line is there, but not one after the other
    return []


# -- shell lines ---------------------------------------------------------------------------


def commands(text: str) -> Iterator[list[str]]:
    """The commands of shell text as argument lists: ``$`` prompts dropped, continuation
    lines joined, comments and ``&&`` / ``;`` chains split."""
    joined = re.sub(r"\\\n", " ", text)
    for raw in joined.splitlines():
        line = raw.strip()
        if line.startswith("$ "):
            line = line[2:]
        if not line or line.startswith("#"):
            continue
        tokens = shlex.split(line, comments=True)
        current: list[str] = []
        for token in tokens:
            if token in ("&&", ";", "||", "|"):
                if current:
                    yield current
                current = []
            else:
                current.append(token)
        if current:
            yield current
