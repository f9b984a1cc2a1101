"""Checking a tool's parameter schema when the tool is wrapped, not when a fault first fires."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config import fail
from ..faults.mutations import parameters_schema
from ..saferepr import safe_repr

__all__ = ["check_tool_schema"]


def check_tool_schema(schema: object, where: str) -> Mapping[str, Any]:
    """``schema`` is a tool's parameter JSON Schema (plain, or in the OpenAI / Anthropic tool
    format) that is valid under its draft's meta-schema (Draft 2020-12 unless its ``$schema``
    names another); returns it. Else one ``ChaosConfigError`` line naming where and why."""
    if not isinstance(schema, Mapping):
        raise fail(where, f"expected a JSON Schema object (a dict), got {safe_repr(schema, 80)}")
    inner = parameters_schema(schema)
    import jsonschema  # imported on first use: most runs wrap no schema
    from jsonschema.validators import validator_for

    declared = inner.get("$schema")
    cls = validator_for(inner, default=None)
    if cls is None:
        if declared is not None:
            raise fail(where, f"unknown $schema {safe_repr(declared, 80)}")
        cls = jsonschema.Draft202012Validator
    try:
        cls.check_schema(inner)
    except jsonschema.SchemaError as exc:
        at = exc.json_path if exc.path else "the top level"
        raise fail(where, f"not a valid JSON Schema: {exc.message} (at {at})") from None
    return schema
