"""A Python function's parameters as JSON Schema, read from its signature and type hints.

``Literal`` becomes ``enum``, ``Annotated`` bounds (``annotated_types`` or pydantic's
``Field``) become ``minimum``/``maximum``/``minLength``..., defaults become ``default`` (and
leave ``required``), ``date``/``datetime``/``UUID`` become strings with their ``format``,
enums their values, dataclasses and ``TypedDict`` objects, and a pydantic model its own
``model_json_schema()`` when pydantic is installed (it is never imported here otherwise).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import inspect
import re
import sys
import types
import typing
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["function_schema"]

_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    bytes: {"type": "string"},
    _dt.datetime: {"type": "string", "format": "date-time"},
    _dt.date: {"type": "string", "format": "date"},
    _dt.time: {"type": "string", "format": "time"},
    uuid.UUID: {"type": "string", "format": "uuid"},
}

#: Bound attributes of ``annotated_types`` / pydantic metadata -> JSON Schema keywords.
_BOUNDS = {
    "ge": "minimum",
    "le": "maximum",
    "gt": "exclusiveMinimum",
    "lt": "exclusiveMaximum",
    "min_length": "minLength",
    "max_length": "maxLength",
    "multiple_of": "multipleOf",
    "pattern": "pattern",
}
_LENGTHS = {"minLength": "minItems", "maxLength": "maxItems"}


def function_schema(fn: Callable[..., Any]) -> tuple[str, str, dict[str, Any]]:
    """``(name, description, parameters schema)`` of ``fn``. ``*args`` is ignored;
    ``**kwargs`` allows other keys (else ``additionalProperties`` is false)."""
    target = inspect.unwrap(fn)
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"cannot read the signature of {fn!r}: {exc}") from None
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception:  # a hint that does not resolve: read the raw annotations
        hints = {name: p.annotation for name, p in signature.parameters.items()}
    doc = inspect.getdoc(target) or ""
    described = _arg_docs(doc)
    properties: dict[str, Any] = {}
    required: list[str] = []
    extra = False
    for name, param in signature.parameters.items():
        if param.kind is param.VAR_POSITIONAL or name in ("self", "cls"):
            continue
        if param.kind is param.VAR_KEYWORD:
            extra = True
            continue
        hint = hints.get(name, param.annotation)
        schema = type_schema(hint) if hint is not inspect.Parameter.empty else {}
        if name in described and "description" not in schema:
            schema = {**schema, "description": described[name]}
        if param.default is inspect.Parameter.empty:
            required.append(name)
        elif _json_able(param.default):
            schema = {**schema, "default": param.default}
        properties[name] = schema
    schema = {"type": "object", "properties": properties, "additionalProperties": extra}
    if required:
        schema["required"] = required
    defs = _hoist_defs(properties)
    if defs:  # pydantic's "#/$defs/..." refs resolve against the tool's schema, its root
        schema["$defs"] = defs
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return name, _summary(doc), schema


def _hoist_defs(value: Any) -> dict[str, Any]:
    """The ``$defs`` of nested (pydantic) schemas, taken out of them to be put at the root."""
    found: dict[str, Any] = {}
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            defs = item.pop("$defs", None)
            if isinstance(defs, dict):
                found.update(defs)
                stack.extend(defs.values())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def type_schema(hint: Any) -> dict[str, Any]:
    """The JSON Schema of one type hint (``{}``, anything, for what it cannot express)."""
    if hint is Any or hint is inspect.Parameter.empty:
        return {}
    if isinstance(hint, str):  # an annotation that did not resolve
        return {}
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        return _annotated(type_schema(args[0]), args[1:])
    if origin is typing.Literal:
        values = [a.value if isinstance(a, enum.Enum) else a for a in args]
        schema: dict[str, Any] = {"enum": values}
        kinds = {_json_type(v) for v in values}
        if len(kinds) == 1 and None not in kinds:
            schema["type"] = kinds.pop()
        return schema
    if origin is typing.Union or (sys.version_info >= (3, 10) and origin is types.UnionType):
        return {"anyOf": [type_schema(a) for a in args]}
    if origin in (list, set, frozenset, Sequence, typing.Sequence) or hint in (list, set):
        item = type_schema(args[0]) if args else {}
        return {"type": "array", "items": item} if item else {"type": "array"}
    if origin is tuple or hint is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": type_schema(args[0])}
        if args:
            return {
                "type": "array",
                "prefixItems": [type_schema(a) for a in args],
                "minItems": len(args),
                "maxItems": len(args),
            }
        return {"type": "array"}
    if origin in (dict, Mapping, typing.Mapping) or hint is dict:
        value = type_schema(args[1]) if len(args) == 2 else {}
        return {"type": "object", "additionalProperties": value or True}
    if hint in _SCALARS:
        return dict(_SCALARS[hint])
    if isinstance(hint, type):
        return _class_schema(hint)
    return {}


def _class_schema(cls: type) -> dict[str, Any]:
    if issubclass(cls, enum.Enum):
        values = [member.value for member in cls]
        schema: dict[str, Any] = {"enum": values}
        kinds = {_json_type(v) for v in values}
        if len(kinds) == 1 and None not in kinds:
            schema["type"] = kinds.pop()
        return schema
    for base, schema in _SCALARS.items():  # str/int subclasses, date subclasses
        if base is not type(None) and isinstance(base, type) and issubclass(cls, base):
            return dict(schema)
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and issubclass(cls, pydantic.BaseModel):
        return dict(cls.model_json_schema())  # type: ignore[attr-defined]
    if dataclasses.is_dataclass(cls):
        return _fields_schema(
            {f.name: f.type for f in dataclasses.fields(cls)},
            cls,
            [
                f.name
                for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            ],
        )
    if typing.is_typeddict(cls):
        required = sorted(cls.__required_keys__)  # type: ignore[attr-defined]
        return _fields_schema(cls.__annotations__, cls, required)
    return {}


def _fields_schema(fields: Mapping[str, Any], owner: type, required: list[str]) -> dict[str, Any]:
    try:
        hints = typing.get_type_hints(owner, include_extras=True)
    except Exception:
        hints = dict(fields)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: type_schema(hints.get(name, hint)) for name, hint in fields.items()},
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def _annotated(schema: dict[str, Any], metadata: tuple[Any, ...]) -> dict[str, Any]:
    schema = dict(schema)
    for item in metadata:
        if isinstance(item, str):
            schema.setdefault("description", item)
            continue
        description = getattr(item, "description", None)
        if isinstance(description, str):
            schema.setdefault("description", description)
        nested = getattr(item, "metadata", None)  # pydantic's FieldInfo holds its bounds here
        for bound in [item, *(nested if isinstance(nested, list) else [])]:
            for attribute, keyword in _BOUNDS.items():
                value = getattr(bound, attribute, None)
                if value is None or isinstance(value, bool) or callable(value):
                    continue
                if schema.get("type") == "array":
                    keyword = _LENGTHS.get(keyword, keyword)
                schema[keyword] = value
        default = getattr(item, "default", None)  # pydantic's Field(default=...)
        if default is not None and _json_able(default):
            schema.setdefault("default", default)
    return schema


def _json_type(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"


def _json_able(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_json_able(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_able(v) for k, v in value.items())
    return False


_ARG_LINE = re.compile(r"^\s{0,8}\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$")


def _arg_docs(doc: str) -> dict[str, str]:
    """The parameter descriptions of a Google-style ``Args:`` section."""
    found: dict[str, str] = {}
    section = False
    current: str | None = None
    indent = 0
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            section = True
            continue
        if section:
            if not stripped or (not line.startswith(" ") and stripped.endswith(":")):
                if found:
                    break
                continue
            depth = len(line) - len(line.lstrip())
            match = _ARG_LINE.match(line)
            if match and (current is None or depth <= indent):
                current, indent = match[1], depth
                found[current] = match[2].strip()
            elif current is not None and depth > indent:  # a description's next line
                found[current] += " " + stripped
    return found


def _summary(doc: str) -> str:
    """The first paragraph of a docstring, on one line."""
    return " ".join(doc.split("\n\n", 1)[0].split()) if doc else ""
