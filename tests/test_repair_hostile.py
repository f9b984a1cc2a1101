"""The repair stack against a hostile agent, a hostile tool and hostile input.

Whatever the model sends (10 MB strings, values that are not JSON data, structures nested
5,000 deep or containing themselves), whatever the tool answers (10 MB errors, errors whose
``str()`` raises, errors that never stop), whatever an inferer or a model returns, the repair
stack must not crash the run, must not hang, and must not "repair" a call into another request:
the user sees a clear exception, a declined ``RepairResult`` with its reason, or a correct
result, and never ``ok=True`` with arguments that fail the spec's validation.

The 28 faults these tests first found (as strict xfails) are fixed. Inputs that could hang
run in a child process with a 60 s guard (a hang guard, not a speed test).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from pytest_agentchaos.errors import BudgetExhausted
from pytest_agentchaos.inject import Chaos
from pytest_agentchaos.repair import (
    Fix,
    InferenceRequest,
    LLMInferer,
    ParamRepairer,
    RepairError,
    RepairPolicy,
    RepairResult,
    ToolSpec,
)
from pytest_agentchaos.strategies import valid_args
from pytest_agentchaos.trace import FaultInjected, Repair, RunEnded, ToolCall, ToolResult, Trace
from pytest_agentchaos.verdicts import must_repair

MB10 = 10_000_000
NOW = dt.datetime(2024, 10, 22, 9, 0, tzinfo=dt.timezone.utc)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "when": {"type": "string", "format": "date"},
        "cabin": {"type": "string", "enum": ["economy", "premium_economy", "business", "first"]},
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "email": {"type": "string", "format": "email"},
        "zone": {"type": "string", "description": "An IANA time zone"},
        "note": {"type": "string"},
        "n": {"type": "integer", "minimum": 1, "maximum": 9},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "tags": {"type": "array", "items": {"type": "string"}},
        "meta": {"type": "object"},
    },
    "required": ["n"],
    "additionalProperties": False,
}
SPEC = ToolSpec.from_schema("book", SCHEMA)
VALID = {"n": 2}


class Raised:
    """What a call raised, kept for an assertion message that names it."""

    def __init__(self, exc: BaseException) -> None:
        self.type = type(exc).__name__
        try:
            self.message = str(exc)[:300]
        except Exception:  # an exception whose str() raises
            self.message = "(its str() raised)"

    def __repr__(self) -> str:
        return f"raised {self.type}: {self.message}"


def attempt(fn: Callable[[], Any]) -> Any:
    """``fn()``, or what it raised (an ``Exception``: ``KeyboardInterrupt`` and the harness's
    hard halts go through)."""
    try:
        return fn()
    except Exception as exc:  # RecursionError too: a crash is what these tests look for
        return Raised(exc)


def sound(result: Any, spec: ToolSpec = SPEC) -> RepairResult:
    """``result`` is what a user may see: no crash, and either valid arguments or a reason."""
    assert not isinstance(result, Raised), f"the repair stack crashed: {result!r}"
    assert isinstance(result, RepairResult), f"not a RepairResult: {type(result).__name__}"
    if result.ok:
        assert isinstance(result.args, dict), "ok without arguments"
        assert spec.is_valid(result.args), "ok=True with arguments that fail validation"
    else:
        assert result.args is None, "a declined result carries arguments"
        assert isinstance(result.reason, str) and result.reason, "a decline without a reason"
    return result


def declined(result: Any, spec: ToolSpec = SPEC) -> RepairResult:
    checked = sound(result, spec)
    assert not checked.ok, f"repaired into {checked.args!r} ({checked.reason[:200]})"
    return checked


def repair(args: Any, spec: ToolSpec = SPEC, **kwargs: Any) -> Any:
    return attempt(lambda: ParamRepairer(spec, clock=lambda: NOW).repair(args, **kwargs))


# -- 10 MB strings in the arguments ----------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "strategy", "tail"),
    [
        ("when", "date_format_correction", "too long to be a date"),
        ("cabin", "enum_value_correction", "is none of 'economy', 'premium_economy'"),
        ("code", "pattern_correction", "no mechanical change fits"),
        ("email", "format_correction", "holds no email address"),
        ("zone", "timezone_correction", "no zone is named after it"),
    ],
)
def test_a_10mb_value_is_declined_with_its_field_and_why(
    field: str, strategy: str, tail: str
) -> None:
    result = declined(repair({**VALID, field: "x" * MB10}))
    assert result.strategy == strategy
    assert result.reason.startswith(f"{field}: ")
    assert tail in result.reason[-200:]
    assert len(result.reason) < 1000  # the value is shown cut, never whole
    error = ParamRepairer(SPEC).declined(result)
    assert isinstance(error, RepairError) and error.result is result
    assert str(error).startswith(f"book: not repaired ({strategy}): {field}: ")


def test_a_10mb_free_text_value_passes_unchanged() -> None:
    big = "x" * MB10
    result = sound(repair({**VALID, "note": big}))
    assert result.ok and result.strategy == "none"
    assert result.args is not None and result.args["note"] is big


@pytest.mark.parametrize("field", ["when", "cabin", "code", "email"])
def test_the_reason_of_a_declined_long_value_is_bounded(field: str) -> None:
    result = declined(repair({**VALID, field: "x" * 1_000_000}))
    assert len(result.reason) <= 2_000
    assert len(str(ParamRepairer(SPEC).declined(result))) <= 2_000


def test_the_repair_event_of_a_long_value_stays_within_the_trace_cap() -> None:
    with Chaos.create(seed=1) as chaos:
        tool = chaos.wrap(lambda **kw: kw, name="book", repair=ParamRepairer(SPEC))
        with pytest.raises(RepairError):
            tool(n=2, when="x" * 1_000_000)
    assert len(chaos.trace.of_type(Repair)) == 1
    assert len(chaos.trace.to_json()) <= 512 * 1024


def test_dateutil_is_never_handed_an_unbounded_text(monkeypatch: pytest.MonkeyPatch) -> None:
    import dateutil.parser

    seen: list[int] = []

    def spy(text: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(len(text))
        raise ValueError("spy: not parsed")

    monkeypatch.setattr(dateutil.parser, "parse", spy)
    result = declined(repair({**VALID, "when": "Oct 26 " * 150_000}))  # 1 MB: enough to show it
    assert result.strategy == "date_format_correction"
    assert max(seen, default=0) <= 1_000, f"dateutil got a {max(seen):,}-character text"


# -- 10 MB error texts -------------------------------------------------------------------------


class _Response:
    status_code = 422

    @property
    def text(self) -> str:
        return "{" * MB10


class _HttpError(Exception):
    response = _Response()


class _StrRaises(Exception):
    def __str__(self) -> str:
        raise RuntimeError("str() of the tool's error raised")


@pytest.mark.parametrize(
    ("make", "strategy"),
    [
        pytest.param(lambda: "a " * (MB10 // 2), "report_unrecoverable", id="words"),
        pytest.param(lambda: "{" * MB10, "report_unrecoverable", id="braces"),
        pytest.param(
            lambda: "[" * (MB10 // 2) + "]" * (MB10 // 2), "report_unrecoverable", id="nested"
        ),
        pytest.param(lambda: "\n" * MB10, "report_unrecoverable", id="newlines"),
        pytest.param(
            lambda: json.dumps({"detail": [{"loc": ["body", "n"], "msg": "a " * (MB10 // 2)}]}),
            "rejected_value_correction",  # the head quotes the key: n was refused, no reason
            id="fastapi-body",
        ),
        pytest.param(lambda: _HttpError("bad request"), "report_unrecoverable", id="response"),
        pytest.param(lambda: "429 rate limit: " + "a " * (MB10 // 2), "retry", id="rate-limit"),
        pytest.param(
            lambda: "book() missing 1 required positional argument: " + "'a', " * (MB10 // 5),
            "report_unrecoverable",  # 'a' is no parameter: no phantom missing value
            id="missing-list",
        ),
    ],
)
def test_a_10mb_error_is_read_within_bounds(make: Callable[[], Any], strategy: str) -> None:
    result = sound(repair(VALID, error=make()))
    assert result.strategy == strategy
    assert len(result.reason) <= 500
    assert not result.ok  # transient ("retry"): no parameter error, nothing repaired


def test_an_error_that_is_not_an_error_is_refused_by_name() -> None:
    with pytest.raises(
        TypeError, match="takes the tool's exception, its message or an HTTP status, got bytes"
    ):
        ParamRepairer(SPEC).repair(VALID, b"n is required")


def test_an_error_of_one_long_token_is_read_within_a_bounded_head() -> None:
    # the patterns read the head of an error only: what a 10 MB token costs is bounded,
    # without timing anything: a parameter named past the head is not read
    from pytest_agentchaos.repair.diagnose import error_problems

    named = "Missing required parameter: n"
    assert [p.path for p in error_problems(named)] == [("n",)]
    assert error_problems("x" * 5000 + " " + named) == []
    result = sound(repair(VALID, error="x" * MB10))
    assert not result.ok and result.strategy == "report_unrecoverable"


def test_an_error_whose_str_raises_is_declined_by_its_type() -> None:
    result = declined(repair(VALID, error=_StrRaises()))
    assert "_StrRaises" in result.reason


# -- arguments that are not JSON data ----------------------------------------------------------


class _ReprRaises:
    def __repr__(self) -> str:
        raise RuntimeError("repr() raised")

    __str__ = __repr__


class _EqRaises:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("== raised")

    def __hash__(self) -> int:
        raise RuntimeError("hash() raised")

    def __repr__(self) -> str:
        return "_EqRaises()"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("tags", {"a", "b"}),
        ("tags", ("a", "b")),
        ("note", b"hello"),
        ("n", b"3"),
        ("n", (3,)),
        ("n", float("nan")),
        ("n", float("inf")),
        ("cabin", float("-inf")),
        ("ratio", float("inf")),
        ("note", float("nan")),
        ("n", _EqRaises()),
    ],
    ids=[  # not repr: a set's order would differ between xdist workers
        "set",
        "tuple-of-text",
        "bytes-text",
        "bytes-integer",
        "tuple-integer",
        "nan-integer",
        "inf-integer",
        "-inf-enum",
        "inf-bounded-number",
        "nan-text",
        "eq-raises-integer",
    ],
)
def test_a_value_that_is_not_json_data_is_declined(field: str, value: Any) -> None:
    # the repairer reads JSON data only: anything else is declined, naming where it is
    result = declined(repair({**VALID, field: value}))
    assert result.reason.startswith("the arguments are not JSON data: ")
    assert f" at {field}" in result.reason


@pytest.mark.parametrize(
    "args",
    [
        {"n": 2, "meta": {5: "x", (1, 2): 3}},
        {"n": 2, "meta": {"big": 10**5000, "nan": float("nan")}},
        {"n": 2, "zzz": 10**5000},
    ],
    ids=["odd-keys-inside-an-object", "odd-numbers-inside-an-object", "huge-int-unknown-key"],
)
def test_odd_values_where_the_schema_does_not_look_are_declined_all_the_same(args: Any) -> None:
    # a tool gets JSON: a set or a NaN anywhere in the call cannot reach it as sent
    result = declined(repair(args))
    assert result.reason.startswith("the arguments are not JSON data: ")


@pytest.mark.parametrize(
    "args",
    [
        {"n": 2, "note": _ReprRaises()},
        {"n": _ReprRaises()},
        {"n": 2, "cabin": _ReprRaises()},
        {"n": 2, "cabin": _EqRaises()},
        {"n": 10**5000},
        {"n": 2, "note": 10**5000},
        {"n": 2, "cabin": 10**5000},
        {"n": 2, None: "x"},
        {"n": 2, (1, 2): "x"},
        {"n": 2, b"note": "x"},
        {"n": 2, 1.5: "x"},
    ],
    ids=[
        "repr-raises-text",
        "repr-raises-integer",
        "repr-raises-enum",
        "eq-raises-enum",
        "huge-int-bounded",
        "huge-int-text",
        "huge-int-enum",
        "key-None",
        "key-tuple",
        "key-bytes",
        "key-float",
    ],
)
def test_a_hostile_value_never_crashes_the_repair(args: dict[Any, Any]) -> None:
    sound(repair(args))


def test_nan_in_a_bounded_number_field_is_declined() -> None:
    declined(repair({**VALID, "ratio": float("nan")}))


def test_arguments_sent_as_hostile_json_text_are_declined() -> None:
    for text in ("{" * MB10 + "}", '{"note": ' + "[" * 5000 + "]" * 5000 + "}", "{'n', 'note'}"):
        result = declined(repair(text))
        assert result.strategy == "json_repair"


def test_long_json_text_arguments_are_not_said_to_hold_no_object() -> None:
    text = json.dumps({"n": 2, "note": "y" * 300_000})
    result = sound(repair(text))
    assert result.ok or "holds no JSON object" not in result.reason


# -- deep nesting ------------------------------------------------------------------------------


def _deep_list(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def _deep_dict(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    "make",
    [
        lambda: {"n": 2, "meta": {"x": _deep_list(5000)}},
        lambda: {"n": 2, "meta": _deep_dict(5000)},
        lambda: {"n": 2, "tags": _deep_list(5000)},
        lambda: {"n": 2, "zzz": _deep_dict(5000)},
    ],
    ids=["list-in-object", "dict-in-object", "list-in-array", "dict-in-unknown-key"],
)
def test_arguments_nested_5000_deep_never_crash_the_repair(make: Callable[[], Any]) -> None:
    sound(repair(make()))


# -- cycles, recursive schemas and loops that could hang: in a child process -----------------

_GUARDED = textwrap.dedent(
    """
    import json

    from pytest_agentchaos.escape import TraceRecorder
    from pytest_agentchaos.repair import ParamRepairer, RepairError, ToolSpec
    from pytest_agentchaos.trace import Repair


    def report(label, fn):
        try:
            out = fn()
        except Exception as exc:
            out = {"raised": type(exc).__name__ + ": " + str(exc)[:200]}
        print(label + "\\t" + json.dumps(out), flush=True)


    def outcome(spec, result):
        return {
            "ok": result.ok,
            "strategy": result.strategy,
            "reason": result.reason[:300],
            "valid": bool(result.ok and spec.is_valid(result.args)),
        }


    LOOSE = ToolSpec.from_schema("book", {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "meta": {"type": "object"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["n"],
        "additionalProperties": False,
    })


    def cycle_in_an_object_field():
        args = {"n": 1}
        args["meta"] = args
        return outcome(LOOSE, ParamRepairer(LOOSE, recorder=TraceRecorder()).repair(args))


    def cycle_in_an_unknown_key():
        args = {"n": 1}
        args["zzz"] = args
        recorder = TraceRecorder()
        out = outcome(LOOSE, ParamRepairer(LOOSE, recorder=recorder).repair(args))
        out["events"] = len(recorder.trace.of_type(Repair))
        out["written"] = len(recorder.trace.to_json()) > 0
        return out


    def cycle_in_an_array_field():
        tags = []
        tags.append(tags)
        return outcome(LOOSE, ParamRepairer(LOOSE).repair({"n": 1, "tags": tags}))


    TREE = {
        "type": "object",
        "$defs": {"node": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "on": {"type": "string", "format": "date"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
            "required": ["name"],
        }},
        "properties": {"tree": {"$ref": "#/$defs/node"}},
        "required": ["tree"],
    }


    def tree(depth):
        spec = ToolSpec.from_schema("plan", TREE)
        node = {"name": "leaf", "on": "Oct 26, 2024"}
        for _ in range(depth):
            node = {"name": "node", "children": [node]}
        out = outcome(spec, ParamRepairer(spec).repair({"tree": node}))
        return out


    def ref_schema(defs, ref):
        schema = {"type": "object", "properties": {"a": {"$ref": ref}}, "$defs": defs}
        try:
            spec = ToolSpec.from_schema("refs", schema)
        except (TypeError, ValueError) as exc:
            return {"rejected": str(exc)[:300]}
        return outcome(spec, ParamRepairer(spec).repair({"a": 1}))


    def never_stops_failing():
        props = {f"p{i}": {"type": "integer", "default": i} for i in range(10)}
        spec = ToolSpec.from_schema("book", {
            "type": "object", "properties": props, "additionalProperties": False,
        })
        calls = []

        def tool(**kwargs):
            calls.append(dict(kwargs))
            missing = f"p{len(calls) - 1}"
            raise TypeError(f"book() missing 1 required positional argument: '{missing}'")

        try:
            ParamRepairer(spec).call(tool, {})
        except RepairError as exc:
            return {"calls": calls, "message": str(exc)[:300],
                    "cause": type(exc.__cause__).__name__}
        return {"calls": calls, "returned": True}


    def transient_forever():
        calls = []

        def tool(**kwargs):
            calls.append(dict(kwargs))
            raise TimeoutError("upstream timed out")

        try:
            ParamRepairer(LOOSE).call(tool, {"n": 1})
        except TimeoutError as exc:  # as it is: the caller's escape stack sees it transient
            return {"calls": calls, "message": str(exc)[:300], "raised_as_is": True}
        except RepairError as exc:
            return {"calls": calls, "message": str(exc)[:300],
                    "cause": type(exc.__cause__).__name__}
        return {"calls": calls, "returned": True}


    report("cycle_in_an_object_field", cycle_in_an_object_field)
    report("cycle_in_an_unknown_key", cycle_in_an_unknown_key)
    report("cycle_in_an_array_field", cycle_in_an_array_field)
    report("tree_50", lambda: tree(50))
    report("tree_200", lambda: tree(200))
    report("ref_loop", lambda: ref_schema(
        {"x": {"$ref": "#/$defs/y"}, "y": {"$ref": "#/$defs/x"}}, "#/$defs/x"))
    report("ref_unresolvable", lambda: ref_schema({}, "#/$defs/missing"))
    report("never_stops_failing", never_stops_failing)
    report("transient_forever", transient_forever)
    """
)


@pytest.fixture(scope="module")
def guarded() -> dict[str, Any]:
    """The outcomes of ``_GUARDED``'s scenarios, run in a child process killed after 60 s."""
    stderr = ""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _GUARDED], capture_output=True, text=True, timeout=60
        )
        stdout, stderr = done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or b""
        stdout = out.decode(errors="replace") if isinstance(out, bytes) else out
        stderr = "the child was killed after 60 s"
    found: dict[str, Any] = {"(stderr)": stderr[-2000:]}
    for line in stdout.splitlines():
        label, _, payload = line.partition("\t")
        if payload:
            found[label] = json.loads(payload)
    return found


