"""``--chaos-html=FILE`` the way a user runs it: one self-contained page written once, at the end
of the session, by the controller (under xdist too), with or without a report dir; without one
the traces go to a temporary dir that is removed after rendering. Bad paths are one usage line;
a page that cannot be written at the end is one line and exit code 3."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis.internal.observability  # noqa: F401 - keeps in-process runs fast
import pytest

SEED = 4
USAGE = pytest.ExitCode.USAGE_ERROR
FAILING = "test_agent.py::test_spends_too_much"
PASSING = "test_agent.py::test_survives"
EXPLANATION = "must_halt failed: the agent did not halt on its own within its budget"

SUITE = """
import pytest

@pytest.mark.chaos(faults=[{"kind": "timeout", "tools": ["s"], "nth": 2}])
@pytest.mark.must_halt(max_steps=10)
def test_survives(chaos):
    s = chaos.wrap(lambda: 1, name="s")
    for _ in range(3):
        try:
            s()
        except Exception:
            pass

@pytest.mark.must_halt(max_tool_calls=1)
def test_spends_too_much(chaos):
    s = chaos.wrap(lambda: 1, name="s")
    s()
    s()

def test_plain():
    pass
"""


@pytest.fixture
def private_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp dir of this test's own (in-process runs and subprocesses): what the plugin leaves
    there is this test's doing alone, whatever runs in parallel."""
    path = tmp_path_factory.mktemp("private-tmp")
    monkeypatch.setattr(tempfile, "tempdir", str(path))
    monkeypatch.setenv("TMPDIR", str(path))
    return path


def leftovers(private: Path) -> list[str]:
    return sorted(p.name for p in private.iterdir() if p.name.startswith("agentchaos-traces-"))


def run(pytester: pytest.Pytester, *args: str, source: str = SUITE) -> pytest.RunResult:
    pytester.makepyfile(test_agent=source)
    return pytester.runpytest(f"--chaos-seed={SEED}", "-p", "no:randomly", *args)


def page_text(path: Path) -> str:
    """The page with its entities decoded (explanations and commands are HTML-escaped)."""
    return html.unescape(path.read_text(encoding="utf-8"))


def usage_line(result: pytest.RunResult) -> str:
    """The one line a usage error prints, checked to be alone and without a traceback."""
    assert result.ret == USAGE, result.stdout.str()
    lines = [line for line in result.stderr.lines if line.strip()]
    assert len(lines) == 1, lines
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    return lines[0]


def check_page(path: Path, where: str = "") -> str:
    """The page of SUITE: each chaos test's row, the failing verdict's explanation, the replay
    commands, and a timeline (its trace embedded) per test."""
    text = page_text(path)
    assert text.startswith("<!DOCTYPE html>")
    node_ids = re.findall(r'<td class="node-id">([^<]*)</td>', path.read_text(encoding="utf-8"))
    assert node_ids == [FAILING, PASSING]  # sorted by node id; test_plain is no chaos test
    assert EXPLANATION in text
    assert "hard budget max_tool_calls=1 stopped it at step 1" in text
    for node_id in (FAILING, PASSING):
        assert f"pytest {where}{node_id} --chaos-seed={SEED}" in text
    assert (
        "2 chaos test runs: 1 failed (1 with a failing verdict, 0 without one), 0 with a "
        "verdict not exercised; faults fired: 1"
    ) in text
    assert text.count('<script type="application/json" id="trace-') == 2
    assert "trace unreadable" not in text and "no trace written" not in text
    return text


# -- written once, at the end ----------------------------------------------------------------


