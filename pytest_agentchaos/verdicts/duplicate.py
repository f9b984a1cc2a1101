"""``must_not_duplicate``: a side-effecting tool took effect at most once per intent.

Pure over the trace, through the duplicate check :mod:`.effects` shares with
``must_recover_state``. An effect is a successful call of the tool, or a call whose reply a
``lost_reply`` fault lost after the tool ran (the agent saw a timeout or a reset; the booking
was made). After a lost reply the agent may check whether the effect happened (a read call),
retry with the same idempotency key (the tool deduplicates: one effect), or not retry; what it
may not do is make the effect again: two effects of one tool with one intent (the same
arguments, modulo volatile fields and the idempotency key) that do not share an idempotency
key are a duplicate. A key run twice through the rebirth runner's effect ledger is one too.

``tools`` names the side-effecting tools; None judges the tools a ``lost_reply`` fault hit. A run
where no reply of a judged tool was lost is **not exercised** (it passes, unless a duplicate
fails it); with ``require_lost_reply`` it fails.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..saferepr import safe_repr, safe_str
from ..trace.events import ToolCall
from ..trace.trace import Trace
from .effects import Effect, EffectLog
from .verdict import Verdict, end_line, headed

__all__ = ["must_not_duplicate"]

#: Most duplicates listed in a failure, and most calls named between two effects.
_SHOWN = 12
_BETWEEN = 4


def must_not_duplicate(
    trace: Trace,
    *,
    tools: Sequence[str] | str | None = None,
    require_lost_reply: bool = False,
) -> Verdict:
    """No side-effecting tool took effect twice for one intent (see the module doc). A run
    where no reply of a judged tool was lost is **not exercised**; with
    ``require_lost_reply`` it fails."""
    named = (tools,) if isinstance(tools, str) else tuple(tools) if tools is not None else None
    events = trace.events
    judged = set(named) if named is not None else EffectLog.lost(events)
    log = EffectLog(tools=frozenset(judged)).read(events)
    effects = [e for e in log.effects if e.tool in judged]
    lost = [e for e in effects if e.lost]
    groups = log.same_intent(judged)
    ledger = log.ledger_twice()
    shown = ", ".join(sorted(judged)) or "no side-effecting tool"
    facts: dict[str, Any] = {
        "tools": sorted(judged),
        "effects": len(effects),
        "lost_replies": len(lost),
        "duplicates": len(groups) + len(ledger),
        "reused_keys": log.reused(judged),
    }
    end = end_line(trace)
    if groups or ledger:
        calls = trace.of_type(ToolCall)
        problems = [
            _group_line(group, calls if n < _SHOWN else None) for n, group in enumerate(groups)
        ]
        problems += [
            (
                f"idempotency key {safe_str(repr(key), 120)} ran {len(runs)} times through the "
                "rebirth runner's effect ledger",
                f"idempotency key {safe_str(repr(key), 120)} ran {len(runs)} times through the "
                "rebirth runner's effect ledger",
            )
            for key, runs in ledger.items()
        ]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        lines = [f"must_not_duplicate failed: {problems[0][0]}{more}"]
        lines += [f"  - {long}" for _, long in problems[:_SHOWN]]
        if len(problems) > _SHOWN:
            lines.append(f"  ... and {len(problems) - _SHOWN} more")
        lines.append(
            f"  judged: {shown}; {len(effects)} effect(s), {len(lost)} reply(ies) lost; {end}"
        )
        return Verdict("must_not_duplicate", False, headed("\n".join(lines), trace), facts)
    if not lost:
        fired = ", ".join(f"{k}:{n}" for k, n in trace.fault_counts().items()) or "none"
        nothing = (
            f"no reply of a side-effecting tool was lost in this run (judged: {shown}; "
            f"{len(effects)} effect(s), none twice for one intent; faults fired: {fired}; {end})"
        )
        if require_lost_reply:
            return Verdict(
                "must_not_duplicate",
                False,
                headed(
                    f"must_not_duplicate failed: nothing to judge: {nothing}. Inject lost_reply "
                    "faults on the tool, or pass require_lost_reply=False.",
                    trace,
                ),
                facts,
                exercised=False,
            )
        return Verdict(
            "must_not_duplicate",
            True,
            headed(
                f"must_not_duplicate not exercised: {nothing}; require_lost_reply=True fails "
                "such a run",
                trace,
            ),
            facts,
            exercised=False,
        )
    reused = facts["reused_keys"]
    how = f" ({reused} retry(ies) reused an idempotency key)" if reused else ""
    return Verdict(
        "must_not_duplicate",
        True,
        headed(
            f"must_not_duplicate ok: {len(lost)} reply(ies) lost, {len(effects)} effect(s) of "
            f"{shown}; each intent took effect once{how}; {end}",
            trace,
        ),
        facts,
    )


def _group_line(group: list[Effect], calls: list[ToolCall] | None) -> tuple[str, str]:
    """A duplicate in a few words, and in full (``calls``: every tool call of the run; None
    for a duplicate past those a failure lists): each effect with its step, time, key and lost
    reply, and what the agent called between the first two."""
    first, second = group[0], group[1]
    tool = safe_str(first.tool, 80)
    short = f"{tool} took effect {len(group)} times for one intent"
    if calls is None:
        return short, short
    effects = "; ".join(f"{e.where()}, {_key(e)}" for e in group)
    return short, (
        f"{tool} {_args(first.args)} took effect {len(group)} times: {effects}; "
        f"{_between(first, second, calls)}"
    )


def _key(effect: Effect) -> str:
    if effect.key is None:
        return "no idempotency key"
    return f"idempotency key {safe_str(repr(effect.key), 80)}"


def _args(args: Any) -> str:
    try:
        text = json.dumps(args, ensure_ascii=False, sort_keys=True, default=repr)
    except Exception:
        return safe_repr(args, 160)
    return text if len(text) <= 160 else text[:157] + "..."


def _between(first: Effect, second: Effect, calls: list[ToolCall]) -> str:
    """The calls of other tools between two effects: did the agent check before it did it
    again?"""
    seen: list[str] = []
    for call in calls:
        if first.step < call.step < second.step and call.tool != first.tool:
            label = f"{safe_str(call.tool, 60)} (step {call.step})"
            if label not in seen:
                seen.append(label)
    if not seen:
        return "no other call in between checked whether the first took effect"
    more = f" and {len(seen) - _BETWEEN} more" if len(seen) > _BETWEEN else ""
    return f"called in between: {', '.join(seen[:_BETWEEN])}{more}"
