"""Repairs that rest on evidence rather than word lists, kind by kind (issue 30): a default the
description gives for when the user states none, parameter names matched by what the schema
itself says, and the declines that stay declines when the evidence is missing or ambiguous."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

# the MCP reference time server's convert_time schema, as the server lists it (local zone UTC)
CONVERT_TIME = ToolSpec.from_schema(
    "convert_time",
    {
        "type": "object",
        "properties": {
            "source_timezone": {
                "type": "string",
                "description": "Source IANA timezone name (e.g., 'America/New_York', "
                "'Europe/London'). Use 'UTC' as local timezone if no source timezone provided "
                "by the user.",
            },
            "time": {"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"},
            "target_timezone": {
                "type": "string",
                "description": "Target IANA timezone name (e.g., 'Asia/Tokyo', "
                "'America/San_Francisco'). Use 'UTC' as local timezone if no target timezone "
                "provided by the user.",
            },
        },
        "required": ["source_timezone", "time", "target_timezone"],
    },
)


# -- a default for when the user states none ---------------------------------------------------


def test_a_removed_target_zone_is_declined_not_filled_with_the_local_zone_default() -> None:
    # the call lost its target zone on the way; without the task nothing shows the user gave
    # none, so the description's "use 'UTC' if no target timezone provided" does not apply
    result = ParamRepairer(CONVERT_TIME).repair({"source_timezone": "UTC", "time": "16:00"})
    assert not result.ok, result.args
    assert "target_timezone" in result.reason


def test_a_removed_target_zone_the_task_names_is_taken_from_the_task() -> None:
    result = ParamRepairer(CONVERT_TIME).repair(
        {"source_timezone": "UTC", "time": "16:00"}, task="What is 16:00 UTC in Tokyo?"
    )
    assert result.ok and result.args == {
        "source_timezone": "UTC",
        "time": "16:00",
        "target_timezone": "Asia/Tokyo",
    }


def test_the_local_zone_default_holds_where_the_task_gives_no_source_zone() -> None:
    result = ParamRepairer(CONVERT_TIME).repair(
        {"time": "09:30", "target_timezone": "Asia/Singapore"},
        task="What's 09:30 here in Singapore time?",
    )
    assert result.ok and result.args["source_timezone"] == "UTC"


def test_a_default_stated_as_a_fact_fills_a_required_field_without_a_task() -> None:
    spec = ToolSpec.from_schema(
        "videos",
        {
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "part": {"type": "string", "description": "Resource parts. Default: snippet,id"},
            },
            "required": ["q", "part"],
        },
    )
    result = ParamRepairer(spec).repair({"q": "sourdough"})
    assert result.ok and result.args == {"q": "sourdough", "part": "snippet,id"}


@settings(max_examples=40, deadline=None)
@given(
    zone=st.sampled_from(["Asia/Tokyo", "Europe/Berlin", "America/Chicago", "Australia/Sydney"]),
    time=st.sampled_from(["08:00", "16:45", "23:10"]),
    removed=st.sampled_from(["source_timezone", "target_timezone"]),
)
def test_a_removed_zone_is_never_filled_without_a_task(zone: str, time: str, removed: str) -> None:
    call: dict[str, Any] = {"source_timezone": "UTC", "time": time, "target_timezone": zone}
    del call[removed]
    result = ParamRepairer(CONVERT_TIME).repair(call)
    assert not result.ok, result.args


@pytest.mark.parametrize("removed", ["source_timezone", "target_timezone"])
def test_a_present_zone_is_never_replaced_by_the_default(removed: str) -> None:
    call = {"source_timezone": "Europe/Paris", "time": "10:00", "target_timezone": "Asia/Tokyo"}
    kept = next(k for k in ("source_timezone", "target_timezone") if k != removed)
    del call[removed]
    result = ParamRepairer(CONVERT_TIME).repair(call)
    assert not result.ok or result.args[kept] == call[kept]
