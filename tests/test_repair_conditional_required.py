"""An error that quotes a value of the call as the condition and names a declared field the
call lacks ("cancel_reason is required when status is 'cancelled'", "改派地址 new_address 不能为空"
after the quoted reason): the missing field is the problem, not the quoted value, so a model
is asked for the field the tool wants."""

from __future__ import annotations

import pytest

from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.repair.diagnose import read_error
from pytest_agentchaos.repair.proposers import scripted_model

SCHEMA = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string"},
        "status": {"type": "string", "enum": ["open", "cancelled"]},
        "cancel_reason": {"type": "string"},
    },
    "required": ["order_id", "status"],
}
SENT = {"order_id": "A1", "status": "cancelled"}
ERRORS = [
    "cancel_reason is required when status is 'cancelled'",
    "当状态为“cancelled”时，cancel_reason 不能为空",
]


@pytest.mark.parametrize("error", ERRORS)
def test_the_named_absent_field_is_the_problem(error: str) -> None:
    reading = read_error(error, ToolSpec.from_schema("update_order", SCHEMA), SENT)
    # (a refused value at a path the call lacks is read as missing by the repairer)
    assert [p.path for p in reading.problems] == [("cancel_reason",)]
    assert reading.problems[0].kind in ("missing", "rejected")


@pytest.mark.parametrize("error", ERRORS)
def test_the_model_is_asked_for_the_missing_field(error: str) -> None:
    want = {**SENT, "cancel_reason": "customer changed their mind"}
    result = ParamRepairer(
        ToolSpec.from_schema("update_order", SCHEMA), model=scripted_model(want)
    ).repair(SENT, error, "Cancel order A1: the customer changed their mind.")
    assert result.ok, result.reason
    assert result.args == want


def test_a_quoted_value_beside_a_field_the_call_has_stays_the_problem() -> None:
    error = "status 'cancelled' is not allowed for order_id A1"
    reading = read_error(error, ToolSpec.from_schema("update_order", SCHEMA), SENT)
    assert all(p.kind != "missing" for p in reading.problems)
