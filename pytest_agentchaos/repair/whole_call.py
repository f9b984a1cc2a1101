"""A refusal that names no parameter, put to a model proposer as a problem of the whole call.

Some tools refuse a call with words that point at no parameter and quote no value the error
reader can place ("Not Found", "快递公司编码不正确", "start must not be after end" in words
the schema does not use). The rules decline these; a model proposer, when one is supplied,
is asked once for the whole call (the problem's path is the root, ``(arguments)``). Its
answer is a candidate like any other, and stricter: it must be an object that fits the
tool's schema, keeps every key the call sent, changes something, and replaces no value the
task writes as it was sent unless the error itself quotes that value (the value the tool
refused). The repaired call then goes through the intent audit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .audit import task_states
from .reading import leaf_values
from .results import RepairStep
from .spec import Problem, ToolSpec
from .words import find_word

__all__ = ["call_problem", "call_steps", "refused_answer"]


def call_problem(spec: ToolSpec, error: str) -> Problem:
    """The problem a model is asked when the error names no parameter: the tool refused these
    arguments with this text; its schema is the tool's whole parameter schema."""
    return Problem(
        "refused",
        (),
        f"the tool refused these arguments: {error[:500]}",
        schema=spec.resolved,
        source="error",
    )


def _changed(
    original: Mapping[str, Any], candidate: Mapping[str, Any]
) -> list[tuple[tuple[str | int, ...], Any, Any]]:
    """``(path, sent, proposed)`` of every scalar the candidate changes or adds."""
    before = dict(leaf_values(original))
    return [
        (path, before.get(path), value)
        for path, value in leaf_values(candidate)
        if path not in before or before[path] != value or type(before[path]) is not type(value)
    ]


def _keeps_keys(original: Any, candidate: Any) -> bool:
    """Whether every key of every object the call sent is still there in the candidate."""
    if isinstance(original, Mapping):
        return isinstance(candidate, Mapping) and all(
            key in candidate and _keeps_keys(value, candidate[key])
            for key, value in original.items()
        )
    if isinstance(original, list):
        return isinstance(candidate, list) and len(candidate) == len(original)
    return True


def refused_answer(
    original: Mapping[str, Any],
    candidate: Any,
    task: str | None,
    error: str,
    spec: ToolSpec | None = None,
) -> str | None:
    """Why a model's whole call is not taken (None when it may go on to the audit): it is no
    object, drops a key the call sent, changes nothing, proposes a value neither the task nor
    the error states (a choice the schema closes, a flag or an enum member, needs no
    statement), or replaces a value the task writes as sent which the error does not quote
    back (the user's value, not the one refused)."""
    if not isinstance(candidate, Mapping):
        return "the model's answer is no object of arguments"
    if not _keeps_keys(original, candidate):
        return "the model's answer drops a key the call sent"
    changes = _changed(original, candidate)
    if not changes:
        return "the model's answer is the call as it was refused"
    text = (task or "")[:8000]
    said = error[:8000]
    call_values = [value for _, value in leaf_values(original)]
    for path, old, proposed in changes:
        if isinstance(old, str) and _quotes(said, old):
            continue  # a name or code the tool refused: its translation is the model's to know
        schema = spec.schema_at(path) if spec is not None else None
        if not _grounded(proposed, schema, text, said, call_values):
            where = Problem("refused", path, "").field
            return f"the model's {proposed!r} ({where}) is stated by neither the task nor the error"
    for path, sent, _ in changes:
        if sent is None or not text or not task_states(sent, text):
            continue
        # quoted as a value of its own, as sent: not a piece of a path or a name the error
        # quotes ('Q1' is not quoted by "reports/q1.md")
        if find_word(said, str(sent), joined="/.-") < 0:
            where = Problem("refused", path, "").field
            return f"the task states {sent!r} ({where}), and the error does not refuse it"
    return None


#: A date, a date-time or a time of day as a tool takes it: what the task says of it in words
#: ("Monday", "4pm") is the intent audit's to check, not a quotation to find.
_WHEN = re.compile(
    r"\d{4}-\d{2}(?:-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?)?"
    r"|\d{2}:\d{2}(?::\d{2})?"
)


def _grounded(value: Any, schema: Any, task: str, error: str, sent: list[Any]) -> bool:
    """A proposed value something besides the model gives: a flag or a member of the set the
    schema closes (a choice among the tool's own values), a value the call already sent (two
    values swapped, ``20000.0`` sent as ``20000``), a date or time (checked by the intent
    audit), or a value the task or the error writes (``evil-corp`` for a repository the task
    calls "widgets" is none of these)."""
    if value is None or isinstance(value, bool):
        return True
    if isinstance(schema, Mapping) and (
        value in (schema.get("enum") or ()) or ("const" in schema and schema["const"] == value)
    ):
        return True
    if any(value == old and not isinstance(old, bool) for old in sent):
        return True
    if isinstance(value, str) and _WHEN.fullmatch(value):
        return True
    if task and task_states(value, task):
        return True
    return _quotes(error, value)


def _quotes(error: str, value: Any) -> bool:
    """Whether the error writes ``value`` as a value of its own ("应缴1500分": a number glued
    to words; "编码不正确：中通")."""
    if isinstance(value, bool) or value is None:
        return False
    text = str(value)
    if isinstance(value, (int, float)):
        return re.search(rf"(?<![\d.]){re.escape(text)}(?![\d]|\.\d)", error) is not None
    return find_word(error, text, joined="/.-") >= 0 or (len(text) >= 3 and text in error)


def call_steps(
    original: Mapping[str, Any], candidate: Mapping[str, Any], confidence: float
) -> list[RepairStep]:
    """One ``model_proposal`` step per value the model's whole call changes (its evidence)."""
    return [
        RepairStep(
            Problem("refused", path, "").field,
            "refused",
            "model_proposal",
            sent,
            proposed,
            confidence,
            "the model proposes the call the tool's refusal asks for",
            True,
        )  # fmt: skip
        for path, sent, proposed in _changed(original, candidate)
    ]
