"""Why, everywhere (issue 26): the exception that ended a run and each verdict's outcome (pass,
fail, not exercised) in the terminal rows and totals, JUnit, ``index.json`` and the HTML report;
HTML lists failures first with header counts that agree, totals with failed / not exercised /
faults fired, loop episodes and halts as labelled spans and a time axis that says when virtual
time stood still."""

from __future__ import annotations

import html
import json
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_agentchaos.report.artifacts import index_data, schema_path
from pytest_agentchaos.report.html import render_html, write_html
from pytest_agentchaos.report.junit import junit_properties
from pytest_agentchaos.report.passk import case_rates
from pytest_agentchaos.report.terminal import format_row, summary_lines, summary_row
from pytest_agentchaos.trace import Trace
from pytest_agentchaos.trace.events import (
    BudgetExhaustedEvent,
    Detection,
    FaultInjected,
    Halt,
    RunEnded,
    RunStarted,
    ToolCall,
    ToolResult,
)
from pytest_agentchaos.verdicts import must_escape, must_halt, must_repair

ASSERT = {
    "type": "AssertionError",
    "message": "assert 'Lyon' == 'Paris'",
    "where": "test_trip.py:9 in test_trip",
}


def run_trace(
    test: str = "t.py::test_trip",
    *,
    steps: int = 2,
    t: float = 0.0,
    status: str = "completed",
    error: Any = None,
    extra: tuple[Any, ...] = (),
) -> Trace:
    trace = Trace(meta={"test": test, "profile": "flaky", "seed": 3})
    trace.append(RunStarted(step=0, t=0.0, test=test))
    for i in range(1, steps + 1):
        trace.append(ToolCall(step=i, t=t * i, tool="search", index=i, args={"q": i}))
        trace.append(ToolResult(step=i, t=t * i, tool="search", index=i, ok=True, output="r"))
    for event in extra:
        trace.append(event)
    detail = {} if error is None else {"error": error}
    trace.append(RunEnded(step=steps, t=t * steps, status=status, detail=detail))
    return trace


def row_of(trace: Trace, outcome: str, *verdicts: Any, **more: Any) -> dict[str, Any]:
    row = summary_row(trace, verdicts, outcome)
    row.update(replay=f"pytest {row['test']}", trace_file=None,
               explanations={v.name: v.explanation for v in verdicts}, **more)  # fmt: skip
    return row


def errored() -> tuple[Trace, dict[str, Any]]:
    """A run that the test's own assert ended, no verdict failing: why it failed is the error."""
    trace = run_trace(status="error", error=ASSERT)
    return trace, row_of(trace, "failed", must_halt(trace, max_steps=10))


# -- the terminal ------------------------------------------------------------------------------


def test_the_row_of_a_run_no_verdict_failed_says_why_it_failed() -> None:
    _, row = errored()
    assert row["error"] == ASSERT
    assert row["verdicts"] == {"must_halt": "not_exercised"}
    line = format_row(row)
    assert line.endswith(
        "verdict=must_halt=not_exercised error=AssertionError: assert 'Lyon' == 'Paris' "
        "(at test_trip.py:9 in test_trip)"
    )


def test_a_long_or_hostile_error_is_one_short_line_in_the_row() -> None:
    trace = run_trace(status="error", error={"type": "ValueError", "message": "a\nb" * 5000,
                                             "where": "t.py:1 in f"})  # fmt: skip
    line = format_row(row_of(trace, "failed"))
    assert "\n" not in line and len(line) < 400 and "error=ValueError: a b" in line
    for junk in ("boom", {"type": 5}, {"message": "m"}, None):
        assert "error=" not in format_row({**row_of(trace, "failed"), "error": junk})


