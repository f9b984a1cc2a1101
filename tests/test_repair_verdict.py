"""must_repair over hand-built traces: each way a parameter problem is judged, and the line
that explains it."""

from __future__ import annotations

from typing import Any

from pytest_agentchaos.trace import FaultInjected, Repair, RunEnded, ToolCall, ToolResult, Trace
from pytest_agentchaos.verdicts import must_repair

ARGS = {"origin": "LIS", "when": "2024-10-26", "n": 2}


class Run:
    """A trace written call by call."""

    def __init__(self) -> None:
        self.trace = Trace()
        self.step = 0
        self.counts: dict[str, int] = {}

    def call(
        self,
        tool: str = "book",
        args: dict[str, Any] | None = None,
        *,
        fault: dict[str, Any] | None = None,
        repair: dict[str, Any] | None = None,
        ok: bool = True,
        status: int | None = None,
        indexed: bool = True,
    ) -> None:
        self.step += 1
        index = self.counts[tool] = self.counts.get(tool, 0) + 1
        add = self.trace.append
        if repair is not None and not indexed:  # a repairer that ran before the call
            add(Repair(self.step, 0.0, tool=tool, **_repair(repair, None)))
        add(ToolCall(self.step, 0.0, tool=tool, index=index, args=dict(args or ARGS)))
        if fault is not None:
            detail = {"mutation": "reformat_date", "key": "when", "original": "2024-10-26",
                      "value": "Oct 26, 2024", "repairable": True, **fault}  # fmt: skip
            add(FaultInjected(self.step, 0.0, kind="malformed_params", target=tool, index=index,
                              detail=detail))  # fmt: skip
        if repair is not None and indexed:
            add(Repair(self.step, 0.0, tool=tool, **_repair(repair, index)))
        error = None if ok else "ValueError"
        add(ToolResult(self.step, 0.0, tool=tool, index=index, ok=ok, error_type=error,
                       message=None if ok else "bad when", status=status))  # fmt: skip

    def decline(self, tool: str = "book") -> None:
        self.trace.append(Repair(self.step, 0.0, tool=tool, strategy="infer_missing_param",
                                 ok=False, before=ARGS, detail={"reason": "no value"}))  # fmt: skip

    def end(self) -> Trace:
        self.trace.append(RunEnded(self.step, 0.0))
        return self.trace


def _repair(spec: dict[str, Any], index: int | None) -> dict[str, Any]:
    ok = spec.get("ok", True)
    return {
        "strategy": spec.get("strategy", "date_format_correction"),
        "ok": ok,
        "before": spec.get("before", {**ARGS, "when": "Oct 26, 2024"}),
        "after": spec.get("after", ARGS) if ok else {},
        "detail": {"index": index, "reason": spec.get("reason", "read as 2024-10-26")},
    }


def test_a_corrupted_call_repaired_before_the_tool_ran_passes() -> None:
    run = Run()
    run.call()
    run.call(fault={}, repair={})
    verdict = must_repair(run.end())
    assert verdict.ok
    assert verdict.facts == {
        "problems": 1, "repaired_in_place": 1, "repaired_later": 0, "neutralised": 0
    }  # fmt: skip
    assert verdict.explanation.startswith(
        "must_repair ok: 1 parameter problem(s) repaired (1 before the tool ran, 0 by a later"
    )


def test_a_failed_call_repaired_by_a_later_call_passes_within_the_attempts() -> None:
    run = Run()
    run.call(fault={}, ok=False)
    run.call(ok=False, status=422)
    run.call()
    assert must_repair(run.end(), max_attempts=2).ok
    run = Run()
    run.call(fault={}, ok=False)
    run.call(ok=False, status=422)
    run.call()
    verdict = must_repair(run.end(), max_attempts=1)
    assert not verdict.ok
    assert "not repaired within 1 call(s) of book" in verdict.explanation
    assert "then call #2 of book (step 2)" in verdict.explanation


def test_a_later_call_that_was_corrupted_and_accepted_does_not_count_as_the_repair() -> None:
    run = Run()
    run.call(fault={}, ok=False)
    run.call(fault={})  # corrupted again, and the tool took it unchecked
    verdict = must_repair(run.end())
    assert not verdict.ok
    assert verdict.facts["failures"] == 2


def test_a_corrupted_call_the_tool_accepted_fails() -> None:
    run = Run()
    run.call(fault={})
    verdict = must_repair(run.end())
    assert not verdict.ok
    assert (
        "corrupted by reformat_date (when: '2024-10-26' -> 'Oct 26, 2024'); succeeded: the tool "
        "ran with the malformed arguments and nothing repaired them" in verdict.explanation
    )


def test_a_repair_into_another_value_fails_as_a_different_request() -> None:
    run = Run()
    run.call(fault={}, repair={"after": {**ARGS, "when": "2024-10-27"}})
    verdict = must_repair(run.end())
    assert not verdict.ok
    assert (
        "repaired into a different request: when was '2024-10-26' in the agent's call, a "
        "fault changed it and the repair made it '2024-10-27'" in verdict.explanation
    )


