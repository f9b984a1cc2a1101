"""A tool as the repairer knows it: its name, description and parameter JSON Schema.

Validation is ``jsonschema``'s (the schema's own draft, Draft 2020-12 when it names none) with
a format checker for ``date``, ``date-time``, ``time``, ``email``, ``uuid`` and ``uri``; each
error becomes a :class:`Problem` that says where it is and what kind it is, so a strategy can
be chosen for it. Nothing here validates by hand.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..faults.mutations import parameters_schema
from ..inject.schemas import check_tool_schema, check_tool_wrapper
from .signature import function_schema

__all__ = ["PROBLEM_KINDS", "Problem", "ToolSpec", "checker_for", "nullable_branch"]

#: What a problem can be: a key the schema requires is ``missing``, a key it forbids is
#: ``unknown``; a value has the wrong ``type``, is not in the ``enum`` (or not the ``const``),
#: fails its ``format``, is out of ``range`` (minimum, maximum, multipleOf), breaks a ``length``
#: bound (of a string, array or object) or a ``pattern``, or matches none of a union's
#: branches (``union``); ``other`` is everything else jsonschema says. From a tool's error
#: only: a date ``past`` that the tool wants in the future, two parameters the tool will not
#: take together (``exclusive``), and a value the tool ``rejected`` without saying why.
PROBLEM_KINDS = (
    "missing",
    "unknown",
    "type",
    "enum",
    "format",
    "range",
    "length",
    "pattern",
    "union",
    "past",
    "exclusive",
    "rejected",
    "other",
)

_KIND_OF = {
    "type": "type",
    "enum": "enum",
    "const": "enum",
    "format": "format",
    "minimum": "range",
    "maximum": "range",
    "exclusiveMinimum": "range",
    "exclusiveMaximum": "range",
    "multipleOf": "range",
    "minLength": "length",
    "maxLength": "length",
    "minItems": "length",
    "maxItems": "length",
    "minProperties": "length",
    "maxProperties": "length",
    "pattern": "pattern",
    "anyOf": "union",
    "oneOf": "union",
}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a call's arguments.

    ``path`` locates the value (``("passengers",)``, ``("legs", 0, "date")``); for a
    ``missing`` key it is where the key should be. ``schema`` is the sub-schema the value
    should satisfy (``{}`` when unknown), ``expected`` what the failing keyword asked for (the
    enum's values, the type, the bound), ``value`` the value found (None when missing).
    ``source`` is ``schema`` for a jsonschema error, ``error`` for one read from the tool's
    own error.
    """

    kind: str
    path: tuple[str | int, ...]
    message: str
    keyword: str = ""
    expected: Any = None
    value: Any = None
    schema: Mapping[str, Any] = field(default_factory=dict)
    source: str = "schema"

    @property
    def field(self) -> str:
        """The path as text: ``legs[0].date``; ``(arguments)`` for the whole object."""
        if not self.path:
            return "(arguments)"
        text = ""
        for part in self.path:
            text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
        return text

    def to_dict(self) -> dict[str, Any]:
        """Plain data for a trace event."""
        return {
            "kind": self.kind,
            "field": self.field,
            "message": self.message,
            "keyword": self.keyword,
            "source": self.source,
        }