def test_the_page_is_written_without_a_report_dir_and_its_temporary_traces_removed(
    pytester: pytest.Pytester, private_tmp: Path
) -> None:
    result = run(pytester, "--chaos-html=reports/chaos/report.html")
    result.assert_outcomes(passed=2, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    page = pytester.path / "reports" / "chaos" / "report.html"
    check_page(page)
    assert os.listdir(page.parent) == ["report.html"]  # no temporary file beside it
    assert leftovers(private_tmp) == []
    assert not (pytester.path / "index.json").exists()


def test_the_page_reads_the_report_dirs_traces_and_leaves_them(
    pytester: pytest.Pytester, private_tmp: Path
) -> None:
    result = run(pytester, "--chaos-html=report.html", "--chaos-report-dir=out")
    result.assert_outcomes(passed=2, failed=1)
    check_page(pytester.path / "report.html")
    index = json.loads((pytester.path / "out" / "index.json").read_text(encoding="utf-8"))
    assert [t["node_id"] for t in index["tests"]] == [FAILING, PASSING]
    assert len(list((pytester.path / "out" / "traces").iterdir())) == 2
    for test in index["tests"]:
        assert not Path(test["trace"]).is_absolute()  # inside the report dir
    assert leftovers(private_tmp) == []  # the report dir holds the traces: no temporary dir


def test_the_page_is_not_there_while_the_tests_run(
    pytester: pytest.Pytester, private_tmp: Path
) -> None:
    source = SUITE + (
        "\n\ndef test_looks_during_the_session(chaos):\n"
        "    import os, glob\n"
        "    assert os.path.isdir('r')  # the folder is made when the options are read\n"
        "    assert not os.path.exists('r/report.html')\n"
        "    found = glob.glob(os.path.join(os.environ['TMPDIR'], 'agentchaos-traces-*'))\n"
        "    assert len(found) == 1, found  # the traces' temporary dir, during the session\n"
    )
    result = run(pytester, "--chaos-html=r/report.html", source=source)
    result.assert_outcomes(passed=3, failed=1)
    assert (pytester.path / "r" / "report.html").is_file()
    assert leftovers(private_tmp) == []


def test_the_path_is_relative_to_the_invocation_dir(
    pytester: pytest.Pytester, private_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\n")  # the rootdir stays pytester.path
    pytester.makepyfile(test_agent=SUITE)
    elsewhere = pytester.mkdir("elsewhere")
    monkeypatch.chdir(elsewhere)
    result = pytester.runpytest(
        f"--chaos-seed={SEED}", "--chaos-html=sub/report.html", str(pytester.path / "test_agent.py")
    )
    result.assert_outcomes(passed=2, failed=1)
    assert not (pytester.path / "sub").exists()
    # the replay commands are as the user runs them from there
    check_page(elsewhere / "sub" / "report.html", where="../")


def test_the_page_is_readable_by_others(pytester: pytest.Pytester, private_tmp: Path) -> None:
    old = os.umask(0o022)
    try:
        run(pytester, "--chaos-html=report.html")
    finally:
        os.umask(old)
    mode = stat.S_IMODE((pytester.path / "report.html").stat().st_mode)
    assert mode == 0o644, oct(mode)


def test_a_session_without_chaos_tests_writes_an_empty_page(
    pytester: pytest.Pytester, private_tmp: Path
) -> None:
    result = run(pytester, "--chaos-html=report.html", source="def test_plain():\n    pass\n")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK  # an empty report is no failure
    text = page_text(pytester.path / "report.html")
    assert "0 chaos test runs: 0 failed (0 with a failing verdict, 0 without one)" in text
    assert "no chaos test ran" in text
    assert re.search(r'<table id="tests">.*<tbody></tbody></table>', text)
    assert "agentchaos: cannot write" not in result.stdout.str()
    assert leftovers(private_tmp) == []


def test_a_session_that_collects_nothing_writes_an_empty_page(
    pytester: pytest.Pytester, private_tmp: Path
) -> None:
    result = pytester.runpytest("--chaos-html=report.html")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert "0 chaos test runs: 0 failed" in page_text(pytester.path / "report.html")
    assert leftovers(private_tmp) == []


def test_an_earlier_page_is_replaced(pytester: pytest.Pytester, private_tmp: Path) -> None:
    (pytester.path / "report.html").write_text("old report")
    run(pytester, "--chaos-html=report.html")
    check_page(pytester.path / "report.html")


# -- xdist -----------------------------------------------------------------------------------

COUNTING_CONFTEST = """
import os
import pytest
import pytest_agentchaos.report.html as report_html

_real = report_html.write_html
LOG = os.path.join(os.path.dirname(__file__), "writes.log")

def _counting(path, *args, **kwargs):
    with open(LOG, "a") as log:
        log.write(f"{os.getpid()}\\n")
    return _real(path, *args, **kwargs)

report_html.write_html = _counting

def pytest_configure(config):
    if not hasattr(config, "workerinput"):
        with open(os.path.join(os.path.dirname(__file__), "controller.pid"), "w") as out:
            out.write(str(os.getpid()))
"""


def test_under_xdist_the_controller_writes_the_page_once_from_the_workers_traces(
    pytester: pytest.Pytester, private_tmp: Path
) -> None:
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(test_agent=SUITE)
    result = pytester.runpytest_subprocess(
        "-p", "xdist", "-n", "2", f"--chaos-seed={SEED}", "-p", "no:randomly",
        "--chaos-html=out/report.html",
    )  # fmt: skip
    result.assert_outcomes(passed=2, failed=1)
    check_page(pytester.path / "out" / "report.html")
    controller = (pytester.path / "controller.pid").read_text()
    assert (pytester.path / "writes.log").read_text().split() == [controller]
    assert leftovers(private_tmp) == []


# -- bad paths: usage errors -----------------------------------------------------------------


def test_an_empty_path_is_a_usage_error(pytester: pytest.Pytester, private_tmp: Path) -> None:
    line = usage_line(run(pytester, "--chaos-html="))
    assert line == "ERROR: pytest-agentchaos: --chaos-html: expected a file, got an empty path"
    assert leftovers(private_tmp) == []


def test_a_directory_is_a_usage_error(pytester: pytest.Pytester, private_tmp: Path) -> None:
    pytester.mkdir("reports")
    line = usage_line(run(pytester, "--chaos-html=reports"))
    assert line == (
        f"ERROR: pytest-agentchaos: --chaos-html: {pytester.path / 'reports'} is a directory, "
        "not a file"
    )
    assert leftovers(private_tmp) == []


@pytest.mark.parametrize("raw", ["file.txt/r.html", "file.txt/deeper/r.html"])
def test_a_path_under_a_regular_file_is_a_usage_error(
    pytester: pytest.Pytester, private_tmp: Path, raw: str
) -> None:
    (pytester.path / "file.txt").write_text("a file")
    line = usage_line(run(pytester, f"--chaos-html={raw}"))
    assert line.startswith(f"ERROR: pytest-agentchaos: --chaos-html: cannot create {pytester.path}")
    assert (pytester.path / "file.txt").read_text() == "a file"
    assert leftovers(private_tmp) == []


# -- a page that cannot be written at the end ------------------------------------------------

# a test of the session itself puts something in the way of the page
REPLACE_FOLDER = "import shutil\n    shutil.rmtree('r')\n    open('r', 'w').close()"
TARGET_DIR = "import os\n    os.mkdir('r/report.html')"


@pytest.mark.parametrize(
    ("in_the_way", "reason"),
    [(REPLACE_FOLDER, "Not a directory"), (TARGET_DIR, "Is a directory")],
    ids=["folder-replaced-by-a-file", "target-is-a-directory"],
)
@pytest.mark.parametrize("report_dir", [False, True], ids=["temp-traces", "report-dir"])
def test_a_page_that_cannot_be_written_is_one_line_and_exit_code_3(
    pytester: pytest.Pytester, private_tmp: Path, in_the_way: str, reason: str, report_dir: bool
) -> None:
    source = SUITE + f"\n\ndef test_zz_in_the_way():\n    {in_the_way}\n"
    args = ["--chaos-report-dir=out"] if report_dir else []
    result = run(pytester, "--chaos-html=r/report.html", *args, source=source)
    result.assert_outcomes(passed=3, failed=1)
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    out = result.stdout.str()
    assert "Traceback" not in out + result.stderr.str()
    lines = [line for line in result.stdout.lines if "cannot write" in line]
    assert lines == [f"agentchaos: cannot write {pytester.path / 'r' / 'report.html'}: {reason}"]
    if report_dir:  # the other artifacts are written all the same
        index = json.loads((pytester.path / "out" / "index.json").read_text(encoding="utf-8"))
        assert [t["node_id"] for t in index["tests"]] == [FAILING, PASSING]
        assert len(list((pytester.path / "out" / "traces").iterdir())) == 2
    if reason == "Is a directory":
        assert os.listdir(pytester.path / "r") == ["report.html"]  # no temporary file left
    assert leftovers(private_tmp) == []


# -- the temporary trace dir is never left behind --------------------------------------------


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("--chaos-baseline=missing.json",), USAGE),
        (("-o", "chaos_baseline_tolerances=steps = 20%"), USAGE),
        (("--help",), pytest.ExitCode.OK),
    ],
    ids=["missing-baseline", "bad-tolerance", "help"],
)
def test_no_temporary_trace_dir_is_left_when_the_session_never_starts(
    pytester: pytest.Pytester, private_tmp: Path, args: tuple[str, ...], code: int
) -> None:
    result = run(pytester, "--chaos-html=report.html", *args)
    assert result.ret == code
    assert leftovers(private_tmp) == []


