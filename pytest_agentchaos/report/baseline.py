"""Regression baselines (``--chaos-baseline=FILE``): each chaos test case's metrics, saved from
a session's summary rows and compared with a later session's within tolerances; free of pytest.

Pass rates go through the gate (:mod:`.gate`): a fall beyond the tolerance regresses only when
Fisher's exact test says it is no chance, and is inconclusive (reported, not failed) otherwise.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ChaosConfigError
from ..saferepr import safe_repr
from .files import write_atomic
from .gate import INCONCLUSIVE, REGRESSED, RateGate, rate_gate
from .passk import JUDGED

__all__ = ["BASELINE_FORMAT", "BASELINE_KIND", "DEFAULT_TOLERANCES", "METRICS", "BaselineError",
           "Comparison", "Regression", "Tolerance", "case_key", "case_metrics", "compare",
           "load_baseline", "parse_tolerances", "regression_lines", "save_baseline"]  # fmt: skip

#: The version of a baseline file (``"format"``) and its ``"kind"``; a reader refuses others.
BASELINE_FORMAT = 1
BASELINE_KIND = "pytest-agentchaos baseline"
#: The outcome a run survives with (the terminal summary's "survived" counts the same);
#: skipped runs are left out of a case.
SURVIVED = "passed"
_MEDIANS = ("steps", "tool_calls", "model_calls", "seconds", "tokens")
_TOTALS = ("loops", "escaped", "repairs_ok", "repairs_declined", "repairs_failed")


class BaselineError(ChaosConfigError):
    """A baseline file cannot be read or written; the message is one line naming the file."""


#: The metrics a tolerance may name: lower is worse for ``pass_rate`` (percent), higher for the
#: others (medians; totals per run). A relative limit allows at least ``_SLACK`` more.
_PER_RUN = ("loops", "repairs_failed", "repairs_declined")
METRICS = ("pass_rate", *_MEDIANS, "steps_to_escape", *_PER_RUN)
_SLACK = dict.fromkeys(METRICS, 1.0) | {"tokens": 10.0}


@dataclass(frozen=True, slots=True)
class Tolerance:
    """How far a metric may move the bad way: ``amount`` percent of the baseline if ``relative``
    (at least its slack), else in its unit (points for ``pass_rate``); ``None``: not compared."""

    amount: float | None
    relative: bool = False

    def limit(self, metric: str, baseline: float) -> float | None:
        """The worst value of ``metric`` that still passes against ``baseline`` (None: off)."""
        if self.amount is None or metric == "pass_rate":
            return None if self.amount is None else baseline - self.amount
        if not self.relative:
            return baseline + self.amount
        return max(baseline * (1 + self.amount / 100), baseline + _SLACK[metric])


_PCT, _OFF = Tolerance(20, relative=True), Tolerance(None)
#: pass_rate may fall 5 points; usage and steps to escape may rise 20%; any more failed
#: repairs per run than the baseline's regress; loops and declined repairs are not compared.
DEFAULT_TOLERANCES: Mapping[str, Tolerance] = {
    "pass_rate": Tolerance(5), **dict.fromkeys(_MEDIANS + ("steps_to_escape",), _PCT),
    "repairs_failed": Tolerance(0), "loops": _OFF, "repairs_declined": _OFF,
}  # fmt: skip


def case_key(row: Mapping[str, Any]) -> str:
    """A row's case key: ``f"{case}@{profile}"`` (``case`` defaults to the ``test`` node id)."""
    return f"{row.get('case') or row.get('test', '')}@{row.get('profile', '')}"


#: The largest number a baseline may hold (larger is no count, median or time of a test run;
#: a 400-digit integer would not even convert to a float).
MAX_NUMBER = 10**15
#: The most runs of one case (``--chaos-runs`` allows at most this many).
MAX_RUNS = 10_000
#: The largest session seed a baseline may name.
MAX_SEED = 2**64


