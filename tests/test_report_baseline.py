"""Regression baselines, the report side (issue 16, item 6): case metrics from summary rows, the
versioned baseline file (atomic, merging, refusing to overwrite a corrupt one), one-line errors
that name the file, tolerances from the ini and the comparison with its table."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.report.baseline import (
    DEFAULT_TOLERANCES,
    METRICS,
    BaselineError,
    Comparison,
    Regression,
    Tolerance,
    case_key,
    case_metrics,
    compare,
    load_baseline,
    parse_tolerances,
    regression_lines,
    save_baseline,
    seed_note,
)
from pytest_agentchaos.report.passk import case_rates
from pytest_agentchaos.report.terminal import summary_lines

WHERE = "ini chaos_baseline_tolerances"
USAGE = ("steps", "tool_calls", "model_calls", "seconds", "tokens")


def row(
    case: str = "t.py::test_a",
    profile: str = "default",
    outcome: str = "passed",
    run: int | None = None,
    **metrics: Any,
) -> dict[str, Any]:
    """A summary row as the plugin makes it (``terminal.summary_row`` plus ``case``/``run``)."""
    m = {"steps": 10, "tool_calls": 4, "model_calls": 6, "seconds": 2.5, "tokens": 100,
         "faults": {}, "loops": 0, "escaped": 0, "steps_to_escape": [], "repairs_ok": 0,
         "repairs_declined": 0, "repairs_failed": 0, "halts": {}} | metrics  # fmt: skip
    return {
        "test": case if run is None else f"{case}[seed{run}]",
        "case": case,
        "run": run,
        "profile": profile,
        "seed": 7,
        "outcome": outcome,
        "faults": {},
        **{k: m[k] for k in USAGE[:4]},
        "halted": [],
        "capped": [],
        "verdicts": {},
        "metrics": m,
    }


def entry(**over: Any) -> dict[str, Any]:
    """A case's baseline entry."""
    base = {"runs": 1, "passed": 1, "pass_rate": 100, "steps": 10, "tool_calls": 10,
            "model_calls": 10, "seconds": 10, "tokens": 1000, "steps_to_escape": 5, "loops": 0,
            "escaped": 0, "repairs_ok": 0, "repairs_declined": 0, "repairs_failed": 0}  # fmt: skip
    return base | over


def regressed(was: dict[str, Any], now: dict[str, Any], tolerances: Any = None) -> list[str]:
    found = compare({"c@p": was}, {"c@p": now}, tolerances or DEFAULT_TOLERANCES)
    return [r.metric for r in found.regressions]


# --- case metrics -------------------------------------------------------------------------


def test_a_case_is_its_case_id_under_a_profile_and_groups_its_runs() -> None:
    rows = [row(run=1), row(run=2), row(run=1, profile="flaky"), {"test": "t.py::b", "profile": "",
            "outcome": "failed"}]  # fmt: skip
    assert case_key(rows[0]) == "t.py::test_a@default"
    assert case_key(rows[3]) == "t.py::b@"  # no case: the node id
    cases = case_metrics(rows)
    assert list(cases) == ["t.py::b@", "t.py::test_a@default", "t.py::test_a@flaky"]
    assert [cases[k]["runs"] for k in cases] == [1, 2, 1]


def test_a_run_survives_as_pass_rates_count_it_and_skipped_and_xfail_runs_are_left_out() -> None:
    outcomes = ["passed", "passed", "failed", "xfailed", "xpassed", "error"]
    rows = [row(outcome=o, run=i) for i, o in enumerate(outcomes, 1)]
    case = case_metrics([*rows, row(outcome="skipped", run=9)])["t.py::test_a@default"]
    assert (case["runs"], case["passed"], case["pass_rate"]) == (4, 2, 50)
    assert "survived 2/6" in summary_lines(rows)[-1]  # the terminal counts every run
    [rate] = case_rates(rows)  # the pass^k line counts as the baseline does
    assert (rate.runs, rate.passed) == (4, 2)