def test_totals_count_runs_with_a_verdict_not_exercised_and_a_note_names_the_idle_test() -> None:
    quiet = run_trace("t.py::test_quiet")
    failed_trace, failed = errored()
    rows = [row_of(quiet, "passed", must_repair(quiet)), failed]
    lines = summary_lines(rows)
    assert lines[0].startswith("FAILED  t.py::test_trip ")
    assert lines[1] == (
        "profile=flaky: 2 chaos tests (1 failed, 1 passed); survived 1/2; faults fired: none; "
        "halted by the harness: 0; verdicts not exercised: must_halt:1,must_repair:1"
    )
    # a passed run whose verdict had nothing to judge is named; a failed one says so itself
    assert lines[2:] == [
        "note: t.py::test_quiet: must_repair not exercised in this run: no call had malformed "
        "parameters"
    ]


def cases(verdict_runs: list[str], outcome: str = "passed") -> list[dict[str, Any]]:
    """The runs of one case, each with must_repair's outcome as given."""
    return [
        {**row_of(run_trace(f"t.py::test_k[seed{n}]"), outcome), "case": "t.py::test_k",
         "run": n, "verdicts": {"must_repair": v}, "explanations": {"must_repair": (
             "must_repair not exercised: no call had malformed parameters (0 faults fired)")}}
        for n, v in enumerate(verdict_runs, 1)
    ]  # fmt: skip


def test_runs_of_a_case_count_their_verdicts_not_exercised() -> None:
    some = cases(["pass", "not_exercised", "not_exercised"])
    (rate,) = case_rates(some)
    assert rate.ok and rate.not_exercised == {"must_repair": 2}
    assert rate.line().endswith("pass^3 ok; must_repair not exercised in 2 of 3 runs")
    assert not any(line.startswith("note:") for line in summary_lines(some))
    never = cases(["not_exercised"] * 3)
    notes = [line for line in summary_lines(never) if line.startswith("note:")]
    assert notes == [
        "note: t.py::test_k@flaky: must_repair not exercised in any of its 3 runs: no call had "
        "malformed parameters"
    ]


def test_without_verbosity_the_notes_are_capped() -> None:
    rows = [row_of(run_trace(f"t.py::test_{i:02}"), "passed", must_repair(run_trace()))
            for i in range(14)]  # fmt: skip
    notes = [line for line in summary_lines(rows) if line.startswith("note:")]
    assert len(notes) == 11 and notes[-1] == (
        "note: ... and 4 more verdicts not exercised (-v lists them)"
    )
    assert len([n for n in summary_lines(rows, verbose=1) if n.startswith("note:")]) == 14


# -- JUnit ----------------------------------------------------------------------------------------


def test_junit_carries_the_error_and_each_verdicts_outcome() -> None:
    trace, row = errored()
    verdicts = [must_halt(trace, max_steps=10), must_escape(trace), must_repair(trace,
                require_problem=True)]  # fmt: skip
    props = dict(junit_properties(row, verdicts, "pytest t.py::test_trip"))
    assert props["agentchaos.error"] == (
        "AssertionError: assert 'Lyon' == 'Paris' (at test_trip.py:9 in test_trip)"
    )
    assert props["agentchaos.verdict.must_halt"].startswith(
        "not exercised: the run ended at step 2 with AssertionError"
    )
    assert props["agentchaos.verdict.must_repair"].startswith("FAIL: the run ended at step 2")
    assert props["agentchaos.verdicts"] == "fail:1,not_exercised:2"
    quiet = run_trace()
    passed = dict(junit_properties(row_of(quiet, "passed"), [must_halt(quiet)], ""))
    assert "agentchaos.error" not in passed and passed["agentchaos.verdict.must_halt"] == "ok"


# -- index.json -------------------------------------------------------------------------------


def validate(index: Mapping[str, Any]) -> None:
    schema = json.loads(schema_path("index").read_text(encoding="utf-8"))
    jsonschema.validate(index, schema)


