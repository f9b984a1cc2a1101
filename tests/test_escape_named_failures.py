"""Failures a tool returns as data under its API's naming conventions (issue 29, loops): a
GraphQL or JSON:API ``errors`` list, an error code that is not zero (``errcode``,
``errorCode``), an error message with no code saying there is none. A state field saying
"failed" describes the record fetched (a failed build being triaged), not the call, and a
message saying "success" or "none" is no error. The same such failure while only ids and tokens
in the arguments vary is a streak; errors that name a new field each time are the agent moving
on. Hostile values (cyclic ``errors``, a code object whose ``str`` raises) never hang or raise.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pytest_agentchaos.escape.failures import failure_text, has_failure_field

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loop_alarms import alarms  # noqa: E402


def _errors(message: str, detail: str) -> dict[str, Any]:
    """A GraphQL error body: a generic message, the detail in its extensions."""
    return {"data": None, "errors": [{"message": message, "extensions": {"detail": detail}}]}


def test_named_failures_are_read_and_successes_are_not() -> None:
    gql = _errors("Invalid input", "tags.0 must be a UUID")
    assert failure_text(gql) == "Invalid input: tags.0 must be a UUID"
    assert failure_text({"errcode": 40014, "errmsg": "invalid access_token"}) == (
        "40014: invalid access_token"
    )
    assert failure_text({"errcode": 0, "errmsg": "ok", "msgid": "m1"}) is None
    build = {"id": "b_1", "buildState": "FAILED", "errorMessage": "tsc exited with 2"}
    assert failure_text(build) == "tsc exited with 2"
    assert failure_text({"id": "b_2", "buildState": "READY"}) is None
    assert failure_text({"errors": [], "data": {"ok": 1}}) is None
    assert has_failure_field({"errcode": 0}) and not has_failure_field({"id": 1})
    # a count or a rate of errors is a measurement, not a failure
    assert failure_text({"error_count": 3, "errorRate": 0.02}) is None


def _create(token: str, result: dict[str, Any]) -> dict[str, Any]:
    args = {"team": "WEB", "title": "Checkout broken on Safari", "labels": ["bug"],
            "clientMutationId": token}  # fmt: skip
    return {"tool": "issue_create", "args": args, "result": json.dumps(result)}


def test_the_same_named_failure_while_only_a_token_varies_is_a_streak() -> None:
    error = _errors("Argument Validation Error", "labels.0 must be a UUID")
    actions = []
    for n, token in enumerate(["k3f9a", "p8d2c", "z7q1m", "r5t0w"]):
        actions.append(_create(token, {**error, "requestId": f"req-{n}a8f3c2"}))
        actions.append({"model": "m", "output": "Retrying with a fresh mutation id."})
    assert alarms(actions)


def test_named_failures_that_name_a_new_field_each_time_are_no_streak() -> None:
    details = ["team must be a UUID", "labels.0 must be a UUID", "priority must be 0 to 4"]
    actions = [
        _create(
            f"t{n}",
            {
                "data": None,
                "errors": [{"message": "Argument Validation Error", "extensions": {"detail": d}}],
            },
        )  # fmt: skip
        for n, d in enumerate(details)
    ]
    assert not alarms(actions)


def test_a_deploy_that_fails_with_the_same_build_error_under_new_ids_is_a_streak() -> None:
    actions = []
    for n in range(4):
        result = {"id": f"dep_{n}x9c2e7", "readyState": "ERROR",
                  "errorMessage": "next build exited with 1: Type error in cart.ts"}  # fmt: skip
        actions.append({"tool": "redeploy", "args": {"deploymentId": f"dep_{n}77f0a1"},
                        "result": json.dumps(result)})  # fmt: skip
    assert alarms(actions)


def _triage(field: str) -> list[dict[str, Any]]:
    """An agent reading six different failed CI builds, one each: healthy triage."""
    return [
        {
            "tool": "get_build",
            "args": {"repo": repo, "build_id": 1000 + n * 37},
            "result": {"id": 1000 + n * 37, "repo": repo, field: "failed"},
        }  # fmt: skip
        for n, repo in enumerate(["web", "api", "worker", "billing", "auth", "search"])
    ]


def test_records_whose_state_says_failed_are_data_not_failed_calls() -> None:
    for field in ("buildStatus", "paymentState", "build_state", "estate", "status"):
        assert failure_text({"id": 7, field: "failed"}) is None, field
        assert not alarms(_triage(field)), field


def test_a_failed_status_with_error_text_or_only_call_metadata_is_a_failed_call() -> None:
    assert failure_text({"status": "failed", "message": "timeout after 30s"}) is not None
    assert failure_text({"status": "error", "message": "quota", "id": 7}) is not None  # JSend
    assert failure_text({"status": "failed", "request_id": "r-9"}) is not None


def test_a_message_saying_there_is_no_error_is_no_failure() -> None:
    for result in (
        {"status": "ok", "errmsg": "success", "msgid": "m1"},
        {"success": True, "errorMessage": "none"},
        {"errorMessage": "No errors"},
        {"errcode": 0.0, "errmsg": "ok"},
        {"ok": True, "error_message": "Something odd"},
    ):
        assert failure_text(result) is None, result
    sends = [
        {
            "tool": "send_msg",
            "args": {"to": user},
            "result": {"status": "ok", "errmsg": "success", "msgid": f"m{n}"},
        }  # fmt: skip
        for n, user in enumerate(["ann", "bob", "cat", "dan", "eve", "fay"])
    ]
    assert not alarms(sends)


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("str")

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    __hash__ = object.__hash__


def test_hostile_error_values_neither_hang_nor_raise() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    shared: list[Any] = [1]
    for _ in range(8):
        shared = [shared] * 32  # 32**8 paths through one list
    for errors in (cyclic, shared, {"a": shared}):
        text = failure_text({"errors": errors})
        assert text is None or isinstance(text, str)
    assert failure_text({"errcode": _Unprintable()}) is None
    actions = [
        {"tool": "t", "args": {"n": n}, "result": {"errcode": _Unprintable()}} for n in range(4)
    ]
    alarms(actions)  # must not raise


def test_an_errors_value_holding_no_error_is_no_failure() -> None:
    for errors in ({"count": 0}, {"email": [], "name": []}, [None], [{}]):
        assert failure_text({"imported": 3, "errors": errors}) is None, errors
    imports = [
        {
            "tool": "import_rows",
            "args": {"file": f"part-{n}.csv"},
            "result": {"imported": 100 + n, "errors": {"count": 0}},
        }  # fmt: skip
        for n in range(6)
    ]
    assert not alarms(imports)


def test_hostile_status_error_codes_and_keys_never_raise() -> None:
    for result in (
        {"status": _Unprintable()},
        {"error": _Unprintable()},
        {"errcode": 10**5000},
        {7: 1, (1, 2): 2, "errcode": 3},
    ):
        text = failure_text(result)
        assert text is None or isinstance(text, str)
    assert failure_text({"error": 0}) is None and failure_text({"error": 2}) is not None