def case(guarded: dict[str, Any], label: str) -> dict[str, Any]:
    assert label in guarded, f"{label}: no outcome (hung, or the child died): {guarded}"
    out: dict[str, Any] = guarded[label]
    assert "raised" not in out, f"{label}: {out['raised']}"
    return out


def test_a_cycle_where_the_schema_does_not_look_is_declined(guarded: dict[str, Any]) -> None:
    out = case(guarded, "cycle_in_an_object_field")
    assert not out["ok"] and "a value that contains itself at meta" in out["reason"]


def test_a_cycle_in_an_unknown_key_is_declined_and_recorded(guarded: dict[str, Any]) -> None:
    out = case(guarded, "cycle_in_an_unknown_key")
    assert not out["ok"] and "contains itself at zzz" in out["reason"]
    assert out["events"] == 1 and out["written"]  # the decline is recorded, and writable


def test_a_cycle_in_an_array_field_is_declined(guarded: dict[str, Any]) -> None:
    out = case(guarded, "cycle_in_an_array_field")
    assert not out["ok"] and "contains itself at tags" in out["reason"]


def test_a_recursive_schema_50_levels_deep_is_repaired(guarded: dict[str, Any]) -> None:
    out = case(guarded, "tree_50")
    assert out["ok"] and out["valid"] and out["strategy"] == "date_format_correction"


