"""The HTML timeline report (issue 16, item 2): one self-contained page from ``index.json`` and
the traces; hostile trace content stays text; a bad trace spoils only its own timeline. The
browser tests open the page from disk in headless Chromium (Playwright)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pytest_agentchaos import Chaos
from pytest_agentchaos.report import html as report_html
from pytest_agentchaos.report.artifacts import index_data
from pytest_agentchaos.report.html import render_html, write_html
from pytest_agentchaos.report.metrics import run_metrics
from pytest_agentchaos.trace import Trace
from pytest_agentchaos.trace.events import (
    BudgetExhaustedEvent,
    Detection,
    Halt,
    Intervention,
    Repair,
    RunEnded,
    Snapshot,
    ToolCall,
    ToolResult,
)

SCRIPT_ATTACK = "</script><script>window.pwned=1</script>"
IMG_ATTACK = "<img src=x onerror=window.pwned=1>"
# in node id order: the index numbers them 0 to 4
FAILING = "tests/test_agent.py::test_a_naive_agent_loops"
PASSING = "tests/test_agent.py::test_b_survives"
MISSING = "tests/test_agent.py::test_c_without_a_trace"
BROKEN = "tests/test_agent.py::test_d_with_a_corrupt_trace"
HOSTILE = "tests/test_agent.py::test_e_hostile_output"


def failing_trace() -> Trace:
    """A real run (a timeout injected into the second call) and the stack's decisions."""
    chaos = Chaos.create(faults=[{"kind": "timeout", "tools": ["search"], "nth": 2}], seed=3)
    search = chaos.wrap(lambda q: {"hits": [q]}, name="search")
    for _ in range(3):
        with contextlib.suppress(TimeoutError):  # the injected timeout
            search(q="flights")
    chaos.close()
    trace = chaos.trace
    trace.append(Detection(step=3, t=30.0, detector="loop_observer", kind="loop",
                           detail={"episode": 1, "detected_step": 3}))  # fmt: skip
    trace.append(Intervention(step=3, t=30.0, action="nudge"))
    trace.append(Repair(step=3, t=30.0, tool="search", strategy="enum_value_correction",
                        ok=False, before={"q": "flights"}, after={}))  # fmt: skip
    trace.append(Snapshot(step=3, t=30.0, snapshot_id="snap-1", action="restored"))
    trace.append(Intervention(step=3, t=30.0, action="rebirth", detail={"to_step": 1}))
    trace.append(Halt(step=4, t=31.0, reason="repetition", hard=False))
    trace.append(BudgetExhaustedEvent(step=4, t=31.0, budget="max_steps", limit=4, count=4))
    trace.append(RunEnded(step=4, t=31.0, status="halted"))
    return trace


def hostile_trace() -> dict[str, Any]:
    """A trace document whose every string is an attack, with keys JSON cannot have."""
    trace = Trace(meta={"test": HOSTILE, SCRIPT_ATTACK: IMG_ATTACK})
    trace.append(ToolCall(step=1, t=0.0, tool=IMG_ATTACK, args={"q": SCRIPT_ATTACK}))
    trace.append(ToolResult(step=1, t=0.5, tool=IMG_ATTACK, output=SCRIPT_ATTACK + "\u2028\u2029"))
    trace.append(ToolResult(step=2, t=1.0, tool="big", output="x" * 1_000_000, ok=False,
                            message="-->" + IMG_ATTACK))  # fmt: skip
    doc = trace.to_dict()
    odd = {"type": SCRIPT_ATTACK, "step": 3, "t": float("nan"), 7: {(1, 2): "k"}}
    doc["events"].append(
        {**odd, "deep": [[[[[[[[["deep"]]]]]]]]], "big": 10**5000, "lone": "\ud800"}
    )
    return doc


def row(test: str, trace: Trace | None, verdicts: dict[str, bool], outcome: str) -> dict[str, Any]:
    return {
        "test": test, "profile": "none" if trace is None else "flaky", "seed": 11,
        "outcome": outcome,
        "replay": f"pytest {test} --chaos-seed=7", "trace_file": f"traces/{test[-12:]}.json",
        "verdicts": verdicts,
        "explanations": {n: f"{n} {'ok' if ok else 'failed'}: loop at step 3, never escaped"
                         for n, ok in verdicts.items()},
        "metrics": {} if trace is None else run_metrics(trace), "halted": [], "capped": [],
    }  # fmt: skip