def test_medians_over_runs_escapes_over_every_run_and_totals() -> None:
    rows = [
        row(run=1, steps=10, seconds=1.25, steps_to_escape=[1, 9], loops=2, repairs_failed=1),
        row(run=2, steps=20, seconds=2.0, steps_to_escape=[4], loops=1, repairs_ok=3),
        row(run=3, steps=13, seconds=9.0, tokens=0),
    ]
    case = case_metrics(rows)["t.py::test_a@default"]
    assert (case["steps"], case["seconds"], case["tokens"]) == (13, 2, 100)
    assert case["steps_to_escape"] == 4  # the median of 1, 9 and 4
    assert (case["loops"], case["repairs_ok"], case["repairs_failed"]) == (3, 3, 1)
    assert case_metrics([row()])["t.py::test_a@default"]["steps_to_escape"] is None
    # a row from before metrics existed: its top-level usage
    old = {"test": "t.py::old", "profile": "p", "outcome": "passed", "steps": 3}
    assert case_metrics([old])["t.py::old@p"]["steps"] == 3


# --- the file -----------------------------------------------------------------------------


def test_save_then_load_round_trips_and_the_file_is_versioned(tmp_path: Path) -> None:
    rows = [row(run=1), row(run=2, outcome="failed", steps_to_escape=[3])]
    path = save_baseline(tmp_path / "b.json", rows, saved_with={"session_seed": 42})
    assert load_baseline(path) == case_metrics(rows)
    data = json.loads(path.read_text())
    assert (data["format"], data["kind"]) == (1, "pytest-agentchaos baseline")
    assert data["saved_with"] == {"session_seed": 42}
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)
    before = path.read_bytes()
    save_baseline(path, rows, saved_with={"session_seed": 42})
    assert path.read_bytes() == before  # stable for a committed file


