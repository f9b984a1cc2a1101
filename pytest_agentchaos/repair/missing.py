"""Values the call lacks: the schema's default, the description's default where the task
gives none, the rule inferer reading the task, the user's inferer, and the model proposer
(which also answers any problem the rules leave). A part of :class:`~.repairer.ParamRepairer`."""

from __future__ import annotations

import copy
import datetime as _dt
from collections.abc import Callable
from typing import Any

from ..escape.classify import ErrorClassifier
from ..saferepr import safe_str
from .calls import ToolCalls
from .choose import Renamed, confidence_ok, sound
from .effective import rules_for
from .fixes import DROP, Context, Decline, Fix
from .infer import InferenceRequest, Inferer, RuleInferer
from .names import named_for
from .paths import field_of, get, has
from .plain import not_json
from .policy import STRATEGIES
from .progress import apply_fix, found_fix, required
from .proposers import candidates_of
from .results import RepairStep
from .spec import Problem, checker_for
from .words import find_word

__all__ = ["MissingValues"]


class MissingValues(ToolCalls):
    """Fills missing values and asks the model proposer (the base of the repairer's rounds)."""

    inferer: Inferer | None
    rules: RuleInferer
    classifier: ErrorClassifier
    model: Callable[..., Any] | None

    def _fill(
        self,
        missing: list[Problem],
        current: dict[str, Any],
        steps: list[RepairStep],
        task: str | None,
        now: _dt.datetime | None,
        error: str | None,
    ) -> Decline | None:
        need: list[Problem] = []
        fallback: dict[str, Fix] = {}
        for problem in missing:
            schema = problem.schema or self.spec.schema_at(problem.path)
            name = str(problem.path[-1]) if problem.path else ""
            described = rules_for(self.spec.schema_at(problem.path), name)
            holders = self._undeclared_holders(problem, schema, current)
            if holders and ("default" in schema or described.has_default):
                # a default would stand in for a value the call may already carry under a
                # name the tool does not know: which it is, is not for a default to say
                listed = ", ".join(repr(k) for k in holders)
                return Decline(
                    "default_value_assignment",
                    f"{problem.field} is missing, and the call's {listed} may hold its value: "
                    "filling the default would drop what was sent",
                )
            if "default" in schema and schema["default"] is None and problem.source == "error":
                # the tool's error asks for the value, and the schema's default is null, no
                # value at all: sending it answers nothing. Only the task can give it
                need.append(problem)
            elif "default" in schema and not _task_names_other(schema, described, task):
                fix = Fix(
                    "default_value_assignment",
                    copy.deepcopy(schema["default"]),
                    1.0,
                    "the schema's default",
                )
                declined = apply_fix(fix, problem, None, current, steps, self.policy)
                if declined is not None:
                    return declined
            elif "default" in schema:
                need.append(problem)  # the task names another allowed value: read it
            else:
                # used only where the task gives no value; an instruction for when the user
                # states none ("use X if no target zone is given") holds only where a task
                # shows that: without one, the value may have been stated and lost on the way
                if described.has_default and (task or not described.default_if_unstated):
                    said = described.provenance.get("default", "")
                    fallback[field_of(problem.path)] = Fix(
                        "default_value_assignment", copy.deepcopy(described.default), 0.9,
                        f"the description's default ({said!r}), the task giving none",
                    )  # fmt: skip
                need.append(problem)
        if not need:
            return None
        names = tuple(str(p.path[-1]) for p in need if len(p.path) == 1)
        found: dict[str, Fix] = {}
        if names:
            request = InferenceRequest(self.spec, dict(current), names, task, error, now)
            found.update(self.rules.infer(request))
            if self.inferer is not None and any(n not in found for n in names):
                rest = tuple(n for n in names if n not in found)
                asked = InferenceRequest(self.spec, dict(current), rest, task, error, now)
                try:
                    answer = self.inferer.infer(asked)
                except Exception as exc:
                    answer = {}
                    steps.append(
                        RepairStep(
                            "(inferer)",
                            "missing",
                            "infer_missing_param",
                            None,
                            None,
                            0.0,
                            f"the inferer raised {type(exc).__name__}: {safe_str(exc, 200)}",
                            False,
                        )
                    )
                found.update(sound(answer, rest))
        for problem in need:
            top = str(problem.path[-1]) if len(problem.path) == 1 else None
            if top is None and task and isinstance(problem.path[-1], str):
                inner = self.rules._one(str(problem.path[-1]),
                                        self.spec.schema_at(problem.path), task[:8000], now,
                                        current)  # fmt: skip
                if inner is not None:
                    found[field_of(problem.path)] = inner
                    continue
            if (top is None or top not in found) and field_of(problem.path) not in fallback:
                asked_fix = self._ask_model(problem, current, task, now, steps)
                if asked_fix is not None:
                    found[field_of(problem.path)] = asked_fix
        for problem in need:
            if found_fix(found, problem) is None and field_of(problem.path) in fallback:
                found[field_of(problem.path)] = fallback[field_of(problem.path)]
        unknown = [p for p in need if found_fix(found, p) is None]
        if unknown:
            listed = ", ".join(repr(p.field) for p in unknown)
            where = "the task does not state" if task else "no task was given to read"
            them = "them" if len(unknown) > 1 else "it"
            reason = f"no value for the required {listed}: {where} {them}"
            for problem in unknown:
                steps.append(
                    RepairStep(
                        problem.field,
                        "missing",
                        "infer_missing_param",
                        None,
                        None,
                        0.0,
                        reason,
                        False,
                    )
                )
            return Decline("infer_missing_param", reason)
        for problem in need:
            declined = apply_fix(
                found_fix(found, problem), problem, None, current, steps, self.policy
            )
            if declined is not None:
                return declined
        return None

    def _ask_model(
        self,
        problem: Problem,
        current: dict[str, Any],
        task: str | None,
        now: _dt.datetime | None,
        steps: list[RepairStep],
    ) -> Fix | None:
        """The model proposer's first candidate that fits the schema at the problem's path
        (a drop only of a key the schema does not require), or None."""
        if self.model is None or not self.policy.allows("model_proposal"):
            return None
        ctx = self._context(problem, current, task, now)
        try:
            candidates = candidates_of(self.model, problem, copy.deepcopy(current), ctx)
        except Exception as exc:
            steps.append(RepairStep(problem.field, problem.kind, "model_proposal", None, None,
                                    0.0, f"the model proposer raised {type(exc).__name__}: "
                                    f"{safe_str(exc, 200)}", False))  # fmt: skip
            return None
        schema = self.spec.schema_at(problem.path) or problem.schema
        for fix in candidates:
            if not confidence_ok(fix.confidence):
                continue
            if isinstance(fix.value, Renamed):
                renamed = self._model_rename(problem, fix, current, task)
                if renamed is not None:
                    return renamed
                continue
            if fix.value is DROP:
                if problem.kind != "missing" and not required(self.spec, problem.path):
                    return Fix("model_proposal", DROP, fix.confidence, fix.reason)
                continue
            try:
                fits = checker_for(schema).is_valid(fix.value) if schema else True
            except Exception:
                fits = False
            if fits and not_json({"v": fix.value}) is None:
                strategy = "model_proposal" if fix.strategy not in STRATEGIES else fix.strategy
                return Fix(strategy, copy.deepcopy(fix.value), fix.confidence, fix.reason)
        return None

    def _model_rename(
        self, problem: Problem, fix: Fix, current: dict[str, Any], task: str | None
    ) -> Fix | None:
        """A model's rename of a key the tool does not have, taken when the problem is that
        key, the target is a parameter its object declares and lacks, the value (the one
        sent, unchanged) fits the target's schema, and something besides the model ties the
        two: their names, or the task or the error naming the target."""
        if problem.kind != "unknown" or not problem.path or not has(current, problem.path):
            return None
        target, value = fix.value.target, get(current, problem.path)
        parent = problem.path[:-1]
        declared = self.spec.schema_at(parent).get("properties")
        holder = get(current, parent) if parent else current
        if (
            not isinstance(declared, dict)
            or target not in declared
            or not isinstance(holder, dict)
            or target in holder
            or fix.value.value != value
        ):
            return None
        try:
            fits = checker_for(declared[target]).is_valid(value)
        except Exception:
            fits = False
        if not fits or not self.policy.allows("rename_key"):
            return None
        if not named_for(str(problem.path[-1]), target, f"{task or ''}\n{problem.message}"):
            return None  # "lable" -> "assignee": nothing but the model ties the value there
        why = f"the model proposes {problem.path[-1]!r} is the parameter {target!r}"
        return Fix("rename_key", Renamed(target, copy.deepcopy(value)), fix.confidence, why)

    def _context(
        self, problem: Problem, current: dict[str, Any], task: str | None, now: _dt.datetime | None
    ) -> Context:
        name = next((str(p) for p in reversed(problem.path) if isinstance(p, str)), "")
        schema = problem.schema or self.spec.schema_at(problem.path)
        described = str(schema.get("description", ""))[:2000]
        parent = self.spec.schema_at(problem.path[:-1]) if problem.path else {}
        siblings = parent.get("properties") if isinstance(parent, dict) else None
        holder = get(current, problem.path[:-1]) if has(current, problem.path[:-1]) else None
        # a choice the task itself writes is settled: it says nothing a sign could mean
        beside = tuple(
            key for key, sub in (siblings.items() if isinstance(siblings, dict) else ())
            if key != name and isinstance(sub, dict) and len(sub.get("enum") or ()) >= 2
            and isinstance(holder, dict) and isinstance(holder.get(key), str)
            and find_word((task or "")[:4000].casefold(), holder[key].casefold()) < 0
        )  # fmt: skip
        return Context(name, current, task, now, self.policy.synonyms, self.policy.fuzzy_score,
                       described, beside)  # fmt: skip

    def _undeclared_holders(
        self, problem: Problem, schema: Any, current: dict[str, Any]
    ) -> list[str]:
        """Keys next to a missing one that its object does not declare and whose values fit
        the missing key's schema (``from`` beside a missing ``source_timezone``)."""
        parent: Any = current
        for part in problem.path[:-1]:
            try:
                parent = parent[part]
            except (KeyError, IndexError, TypeError):
                return []
        if not isinstance(parent, dict) or not isinstance(schema, dict) or not schema:
            return []
        declared = self.spec.schema_at(problem.path[:-1]).get("properties", {})
        if not isinstance(declared, dict):
            return []
        checker = checker_for(schema)
        return [
            str(key) for key, value in parent.items()
            if key not in declared and value is not None and checker.is_valid(value)
        ]  # fmt: skip


def _task_names_other(schema: Any, described: Any, task: str | None) -> bool:
    """Whether the task names one of the field's allowed values (its schema's or its
    description's list) other than the schema's default: the default stands in for a value
    nobody gave, not for the one the user names."""
    if not task:
        return False
    allowed = schema.get("enum") if isinstance(schema.get("enum"), list) else described.enum
    default = schema.get("default")
    text = task[:8000].casefold()
    return any(
        isinstance(v, str) and len(v) >= 2 and v != default and find_word(text, v.casefold()) >= 0
        for v in allowed or ()
    )