def corrupt(_: Mapping[str, Any]) -> Mapping[str, Any]:
    raise ValueError("Expecting value: line 1 column 1 (char 0)\n<b>second line</b>")


@pytest.fixture(scope="module")
def sample() -> tuple[dict[str, Any], Any]:
    """The index of five runs and its ``load_trace``: a failing verdict, a passing run, no
    trace written, a corrupt trace file, and a hostile trace."""
    failing = failing_trace()
    rows = [
        row(FAILING, failing, {"must_escape": False, "must_halt": True}, "failed"),
        row(PASSING, Trace(), {"must_halt": True}, "passed"),
        row(MISSING, None, {}, "xfailed"),
        row(BROKEN, Trace(), {"must_halt": True}, "passed"),
        row(HOSTILE, Trace(), {}, "error"),
    ]
    index = index_data(rows, session_seed=7, profile_option="flaky")
    index["tests"][0]["pass_rate"] = 0.5  # later keys are ignored
    index["tests"][4].update(  # what the index repeats of an agent's output is hostile too
        replay=f"pytest {HOSTILE} {SCRIPT_ATTACK}", trace=IMG_ATTACK,
        metrics={"faults": {IMG_ATTACK: 1}, SCRIPT_ATTACK: [IMG_ATTACK]},
    )  # fmt: skip
    traces = {FAILING: failing.to_dict(), PASSING: Trace().to_dict(), HOSTILE: hostile_trace()}

    def load(entry: Mapping[str, Any]) -> Mapping[str, Any] | None:
        if entry["node_id"] == BROKEN:
            corrupt(entry)
        return traces.get(entry["node_id"])

    return index, load


def embedded(page: str) -> dict[int, Any]:
    """The trace blobs of a page, by test number, decoded as the browser decodes them."""
    found = re.findall(r'<script type="application/json" id="trace-(\d+)">(.*?)</script>', page)
    return {int(number): json.loads(text) for number, text in found}


def decode(blob: dict[str, Any]) -> list[dict[str, Any]]:
    """The embedded events back as dicts (what the page's script reads)."""
    types = blob["types"]
    return [{"type": types[e[0]][0], "step": e[1], "t": e[2],
             **dict(zip(types[e[0]][1], e[3:], strict=False))} for e in blob["ev"]]  # fmt: skip