def test_the_index_says_why_each_run_ended_and_each_verdicts_outcome() -> None:
    trace, failed = errored()
    quiet = run_trace("t.py::test_quiet")
    ctrl_c = run_trace("t.py::test_cut", status="interrupted",
                       error={"type": "KeyboardInterrupt", "message": "", "where": ""})  # fmt: skip
    rows = [failed, row_of(quiet, "passed", must_repair(quiet)),
            row_of(ctrl_c, "interrupted", must_halt(ctrl_c))]  # fmt: skip
    index = index_data(rows, session_seed=1, profile_option=None)
    validate(index)
    by_id = {t["node_id"]: t for t in index["tests"]}
    assert by_id["t.py::test_trip"]["error"] == ASSERT
    assert by_id["t.py::test_quiet"]["error"] is None
    assert by_id["t.py::test_cut"]["outcome"] == "interrupted"
    assert by_id["t.py::test_cut"]["error"]["type"] == "KeyboardInterrupt"
    (verdict,) = by_id["t.py::test_quiet"]["verdicts"]
    assert (verdict["outcome"], verdict["ok"]) == ("not_exercised", True)
    totals = index["profiles"]["flaky"]
    assert (totals["tests"], totals["passed"], totals["failed"], totals["failing_verdict"]) == (
        3, 1, 2, 0,
    )  # fmt: skip
    assert totals["not_exercised"] == 3 and totals["faults_fired"] == 0
    assert totals["not_exercised_by_verdict"] == {"must_halt": 2, "must_repair": 1}


def test_the_index_of_a_case_counts_its_runs_not_exercised() -> None:
    index = index_data(cases(["pass", "not_exercised"]), session_seed=1, profile_option=None)
    validate(index)
    assert index["cases"][0]["not_exercised"] == {"must_repair": 1}


@pytest.mark.parametrize(
    "error", ["boom", {"type": 3}, {"type": "E", "message": 5, "where": None}, [1]]
)
def test_an_error_the_row_holds_in_another_shape_is_null_or_strings(error: Any) -> None:
    _, row = errored()
    index = index_data([{**row, "error": error}], session_seed=1, profile_option=None)
    validate(index)
    found = index["tests"][0]["error"]
    assert found is None or all(isinstance(v, str) for v in found.values())


# -- HTML -------------------------------------------------------------------------------------


FAULT = FaultInjected(step=1, t=0.0, kind="timeout", target="search", index=1,
                      detail={"seconds": 30})  # fmt: skip
LOOP = Detection(step=3, t=0.0, detector="loop_observer", kind="loop",
                 detail={"episode": 1, "began_step": 2, "detected_step": 3,
                         "loop_kind": "repeat"})  # fmt: skip
BROKEN = Detection(step=5, t=0.0, detector="loop_observer", kind="loop_broken",
                   detail={"episode": 1, "broken_step": 5, "detected_step": 3})  # fmt: skip
STRIKE = Detection(step=6, t=0.0, detector="halt", kind="repetition",
                   detail={"strikes": 1, "score": 0.5, "reason": "same answer"})  # fmt: skip
HALT = Halt(step=7, t=0.0, reason="repetition",
            detail={"by": "halt_monitor", "fired": ["repetition"]})  # fmt: skip


def sample() -> tuple[dict[str, Any], dict[str, Trace]]:
    """Four runs: one that passed, one an assert ended (no verdict failed), one a verdict
    failed, one whose verdict was not exercised; the loop and halt in the assert's run."""
    ok = run_trace("t.py::test_a_ok")
    asserted = run_trace("t.py::test_b_asserted", steps=8, status="error", error=ASSERT,
                         extra=(FAULT, LOOP, BROKEN, STRIKE, HALT))  # fmt: skip
    budget = run_trace("t.py::test_c_budget", steps=3, t=1.5, status="halted", extra=(
        BudgetExhaustedEvent(step=3, t=4.5, budget="max_steps", limit=3, count=4),))  # fmt: skip
    idle = run_trace("t.py::test_d_idle")
    rows = [
        row_of(ok, "passed", must_halt(ok, max_steps=5)),
        row_of(asserted, "failed", must_halt(asserted, max_steps=10), must_escape(asserted)),
        row_of(budget, "failed", must_halt(budget, max_steps=3)),
        row_of(idle, "passed", must_repair(idle)),
    ]
    traces = {t.meta["test"]: t for t in (ok, asserted, budget, idle)}
    return index_data(rows, session_seed=7, profile_option="flaky"), traces