@dataclass(frozen=True, eq=False)
class ToolSpec:
    """A tool's name, description and parameter schema (an object JSON Schema).

    Build one with :meth:`from_schema` (plain JSON Schema, or an OpenAI / Anthropic tool
    definition) or :meth:`from_function` (a Python function's signature and type hints).
    """

    name: str
    parameters: Mapping[str, Any]
    description: str = ""
    _validator: Any = field(default=None, init=False, repr=False, compare=False)
    #: the parameters with every local ``$ref`` replaced by what it points at (a reference
    #: round a loop by ``{}``), so a sub-schema can be checked on its own
    _resolved: Any = field(default=None, init=False, repr=False, compare=False)
    _effective: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        __tracebackhide__ = True
        check_tool_schema(self.parameters, f"ToolSpec {self.name!r}")
        validator = checker_for(self.parameters)
        _check_refs(validator, self.parameters, f"ToolSpec {self.name!r}")
        object.__setattr__(self, "_validator", validator)
        object.__setattr__(self, "_resolved", resolve_refs(self.parameters))

    @classmethod
    def from_schema(
        cls, name: str | None, schema: Mapping[str, Any], description: str | None = None
    ) -> ToolSpec:
        """A spec from a parameter schema: plain JSON Schema, OpenAI's tool format
        (``{"type": "function", "function": {"name", "description", "parameters"}}`` or the
        inner object) or Anthropic's (``{"name", "description", "input_schema"}``). ``name``
        and ``description`` default to the definition's own."""
        __tracebackhide__ = True
        if not isinstance(schema, Mapping):
            raise TypeError(f"a tool schema is a dict, got {type(schema).__name__}")
        check_tool_wrapper(schema, "ToolSpec.from_schema(): schema")
        outer = schema.get("function") if isinstance(schema.get("function"), Mapping) else schema
        assert isinstance(outer, Mapping)
        wrapped = "parameters" in outer or "input_schema" in outer
        found_name = outer.get("name") if wrapped else None
        found_description = outer.get("description") if wrapped else schema.get("description")
        name = name or (found_name if isinstance(found_name, str) else None)
        if not name:
            raise ValueError("ToolSpec.from_schema: no name given and the schema names none")
        if description is None:
            description = found_description if isinstance(found_description, str) else ""
        return cls(name, dict(parameters_schema(schema)), description)

    @classmethod
    def from_function(cls, fn: Callable[..., Any], name: str | None = None) -> ToolSpec:
        """A spec from a function's signature: type hints (``Literal`` -> enum, ``Annotated``
        bounds, dates, enums, dataclasses, ``TypedDict``, pydantic models where installed),
        defaults, and the descriptions of a Google-style ``Args:`` docstring section."""
        found, description, schema = function_schema(fn)
        return cls(name or found, schema, description)

    @property
    def properties(self) -> Mapping[str, Any]:
        """The top-level properties' schemas."""
        props = self.parameters.get("properties")
        return props if isinstance(props, Mapping) else {}

    def is_valid(self, args: Any) -> bool:
        """Whether ``args`` validates (formats included)."""
        return bool(self._validator.is_valid(args))

    def problems(self, args: Any) -> list[Problem]:
        """What is wrong with ``args``, one :class:`Problem` per missing or unknown key and
        per failing value, in the order of the arguments' paths."""
        found: list[Problem] = []
        seen: set[tuple[str, tuple[str | int, ...]]] = set()
        listed: set[int] = set()  # objects whose missing keys are listed already
        for error in self._validator.iter_errors(args):
            if error.validator == "required":
                if id(error.instance) in listed:
                    continue  # one "required" error per missing key, each listing them all
                listed.add(id(error.instance))
            for problem in _problems(error):
                if (problem.kind, problem.path) not in seen:
                    seen.add((problem.kind, problem.path))
                    found.append(problem)
        found.sort(key=lambda p: [str(part) for part in p.path])
        return found

    def schema_at(self, path: tuple[str | int, ...]) -> Mapping[str, Any]:
        """The sub-schema for the value at ``path`` (``{}`` where the schema says nothing)."""
        schema: Any = self._resolved if self._resolved is not None else self.parameters
        for part in path:
            if isinstance(schema, Mapping):
                schema = nullable_branch(schema) or schema
            schema = _child(schema, part)
            if schema is None:
                return {}
        return schema if isinstance(schema, Mapping) else {}

    @property
    def resolved(self) -> Mapping[str, Any]:
        """The parameters with local references replaced (see :func:`resolve_refs`)."""
        return self._resolved if isinstance(self._resolved, Mapping) else self.parameters