class Resources(HTMLParser):
    """Every attribute that could make a browser fetch something, and every tag."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.links += [v or "" for k, v in attrs if k in ("src", "href", "action", "srcset")]


# -- the page as text -----------------------------------------------------------------------


def test_the_page_lists_every_test_with_its_verdicts_replay_and_totals(sample: Any) -> None:
    index, load = sample
    page = render_html(index, load)
    assert page.startswith("<!DOCTYPE html>")
    for node_id in (FAILING, PASSING, MISSING, BROKEN, HOSTILE):
        assert f'<td class="node-id">{node_id}</td>' in page
    assert "session seed <b>7</b>" in page and "profile option <b>flaky</b>" in page
    assert '<span class="badge verdict-fail">must_escape FAIL</span>' in page
    assert "must_escape failed: loop at step 3, never escaped" in page
    assert f'<code id="replay-0">pytest {FAILING} --chaos-seed=7</code>' in page
    totals = page[page.index('id="profile-totals"') :].split("</table>")[0]
    assert "<td>flaky</td><td>4</td><td>2</td>" in totals  # 4 tests, 2 passed
    assert "5 of 5 tests shown" in page


def test_the_failing_run_is_embedded_with_every_event_of_its_trace(sample: Any) -> None:
    index, load = sample
    blob = embedded(render_html(index, load))[0]
    events = decode(blob)
    assert blob["n"] == len(events) == 16 and blob["omitted"] is None
    fault = next(e for e in events if e["type"] == "FaultInjected")
    assert fault["kind"] == "timeout" and fault["target"] == "search" and fault["t"] == 0
    failed = [e for e in events if e["type"] == "ToolResult" and e["ok"] is False]
    assert [(e["step"], e["t"], e["error_type"]) for e in failed] == [(2, 30, "InjectedTimeout")]
    repair = next(e for e in events if e["type"] == "Repair")
    assert repair["ok"] is False and repair["before"] == {"q": "flights"}


def test_hostile_trace_content_cannot_break_out_of_its_data_block(sample: Any) -> None:
    index, load = sample
    page = render_html(index, load)
    assert page.count("<script") == page.count("</script>") == 4  # 3 traces and the script
    assert "<img" not in page and "\u2028" not in page and "\u2029" not in page
    parser = Resources()
    parser.feed(page)
    assert "img" not in parser.tags and parser.tags.count("script") == 4
    blob = embedded(page)[4]
    events = decode(blob)
    assert events[0]["tool"] == IMG_ATTACK and events[0]["args"] == {"q": SCRIPT_ATTACK}
    assert events[1]["output"] == SCRIPT_ATTACK + "\u2028\u2029"  # shown as it was
    assert len(events[2]["output"]) < 400 and events[2]["output"].startswith("x" * 300)
    odd = events[3]
    assert odd["type"] == SCRIPT_ATTACK and odd["t"] == 0 and odd["big"].startswith("<int")
    assert odd["7"] == {"(1, 2)": "k"} and "..." in json.dumps(odd["deep"])
    assert blob["meta"][SCRIPT_ATTACK] == IMG_ATTACK
    assert len(page) < 200_000  # the 1 MB output is cut in the embedded copy


def test_a_bad_trace_spoils_only_its_own_timeline(sample: Any) -> None:
    index, load = sample
    page = render_html(index, load)
    assert (
        '<p class="trace-missing trace-unreadable">trace unreadable: ValueError: Expecting '
        "value: line 1 column 1 (char 0)</p>"
    ) in page
    assert "second line" not in page
    assert '<p class="trace-missing">no trace written for this run</p>' in page
    assert sorted(embedded(page)) == [0, 1, 4]


@pytest.mark.parametrize(
    ("doc", "reason"),
    [
        ([1, 2], "ValueError: not a trace: expected an object, got list"),
        ({"format": 2, "events": []}, "ValueError: unsupported trace format 2 (expected 1)"),
        ({"events": {"a": 1}}, "ValueError: not a trace: &#x27;events&#x27; is not a list"),
        (OSError(13, "Permission denied"), "PermissionError: [Errno 13] Permission denied"),
        (RecursionError("<deep>"), "RecursionError: &lt;deep&gt;"),
    ],
)
def test_what_is_not_a_trace_is_named_in_one_line(doc: Any, reason: str) -> None:
    def load(_: Mapping[str, Any]) -> Any:
        if isinstance(doc, BaseException):
            raise doc
        return doc

    index = index_data([row(PASSING, Trace(), {}, "passed")], session_seed=1, profile_option=None)
    assert f"trace unreadable: {reason}</p>" in render_html(index, load)


def test_a_long_trace_keeps_its_head_and_its_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_html, "HEAD_EVENTS", 5)
    monkeypatch.setattr(report_html, "TAIL_EVENTS", 3)
    trace = Trace([ToolCall(step=i, t=float(i), tool="s") for i in range(20)])
    index = index_data([row(PASSING, trace, {}, "passed")], session_seed=1, profile_option=None)
    blob = embedded(render_html(index, lambda _: trace.to_dict()))[0]
    assert blob["n"] == 20 and blob["omitted"] == [5, 17]
    assert [e["step"] for e in decode(blob)] == [0, 1, 2, 3, 4, 17, 18, 19]


def test_entries_with_unknown_or_missing_keys_render() -> None:
    index = {"session_seed": 3, "tests": [{"node_id": "t.py::a", "case": 2, "run": 1}],
             "profiles": {"none": {"tests": 1}}}  # fmt: skip
    page = render_html(index, lambda _: None)
    assert '<td class="node-id">t.py::a</td>' in page and "1 of 1 tests shown" in page
    assert render_html({}, lambda _: None).count('class="test"') == 0


def rate_rows(case: str, outcomes: str, min_pass_rate: float | None = None) -> list[Any]:
    """One row per run of ``case``: ``p`` passed, ``f`` failed, ``s`` skipped."""
    names = {"p": "passed", "f": "failed", "s": "skipped"}
    return [
        {**row(f"{case}[seed{n}]", Trace(), {}, names[o]), "case": case, "run": n,
         "min_pass_rate": min_pass_rate}
        for n, o in enumerate(outcomes, 1)
    ]  # fmt: skip


def test_cases_run_several_times_show_their_pass_rate_below_their_rule_first() -> None:
    rows = [*rate_rows("t.py::test_ok", "pppp"), *rate_rows("t.py::test_flaky", "pfpps"),
            *rate_rows("t.py::test_lenient", "pfpp", min_pass_rate=0.7)]  # fmt: skip
    page = render_html(index_data(rows, session_seed=7, profile_option=None), lambda _: None)
    table = page[page.index('<table id="case-rates">') :]
    table = table[: table.index("</table>")]
    cells = [re.sub(r"<[^>]+>", "", r) for r in re.findall(r'<tr class="case.*?</tr>', table)]
    # the case under its rule first; a skipped run is no run; the Wilson interval as in
    # the terminal's summary
    assert cells == [
        "t.py::test_flakyflaky3/475%30%\u201395%pass^4 FAIL",
        "t.py::test_lenientflaky3/475%30%\u201395%min_pass_rate 70% ok",
        "t.py::test_okflaky4/4100%51%\u2013100%pass^4 ok",
    ]
    assert table.count('class="case case-fail"') == 1


def test_no_pass_rate_section_without_repeated_runs_or_with_a_foreign_cases_value(
    sample: Any,
) -> None:
    index, load = sample
    assert "case-rates" not in render_html(index, load)
    for foreign in ({"a": 1}, "cases", [1, None, "x"], None):
        assert "case-rates" not in render_html({**index, "cases": foreign}, load)
    odd = [{"case": "<b>x</b>", "runs": "3", "wilson95": [0.1], "pass_rate": None}]
    page = render_html({**index, "cases": odd}, load)
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page


def test_the_page_is_one_file_that_fetches_nothing(sample: Any, tmp_path: Path) -> None:
    index, load = sample
    path = write_html(tmp_path / "report.html", index, load)
    assert path == tmp_path / "report.html" and [p.name for p in tmp_path.iterdir()] == [path.name]
    page = path.read_text(encoding="utf-8")
    parser = Resources()
    parser.feed(page)
    assert parser.links == []  # no src=, href= at all: styles and script are inline
    assert not re.search(r"https?://|url\(|@import", page, re.I)
    assert "default-src 'none'" in page  # and the browser is told to refuse any fetch


def test_a_failed_write_leaves_the_earlier_report_whole(sample: Any, tmp_path: Path) -> None:
    """Atomic: the page goes to a temporary file in the same folder, then replaces the old."""
    index, load = sample
    path = write_html(tmp_path / "report.html", index, load)
    before = path.read_bytes()

    def full_disk(*_: Any) -> None:
        raise OSError(28, "No space left on device")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "replace", full_disk)
        with pytest.raises(OSError, match="No space"):
            write_html(path, index, load)
    assert path.read_bytes() == before and len(list(tmp_path.iterdir())) == 1
    with pytest.raises(OSError):
        write_html(tmp_path / "missing" / "report.html", index, load)


# -- the page in a browser -------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module; skipped (failed, with
    ``AGENTCHAOS_REQUIRE_BROWSER=1``) when Playwright or Chromium is missing."""
    required = os.environ.get("AGENTCHAOS_REQUIRE_BROWSER") == "1"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    missing = (
        "playwright is not installed" if sync_playwright is None
        else "no chromium executable on PATH" if executable is None else None
    )  # fmt: skip
    if missing:
        if required:
            pytest.fail(f"AGENTCHAOS_REQUIRE_BROWSER=1 but {missing}", pytrace=False)
        pytest.skip(f"browser tests need Playwright and Chromium: {missing}")
    assert sync_playwright is not None
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


