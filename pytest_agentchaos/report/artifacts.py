"""Report artifacts for CI: ``--chaos-report-dir=DIR`` holds one JSON trace per chaos test run
(``DIR/traces/``, written by each run, in xdist workers too) and ``DIR/index.json``, written
once at the end of the session from the summary rows (which cross xdist).

Both formats are versioned and their JSON Schemas ship in the package
(:func:`schema_path`: ``trace.schema.json``, ``index.schema.json``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from ..verdicts.verdict import FAIL, NOT_EXERCISED, outcome_of
from .files import write_atomic
from .metrics import total_metrics
from .passk import case_rates
from .terminal import FAILED_OUTCOMES

__all__ = [
    "INDEX_FORMAT",
    "INDEX_NAME",
    "TRACES",
    "index_data",
    "read_trace",
    "schema_path",
    "trace_file",
    "write_index",
]

#: The version of ``index.json`` (``"format"``); a reader refuses another.
INDEX_FORMAT = 1
INDEX_NAME = "index.json"
#: The folder of the report dir that holds the traces.
TRACES = "traces"


def schema_path(name: str) -> Path:
    """The shipped JSON Schema ``name`` (``"trace"`` or ``"index"``)."""
    if name not in ("trace", "index"):
        raise ValueError(f"no schema {name!r}: there are 'trace' and 'index'")
    return Path(str(resources.files("pytest_agentchaos") / "schemas" / f"{name}.schema.json"))


def trace_file(path: Path | None, report_dir: Path | None) -> str | None:
    """A run's trace file as the index names it: relative to the report dir when inside it."""
    if path is None:
        return None
    if report_dir is not None and path.is_relative_to(report_dir):
        return path.relative_to(report_dir).as_posix()
    return str(path)


def read_trace(entry: Mapping[str, Any], report_dir: Path | None) -> dict[str, Any] | None:
    """The trace document an index entry names (its ``trace``: relative to ``report_dir``,
    or absolute), or None when no trace was written; raises ``OSError`` or ``ValueError``
    for one that cannot be read."""
    name = entry.get("trace")
    if not isinstance(name, str) or not name:
        return None
    path = Path(name)
    if not path.is_absolute() and report_dir is not None:
        path = report_dir / path
    with path.open(encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, dict) or not isinstance(data.get("events"), list):
        raise ValueError(f"{path.name} is not a pytest-agentchaos trace")
    return data


def index_data(
    rows: Iterable[Mapping[str, Any]],
    *,
    session_seed: int,
    profile_option: str | None,
    runs: int = 1,
) -> dict[str, Any]:
    """The content of ``index.json``: one entry per chaos test run (sorted by node id) with
    its profile, seed, outcome, the exception that ended it (``error``: ``type``, ``message``,
    ``where``; null when none did), verdicts with their outcome (``pass``, ``fail``,
    ``not_exercised``) and explanation, metrics, replay command and trace file (and, for a
    test run several times, its case and run number), the totals per profile (runs failed,
    runs with a verdict not exercised, faults fired, the stacks' metrics), and the pass rate
    of each test run several times with its verdicts' runs not exercised (and, for
    ``--chaos-runs=auto:MAX``, where its runs were decided)."""
    rows = list(rows)
    tests: list[dict[str, Any]] = []
    for row in sorted(rows, key=lambda r: str(r.get("test", ""))):
        explanations = row.get("explanations") or {}
        verdicts = []
        for name, value in (row.get("verdicts") or {}).items():
            outcome = outcome_of(value)
            verdicts.append({"name": name, "ok": outcome != FAIL, "outcome": outcome,
                             "explanation": str(explanations.get(name, ""))})  # fmt: skip
        error = row.get("error")
        tests.append({
            "node_id": str(row.get("test", "")),
            "profile": str(row.get("profile", "")),
            "test_seed": int(row.get("seed", 0)),
            "outcome": str(row.get("outcome", "")),
            "error": _error(error),
            "replay": str(row.get("replay", "")),
            "trace": row.get("trace_file"),
            "verdicts": verdicts,
            "halted": list(row.get("halted") or []),
            "capped": list(row.get("capped") or []),
            "metrics": dict(row.get("metrics") or {}),
            **{k: row[k] for k in _OPTIONAL if row.get(k) is not None},
        })  # fmt: skip
    profiles: dict[str, list[Mapping[str, Any]]] = {}
    for test in tests:
        profiles.setdefault(test["profile"], []).append(test)
    return {
        "format": INDEX_FORMAT,
        "session_seed": session_seed,
        "profile_option": profile_option,
        "runs": runs,
        "tests": tests,
        "cases": [
            {
                "case": r.case,
                "profile": r.profile,
                "runs": r.runs,
                "passed": r.passed,
                "pass_rate": r.rate,
                "wilson95": list(r.interval),
                "min_pass_rate": r.min_pass_rate,
                "ok": r.ok,
                "not_exercised": dict(r.not_exercised),
                **_auto(r),
            }
            for r in case_rates(rows)
        ],
        "profiles": {name: _profile(group) for name, group in sorted(profiles.items())},
    }


def _auto(rate: Any) -> dict[str, Any]:
    """A case's ``auto`` entry (``--chaos-runs=auto:MAX``): MAX, where its runs were decided
    and whether surely; nothing for other cases."""
    if rate.max_runs is None:
        return {}
    stop = rate.stop
    return {"auto": {"max_runs": rate.max_runs,
                     "decided_after": stop.after if stop is not None else None,
                     "certain": stop.certain if stop is not None else None}}  # fmt: skip


def _error(error: Any) -> dict[str, str] | None:
    """A row's ``error`` as the index holds it: the three strings, or null."""
    if not isinstance(error, Mapping) or not isinstance(error.get("type"), str):
        return None
    return {k: str(error.get(k) or "") for k in ("type", "message", "where")}


def _profile(group: list[Mapping[str, Any]]) -> dict[str, Any]:
    """A profile's totals: runs, how many passed and failed, how many had a verdict not
    exercised (and which), faults fired by kind, and the stacks' metrics added up."""
    faults: dict[str, int] = {}
    idle: dict[str, int] = {}
    for test in group:
        found = test["metrics"].get("faults")
        for kind, n in found.items() if isinstance(found, Mapping) else ():
            if type(n) is int:
                faults[str(kind)] = faults.get(str(kind), 0) + n
        for verdict in test["verdicts"]:
            if verdict["outcome"] == NOT_EXERCISED:
                idle[verdict["name"]] = idle.get(verdict["name"], 0) + 1
    return {
        "tests": len(group),
        "passed": sum(t["outcome"] == "passed" for t in group),
        "failed": sum(t["outcome"] in FAILED_OUTCOMES for t in group),
        "failing_verdict": sum(any(v["outcome"] == FAIL for v in t["verdicts"]) for t in group),
        "not_exercised": sum(
            any(v["outcome"] == NOT_EXERCISED for v in t["verdicts"]) for t in group
        ),
        "not_exercised_by_verdict": dict(sorted(idle.items())),
        "faults_fired": sum(faults.values()),
        "faults": dict(sorted(faults.items())),
        **total_metrics(t["metrics"] for t in group),
    }


#: Keys of a summary row that an index entry carries when the row has them.
_OPTIONAL = ("case", "run", "min_pass_rate", "auto_runs", "breaking_point", "not_searched")


def write_index(directory: Path, data: Mapping[str, Any]) -> Path:
    """Write ``index.json`` into ``directory`` atomically (a reader never sees half of it, and
    an earlier index stays whole if this write fails); returns its path. Raises ``OSError``."""
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    return write_atomic(directory / INDEX_NAME, text)
