"""One round of problem-triggered strategies: each problem of the call as it is now goes to the
strategy for its kind (the seed's map, see :mod:`.repairer`), the model proposer when the rules
find nothing usable; a fix is applied or the round declines. A part of
:class:`~.repairer.ParamRepairer`."""

from __future__ import annotations

import copy
import dataclasses
import datetime as _dt
import re
from collections.abc import Mapping
from typing import Any

from .calls import ToolCalls
from .choose import as_missing, confidence_ok, for_value, kind_of, rename_or_drop, satisfied
from .effective import effective_problems, gloss, rules_for
from .examples import error_example, like_example
from .fixes import DROP, WEAK_EVIDENCE, Context, Decline, Fix, shown
from .listed_parts import listed_part
from .lists import expand_wildcard
from .mechanical import cron_without_seconds
from .missing import MissingValues
from .paths import get, has
from .progress import apply_fix, required, wildcard_item
from .refused import exclusive_pair
from .results import RepairStep
from .spec import Problem, ToolSpec, checker_for, nullable_branch

__all__ = ["StrategyRounds"]

#: Problems that are not about a value the call holds.
_NOT_VALUES = ("unknown", "missing", "exclusive")


class StrategyRounds(MissingValues):
    """Rounds of strategies over a call's problems (the base of the repairer)."""

    def _for_branch(self, spec: ToolSpec) -> ToolCalls:
        """A repairer of one branch of a union alone, with this one's policy, recording
        nothing."""
        raise NotImplementedError  # pragma: no cover

    def _flat_row(self, problem: Problem, current: dict[str, Any]) -> bool:
        """A type problem at an item of a flat list of several scalars where the schema asks
        for a list of lists: the list is one row, not one row per value."""
        path = problem.path
        if problem.kind != "type" or not path or not isinstance(path[-1], int):
            return False
        holder = get(current, path[:-1]) if has(current, path[:-1]) else None
        if not isinstance(holder, list) or len(holder) < 2:
            return False
        if any(isinstance(item, (list, dict)) for item in holder):
            return False
        schema = self.spec.schema_at(path[:-1])
        items = schema.get("items") if isinstance(schema, dict) else None
        if not isinstance(items, dict) or items.get("type") != "array":
            return False
        try:
            return bool(checker_for(schema).is_valid([holder]))
        except Exception:
            return False

    def _round(
        self,
        current: dict[str, Any],
        problems: list[Problem],
        steps: list[RepairStep],
        task: str | None,
        now: _dt.datetime | None,
        error: str | None,
    ) -> Decline | None:
        # unknown keys first (a misspelt name may be the missing one), missing last (one
        # inferer call for all of them)
        # unknown keys first, then a value's type (an enum value in a list is unwrapped
        # before it is matched), the rest, missing keys last
        order = {"unknown": 0, "type": 1, "union": 1, "missing": 3}
        # a value the tool's error complains about but the call does not hold is missing
        problems = [
            p if p.kind in ("missing", "unknown") or has(current, p.path) else as_missing(p)
            for p in problems
        ]
        problems = sorted(problems, key=lambda p: order.get(p.kind, 2))
        missing = [p for p in problems if p.kind == "missing"]
        done: set[tuple[str | int, ...]] = set()
        at_start = {p.path: copy.deepcopy(get(current, p.path)) for p in problems
                    if p.kind not in _NOT_VALUES and has(current, p.path)}  # fmt: skip
        for problem in problems:
            if problem.path in done or problem.kind == "missing":
                continue
            done.add(problem.path)
            if problem.path in at_start and (
                not has(current, problem.path)  # its value went with its parent's fix
                or get(current, problem.path) != at_start[problem.path]
                and satisfied(problem, current)
            ):
                continue  # an earlier fix of this round solved it (a union's branch repaired)
            if problem.kind == "unknown" and not has(current, problem.path):
                continue  # renamed away already
            outcome: Fix | Decline | None
            if problem.kind == "exclusive":  # the problem moves to the parameter dropped
                properties = self.spec.parameters.get("properties", {})
                problem, outcome = exclusive_pair(problem, current, properties, task)
                before = get(current, problem.path) if has(current, problem.path) else None
            elif wildcard_item(problem, current):  # ["all"]: the list is the problem
                problem = dataclasses.replace(problem, path=problem.path[:-1], kind="type")
                before = get(current, problem.path)
                outcome = expand_wildcard(before[0], self.spec.schema_at(problem.path), task)
            elif self._flat_row(problem, current):  # ["Q1", "Q2"] for [["Q1", "Q2"]]
                problem = dataclasses.replace(problem, path=problem.path[:-1], kind="type")
                before = get(current, problem.path)
                outcome = Fix("wrap_in_list", [before], 0.85, f"a flat list of {len(before)} "
                              "where a list of lists is asked for: one row of them")  # fmt: skip
            else:
                before = get(current, problem.path)
                ctx = self._context(problem, current, task, now)
                outcome = self._strategy(problem, before, ctx, current, missing)
            weak = isinstance(outcome, Fix) and outcome.evidence in WEAK_EVIDENCE
            if weak:
                # a rule's guess among plausible values: a model proposer answers first; the
                # rule's fix stands where there is none or it has no usable answer
                outcome = self._ask_model(problem, current, task, now, steps) or outcome
            coupled = isinstance(outcome, Decline) and bool(outcome.beside)
            if (
                not weak
                and not coupled
                and (not isinstance(outcome, Fix) or not self._usable(outcome))
            ):
                # a decision that involves fields beside this one is no model's to take for
                # this field alone ("set -3" made "set 3" reverses what was asked)
                outcome = self._ask_model(problem, current, task, now, steps) or outcome
            declined = apply_fix(outcome, problem, before, current, steps, self.policy)
            if declined is not None:
                return declined
        missing = [p for p in missing if not has(current, p.path)]
        if missing:
            return self._fill(missing, current, steps, task, now, error)
        return None

    def _strategy(
        self,
        problem: Problem,
        value: Any,
        ctx: Context,
        current: dict[str, Any],
        missing: list[Problem],
    ) -> Fix | Decline | None:
        schema = problem.schema or self.spec.schema_at(problem.path)
        kind = problem.kind
        if (
            value is None
            and kind in ("type", "union", "enum")
            and problem.path
            and (not required(self.spec, problem.path))
        ):
            why = "null in an optional field: left out, so the tool's own default applies"
            return Fix("drop_unknown_key", DROP, 0.9, why)
        if (
            kind in ("type", "union", "enum", "pattern", "rejected")
            and problem.path
            and not required(self.spec, problem.path)
            and _omitting_gives(value, self.spec.schema_at(problem.path))
        ):
            why = f"{shown(value)} is what leaving the field out gives, its description says"
            return Fix("default_value_assignment", DROP, 0.9, why)  # the tool's own default
        name = next((str(p) for p in reversed(problem.path) if isinstance(p, str)), "")
        glossed = gloss(value, rules_for(self.spec.schema_at(problem.path), name))
        if glossed is not None and kind in ("type", "enum", "union", "rejected"):
            return Fix("enum_value_correction", glossed, 0.9,
                       f"the description glosses {shown(value)} as {glossed!r}")  # fmt: skip
        if kind == "unknown":
            return rename_or_drop(problem, value, current, self.spec, missing)
        if kind == "union":
            return self._union(problem, value, ctx)
        if kind == "rejected" and isinstance(value, str):
            five = cron_without_seconds(value, problem.message)
            if five is not None:
                why = f"{shown(value)} has a seconds field first (Quartz); the tool counts 5"
                return Fix("pattern_correction", five, 0.9, why)
            example = error_example(problem.message)
            written = like_example(value, example) if example else None
            if written is not None:
                why = f"{shown(value)} written as the error's example {example!r} is: {written!r}"
                return Fix("rejected_value_correction", written, 0.85, why)
            part = listed_part(value, problem.message)
            if part is not None:
                why = (f"the tool refuses {part[1]!r} in {shown(value)} and lists "
                       f"{part[2]!r}, the same word: {part[0]!r}")  # fmt: skip
                return Fix("rejected_value_correction", part[0], 0.85, why)
        return for_value(kind, value, schema, ctx, problem.expected)

    def _union(self, problem: Problem, value: Any, ctx: Context) -> Fix | Decline | None:
        optional = nullable_branch(self.spec.schema_at(problem.path)) or nullable_branch(
            problem.schema
        )
        if optional is not None and value is not None:  # X | None: the value is meant as X
            checker = checker_for(optional)
            for error in checker.iter_errors(value):
                kind = kind_of(str(error.validator))
                at = tuple(error.absolute_path)
                if at:
                    # an object meant as X with a field of its own wrong: X's repairer alone
                    if isinstance(value, dict) and optional.get("type") == "object":
                        repaired = self._object_branch(value, optional, ctx)
                        if repaired is not None and checker.is_valid(repaired.value):
                            return repaired
                    return Decline("report_unrecoverable", f"{shown(value)}: {error.message}")
                return for_value(kind, value, optional, ctx, error.validator_value)
            return None
        branches = problem.expected if isinstance(problem.expected, list) else []
        fixes: dict[str, Fix] = {}
        for branch in branches:
            if not isinstance(branch, Mapping):
                continue
            checker = checker_for(branch)
            if isinstance(value, dict) and branch.get("type") == "object":
                repaired = self._object_branch(value, branch, ctx)
                if repaired is not None and checker.is_valid(repaired.value):
                    fixes[repr(repaired.value)] = repaired
                continue
            for error in checker.iter_errors(value):
                kind = kind_of(str(error.validator))
                fix = for_value(kind, value, branch, ctx, error.validator_value)
                if isinstance(fix, Fix) and checker.is_valid(fix.value):
                    fixes[repr(fix.value)] = fix
                break
        if len(fixes) == 1:
            return next(iter(fixes.values()))
        if len(fixes) > 1:
            listed = " or ".join(list(fixes)[:3])
            return Decline("schema_type_conversion", f"{value!r} could become {listed}")
        return Decline("report_unrecoverable", f"{value!r} fits none of the allowed shapes")

    def _object_branch(
        self, value: dict[str, Any], branch: Mapping[str, Any], ctx: Context
    ) -> Fix | None:
        """An object repaired into one branch of a union of objects, by a repairer of that
        branch alone (nothing recorded); None when it declines."""
        try:
            spec = ToolSpec(self.spec.name, dict(branch))
        except ValueError:
            return None
        result = self._for_branch(spec).repair(value, None, ctx.task, ctx.now)
        if not result.ok or result.args is None:
            return None
        used = [s for s in result.steps if s.ok]
        reason = "; ".join(f"{s.field}: {s.reason}" for s in used) or "fits as it is"
        return Fix(used[0].strategy if used else "schema_type_conversion", result.args,
                   result.confidence, reason)  # fmt: skip

    def _problems(self, args: dict[str, Any]) -> list[Problem]:
        """What the schema and the effective schema (its descriptions) find wrong."""
        found = self.spec.problems(args)
        known = {p.path for p in found}
        return found + [p for p in effective_problems(self.spec, args) if p.path not in known]

    def _usable(self, fix: Fix) -> bool:
        return (
            confidence_ok(fix.confidence)
            and fix.confidence >= self.policy.threshold
            and self.policy.allows(fix.strategy)
        )


#: A description's clause on what leaving the field out does ("Omit to refund the full
#: amount", "If not set, all fields are returned").
_OMIT_CLAUSE = re.compile(
    r"\b(?:omit(?:ted)?|leave (?:it )?(?:out|empty|blank|unset)|if (?:not (?:set|given|"
    r"provided|specified)|omitted|unset|empty)|when (?:omitted|not set|unset))\b(?P<c>[^.;]{0,80})",
    re.IGNORECASE,
)


def _omitting_gives(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``value`` (a word or two) is what the description says leaving the field out
    gives: the value written, as whole words, in the clause about omitting it."""
    if not isinstance(value, str) or not 2 <= len(value.strip()) <= 30:
        return False
    description = str(schema.get("description", ""))[:2000]
    wanted = value.strip().casefold()
    if not re.fullmatch(r"[^\W\d_]+(?: [^\W\d_]+)?", wanted):
        return False
    return any(
        re.search(rf"\b{re.escape(wanted)}\b", match["c"].casefold())
        for match in _OMIT_CLAUSE.finditer(description)
    )
