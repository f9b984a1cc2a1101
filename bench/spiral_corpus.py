"""The labelled spiral corpus in ``fixtures/spirals/``: loading and checking its format.

Each run is a sequence of steps as a halt monitor observes them (the agent's text, the tool it
called, whether the call worked, its error, the progress it reported), labelled spiral or
healthy, with ``halt_at``: the first step at which halting is justified (three strikes), or
``None`` for a healthy run. The format, the kinds and how ``halt_at`` was chosen are in
``fixtures/spirals/README.md``.

Used by the halt bench and by the tests (the format check runs in CI). Check the corpus by
hand: ``python bench/spiral_corpus.py`` (prints the counts per kind and language).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "spirals"
#: The two halves (fixtures/spirals/README.md): rules are developed on ``dev`` only; the
#: bench's recorded figures are those of ``test``, which nobody developing the rules reads.
SPLITS = ("dev", "test")

SPIRAL_KINDS = (
    "exact", "paraphrase", "apology", "self_reference", "oscillation", "drift",
    "tool_failure", "stagnation",
)  # fmt: skip
HEALTHY_KINDS = ("templated", "polling", "bisection", "retry", "long", "sweep", "test_rerun")
KINDS = SPIRAL_KINDS + HEALTHY_KINDS
LANGUAGES = ("en", "zh")

#: What issue 14 asks of the corpus (checked by ``check``).
MIN_RUNS = 90
MIN_SPIRALS = 45
MIN_HEALTHY = 40
MIN_PER_KIND = 4
MIN_PER_LANGUAGE = {"zh": 20}
MIN_STEPS, MAX_STEPS = 6, 60
MIN_LONG_STEPS = 40  # a "long" healthy run
FIRST_STRIKE = 2  # the third strike is step 2 at the earliest

COUNTERPART = re.compile(r"counterpart of (?P<id>[a-z0-9]+(?:-[a-z0-9]+)*)")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

_STEP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["output", "tool", "ok", "error", "progress"],
    "properties": {
        # text, or the structured message the agent emitted (a JSON object or list)
        "output": {"anyOf": [{"type": "string", "minLength": 1}, {"type": ["object", "array"]}]},
        "tool": {"type": ["string", "null"], "minLength": 1},
        "ok": {"type": ["boolean", "null"]},
        "error": {"type": ["string", "null"], "minLength": 1},
        "progress": {"type": ["number", "null"]},
        # optional: the tool call's arguments, where the run's story says what was called
        "args": {"type": "object"},
        # optional: the environment's state after the step, as the harness logged it
        "state": {},
    },
}
_RUN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": [
        "id",
        "kind",
        "language",
        "spiral",
        "source",
        "task",
        "halt_at",
        "why",
        "steps",
    ],  # fmt: skip
    "properties": {
        "id": {"type": "string", "pattern": r"^[a-z0-9]+(-[a-z0-9]+)*$"},
        "kind": {"enum": list(KINDS)},
        "language": {"enum": list(LANGUAGES)},
        "spiral": {"type": "boolean"},
        "source": {
            "type": "string",
            "anyOf": [{"pattern": r"^https://\S+$"}, {"pattern": f"^{COUNTERPART.pattern}$"}],
        },
        "task": {"type": "string", "minLength": 1},
        "halt_at": {"type": ["integer", "null"], "minimum": 0},
        "why": {"type": "string", "minLength": 1, "pattern": r"^[^\n]+$"},
        "steps": {
            "type": "array",
            "minItems": MIN_STEPS,
            "maxItems": MAX_STEPS,
            "items": _STEP_SCHEMA,
        },
    },
}
FILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["description", "runs"],
    "properties": {
        "description": {"type": "string", "minLength": 1},
        "runs": {"type": "array", "minItems": 1, "items": _RUN_SCHEMA},
    },
}
_VALIDATOR = jsonschema.Draft202012Validator(FILE_SCHEMA)


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a run, as the monitor's ``observe(output, tool, ok, progress, error=...,
    args=...)`` sees it."""

    output: Any  # text, or the structured message (a dict or list)
    tool: str | None
    ok: bool | None  # None when no tool was called
    error: str | None  # the tool's error text when ok is False; None there: not given
    progress: float | None  # None: the agent reported no progress (unknown, not zero)
    args: Mapping[str, Any] | None = None  # the call's arguments; None: not given
    state: Any = None  # the environment's state after the step; None: not given
    has_state: bool = False  # whether the run gave a state at this step (it may be null)