def page_of(index: Mapping[str, Any], traces: Mapping[str, Trace]) -> str:
    return render_html(index, lambda e: traces[e["node_id"]].to_dict())


def text_of(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_the_header_counts_agree_and_the_totals_have_failed_not_exercised_and_faults() -> None:
    index, traces = sample()
    page = page_of(index, traces)
    assert (
        "4 chaos test runs: 2 failed (1 with a failing verdict, 1 without one), 1 with a "
        "verdict not exercised; faults fired: 1"
    ) in text_of(page)
    totals = page[page.index('id="profile-totals"') :].split("</table>")[0]
    heads = re.findall(r"<th>([^<]*)</th>", totals)
    assert heads[:7] == ["profile", "runs", "passed", "failed", "with a failing verdict",
                         "not exercised", "faults fired"]  # fmt: skip
    assert "<td>flaky</td><td>4</td><td>2</td><td>2</td><td>1</td><td>1</td><td>1</td>" in totals


def test_failures_come_first_each_saying_why() -> None:
    index, traces = sample()
    page = page_of(index, traces)
    order = re.findall(r'<td class="node-id">([^<]*)</td>', page)
    assert order == ["t.py::test_b_asserted", "t.py::test_c_budget", "t.py::test_d_idle",
                     "t.py::test_a_ok"]  # fmt: skip
    why = [text_of(w) for w in re.findall(r'<td class="why">(.*?)</td>', page)]
    assert why == [
        "AssertionError: assert 'Lyon' == 'Paris' (at test_trip.py:9 in test_trip)",
        "must_halt failed; halted by max_steps",
        "",
        "",
    ]
    assert "Why it ended" in page and page.count('<section class="ended">') == 1
    assert '<span class="badge verdict-idle">must_repair not exercised</span>' in page
    # the monitor halted the agent before the assert: must_halt judged it, and passed
    assert '<span class="badge verdict-ok">must_halt ok</span>' in page


def test_hostile_error_text_stays_text() -> None:
    index, traces = sample()
    index["tests"][0]["error"] = {
        "type": "<img src=x onerror=alert(1)>",
        "message": "</td></tr><script>alert(1)</script>",
        "where": "&",
    }
    index["tests"][1]["error"] = "<b>not an object</b>"
    page = page_of(index, traces)
    assert "<img" not in page and "<script>alert" not in page and "<b>not" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page


def test_an_index_without_outcomes_reads_its_ok_flags() -> None:
    index, traces = sample()
    for test in index["tests"]:
        for verdict in test["verdicts"]:
            del verdict["outcome"]
    page = page_of(index, traces)
    assert "verdict-idle" not in page.split("<tbody>")[-1].split("<script")[0]


# -- in a browser ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("browser tests need Playwright")
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip("browser tests need a chromium executable on PATH")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


def opened(browser: Any, tmp_path: Path, index: Mapping[str, Any], traces: Any) -> Any:
    path = write_html(tmp_path / "report.html", index, lambda e: traces[e["node_id"]].to_dict())
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.errors = errors
    return page


def expand(page: Any, node_id: str) -> Any:
    row = page.locator("#tests tr.test", has=page.locator(f"td.node-id:text-is('{node_id}')"))
    row.locator("button.expand").click()
    return page.locator("#" + str(row.get_attribute("id")).replace("test-", "detail-"))


def test_loop_episodes_and_halts_are_labelled_spans_and_still_time_is_said_once(
    browser: Any, tmp_path: Path
) -> None:
    index, traces = sample()
    page = opened(browser, tmp_path, index, traces)
    detail = expand(page, "t.py::test_b_asserted")
    spans = detail.locator("svg text.span-label").all_text_contents()
    assert spans == ["loop #1 (repeat)", "halt: repetition"]
    titles = detail.locator("svg rect.span title").all_text_contents()
    assert titles[0] == ("loop #1 (repeat): detected at step 3, broken at step 5 (steps 2\u20135)")
    assert titles[1].startswith("halt: repetition: the halt monitor stopped the agent at step 7 "
                                "(first strike at step 6)")  # fmt: skip
    axis = detail.locator("svg text.axis-title").all_text_contents()
    assert axis[0] == "virtual time stood still: 0s"
    assert detail.locator("svg text.time-label").count() == 0  # no "0s 0s 0s"
    labels = detail.locator("svg text.mark-label").all_text_contents()
    assert labels == ["timeout", "loop", "repetition", "error"]  # where each has room
    assert page.errors == []


def test_a_moving_clock_is_labelled_where_it_moved(browser: Any, tmp_path: Path) -> None:
    index, traces = sample()
    page = opened(browser, tmp_path, index, traces)
    detail = expand(page, "t.py::test_c_budget")
    times = detail.locator("svg text.time-label").all_text_contents()
    assert times and times[0] == "0s" and len(set(times)) == len(times)
    assert detail.locator("svg text.axis-title").first.text_content() == "virtual time"
    assert detail.locator("svg text.span-label").all_text_contents() == ["budget max_steps=3"]
    assert page.errors == []


def test_the_verdict_filter_finds_the_runs_not_exercised(browser: Any, tmp_path: Path) -> None:
    index, traces = sample()
    page = opened(browser, tmp_path, index, traces)
    page.select_option("#filter-verdict", label="any verdict not exercised")
    shown = page.locator("#tests tr.test:visible td.node-id").all_inner_texts()
    assert shown == ["t.py::test_d_idle"]
    page.select_option("#filter-verdict", label="any verdict FAIL")
    shown = page.locator("#tests tr.test:visible td.node-id").all_inner_texts()
    assert shown == ["t.py::test_c_budget"]
    page.select_option("#filter-verdict", label="must_repair not exercised")
    assert page.locator("#tests tr.test:visible td.node-id").all_inner_texts() == [
        "t.py::test_d_idle"
    ]
    assert page.errors == []


# -- as a user sees it --------------------------------------------------------------------------


IDLE_SUITE = """
import pytest


def book(n: int) -> str:
    return f"booked {n}"


@pytest.mark.chaos(runs=3)
@pytest.mark.must_repair
def test_idle(chaos):
    assert chaos.wrap(book)(2) == "booked 2"
"""


def test_a_verdict_never_exercised_reads_so_in_every_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_idle=IDLE_SUITE)
    result = pytester.runpytest(
        "-p", "no:randomly", "--chaos-seed=3", "--junitxml=out.xml", "--chaos-report-dir=out",
        "--chaos-html=out/report.html",
    )  # fmt: skip
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "profile=none: 3 chaos tests (3 passed); survived 3/3; faults fired: none; halted "
            "by the harness: 0; verdicts not exercised: must_repair:3",
            "note: test_idle.py::test_idle@none: must_repair not exercised in any of its 3 runs: "
            "no call had malformed parameters",
            "test_idle.py::test_idle@none: 3/3 runs passed * pass^3 ok; must_repair not "
            "exercised in 3 of 3 runs",
        ]
    )
    root = ET.parse(pytester.path / "out.xml").getroot()
    values = [p.get("value", "") for p in root.iter("property")
              if p.get("name") == "agentchaos.verdict.must_repair"]  # fmt: skip
    assert len(values) == 3 and all(v.startswith("not exercised: must_repair not") for v in values)
    index = json.loads((pytester.path / "out" / "index.json").read_text(encoding="utf-8"))
    validate(index)
    assert {v["outcome"] for t in index["tests"] for v in t["verdicts"]} == {"not_exercised"}
    assert index["cases"][0]["not_exercised"] == {"must_repair": 3}
    page = (pytester.path / "out" / "report.html").read_text(encoding="utf-8")
    assert page.count('<span class="badge verdict-idle">must_repair not exercised</span>') == 3


