"""Under frozen or virtual time, `datetime.date` / `datetime.datetime` are freezegun's fakes:
pydantic must still build schemas for models, adapters and framework tools with date fields
made during the run (a pydantic-ai tool with a `date` parameter failed to build before)."""

from __future__ import annotations

import datetime

import pydantic
import pytest


@pytest.mark.parametrize("mode", [{"virtual_sleep": True}, {"freeze_time": True}])
def test_pydantic_builds_date_schemas_under_frozen_time(make_chaos, mode):
    make_chaos(**mode)
    adapter = pydantic.TypeAdapter(datetime.date)
    assert adapter.validate_python("2026-11-27") == datetime.date(2026, 11, 27)

    class Trip(pydantic.BaseModel):
        day: datetime.date
        at: datetime.datetime

    trip = Trip(day="2026-01-02", at="2026-01-02T10:00:00")
    assert (trip.day.year, trip.at.hour) == (2026, 10)
    assert Trip.model_json_schema()["properties"]["day"]["format"] == "date"