def test_a_tilde_is_the_home_dir(
    pytester: pytest.Pytester, private_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = pytester.mkdir("home")
    monkeypatch.setenv("HOME", str(home))
    run(pytester, "--chaos-html=~/report.html")
    assert not (pytester.path / "~").exists()
    assert (home / "report.html").is_file()


# -- the page in a browser -------------------------------------------------------------------


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
        pytest.skip(f"the browser test needs Playwright and Chromium: {missing}")
    assert sync_playwright is not None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def test_the_failing_verdict_shows_when_its_row_is_clicked(
    pytester: pytest.Pytester, private_tmp: Path, chromium: Any
) -> None:
    run(pytester, "--chaos-html=report.html")
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto((pytester.path / "report.html").as_uri())
    row = page.locator("#tests tr.test", has_text=FAILING)
    number = row.get_attribute("id").removeprefix("test-")
    detail = page.locator(f"#detail-{number}")
    assert not detail.is_visible()
    row.locator("td.node-id").click()
    assert detail.is_visible()
    failing = detail.locator("li.verdict-fail")
    assert failing.is_visible()
    assert EXPLANATION in failing.inner_text()
    replay = detail.locator(f"#replay-{number}").inner_text()
    assert replay == f"pytest {FAILING} --chaos-seed={SEED}"
    assert detail.locator("svg.timeline-svg rect.mark").count() > 0  # drawn from the trace
    assert errors == []
    page.close()
