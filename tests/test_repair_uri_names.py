"""A name sent as an address of only a scheme and that name (issue 30, kind H: format fixes).

``s3://acme-media`` where a bucket's name is asked is the name ``acme-media``: the address
holds nothing else. An address with a path, a query or a user holds more than the name, and
which part is meant is not a mechanical question: declined."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

_NAME = "^[a-zA-Z0-9.\\-_]{1,63}$"


def _spec() -> ToolSpec:
    return ToolSpec.from_schema(
        "t",
        {
            "type": "object",
            "properties": {"bucket": {"type": "string", "pattern": _NAME}},
            "required": ["bucket"],
        },
    )


@settings(max_examples=40, deadline=None)
@given(
    scheme=st.sampled_from(["s3", "gs", "az", "https", "ftp"]),
    name=st.from_regex(r"[a-z][a-z0-9]{2,10}(?:[.-][a-z0-9]{2,8}){0,2}", fullmatch=True),
    slash=st.booleans(),
)
def test_an_address_of_only_a_name_is_that_name(scheme: str, name: str, slash: bool) -> None:
    sent = f"{scheme}://{name}{'/' if slash else ''}"
    result = ParamRepairer(_spec()).repair({"bucket": sent}, task=f"use {sent}")
    assert result.ok and result.args == {"bucket": name}
    again = ParamRepairer(_spec()).repair(result.args, task=f"use {sent}")
    assert again.ok and again.args == result.args  # its own output is left alone


@pytest.mark.parametrize(
    "sent",
    [
        "s3://acme-media/thumbnails/",  # a path: the key is part of what was asked
        "https://ana@example.com",  # a user
        "https://example.com:8443",  # a port
        "https://example.com/?q=1",  # a query
        "mailto:ana",  # no authority at all
    ],
)
def test_an_address_holding_more_than_a_name_is_declined(sent: str) -> None:
    result = ParamRepairer(_spec()).repair({"bucket": sent}, task=f"use {sent}")
    assert not result.ok, result.args
