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
from collections.abc import Callable, Mapping
from typing import Any

from ..escape.classify import ErrorClassifier
from ..escape.recorder import Recorder
from ..saferepr import safe_str
from ..trace.events import Repair
from ..trace.values import capture
from .audit import audit
from .choose import Renamed, confidence_ok
from .compound import flatten_wrapper, reshape
from .currencies import amount_in_other_currency, measure_in_other_unit
from .diagnose import ERROR_PATTERNS, Diagnosis, diagnose
from .infer import Inferer, RuleInferer, loads_lenient
from .json_text import about_the_syntax, closing_brackets
from .lint import lint, rename_all
from .ordered import STRATEGY as ORDER_STRATEGY
from .ordered import split_spans, unswap_ranges
from .paths import plain
from .person_names import STRATEGY as NAME_STRATEGY
from .person_names import person_names
from .plain import not_json
from .policy import STRATEGIES, RepairPolicy
from .progress import gone, moved, renames
from .proposers import candidates_of
from .reading import leaf_values
from .refused import narrow_refused
from .results import RepairError, RepairResult, RepairStep
from .rounds import StrategyRounds
from .spec import Problem, ToolSpec
from .whole_call import call_problem, call_steps, refused_answer

__all__ = [
    "STRATEGIES",
    "ParamRepairer",
    "RepairError",
    "RepairPolicy",
    "RepairResult",
    "RepairStep",
]

_ROUNDS = 6  # fix rounds per repair: a fix can reveal the next problem (a list's item)


