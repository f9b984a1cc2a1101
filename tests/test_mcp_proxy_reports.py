"""The report files of a chaos MCP proxy run (``--report-dir``, ``--html``): the plugin's own
files, valid against their shipped schemas, read back by the plugin's readers; the replay
command they hold replays the run; a crashed run is a failed entry; a report that cannot be
written is one line and exit 1."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp_helpers import PROXY, SHOP_ARGS, RawClient, new_token, processes
from mcp_helpers import mcp as _sdk  # noqa: F401 - imported first: it skips this module without the SDK

from pytest_agentchaos.harness.replay import load_source  # noqa: E402
from pytest_agentchaos.report.artifacts import schema_path  # noqa: E402
from pytest_agentchaos.trace import Trace  # noqa: E402

SHOP = (sys.executable, *SHOP_ARGS)


def session(argv: list[str], token: str | None = None) -> tuple[list[Any], int, str]:
    """Ten calls through the proxy: the answers, its exit status and its stderr."""
    client = RawClient(argv, token or new_token())
    client.handshake()
    answers = []
    for n in range(10):
        answer = client.call("search_products", {"query": "running", "limit": 1 + n % 2})
        answers.append(answer.get("error") or answer["result"])
    code, stderr = client.close()
    return answers, code, stderr


def valid(document: Any, name: str) -> None:
    schema = json.loads(schema_path(name).read_text())
    jsonschema.validate(document, schema)


QUICK = """
[[faults]]
kind = "http_error"
status = [500, 503]
probability = 0.3

[[faults]]
kind = "empty_output"
probability = 0.2
"""


def test_the_report_dir_and_html_are_the_plugins_files_and_replay_the_run(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "quick.toml").write_text(QUICK)
    report = tmp_path / "report"
    html = tmp_path / "report.html"
    trace_file = tmp_path / "run.json"
    token = new_token()
    argv = [*PROXY, "--profile-dir", str(profiles), "--profile", "quick", "--seed", "5",
            "--trace", str(trace_file),
            "--report-dir", str(report), "--html", str(html), "--", *SHOP]  # fmt: skip
    answers, code, stderr = session(argv, token)
    assert code == 0, stderr
    assert stderr.splitlines()[-1].endswith(
        f"; trace: {trace_file}; report: {report}; HTML report: {html}"
    )
    index = json.loads((report / "index.json").read_text())
    valid(index, "index")
    (entry,) = index["tests"]
    assert (entry["node_id"], entry["profile"], entry["test_seed"], entry["outcome"]) == (
        "agentchaos-mcp", "quick", 5, "passed"
    )  # fmt: skip
    assert entry["trace"].startswith("traces/agentchaos-mcp-") and entry["trace"].endswith(".json")
    written = json.loads((report / entry["trace"]).read_text())
    valid(written, "trace")
    assert written["events"] == json.loads(trace_file.read_text())["events"]
    faults = Trace.from_json(trace_file.read_text()).fault_counts()
    assert faults and index["profiles"]["quick"]["faults"] == faults
    assert "agentchaos-mcp" in html.read_text()
    assert processes(token) == []

    # the replay command the index gives, run as it is: the same answers
    replay = shlex.split(entry["replay"])
    assert replay[:5] == ["agentchaos-mcp", "--chaos-replay", str(report / entry["trace"]),
                          "--profile-dir", str(profiles)]  # fmt: skip
    again, code, stderr = session([*PROXY, *replay[1:]])
    assert code == 0, stderr
    assert again == answers
    # and the report dir itself is a replay source, as the plugin's are
    source = load_source(str(report), tmp_path)
    assert (
        source.recorded("agentchaos-mcp").schedule
        == Trace.from_json(trace_file.read_text()).schedule()
    )


def test_a_crashed_run_is_a_failed_entry_with_its_reason(tmp_path: Path) -> None:
    report = tmp_path / "report"
    client = RawClient([*PROXY, "--report-dir", str(report), "--", *SHOP], new_token())
    client.handshake()
    client.call("crash", {})
    code, stderr = client.close()
    assert code == 1
    index = json.loads((report / "index.json").read_text())
    valid(index, "index")
    (entry,) = index["tests"]
    assert entry["outcome"] == "failed"
    assert index["profiles"]["none"]["failed"] == 1
    trace = Trace.from_json((report / entry["trace"]).read_text())
    assert trace.tool_results("crash")[0].message == "Connection closed"
    assert stderr.splitlines()[-1].startswith("agentchaos-mcp: the MCP server exited with code 3;")


@pytest.mark.parametrize("option", ["--report-dir", "--html"])
def test_a_report_that_cannot_be_written_is_one_line_and_exit_1(
    tmp_path: Path, option: str
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way")
    target = blocker / "report" if option == "--report-dir" else blocker / "report.html"
    answers, code, stderr = session([*PROXY, option, str(target), "--", *SHOP])
    assert code == 1
    lines = stderr.splitlines()
    assert lines[-2].startswith(f"agentchaos-mcp: error: cannot write {target}")
    assert lines[-1].startswith("agentchaos-mcp: the client closed the connection; 10 tool calls")
    assert len(answers) == 10  # the session itself was served


def test_reading_a_trace_the_proxy_has_not_written_says_why_even_on_frozen_time(
    tmp_path: Path,
) -> None:
    # a user calling proxy.trace() while the agent's MCP client still holds the session open
    # (pydantic-ai's MCPToolset keeps a stdio server alive between runs) got a bare
    # FileNotFoundError; and inside a chaos test time.monotonic is frozen, so the wait for
    # the file must run on real time or it would never end
    from pytest_agentchaos.adapters.mcp_client.fixture import McpProxy
    from pytest_agentchaos.clock import VirtualClock
    from pytest_agentchaos.clock.patch import install

    proxy = McpProxy(argv=("agentchaos-mcp",), trace_path=tmp_path / "mcp-proxy-1.json")
    installed = install(VirtualClock(), patch_sleep=True)
    try:
        with pytest.raises(FileNotFoundError, match="has written no trace at .*keep_alive=False"):
            proxy.trace(timeout=0.3)
    finally:
        installed.uninstall()
    (tmp_path / "mcp-proxy-1.json").write_text(Trace().to_json())
    assert len(proxy.trace()) == 0
