"""The labelled repair corpus in ``fixtures/repair/``: loading, checking its format, scoring.

Used by ``bench_repair_corpus.py`` and by the tests (the format check runs in CI).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "repair"
CATEGORIES = (
    "date", "enum", "type", "list", "missing", "unknown_key", "nested", "pattern", "format",
    "range", "json", "error_text", "valid",
)  # fmt: skip
_CASE_KEYS = {"id", "tool", "category", "task", "now", "args", "error", "expected", "why"}
#: Optional keys of a case: how its ``error`` was obtained (issue 30), e.g.
#: ``"captured: pydantic 2.12 ValidationError, str()"``; absent: transcribed by hand.
_OPTIONAL_KEYS = {"error_capture"}
#: The two halves (fixtures/repair/README.md): rules are developed on ``dev`` only; the
#: recorded figures come from ``test``, which nobody developing the rules reads.
SPLITS = ("dev", "test")


@dataclass(frozen=True)
class Case:
    id: str
    file: str
    tool: str
    schema: dict[str, Any]
    category: str
    task: str | None
    now: dt.datetime | None
    args: Any
    error: str | None
    expected: dict[str, Any] | None  # None: the repair must decline
    why: str
    error_capture: str | None = None  # how the error was obtained; None: by hand


def files(directory: Path = CORPUS, split: str = "all") -> list[Path]:
    """The ``*.json`` files of ``directory``: for the corpus, those of one half (``"dev"``,
    ``"test"``) or of both (``"all"``); a directory without halves, its own files."""
    if split not in (*SPLITS, "all"):
        raise ValueError(f"split must be one of {SPLITS} or 'all', not {split!r}")
    halves = [directory / half for half in (SPLITS if split == "all" else (split,))]
    if not any(half.is_dir() for half in halves):
        return sorted(directory.glob("*.json"))
    return [path for half in halves for path in sorted(half.glob("*.json"))]


def split_of(case: Case) -> str:
    """``"dev"`` or ``"test"``: the half a loaded case came from."""
    return case.file.split("/", 1)[0]


def load(directory: Path = CORPUS, split: str = "all") -> list[Case]:
    """Every case of every file (see :func:`files`), checked; raises ``ValueError`` naming the
    file and case."""
    cases: list[Case] = []
    seen: set[str] = set()
    for path in files(directory, split):
        cases.extend(_load_file(path, seen))
    return cases


def _load_file(path: Path, seen: set[str]) -> Iterator[Case]:
    data = json.loads(path.read_text(encoding="utf-8"))
    where = f"{path.parent.name}/{path.name}" if path.parent.name in SPLITS else path.name
    if not isinstance(data, dict) or set(data) != {"description", "tools", "cases"}:
        raise ValueError(f"{where}: a file has description, tools and cases")
    tools = data["tools"]
    for name, tool in tools.items():
        if set(tool) != {"source", "description", "parameters"}:
            raise ValueError(f"{where}: tool {name}: has source, description, parameters")
        if tool["parameters"].get("type") != "object":
            raise ValueError(f"{where}: tool {name}: parameters is an object schema")
    for case in data["cases"]:
        cid = case.get("id", "?")
        if not _CASE_KEYS <= set(case) <= _CASE_KEYS | _OPTIONAL_KEYS:
            missing, extra = _CASE_KEYS - set(case), set(case) - _CASE_KEYS - _OPTIONAL_KEYS
            raise ValueError(
                f"{where}: case {cid}: missing {sorted(missing)}, extra {sorted(extra)}"
            )
        if cid in seen:
            raise ValueError(f"{where}: case id {cid} is used twice")
        seen.add(cid)
        if case["tool"] not in tools:
            raise ValueError(f"{where}: case {cid}: no tool {case['tool']!r} in this file")
        if case["category"] not in CATEGORIES:
            raise ValueError(f"{where}: case {cid}: category {case['category']!r} unknown")
        expected = case["expected"]
        if expected != "decline" and not isinstance(expected, dict):
            raise ValueError(f'{where}: case {cid}: expected is an object or "decline"')
        now = dt.datetime.fromisoformat(case["now"]) if case["now"] else None
        yield Case(
            cid,
            where,
            case["tool"],
            tools[case["tool"]]["parameters"],
            case["category"],
            case["task"],
            now,
            case["args"],
            case["error"],
            None if expected == "decline" else expected,
            case["why"],
            case.get("error_capture"),
        )


@dataclass
class Score:
    fixable: int = 0
    fixed: int = 0  # repaired exactly as labelled
    wrong: int = 0  # "repaired" into other arguments than labelled
    missed: int = 0  # declined a fixable call
    unfixable: int = 0
    declined: int = 0  # declined an unfixable call, as labelled
    invented: int = 0  # "repaired" an unfixable call into other arguments
    #: an unfixable call that is valid by its schema and came with no error, passed as it
    #: is: nothing told the repairer that anything is wrong (a valid call is left unchanged)
    passed: int = 0

    def add(self, case: Case, ok: bool, args: Any) -> str:
        """Count one outcome; returns its label (fixed, wrong, missed, declined, invented,
        passed)."""
        if case.expected is not None:
            self.fixable += 1
            if ok and args == case.expected:
                self.fixed += 1
                return "fixed"
            if ok:
                self.wrong += 1
                return "wrong"
            self.missed += 1
            return "missed"
        self.unfixable += 1
        if ok and args == case.args and case.error is None:
            self.passed += 1
            return "passed"
        if ok:
            self.invented += 1
            return "invented"
        self.declined += 1
        return "declined"