@dataclass
class Viewer:
    """A page of the report open in the browser, with what went wrong in it."""

    page: Any
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def check(self) -> None:
        assert self.errors == [], self.errors
        assert self.requests == [], self.requests
        assert self.page.evaluate("typeof window.pwned") == "undefined"

    def visible_tests(self) -> list[str]:
        return self.page.locator("#tests tr.test:visible td.node-id").all_inner_texts()


@pytest.fixture
def open_report(browser: Any, tmp_path: Path) -> Iterator[Any]:
    """``open_report(index, load_trace)``: the page written to disk and opened from there."""
    contexts: list[Any] = []

    def open_(index: Mapping[str, Any], load: Any) -> Viewer:
        path = write_html(tmp_path / f"report{len(contexts)}.html", index, load)
        context = browser.new_context()
        contexts.append(context)
        viewer = Viewer(context.new_page())
        viewer.page.on(
            "console", lambda m: viewer.errors.append(m.text) if m.type == "error" else None
        )
        viewer.page.on("pageerror", lambda e: viewer.errors.append(str(e)))

        def route(request: Any) -> None:
            if request.request.url.startswith(("file:", "data:")):
                request.continue_()
            else:
                viewer.requests.append(request.request.url)
                request.abort()

        viewer.page.route("**/*", route)
        viewer.page.goto(path.as_uri())
        return viewer

    yield open_
    for context in contexts:
        context.close()