class ParamRepairer(StrategyRounds):
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

    def _for_branch(self, spec: ToolSpec) -> ParamRepairer:
        return ParamRepairer(spec, policy=self.policy, classifier=self.classifier)

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
            closed = closing_brackets(args) if parsed is None else None
            if closed is not None:  # the text stops after a whole value, its brackets unclosed
                parsed = loads_lenient(closed)
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
            if about_the_syntax(args, error):
                error = None  # the tool could not read the text; read, it says nothing more
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
            rename_all(args, self.spec.resolved, self.policy, (), steps, task)
            renamed = renames(steps[before:])
        if self.policy.allows(NAME_STRATEGY):
            split = person_names(args, self.spec.resolved, task, steps)
            if split is not None:
                return RepairResult(False, None, split.strategy, 0.0, split.reason, tuple(steps))
        if self.policy.allows("unwrap_object"):
            flatten_wrapper(args, self.spec.resolved, steps)
        reshaped = reshape(args, self.spec.resolved, self.policy, steps)
        if reshaped is not None:
            return RepairResult(False, None, reshaped.strategy, 0.0, reshaped.reason, tuple(steps))
        if self.model is not None and _ignored_but_stated(args, self.spec.resolved, task):
            renamed.update(self._rename_ignored(args, task, now, steps))
        ignored = _ignored_but_stated(args, self.spec.resolved, task) or (
            amount_in_other_currency(args, self.spec.resolved, task)
            or measure_in_other_unit(args, self.spec.resolved, task)
        )
        if ignored is not None:
            return RepairResult(False, None, "report_unrecoverable", 0.0, ignored, tuple(steps))
        if self.policy.allows(ORDER_STRATEGY):
            split_spans(args, self.spec.resolved, steps)
            unswap_ranges(args, task, now, steps)
        linted = lint(args, self.spec.resolved, self.policy, (), steps, task, now)
        if linted is not None:
            return RepairResult(False, None, linted.strategy, 0.0, linted.reason, tuple(steps))
        # each problem the error named, where the passes moved its field, re-judged against
        # the call as it is now: a problem the passes solved is gone (a success, not a decline)
        named = narrow_refused(
            [_aimed(p, self.spec, original) for p in diagnosis.problems], original, task
        )
        checks = [moved(p, renamed) for p in named if p.source == "error"]
        live = [p for p in checks if not gone(p, args, original, renamed)]
        problems = self._problems(args) + live
        if diagnosis.kind == "unknown" and not _broke_its_schema(steps, problems):
            # the error points at nothing, and the call broke nothing its schema or its
            # descriptions state: nothing the passes could have fixed, unless a model proposer
            # reads the refusal as asking for another call
            asked = self._ask_for_call(original, diagnosis, error, task, now)
            if asked is not None:
                return asked
            return RepairResult(
                False, None, "report_unrecoverable", 0.0, diagnosis.reason, (), diagnosis
            )
        if not problems:
            if steps:
                used = [s for s in steps if s.ok]
                why = _resent_refused(diagnosis, original, args) or self._audit(
                    original, args, task, steps
                )
                if why is not None:
                    return RepairResult(False, None, "intent_audit", 0.0, why, tuple(steps),
                                        diagnosis)  # fmt: skip
                reason = "; ".join(f"{s.field}: {s.reason}" for s in used)
                confidence = min((s.confidence for s in used), default=1.0)
                strategy = used[0].strategy if used else "none"
                return RepairResult(
                    True, dict(args), strategy, confidence, reason, tuple(steps), diagnosis
                )
            if error is not None and diagnosis.kind == "parameter" and diagnosis.problems:
                # the tool refused the call for its parameters, and nothing the error says is
                # found in it: sent again as it is, it is refused again
                reason = (
                    f"the tool refused the call ({diagnosis.reason}), and nothing in it is "
                    "found to repair"
                )
                return RepairResult(False, None, "report_unrecoverable", 0.0, reason, (),
                                    diagnosis)  # fmt: skip
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
            done = len(steps)
            declined = self._round(current, problems, steps, task, now, error)
            if declined is not None:
                return RepairResult(
                    False, None, declined.strategy, 0.0, declined.reason, tuple(steps), diagnosis
                )
            if not any(_changed(step) for step in steps[done:]):
                # the call is as it was: the next round would see the same problems and ask
                # the same questions (a model proposer, once per round, for nothing)
                break
            problems = self._problems(current) + [
                p for p in checks if not gone(p, current, first, moves)
            ]
        left = self._problems(current) + [p for p in checks if not gone(p, current, first, moves)]
        if left and error is not None and all(p.source == "error" for p in left):
            # the schema is met and the error still pins a field whose value the rounds kept
            # (the model, asked there, kept it too): the refusal may be about another field
            # or one the call lacks; a model proposer is offered the whole call
            asked = self._ask_for_call(first, diagnosis, error, task, now)
            if asked is not None:
                return asked
        if left:
            reason = "still invalid after repair: " + "; ".join(
                f"{p.field}: {p.message}" for p in left[:3]
            )
            return RepairResult(
                False, None, "report_unrecoverable", 0.0, reason, tuple(steps), diagnosis
            )
        why = _resent_refused(diagnosis, first, current) or self._audit(first, current, task, steps)
        if why is not None:
            return RepairResult(False, None, "intent_audit", 0.0, why, tuple(steps), diagnosis)
        used = [s for s in steps if s.ok]
        confidence = min((s.confidence for s in used), default=1.0)
        strategy = used[0].strategy if used else "none"
        reason = "; ".join(f"{s.field}: {s.reason}" for s in used) or "nothing to repair"
        return RepairResult(True, current, strategy, confidence, reason, tuple(steps), diagnosis)

    def _rename_ignored(
        self,
        args: dict[str, Any],
        task: str | None,
        now: _dt.datetime | None,
        steps: list[RepairStep],
    ) -> dict[tuple[str | int, ...], tuple[str | int, ...]]:
        """Keys the tool does not have (and would ignore) whose values the task states, put
        to a supplied model proposer: a rename it proposes to a parameter the call lacks is
        applied in place (``client_reference`` sent for ``client_ref``); any other answer
        leaves the key, and the decline for it stands. Returns the moves made."""
        props = self.spec.resolved.get("properties")
        moves: dict[tuple[str | int, ...], tuple[str | int, ...]] = {}
        if not isinstance(props, Mapping):
            return moves
        for key in [k for k in args if k not in props]:
            problem = Problem(
                "unknown", (key,), f"{key!r} is not a parameter of this tool, which ignores it"
            )
            fix = self._ask_model(problem, args, task, now, steps)
            if fix is None or not isinstance(fix.value, Renamed) or fix.value.target in args:
                continue
            args[fix.value.target] = args.pop(key)
            steps.append(RepairStep(key, "unknown", "rename_key", key, fix.value.target,
                                    fix.confidence, fix.reason, True))  # fmt: skip
            moves[(key,)] = (fix.value.target,)
        return moves

    def _ask_for_call(
        self,
        original: dict[str, Any],
        diagnosis: Diagnosis,
        error: BaseException | str | int | None,
        task: str | None,
        now: _dt.datetime | None,
    ) -> RepairResult | None:
        """A supplied model proposer's whole call for an error that names no parameter
        (:mod:`.whole_call`): taken when it fits the schema, keeps the call's keys, replaces
        no value the task writes that the error does not refuse, and passes the intent
        audit; None (the rules' decline stands) otherwise."""
        if self.model is None or error is None or not self.policy.allows("model_proposal"):
            return None
        text = error if isinstance(error, str) else safe_str(error, 4000)
        problem = call_problem(self.spec, text)
        ctx = self._context(problem, original, task, now)
        try:
            candidates = candidates_of(self.model, problem, copy.deepcopy(original), ctx)
        except Exception:
            return None
        for fix in candidates:
            if not confidence_ok(fix.confidence):
                continue
            candidate = fix.value
            if refused_answer(original, candidate, task, text, self.spec) is not None:
                continue
            repaired = copy.deepcopy(dict(candidate))
            if self._problems(repaired) or not_json(repaired) is not None:
                continue
            steps = call_steps(original, repaired, fix.confidence)
            if self._audit(original, repaired, task, steps) is not None:
                continue
            reason = "; ".join(f"{s.field}: {s.reason}" for s in steps)
            return RepairResult(True, repaired, "model_proposal", fix.confidence, reason,
                                tuple(steps), diagnosis)  # fmt: skip
        return None

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
            for path, _ in (*leaf_values(original), *leaf_values(repaired))
        }
        why = audit(original, repaired, task, steps, described)
        if why is not None:
            steps.append(RepairStep("(arguments)", "audit", "intent_audit", None, None, 0.0,
                                    why, False))  # fmt: skip
        return why

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


