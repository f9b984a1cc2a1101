"""Hypothesis strategies for your own property tests of an agent's repair loop (test tooling:
it lives apart from the stack, which stays free of test libraries; users import it as
``pytest_agentchaos.strategies``).

``malformed_args(spec)`` draws a valid call of a tool (from its parameter schema), then
corrupts it the way ``malformed_params`` does, and says whether a repair can bring the call
back (``repairable``)::

    from hypothesis import given
    from pytest_agentchaos.strategies import malformed_args

    @given(malformed_args(book_flight))
    def test_my_repair_loop(call):
        result = my_agent.repair(call.args)
        if call.repairable:
            assert result == call.original
        else:
            assert result is None or result == call.original  # declined, never invented

``valid_args(spec)`` draws valid calls alone. Both take a ``ToolSpec``, a JSON Schema (plain,
OpenAI or Anthropic format) or a Python function. Strings with a well-known meaning (emails,
cities, names, dates, UUIDs, URIs) are drawn with Faker, seeded by Hypothesis, so examples
read like real calls and still shrink. Needs ``hypothesis`` (and ``faker``) installed.
"""

from __future__ import annotations

import datetime as _dt
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - only without hypothesis
    raise ImportError(
        "pytest_agentchaos.strategies needs hypothesis: pip install hypothesis (and faker)"
    ) from exc

from ..faults.mutations import MUTATIONS, apply_mutation, decide, parameters_schema

__all__ = ["Malformed", "malformed_args", "valid_args"]


@dataclass(frozen=True)
class Malformed:
    """A corrupted call: ``args`` as the model sent them, ``original`` as they should be,
    which ``mutation`` of which ``key``, and whether a repair can bring ``original`` back."""

    args: dict[str, Any]
    original: dict[str, Any]
    mutation: str
    key: str
    repairable: bool


def malformed_args(
    spec: Any,
    *,
    mutations: tuple[str, ...] = MUTATIONS,
    valid: st.SearchStrategy[dict[str, Any]] | None = None,
    repairable: bool | None = None,
) -> st.SearchStrategy[Malformed]:
    """Valid calls of ``spec`` (or those ``valid`` draws), each corrupted by one of
    ``mutations``; only the repairable (or only the unrepairable) ones with ``repairable``."""
    unknown = sorted(set(mutations) - set(MUTATIONS))
    if unknown:
        raise ValueError(f"unknown mutation {unknown[0]!r}; known: {', '.join(MUTATIONS)}")
    schema = _schema(spec)
    calls = valid if valid is not None else valid_args(schema)

    @st.composite
    def draw(draw: st.DrawFn) -> Malformed:
        args = draw(calls)
        rng = draw(st.randoms(use_true_random=False))
        detail = decide(rng, tuple(mutations), args, schema)
        if detail is None or (repairable is not None and detail["repairable"] is not repairable):
            from hypothesis import reject

            reject()
        assert detail is not None
        return Malformed(
            apply_mutation(args, detail),
            dict(args),
            str(detail["mutation"]),
            str(detail["key"]),
            bool(detail["repairable"]),
        )

    return draw()


def valid_args(spec: Any) -> st.SearchStrategy[dict[str, Any]]:
    """Calls of ``spec`` that validate against its parameter schema (for the JSON Schema
    keywords tool schemas use: types, enums, consts, bounds, lengths, formats, patterns,
    arrays, nested objects, required and optional keys, ``anyOf``/``oneOf``)."""
    schema = _resolved(_schema(spec))
    seeds = st.integers(0, 2**32 - 1)
    return seeds.flatmap(lambda seed: _value(schema, "", _Faker(seed)))


_TOO_DEEP: dict[str, Any] = {"x-recursion": True}


def _resolved(schema: Mapping[str, Any], depth: int = 0, root: Any = None) -> Any:
    """``schema`` with its local ``$ref`` s (``#/$defs/...``) written out, four levels deep at
    most for a recursive one (past that, the recursion is left out where it is optional)."""
    root = schema if root is None else root
    if isinstance(schema, Mapping):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            if depth >= 4:
                return _TOO_DEEP  # left out where optional, an empty list inside a list
            target: Any = root
            for part in ref[2:].split("/"):
                target = target.get(part, {}) if isinstance(target, Mapping) else {}
            return _resolved(target, depth + 1, root)
        return {k: _resolved(v, depth, root) for k, v in schema.items() if k != "$defs"}
    if isinstance(schema, list):
        return [_resolved(v, depth, root) for v in schema]
    return schema


def _schema(spec: Any) -> Mapping[str, Any]:
    parameters = getattr(spec, "parameters", None)  # a ToolSpec
    if isinstance(parameters, Mapping):
        return parameters
    if isinstance(spec, Mapping):
        return parameters_schema(spec)
    if callable(spec):
        from ..repair.signature import function_schema

        return function_schema(spec)[2]
    raise TypeError(f"expected a ToolSpec, a JSON Schema or a function, got {spec!r}")


