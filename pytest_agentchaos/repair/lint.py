"""The passes before diagnosis, over what the schema lets pass but says otherwise.

- :func:`rename_all`: misnamed keys renamed to the parameter they name (:mod:`.names`), at
  every depth the schema describes.
- :func:`lint`: an email, UUID or URI in a wrapper (``mailto:``, ``<...>``: jsonschema checks
  only for an ``@``, as does an address's ``pattern``), a time zone or a date or time a
  field's description lays out (``ISO 8601``, ``HH:MM``) written another way. Fixed in
  place; a value the description rules out and nothing can fix is declined.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from .date_layouts import fix_date
from .fixes import Context, Decline, Fix, matches_pattern
from .mechanical import fix_format
from .names import rename_keys
from .paths import field_of
from .policy import RepairPolicy
from .results import RepairStep
from .spec import nullable_branch
from .zones import fix_zone, holds_zone

__all__ = ["lint", "rename_all"]

_WRAPPED_FORMATS = ("email", "idn-email", "uuid", "uri", "url", "iri")


@lru_cache(maxsize=256)
def _email_pattern(pattern: Any) -> bool:
    """Whether a field's ``pattern`` is an email address's: it takes an address and takes no
    text without its ``@`` (the pattern stands for ``format: email``)."""
    if not isinstance(pattern, str) or "@" not in pattern or len(pattern) > 500:
        return False
    return matches_pattern("user@example.com", pattern) and not matches_pattern(
        "user.example.com", pattern
    )


def _children(
    value: Any, schema: Mapping[str, Any]
) -> Iterator[tuple[Any, Any, Mapping[str, Any]]]:
    """``(holder, key, schema)`` of each value in ``value`` the schema describes: an object's
    listed properties, an array's items."""
    if isinstance(value, dict):
        props = schema.get("properties")
        if isinstance(props, Mapping):
            for key in list(value):
                child = props.get(key)
                if isinstance(child, Mapping):
                    yield value, key, nullable_branch(child) or child
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for i in range(len(value)):
                yield value, i, items


def rename_all(
    value: Any,
    schema: Mapping[str, Any],
    policy: RepairPolicy,
    path: tuple[str | int, ...],
    steps: list[RepairStep],
    task: str | None = None,
) -> None:
    """Misnamed keys renamed in place, at every depth the schema describes (``task``: the
    order it writes values in, for keys paired with parameters by elimination)."""
    if isinstance(value, dict):
        for key, target, confidence, how in rename_keys(value, schema, task):
            if confidence < policy.threshold:
                continue
            value[target] = value.pop(key)
            reason = f"{key!r} is the parameter {target!r} {how}"
            where = field_of((*path, key))
            steps.append(
                RepairStep(where, "unknown", "rename_key", key, target, confidence, reason, True)
            )
    for holder, key, child in _children(value, schema):
        rename_all(holder[key], child, policy, (*path, key), steps, task)


def lint(
    value: Any,
    schema: Mapping[str, Any],
    policy: RepairPolicy,
    path: tuple[str | int, ...],
    steps: list[RepairStep],
    task: str | None,
    now: _dt.datetime | None,
) -> Decline | None:
    """The text values the schema lets pass fixed in place; the first one that cannot be,
    declined (see the module's doc)."""
    for holder, key, child in _children(value, schema):
        where = (*path, key)
        if isinstance(holder[key], str):
            declined = _lint_text(holder, key, child, policy, where, steps, task, now)
        else:
            declined = lint(holder[key], child, policy, where, steps, task, now)
        if declined is not None:
            return declined
    return None


def _lint_text(
    holder: Any,
    key: Any,
    schema: Mapping[str, Any],
    policy: RepairPolicy,
    path: tuple[str | int, ...],
    steps: list[RepairStep],
    task: str | None,
    now: _dt.datetime | None,
) -> Decline | None:
    text = holder[key]
    ctx = Context(str(key), {}, task, now, policy.synonyms, policy.fuzzy_score)
    fmt = schema.get("format")
    outcome: Fix | Decline | None = None
    if fmt in _WRAPPED_FORMATS:
        outcome = fix_format(text, str(fmt), ctx)
        if isinstance(outcome, Decline):
            outcome = None  # the schema's own check judges it
    elif fmt is None and _email_pattern(schema.get("pattern")):
        # an address's pattern (``^[^@\s]+@...``) lets ``mailto:`` through, as jsonschema's
        # format does: unwrapped when what is inside still fits the pattern
        outcome = fix_format(text, "email", ctx)
        if isinstance(outcome, Decline) or (
            isinstance(outcome, Fix) and not matches_pattern(outcome.value, schema.get("pattern"))
        ):
            outcome = None
    elif fmt is None and "pattern" not in schema and schema.get("type") in (None, "string"):
        if holds_zone(str(key), schema) and "enum" not in schema:
            outcome = fix_zone(text, ctx)
        else:
            outcome = fix_date(text, schema, ctx)  # a layout only a description gives
    if outcome is None:
        return None
    field = field_of(path)
    if isinstance(outcome, Decline):
        steps.append(
            RepairStep(field, "format", outcome.strategy, text, None, 0.0, outcome.reason, False)
        )
        return Decline(outcome.strategy, f"{field}: {outcome.reason}")
    if outcome.confidence < policy.threshold or not policy.allows(outcome.strategy):
        return None
    holder[key] = outcome.value
    steps.append(RepairStep(field, "format", outcome.strategy, text, outcome.value,
                            outcome.confidence, outcome.reason, True))  # fmt: skip
    return None