def test_saving_merges_keeps_cases_not_run_and_replaces_those_run(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    save_baseline(path, [row("t.py::a"), row("t.py::b", steps=50)])
    save_baseline(path, [row("t.py::b", steps=7), row("t.py::c")])
    cases = load_baseline(path)
    assert list(cases) == ["t.py::a@default", "t.py::b@default", "t.py::c@default"]
    assert cases["t.py::b@default"]["steps"] == 7
    # previous= merges into what the caller already loaded (the file is not read)
    save_baseline(path, [row("t.py::d")], previous={"x@p": entry()})
    assert list(load_baseline(path)) == ["t.py::d@default", "x@p"]


@pytest.mark.parametrize("content", [b"{not json", b'{"format": 1, "tests": []}', b"\xff\xfe"])
def test_a_corrupt_baseline_is_never_overwritten(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "b.json"
    path.write_bytes(content)
    with pytest.raises(BaselineError, match=f"^baseline {path}: ") as info:
        save_baseline(path, [row()])
    assert "\n" not in str(info.value)
    assert path.read_bytes() == content
    assert os.listdir(tmp_path) == ["b.json"]  # no temp file left


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = save_baseline(tmp_path / "b.json", [row("t.py::a")])
    before = path.read_bytes()

    def full(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(BaselineError, match=r"cannot write it: No space left on device$"):
        save_baseline(path, [row("t.py::b")])
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["b.json"]
    monkeypatch.undo()
    (tmp_path / "afile").write_text("not a folder")
    under_a_file = tmp_path / "afile" / "b.json"
    with pytest.raises(BaselineError, match=f"^baseline {under_a_file}: cannot write it: "):
        save_baseline(under_a_file, [row()])
    made = save_baseline(tmp_path / "new" / "b.json", [row()])  # a missing folder is made
    assert list(load_baseline(made)) == ["t.py::test_a@default"]


def test_a_symlinked_baseline_stays_a_symlink(tmp_path: Path) -> None:
    real = save_baseline(tmp_path / "real.json", [row("t.py::a")])
    link = tmp_path / "link.json"
    link.symlink_to(real)
    save_baseline(link, [row("t.py::b")])
    assert link.is_symlink() and list(load_baseline(real)) == ["t.py::a@default", "t.py::b@default"]


GOOD = {"format": 1, "kind": "pytest-agentchaos baseline", "cases": {}}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file (--chaos-baseline-save writes it)"),
        (b"", "not JSON: Expecting value (the file is empty)"),
        (b'{"format": 1,\n "kind": }', "not JSON: Expecting value (line 2 column 10)"),
        (b"\xff\xfe{}", "not JSON text (UnicodeDecodeError)"),
        (b"[" * 100_000, "not JSON text (RecursionError)"),
        (b"[1, 2]", "expected a JSON object, found list"),
        (
            b'{"format": 1, "tests": [], "profiles": {}}',
            "not a pytest-agentchaos baseline (no kind)",
        ),
        (GOOD | {"kind": "junit"}, "not a pytest-agentchaos baseline (its kind is 'junit')"),
        (GOOD | {"format": 2}, "format 2 is not supported (this pytest-agentchaos reads format 1)"),
        (GOOD | {"format": "1"}, "format '1' is not supported"),
        (GOOD | {"format": True}, "format True is not supported"),
        ({k: v for k, v in GOOD.items() if k != "cases"}, "'cases' is None, expected an object"),
        (GOOD | {"cases": {"a@p": [1]}}, "case 'a@p': expected an object with runs and pass_rate"),
        (GOOD | {"cases": {"a@p": {"runs": 1}}}, "case 'a@p': expected an object with runs and"),
        (
            GOOD | {"cases": {"a@p": entry(runs=0)}},
            "case 'a@p': 'runs' is 0, expected a whole number from 1 to 10000",
        ),
        # every number range-checked: a 400-digit integer was an OverflowError (INTERNALERROR)
        (
            b'{"format": 1, "kind": "pytest-agentchaos baseline", "cases": {"a@p": {"runs": 1, '
            b'"pass_rate": 100, "steps": ' + b"9" * 400 + b"}}}",
            "case 'a@p': 'steps' is 9999999999",
        ),
        (
            b'{"format": 1, "kind": "pytest-agentchaos baseline", "cases": {"a@p": {"runs": '
            + b"1" * 400
            + b', "pass_rate": 100}}}',
            "expected a whole number from 1 to 10000",
        ),
        (GOOD | {"cases": {"a@p": entry(runs=100_000_000)}}, "'runs' is 100000000, expected"),
        (GOOD | {"cases": {"a@p": entry(runs=2.5)}}, "'runs' is 2.5, expected a whole number"),
        (
            GOOD | {"cases": {"a@p": entry(runs=2, passed=3)}},
            "'passed' is 3, expected a whole number from 0 to its runs (2)",
        ),
        (GOOD | {"cases": {"a@p": entry(tokens=1e300)}}, "'tokens' is 1e+300, expected a number"),
        (GOOD | {"cases": {"a@p": entry(seconds=-(10**400))}}, "'seconds' is -1000000000"),
        (
            b'{"format": 1, "kind": "pytest-agentchaos baseline", "cases": {"a@p": {"runs": 1, '
            b'"pass_rate": 1e999}}}',
            "'pass_rate' is inf, expected a number from 0 to 100",
        ),
        (GOOD | {"saved_with": [7]}, "'saved_with' is [7], expected an object"),
        (
            GOOD | {"saved_with": {"session_seed": "abc"}},
            "saved_with.session_seed is 'abc', expected a whole number from 0 to 2**64",
        ),
        (
            b'{"format": 1, "kind": "pytest-agentchaos baseline", "cases": {}, "saved_with": '
            b'{"session_seed": ' + b"7" * 400 + b"}}",
            "saved_with.session_seed is 7777777",
        ),
        (
            GOOD | {"cases": {"a@p": entry(pass_rate=101)}},
            "'pass_rate' is 101, expected a number from 0 to 100",
        ),
        (GOOD | {"cases": {"a@p": entry(steps="12")}}, "'steps' is '12', expected a number >= 0"),
        (GOOD | {"cases": {"a@p": entry(steps=None)}}, "'steps' is None, expected a number >= 0"),
        (GOOD | {"cases": {"a@p": entry(loops=-1)}}, "'loops' is -1, expected a number >= 0"),
        (
            b'{"format": 1, "kind": "pytest-agentchaos baseline", "cases": {"a@p": {"runs": 1, '
            b'"pass_rate": 100, "tokens": NaN}}}',
            "'tokens' is nan, expected a number >= 0",
        ),
    ],
)
def test_a_bad_baseline_is_one_line_naming_the_file_and_what_is_wrong(
    tmp_path: Path, content: Any, message: str
) -> None:
    path = tmp_path / "b.json"
    if content is not None:
        data = content if isinstance(content, bytes) else json.dumps(content).encode()
        path.write_bytes(data)
    with pytest.raises(BaselineError) as info:
        load_baseline(path)
    text = str(info.value)
    assert text.startswith(f"baseline {path}: ") and message in text, text
    assert "\n" not in text and isinstance(info.value, ChaosConfigError)


def test_an_unreadable_baseline_names_the_reason(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match=f"^baseline {tmp_path}: cannot read it: Is a dir"):
        load_baseline(tmp_path)


def test_null_steps_to_escape_and_keys_of_a_later_version_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    cases = {"a@p": entry(steps_to_escape=None, p95_steps=3.5)}
    path.write_text(json.dumps(GOOD | {"cases": cases, "saved_with": {"seed": 1}}))
    assert load_baseline(path) == cases


# --- tolerances ---------------------------------------------------------------------------


def test_default_tolerances() -> None:
    expected = {
        "pass_rate": Tolerance(5),
        **{m: Tolerance(20, relative=True) for m in (*USAGE, "steps_to_escape")},
        "repairs_failed": Tolerance(0),
        "loops": Tolerance(None),
        "repairs_declined": Tolerance(None),
    }
    assert expected == DEFAULT_TOLERANCES
    assert set(DEFAULT_TOLERANCES) == set(METRICS)
    assert parse_tolerances([], WHERE) == DEFAULT_TOLERANCES


def test_ini_lines_override_the_defaults() -> None:
    lines = ["steps_to_escape = +30%", "pass-rate: -2.5pt", "", "# a comment", "seconds = OFF",
             "tokens +25 %", "loops = +1", "repairs_failed=+0"]  # fmt: skip
    got = parse_tolerances(lines, WHERE)
    assert got["steps_to_escape"] == Tolerance(30, relative=True)
    assert got["pass_rate"] == Tolerance(2.5)
    assert got["seconds"] == Tolerance(None)
    assert got["tokens"] == Tolerance(25, relative=True)
    assert got["loops"] == Tolerance(1) and got["repairs_failed"] == Tolerance(0)
    assert got["steps"] == DEFAULT_TOLERANCES["steps"]


KNOWN = "expected 'metric = value' for a metric of " + ", ".join(METRICS)
HUNDRED = "a pass rate can fall 100 points at most: expected -0pt to -100pt, or off"


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        (["steps = twenty"], "'steps = twenty': expected +N%, +N or off"),
        (["steps = -5pt"], "'steps = -5pt': expected +N%, +N or off"),
        (["steps = +5pt"], "'steps = +5pt': expected +N%, +N or off"),
        (["steps = 20%"], "'steps = 20%': expected +N%, +N or off"),
        (["pass_rate = +5%"], "'pass_rate = +5%': expected -Npt or off"),
        (["pass_rate = -5"], "'pass_rate = -5': expected -Npt or off"),
        (["stepz = +1%"], f"'stepz = +1%': {KNOWN}"),
        (["steps"], f"'steps': {KNOWN}"),
        (["steps = +1%", "steps = +2%"], "'steps = +2%': steps is set twice"),
        (["steps = +" + "9" * 400], f"'steps = +{'9' * 48}...': the amount is more than 10**15"),
        (["pass_rate = -1e400pt"], "'pass_rate = -1e400pt': expected -Npt or off"),
        (["pass_rate = -150pt"], "'pass_rate = -150pt': " + HUNDRED),
        (["pass_rate = -100.5pt"], "'pass_rate = -100.5pt': " + HUNDRED),
    ],
)
def test_a_bad_tolerance_line_names_where_and_the_line(lines: list[str], problem: str) -> None:
    with pytest.raises(ChaosConfigError) as info:
        parse_tolerances(lines, WHERE)
    assert str(info.value) == f"{WHERE}: {problem}"