def _finite(value: Any) -> float | None:
    """``value`` as a float when it is a number within +-:data:`MAX_NUMBER`, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int):
        return float(value) if -MAX_NUMBER <= value <= MAX_NUMBER else None
    return float(value) if math.isfinite(value) and abs(value) <= MAX_NUMBER else None


def _tidy(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 3)


def case_metrics(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each case's numbers by :func:`case_key`: ``runs``, ``passed``, ``pass_rate`` (percent),
    medians over the runs of the usage metrics, the median ``steps_to_escape`` over every escape
    of every run (``None``: none) and totals of loops, escapes and repairs."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:  # the runs pass rates judge: not skipped ones, nor the user's xfails
        if row.get("outcome") in JUDGED:
            groups.setdefault(case_key(row), []).append(row)
    cases: dict[str, dict[str, Any]] = {}
    for key, group in sorted(groups.items()):
        runs = [(r, r.get("metrics") or {}) for r in group]
        n, passed = len(group), sum(r.get("outcome") == SURVIVED for r in group)
        entry: dict[str, Any] = {"runs": n, "passed": passed, "pass_rate": _tidy(100 * passed / n)}
        for name in _MEDIANS:
            values = [_finite(m.get(name, r.get(name))) or 0.0 for r, m in runs]
            entry[name] = _tidy(statistics.median(values))
        escapes = [_finite(s) or 0.0 for _, m in runs for s in m.get("steps_to_escape") or ()]
        entry["steps_to_escape"] = _tidy(statistics.median(escapes)) if escapes else None
        for name in _TOTALS:
            entry[name] = sum(int(_finite(m.get(name)) or 0) for _, m in runs)
        cases[key] = entry
    return cases


def _case_problem(entry: Any) -> str | None:
    """What is wrong with a baseline's case entry (every number range-checked), or None."""
    if not isinstance(entry, dict) or not {"runs", "pass_rate"} <= entry.keys():
        return f"expected an object with runs and pass_rate, found {safe_repr(entry, 60)}"
    for name in ("runs", "passed", "pass_rate", *_MEDIANS, "steps_to_escape", *_TOTALS):
        value = entry.get(name, 0)
        if value is None and name == "steps_to_escape":
            continue
        n = _finite(value)
        if name == "runs":
            ok = n is not None and n.is_integer() and 1 <= n <= MAX_RUNS
            want = f"a whole number from 1 to {MAX_RUNS}"
        elif name == "passed":
            runs = entry["runs"]
            ok = n is not None and n.is_integer() and 0 <= n <= (_finite(runs) or 0)
            want = f"a whole number from 0 to its runs ({safe_repr(runs, 20)})"
        elif name == "pass_rate":
            ok, want = n is not None and 0 <= n <= 100, "a number from 0 to 100"
        else:
            ok, want = n is not None and n >= 0, "a number >= 0 (at most 10**15)"
        if not ok:
            return f"{name!r} is {safe_repr(value, 60)}, expected {want}"
    return None


