"""The self-correction loop (seed 003's repair graph): diagnose -> select a strategy -> apply
-> validate -> retry, with a report at the end.

:meth:`ParamRepairer.repair` runs no tool: it takes a call's arguments (and the tool's error,
the task's text, the run's clock) and returns a :class:`RepairResult`: corrected arguments
that validate, or ``None`` and the reason it declined. :meth:`ParamRepairer.call` and
:meth:`ParamRepairer.acall` run the tool, repairing parameter errors between attempts.

Each problem goes to the strategy for its kind (the seed's map): ``missing`` ->
``default_value_assignment``, else the inferer (``infer_missing_param``); ``unknown`` ->
``rename_key`` (a misspelt parameter) or ``drop_unknown_key``; ``type`` ->
``schema_type_conversion`` / ``wrap_in_list`` / ``unwrap_list``; ``enum`` ->
``enum_value_correction``; ``format`` and date patterns -> ``date_format_correction`` /
``format_correction``; ``pattern`` -> ``pattern_correction``; ``range`` -> ``clamp_value``;
``length`` -> ``length_correction``; a union -> the one branch a value can be repaired into.
A strategy's fix below the policy's threshold is a decline; so is any fix the policy turns off.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as _dt
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..escape.classify import ErrorClassifier
from ..escape.recorder import Recorder
from ..saferepr import safe_str
from ..trace.events import Repair
from ..trace.values import capture
from .audit import audit
from .calls import ToolCalls
from .choose import (
    Renamed,
    as_missing,
    confidence_ok,
    for_value,
    kind_of,
    rename_or_drop,
    satisfied,
    sound,
)
from .coerce import expand_wildcard, is_wildcard
from .compound import reshape
from .diagnose import ERROR_PATTERNS, Diagnosis, diagnose
from .effective import effective_problems, gloss, rules_for
from .fixes import DROP, Context, Decline, Fix, shown
from .infer import InferenceRequest, Inferer, RuleInferer, loads_lenient
from .lint import lint, rename_all
from .paths import delete, field_of, get, has, plain, put
from .plain import not_json
from .policy import STRATEGIES, RepairPolicy
from .proposers import candidates_of
from .reading import leaf_values
from .refused import exclusive_pair
from .results import RepairError, RepairResult, RepairStep
from .spec import Problem, ToolSpec, checker_for, nullable_branch

__all__ = [
    "STRATEGIES",
    "ParamRepairer",
    "RepairError",
    "RepairPolicy",
    "RepairResult",
    "RepairStep",
]

_ROUNDS = 6  # fix rounds per repair: a fix can reveal the next problem (a list's item)


class ParamRepairer(ToolCalls):
    """Repairs the arguments of one tool's calls against its :class:`~.spec.ToolSpec`."""

    def __init__(
        self,
        spec: ToolSpec,
        inferer: Inferer | None = None,
        policy: RepairPolicy | None = None,
        *,
        classifier: ErrorClassifier | None = None,
        recorder: Recorder | None = None,
        clock: Callable[[], _dt.datetime] | None = None,
        task: str | None = None,
        model: Callable[..., Any] | None = None,
    ) -> None:
        if not isinstance(spec, ToolSpec):
            raise TypeError(f"ParamRepairer needs a ToolSpec, got {type(spec).__name__}")
        if inferer is not None and not isinstance(inferer, Inferer):
            raise TypeError(f"an inferer has infer(request) -> dict; got {inferer!r}")
        self.spec = spec
        self.inferer = inferer
        self.rules = RuleInferer()
        self.policy = policy or RepairPolicy()
        self.classifier = classifier or ErrorClassifier()
        self.recorder = recorder
        self.clock = clock
        self.task = task
        if model is not None and not callable(model):
            raise TypeError(
                f"a model proposer is a callable (problem, call, context); got {model!r}"
            )
        self.model = model
        self.patterns = (*self.policy.error_patterns, *ERROR_PATTERNS)

    @classmethod
    def for_run(cls, run: Any, spec: ToolSpec, **kwargs: Any) -> ParamRepairer:
        """A repairer wired to a chaos run (the ``chaos`` fixture): the profile's ``[repair]``
        policy, the run's trace and its virtual clock."""
        if "policy" not in kwargs:
            profile = getattr(run, "profile", None)
            kwargs["policy"] = profile.policy("repair") if profile is not None else RepairPolicy()
        clock = run.clock
        kwargs.setdefault("recorder", run.session)
        kwargs.setdefault(
            "clock", lambda: _dt.datetime.fromtimestamp(clock.now(), _dt.timezone.utc)
        )
        return cls(spec, **kwargs)

    def wired(self, recorder: Recorder, clock: Callable[[], _dt.datetime]) -> ParamRepairer:
        """This repairer writing its ``Repair`` events to ``recorder`` and reading relative
        dates against ``clock``, where it has none of its own (``chaos.wrap(..., repair=)``
        wires it to the run: its trace and virtual clock). A copy; this one is unchanged."""
        twin = copy.copy(self)
        if twin.recorder is None:
            twin.recorder = recorder
        if twin.clock is None:
            twin.clock = clock
        return twin

    # -- one repair, no tool ---------------------------------------------------------------

    def repair(
        self,
        args: Any,
        error: BaseException | str | int | None = None,
        task: str | None = None,
        now: _dt.datetime | None = None,
        *,
        at: int | None = None,
        intended: Mapping[str, Any] | None = None,
    ) -> RepairResult:
        """Repair ``args`` (after ``error``, for ``task``, with ``now`` for relative dates;
        the repairer's own task and clock when not given). ``at``: the index of the call
        among the tool's calls, written in the ``Repair`` event. ``intended``: the call as
        the agent made it, when something corrupted it on the way (a ``malformed_params``
        fault): what the repairer makes of it is written in the event too, so
        ``must_repair`` can tell a repair that brought the agent's request back from one that
        made another."""
        if error is not None and (
            isinstance(error, bool) or not isinstance(error, (BaseException, str, int))
        ):
            raise TypeError(
                "repair(error=...) takes the tool's exception, its message or an HTTP status, "
                f"got {type(error).__name__}"
            )
        if now is None and self.clock is not None:
            now = self.clock()
        if task is None:
            task = self.task
        result = self._decide(args, error, task, now)
        meant = None
        if intended is not None:
            own = self._decide(intended, None, task, now)
            meant = own.args if own.ok else dict(intended)
        return self._report(result, args, at, meant)

    def _decide(
        self,
        args: Any,
        error: BaseException | str | int | None,
        task: str | None,
        now: _dt.datetime | None,
    ) -> RepairResult:
        steps: list[RepairStep] = []
        if isinstance(args, str):  # arguments sent as (slightly malformed) JSON text
            if len(args) > _JSON_TEXT_LIMIT:
                reason = f"the arguments are {len(args)} characters of text: too long to read"
                return RepairResult(False, None, "json_repair", 0.0, reason)
            parsed = loads_lenient(args)
            if not isinstance(parsed, dict) or not self.policy.allows("json_repair"):
                reason = "the arguments are text that holds no JSON object"
                return RepairResult(False, None, "json_repair", 0.0, reason)
            steps.append(
                RepairStep(
                    "(arguments)",
                    "type",
                    "json_repair",
                    args,
                    parsed,
                    0.95,
                    "the arguments were sent as JSON text",
                    True,
                )
            )
            args = parsed
        if not isinstance(args, Mapping):
            reason = f"the arguments are {type(args).__name__}, not an object"
            return RepairResult(False, None, "report_unrecoverable", 0.0, reason)
        odd = not_json(dict(args))
        if odd is not None:  # sets, NaN, objects, cycles, nesting past reading...
            reason = f"the arguments are not JSON data: {odd}"
            return RepairResult(False, None, "report_unrecoverable", 0.0, reason)
        try:
            return self._decide_data(copy.deepcopy(dict(args)), error, task, now, steps)
        except RecursionError:  # a schema whose $ref loops, or a value too deep for it
            reason = (
                "the tool's schema cannot be applied to these arguments (it refers to itself "
                "without end, or they nest too deep for it)"
            )
            return RepairResult(False, None, "report_unrecoverable", 0.0, reason, tuple(steps))

    def _decide_data(
        self,
        args: dict[str, Any],
        error: BaseException | str | int | None,
        task: str | None,
        now: _dt.datetime | None,
        steps: list[RepairStep],
    ) -> RepairResult:
        original = copy.deepcopy(args)
        # the error is about the call as it was sent: read it against that call
        diagnosis = diagnose(
            self.spec, original, error, classifier=self.classifier, patterns=self.patterns
        )
        if diagnosis.kind == "transient":  # no parameter error: nothing to repair
            reason = f"{diagnosis.reason} (a transient failure, not a parameter error)"
            return RepairResult(False, None, "retry", 0.0, reason, (), diagnosis)
        if diagnosis.kind in ("route", "auth", "business"):
            strategy = "alternative_route" if diagnosis.kind == "route" else "report_unrecoverable"
            return RepairResult(False, None, strategy, 0.0, diagnosis.reason, (), diagnosis)
        renamed: dict[tuple[str | int, ...], tuple[str | int, ...]] = {}
        if self.policy.allows("rename_key"):
            before = len(steps)
            rename_all(args, self.spec.resolved, self.policy, (), steps)
            renamed = _renames(steps[before:])
        if self.policy.allows("unwrap_object"):
            _flatten_wrapper(args, self.spec.resolved, steps)
        reshaped = reshape(args, self.spec.resolved, self.policy, steps)
        if reshaped is not None:
            return RepairResult(False, None, reshaped.strategy, 0.0, reshaped.reason, tuple(steps))
        linted = lint(args, self.spec.resolved, self.policy, (), steps, task, now)
        if linted is not None:
            return RepairResult(False, None, linted.strategy, 0.0, linted.reason, tuple(steps))
        # each problem the error named, where the passes moved its field, re-judged against
        # the call as it is now: a problem the passes solved is gone (a success, not a decline)
        checks = [_moved(p, renamed) for p in diagnosis.problems if p.source == "error"]
        live = [p for p in checks if not _gone(p, args, original, renamed)]
        problems = self._problems(args) + live
        if diagnosis.kind == "unknown":  # the error points at nothing the passes could have fixed
            return RepairResult(
                False, None, "report_unrecoverable", 0.0, diagnosis.reason, (), diagnosis
            )
        if not problems:
            if steps:
                used = [s for s in steps if s.ok]
                why = self._audit(original, args, task, steps)
                if why is not None:
                    return RepairResult(False, None, "intent_audit", 0.0, why, tuple(steps),
                                        diagnosis)  # fmt: skip
                reason = "; ".join(f"{s.field}: {s.reason}" for s in used)
                confidence = min((s.confidence for s in used), default=1.0)
                strategy = used[0].strategy if used else "none"
                return RepairResult(
                    True, dict(args), strategy, confidence, reason, tuple(steps), diagnosis
                )
            return RepairResult(True, dict(args), "none", 1.0, "nothing to repair", (), diagnosis)
        text = (
            error
            if isinstance(error, str)
            else (safe_str(error, 4000) if error is not None else None)
        )
        live_diagnosis = Diagnosis("parameter", tuple(problems), diagnosis.reason,
                                   diagnosis.error_class, diagnosis.reading)  # fmt: skip
        return self._fix_all(dict(args), live_diagnosis, steps, task, now, text, original, renamed)

    def _fix_all(
        self,
        args: dict[str, Any],
        diagnosis: Diagnosis,
        steps: list[RepairStep],
        task: str | None,
        now: _dt.datetime | None,
        error: str | None,
        original: dict[str, Any] | None = None,
        renamed: Mapping[tuple[str | int, ...], tuple[str | int, ...]] | None = None,
    ) -> RepairResult:
        current = copy.deepcopy(args)
        first = original if original is not None else args
        moves = renamed or {}
        checks: list[Problem] = [p for p in diagnosis.problems if p.source == "error"]
        problems = list(diagnosis.problems)
        for _ in range(_ROUNDS):
            if not problems:
                break
            declined = self._round(current, problems, steps, task, now, error)
            if declined is not None:
                return RepairResult(
                    False, None, declined.strategy, 0.0, declined.reason, tuple(steps), diagnosis
                )
            problems = self._problems(current) + [
                p for p in checks if not _gone(p, current, first, moves)
            ]
        left = self._problems(current) + [p for p in checks if not _gone(p, current, first, moves)]
        if left:
            reason = "still invalid after repair: " + "; ".join(
                f"{p.field}: {p.message}" for p in left[:3]
            )
            return RepairResult(
                False, None, "report_unrecoverable", 0.0, reason, tuple(steps), diagnosis
            )
        why = self._audit(first, current, task, steps)
        if why is not None:
            return RepairResult(False, None, "intent_audit", 0.0, why, tuple(steps), diagnosis)
        used = [s for s in steps if s.ok]
        confidence = min((s.confidence for s in used), default=1.0)
        strategy = used[0].strategy if used else "none"
        reason = "; ".join(f"{s.field}: {s.reason}" for s in used) or "nothing to repair"
        return RepairResult(True, current, strategy, confidence, reason, tuple(steps), diagnosis)

    def _audit(
        self,
        original: Mapping[str, Any],
        repaired: Mapping[str, Any],
        task: str | None,
        steps: list[RepairStep],
    ) -> str | None:
        """The intent audit of the whole repaired call (:mod:`.audit`); a refusal is a step."""
        described = {
            path: str(self.spec.schema_at(path).get("description", ""))
            for path, _ in leaf_values(original)
        }
        why = audit(original, repaired, task, steps, described)
        if why is not None:
            steps.append(RepairStep("(arguments)", "audit", "intent_audit", None, None, 0.0,
                                    why, False))  # fmt: skip
        return why

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
        for problem in problems:
            if problem.path in done or problem.kind == "missing":
                continue
            done.add(problem.path)
            if problem.kind == "unknown" and not has(current, problem.path):
                continue  # renamed away already
            outcome: Fix | Decline | None
            if problem.kind == "exclusive":  # the problem moves to the parameter dropped
                properties = self.spec.parameters.get("properties", {})
                problem, outcome = exclusive_pair(problem, current, properties, task)
                before = get(current, problem.path) if has(current, problem.path) else None
            elif _wildcard_item(problem, current):  # ["all"]: the list is the problem
                problem = dataclasses.replace(problem, path=problem.path[:-1], kind="type")
                before = get(current, problem.path)
                outcome = expand_wildcard(before[0], self.spec.schema_at(problem.path))
            else:
                before = get(current, problem.path)
                ctx = self._context(problem, current, task, now)
                outcome = self._strategy(problem, before, ctx, current, missing)
            if not isinstance(outcome, Fix) or not self._usable(outcome):
                outcome = self._ask_model(problem, current, task, now, steps) or outcome
            declined = self._apply(outcome, problem, before, current, steps)
            if declined is not None:
                return declined
        missing = [p for p in missing if not has(current, p.path)]
        if missing:
            return self._fill(missing, current, steps, task, now, error)
        return None

    def _apply(
        self,
        outcome: Fix | Decline | None,
        problem: Problem,
        before: Any,
        current: dict[str, Any],
        steps: list[RepairStep],
    ) -> Decline | None:
        if outcome is None:
            outcome = Decline("report_unrecoverable", problem.message)
        if isinstance(outcome, Fix) and not confidence_ok(outcome.confidence):
            outcome = Decline(
                outcome.strategy, f"a fix with no sound confidence ({outcome.confidence!r})"
            )
        if isinstance(outcome, Fix) and not self.policy.allows(outcome.strategy):
            outcome = Decline(outcome.strategy, f"{outcome.strategy} is turned off by the policy")
        if isinstance(outcome, Fix) and outcome.confidence < self.policy.threshold:
            outcome = Decline(
                outcome.strategy,
                f"{outcome.reason}, but with confidence {outcome.confidence:.2f} below the "
                f"threshold {self.policy.threshold:.2f}",
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
            and (not _required(self.spec, problem.path))
        ):
            why = "null in an optional field: left out, so the tool's own default applies"
            return Fix("drop_unknown_key", DROP, 0.9, why)
        name = next((str(p) for p in reversed(problem.path) if isinstance(p, str)), "")
        glossed = gloss(value, rules_for(self.spec.schema_at(problem.path), name))
        if glossed is not None and kind in ("type", "enum", "union", "rejected"):
            return Fix("enum_value_correction", glossed, 0.9,
                       f"the description glosses {shown(value)} as {glossed!r}")  # fmt: skip
        if kind == "unknown":
            return rename_or_drop(problem, value, current, self.spec, missing)
        if kind == "union":
            return self._union(problem, value, ctx)
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
        inner = ParamRepairer(spec, policy=self.policy, classifier=self.classifier)
        result = inner._decide(value, None, ctx.task, ctx.now)
        if not result.ok or result.args is None:
            return None
        used = [s for s in result.steps if s.ok]
        reason = "; ".join(f"{s.field}: {s.reason}" for s in used) or "fits as it is"
        return Fix(used[0].strategy if used else "schema_type_conversion", result.args,
                   result.confidence, reason)  # fmt: skip

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
            if "default" in schema:
                fix = Fix(
                    "default_value_assignment",
                    copy.deepcopy(schema["default"]),
                    1.0,
                    "the schema's default",
                )
                declined = self._apply(fix, problem, None, current, steps)
                if declined is not None:
                    return declined
            else:
                if described.has_default:  # used only where the task gives no value
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
            if _found(found, problem) is None and field_of(problem.path) in fallback:
                found[field_of(problem.path)] = fallback[field_of(problem.path)]
        unknown = [p for p in need if _found(found, p) is None]
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
            declined = self._apply(_found(found, problem), problem, None, current, steps)
            if declined is not None:
                return declined
        return None

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
            if fix.value is DROP:
                if problem.kind != "missing" and not _required(self.spec, problem.path):
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

    def _context(
        self, problem: Problem, current: dict[str, Any], task: str | None, now: _dt.datetime | None
    ) -> Context:
        name = next((str(p) for p in reversed(problem.path) if isinstance(p, str)), "")
        schema = problem.schema or self.spec.schema_at(problem.path)
        described = str(schema.get("description", ""))[:2000]
        return Context(name, current, task, now, self.policy.synonyms, self.policy.fuzzy_score,
                       described)  # fmt: skip

    def _report(
        self, result: RepairResult, before: Any, at: int | None, intended: Any = None
    ) -> RepairResult:
        # a transient error is no parameter problem: nothing was repaired, nothing to record
        recorded = result.strategy not in ("none", "retry") or intended is not None
        if self.recorder is not None and recorded:
            self.recorder.record(
                Repair,
                tool=self.spec.name,
                strategy=result.strategy,
                ok=result.ok,
                before=capture(before)
                if isinstance(before, Mapping)
                else {"(arguments)": capture(before)},
                after=capture(plain(result.args)) if result.args is not None else {},
                detail={
                    "index": at,
                    "confidence": result.confidence,
                    "reason": safe_str(result.reason, 2000),
                    "steps": capture([s.to_dict() for s in result.steps]),
                    **({"intended": capture(plain(intended))} if intended is not None else {}),
                },
            )
        return result


