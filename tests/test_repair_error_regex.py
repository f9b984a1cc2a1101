"""A regular expression the tool's error quotes as what a value must match (issue 30, kind B:
errors read by their structure). botocore's parameter validation says
``Invalid bucket name "V": Bucket name must match the regex "R"``; the value quoted ties the
error to its field and the regex is the field's pattern, as if the schema had said it."""

from __future__ import annotations

import pytest

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

SPEC = ToolSpec.from_schema(
    "list_objects",
    {
        "type": "object",
        "properties": {"Bucket": {"type": "string"}, "Prefix": {"type": "string"}},
        "required": ["Bucket"],
    },
)
CODE = ToolSpec.from_schema(
    "lookup",
    {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]},
)


def _botocore(value: str) -> str:
    return (
        f'Parameter validation failed:\nInvalid bucket name "{value}": Bucket name must match '
        'the regex "^[a-zA-Z0-9.\\-_]{1,255}$" or be an ARN matching the regex "^arn:(aws).*$"'
    )


@pytest.mark.parametrize(
    "error",
    [
        _botocore("s3://acme-media"),
        "Bucket 's3://acme-media' does not match pattern '^[a-z0-9.-]{3,63}$'",
        "invalid value 's3://acme-media': should match regex `^[a-z0-9-]+$`",
    ],
)
def test_a_quoted_regex_is_the_fields_pattern(error: str) -> None:
    args = {"Bucket": "s3://acme-media", "Prefix": "thumbnails/"}
    result = ParamRepairer(SPEC).repair(args, error=error, task="List s3://acme-media/thumbnails/.")
    assert result.ok and result.args == {"Bucket": "acme-media", "Prefix": "thumbnails/"}


@pytest.mark.parametrize(
    ("value", "error"),
    [
        # the address holds a key too: which part is the bucket is no mechanical question
        ("s3://acme-media/2026/", _botocore("s3://acme-media/2026/")),
        # the value needs more than a mechanical change to match
        ("Acme Media Photos", _botocore("Acme Media Photos").replace("{1,255}", "{1,8}")),
    ],
)
def test_a_value_no_mechanical_change_fits_is_declined(value: str, error: str) -> None:
    result = ParamRepairer(SPEC).repair({"Bucket": value}, error=error, task=f"list {value}")
    assert not result.ok, result.args


def test_case_is_fixed_to_the_quoted_pattern_and_a_broken_regex_is_ignored() -> None:
    said = 'Invalid code "ab12": code must match the regex "^[A-Z]{2}[0-9]{2}$"'
    result = ParamRepairer(CODE).repair({"code": "ab12"}, error=said, task="look up ab12")
    assert result.ok and result.args == {"code": "AB12"}
    broken = 'Invalid code "ab12": code must match the regex "^[A-Z{2$"'
    result = ParamRepairer(CODE).repair({"code": "ab12"}, error=broken, task="look up ab12")
    assert result.args != {"code": "AB12"}