def _changed(step: RepairStep) -> bool:
    """Whether a step changed the call: applied, and its value after is not the one before
    (a value that cannot be compared counts as changed)."""
    if not step.ok:
        return False
    try:
        return not (type(step.before) is type(step.after) and bool(step.before == step.after))
    except Exception:
        return True


def _ignored_but_stated(
    args: Mapping[str, Any], schema: Mapping[str, Any], task: str | None
) -> str | None:
    """Why a call is declined when it carries a key its tool does not have and lets pass
    (no ``additionalProperties: false``) whose value the task states: the tool would ignore
    what the user asked for ("via Lyon" as ``waypoints`` to a tool without them)."""
    props = schema.get("properties")
    if not task or not isinstance(props, Mapping) or not props:
        return None
    if schema.get("additionalProperties") is False or "patternProperties" in schema:
        return None
    from .audit import task_states

    for key, value in args.items():
        if key in props:
            continue
        items = value if isinstance(value, list) else [value]
        if items and all(task_states(item, task[:8000]) for item in items):
            return (
                f"{key!r} is no parameter of this tool, which would ignore it, and the task "
                f"states its value {safe_str(value, 60)}: what was asked cannot be sent"
            )
    return None


def _broke_its_schema(steps: list[RepairStep], problems: list[Problem]) -> bool:
    """Whether the call as sent broke what its schema or its fields' descriptions state (a
    pass fixed a layout, or a problem is left that is no error's): what would be repaired
    with no error at all is repaired when the error names nothing."""
    fixed = any(s.ok and s.strategy != "json_repair" for s in steps)
    return fixed or any(p.source != "error" for p in problems)


def _aimed(problem: Problem, spec: ToolSpec, call: Mapping[str, Any]) -> Problem:
    """An error's problem about the whole call whose message names one of its parameters
    ("due_at is required when type is 'task'", reported at the request's body) as a problem
    of that parameter: for a missing value, the one named the call lacks."""
    if problem.path or problem.source != "error" or problem.kind not in ("missing", "other"):
        return problem
    from .words import find_word

    props = spec.resolved.get("properties")
    if not isinstance(props, Mapping):
        return problem
    text = problem.message[:2000]
    named = [k for k in props if isinstance(k, str) and len(k) > 2 and find_word(text, k) >= 0]
    if problem.kind == "missing":
        named = [k for k in named if k not in call]
    if len(named) != 1:
        return problem
    return dataclasses.replace(problem, path=(named[0],), schema=props[named[0]])


def _resent_refused(
    diagnosis: Diagnosis, original: Mapping[str, Any], repaired: Mapping[str, Any]
) -> str | None:
    """Why a repaired call is declined when it sends again, unchanged, a value the tool's
    error quoted as the one it refused ("Invalid vegi: 'X'" for a call sending ``X`` under a
    misspelt key): renaming the key, or mending another field, does not answer that refusal."""
    reading = diagnosis.reading
    if reading is None:
        return None
    refused = [
        p for p in reading.problems
        if p.source == "error" and p.kind not in ("missing", "unknown", "transient")
    ]  # fmt: skip
    quoted = [p.message[:2000] for p in refused]
    if not quoted:
        return None
    # the same value at the same depth (its key at most renamed: not wrapped, not split)
    # (a number sent again as text, 0.06 as "0.06", is another JSON value to the tool)
    kept = {
        (len(p), isinstance(v, str), str(v)) for p, v in leaf_values(repaired)
        if isinstance(v, (str, int, float)) and not isinstance(v, bool)
    }  # fmt: skip
    for path, value in leaf_values(original):
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            continue
        text = str(value)
        if len(text.strip()) < 2 or (len(path), isinstance(value, str), text) not in kept:
            continue
        if any(f"'{text}'" in m or f'"{text}"' in m for m in quoted):
            return f"the tool refused {safe_str(value, 60)}, and the repaired call sends it again"
    return None
