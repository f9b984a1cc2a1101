"""``must_repair``: every call with malformed parameters was repaired, into the request the
agent meant, within a few calls of that tool.

Pure over the trace. A call has a parameter problem when a ``malformed_params`` fault
corrupted it, when a ``Repair`` event was written for it, or when it failed with HTTP 400 or
422 or an error that says its arguments were wrong (``ValueError``, ``TypeError``,
``ValidationError``, ``KeyError``, ``JSONDecodeError``, ``RepairError``). Such a call is
repaired in place when a ``Repair`` event for it says ok, the corrupted value came back as
the agent meant it, and the tool then succeeded; otherwise one of the tool's next
``max_attempts`` calls must succeed (itself repaired where it was corrupted too).

What the agent meant is what the repairer made of the agent's own call (``chaos.wrap(...,
repair=)`` writes it in the event as ``intended`` when a fault corrupted the call), else the
agent's call as it was. Two ways to fail besides running out of calls: a repair that turned a
corrupted call into another request (an "unrepairable" fault, whose information was gone,
repaired by inventing a value), and a corrupted call that reached the tool as the fault made
it (nothing checked the arguments: the tool ran a request the agent did not make).

What the tool received is judged, not what the fault sent: a framework adapter records what
its framework's own validation made of corrupted arguments (a ``Repair`` whose detail says
``"by": "framework"``). A value coerced back to the agent's (``'51.5'`` -> ``51.5``) or an
unknown key dropped is **neutralised** by that validation; a validation error the model
answered with a good call is neutralised too. A run with no parameter problem is **not
exercised**.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..saferepr import safe_str
from ..trace.events import FaultInjected, Repair, RunEnded, ToolCall, ToolResult
from ..trace.trace import Trace
from .verdict import Verdict, headed

__all__ = ["must_repair"]

_PARAMETER_STATUS = (400, 422)
#: Errors of a Python tool that say its arguments were wrong.
_PARAMETER_ERRORS = frozenset(
    {"ValueError", "TypeError", "ValidationError", "RequestValidationError", "RepairError",
     "JSONDecodeError", "KeyError"}
)  # fmt: skip


@dataclass
class _Call:
    tool: str
    index: int
    step: int
    args: dict[str, Any]
    fault: dict[str, Any] | None = None
    repairs: list[Repair] = field(default_factory=list)
    result: ToolResult | None = None

    @property
    def ok(self) -> bool:
        return self.result is not None and self.result.ok

    @property
    def repaired(self) -> Repair | None:
        return next((r for r in reversed(self.repairs) if r.ok), None)

    @property
    def framework(self) -> Repair | None:
        """The framework's validation of this call's corrupted arguments, when it passed
        them on (what the tool received), if the repair that counts is that."""
        repair = self.repaired
        return repair if repair is not None and _detail(repair).get("by") == "framework" else None

    def short(self) -> str:
        line = f"call #{self.index} of {self.tool} (step {self.step})"
        if self.fault is not None:
            line += f", {_fault_line(self.fault)}"
        return line

    @property
    def problem(self) -> bool:
        if self.fault is not None or self.repairs:
            return True
        result = self.result
        if result is None or result.ok:
            return False
        return result.status in _PARAMETER_STATUS or result.error_type in _PARAMETER_ERRORS

    def describe(self) -> str:
        line = f"call #{self.index} of {self.tool} (step {self.step}) with {_shown(self.args)}"
        if self.fault is not None:
            line += f"; corrupted by {_fault_line(self.fault)}"
        for repair in self.repairs:
            if _detail(repair).get("by") == "framework":
                line += f"; passed by {repair.strategy} as {_shown(_after(repair))}"
                continue
            verdict = "repaired" if repair.ok else "declined"
            reason = safe_str(_detail(repair).get("reason", ""), 200)
            line += f"; {verdict} by {safe_str(repair.strategy, 80)}: {reason}"
        result = self.result
        if result is None:
            line += "; no result (the run stopped)"
        elif result.ok:
            line += "; succeeded"
        else:
            error = f"{result.error_type or 'error'}: {safe_str(result.message or '', 200)}"
            line += f"; failed with {error}"
        return line


def must_repair(
    trace: Trace,
    *,
    tools: Iterable[str] | str | None = None,
    max_attempts: int = 3,
    require_problem: bool = False,
) -> Verdict:
    """Every call with a parameter problem (of ``tools``, all by default) reached the tool as
    the request the agent meant: repaired in place (by the agent's repairer, or neutralised
    by the framework's own validation, which coerced the value back or dropped the unknown
    key), or followed within ``max_attempts`` calls of that tool by a call that succeeded (a
    validation error the model answered with a good call); no corrupted call was repaired
    into another request or run as it was. A run where no call had a parameter problem is
    **not exercised** (it passes: under a probabilistic profile a run may draw no
    corruption); with ``require_problem`` it fails."""
    if isinstance(tools, str):
        tools = [tools]
    wanted = set(tools) if tools is not None else None
    calls = _calls(trace, wanted)
    facts: dict[str, Any] = {
        "problems": 0, "repaired_in_place": 0, "repaired_later": 0, "neutralised": 0
    }  # fmt: skip
    failures: list[str] = []
    neutralised: list[str] = []
    by_tool: dict[str, list[_Call]] = {}
    for call in calls:
        by_tool.setdefault(call.tool, []).append(call)
    for tool_calls in by_tool.values():
        for position, call in enumerate(tool_calls):
            if not call.problem:
                continue
            facts["problems"] += 1
            wrong = _different_request(call)
            if wrong is not None:
                failures.append(wrong)
                continue
            if call.ok:
                if call.fault is not None and not _restored(call):
                    failures.append(_unrepaired(call))
                    continue
                by = call.framework
                if by is not None and call.fault is not None:
                    facts["neutralised"] += 1
                    neutralised.append(
                        f"{call.short()}: neutralised by {by.strategy} (the tool received "
                        f"{_value(_after(by).get(str(call.fault.get('key')), _ABSENT))})"
                        if call.fault.get("mutation") != "unknown_key"
                        else f"{call.short()}: neutralised by {by.strategy} (the unknown key "
                        "was dropped)"
                    )
                else:
                    facts["repaired_in_place"] += 1
                continue
            later = tool_calls[position + 1 : position + 1 + max_attempts]
            fixed = next((c for c in later if c.ok and _clean(c)), None)
            if fixed is not None:
                refused = call.result is not None and call.fault is not None and not call.repairs
                if refused and call.result is not None:
                    facts["neutralised"] += 1
                    neutralised.append(
                        f"{call.short()}: neutralised by the tool's validation, which refused "
                        f"it ({call.result.error_type or 'an error'}); call #{fixed.index} "
                        "then succeeded"
                    )
                else:
                    facts["repaired_later"] += 1
                continue
            attempts = "\n".join(f"    then {c.describe()}" for c in later) or (
                "    and no later call of this tool"
            )
            failures.append(
                f"{call.describe()}\n{attempts}\n  not repaired within {max_attempts} "
                f"call(s) of {call.tool}"
            )
    ended = trace.of_type(RunEnded)
    end = f"the run ended {ended[-1].status} at step {ended[-1].step}" if ended else "no run end"
    scope = f" of {', '.join(sorted(wanted))}" if wanted else ""
    if not facts["problems"]:
        fired = sum(trace.fault_counts().values())
        if require_problem:
            return Verdict(
                "must_repair",
                False,
                headed(
                    f"must_repair failed: nothing to repair: no call{scope} had malformed "
                    f"parameters ({fired} faults fired; {end}). Inject malformed_params, or "
                    "pass require_problem=False.",
                    trace,
                ),
                facts,
                exercised=False,
            )
        return Verdict(
            "must_repair",
            True,
            headed(
                f"must_repair not exercised: no call{scope} had malformed parameters ({fired} "
                f"faults fired; {end}); require_problem=True fails such a run",
                trace,
            ),
            facts,
            exercised=False,
        )
    if failures:
        shown = "\n".join(f"  - {line}" for line in failures[:10])
        more = f"\n  ... and {len(failures) - 10} more" if len(failures) > 10 else ""
        return Verdict(
            "must_repair",
            False,
            headed(
                f"must_repair failed: {len(failures)} of {facts['problems']} parameter "
                f"problem(s){scope} not repaired as asked:\n{shown}{more}",
                trace,
            ),
            {**facts, "failures": len(failures)},
        )
    done = [
        f"{facts['repaired_in_place']} before the tool ran",
        f"{facts['repaired_later']} by a later call",
    ]
    if facts["neutralised"]:
        done.append(f"{facts['neutralised']} neutralised by the framework's validation")
    text = (
        f"must_repair ok: {facts['problems']} parameter problem(s){scope} repaired "
        f"({', '.join(done)}); {end}"
    )
    text += "".join(f"\n  - {line}" for line in neutralised[:10])
    if len(neutralised) > 10:
        text += f"\n  ... and {len(neutralised) - 10} more"
    return Verdict("must_repair", True, headed(text, trace), facts)


def _unrepaired(call: _Call) -> str:
    """Why a corrupted call that succeeded ran a request the agent did not make."""
    by = call.framework
    if by is not None:
        return (
            f"{call.describe()}: the tool ran with the malformed arguments: {by.strategy} "
            "accepted them (it ran a request the agent did not make; the schema does not "
            "bound this value, or the framework does not check it)"
        )
    return (
        f"{call.describe()}: the tool ran with the malformed arguments and nothing repaired "
        "them (it ran a request the agent did not make)"
    )


def _after(repair: Repair) -> dict[str, Any]:
    return repair.after if isinstance(repair.after, dict) else {}


def _calls(trace: Trace, wanted: set[str] | None) -> list[_Call]:
    """The judged tools' calls, each with its fault, repairs and result. A ``Repair`` event
    that names its call (``detail["index"]``, as ``chaos.wrap(repair=)`` writes it) belongs
    to that call; one that does not (a repairer run before the call, by the agent or the
    Supervisor) belongs to the tool's next call. A declined repair no call follows stands
    for a call the repairer stopped."""
    calls: dict[tuple[str, int], _Call] = {}
    order: list[_Call] = []
    pending: dict[str, list[Repair]] = {}
    for event in trace:
        if isinstance(event, ToolCall):
            if wanted is not None and event.tool not in wanted:
                continue
            call = _Call(event.tool, event.index, event.step, dict(event.args or {}))
            call.repairs.extend(pending.pop(event.tool, ()))
            calls[(event.tool, event.index)] = call
            order.append(call)
        elif isinstance(event, FaultInjected) and event.kind == "malformed_params":
            found = calls.get((event.target, event.index))
            if found is not None:
                found.fault = dict(event.detail)
        elif isinstance(event, Repair):
            if wanted is not None and event.tool not in wanted:
                continue
            index = _detail(event).get("index")
            if isinstance(index, int) and not isinstance(index, bool):
                found = calls.get((event.tool, index))
                if found is not None:  # one naming no call vouches for none
                    found.repairs.append(event)
            else:
                pending.setdefault(event.tool, []).append(event)
        elif isinstance(event, ToolResult):
            found = calls.get((event.tool, event.index))
            if found is not None:
                found.result = event
    for tool, repairs in pending.items():  # stopped before any call, and none came after
        if repairs[-1].ok:
            continue  # repaired, then called outside what the trace shows
        before = repairs[-1].before if isinstance(repairs[-1].before, dict) else {}
        stopped = _Call(tool, 0, repairs[-1].step, dict(before))
        stopped.repairs.extend(repairs)
        order.append(stopped)
    return order


def _detail(repair: Repair) -> dict[str, Any]:
    return repair.detail if isinstance(repair.detail, dict) else {}


def _intended(call: _Call, repair: Repair) -> dict[str, Any]:
    """The request the agent meant: what the repairer made of the agent's own call (written
    in the event when a fault corrupted it), else the agent's call as it was."""
    meant = _detail(repair).get("intended")
    return meant if isinstance(meant, dict) else call.args