def test_a_tree_200_levels_deep_is_declined_as_too_deep(guarded: dict[str, Any]) -> None:
    out = case(guarded, "tree_200")
    assert not out["ok"] and "nested deeper than 128 levels" in out["reason"]


@pytest.mark.parametrize("label", ["ref_loop", "ref_unresolvable"])
def test_a_broken_ref_is_refused_when_the_spec_is_built(
    guarded: dict[str, Any], label: str
) -> None:
    out = case(guarded, label)
    assert "ref" in out.get("rejected", "") or (not out["ok"] and "ref" in out["reason"])


def test_a_tool_that_never_stops_failing_is_called_max_attempts_plus_one_times(
    guarded: dict[str, Any],
) -> None:
    out = case(guarded, "never_stops_failing")
    assert len(out["calls"]) == RepairPolicy().max_attempts + 1
    assert out["calls"][-1] == {"p0": 0, "p1": 1, "p2": 2}  # each repair filled a default
    assert out["message"].startswith("book: still failing after 3 repaired attempt(s)")
    assert out["cause"] == "TypeError"


def test_a_tool_that_always_times_out_is_retried_then_raises_its_own_error(
    guarded: dict[str, Any],
) -> None:
    out = case(guarded, "transient_forever")
    assert out["calls"] == [{"n": 1}] * 4
    assert out.get("raised_as_is") and "timed out" in out["message"]