# --- comparing ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metric", "was", "at_limit", "beyond"),
    [
        ("steps", 10, 12, 12.5),
        ("tool_calls", 10, 12, 13),
        ("model_calls", 10, 12, 13),
        ("tokens", 1000, 1200, 1201),
        ("seconds", 10, 12, 12.01),
        ("steps_to_escape", 5, 6, 6.5),
        ("steps", 3, 4, 5),  # 20% of 3 is less than the slack of one step
        ("repairs_failed", 0, 0, 1),
    ],
)
def test_each_default_tolerance_passes_at_its_limit_and_fails_beyond(
    metric: str, was: float, at_limit: float, beyond: float
) -> None:
    assert regressed(entry(**{metric: was}), entry(**{metric: at_limit})) == []
    assert regressed(entry(**{metric: was}), entry(**{metric: beyond})) == [metric]


@pytest.mark.parametrize(("was", "at_limit", "beyond"), [(1000, 950, 949), (600, 550, 549)])
def test_a_pass_rate_passes_at_its_tolerance_and_regresses_beyond_it_when_significant(
    was: int, at_limit: int, beyond: int
) -> None:
    def rate(passed: int) -> dict[str, Any]:
        return entry(runs=1000, passed=passed, pass_rate=passed / 10)

    assert regressed(rate(was), rate(at_limit)) == []
    assert regressed(rate(was), rate(beyond)) == ["pass_rate"]


