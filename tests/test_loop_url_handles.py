"""An HTTP request's URL path read as arguments (issue 29, loops): a run id a trigger
returned and the agent passes back in the path (``GET .../dagRuns/<id>``) is a handle there,
as in an argument, so laps that re-trigger a job and read the fresh run key alike. A path the
agent chose itself (another item, another report) stays what it asks for."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.escape.keys import Keyer
from pytest_agentchaos.escape.urls import url_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loop_alarms import alarms  # noqa: E402

BASE = "https://ci.example/api/jobs/export"


def lap(run: str) -> list[dict[str, Any]]:
    """Trigger a run (the result issues its id), read its status and its log by that id."""
    return [
        {"tool": f"POST {BASE}/runs", "args": {}, "channel": "http",
         "result": json.dumps({"run_id": run, "state": "queued"})},
        {"tool": f"GET {BASE}/runs/{run}", "args": {}, "channel": "http",
         "result": json.dumps({"run_id": run, "state": "failed"})},
        {"tool": f"GET {BASE}/runs/{run}/log", "args": {}, "channel": "http",
         "result": "KeyError: 'customer_tier'"},
    ]  # fmt: skip


def test_a_fresh_run_id_passed_back_in_the_path_is_a_handle() -> None:
    runs = ["run_8f3a21", "run_c07d9e", "run_51b6f0", "run_e2a913"]
    assert alarms([a for run in runs for a in lap(run)])


def test_paths_the_agent_chose_stay_apart() -> None:
    # each report named by the agent (no result issued it): another report, no loop
    actions = [
        {"tool": f"GET {BASE}/reports/2026-11-{day:02d}", "args": {}, "channel": "http",
         "result": "rows: 0"}
        for day in range(1, 7)
    ]  # fmt: skip
    assert not alarms(actions)
    keyer = Keyer()
    keys = {keyer.tool(a["tool"], {}, result="rows: 0", channel="http") for a in actions}
    assert len(keys) == len(actions)


def test_a_short_segment_is_never_a_handle() -> None:
    keyer = Keyer()
    keyer.tool("list_routes", {}, result=["/v1/invoices", "/v2/invoices"])
    one = keyer.tool("GET https://h.example/v1/invoices/0042", {}, result="[]", channel="http")
    two = keyer.tool("GET https://h.example/v2/invoices/0042", {}, result="[]", channel="http")
    assert one != two
    assert one.tool == "GET https://h.example/v1/invoices/0042"


SEGMENT = st.text("abz09_-.~", min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["GET ", "POST ", ""]), st.lists(SEGMENT, min_size=1, max_size=6),
       st.sampled_from(["", "?page=2", "?a=1&b=x#f"]))  # fmt: skip
def test_a_request_split_at_its_path_names_it_again(
    method: str, segments: list[str], tail: str
) -> None:
    tool = f"{method}https://h.example/{'/'.join(segments)}{tail}"
    url = url_path(tool)
    if not any(c.isdigit() for c in "/".join(segments)):
        assert url is None  # no segment that could be a handle
        return
    assert url is not None
    assert url.name(url.segments) == tool
    assert "*" in url.template or not any(c.isdigit() for c in "".join(url.segments))
