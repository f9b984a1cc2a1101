"""Checking a tool's parameter schema when the tool is wrapped, not when a fault first fires."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config import fail
from ..faults.mutations import parameters_schema
from ..saferepr import safe_repr, safe_str

__all__ = ["check_tool_schema", "check_tool_wrapper"]


def check_tool_schema(schema: object, where: str) -> Mapping[str, Any]:
    """``schema`` is a tool's parameter JSON Schema (plain, or in the OpenAI / Anthropic tool
    format) that is valid under its draft's meta-schema (Draft 2020-12 unless its ``$schema``
    names another); returns it. Else one ``ChaosConfigError`` line naming where and why."""
    __tracebackhide__ = True
    if not isinstance(schema, Mapping):
        raise fail(where, f"expected a JSON Schema object (a dict), got {safe_repr(schema, 80)}")
    check_tool_wrapper(schema, where)
    inner = parameters_schema(schema)
    if _depth(inner) > MAX_SCHEMA_DEPTH:
        raise fail(where, f"not a valid JSON Schema: nested deeper than {MAX_SCHEMA_DEPTH} levels")
    import jsonschema  # imported on first use: most runs wrap no schema
    from jsonschema.validators import validator_for

    declared = inner.get("$schema")
    if declared is not None and not isinstance(declared, str):
        raise fail(where, f"unknown $schema {safe_repr(declared, 80)}")
    cls = validator_for(inner, default=None)
    if cls is None:
        if declared is not None:
            raise fail(where, f"unknown $schema {safe_repr(declared, 80)}")
        cls = jsonschema.Draft202012Validator
    try:
        cls.check_schema(inner)
    except jsonschema.SchemaError as exc:
        at = exc.json_path if exc.path else "the top level"
        message = safe_str(exc.message, 200)
        raise fail(where, f"not a valid JSON Schema: {message} (at {at})") from None
    return schema


def check_tool_wrapper(schema: Mapping[str, Any], where: str) -> None:
    """A tool definition in the OpenAI or Anthropic format holds its parameter schema as a
    dict: ``{"type": "function", "function": {..., "parameters": {...}}}``, the flat
    ``{"type": "function", "name": ..., "parameters": {...}}`` or ``{"input_schema": {...}}``.
    (Neither ``function``, ``parameters`` nor ``input_schema`` is a JSON Schema keyword, so a
    plain schema never has them at its top level.)"""
    __tracebackhide__ = True
    outer = schema
    if "function" in schema:
        function = schema["function"]
        if isinstance(function, Mapping):
            outer, where = function, f"{where}: function"
        elif schema.get("type") == "function":
            raise fail(
                f"{where}: function",
                "expected the function's definition (a dict with name, description and "
                f"parameters), got {safe_repr(function, 80)}",
            )
    for key in ("parameters", "input_schema"):
        if key in outer and not isinstance(outer[key], Mapping):
            raise fail(
                f"{where}: {key}",
                f"expected a JSON Schema object (a dict), got {safe_repr(outer[key], 80)}",
            )


#: How deep a tool's parameter schema may nest (real ones: a handful of levels).
MAX_SCHEMA_DEPTH = 64


def _depth(value: Any) -> int:
    """How deep dicts and lists nest in ``value``, counted without recursion (stops early)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        current, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > MAX_SCHEMA_DEPTH:
                break
        if isinstance(current, Mapping):
            stack.extend((v, depth + 1) for v in current.values())
        elif isinstance(current, list):
            stack.extend((v, depth + 1) for v in current)
    return deepest