def test_why_a_run_failed_when_no_verdict_did_is_in_every_report(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_trip="""
        import pytest

        @pytest.mark.must_halt(max_steps=10)
        def test_trip(chaos):
            plan = chaos.wrap(lambda city: city.upper(), name="plan")
            answer = plan("lyon")
            assert answer == "PARIS"
        """
    )
    result = pytester.runpytest(
        "-p", "no:randomly", "--junitxml=out.xml", "--chaos-report-dir=out",
        "--chaos-html=out/report.html",
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["FAILED  test_trip.py::test_trip  * verdict=must_halt=not_exercised "
         'error=AssertionError: assert answer == "PARIS" (at test_trip.py:7 in test_trip)']
    )  # fmt: skip
    root = ET.parse(pytester.path / "out.xml").getroot()
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    # the assert statement: pytest's own explanation changes with -v, the recorded end must not
    assert props["agentchaos.error"].startswith('AssertionError: assert answer == "PARIS"')
    index = json.loads((pytester.path / "out" / "index.json").read_text(encoding="utf-8"))
    validate(index)
    error = index["tests"][0]["error"]
    assert error["type"] == "AssertionError" and error["where"] == "test_trip.py:7 in test_trip"
    page = html.unescape((pytester.path / "out" / "report.html").read_text(encoding="utf-8"))
    assert '<td class="why">AssertionError: assert answer == "PARIS"' in page