class _Faker:
    """Faker seeded per example when installed; Hypothesis's own text otherwise."""

    def __init__(self, seed: int) -> None:
        try:
            from faker import Faker
        except ImportError:
            self.fake: Any = None
        else:
            self.fake = Faker()
            self.fake.seed_instance(seed)

    def text_for(self, name: str) -> st.SearchStrategy[str] | None:
        fake = self.fake
        if fake is None:
            return None
        lowered = name.lower()
        for words, make in _FAKES:
            if any(w in lowered for w in words):
                return st.just(str(make(fake)))
        return None


_FAKES: tuple[tuple[tuple[str, ...], Callable[[Any], Any]], ...] = (
    (("email",), lambda f: f.email()),
    (("city", "origin", "destination", "location"), lambda f: f.city()),
    (("country",), lambda f: f.country()),
    (("company", "organization"), lambda f: f.company()),
    (("first_name", "firstname"), lambda f: f.first_name()),
    (("last_name", "lastname", "surname"), lambda f: f.last_name()),
    (("name",), lambda f: f.name()),
    (("address", "street"), lambda f: f.street_address()),
    (("phone",), lambda f: f.phone_number()),
    (("url", "uri", "link"), lambda f: f.url()),
    (("title", "subject"), lambda f: f.sentence(nb_words=4).rstrip(".")),
    (("message", "body", "text", "content", "query", "description"), lambda f: f.sentence()),
)


def _value(schema: Any, name: str, fake: _Faker) -> st.SearchStrategy[Any]:
    if not isinstance(schema, Mapping) or not schema:
        return st.one_of(st.none(), st.booleans(), st.integers(-100, 100), st.text(max_size=10))
    if "const" in schema:
        return st.just(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return st.sampled_from(schema["enum"])
    for union in ("anyOf", "oneOf"):
        branches = schema.get(union)
        if isinstance(branches, list) and branches:
            return st.one_of([_value(b, name, fake) for b in branches])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([_value({**schema, "type": k}, name, fake) for k in kind])
    if kind == "object" or "properties" in schema:
        return _object(schema, fake)
    if kind == "array":
        return _array(schema, name, fake)
    if kind == "integer":
        return st.integers(*_bounds(schema, integer=True))
    if kind == "number":
        low, high = _bounds(schema, integer=False)
        return st.floats(low, high, allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    return _string(schema, name, fake)


def _object(schema: Mapping[str, Any], fake: _Faker) -> st.SearchStrategy[dict[str, Any]]:
    found = schema.get("properties")
    props: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    required = [k for k in schema.get("required", []) if k in props]
    return st.fixed_dictionaries(
        {k: _value(props[k], k, fake) for k in required},
        optional={
            k: _value(v, k, fake)
            for k, v in props.items()
            if k not in required and v is not _TOO_DEEP
        },
    )


def _array(schema: Mapping[str, Any], name: str, fake: _Faker) -> st.SearchStrategy[list[Any]]:
    low = int(schema.get("minItems", 0))
    high = int(schema.get("maxItems", max(low, 4)))
    if schema.get("items") is _TOO_DEEP:
        return st.just([])
    items = _value(schema.get("items", {}), name, fake)
    unique = bool(schema.get("uniqueItems"))
    return st.lists(items, min_size=low, max_size=high, unique_by=repr if unique else None)


def _bounds(schema: Mapping[str, Any], *, integer: bool) -> tuple[Any, Any]:
    step = 1 if integer else 1e-6
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    if "exclusiveMinimum" in schema and "minimum" not in schema:
        low = schema["exclusiveMinimum"] + step
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if "exclusiveMaximum" in schema and "maximum" not in schema:
        high = schema["exclusiveMaximum"] - step
    if integer:
        low = -1000 if low is None else int(low)
        high = max(low, 1000 if high is None else int(high))
    else:
        low = -1e6 if low is None else float(low)
        high = max(low, 1e6 if high is None else float(high))
    return low, high


_DAYS = st.dates(_dt.date(2000, 1, 1), _dt.date(2040, 12, 31))


def _string(schema: Mapping[str, Any], name: str, fake: _Faker) -> st.SearchStrategy[str]:
    fmt = schema.get("format")
    if fmt == "date":
        return _DAYS.map(_dt.date.isoformat)
    if fmt == "date-time":
        return st.datetimes(_dt.datetime(2000, 1, 1), _dt.datetime(2040, 12, 31)).map(
            lambda d: d.replace(microsecond=0, tzinfo=_dt.timezone.utc).isoformat()
        )
    if fmt == "time":
        return st.times().map(lambda t: t.replace(microsecond=0).isoformat() + "Z")
    if fmt == "uuid":
        return st.randoms(use_true_random=False).map(
            lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4))
        )
    if fmt in ("email", "idn-email"):
        email = fake.text_for("email")
        return email if email is not None else st.emails()
    if fmt in ("uri", "url", "iri"):
        url = fake.text_for("url")
        return url if url is not None else st.just("https://example.com/")
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        return st.from_regex(pattern, fullmatch=True)
    low = int(schema.get("minLength", 1))
    high = schema.get("maxLength")
    named = fake.text_for(name)
    if named is not None:
        return named.filter(lambda s: len(s) >= low and (high is None or len(s) <= high))
    alphabet = st.characters(codec="utf-8", categories=("L", "N", "Zs"))
    return st.text(alphabet, min_size=low, max_size=int(high) if high is not None else 20)
