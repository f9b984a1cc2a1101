"""The documentation's picture of the HTML report is taken here, in headless Chromium, from the
report of the suite the HTML page of the docs shows: the picture cannot drift from the report.

The PNG is written into ``docs/images/`` only when it differs from the one there, so a run that
renders the same page leaves the working tree clean.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from docs_blocks import DOCS, blocks

PAGE = DOCS / "reports" / "html.md"
PICTURE = DOCS / "images" / "html-report.png"
FAILING = "test_trip_agent.py::test_stuck_on_a_stale_answer"


@pytest.fixture
def chromium() -> Iterator[Any]:
    """A headless Chromium; skipped (failed with ``AGENTCHAOS_REQUIRE_BROWSER=1``) without
    Playwright or a chromium executable."""
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
        pytest.skip(f"the screenshot needs Playwright and Chromium: {missing}")
    assert sync_playwright is not None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def test_the_docs_picture_is_the_report_of_the_docs_suite(
    pytester: pytest.Pytester, chromium: Any
) -> None:
    (suite,) = [b for b in blocks(PAGE) if b.title == "test_trip_agent.py"]
    pytester.makepyfile(test_trip_agent=suite.text)
    # a report folder: the page names its traces by a path that is the same on every run
    args = ("--chaos-seed=7", "--chaos-html=report.html", "--chaos-report-dir=chaos-report")
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=1, failed=2)

    page = chromium.new_page(viewport={"width": 1280, "height": 1180}, device_scale_factor=1)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto((pytester.path / "report.html").as_uri())
    row = page.locator("#tests tr.test", has_text=FAILING)
    number = row.get_attribute("id").removeprefix("test-")
    row.locator("td.node-id").click()
    detail = page.locator(f"#detail-{number}")
    assert detail.locator("li.verdict-fail").is_visible()  # what the picture is meant to show
    assert "must_escape failed" in detail.locator("li.verdict-fail").inner_text()
    assert detail.locator("svg.timeline-svg rect.mark").count() > 0
    page.evaluate("window.scrollTo(0, 0)")
    png = page.screenshot()
    page.close()
    assert errors == []
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000

    assert f"]({os.path.relpath(PICTURE, PAGE.parent)})" in PAGE.read_text(encoding="utf-8")
    if not PICTURE.exists() or PICTURE.read_bytes() != png:
        PICTURE.parent.mkdir(exist_ok=True)
        PICTURE.write_bytes(png)