# -- a schema with 1,000 properties ------------------------------------------------------------

WIDE_NAMES = [f"p{i}" for i in range(1000)]
WIDE_PROPS = {name: {"type": "integer", "minimum": 0} for name in WIDE_NAMES}


def _wide(required: list[str]) -> ToolSpec:
    schema = {
        "type": "object",
        "properties": WIDE_PROPS,
        "required": required,
        "additionalProperties": False,
    }
    return ToolSpec.from_schema("wide", schema)


WIDE = _wide(WIDE_NAMES)


class _TooMuchWork(Exception):
    pass


class _CountedList(list):  # type: ignore[type-arg]
    """A schema's ``required`` list that counts how often its items are walked and stops the
    walk past a budget: a quadratic walk fails at once instead of taking seconds."""

    def __init__(self, items: list[str]) -> None:
        super().__init__(items)
        self.walked = 0
        self.budget: int | None = None

    def __iter__(self) -> Iterator[str]:
        for item in super().__iter__():
            self.walked += 1
            if self.budget is not None and self.walked > self.budget:
                raise _TooMuchWork(f"the required list walked {self.walked:,} times")
            yield item


def test_1000_numbers_written_as_text_are_all_converted() -> None:
    result = sound(repair({name: str(i) for i, name in enumerate(WIDE_NAMES)}, WIDE), WIDE)
    assert result.ok and result.args == {name: i for i, name in enumerate(WIDE_NAMES)}