def nullable_branch(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The one branch of an optional value's union (``anyOf: [X, {"type": "null"}]``, as
    pydantic writes ``X | None``) merged with the union's own keys (description, default);
    None when ``schema`` is no such union."""
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if not isinstance(branches, list) or len(branches) < 2:
            continue
        rest = [b for b in branches if not (isinstance(b, Mapping) and b.get("type") == "null")]
        if len(rest) == 1 and len(branches) - len(rest) >= 1 and isinstance(rest[0], Mapping):
            outer = {k: v for k, v in schema.items() if k not in (keyword, "default")}
            return {**outer, **rest[0]}
    return None


def checker_for(schema: Mapping[str, Any]) -> Any:
    """A jsonschema validator of ``schema`` (its own draft, 2020-12 when it names none) with
    the format checker of that draft; one per schema seen (cached by its JSON text). A
    reference it cannot resolve makes a value invalid rather than an error."""
    try:
        key = json.dumps(schema, sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        return _Guarded(_new_checker(schema))
    found = _CHECKER_CACHE.get(key)
    if found is None:
        found = _Guarded(_new_checker(schema))
        if len(_CHECKER_CACHE) > 2048:
            _CHECKER_CACHE.clear()
        _CHECKER_CACHE[key] = found
    return found


_CHECKER_CACHE: dict[str, Any] = {}


def _new_checker(schema: Mapping[str, Any]) -> Any:
    import jsonschema  # on first use: most runs build no spec
    from jsonschema.validators import validator_for

    cls = validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=_format_checker(cls))


class _Guarded:
    """A validator whose unresolvable references fail the value instead of raising."""

    __slots__ = ("inner",)

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    @property
    def schema(self) -> Any:
        return self.inner.schema

    def is_valid(self, value: Any) -> bool:
        try:
            return bool(self.inner.is_valid(value))
        except RecursionError:
            raise
        except Exception:
            return False

    def iter_errors(self, value: Any) -> Iterator[Any]:
        try:
            yield from list(self.inner.iter_errors(value))
        except RecursionError:
            raise
        except Exception:
            return

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def resolve_refs(schema: Mapping[str, Any]) -> Any:
    """``schema`` with every local ``$ref`` (``#/$defs/X``, ``#/definitions/X``, ``#``)
    replaced by its target merged with the reference's siblings; a reference met again
    inside itself (a recursive schema) becomes ``{}``; bounded in depth and size."""
    budget = [20_000]

    def target(ref: str) -> Any:
        node: Any = schema
        for part in ref[1:].lstrip("/").split("/") if ref != "#" else ():
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node

    def walk(node: Any, open_refs: tuple[str, ...], depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > 60:
            return {}
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#"):
                if ref in open_refs:
                    return {}
                found = target(ref)
                if not isinstance(found, Mapping):
                    return {k: v for k, v in node.items()}
                merged = {**walk(found, (*open_refs, ref), depth + 1)}
                for key, value in node.items():
                    if key != "$ref":
                        merged[key] = walk(value, open_refs, depth + 1)
                return merged
            out: dict[str, Any] = {}
            for key, value in node.items():
                if key in ("$defs", "definitions") and depth > 0:
                    continue
                if key in ("enum", "const", "default", "examples", "example"):
                    out[key] = value
                else:
                    out[key] = walk(value, open_refs, depth + 1)
            return out
        if isinstance(node, list):
            return [walk(item, open_refs, depth + 1) for item in node]
        return node

    try:
        return walk(schema, (), 0)
    except RecursionError:
        return None


_CHECKERS: dict[Any, Any] = {}


def _format_checker(cls: Any) -> Any:
    """The draft's format checker, plus the phone number formats OpenAPI specs use."""
    checker = _CHECKERS.get(cls)
    if checker is None:
        from jsonschema import FormatChecker

        from .phones import PHONE_FORMATS, is_phone_address

        checker = FormatChecker(formats=())
        checker.checkers = {**cls.FORMAT_CHECKER.checkers}
        for name in PHONE_FORMATS:
            checker.checks(name)(is_phone_address)
        _CHECKERS[cls] = checker
    return checker


def _check_refs(validator: Any, schema: Any, where: str) -> None:
    """Every ``$ref`` of ``schema`` resolves, and none only to another ``$ref`` round in a
    loop; else one ``ChaosConfigError`` naming it (a broken one would fail every call)."""
    from ..config import fail

    refs: list[str] = []
    stack = [schema]
    while stack and len(refs) < 1000:
        item = stack.pop()
        if isinstance(item, Mapping):
            if isinstance(item.get("$ref"), str):
                refs.append(item["$ref"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    resolver = getattr(validator, "_resolver", None)
    if resolver is None or not refs:
        return
    for ref in refs:
        seen: set[str] = set()
        current = ref
        while True:
            try:
                target = resolver.lookup(current).contents
            except Exception:
                raise fail(where, f"$ref {current!r} resolves to nothing") from None
            nxt = target.get("$ref") if isinstance(target, Mapping) else None
            if not isinstance(nxt, str) or len(target) > 1:
                break
            if nxt in seen:
                raise fail(where, f"$ref {ref!r} only refers to itself, round a loop") from None
            seen.add(nxt)
            current = nxt


def _child(schema: Any, part: str | int) -> Any:
    if not isinstance(schema, Mapping):
        return None
    if isinstance(part, int):
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list) and part < len(prefix):
            return prefix[part]
        items = schema.get("items")
        return items if isinstance(items, Mapping) else None
    props = schema.get("properties")
    if isinstance(props, Mapping) and part in props:
        return props[part]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, Mapping) else None


def _problems(error: Any) -> Iterator[Problem]:
    path = tuple(error.absolute_path)
    keyword = str(error.validator)
    instance = error.instance
    if keyword == "required":
        present = instance if isinstance(instance, Mapping) else {}
        props = error.schema.get("properties", {}) if isinstance(error.schema, Mapping) else {}
        for key in error.validator_value:
            if key not in present:
                yield Problem(
                    "missing",
                    (*path, key),
                    f"{key!r} is a required property",
                    keyword,
                    schema=props.get(key, {}) if isinstance(props, Mapping) else {},
                )
        return
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        props = error.schema.get("properties", {})
        patterns = error.schema.get("patternProperties", {})
        import re

        for key in instance if isinstance(instance, Mapping) else ():
            if key in props or any(re.search(p, key) for p in patterns):
                continue
            yield Problem(
                "unknown",
                (*path, key),
                f"{key!r} is not a parameter of this tool",
                keyword,
                value=instance[key],
            )
        return
    kind = _KIND_OF.get(keyword, "other")
    yield Problem(
        kind,
        path,
        str(error.message),
        keyword,
        expected=error.validator_value,
        value=instance,
        schema=error.schema if isinstance(error.schema, Mapping) else {},
    )