@dataclass(frozen=True, slots=True)
class Run:
    """One labelled agent run."""

    id: str
    file: str
    kind: str
    language: str
    spiral: bool
    source: str  # a public report's URL, or "counterpart of <spiral id>"
    task: str
    halt_at: int | None  # the first step at which halting is justified; None: healthy
    why: str
    steps: tuple[Step, ...]

    @property
    def counterpart_of(self) -> str | None:
        """The spiral this hand-written healthy run is the twin of, if it is one."""
        match = COUNTERPART.fullmatch(self.source)
        return match["id"] if match else None


def files(directory: Path = CORPUS, split: str = "all") -> list[Path]:
    """The ``*.json`` files of ``directory``: for the corpus itself, those of one half
    (``"dev"``, ``"test"``) or of both (``"all"``); any other directory, its own files."""
    if split not in (*SPLITS, "all"):
        raise ValueError(f"split must be one of {SPLITS} or 'all', not {split!r}")
    halves = [directory / half for half in (SPLITS if split == "all" else (split,))]
    if not any(half.is_dir() for half in halves):
        return sorted(directory.glob("*.json"))
    return [path for half in halves for path in sorted(half.glob("*.json"))]


def load(directory: Path = CORPUS, split: str = "all") -> list[Run]:
    """Every run of every file of ``directory`` (see :func:`files`), each checked on its own;
    raises ``ValueError`` listing every problem, each naming its file and run."""
    runs: list[Run] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    for path in files(directory, split):
        name = f"{path.parent.name}/{path.name}" if path.parent.name in SPLITS else path.name
        data = json.loads(path.read_text(encoding="utf-8"))
        found = _file_problems(data, name)
        if found:
            problems.extend(found)
            continue
        for raw in data["runs"]:
            where = f"{name}: run {raw['id']}"
            found = _run_problems(raw, where)
            if raw["id"] in seen:
                found.append(f"{where}: id also used in {seen[raw['id']]}")
            seen.setdefault(raw["id"], name)
            problems.extend(found)
            if not found:
                runs.append(_run(raw, name))
    if problems:
        raise ValueError("\n".join(problems))
    return runs


def split_of(run: Run) -> str:
    """``"dev"`` or ``"test"``: the half a loaded run came from."""
    return run.file.split("/", 1)[0]


def check(directory: Path = CORPUS) -> list[Run]:
    """``load`` and then the rules across runs: every counterpart names a spiral of the
    corpus, the corpus is as large and as varied as issue 14 asks, and its test half holds a
    fifth of its runs in Chinese (issue 29). Returns the runs; raises ``ValueError`` listing
    every problem."""
    runs = load(directory)
    problems = _corpus_problems(runs)
    test = [run for run in runs if "/" in run.file and split_of(run) == "test"]
    if test and sum(run.language == "zh" for run in test) * 5 < len(test):
        problems.append("corpus: under a fifth of the test half is in Chinese")
    if problems:
        raise ValueError("\n".join(problems))
    return runs


def tally(runs: Iterable[Run]) -> Counter[tuple[str, str]]:
    """How many runs of each (kind, language)."""
    return Counter((run.kind, run.language) for run in runs)


def _file_problems(data: Any, where: str) -> list[str]:
    problems = []
    for error in sorted(_VALIDATOR.iter_errors(data), key=lambda e: list(e.absolute_path)):
        path = list(error.absolute_path)
        place = where
        if len(path) >= 2 and path[0] == "runs" and isinstance(path[1], int):
            raw = data["runs"][path[1]]
            name = raw.get("id", f"#{path[1]}") if isinstance(raw, dict) else f"#{path[1]}"
            place = f"{where}: run {name}"
            path = path[2:]
        at = ".".join(str(p) for p in path)
        problems.append(f"{place}: {at + ': ' if at else ''}{error.message}")
    return problems


