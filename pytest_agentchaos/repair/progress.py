"""What the repair has done so far, as the loop judges it: where the rename pass moved each
key, whether a problem the tool's error named is gone from the call as it is now, and small
facts about a problem's place (a required key, a wildcard list item, an inferred fix);
and applying one fix to the call, recorded as a step."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from .choose import Renamed, confidence_ok, satisfied
from .fixes import DROP, Decline, Fix
from .lists import is_wildcard
from .paths import delete, field_of, get, has, path_of, put
from .policy import RepairPolicy
from .results import RepairStep
from .spec import Problem, ToolSpec

__all__ = ["apply_fix", "found_fix", "gone", "moved", "renames", "required", "wildcard_item"]


def wildcard_item(problem: Problem, current: Mapping[str, Any]) -> bool:
    """An enum problem at the one item of a list that is a wildcard (``["all"]``)."""
    if problem.kind != "enum" or not problem.path or not isinstance(problem.path[-1], int):
        return False
    holder = get(current, problem.path[:-1])
    return isinstance(holder, list) and len(holder) == 1 and is_wildcard(holder[0])


def found_fix(found: Mapping[str, Fix], problem: Problem) -> Fix | None:
    """The inferred fix for a missing problem: by its top-level name, else by its path."""
    if len(problem.path) == 1 and str(problem.path[0]) in found:
        return found[str(problem.path[0])]
    return found.get(field_of(problem.path))


def required(spec: ToolSpec, path: tuple[str | int, ...]) -> bool:
    parent = spec.schema_at(path[:-1])
    required = parent.get("required", ())
    return bool(path) and isinstance(required, list) and path[-1] in required


def renames(steps: list[RepairStep]) -> dict[tuple[str | int, ...], tuple[str | int, ...]]:
    """Where the rename pass moved each key: ``{old path: new path}``."""
    moves: dict[tuple[str | int, ...], tuple[str | int, ...]] = {}
    for step in steps:
        if step.ok and step.strategy == "rename_key" and isinstance(step.after, str):
            parent = path_of(step.field)[:-1]
            old: tuple[str | int, ...] = (*parent, str(step.before))
            moves[old] = (*parent, step.after)
    return moves


def moved(
    problem: Problem, moves: Mapping[tuple[str | int, ...], tuple[str | int, ...]]
) -> Problem:
    """A problem the error named at a key the rename pass moved, at the key's new place."""
    for old, new in moves.items():
        if problem.path[: len(old)] == old:
            return dataclasses.replace(problem, path=(*new, *problem.path[len(old) :]))
    return problem


def gone(
    problem: Problem,
    current: Mapping[str, Any],
    original: Mapping[str, Any],
    moves: Mapping[tuple[str | int, ...], tuple[str | int, ...]],
) -> bool:
    """Whether a problem the tool's error named is solved in the call as it is now: a value
    the error refused is gone once it has changed (and fits what the error asked); a missing
    key once it is there; an unknown key once it is not (renamed or dropped)."""
    if problem.kind == "unknown":
        moved = problem.path in moves.values()
        return moved or not has(current, problem.path)
    if problem.kind in ("missing", "exclusive"):
        return satisfied(problem, current)
    if not has(current, problem.path):
        # the refused value is no longer sent (left out, on its description's word); were
        # it required, the schema's own check would name it missing
        return has(original, problem.path)
    old = next((o for o, n in moves.items() if n == problem.path), problem.path)
    if has(original, old) and get(original, old) == get(current, problem.path):
        return False  # the value the tool refused is still there
    return satisfied(problem, current)


def apply_fix(
    outcome: Fix | Decline | None,
    problem: Problem,
    before: Any,
    current: dict[str, Any],
    steps: list[RepairStep],
    policy: RepairPolicy,
) -> Decline | None:
    """Apply ``outcome`` to ``current`` at the problem's place and record the step; a fix the
    policy turns off or trusts too little, or none at all, is a decline (returned, named)."""
    if outcome is None:
        outcome = Decline("report_unrecoverable", problem.message)
    if isinstance(outcome, Fix) and not confidence_ok(outcome.confidence):
        outcome = Decline(
            outcome.strategy, f"a fix with no sound confidence ({outcome.confidence!r})"
        )
    if isinstance(outcome, Fix) and not policy.allows(outcome.strategy):
        outcome = Decline(outcome.strategy, f"{outcome.strategy} is turned off by the policy")
    if isinstance(outcome, Fix) and outcome.confidence < policy.threshold:
        outcome = Decline(
            outcome.strategy,
            f"{outcome.reason}, but with confidence {outcome.confidence:.2f} below the "
            f"threshold {policy.threshold:.2f}",
        )
    if isinstance(outcome, Decline):
        steps.append(
            RepairStep(
                problem.field,
                problem.kind,
                outcome.strategy,
                before,
                None,
                0.0,
                outcome.reason,
                False,
            )
        )
        return Decline(outcome.strategy, f"{problem.field}: {outcome.reason}")
    if isinstance(outcome.value, Renamed):
        target, value = outcome.value.target, outcome.value.value
        delete(current, problem.path)
        put(current, (*problem.path[:-1], target), value)
        after: Any = {target: value}
    elif outcome.value is DROP:
        delete(current, problem.path)
        after = DROP
    else:
        put(current, problem.path, outcome.value)
        after = outcome.value
    steps.append(
        RepairStep(
            problem.field,
            problem.kind,
            outcome.strategy,
            before,
            after,
            outcome.confidence,
            outcome.reason,
            True,
        )
    )
    return None
