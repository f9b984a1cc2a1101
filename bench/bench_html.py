"""The HTML timeline report: what a 10,000-event trace costs the page and the browser.

A run records 10,000 events through the public API (wrapped tools under the ``flaky``
profile's faults: timeouts, 5xx errors, dropped connections, latency; for each failure the
classifier's detection and a backoff, as the escape stack writes them; a snapshot every 50
steps). The report of that one test is rendered and opened from disk in headless Chromium
(Playwright), its test expanded so that the timeline is drawn.

Browser time, against baselines done by the same browser in the same process, the arms
alternating in each round (median of ``--rounds``, after two warm-up rounds):
- ``load``: the report's load (navigation start to the load event);
- ``timeline``: expanding its test: click to the second animation frame after it, layout
  forced (the timeline is built then, not at load);
- ``rows``: the baseline of the ratio: a plain page's script builds 10,000 rows of text, the
  same way (build, layout forced, two frames);
- ``empty``: the load of the same report with an empty test list: the page's fixed cost.

Printed: the HTML bytes per event (and the trace file's own, for scale), the Python render
time, the browser times and the ratios timeline / rows and load / empty load. Goal: the
report of the 10,000-event trace is loaded and its timeline drawn (load + timeline) in
<= 2 s of browser time, with the ratio printed.

Run: .venv/bin/python bench/bench_html.py [--rounds N]
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_agentchaos import Chaos
from pytest_agentchaos.report.artifacts import index_data
from pytest_agentchaos.report.html import render_html, write_html
from pytest_agentchaos.report.metrics import run_metrics
from pytest_agentchaos.trace import Trace
from pytest_agentchaos.trace.events import Detection, Intervention, Snapshot

GOAL_MS = 2000.0
EVENTS = 10_000
FLAKY = [
    {"kind": "timeout", "seconds": 30, "probability": 0.08},
    {"kind": "http_error", "status": [500, 502, 503], "probability": 0.1},
    {"kind": "connection_error", "probability": 0.03},
    {"kind": "latency", "seconds": [0.5, 3.0], "probability": 0.2},
]

BLANK = '<!DOCTYPE html><html><head><meta charset="utf-8"><title>rows</title></head><body>'
LOAD_MS = "() => performance.getEntriesByType('navigation')[0].loadEventEnd"
ROWS = """async () => {
  const t0 = performance.now();
  const box = document.createElement("div");
  document.body.appendChild(box);
  for (let i = 0; i < 10000; i++) {
    const row = document.createElement("div");
    row.textContent = "#" + i + " t=" + (i / 2) + "s ToolResult tool=search ok=true output={}";
    box.appendChild(row);
  }
  box.getBoundingClientRect();
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return performance.now() - t0;
}"""
EXPAND = """async () => {
  const t0 = performance.now();
  document.querySelector('#test-0 button.expand').click();
  document.querySelector('#detail-0 svg').getBoundingClientRect();
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const took = performance.now() - t0;
  return [took, document.querySelectorAll('#detail-0 rect.mark').length];
}"""


def ten_thousand_events() -> Trace:
    """A run of wrapped tools under the flaky faults, the stack's decisions, cut at EVENTS."""
    chaos = Chaos.create(faults=FLAKY, seed=7, test_id="bench.py::test_agent")
    tools = [chaos.wrap(lambda q: {"hits": [q, q + 1], "next": q + 2}, name=name)
             for name in ("search", "fetch_page", "book")]  # fmt: skip
    trace = chaos.trace
    step = 0
    while len(trace) < EVENTS:
        step += 1
        try:
            tools[step % 3](q=step)
        except Exception as exc:
            last = trace[-1]
            trace.append(Detection(step=last.step, t=last.t, detector="classifier",
                                   kind="transient", detail={"reason": str(exc)[:80]}))  # fmt: skip
            trace.append(Intervention(step=last.step, t=last.t, action="backoff",
                                      detail={"attempt": 0, "delay": 0.8}))  # fmt: skip
        if step % 50 == 0:
            trace.append(Snapshot(step=trace[-1].step, t=trace[-1].t, snapshot_id=f"s{step}"))
    chaos.close()
    return Trace(list(trace)[:EVENTS], meta=trace.meta)