def _run_problems(raw: dict[str, Any], where: str) -> list[str]:
    """What the schema cannot say: the fields of a run and of a step that depend on each
    other."""
    problems = []
    kind, steps, halt_at = raw["kind"], raw["steps"], raw["halt_at"]
    if raw["spiral"] != (kind in SPIRAL_KINDS):
        problems.append(
            f"{where}: spiral is {raw['spiral']} but kind {kind!r} is "
            f"{'a spiral' if kind in SPIRAL_KINDS else 'a healthy'} kind"
        )
    if raw["spiral"]:
        if halt_at is None:
            problems.append(f"{where}: a spiral needs halt_at")
        elif not FIRST_STRIKE <= halt_at < len(steps):
            problems.append(
                f"{where}: halt_at {halt_at} is not a step index from {FIRST_STRIKE} "
                f"(the third strike) to {len(steps) - 1}"
            )
        if COUNTERPART.fullmatch(raw["source"]):
            problems.append(f"{where}: a spiral's source is the public report it is drawn from")
    elif halt_at is not None:
        problems.append(f"{where}: a healthy run has halt_at null, not {halt_at}")
    if kind == "long" and len(steps) < MIN_LONG_STEPS:
        problems.append(f"{where}: a long run has {MIN_LONG_STEPS}+ steps, not {len(steps)}")
    if raw["language"] == "zh":
        if not _CJK.search(raw["task"]):
            problems.append(f"{where}: language zh but the task has no Chinese")
        problems.extend(
            f"{where}: step {i}: language zh but the output has no Chinese"
            for i, step in enumerate(steps)
            if not _CJK.search(_text(step["output"]))
        )
    else:
        texts = [raw["task"], raw["why"], *(_text(step["output"]) for step in steps)]
        if any(_CJK.search(text) for text in texts):
            problems.append(f"{where}: language en but the run contains Chinese text")
    for i, step in enumerate(steps):
        if (step["tool"] is None) != (step["ok"] is None):
            problems.append(f"{where}: step {i}: ok is null exactly when no tool was called")
        if step["error"] is not None and step["ok"] is not False:
            problems.append(f"{where}: step {i}: error is set only when ok is false")
        if "args" in step and step["tool"] is None:
            problems.append(f"{where}: step {i}: args without a tool")
    return problems


def _corpus_problems(runs: list[Run]) -> list[str]:
    problems = []
    spirals = {run.id for run in runs if run.spiral}
    for run in runs:
        twin = run.counterpart_of
        if twin is not None and twin not in spirals:
            problems.append(f"{run.file}: run {run.id}: counterpart of {twin!r}, no such spiral")
    counts = tally(runs)
    n_spiral = sum(run.spiral for run in runs)
    for what, have, need in (
        ("runs", len(runs), MIN_RUNS),
        ("spiral runs", n_spiral, MIN_SPIRALS),
        ("healthy runs", len(runs) - n_spiral, MIN_HEALTHY),
    ):
        if have < need:
            problems.append(f"corpus: {have} {what}, issue 14 asks for {need}+")
    for kind in KINDS:
        have = sum(n for (k, _), n in counts.items() if k == kind)
        if have < MIN_PER_KIND:
            problems.append(f"corpus: {have} runs of kind {kind}, {MIN_PER_KIND}+ needed")
    for language, need in MIN_PER_LANGUAGE.items():
        mine = [run for run in runs if run.language == language]
        if len(mine) < need:
            problems.append(f"corpus: {len(mine)} runs in {language}, {need}+ needed")
        if {run.spiral for run in mine} != {True, False}:
            problems.append(f"corpus: the {language} runs need both spirals and healthy runs")
    return problems


def _text(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


def _run(raw: dict[str, Any], file: str) -> Run:
    return Run(
        raw["id"],
        file,
        raw["kind"],
        raw["language"],
        raw["spiral"],
        raw["source"],
        raw["task"],
        raw["halt_at"],
        raw["why"],
        tuple(
            Step(
                s["output"],
                s["tool"],
                s["ok"],
                s["error"],
                s["progress"],
                s.get("args"),
                s.get("state"),
                "state" in s,
            )
            for s in raw["steps"]
        ),
    )


def main(argv: list[str]) -> int:
    try:
        runs = check(Path(argv[0]) if argv else CORPUS)
    except ValueError as exc:
        print(exc)
        return 1
    counts = tally(runs)
    print(f"{len(runs)} runs ({sum(r.spiral for r in runs)} spirals): well formed")
    for kind in KINDS:
        per = ", ".join(f"{lang} {counts[kind, lang]}" for lang in LANGUAGES)
        print(f"  {kind:<15} {sum(counts[kind, lang] for lang in LANGUAGES):>3}  ({per})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
