"""An object (or list) sent where the tool takes text, that the task writes as JSON text
(issue 30, kind H: shapes). The task's own text is sent, byte for byte: botocore refuses a
dict for SQS's ``MessageBody`` although the user wrote the JSON to send."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

SPEC = ToolSpec.from_schema(
    "send",
    {
        "type": "object",
        "properties": {"queue": {"type": "string"}, "body": {"type": "string"}},
        "required": ["queue", "body"],
    },
)

_OBJECTS = st.dictionaries(
    st.from_regex(r"[a-z]{1,8}", fullmatch=True),
    st.one_of(st.integers(-999, 999), st.from_regex(r"[A-Z]{3}-[0-9]{2,5}", fullmatch=True)),
    min_size=1,
    max_size=4,
)


@settings(max_examples=40, deadline=None)
@given(value=_OBJECTS, compact=st.booleans())
def test_the_tasks_own_json_text_is_sent(value: dict[str, Any], compact: bool) -> None:
    written = json.dumps(value, separators=(",", ":") if compact else None)
    task = f"Send the JSON {written} to orders-dlq."
    result = ParamRepairer(SPEC).repair({"queue": "orders-dlq", "body": value}, task=task)
    assert result.ok and result.args == {"queue": "orders-dlq", "body": written}


@pytest.mark.parametrize(
    "task",
    [
        "Send the order to orders-dlq.",  # the task writes no JSON: which text is not ours
        'Send {"sku": "SKU-2"} to orders-dlq.',  # another object than the one sent
        'Send {"sku": "SKU-1"} or {"sku":"SKU-1"} to orders-dlq.',  # two spellings of it
    ],
)
def test_an_object_the_task_does_not_write_once_is_declined(task: str) -> None:
    result = ParamRepairer(SPEC).repair(
        {"queue": "orders-dlq", "body": {"sku": "SKU-1"}}, task=task
    )
    assert not result.ok, result.args
