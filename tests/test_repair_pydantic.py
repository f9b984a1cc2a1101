"""ToolSpec.from_function reads pydantic models (pydantic is a dev dependency; the stack
never imports it itself)."""

from __future__ import annotations

from typing import Annotated

import pytest

pydantic = pytest.importorskip("pydantic")

from pytest_agentchaos.repair import ParamRepairer, ToolSpec  # noqa: E402


class Address(pydantic.BaseModel):
    city: str
    zip_code: str = pydantic.Field(pattern=r"^\d{5}$")


class Passenger(pydantic.BaseModel):
    name: str
    age: int = pydantic.Field(ge=0, le=120)
    address: Address


def book(
    passengers: list[Passenger],
    seat: Annotated[str, pydantic.Field(pattern=r"^\d{1,2}[A-F]$", description="Seat")] = "1A",
) -> None:
    """Book seats."""


ADDRESS = {"city": "Oslo", "zip_code": "01234"}


def test_nested_models_become_refs_that_resolve_at_the_root() -> None:
    spec = ToolSpec.from_function(book)
    assert "Address" in spec.parameters["$defs"]  # the nested model, its ref at the root
    assert spec.properties["passengers"]["items"]["title"] == "Passenger"
    assert spec.properties["seat"]["pattern"] == r"^\d{1,2}[A-F]$"
    assert spec.properties["seat"]["description"] == "Seat"
    assert spec.is_valid({"passengers": [{"name": "Ann", "age": 30, "address": ADDRESS}]})
    assert not spec.is_valid({"passengers": [{"name": "Ann", "age": 130, "address": ADDRESS}]})


def test_a_call_of_a_pydantic_tool_is_repaired_inside_its_models() -> None:
    spec = ToolSpec.from_function(book)
    bad = {"passengers": [{"name": "Ann", "age": "30", "address": ADDRESS}], "seat": "12a"}
    result = ParamRepairer(spec).repair(bad)
    assert result.ok
    assert result.args == {
        "passengers": [{"name": "Ann", "age": 30, "address": ADDRESS}],
        "seat": "12A",
    }