def load_baseline(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The cases of the baseline at ``path``; raises :class:`BaselineError` (one line naming it)."""
    where = f"baseline {os.fspath(path)}"
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{where}: no such file (--chaos-baseline-save writes it)") from None
    except OSError as exc:
        raise BaselineError(f"{where}: cannot read it: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        at = f"line {exc.lineno} column {exc.colno}" if exc.doc.strip() else "the file is empty"
        raise BaselineError(f"{where}: not JSON: {exc.msg} ({at})") from None
    except (ValueError, RecursionError) as exc:  # not UTF-8; nested too deep
        raise BaselineError(f"{where}: not JSON text ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise BaselineError(f"{where}: expected a JSON object, found {type(data).__name__}")
    if data.get("kind") != BASELINE_KIND:
        kind = f"its kind is {safe_repr(data['kind'], 60)}" if "kind" in data else "no kind"
        raise BaselineError(f"{where}: not a pytest-agentchaos baseline ({kind})")
    if (found := data.get("format")) != BASELINE_FORMAT or isinstance(found, bool):
        ours = f"this pytest-agentchaos reads format {BASELINE_FORMAT}"
        raise BaselineError(f"{where}: format {safe_repr(found, 60)} is not supported ({ours})")
    if not isinstance(cases := data.get("cases"), dict):
        raise BaselineError(f"{where}: 'cases' is {safe_repr(cases, 60)}, expected an object")
    saved = data.get("saved_with", {})
    if not isinstance(saved, dict):
        raise BaselineError(f"{where}: 'saved_with' is {safe_repr(saved, 60)}, expected an object")
    seed = saved.get("session_seed")
    if seed is not None and (type(seed) is not int or not 0 <= seed <= MAX_SEED):
        raise BaselineError(
            f"{where}: saved_with.session_seed is {safe_repr(seed, 60)}, expected a whole number "
            "from 0 to 2**64 (a --chaos-seed)"
        )
    for key, entry in cases.items():
        if problem := _case_problem(entry):
            raise BaselineError(f"{where}: case {safe_repr(key, 200)}: {problem}")
    return cases


def seed_note(path: str | os.PathLike[str], session_seed: int) -> str | None:
    """A line for a comparison under another session seed than the baseline was saved with
    (fault schedules follow the seed, and the metrics with them); None when the seeds agree
    or the file does not say. Never raises: the file was checked by :func:`load_baseline`."""
    try:
        saved = json.loads(Path(path).read_text(encoding="utf-8")).get("saved_with") or {}
        seed = saved.get("session_seed")
    except (OSError, ValueError, AttributeError, RecursionError):
        return None
    if type(seed) is not int or seed == session_seed or not 0 <= seed <= MAX_SEED:
        return None
    return (
        f"note: the baseline was saved under session seed {seed}, this session's is "
        f"{session_seed}: other faults fire, so metrics move (compare with --chaos-seed={seed})"
    )


def save_baseline(
    path: str | os.PathLike[str],
    rows: Iterable[Mapping[str, Any]],
    *,
    previous: Mapping[str, Mapping[str, Any]] | None = None,
    saved_with: Mapping[str, Any] | None = None,
) -> Path:
    """Write the baseline of ``rows`` to ``path`` atomically, keeping the cases of ``previous``
    (default: the file there, if any) not run now, and ``saved_with`` (session seed ...). Raises
    :class:`BaselineError` if that file is corrupt (it is left as it is) or cannot be written."""
    path = Path(path)
    if previous is None and os.path.lexists(path):
        previous = load_baseline(path)
    cases = {**(previous or {}), **case_metrics(rows)}
    data = {"format": BASELINE_FORMAT, "kind": BASELINE_KIND, "saved_with": dict(saved_with or {}),
            "cases": {key: cases[key] for key in sorted(cases)}}  # fmt: skip
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
    except OSError as exc:
        raise BaselineError(f"baseline {path}: cannot write it: {exc.strerror or exc}") from None
    return path


#: ``metric = value``: ``off``, or a sign, a number and a unit (anything else: none of these)
_LINE = re.compile(r"([a-z_-]+)\s*[=:\s]\s*(?:(off)|([+-])\s*(\d+\.?\d*|\.\d+)\s*(%|pt)?|.*)", re.I)


def parse_tolerances(lines: Sequence[str], where: str) -> dict[str, Tolerance]:
    """:data:`DEFAULT_TOLERANCES` updated by ``lines`` of ``metric = value`` (blank and ``#``
    lines skipped): ``+N%`` (relative) or ``+N`` (absolute) where higher is worse, ``-Npt`` for
    ``pass_rate``, or ``off``. Raises ``ChaosConfigError`` naming ``where`` and the line."""
    found, seen = dict(DEFAULT_TOLERANCES), set()
    for line in (raw.strip() for raw in lines):
        if not line or line.startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        metric = match[1].replace("-", "_").lower() if match else ""
        forms = ("off", "-pt") if metric == "pass_rate" else ("off", "+%", "+")
        if match is None or metric not in METRICS:
            problem = f"expected 'metric = value' for a metric of {', '.join(METRICS)}"
        elif metric in seen:
            problem = f"{metric} is set twice"
        elif (form := "off" if match[2] else f"{match[3]}{match[5] or ''}".lower()) in forms:
            amount = 0.0 if form == "off" else float(match[4])
            if not amount <= MAX_NUMBER:  # 400 digits are a float's inf
                shown = line if len(line) <= 60 else f"{line[:57]}..."
                raise ChaosConfigError(f"{where}: {shown!r}: the amount is more than 10**15")
            if metric == "pass_rate" and amount > 100:
                problem = "a pass rate can fall 100 points at most: expected -0pt to -100pt, or off"
                raise ChaosConfigError(f"{where}: {line!r}: {problem}")
            found[metric] = _OFF if form == "off" else Tolerance(amount, form == "+%")
            seen.add(metric)
            continue
        else:
            problem = "expected -Npt or off" if metric == "pass_rate" else "expected +N%, +N or off"
        raise ChaosConfigError(f"{where}: {line!r}: {problem}")
    return found


@dataclass(frozen=True, slots=True)
class Regression:
    """A case's metric that moved the bad way beyond its tolerance (totals are per run)."""

    case: str
    metric: str
    baseline: float
    current: float
    limit: float

    @property
    def change(self) -> str:
        """How far it moved: in points for ``pass_rate``, else with the percentage if it can."""
        delta, pct = _fmt(self.current - self.baseline, sign=True), ""
        if self.metric != "pass_rate" and self.baseline:
            pct = f" ({_fmt(100 * (self.current / self.baseline - 1), sign=True)}%)"
        return delta + ("pt" if self.metric == "pass_rate" else pct)


@dataclass(frozen=True, slots=True)
class Comparison:
    """A session against a baseline: the ``regressions``, the case keys ``compared``, those of
    the baseline not run (``missing``) and those run but not in it (``new``), and the pass-rate
    gate's decision of each case compared (``gates``, by case key)."""

    regressions: list[Regression] = field(default_factory=list)
    compared: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    gates: dict[str, RateGate] = field(default_factory=dict, compare=False)

    @property
    def inconclusive(self) -> list[str]:
        """The cases whose pass rate fell beyond its tolerance by what chance could explain."""
        return [key for key, gate in self.gates.items() if gate.decision == INCONCLUSIVE]


def _counts(entry: Mapping[str, Any]) -> tuple[int, int] | None:
    """A case's (passed, runs): its ``passed``, or its pass rate of its runs, rounded."""
    runs = _finite(entry.get("runs"))
    if runs is None or not runs.is_integer() or runs < 1:
        return None
    passed = _finite(entry.get("passed"))
    if passed is None:
        rate = _finite(entry.get("pass_rate"))
        if rate is None:
            return None
        passed = float(round(rate / 100 * runs))
    if not passed.is_integer() or not 0 <= passed <= runs:
        return None
    return int(passed), int(runs)


def _gate(was: Mapping[str, Any], now: Mapping[str, Any], tolerance: Tolerance) -> RateGate | None:
    """The gate's decision on a case's pass rate (None: not compared, or no counts)."""
    base, current = _counts(was), _counts(now)
    if tolerance.amount is None or base is None or current is None:
        return None
    return rate_gate(*current, *base, tolerance=tolerance.amount)


def _value(entry: Mapping[str, Any], metric: str) -> float | None:
    value, runs = _finite(entry.get(metric)), _finite(entry.get("runs")) or 1.0
    return value / runs if value is not None and metric in _PER_RUN else value


def compare(
    baseline: Mapping[str, Mapping[str, Any]],
    current: Mapping[str, Mapping[str, Any]],
    tolerances: Mapping[str, Tolerance] = DEFAULT_TOLERANCES,
) -> Comparison:
    """Compare the :func:`case_metrics` of a session with a baseline's. Improvements, cases
    not run and new cases never regress; a metric missing or ``None`` on a side is skipped."""
    result = Comparison(missing=sorted(baseline.keys() - current.keys()),
                        new=sorted(current.keys() - baseline.keys()))  # fmt: skip
    for key in sorted(baseline.keys() & current.keys()):
        result.compared.append(key)
        for metric, tolerance in tolerances.items():
            if metric == "pass_rate":
                gate = _gate(baseline[key], current[key], tolerance)
                if gate is None:
                    continue
                result.gates[key] = gate
                if gate.decision == REGRESSED:
                    result.regressions.append(_rate_regression(key, gate))
                continue
            was, now = _value(baseline[key], metric), _value(current[key], metric)
            if was is None or now is None or (limit := tolerance.limit(metric, was)) is None:
                continue
            worse = now - limit
            if worse > 1e-9 * max(1.0, abs(limit)):  # at the limit (give or take a float) passes
                result.regressions.append(Regression(key, metric, was, now, limit))
    return result


def _rate_regression(key: str, gate: RateGate) -> Regression:
    """The table's row of a pass rate the gate found REGRESSED (in percent)."""
    was = 100 * gate.base_passed / gate.base_runs
    return Regression(key, "pass_rate", was, 100 * gate.passed / gate.runs, was - gate.tolerance)


def _fmt(value: float, sign: bool = False) -> str:
    text = f"{value:+.3f}" if sign else f"{value:.3f}"
    return text.rstrip("0").rstrip(".")


def regression_lines(
    comparison: Comparison, path: str | os.PathLike[str], verbose: int = 0
) -> list[str]:
    """The lines the terminal shows: a header naming the baseline file, a fixed-width table
    of the regressions (totals per run) and the cases not compared (up to 5 without ``-v``)."""
    found = comparison.regressions
    n, cases = len(found), len(comparison.compared)
    count = f"{n or 'no'} regression{'s' * (n != 1)} against baseline {os.fspath(path)}"
    lines = [f"agentchaos: {count} ({cases} case{'s' * (cases != 1)} compared)"]
    if found:
        table = [["case", "metric", "baseline", "now", "limit", "change"]]
        for r in found:
            u = {"pass_rate": "%", "seconds": "s"}.get(r.metric, "")
            nums = (_fmt(v) + u for v in (r.baseline, r.current, r.limit))
            table.append([r.case, r.metric + "/run" * (r.metric in _PER_RUN), *nums, r.change])
        widths = [max(len(row[i]) for row in table) for i in range(5)]
        for row in table:
            cells = (c.ljust(w) for c, w in zip(row[:5], widths, strict=True))
            lines.append("  ".join(cells) + "  " + row[5])
    for key, gate in comparison.gates.items():
        if gate.decision != "PASS":
            lines.append(f"pass rate {gate.decision}: {key}: {gate.summary()}")
    notes = {"not run, not compared": comparison.missing, "new, not compared": comparison.new}
    for label, keys in notes.items():
        shown = keys if verbose > 0 else keys[:5]
        more = f", and {len(keys) - len(shown)} more (-v lists them)" if keys[len(shown) :] else ""
        lines += [f"{label} ({len(keys)}): {', '.join(shown)}{more}"] if keys else []
    return lines