def _different_request(call: _Call) -> str | None:
    """Why a repair of a corrupted call made another request than the agent's, or None. A
    repair that left the corrupted value as it was made none: the call is judged as not
    repaired."""
    fault, repair = call.fault, call.repaired
    if fault is None or repair is None:
        return None
    key = str(fault.get("key"))
    after = repair.after if isinstance(repair.after, dict) else {}
    before = repair.before if isinstance(repair.before, dict) else {}
    if fault.get("mutation") == "unknown_key":
        if key in after:
            return f"{call.describe()}: the unknown key {key!r} was kept"
        return None
    meant = _intended(call, repair)
    made = after.get(key, _ABSENT)
    if _same(made, meant.get(key, _ABSENT)) or _same(made, before.get(key, _ABSENT)):
        return None  # brought back, or left as the fault made it (judged as not repaired)
    kind = "an unrepairable" if fault.get("repairable") is False else "a"
    by = "the repair" if call.framework is None else safe_str(repair.strategy, 80)
    return (
        f"{call.describe()}: repaired into a different request: {key} was "
        f"{_value(meant.get(key, _ABSENT))} in the agent's call, {kind} fault changed it and "
        f"{by} made it {_value(made)}"
    )


def _restored(call: _Call) -> bool:
    """Whether a corrupted call reached the tool as the agent meant it."""
    fault, repair = call.fault, call.repaired
    if fault is None:
        return True
    if repair is None:
        return False
    key = str(fault.get("key"))
    after = repair.after if isinstance(repair.after, dict) else {}
    if fault.get("mutation") == "unknown_key":
        return key not in after
    return _same(after.get(key, _ABSENT), _intended(call, repair).get(key, _ABSENT))


def _clean(call: _Call) -> bool:
    """A later call that succeeded and is not itself a corrupted call gone wrong."""
    return _restored(call) and _different_request(call) is None


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT: Any = _Absent()


def _same(a: Any, b: Any) -> bool:
    if a is _ABSENT or b is _ABSENT:
        return a is b
    try:
        return json.dumps(a, sort_keys=True, default=repr) == json.dumps(
            b, sort_keys=True, default=repr
        )
    except (TypeError, ValueError):
        return bool(a == b)


def _value(value: Any) -> str:
    return "absent" if value is _ABSENT else safe_str(repr(value), 80)


def _shown(args: dict[str, Any]) -> str:
    return safe_str(json.dumps(args, ensure_ascii=False, default=repr), 200)


def _fault_line(detail: dict[str, Any]) -> str:
    mutation = detail.get("mutation", "?")
    key = detail.get("key", "?")
    if mutation == "missing_required":
        return f"{mutation} ({key} removed)"
    if mutation == "unknown_key":
        return f"{mutation} ({key}={_value(detail.get('value'))} added)"
    return f"{mutation} ({key}: {_value(detail.get('original'))} -> {_value(detail.get('value'))})"