def test_1000_unknown_keys_are_dropped_and_the_call_kept() -> None:
    given = {name: i for i, name in enumerate(WIDE_NAMES)}
    result = sound(repair({**given, **{f"q_{i}": i for i in range(1000)}}, WIDE), WIDE)
    assert result.ok and result.args == given and result.strategy == "drop_unknown_key"


def test_a_call_missing_1000_required_keys_is_declined_in_linear_work() -> None:
    required = _CountedList(WIDE_NAMES)
    spec = _wide(required)
    assert spec.parameters["required"] is required  # the list the validator walks
    required.walked, required.budget = 0, 20 * len(WIDE_NAMES)
    result = declined(repair({}, spec), spec)
    assert result.strategy == "infer_missing_param" and "'p999'" in result.reason
    assert required.walked <= 20 * len(WIDE_NAMES)


def test_1000_misnamed_keys_are_renamed_in_linear_work(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_agentchaos.repair import names

    real, budget, used = names.words, 50 * len(WIDE_NAMES), [0]

    def counted(name: str) -> list[str]:
        used[0] += 1
        if used[0] > budget:
            raise _TooMuchWork(f"words() called {used[0]:,} times")
        return real(name)

    monkeypatch.setattr(names, "words", counted, raising=False)
    result = sound(repair({f"P_{i}": i for i in range(1000)}, WIDE), WIDE)
    assert result.ok and result.args == {name: i for i, name in enumerate(WIDE_NAMES)}


# -- inferers ------------------------------------------------------------------------------------

PEOPLE = ToolSpec.from_schema(
    "book_table",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "n": {"type": "integer", "minimum": 1, "maximum": 9},
        },
        "required": ["city", "n"],
        "additionalProperties": False,
    },
)


class _Inferer:
    """An inferer whose ``infer`` does what the test says."""

    def __init__(self, answer: Callable[[InferenceRequest], Any]) -> None:
        self.answer = answer
        self.asked: list[tuple[str, ...]] = []

    def infer(self, request: InferenceRequest) -> Any:
        self.asked.append(request.missing)
        return self.answer(request)


def _raising(exc: BaseException) -> Callable[..., Any]:
    def raise_it(*args: Any, **kwargs: Any) -> Any:
        raise exc

    return raise_it


def _fix(value: Any, confidence: Any = 1.0, strategy: str = "infer_missing_param") -> Fix:
    return Fix(strategy, value, confidence, "the inferer says so")


def _people(inferer: Any) -> Any:
    """The agent asked for 2 people and named no city."""
    return attempt(lambda: ParamRepairer(PEOPLE, inferer).repair({"n": 2}))


@pytest.mark.parametrize(
    "exc",
    [KeyboardInterrupt(), SystemExit(3), BudgetExhausted("max_model_calls", 1, 2)],
    ids=["KeyboardInterrupt", "SystemExit", "BudgetExhausted"],
)
def test_an_inferer_base_exception_goes_through(exc: BaseException) -> None:
    repairer = ParamRepairer(PEOPLE, _Inferer(_raising(exc)))
    with pytest.raises(type(exc)):
        repairer.repair({"n": 2})


def test_an_inferer_exception_is_a_decline_that_names_it() -> None:
    result = declined(_people(_Inferer(_raising(ConnectionError("model down")))), PEOPLE)
    assert result.strategy == "infer_missing_param"
    assert "the inferer raised ConnectionError: model down" in [s.reason for s in result.steps]


@pytest.mark.parametrize(
    "answer",
    [
        {"city": "Oslo"},  # not a Fix
        {("city",): _fix("Oslo")},
        {"n": _fix(7)},  # not asked for
        {"city": _fix(5)},  # a number for a text field: converted below the threshold
        {"city": _fix(None)},
    ],
    ids=repr,
)
def test_an_inferer_answer_that_does_not_fill_the_call_is_declined(answer: Any) -> None:
    declined(_people(_Inferer(lambda request: answer)), PEOPLE)


def test_an_inferer_cannot_change_a_value_it_was_not_asked_for() -> None:
    inferer = _Inferer(lambda request: {"city": _fix("Oslo"), "n": _fix(9)})
    result = sound(_people(inferer), PEOPLE)
    assert result.ok and result.args == {"n": 2, "city": "Oslo"}
    assert inferer.asked == [("city",)]


@pytest.mark.parametrize("answer", [None, [("city", "Oslo")], "city=Oslo"], ids=repr)
def test_an_inferer_answer_that_is_not_a_mapping_is_declined(answer: Any) -> None:
    result = declined(_people(_Inferer(lambda request: answer)), PEOPLE)
    assert result.strategy == "infer_missing_param"


