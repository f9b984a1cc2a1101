"""The HTML timeline report: one self-contained page (inline CSS and JS, no network request)
that lists the chaos test runs of a session from ``index.json`` (failures first, each with why
it ended), filters them by outcome, profile and verdict (pass, fail, not exercised), and draws
each run's trace as lanes of marks along steps and virtual time, with loop episodes and halts
as labelled spans.

Everything a trace holds is agent output, hence hostile: the page shows it as text only. Each
trace is embedded once, compactly (long strings cut; the full detail stays in the trace file),
as ``<script type="application/json">`` with ``<``, ``>``, ``&``, U+2028 and U+2029 escaped;
the page's script builds a timeline only when its test is expanded.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from itertools import islice
from pathlib import Path
from typing import Any

from ..saferepr import safe_repr
from ..verdicts.verdict import FAIL, NOT_EXERCISED, PASS, error_line, outcome_of
from .files import write_atomic
from .terminal import FAILED_OUTCOMES

__all__ = ["render_html", "write_html"]

#: Characters of a string kept in the embedded copy of a trace.
TRIM = 300
#: Entries of a list or an object kept in the embedded copy.
MAX_ITEMS = 30
#: Nesting kept in the embedded copy: deeper values become "...".
MAX_DEPTH = 6
#: Fields kept per event type (a corrupt trace may invent a new key in every event).
MAX_FIELDS = 64
#: Events embedded per trace: the first ``HEAD_EVENTS`` and the last ``TAIL_EVENTS``.
HEAD_EVENTS = 15_000
TAIL_EVENTS = 5_000

_BIG = 10**15
_SCRIPT_ESCAPES = {ord(c): f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"}
_CLASS = re.compile(r"[^a-z0-9_-]")
_FIXED = frozenset({"type", "step", "t"})


def _cut(text: str, limit: int = TRIM) -> str:
    if len(text) <= limit:
        return str(text)
    return f"{text[:limit]}...[+{len(text) - limit} chars]"


def _key(key: Any) -> str:
    if type(key) is str and len(key) <= 80:
        return key
    return _cut(key if isinstance(key, str) else safe_repr(key, 60), 80)


def _trim(value: Any, depth: int = 0) -> Any:
    """A JSON-able, bounded copy of ``value``: strings cut, containers capped, floats rounded
    for display, anything else shown by its (safe) repr."""
    kind = type(value)
    if kind is str:
        return value if len(value) <= TRIM else _cut(value)
    if value is None or kind is bool or (kind is int and -_BIG < value < _BIG):
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value) if -_BIG < value < _BIG else safe_repr(value, 40)
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(float(value))
        rounded = float(f"{value:.6g}")
        return int(rounded) if rounded.is_integer() and abs(rounded) < _BIG else rounded
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, (Mapping, list, tuple)) and depth >= MAX_DEPTH:
        return "..."
    if isinstance(value, Mapping):
        out = {_key(k): _trim(v, depth + 1) for k, v in islice(value.items(), MAX_ITEMS)}
        if len(value) > MAX_ITEMS:
            out["..."] = f"{len(value) - MAX_ITEMS} more"
        return out
    if isinstance(value, (list, tuple)):
        items = [_trim(v, depth + 1) for v in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            items.append(f"... {len(value) - MAX_ITEMS} more")
        return items
    return safe_repr(value, TRIM)


def _empty(value: Any) -> bool:
    """Nothing to show (compared by type: a hostile ``__eq__`` is never called)."""
    return value is None or (isinstance(value, (str, Mapping, list, tuple)) and len(value) == 0)


def _step(value: Any) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool) and -_BIG < value < _BIG
    return int(value) if ok else 0


def _time(value: Any) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    number = float(value) if -_BIG < value < _BIG else 0.0
    if not math.isfinite(number):
        return 0
    rounded = round(number, 3)
    return int(rounded) if rounded.is_integer() else rounded


def _compact_trace(doc: Any) -> dict[str, Any]:
    """The embedded copy of a trace document: its events as arrays ``[type, step, t, *values]``
    whose values follow the field list of their type (sent once per type), trailing empties
    dropped. Raises ``ValueError`` when ``doc`` is not a trace."""
    if not isinstance(doc, Mapping):
        raise ValueError(f"not a trace: expected an object, got {type(doc).__name__}")
    version = doc.get("format", 1)
    if version != 1:
        raise ValueError(f"unsupported trace format {safe_repr(version, 40)} (expected 1)")
    events = doc.get("events")
    if not isinstance(events, (list, tuple)):
        raise ValueError("not a trace: 'events' is not a list")
    total = len(events)
    omitted = None
    if total > HEAD_EVENTS + TAIL_EVENTS:
        events = [*events[:HEAD_EVENTS], *events[-TAIL_EVENTS:]]
        omitted = [HEAD_EVENTS, total - TAIL_EVENTS]
    types: dict[str, tuple[int, list[str], dict[str, int]]] = {}
    rows: list[list[Any]] = []
    for raw in events:
        event = raw if isinstance(raw, Mapping) else {"type": "?", "value": raw}
        name = event.get("type")
        name = _cut(name, 60) if isinstance(name, str) else "?"
        if name not in types:
            types[name] = (len(types), [], {})
        number, fields, where = types[name]
        row: list[Any] = [number, _step(event.get("step")), _time(event.get("t"))]
        for raw_key, value in islice(event.items(), MAX_FIELDS + 3):
            if raw_key in _FIXED or _empty(value):
                continue
            slot = where.get(raw_key) if type(raw_key) is str else None
            if slot is None:
                key = _key(raw_key)
                slot = where.get(key)
                if slot is None:
                    if len(fields) >= MAX_FIELDS:
                        continue
                    slot = where[key] = len(fields)
                    fields.append(key)
            slot += 3
            if slot >= len(row):
                row.extend([None] * (slot + 1 - len(row)))
            row[slot] = _trim(value, 1)
        rows.append(row)
    return {
        "n": total,
        "omitted": omitted,
        "meta": _trim(doc.get("meta") or {}),
        "types": [[name, fields] for name, (_, fields, _) in types.items()],
        "ev": rows,
    }


def _json_script(element_id: str, data: Any) -> str:
    """``data`` as a JSON data block no content can break out of."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    escaped = text.translate(_SCRIPT_ESCAPES)
    return f'<script type="application/json" id="{element_id}">{escaped}</script>'