def test_a_pass_rate_fall_chance_could_explain_is_inconclusive_and_never_fails() -> None:
    found = compare(
        {"c@p": entry(runs=20, passed=20, pass_rate=100)},
        {"c@p": entry(runs=20, passed=18, pass_rate=90)},
    )
    assert (found.regressions, found.inconclusive) == ([], ["c@p"])
    assert found.gates["c@p"].decision == "INCONCLUSIVE"
    assert regression_lines(found, "b.json") == [
        "agentchaos: no regressions against baseline b.json (1 case compared)",
        "pass rate INCONCLUSIVE: c@p: 18/20 (90%) vs baseline 20/20 (100%): -10pt, Fisher exact "
        "p=0.244; about 45 runs of each would decide at these rates",
    ]
    # a baseline without 'passed' (older, or written by hand) counts its rate of its runs
    was = {"runs": 20, "pass_rate": 100}
    assert compare({"c@p": was}, {"c@p": entry(runs=20, passed=10)}).gates["c@p"].decision == (
        "REGRESSED"
    )
    off = parse_tolerances(["pass_rate = off"], WHERE)
    assert compare({"c@p": was}, {"c@p": entry(runs=20, passed=0)}, off).gates == {}


@pytest.mark.parametrize(
    ("metric", "at_limit", "beyond"),
    [("steps", 1, 2), ("tool_calls", 1, 2), ("tokens", 10, 11), ("seconds", 1, 1.5),
     ("steps_to_escape", 1, 2), ("pass_rate", 0, None)],
)  # fmt: skip
def test_zero_baselines_allow_the_slack(metric: str, at_limit: float, beyond: Any) -> None:
    assert regressed(entry(**{metric: 0}), entry(**{metric: at_limit})) == []
    if beyond is not None:
        assert regressed(entry(**{metric: 0}), entry(**{metric: beyond})) == [metric]


def test_totals_are_compared_per_run_so_baselines_of_other_run_counts_compare() -> None:
    was = entry(runs=2, repairs_failed=2)  # one per run
    assert regressed(was, entry(runs=4, repairs_failed=4)) == []
    assert regressed(was, entry(runs=4, repairs_failed=5)) == ["repairs_failed"]


def test_missing_steps_to_escape_or_metrics_are_not_compared() -> None:
    assert regressed(entry(steps_to_escape=None), entry(steps_to_escape=50)) == []
    assert regressed(entry(steps_to_escape=3), entry(steps_to_escape=None)) == []
    assert regressed({"runs": 1, "pass_rate": 100}, entry(steps=10**6)) == []