def test_an_inferer_exception_whose_str_raises_is_declined() -> None:
    declined(_people(_Inferer(_raising(_StrRaises()))), PEOPLE)


@pytest.mark.parametrize("confidence", [float("nan"), "high"], ids=repr)
def test_a_fix_whose_confidence_is_not_a_number_is_not_used(confidence: Any) -> None:
    declined(_people(_Inferer(lambda request: {"city": _fix("Oslo", confidence)})), PEOPLE)


@pytest.mark.parametrize("rename", [("n", 9), "Oslo"], ids=["overwrites-n", "not-a-pair"])
def test_an_inferer_cannot_rename_its_way_into_another_field(rename: Any) -> None:
    answers = iter([{"city": _fix(rename, strategy="rename_key")}, {"city": _fix("Oslo")}] * 10)
    result = sound(_people(_Inferer(lambda request: next(answers))), PEOPLE)
    assert not result.ok or result.args == {"n": 2, "city": "Oslo"}


# -- LLM inferers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: None,
        lambda: b'{"city": "Oslo"}',
        lambda: "x" * MB10,
        lambda: "{" + "x" * MB10 + "}",
        lambda: json.dumps({"city": "y" * MB10}),
        lambda: '["Oslo"]',
        lambda: "{'city', 'n'}",
        lambda: '{"city": ' + "9" * 5000 + "}",
        lambda: "{'city': " + "[" * 5000 + "]" * 5000 + "}",
    ],
    ids=[
        "None",
        "bytes",
        "10MB-text",
        "10MB-braces",
        "10MB-json",
        "a-list",
        "a-set",
        "huge-int",
        "nested-5000",
    ],
)
def test_an_llm_answer_that_holds_no_value_is_declined(make: Callable[[], Any]) -> None:
    answer = make()

    def llm(prompt: str) -> Any:
        return answer

    result = declined(_people(LLMInferer(llm)), PEOPLE)
    assert result.strategy == "infer_missing_param"


def test_an_llm_that_raises_is_a_decline_that_names_it() -> None:
    result = declined(_people(LLMInferer(_raising(ConnectionError("no route")))), PEOPLE)
    assert any("ConnectionError: no route" in s.reason for s in result.steps)


def test_an_llm_keyboard_interrupt_goes_through() -> None:
    with pytest.raises(KeyboardInterrupt):
        ParamRepairer(PEOPLE, LLMInferer(_raising(KeyboardInterrupt()))).repair({"n": 2})


def test_an_llm_answer_is_used_only_for_what_was_asked() -> None:
    def llm(prompt: str) -> str:
        return '```json\n{"city": "Oslo", "n": 9, "admin": true}\n```'

    result = sound(_people(LLMInferer(llm)), PEOPLE)
    assert result.ok and result.args == {"n": 2, "city": "Oslo"}


# -- a policy's synonyms ---------------------------------------------------------------------


def test_synonyms_that_are_not_strings_are_ignored_and_the_rest_still_work() -> None:
    synonyms = {
        "coach": 5,
        7: "business",
        "steerage": None,
        "cabin": {1: 2, "coach": ["x"], "tourist": "economy"},
        "economy": [None, b"coach", 3],
    }
    repairer = ParamRepairer(SPEC, policy=RepairPolicy(synonyms=synonyms))
    declined(attempt(lambda: repairer.repair({"n": 2, "cabin": "coach"})))
    result = sound(attempt(lambda: repairer.repair({"n": 2, "cabin": "Tourist"})))
    assert result.ok and result.args == {"n": 2, "cabin": "economy"}


@pytest.mark.parametrize("synonyms", [["coach"], None, "coach=economy"], ids=repr)
def test_synonyms_that_are_not_a_table_are_refused_by_the_policy(synonyms: Any) -> None:
    with pytest.raises((TypeError, ValueError), match="synonyms"):
        RepairPolicy(synonyms=synonyms)


# -- ParamRepairer.call and a hostile tool ---------------------------------------------------


@pytest.mark.parametrize(
    "exc",
    [KeyboardInterrupt(), SystemExit(2), BudgetExhausted("max_tool_calls", 3, 4)],
    ids=["KeyboardInterrupt", "SystemExit", "BudgetExhausted"],
)
def test_a_tool_base_exception_goes_through_after_one_call(exc: BaseException) -> None:
    calls: list[dict[str, Any]] = []

    def tool(**kwargs: Any) -> Any:
        calls.append(kwargs)
        raise exc

    with pytest.raises(type(exc)):
        ParamRepairer(SPEC).call(tool, VALID)
    assert calls == [VALID]