_JSON_TEXT_LIMIT = 200_000


def _flatten_wrapper(
    args: dict[str, Any], schema: Mapping[str, Any], steps: list[RepairStep]
) -> None:
    """The parameters sent inside one wrapper object (``{"params": {"url": ...}}``): the one
    undeclared key whose object holds only declared parameters, among them every required one
    the call lacks, is replaced by its keys."""
    props = schema.get("properties")
    required = schema.get("required")
    if not isinstance(props, Mapping) or not isinstance(required, list):
        return
    unknown = [k for k in args if k not in props]
    if len(unknown) != 1 or not isinstance(args[unknown[0]], dict) or not args[unknown[0]]:
        return
    inner = args[unknown[0]]
    missing = {r for r in required if r not in args}
    if not missing or not missing <= set(inner) or not set(inner) <= set(props):
        return
    if any(k in args for k in inner):
        return
    args.pop(unknown[0])
    args.update(inner)
    why = f"the parameters were sent inside {unknown[0]!r}"
    steps.append(RepairStep(unknown[0], "unknown", "unwrap_object", dict(inner), dict(inner),
                            0.9, why, True))  # fmt: skip


def _wildcard_item(problem: Problem, current: Mapping[str, Any]) -> bool:
    """An enum problem at the one item of a list that is a wildcard (``["all"]``)."""
    if problem.kind != "enum" or not problem.path or not isinstance(problem.path[-1], int):
        return False
    holder = get(current, problem.path[:-1])
    return isinstance(holder, list) and len(holder) == 1 and is_wildcard(holder[0])