def test_an_unrepairable_fault_repaired_by_invention_fails_and_says_so() -> None:
    removed = {"mutation": "missing_required", "key": "n", "original": 2, "repairable": False}
    run = Run()
    run.call(fault=removed, repair={"strategy": "infer_missing_param", "before": {"origin": "LIS"},
                                    "after": {**ARGS, "n": 5}})  # fmt: skip
    verdict = must_repair(run.end())
    assert "an unrepairable fault changed it and the repair made it 5" in verdict.explanation
    assert "corrupted by missing_required (n removed)" in verdict.explanation
    run = Run()  # the task stated it: brought back as it was, which is fine
    run.call(fault=removed, repair={"strategy": "infer_missing_param", "after": ARGS})
    assert must_repair(run.end()).ok


def test_an_unknown_key_must_be_gone_after_the_repair() -> None:
    added = {"mutation": "unknown_key", "key": "orgin", "value": "LIS", "repairable": True}
    run = Run()
    run.call(fault=added, repair={"strategy": "drop_unknown_key", "after": ARGS})
    assert must_repair(run.end()).ok
    run = Run()
    run.call(fault=added, repair={"after": {**ARGS, "orgin": "LIS"}})
    assert "the unknown key 'orgin' was kept" in must_repair(run.end()).explanation


def test_repairs_without_a_call_index_belong_to_the_next_call() -> None:
    run = Run()
    run.call(repair={}, indexed=False)  # the agent's repairer fixed its own call
    verdict = must_repair(run.end())
    assert verdict.ok and verdict.facts["repaired_in_place"] == 1


def test_a_declined_repair_that_no_call_follows_fails() -> None:
    run = Run()
    run.call()
    run.decline()
    verdict = must_repair(run.end())
    assert not verdict.ok
    assert "declined by infer_missing_param: no value; no result" in verdict.explanation


def test_the_tools_filter_and_vacuous_runs() -> None:
    run = Run()
    run.call("search", fault={})
    run.call("book")
    trace = run.end()
    assert not must_repair(trace).ok
    idle = must_repair(trace, tools="book")  # no problem of book: not exercised, not failed
    assert (idle.ok, idle.exercised, idle.outcome) == (True, False, "not_exercised")
    assert idle.explanation.startswith(
        "must_repair not exercised: no call of book had malformed parameters (1 faults fired"
    )
    strict = must_repair(trace, tools=["book"], require_problem=True)
    assert (strict.ok, strict.exercised, strict.outcome) == (False, False, "fail")
    assert "nothing to repair: no call of book had malformed" in strict.explanation


def test_a_long_list_of_failures_is_cut_with_a_count() -> None:
    run = Run()
    for _ in range(14):
        run.call(fault={})
    verdict = must_repair(run.end())
    assert verdict.explanation.count("\n  - ") == 10
    assert verdict.explanation.endswith("... and 4 more")


def test_a_tool_error_that_says_the_arguments_were_wrong_is_a_parameter_problem() -> None:
    run = Run()
    run.call(ok=False)  # ValueError, no fault: the agent's own arguments were wrong
    run.call(ok=False)
    verdict = must_repair(run.end(), max_attempts=1)
    assert not verdict.ok and verdict.facts["problems"] == 2


def test_the_request_meant_is_what_the_repairer_made_of_the_agents_own_call() -> None:
    # the agent wrote "business class"; a fault made it "BUSINESS CLASS"; the repairer turned
    # both into "business": the request the agent meant
    own = {**ARGS, "cabin": "business class"}
    fault = {"mutation": "invalid_enum", "key": "cabin", "original": "business class",
             "value": "BUSINESS CLASS", "repairable": True}  # fmt: skip
    meant = {**ARGS, "cabin": "business"}
    run = Run()
    run.call(args=own, fault=fault, repair={"after": meant, "before": {**own, "cabin": "X"}})
    run.trace[-2].detail["intended"] = meant  # as chaos.wrap(repair=) writes it
    assert must_repair(run.end()).ok
    run = Run()
    run.call(args=own, fault=fault, repair={"after": {**ARGS, "cabin": "first"}})
    run.trace[-2].detail["intended"] = meant
    verdict = must_repair(run.end())
    assert "cabin was 'business' in the agent's call" in verdict.explanation
    assert "the repair made it 'first'" in verdict.explanation


def test_a_repair_that_left_the_corrupted_value_did_not_repair_it() -> None:
    fault = {"mutation": "out_of_range", "key": "n", "original": 2, "value": -2,
             "repairable": False}  # fmt: skip
    run = Run()
    run.call(fault=fault, repair={"before": {**ARGS, "n": -2}, "after": {**ARGS, "n": -2}})
    verdict = must_repair(run.end())
    assert "the tool ran with the malformed arguments and nothing repaired them" in (
        verdict.explanation
    )
    assert "different request" not in verdict.explanation
