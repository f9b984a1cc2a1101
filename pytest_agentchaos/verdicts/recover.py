"""``must_recover_state``: after every crash, loop or stagnation the agent was reborn from a
healthy snapshot, it reached its goal within ``max_rebirths`` rebirths, and no side effect ran
twice with the same idempotency key.

Pure over the trace. It reads what the rebirth runner records: a ``Detection`` (detector
``phoenix``) per trouble, then ``Intervention`` events: ``rebirth`` (from which step to which
snapshot, the snapshots skipped and why), ``soft_reset`` (no healthy snapshot was left),
``escalate`` (rebirths ran out), ``effect`` (the idempotency ledger: ``ran`` says whether the
call was made) and ``outcome`` (how the runner's run ended). A tool or HTTP call whose
arguments carry an idempotency key (``idempotency_key``, ``Idempotency-Key``, ``idempotencyKey``,
at the top level or one level down) is a side effect too: two successful calls of one tool
with the same key are a duplicate, as two ledger runs of one key are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..saferepr import safe_str
from ..trace.events import Detection, Intervention
from ..trace.trace import Trace
from .effects import EffectLog
from .verdict import Verdict, end_line, halt_line, headed

__all__ = ["DETECTOR", "must_recover_state"]

#: The ``detector`` of the rebirth runner's ``Detection`` events.
DETECTOR = "phoenix"
#: Most troubles and duplicates listed in a failure.
_SHOWN = 12


@dataclass
class _Trouble:
    """One crash, loop or stagnation, and what the runner did about it."""

    kind: str
    step: Any
    reason: str
    rebirth: dict[str, Any] | None = None
    soft_reset: bool = False
    escalated: dict[str, Any] | None = None

    def __str__(self) -> str:
        return f"{self.kind} at step {self.step} ({self.reason})"

    @property
    def healthy(self) -> bool:
        """Reborn from a snapshot that loaded and passed its checks, or reset to the start
        state when the only snapshots skipped were the start's own (it holds that state: the
        reset loses nothing a snapshot held)."""
        if self.rebirth is None:
            return False
        return self.rebirth.get("snapshot") is not None or self._only_start_skipped

    @property
    def _only_start_skipped(self) -> bool:
        skipped = (self.rebirth or {}).get("skipped")
        return (
            isinstance(skipped, list)
            and bool(skipped)
            and all(isinstance(s, dict) and s.get("step") == 0 for s in skipped)
        )

    def fate(self) -> str:
        """What became of the agent after this trouble, with the snapshots skipped."""
        skipped = _skipped(self.rebirth or {})
        if self.healthy:
            assert self.rebirth is not None
            if self.rebirth.get("snapshot") is None:
                return (
                    f"reset to the start state{skipped}, which no later snapshot held: nothing lost"
                )
            return (
                f"resumed at step {self.rebirth.get('to_step')} from "
                f"{safe_str(self.rebirth.get('snapshot'), 120)}{skipped}"
            )
        if self.rebirth is not None or self.soft_reset:
            return f"no healthy snapshot to resume from{skipped}; soft reset to the start state"
        if self.escalated is not None:
            return (
                f"not reborn: the runner's max_rebirths={self.escalated.get('max_rebirths')} "
                "was used up and it escalated"
            )
        return "not reborn: the run stopped first"


def _duplicates(effects: EffectLog, reborn: list[_Trouble]) -> list[str]:
    """The effects that ran twice, each with when it ran relative to the rebirths."""
    lines = []
    for key, runs in effects.ledger_twice().items():
        lines.append(
            f"duplicate effect: idempotency key {safe_str(repr(key), 120)} ran "
            f"{len(runs)} times through the runner's effect ledger ({_when(runs, reborn)})"
        )
    for (tool, key), calls in effects.same_key().items():
        lines.append(
            f"duplicate effect: {safe_str(tool, 80)} with idempotency key "
            f"{safe_str(repr(key), 120)} succeeded {len(calls)} times "
            f"({_when([c.epoch for c in calls], reborn)})"
        )
    return lines


def must_recover_state(
    trace: Trace,
    *,
    max_rebirths: int = 3,
    no_duplicate_effects: bool = True,
    require_problem: bool = False,
) -> Verdict:
    """After every trouble the rebirth runner met (a crash, a loop, stagnation) the agent was
    reborn from a healthy snapshot, the runner reached its goal with at most ``max_rebirths``
    rebirths, and (with ``no_duplicate_effects``) no side effect ran twice with the same
    idempotency key. A run where nothing went wrong is **not exercised** (it passes, unless
    a duplicate effect or an unfinished goal fails it); with ``require_problem`` it fails."""
    troubles, reborn, outcomes, effects = _read(trace)
    end = end_line(trace)
    fired = trace.fault_counts()
    faults = ", ".join(f"{k}:{n}" for k, n in fired.items()) or "none"
    facts: dict[str, Any] = {
        "troubles": len(troubles),
        "rebirths": len(reborn),
        "healthy": sum(t.healthy for t in troubles),
        "done": bool(outcomes) and all(o.get("done") is True for o in outcomes),
    }
    if not troubles and require_problem:
        stops = _stops(trace)
        stopped = f", stopped by {stops}" if stops else ""
        return Verdict(
            "must_recover_state",
            False,
            headed(
                "must_recover_state failed: nothing to recover from: no crash, loop or "
                f"stagnation arose in this run (faults fired: {faults}; {end}{stopped}). Run "
                "the agent with PhoenixRunner.for_run and inject crash or corrupt_snapshot "
                "faults, or pass require_problem=False.",
                trace,
            ),
            facts,
            exercised=False,
        )
    problems = [f"{t}: {t.fate()}" for t in troubles if not t.healthy]
    if len(reborn) > max_rebirths:
        problems.append(f"{len(reborn)} rebirths, more than max_rebirths={max_rebirths}")
    problems.extend(_goal(troubles, outcomes, trace))
    duplicates = _duplicates(effects, reborn) if no_duplicate_effects else []
    facts["duplicates"] = len(duplicates)
    problems.extend(duplicates)
    if not problems:
        if not troubles:
            return Verdict(
                "must_recover_state",
                True,
                headed(
                    "must_recover_state not exercised: no crash, loop or stagnation arose in "
                    f"this run (faults fired: {faults}; {end}); "
                    f"{_effect_count(effects, no_duplicate_effects)}; require_problem=True "
                    "fails such a run",
                    trace,
                ),
                facts,
                exercised=False,
            )
        return Verdict(
            "must_recover_state",
            True,
            headed(
                f"must_recover_state ok: {len(troubles)} trouble(s), each resumed from a "
                f"healthy snapshot or the start state; goal reached after {len(reborn)} "
                f"rebirth(s) (max_rebirths={max_rebirths}); "
                f"{_effect_count(effects, no_duplicate_effects)}",
                trace,
            ),
            facts,
        )
    lines = ["must_recover_state failed: the agent did not recover its state"]
    lines += [f"  - {p}" for p in problems[:_SHOWN]]
    if len(problems) > _SHOWN:
        lines.append(f"  ... and {len(problems) - _SHOWN} more")
    if troubles:
        lines.append("  troubles and rebirths:")
        lines += [f"    {i}. {t}: {t.fate()}" for i, t in enumerate(troubles[:_SHOWN], 1)]
        if len(troubles) > _SHOWN:
            lines.append(f"    ... and {len(troubles) - _SHOWN} more")
    lines += [f"  {_outcome_line(o)}" for o in outcomes[:_SHOWN]]
    lines.append(f"  faults fired: {faults}; {end}")
    return Verdict("must_recover_state", False, headed("\n".join(lines), trace), facts)


def _read(
    trace: Trace,
) -> tuple[list[_Trouble], list[_Trouble], list[dict[str, Any]], EffectLog]:
    """The troubles in order, the trouble behind each rebirth, the runners' outcomes and
    the side effects."""
    troubles: list[_Trouble] = []
    reborn: list[_Trouble] = []
    outcomes: list[dict[str, Any]] = []
    effects = EffectLog()
    current: _Trouble | None = None
    for event in trace:
        effects.feed(event, len(reborn))
        if isinstance(event, Detection) and event.detector == DETECTOR:
            detail = _dict(event.detail)
            reason = safe_str(detail.get("reason", ""), 200)
            current = _Trouble(str(event.kind), detail.get("step", "?"), reason)
            troubles.append(current)
        elif isinstance(event, Intervention):
            detail = _dict(event.detail)
            if event.action == "rebirth":
                trouble = current
                if trouble is None:  # a rebirth no detection announced
                    trigger, at = str(detail.get("trigger", "?")), detail.get("from_step", "?")
                    trouble = _Trouble(trigger, at, safe_str(detail.get("reason", ""), 200))
                    troubles.append(trouble)
                trouble.rebirth = detail
                reborn.append(trouble)
                current = None
            elif event.action == "soft_reset" and current is not None:
                current.soft_reset = True
            elif event.action == "escalate" and current is not None:
                current.escalated = detail
            elif event.action == "outcome":
                outcomes.append(detail)
    return troubles, reborn, outcomes, effects


def _goal(troubles: list[_Trouble], outcomes: list[dict[str, Any]], trace: Trace) -> list[str]:
    """Why the runner did not reach its goal, if it did not."""
    if not outcomes:
        if not troubles:
            return []
        stops = _stops(trace)
        why = f"stopped by {stops}" if stops else f"{end_line(trace)} first"
        return [f"the rebirth runner never finished its run: {why}"]
    return [
        f"the agent did not reach its goal: {_outcome_line(o)}"
        for o in outcomes
        if o.get("done") is not True
    ]


def _outcome_line(outcome: dict[str, Any]) -> str:
    """How one runner's run ended, as its ``outcome`` event says."""
    runner = safe_str(outcome.get("runner", "the runner"), 80)
    return (
        f"runner {runner}: {safe_str(outcome.get('reason'), 200)} at step "
        f"{outcome.get('step')} ({outcome.get('steps_run')} steps run, "
        f"{outcome.get('rebirths')} rebirth(s))"
    )