def test_a_pass_rate_below_its_rule_stays_red_with_its_count_not_exercised(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_k="""
        import pytest

        @pytest.mark.chaos(runs=2)
        @pytest.mark.must_repair
        def test_k(chaos):
            assert False, "the agent answered wrong"
        """
    )
    result = pytester.runpytest("-p", "no:randomly", "--color=yes")
    result.assert_outcomes(failed=2)
    (line,) = [line for line in result.outlines if "runs passed" in line]
    assert "pass^2 FAIL; must_repair not exercised in 2 of 2 runs" in line
    assert line.startswith("\x1b[31m")


def test_a_run_the_harness_halted_names_the_halt_not_the_exception_it_raised() -> None:
    trace = run_trace(status="halted", extra=(
        BudgetExhaustedEvent(step=2, t=0.0, budget="max_steps", limit=2, count=3),))  # fmt: skip
    row = row_of(trace, "failed", must_halt(trace, max_steps=2))
    row["error"] = {"type": "BudgetExhausted", "message": "budget max_steps exhausted", "where": ""}
    assert format_row(row).endswith("verdict=must_halt=FAIL,halted:max_steps")


def test_the_failure_section_names_the_exception_that_ended_the_run_in_full() -> None:
    from pytest_agentchaos.report.terminal import failure_section

    error = {**ASSERT, "message": "x" * 150 + " the end"}
    trace = run_trace(status="error", error=error, extra=())
    last = failure_section(trace, "pytest t.py").splitlines()[-1]
    assert last.startswith("  #2    t=    0.000s RunEnded(status='error') with AssertionError: x")
    assert last.endswith(" the end (at test_trip.py:9 in test_trip)")


def test_the_why_of_a_halted_run_is_the_halt() -> None:
    index, traces = sample()
    budget = next(t for t in index["tests"] if t["node_id"] == "t.py::test_c_budget")
    budget["error"] = {"type": "BudgetExhausted", "message": "max_steps", "where": ""}
    page = page_of(index, traces)
    why = [text_of(w) for w in re.findall(r'<td class="why">(.*?)</td>', page)]
    assert why[1] == "must_halt failed; halted by max_steps"
    assert "BudgetExhausted: max_steps" in text_of(page)  # in its "Why it ended" section