def main(argv: list[str]) -> int:
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 7
    from playwright.sync_api import sync_playwright

    trace = ten_thousand_events()
    doc = trace.to_dict()
    row = {"test": "bench.py::test_agent", "profile": "flaky", "seed": 7, "outcome": "passed",
           "replay": "pytest bench.py::test_agent --chaos-seed=7", "trace_file": "t.json",
           "verdicts": {"must_escape": True}, "metrics": run_metrics(trace)}  # fmt: skip
    index = index_data([row], session_seed=7, profile_option="flaky")
    empty_index = index_data([], session_seed=7, profile_option="flaky")
    renders = []
    for _ in range(5):
        start = time.perf_counter()
        page = render_html(index, lambda _: doc)
        renders.append(time.perf_counter() - start)
    size = len(page.encode("utf-8"))
    empty_size = len(render_html(empty_index, lambda _: None).encode("utf-8"))
    trace_size = len(trace.to_json().encode("utf-8"))
    per_event = (size - empty_size) / EVENTS
    print(f"{EVENTS} events: page {size / 1e6:.2f} MB, {per_event:.0f} HTML bytes per event "
          f"({size / EVENTS:.0f} with the page's own {empty_size / 1e3:.0f} kB); the trace file: "
          f"{trace_size / EVENTS:.0f} bytes per event; rendered in Python in "
          f"{statistics.median(renders) * 1e3:.0f} ms")  # fmt: skip

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        folder = Path(tmp)
        report = write_html(folder / "report.html", index, lambda _: doc).as_uri()
        empty = write_html(folder / "empty.html", empty_index, lambda _: None).as_uri()
        (folder / "rows.html").write_text(BLANK, encoding="utf-8")
        rows = (folder / "rows.html").as_uri()
        browser = playwright.chromium.launch(
            executable_path=shutil.which("chromium"), args=["--no-sandbox"]
        )
        times: dict[str, list[float]] = {"report": [], "load": [], "timeline": [], "rows": [],
                                         "empty": []}  # fmt: skip
        marks = 0
        for i in range(rounds + 2):  # two warm-up rounds
            page_ = browser.new_page(viewport={"width": 1280, "height": 900})
            page_.goto(rows)
            rows_ms = page_.evaluate(ROWS)
            page_.goto(empty)
            empty_ms = page_.evaluate(LOAD_MS)
            page_.goto(report)
            load_ms = page_.evaluate(LOAD_MS)
            timeline_ms, marks = page_.evaluate(EXPAND)
            page_.close()
            if i >= 2:
                for name, value in (("report", load_ms + timeline_ms), ("load", load_ms),
                                    ("timeline", timeline_ms), ("rows", rows_ms),
                                    ("empty", empty_ms)):  # fmt: skip
                    times[name].append(value)
        browser.close()
    m: dict[str, Any] = {name: statistics.median(values) for name, values in times.items()}
    ratio = m["timeline"] / m["rows"]
    print(f"browser (median of {rounds}): report load {m['load']:.0f} ms + timeline "
          f"{m['timeline']:.0f} ms ({marks} marks) = {m['report']:.0f} ms; 10,000 text rows "
          f"{m['rows']:.0f} ms; the empty report {m['empty']:.0f} ms")  # fmt: skip
    print(f"ratio: timeline / 10,000 text rows = {ratio:.2f}; report load / empty "
          f"report load = {m['load'] / m['empty']:.2f}")  # fmt: skip
    ok = m["report"] <= GOAL_MS and marks > 0
    print(f"RESULT bench_html: render={m['report']:.0f}ms ratio={ratio:.2f} "
          f"bytes/event={per_event:.0f} goal <= {GOAL_MS:.0f} ms "
          f"{'PASS' if ok else 'FAIL'}")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