def test_a_10mb_tool_error_gives_a_bounded_repair_error() -> None:
    def tool(**kwargs: Any) -> Any:
        raise ValueError("a " * (MB10 // 2))

    with pytest.raises(RepairError) as caught:
        ParamRepairer(SPEC).call(tool, VALID)
    assert len(str(caught.value)) <= 500
    assert isinstance(caught.value.__cause__, ValueError)


def test_a_transient_error_is_the_callers_to_retry_when_asked() -> None:
    calls: list[dict[str, Any]] = []

    def tool(**kwargs: Any) -> Any:
        calls.append(kwargs)
        raise TimeoutError("slow")

    with pytest.raises(TimeoutError):
        ParamRepairer(SPEC).call(tool, VALID, retry_transient=False)
    assert calls == [VALID]


def test_a_tool_error_whose_str_raises_keeps_the_tools_exception() -> None:
    def tool(**kwargs: Any) -> Any:
        raise _StrRaises()

    try:
        ParamRepairer(SPEC).call(tool, VALID)
    except RepairError as exc:
        assert isinstance(exc.__cause__, _StrRaises)
    except _StrRaises:
        pass  # raised as it was: fine too
    else:
        pytest.fail("call() returned, though the tool always raises")


def test_a_tool_error_cannot_make_the_repairer_drop_a_declared_argument() -> None:
    def tool(**kwargs: Any) -> Any:
        if "note" in kwargs:
            raise TypeError("book() got an unexpected keyword argument 'note'")
        return {"booked": kwargs}

    args = {"n": 2, "note": "wheelchair assistance needed"}
    outcome = attempt(lambda: ParamRepairer(SPEC).call(tool, args))
    assert isinstance(outcome, Raised) and outcome.type == "RepairError", outcome


# -- chaos.wrap(tool, repair=...) with a misbehaving repairer --------------------------------


class _Repairer:
    """What chaos.wrap(repair=) takes: ``repair`` and ``declined`` do what the test says."""

    def __init__(
        self,
        repair: Callable[[Any], Any],
        declined: Callable[[Any], Any] = lambda result: RepairError("declined", result),
    ) -> None:
        self._repair, self._declined = repair, declined

    def repair(self, args: Any, at: int | None = None, intended: Any = None) -> Any:
        return self._repair(args)

    def declined(self, result: Any) -> Any:
        return self._declined(result)


_NOT_OK = RepairResult(False, None, "report_unrecoverable", 0.0, "no")
_MISBEHAVING = {
    "repair-raises": lambda: _Repairer(_raising(RuntimeError("repairer bug"))),
    "repair-returns-None": lambda: _Repairer(lambda args: None),
    "repair-returns-no-ok": lambda: _Repairer(lambda args: object()),
    "declined-returns-a-str": lambda: _Repairer(lambda args: _NOT_OK, lambda result: "no"),
}


def _wrapped(chaos: Chaos, repairer: Any, ran: list[dict[str, Any]]) -> Callable[..., Any]:
    def book(n: int, cabin: str = "economy") -> str:
        ran.append({"n": n, "cabin": cabin})
        return "booked"

    return chaos.wrap(book, repair=repairer)


def test_a_repairer_that_raises_stops_the_call_with_its_own_error() -> None:
    ran: list[dict[str, Any]] = []
    with Chaos.create(seed=1) as chaos:
        tool = _wrapped(chaos, _MISBEHAVING["repair-raises"](), ran)
        with pytest.raises(RuntimeError, match="repairer bug"):
            tool(n=2)
    assert ran == []


def test_a_repairer_keyboard_interrupt_goes_through() -> None:
    ran: list[dict[str, Any]] = []
    with Chaos.create(seed=1) as chaos:
        tool = _wrapped(chaos, _Repairer(_raising(KeyboardInterrupt())), ran)
        with pytest.raises(KeyboardInterrupt):
            tool(n=2)
    assert ran == []


@pytest.mark.parametrize(
    "kind", ["repair-returns-None", "repair-returns-no-ok", "declined-returns-a-str"]
)
def test_a_repairer_breaking_its_contract_is_named_and_the_tool_not_run(kind: str) -> None:
    ran: list[dict[str, Any]] = []
    with Chaos.create(seed=1) as chaos:
        tool = _wrapped(chaos, _MISBEHAVING[kind](), ran)
        with pytest.raises(TypeError, match=r"repair\(\)|declined\(\)"):
            tool(n=2)
    assert ran == []


@pytest.mark.parametrize("kind", ["repair-raises", "repair-returns-None"])
def test_a_repairer_failure_closes_the_call_in_the_trace(kind: str) -> None:
    ran: list[dict[str, Any]] = []
    with Chaos.create(seed=1) as chaos:
        tool = _wrapped(chaos, _MISBEHAVING[kind](), ran)
        with contextlib.suppress(Exception):
            tool(n=2)
    results = chaos.trace.of_type(ToolResult)
    assert len(chaos.trace.of_type(ToolCall)) == 1
    assert len(results) == 1 and not results[0].ok


# -- concurrency -----------------------------------------------------------------------------

_MESSY = {"Economy": "economy", "BUSINESS": "business", "first class": "first"}


def test_eight_threads_through_one_repairing_tool_keep_their_call_indexes() -> None:
    errors: list[BaseException] = []
    outputs: list[tuple[dict[str, Any], Any]] = []
    barrier = threading.Barrier(8)
    messy = list(_MESSY)

    def book(n: int, cabin: str = "economy") -> dict[str, Any]:
        return {"n": n, "cabin": cabin}

    with Chaos.create(seed=3) as chaos:
        tool = chaos.wrap(book, repair=ParamRepairer(SPEC))

        def worker(i: int) -> None:
            try:
                barrier.wait(timeout=10)
                for j in range(25):
                    asked = {"n": i + 1, "cabin": messy[(i + j) % 3]}
                    outputs.append((asked, tool(**asked)))
            except BaseException as exc:  # reported below, whatever it is
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert not any(t.is_alive() for t in threads), "a thread hung"
    assert errors == []
    assert len(outputs) == 200
    for asked, out in outputs:
        assert out == {"n": asked["n"], "cabin": _MESSY[asked["cabin"]]}
    calls = {event.index: event for event in chaos.trace.of_type(ToolCall)}
    repairs = chaos.trace.of_type(Repair)
    assert sorted(r.detail["index"] for r in repairs) == list(range(1, 201)) == sorted(calls)
    for event in repairs:
        call = calls[event.detail["index"]]
        assert event.before == call.args  # each event describes its own call
        assert event.after == {"n": call.args["n"], "cabin": _MESSY[call.args["cabin"]]}
    assert must_repair(chaos.trace).ok


# -- must_repair over odd Repair events --------------------------------------------------------

_WHEN = {"when": "2024-10-26"}
_CORRUPT = {"when": "Oct 26, 2024"}
_FAULT = {
    "mutation": "reformat_date",
    "key": "when",
    "original": "2024-10-26",
    "value": "Oct 26, 2024",
    "repairable": True,
}


def _trace(*events: Any) -> Trace:
    trace = Trace()
    for event in events:
        trace.append(event)
    return trace


def _call(index: int) -> ToolCall:
    return ToolCall(index, 0.0, tool="book", index=index, args=dict(_WHEN))


def _fault(index: int) -> FaultInjected:
    return FaultInjected(
        index, 0.0, kind="malformed_params", target="book", index=index, detail=dict(_FAULT)
    )


def _result(index: int, ok: bool = True) -> ToolResult:
    error = None if ok else "ValueError"
    return ToolResult(index, 0.0, tool="book", index=index, ok=ok, error_type=error)


def _repair_event(ok: bool = True, **fields: Any) -> Repair:
    values: dict[str, Any] = {
        "before": dict(_CORRUPT),
        "after": dict(_WHEN) if ok else {},
        "detail": {"index": 1, "reason": "read as 2024-10-26"},
    }
    values.update(fields)
    return Repair(1, 0.0, tool="book", strategy="date_format_correction", ok=ok, **values)


@pytest.mark.parametrize(
    ("fields", "passes"),
    [
        ({"before": [1, 2]}, True),
        ({"before": None}, True),
        ({"after": "2024-10-26"}, False),
        ({"after": None}, False),
        ({"detail": {"index": 1, "reason": object(), "intended": [1]}}, True),
    ],
    ids=["before-list", "before-None", "after-str", "after-None", "odd-detail-values"],
)
def test_odd_before_and_after_are_judged_not_crashed(fields: dict[str, Any], passes: bool) -> None:
    trace = _trace(_call(1), _fault(1), _repair_event(**fields), _result(1), RunEnded(1, 0.0))
    verdict = attempt(lambda: must_repair(trace))
    assert not isinstance(verdict, Raised), verdict
    assert verdict.ok is passes, verdict.explanation
    if not passes:
        assert "call #1 of book" in verdict.explanation


def test_a_repair_that_names_no_call_is_not_credited_to_the_call_before() -> None:
    stray = _repair_event(detail={"index": 99, "reason": "read as 2024-10-26"})
    verdict = must_repair(_trace(_call(1), _fault(1), _result(1), stray, RunEnded(1, 0.0)))
    assert not verdict.ok
    assert "ran with the malformed arguments" in verdict.explanation


@pytest.mark.parametrize("detail", [None, ["index", 1], "index=1"], ids=repr)
def test_a_repair_whose_detail_is_not_a_dict_is_judged(detail: Any) -> None:
    trace = _trace(_repair_event(ok=False, detail=detail), _call(1), _result(1, ok=False))
    verdict = attempt(lambda: must_repair(trace))
    assert not isinstance(verdict, Raised), verdict
    assert not verdict.ok


def test_a_repair_that_names_another_call_does_not_vouch_for_the_next_one() -> None:
    stray = _repair_event(detail={"index": 7, "reason": "read as 2024-10-26"})
    trace = _trace(_call(1), _result(1), stray, _call(2), _fault(2), _result(2), RunEnded(2, 0.0))
    assert not must_repair(trace).ok


# -- what a hostile phrase asks for ------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        {"n": 2, "cabin": "economy or business"},
        {"n": 2, "when": "Oct 26, 2024 or Oct 27, 2024"},
        {"n": 2, "when": "not Oct 26, 2024"},
        {"n": "2 or 3"},
        {"n": "1e309"},
        {"n": 2, "ratio": "nan"},
    ],
    ids=repr,
)
def test_a_phrase_that_names_no_single_value_is_declined(args: dict[str, Any]) -> None:
    declined(repair(args))


