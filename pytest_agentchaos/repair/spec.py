"""A tool as the repairer knows it: its name, description and parameter JSON Schema.

Validation is ``jsonschema``'s (the schema's own draft, Draft 2020-12 when it names none) with
a format checker for ``date``, ``date-time``, ``time``, ``email``, ``uuid`` and ``uri``; each
error becomes a :class:`Problem` that says where it is and what kind it is, so a strategy can
be chosen for it. Nothing here validates by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..faults.mutations import parameters_schema
from ..inject.schemas import check_tool_schema, check_tool_wrapper
from .signature import function_schema

__all__ = ["PROBLEM_KINDS", "Problem", "ToolSpec", "checker_for"]

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

    def __post_init__(self) -> None:
        __tracebackhide__ = True
        check_tool_schema(self.parameters, f"ToolSpec {self.name!r}")
        validator = checker_for(self.parameters)
        _check_refs(validator, self.parameters, f"ToolSpec {self.name!r}")
        object.__setattr__(self, "_validator", validator)

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
        schema: Any = self.parameters
        for part in path:
            schema = _child(schema, part)
            if schema is None:
                return {}
        return schema if isinstance(schema, Mapping) else {}


def checker_for(schema: Mapping[str, Any]) -> Any:
    """A jsonschema validator of ``schema`` (its own draft, 2020-12 when it names none) with
    the format checker of that draft."""
    import jsonschema  # on first use: most runs build no spec
    from jsonschema.validators import validator_for

    cls = validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=_format_checker(cls))


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