def _stops(trace: Trace) -> str:
    """The hard halts that stopped the run, if any."""
    stops = [f"hard budget {h.budget}={h.limit:g}" for h in trace.budget_exhausted()]
    stops += [halt_line(h).rstrip(";") for h in trace.hard_halts()]
    return "; ".join(stops)


def _when(runs: list[int], reborn: list[_Trouble]) -> str:
    """When each run of a side effect happened, relative to the rebirths."""
    parts = []
    for n in runs:
        if n == 0 or n > len(reborn):
            parts.append("before any rebirth" if n == 0 else f"after rebirth {n}")
        else:
            trouble = reborn[n - 1]
            parts.append(f"after rebirth {n} ({trouble.kind} at step {trouble.step})")
    return "; ".join(parts)


def _skipped(rebirth: dict[str, Any]) -> str:
    skipped = rebirth.get("skipped")
    if not isinstance(skipped, list) or not skipped:
        return ""
    shown = ", ".join(
        f"{safe_str(s.get('snapshot'), 120)} ({safe_str(s.get('reason'), 120)})"
        for s in skipped[:6]
        if isinstance(s, dict)
    )
    more = f" and {len(skipped) - 6} more" if len(skipped) > 6 else ""
    return f"; skipped {shown}{more}"


def _effect_count(effects: EffectLog, judged: bool) -> str:
    if not judged:
        return "duplicate effects not judged (no_duplicate_effects=False)"
    keys = len(effects.ledger) + len(effects.keyed())
    return f"{keys} side effect(s) keyed, none run twice" if keys else "no keyed side effects"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