def test_improvements_and_turned_off_metrics_never_regress() -> None:
    better = entry(pass_rate=100, steps=1, tool_calls=0, tokens=5, seconds=0.1, steps_to_escape=1)
    assert regressed(entry(pass_rate=50), better) == []
    off = parse_tolerances(["steps = off", "tokens = +1000"], WHERE)
    assert regressed(entry(), entry(steps=999, tokens=1999), off) == []
    assert regressed(entry(), entry(steps=999, tokens=2001), off) == ["tokens"]


def test_cases_not_run_and_new_cases_are_listed_never_failed() -> None:
    found = compare({"a@p": entry(), "gone@p": entry()}, {"a@p": entry(), "new@p": entry(steps=99)})
    assert found == Comparison([], ["a@p"], ["gone@p"], ["new@p"])


def test_the_regression_table_is_fixed_width_with_a_header_naming_the_file() -> None:
    was = {"t.py::test_book@flaky": entry(runs=30, passed=30, pass_rate=100, repairs_failed=0),
           "t.py::x@default": entry()}  # fmt: skip
    now = {"t.py::test_book@flaky": entry(runs=30, passed=20, pass_rate=66.667,
                                          steps_to_escape=9, repairs_failed=10, seconds=13.5),
           "t.py::x@default": entry()}  # fmt: skip
    lines = regression_lines(compare(was, now), "chaos-baseline.json")
    assert lines == [
        "agentchaos: 4 regressions against baseline chaos-baseline.json (2 cases compared)",
        "case                   metric              baseline  now      limit  change",
        "t.py::test_book@flaky  pass_rate           100%      66.667%  95%    -33.333pt",
        "t.py::test_book@flaky  seconds             10s       13.5s    12s    +3.5 (+35%)",
        "t.py::test_book@flaky  steps_to_escape     5         9        6      +4 (+80%)",
        "t.py::test_book@flaky  repairs_failed/run  0         0.333    0      +0.333",
        "pass rate REGRESSED: t.py::test_book@flaky: 20/30 (67%) vs baseline 30/30 (100%): "
        "-33.3pt, Fisher exact p=0.000399",
    ]


def test_the_header_without_regressions_and_the_cases_not_compared() -> None:
    missing = [f"t.py::m{i}@p" for i in range(7)]
    found = Comparison([], ["a@p"], missing, ["n@p"])
    lines = regression_lines(found, Path("b.json"))
    assert lines == [
        "agentchaos: no regressions against baseline b.json (1 case compared)",
        "not run, not compared (7): " + ", ".join(missing[:5]) + ", and 2 more (-v lists them)",
        "new, not compared (1): n@p",
    ]
    assert regression_lines(found, "b.json", verbose=1)[1].endswith("t.py::m6@p")
    one = Comparison([Regression("a@p", "steps", 0, 3, 1)], ["a@p"])
    assert regression_lines(one, "b.json")[0].startswith("agentchaos: 1 regression against")
    assert regression_lines(one, "b.json")[2].endswith("  +3")  # no percentage of zero


# --- properties ---------------------------------------------------------------------------

counts = st.integers(0, 400)
run_metrics = st.fixed_dictionaries({
    "steps": counts, "tool_calls": counts, "tokens": st.integers(0, 10**6),
    "seconds": st.floats(0, 1e5).map(lambda s: round(s, 3)), "loops": st.integers(0, 4),
    "steps_to_escape": st.lists(st.integers(0, 60), max_size=3),
    "repairs_failed": st.integers(0, 3),
})  # fmt: skip
rows_st = st.lists(
    st.builds(
        lambda case, profile, outcome, metrics: row(case, profile, outcome, **metrics),
        st.sampled_from(["t.py::a", "t.py::b[x@y]"]) | st.text(min_size=1, max_size=12),
        st.sampled_from(["default", "flaky"]),
        st.sampled_from(["passed", "failed", "xfailed", "xpassed", "error", "skipped"]),
        run_metrics,
    ),
    max_size=6,
)


