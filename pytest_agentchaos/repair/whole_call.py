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
    original: Mapping[str, Any], candidate: Any, task: str | None, error: str
) -> str | None:
    """Why a model's whole call is not taken (None when it may go on to the audit): it is no
    object, drops a key the call sent, changes nothing, or replaces a value the task writes
    as sent which the error does not quote back (the user's value, not the one refused)."""
    if not isinstance(candidate, Mapping):
        return "the model's answer is no object of arguments"
    if not _keeps_keys(original, candidate):
        return "the model's answer drops a key the call sent"
    changes = _changed(original, candidate)
    if not changes:
        return "the model's answer is the call as it was refused"
    text = (task or "")[:8000]
    said = error[:8000]
    for path, sent, _ in changes:
        if sent is None or not text or not task_states(sent, text):
            continue
        # quoted as a value of its own, as sent: not a piece of a path or a name the error
        # quotes ('Q1' is not quoted by "reports/q1.md")
        if find_word(said, str(sent), joined="/.-") < 0:
            where = Problem("refused", path, "").field
            return f"the task states {sent!r} ({where}), and the error does not refuse it"
    return None


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