def expand(viewer: Viewer, number: int) -> Any:
    viewer.page.click(f"#test-{number} button.expand")
    return viewer.page.locator(f"#detail-{number}")


def test_a_failing_verdict_and_its_timeline_show_when_the_test_is_expanded(
    sample: Any, open_report: Any
) -> None:
    viewer = open_report(*sample)
    detail = viewer.page.locator("#detail-0")
    assert not detail.is_visible()
    expand(viewer, 0)
    failing = detail.locator("li.verdict-fail")
    assert failing.is_visible()
    assert "must_escape failed: loop at step 3, never escaped" in failing.inner_text()
    lanes = detail.locator("text.lane-label").all_text_contents()
    assert lanes == [
        "loops / halts",
        "",
        "run / steps",
        "tool calls",
        "faults injected",
        "detections",
        "interventions",
        "repairs",
        "snapshots / rebirth",
        "halts / budgets / end",
    ]  # fmt: skip  (the loop, never broken, and the budget's stop overlap: two span lanes)
    assert detail.locator("rect.mark.tone-err").count() >= 3  # timeout, declined repair, end
    detail.locator("rect.mark.tone-fault").click()
    lines = detail.locator(".event-line").all_inner_texts()
    assert lines == ['#2 t=0s FaultInjected kind="timeout", channel="tool", target="search", '
                     'index=2, fault=0, detail={"seconds":30}']  # fmt: skip
    detail.locator("rect.mark.tone-rebirth").click()
    assert 'Intervention action="rebirth"' in " ".join(
        detail.locator(".event-line").all_inner_texts()
    )
    viewer.check()


def test_hostile_output_stays_text_in_the_browser(sample: Any, open_report: Any) -> None:
    viewer = open_report(*sample)
    for number in range(5):
        expand(viewer, number)
    detail = viewer.page.locator("#detail-4")
    detail.locator("rect.mark").first.click()
    shown = detail.locator(".event-details").inner_text()
    assert IMG_ATTACK in shown and SCRIPT_ATTACK in shown
    assert viewer.page.locator("img").count() == 0
    assert "trace unreadable: ValueError" in viewer.page.locator("#detail-3").inner_text()
    assert "no trace written" in viewer.page.locator("#detail-2").inner_text()
    viewer.check()


def test_each_filter_narrows_the_visible_tests(sample: Any, open_report: Any) -> None:
    viewer = open_report(*sample)
    page = viewer.page
    assert len(viewer.visible_tests()) == 5
    page.select_option("#filter-outcome", "failed")
    assert viewer.visible_tests() == [FAILING]
    assert page.inner_text("#shown-count") == "1 of 5 tests shown"
    page.select_option("#filter-outcome", "")
    page.select_option("#filter-profile", "none")
    assert viewer.visible_tests() == [MISSING]
    page.select_option("#filter-profile", "")
    page.select_option("#filter-verdict", label="must_halt ok")
    assert viewer.visible_tests() == [FAILING, PASSING, BROKEN]
    page.select_option("#filter-verdict", label="any verdict FAIL")
    assert viewer.visible_tests() == [FAILING]
    page.select_option("#filter-verdict", label="no verdict")
    assert viewer.visible_tests() == [HOSTILE, MISSING]  # failures first
    page.select_option("#filter-outcome", "passed")
    assert viewer.visible_tests() == [] and page.inner_text("#shown-count") == "0 of 5 tests shown"
    viewer.check()