def _found(found: Mapping[str, Fix], problem: Problem) -> Fix | None:
    """The inferred fix for a missing problem: by its top-level name, else by its path."""
    if len(problem.path) == 1 and str(problem.path[0]) in found:
        return found[str(problem.path[0])]
    return found.get(field_of(problem.path))


def _required(spec: ToolSpec, path: tuple[str | int, ...]) -> bool:
    parent = spec.schema_at(path[:-1])
    required = parent.get("required", ())
    return bool(path) and isinstance(required, list) and path[-1] in required


def _renames(steps: list[RepairStep]) -> dict[tuple[str | int, ...], tuple[str | int, ...]]:
    """Where the rename pass moved each key: ``{old path: new path}``."""
    moves: dict[tuple[str | int, ...], tuple[str | int, ...]] = {}
    for step in steps:
        if step.ok and step.strategy == "rename_key" and isinstance(step.after, str):
            parent = _path_of(step.field)[:-1]
            old: tuple[str | int, ...] = (*parent, str(step.before))
            moves[old] = (*parent, step.after)
    return moves


def _path_of(field: str) -> tuple[str | int, ...]:
    parts: list[str | int] = []
    for piece in re.split(r"\.|\[|\]", field):
        if piece:
            parts.append(int(piece) if piece.isdigit() else piece)
    return tuple(parts)


def _moved(
    problem: Problem, moves: Mapping[tuple[str | int, ...], tuple[str | int, ...]]
) -> Problem:
    """A problem the error named at a key the rename pass moved, at the key's new place."""
    for old, new in moves.items():
        if problem.path[: len(old)] == old:
            return dataclasses.replace(problem, path=(*new, *problem.path[len(old) :]))
    return problem


def _gone(
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
