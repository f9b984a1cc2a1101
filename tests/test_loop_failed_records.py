"""A ``status`` "failed" is the call's failure only when nothing else in the result is data of
its own: triaging failed jobs (each result a record whose state is "failed") is work, while
the same call failing with nothing but call metadata (a request id, a timestamp) is a failure."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_agentchaos.escape.failures import failure_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loop_alarms import alarms  # noqa: E402

JOBS = ["etl-nightly", "billing-sync", "search-reindex", "thumbnail-gen", "invoice-export"]


@pytest.mark.parametrize("as_json", [False, True])
def test_triaging_failed_jobs_one_by_one_is_no_loop(as_json: bool) -> None:
    actions: list[dict[str, Any]] = [{"tool": "list_failed", "args": {}, "result": {"jobs": JOBS}}]
    for job in JOBS:
        record = {"job": job, "status": "failed", "owner": "data-eng"}
        result = json.dumps(record) if as_json else record
        actions.append({"tool": "get_job", "args": {"job": job}, "result": result})
    assert not alarms(actions)


def test_a_call_failing_with_only_call_metadata_is_still_a_failure() -> None:
    assert failure_text({"status": "failed", "request_id": "r-1", "timestamp": 1}) is not None
    assert failure_text({"status": "error", "message": "quota exceeded", "job": "x"})
    assert failure_text({"status": "failed"}) is not None
    assert failure_text({"job": "etl-7", "status": "failed", "reason": "OOM"}) is None
    # "error" is the call's own status (JSend), beside data or not; an empty message or
    # output is no record's data
    assert failure_text({"status": "error", "job": "x"}) is not None
    assert failure_text({"status": "failure", "output": ""}) is not None


def test_the_same_failing_call_with_fresh_request_ids_is_a_loop() -> None:
    actions = [
        {
            "tool": "start_export",
            "args": {"dataset": "orders", "nonce": f"n{i:04d}"},
            "result": {"status": "failed", "request_id": f"req-{9120 + i * 37}"},
        }
        for i in range(6)
    ]
    assert alarms(actions)