@pytest.mark.parametrize(
    "cabin", ["not business", "anything but first", "no first class", "never economy"]
)
def test_a_negated_enum_value_is_not_repaired_into_that_value(cabin: str) -> None:
    declined(repair({"n": 2, "cabin": cabin}))


@pytest.mark.parametrize("when", ["in 3000000 days", "in 99999999999 days"])
def test_a_relative_date_past_the_calendar_is_declined(when: str) -> None:
    declined(repair({"n": 2, "when": when}))


# -- hypothesis strategies on hostile schemas ------------------------------------------------


@settings(
    max_examples=5,
    deadline=None,
    database=None,
    phases=(Phase.generate,),
    suppress_health_check=[HealthCheck.large_base_example, HealthCheck.too_slow],
)
@given(valid_args(WIDE))
def test_valid_args_of_a_1000_property_schema_validate(args: dict[str, Any]) -> None:
    assert len(args) == 1000 and WIDE.is_valid(args)


_TREE_SPEC = ToolSpec.from_schema(
    "plan",
    {
        "type": "object",
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
                "required": ["name"],
            }
        },
        "properties": {"tree": {"$ref": "#/$defs/node"}},
        "required": ["tree"],
    },
)


@settings(max_examples=10, deadline=None, database=None, phases=(Phase.generate,))
@given(valid_args(_TREE_SPEC))
def test_valid_args_of_a_ref_schema_validate(args: dict[str, Any]) -> None:
    assert _TREE_SPEC.is_valid(args)