def test_the_copy_button_copies_or_selects_the_replay_command(
    sample: Any, open_report: Any
) -> None:
    viewer = open_report(*sample)
    detail = expand(viewer, 0)
    button = detail.locator("button.copy")
    button.click()
    viewer.page.wait_for_function(
        "b => b.textContent !== 'copy'", arg=button.element_handle(), timeout=2000
    )
    said = button.inner_text()
    assert said in ("copied", "selected: press Ctrl+C")
    if said.startswith("selected"):  # no clipboard in this browser: the command is selected
        assert (
            viewer.page.evaluate("getSelection().toString()") == f"pytest {FAILING} --chaos-seed=7"
        )
    viewer.check()


def test_a_timeline_of_ten_thousand_events_renders(open_report: Any) -> None:
    trace = Trace()
    for i in range(2_500):
        trace.append(ToolCall(step=i + 1, t=i * 0.5, tool="search", index=i + 1, args={"q": i}))
        trace.append(ToolResult(step=i + 1, t=i * 0.5, tool="search", index=i + 1,
                                ok=i % 7 != 0, output={"hits": [i, i + 1]}))  # fmt: skip
        trace.append(Detection(step=i + 1, t=i * 0.5, detector="classifier", kind="timeout"))
        trace.append(Intervention(step=i + 1, t=i * 0.5, action="backoff", detail={"delay": 1}))
    assert len(trace) == 10_000
    index = index_data([row(PASSING, trace, {"must_halt": True}, "passed")], session_seed=1,
                       profile_option=None)  # fmt: skip
    viewer = open_report(index, lambda _: trace.to_dict())
    detail = expand(viewer, 0)
    marks = detail.locator("rect.mark")
    assert 0 < marks.count() <= 4 * 200  # aggregated: a mark per lane and group of steps
    assert detail.locator(".timeline-summary").inner_text().startswith("10000 events, steps 1")
    marks.first.click()
    assert detail.locator(".event-line").count() > 1
    viewer.check()


def test_a_multi_agent_run_draws_one_model_lane_per_agent(open_report: Any) -> None:
    """Each agent's model calls are its own target: the timeline gives each its lane, and a
    call's line names the agent that made it."""
    from pytest_agentchaos.inject.intercept import Interceptor

    with Chaos.create(faults=[{"kind": "http_error", "tools": ["FAQ Agent"], "nth": 1}]) as chaos:
        triage = Interceptor(chaos.session, "Triage Agent", channel="model", agent="Triage Agent")
        faq = Interceptor(chaos.session, "FAQ Agent", channel="model", agent="FAQ Agent")
        lookup = Interceptor(chaos.session, "lookup_faq", agent="FAQ Agent")
        triage.call({"messages": 1}, lambda _: "-> transfer_to_faq_agent({})")
        with contextlib.suppress(Exception):
            faq.call({"messages": 2}, lambda _: "never")
        faq.call({"messages": 3}, lambda _: "-> lookup_faq({})")
        lookup.call({"q": "bags"}, lambda _: "1 carry-on")
    index = index_data([row(PASSING, chaos.trace, {}, "passed")], session_seed=1,
                       profile_option=None)  # fmt: skip
    viewer = open_report(index, lambda _: chaos.trace.to_dict())
    detail = expand(viewer, 0)
    lanes = detail.locator("text.lane-label").all_text_contents()
    assert lanes == ["run / steps", "tool calls", "model: Triage Agent", "model: FAQ Agent",
                     "faults injected", "halts / budgets / end"]  # fmt: skip
    detail.locator("rect.mark.tone-err").first.click()
    text = " ".join(detail.locator(".event-line").all_inner_texts())
    assert 'model="FAQ Agent"' in text and 'agent="FAQ Agent"' in text
    assert "model: FAQ Agent, step 2" in detail.locator(".event-head").inner_text()
    viewer.check()