def _one_line(exc: BaseException) -> str:
    text = safe_repr(exc, 2000) if not str(exc) else str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return _cut(f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": "), 200)


def _trace_block(
    number: int,
    entry: Mapping[str, Any],
    load_trace: Callable[[Mapping[str, Any]], Mapping[str, Any] | None],
) -> str:
    """The timeline of one test: a container the script fills on expanding, and its data; or
    the one line that says why there is none."""
    try:
        doc = load_trace(entry)
        data = None if doc is None else _compact_trace(doc)
        block = None if data is None else _json_script(f"trace-{number}", data)
    except Exception as exc:  # a bad trace spoils its own timeline, never the report
        reason = _one_line(exc)
        return f'<p class="trace-missing trace-unreadable">trace unreadable: {_esc(reason)}</p>'
    if block is None:
        return '<p class="trace-missing">no trace written for this run</p>'
    svg = '<svg class="timeline-svg" role="img" aria-label="timeline of the run"></svg>'
    return f'<div class="timeline" data-trace="trace-{number}">{svg}</div>{block}'


def _esc(value: Any) -> str:
    text = value if isinstance(value, str) else safe_repr(value, TRIM) if value is not None else ""
    return html.escape(text, quote=True)


def _fmt(value: Any) -> str:
    """A metric shown in a cell: counts by name as ``name: n``, lists joined, none as a dash."""
    if _empty(value):
        return "\u2013"
    if isinstance(value, Mapping):
        return ", ".join(f"{_esc(k)}: {_fmt(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_fmt(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return _esc(value)


#: The totals shown first, with their headings; other keys follow under their own names.
_TOTALS = {"tests": "runs", "passed": "passed", "failed": "failed",
           "failing_verdict": "with a failing verdict", "not_exercised": "not exercised",
           "faults_fired": "faults fired"}  # fmt: skip


def _totals_table(profiles: Any) -> str:
    if not isinstance(profiles, Mapping) or not profiles:
        return "<p>no chaos test ran</p>"
    columns = ["tests", "passed"]
    for totals in profiles.values():
        if isinstance(totals, Mapping):
            columns.extend(k for k in _TOTALS if k in totals and k not in columns)
    for totals in profiles.values():
        if isinstance(totals, Mapping):
            columns.extend(k for k in totals if k not in columns)
    head = "".join(
        f"<th>{_esc(_TOTALS.get(c, c) if isinstance(c, str) else c)}</th>"
        for c in ["profile", *columns]
    )
    body = "".join(
        f"<tr><td>{_esc(name)}</td>"
        + "".join(f"<td>{_fmt(t.get(c) if isinstance(t, Mapping) else None)}</td>" for c in columns)
        + "</tr>"
        for name, t in profiles.items()
    )
    return f'<table id="profile-totals"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _percent(value: Any) -> str:
    return f"{value:.0%}" if type(value) in (int, float) else "\u2013"


def _cases_section(cases: Any) -> str:
    """The pass rate of each case run several times (``--chaos-runs``), those below their
    rule first; nothing when no case was."""
    rows = [c for c in cases if isinstance(c, Mapping)] if isinstance(cases, list) else []
    if not rows:
        return ""
    body = []
    for case in sorted(rows, key=lambda c: c.get("ok") is True):
        ok = case.get("ok") is True
        interval = case.get("wilson95")
        low, high = interval if isinstance(interval, list) and len(interval) == 2 else (None, None)
        limit = case.get("min_pass_rate")
        runs = case.get("runs")
        rule = f"pass^{_fmt(runs)}" if limit is None else f"min_pass_rate {_percent(limit)}"
        auto = case.get("auto")
        if isinstance(auto, Mapping) and type(auto.get("max_runs")) is int:
            after = auto.get("decided_after")
            rule += (
                f"; decided after {_fmt(after)} of at most {_fmt(auto['max_runs'])} runs"
                if type(after) is int
                else f"; not decided (at most {_fmt(auto['max_runs'])} runs)"
            )
        body.append(
            f'<tr class="case case-{"ok" if ok else "fail"}"><td class="node-id">'
            f"{_esc(str(case.get('case', '')))}</td><td>{_esc(str(case.get('profile', '')))}</td>"
            f"<td>{_fmt(case.get('passed'))}/{_fmt(runs)}</td>"
            f"<td>{_percent(case.get('pass_rate'))}</td>"
            f"<td>{_percent(low)}\u2013{_percent(high)}</td><td>{rule}</td>"
            f'<td>{_badge("", ok)}</td><td class="idle">{_idle(case, runs)}</td></tr>'
        )
    return (
        '<section><h2>Pass rates</h2><table id="case-rates"><thead><tr><th>test</th>'
        "<th>profile</th><th>passed</th><th>rate</th><th>Wilson 95%</th><th>rule</th><th></th>"
        f"<th>not exercised</th></tr></thead><tbody>{''.join(body)}</tbody></table></section>"
    )


def _idle(case: Mapping[str, Any], runs: Any) -> str:
    """The runs of a case in which each verdict was not exercised: ``must_repair 7/10``."""
    found = case.get("not_exercised")
    if not isinstance(found, Mapping):
        return ""
    return ", ".join(
        f"{_esc(str(name))} {_fmt(n)}/{_fmt(runs)}"
        for name, n in islice(found.items(), MAX_ITEMS)
        if type(n) is int and n > 0
    )


def _verdicts(entry: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(name, outcome, explanation) of each verdict of an index entry (an entry without an
    ``outcome``, from an older index, reads its ``ok``)."""
    found = entry.get("verdicts")
    if not isinstance(found, (list, tuple)):
        return []
    return [
        (str(v.get("name", "?")), outcome_of(v.get("outcome", v.get("ok") is True)),
         str(v.get("explanation") or ""))
        for v in found if isinstance(v, Mapping)
    ]  # fmt: skip


def _error(entry: Mapping[str, Any]) -> str | None:
    """The exception that ended an entry's run, on one line."""
    error = entry.get("error")
    if not isinstance(error, Mapping) or not isinstance(error.get("type"), str):
        return None
    return error_line({k: str(v) for k, v in error.items() if isinstance(v, str)}, 500)


def _why(entry: Mapping[str, Any], verdicts: list[tuple[str, str, str]]) -> str:
    """Why a run failed, in a few words: the exception that ended it (unless a halt of the
    harness or a framework's cap stopped it: that is named instead), its failing verdicts,
    what stopped it; empty for a run that passed."""
    parts = []
    error = None if entry.get("halted") or entry.get("capped") else _error(entry)
    if error:
        parts.append(error)
    failing = [name for name, outcome, _ in verdicts if outcome == FAIL]
    if failing:
        parts.append(f"{', '.join(failing)} failed")
    for key, label in (("halted", "halted by"), ("capped", "capped by")):
        stops = entry.get(key)
        if isinstance(stops, list) and stops:
            parts.append(f"{label} {'+'.join(str(x) for x in stops[:5])}")
    if not parts and str(entry.get("outcome", "")) in FAILED_OUTCOMES:
        parts.append("no exception or failing verdict recorded")
    return "; ".join(parts)


def _rank(entry: Mapping[str, Any]) -> tuple[int, str]:
    """Failures first (failed runs, then a failing verdict, then a verdict not exercised),
    then by node id."""
    outcomes = {outcome for _, outcome, _ in _verdicts(entry)}
    outcome = str(entry.get("outcome", ""))
    rank = (0 if outcome in FAILED_OUTCOMES else 1 if FAIL in outcomes
            else 2 if NOT_EXERCISED in outcomes else 3)  # fmt: skip
    return rank, str(entry.get("node_id", ""))


def _options(select_id: str, label: str, choices: Iterable[tuple[str, str]]) -> str:
    options = "".join(f'<option value="{_esc(v)}">{_esc(text)}</option>' for v, text in choices)
    return (f'<label>{label} <select id="{select_id}"><option value="">all</option>{options}'
            "</select></label>")  # fmt: skip


def _filters(tests: list[Mapping[str, Any]], tokens: dict[str, str]) -> str:
    def counted(key: str) -> list[tuple[str, str]]:
        counts = Counter(str(entry.get(key, "")) for entry in tests)
        return [(value, f"{value or '(none)'} ({n})") for value, n in sorted(counts.items())]

    return (
        '<div class="filters">'
        + _options("filter-outcome", "outcome", counted("outcome"))
        + _options("filter-profile", "profile", counted("profile"))
        + _options("filter-verdict", "verdict", ((t, label) for label, t in tokens.items()))
        + f'<span id="shown-count">{len(tests)} of {len(tests)} tests shown</span></div>'
    )


#: Each verdict outcome's CSS class and the word its badge shows.
_STATES = {PASS: ("ok", "ok"), FAIL: ("fail", "FAIL"), NOT_EXERCISED: ("idle", "not exercised")}


def _verdict_tokens(tests: list[Mapping[str, Any]]) -> dict[str, str]:
    """The verdict filter's choices, label -> the token rows carry in ``data-verdicts``."""
    labels = ["any verdict FAIL", "any verdict not exercised", "all verdicts ok", "no verdict"]
    names = sorted({name for entry in tests for name, _, _ in _verdicts(entry)})
    labels += [f"{name} {word}" for name in names for _, word in _STATES.values()]
    return {label: f"v{i}" for i, label in enumerate(labels)}


def _badge(name: str, outcome: str | bool) -> str:
    if isinstance(outcome, bool):  # a pass rate's rule: met or not
        outcome = PASS if outcome else FAIL
    state, word = _STATES[outcome]
    return f'<span class="badge verdict-{state}">{name} {word}</span>'


def _test_rows(
    number: int,
    entry: Mapping[str, Any],
    tokens: dict[str, str],
    load_trace: Callable[[Mapping[str, Any]], Mapping[str, Any] | None],
) -> str:
    """A test's row in the table and its detail row (verdicts, replay, metrics, timeline)."""
    verdicts = _verdicts(entry)
    marks = [tokens[f"{name} {_STATES[outcome][1]}"] for name, outcome, _ in verdicts]
    outcomes = {outcome for _, outcome, _ in verdicts}
    if not verdicts:
        marks.append(tokens["no verdict"])
    if outcomes == {PASS}:
        marks.append(tokens["all verdicts ok"])
    if FAIL in outcomes:
        marks.append(tokens["any verdict FAIL"])
    if NOT_EXERCISED in outcomes:
        marks.append(tokens["any verdict not exercised"])
    outcome, profile = str(entry.get("outcome", "")), _esc(str(entry.get("profile", "")))
    found = entry.get("metrics")
    metrics: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    faults = metrics.get("faults")
    fired = sum(v for v in faults.values() if type(v) is int) if isinstance(faults, Mapping) else 0
    badges = "".join(_badge(_esc(name), o) for name, o, _ in verdicts) or "\u2013"
    outcome_class = "outcome-" + _CLASS.sub("", outcome.lower())
    why = _why(entry, verdicts)
    row = (
        f'<tr class="test" id="test-{number}" data-outcome="{_esc(outcome)}" '
        f'data-profile="{profile}" data-verdicts="{" ".join(marks)}"><td>'
        f'<button type="button" class="expand" aria-expanded="false" aria-controls="detail-'
        f'{number}" title="show the verdicts and the timeline">\u25b8</button></td>'
        f'<td class="node-id">{_esc(str(entry.get("node_id", "")))}</td><td>{profile}</td>'
        f"<td>{_fmt(entry.get('test_seed'))}</td>"
        f'<td><span class="outcome {outcome_class}">{_esc(outcome)}</span></td>'
        f'<td class="why">{_esc(_cut(why, 240))}</td>'
        f"<td>{badges}</td><td>{_fmt(metrics.get('steps'))}</td><td>{fired}</td></tr>"
    )
    items = "".join(
        f'<li class="verdict verdict-{_STATES[o][0]}">{_badge("", o)} <b>{_esc(name)}</b>'
        f'<pre class="explanation">{_esc(explanation)}</pre></li>'
        for name, o, explanation in verdicts
    )
    error = _error(entry)
    ended = (
        f'<section class="ended"><h3>Why it ended</h3><pre class="error">{_esc(error)}</pre>'
        "</section>"
        if error
        else ""
    )
    stops = "".join(
        f"<p>{label}: {_fmt(entry.get(key))}</p>"
        for key, label in (("halted", "halted by"), ("capped", "capped by"))
        if entry.get(key)
    )
    metric_items = "".join(
        f'<span class="metric"><span class="muted">{_esc(k)}</span> {_fmt(v)}</span>'
        for k, v in metrics.items()
    )
    trace_name = entry.get("trace")
    trace_line = f'<p class="muted">trace file: <code>{_esc(trace_name)}</code></p>'
    return (
        f'{row}<tr class="detail" id="detail-{number}" hidden><td colspan="9">{ended}<section>'
        f'<h3>Verdicts</h3><ul class="verdicts">{items or "<li>no verdict</li>"}</ul>{stops}'
        f'</section><section class="replay"><h3>Replay</h3><code id="replay-{number}">'
        f'{_esc(str(entry.get("replay", "")))}</code> <button type="button" class="copy" '
        f'data-target="replay-{number}">copy</button></section><section><h3>Metrics</h3>'
        f'<div class="metrics">{metric_items}</div></section><section><h3>Timeline</h3>'
        f"{trace_line if trace_name else ''}{_trace_block(number, entry, load_trace)}"
        "</section></td></tr>"
    )


def _counts(tests: list[Mapping[str, Any]]) -> str:
    """The header's counts, each a subset of the one before it where it says so: runs, runs
    failed (with a failing verdict, or by an error alone), runs with a verdict not exercised,
    faults fired."""
    failed = [t for t in tests if str(t.get("outcome", "")) in FAILED_OUTCOMES]
    by_verdict = sum(any(o == FAIL for _, o, _ in _verdicts(t)) for t in failed)
    idle = sum(any(o == NOT_EXERCISED for _, o, _ in _verdicts(t)) for t in tests)
    fired = 0
    for t in tests:
        metrics = t.get("metrics")
        faults = metrics.get("faults") if isinstance(metrics, Mapping) else None
        if isinstance(faults, Mapping):
            fired += sum(v for v in faults.values() if type(v) is int and v > 0)
    runs = f"chaos test run{'s' * (len(tests) != 1)}"
    return (
        f"{len(tests)} {runs}: {len(failed)} failed ({by_verdict} with a failing verdict, "
        f"{len(failed) - by_verdict} without one), {idle} with a verdict not exercised; "
        f"faults fired: {fired}"
    )


def _asset(name: str) -> str:
    return (resources.files(__package__) / "assets" / name).read_text(encoding="utf-8")


def render_html(
    index: Mapping[str, Any],
    load_trace: Callable[[Mapping[str, Any]], Mapping[str, Any] | None],
) -> str:
    """The report page for ``index`` (what ``artifacts.index_data`` returns), with the timeline
    of every test whose trace ``load_trace(entry)`` gives (``None``: no trace written; an
    exception: "trace unreadable" for that test alone)."""
    from .html_diffs import diffs_section  # it reads this module's escaping helpers

    raw_tests = index.get("tests")
    tests = [t for t in raw_tests if isinstance(t, Mapping)] if isinstance(raw_tests, list) else []
    tokens = _verdict_tokens(tests)
    option = index.get("profile_option")
    rows = "".join(
        _test_rows(i, entry, tokens, load_trace)
        for i, entry in sorted(enumerate(tests), key=lambda pair: _rank(pair[1]))
    )
    legend = "".join(
        f'<span class="legend-item"><span class="swatch tone-{tone}"></span>{label}</span>'
        for tone, label in (("call", "call"), ("ok", "ok"), ("err", "error / declined / hard halt"),
                            ("fault", "fault injected"), ("warn", "detection / soft halt"),
                            ("info", "intervention / snapshot"), ("rebirth", "rebirth / restore"))
    )  # fmt: skip
    page = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
        f"<title>pytest-agentchaos report (seed {_esc(str(index.get('session_seed', '')))})</title>"
        f"<style>{_asset('timeline.css')}</style></head><body>"
        "<header><h1>pytest-agentchaos report</h1><p>"
        f"session seed <b>{_esc(str(index.get('session_seed', '')))}</b> \u00b7 profile option "
        f"<b>{_esc(option) if option else '(none)'}</b> \u00b7 {_counts(tests)}</p></header>"
        f"<section><h2>Totals per profile</h2>{_totals_table(index.get('profiles'))}</section>"
        f"{_cases_section(index.get('cases'))}"
        f"{diffs_section(tests, load_trace)}"
        f"<section><h2>Tests</h2>{_filters(tests, tokens)}"
        f'<div class="legend">{legend}</div>'
        '<table id="tests"><thead><tr><th></th><th>test</th><th>profile</th><th>seed</th>'
        "<th>outcome</th><th>why</th><th>verdicts</th><th>steps</th><th>faults</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
        f"<script>{_asset('timeline.js')}</script></body></html>\n"
    )
    # a lone surrogate from an agent's output cannot be written as UTF-8
    return page.encode("utf-8", "replace").decode("utf-8")


def write_html(
    path: Path,
    index: Mapping[str, Any],
    load_trace: Callable[[Mapping[str, Any]], Mapping[str, Any] | None],
) -> Path:
    """Write :func:`render_html`'s page to ``path`` atomically (a reader never sees half of
    it, and an earlier report stays whole if this write fails); returns ``path``. Raises
    ``OSError``."""
    return write_atomic(Path(path), render_html(index, load_trace))