@settings(max_examples=30, deadline=None)
@given(rows_st)
def test_any_cases_compared_with_themselves_have_no_regressions(rows: list[dict[str, Any]]) -> None:
    cases = case_metrics(rows)
    found = compare(cases, cases)
    assert found == Comparison([], sorted(cases), [], [])


@settings(max_examples=30, deadline=None)
@given(rows_st, st.floats(1.2001, 10), st.floats(0.01, 50))
def test_worse_beyond_every_tolerance_always_regresses(
    rows: list[dict[str, Any]], factor: float, drop: float
) -> None:
    slack = {m: 1.0 for m in METRICS} | {"tokens": 10.0}
    for key, was in case_metrics(rows).items():
        now = dict(was, pass_rate=max(0.0, was["pass_rate"] - 5 - drop))
        now["repairs_failed"] = was["repairs_failed"] + 1
        for m in (*USAGE, "steps_to_escape"):
            if was[m] is not None:
                now[m] = was[m] * factor + slack[m] + 0.01
        # the pass rate is judged by its counts (test_report_gate.py), not by its percentage
        expected = [m for m in METRICS if DEFAULT_TOLERANCES[m].amount is not None]
        expected.remove("pass_rate")
        if was["steps_to_escape"] is None:
            expected.remove("steps_to_escape")
        found = compare({key: was}, {key: now}).regressions
        assert sorted(r.metric for r in found) == sorted(expected)


@settings(max_examples=30, deadline=None)
@given(rows_st, st.floats(0, 1))
def test_improvements_never_regress(rows: list[dict[str, Any]], factor: float) -> None:
    for key, was in case_metrics(rows).items():
        now = {m: v * factor if m in METRICS[1:] and v is not None else v for m, v in was.items()}
        now["pass_rate"] = 100
        assert compare({key: was}, {key: now}).regressions == []


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(METRICS),
    st.floats(0, 1e6),
    st.floats(0, 500).map(lambda a: round(a, 2)),
    st.booleans(),
)
def test_exactly_at_a_parsed_limit_never_regresses(
    metric: str, was: float, amount: float, relative: bool
) -> None:
    if metric == "pass_rate":
        amount = min(amount, 100.0)  # a pass rate falls 100 points at most
    text = f"-{amount}pt" if metric == "pass_rate" else f"+{amount}{'%' * relative}"
    tolerance = parse_tolerances([f"{metric} = {text}"], WHERE)[metric]
    assert tolerance == Tolerance(amount, relative and metric != "pass_rate")
    limit = tolerance.limit(metric, was)
    assert limit is not None
    was_entry, now_entry = {"runs": 1, metric: was}, {"runs": 1, metric: limit}
    assert regressed(was_entry, now_entry, {metric: tolerance}) == []


@settings(max_examples=15, deadline=None)
@given(rows_st, rows_st)
def test_save_load_round_trips_and_merges(
    first: list[dict[str, Any]], second: list[dict[str, Any]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "baseline.json"
        save_baseline(path, first)
        assert load_baseline(path) == case_metrics(first)
        save_baseline(path, second)
        assert load_baseline(path) == case_metrics(first) | case_metrics(second)


def test_the_seed_note_names_the_saved_seed_and_never_raises(tmp_path: Path) -> None:
    path = save_baseline(tmp_path / "b.json", [row()], saved_with={"session_seed": 7})
    assert seed_note(path, 7) is None
    assert "saved under session seed 7, this session's is 8" in (seed_note(path, 8) or "")
    assert seed_note(save_baseline(tmp_path / "c.json", [row()]), 8) is None  # not said
    for junk in ("", "[]", '{"saved_with": 3}', '{"saved_with": {"session_seed": true}}'):
        (tmp_path / "d.json").write_text(junk)
        assert seed_note(tmp_path / "d.json", 8) is None
    assert seed_note(tmp_path / "missing.json", 8) is None


def test_a_pass_rate_may_fall_at_most_all_of_its_100_points() -> None:
    assert parse_tolerances(["pass_rate = -100pt"], WHERE)["pass_rate"].amount == 100
    assert parse_tolerances(["pass_rate = -0pt"], WHERE)["pass_rate"].amount == 0
