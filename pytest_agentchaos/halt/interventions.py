"""What to do about the halt monitor's decisions, gentlest first (seed 004's interventions):
a **nudge** for the agent's next prompt while the risk rises, then on a halt decision a
**rollback** to the last good Phoenix snapshot, a **summarise-and-restart** hook, an
**escalation** to a human with the history, and last **terminate**. Each rung is used only when
it is configured and not used up; a hard limit of the monitor terminates at once.

    monitor = HaltMonitor(task="Book a flight to Oslo")
    responder = Responder(monitor, store=snapshots, restore=agent.from_state)
    for step in agent_steps():
        action = responder.observe(step.output, tool=step.tool, ok=step.ok)
        if action.kind == "nudge":
            agent.add_to_next_prompt(action.message)
        if action.stop:
            break

In a chaos run (``HaltMonitor.for_run``) each action is an ``Intervention`` event, and a
stopping action (escalate, terminate) is the run's ``Halt`` decision; while a responder is
attached, a halt decision that a rollback or restart answered does not stop the run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..saferepr import safe_str
from ..trace.events import Intervention
from .monitor import HaltDecision, HaltMonitor
from .text import cjk_share
from .watch import decision_detail, record_halt

__all__ = ["ACTIONS", "Action", "Responder"]

#: The actions of a responder, gentlest first (``continue``: nothing to do).
ACTIONS = ("continue", "nudge", "rollback", "restart", "escalate", "terminate")

_NUDGES = {
    "en": {
        "repetition": "Your recent answers repeat each other.",
        "novelty": "Your recent steps brought no new information.",
        "progress": "Your progress has stalled.",
        "apology": "You apologised and then repeated the same failure.",
        "self_reference": "You are talking about your own earlier answers instead of the task.",
        "oscillation": "You are alternating between the same answers.",
        "drift": "You have drifted away from the task",
        "tool_failure": "The same tool call keeps failing the same way.",
        "ask": "Do not repeat yourself: change your approach, or say what blocks you.",
        "task": ": {task}",
    },
    "zh": {
        "repetition": "你最近的回答在重复。",
        "novelty": "最近几步没有带来任何新信息。",
        "progress": "任务进展已经停滞。",
        "apology": "你道歉之后又重复了同样的失败。",
        "self_reference": "你在谈论自己之前的回答，而不是任务本身。",
        "oscillation": "你在几个相同的答案之间来回摇摆。",
        "drift": "你已经偏离了任务",
        "tool_failure": "同一个工具调用一直以同样的方式失败。",
        "ask": "不要重复：换一种方法，或者说明是什么阻碍了你。",
        "task": "：{task}",
    },
}


@dataclass(frozen=True)
class Action:
    """What the responder did about one decision. ``kind``: one of :data:`ACTIONS`.
    ``message``: for a nudge, the text to add to the agent's next prompt; otherwise what was
    done. ``stop``: the agent must stop now (escalated or terminated)."""

    kind: str
    message: str = ""
    decision: HaltDecision | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)

    @property
    def stop(self) -> bool:
        return self.kind in ("escalate", "terminate")


class Responder:
    """Answers ``monitor``'s decisions (see the module's docstring).

    ``nudge``: nudge when the risk reaches ``nudge_at`` without a halt (once per heuristic in
    the monitor's window). ``store`` and ``restore``: a Phoenix ``SnapshotStore`` and the
    agent's ``from_state``: a halt rolls back to its latest healthy snapshot (``health_check``
    as the store takes it), at most ``max_rollbacks`` times. ``restart(summary)``: the agent's
    summarise-and-restart hook, given a summary of the task, the steps and what went wrong, at
    most ``max_restarts`` times. ``escalate(report)``: hand the run to a human with its
    history; the agent stops. Without any of them a halt terminates. ``recorder``: where
    ``Intervention`` / ``Halt`` events go (by default the chaos run of ``HaltMonitor.for_run``).
    """

    def __init__(
        self,
        monitor: HaltMonitor,
        *,
        nudge: bool = True,
        nudge_at: float = 0.5,
        store: Any = None,
        restore: Callable[[Any], Any] | None = None,
        health_check: Callable[[Any], bool] | None = None,
        restart: Callable[[str], Any] | None = None,
        escalate: Callable[[dict[str, Any]], Any] | None = None,
        max_rollbacks: int = 1,
        max_restarts: int = 1,
        recorder: Any = None,
    ) -> None:
        if not isinstance(monitor, HaltMonitor):
            raise TypeError(f"Responder needs a HaltMonitor, got {safe_str(repr(monitor), 80)}")
        if (store is None) != (restore is None):
            raise ValueError("a rollback needs both store= (a SnapshotStore) and restore=")
        for name, hook in (("restore", restore), ("restart", restart), ("escalate", escalate)):
            if hook is not None and not callable(hook):
                raise TypeError(f"{name}= must be callable, got {safe_str(repr(hook), 80)}")
        for name, n in (("max_rollbacks", max_rollbacks), ("max_restarts", max_restarts)):
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise ValueError(f"{name} must be an int >= 0, got {n!r}")
        if not isinstance(nudge_at, (int, float)) or not 0 < nudge_at <= 1:
            raise ValueError(f"nudge_at must be a number in (0, 1], got {nudge_at!r}")
        if monitor.responder is not None:
            raise ValueError("this HaltMonitor already has a Responder")
        self.monitor = monitor
        self.nudge, self.nudge_at = nudge, float(nudge_at)
        self.store, self.restore, self.health_check = store, restore, health_check
        self.restart_hook, self.escalate_hook = restart, escalate
        self.max_rollbacks, self.max_restarts = max_rollbacks, max_restarts
        if recorder is None and monitor.run_watch is not None:
            recorder = monitor.run_watch.recorder
        self.recorder = recorder
        self.rollbacks = 0
        self.restarts = 0
        #: Every action taken but ``continue``, in order.
        self.actions: list[Action] = []
        self._nudged: dict[str, int] = {}
        self._answered = -1
        self._language = "zh" if cjk_share(monitor.watch.task) >= 0.3 else "en"
        monitor.responder = self

    def observe(self, *args: Any, **kwargs: Any) -> Action:
        """``monitor.observe(...)`` (same arguments), then :meth:`respond` to its decision."""
        return self.respond(self.monitor.observe(*args, **kwargs))

    def respond(self, decision: HaltDecision | None = None) -> Action:
        """The action for ``decision`` (default: the monitor's latest). A decision is answered
        once: asking again about the same step returns ``continue``."""
        decision = decision if decision is not None else self.monitor.decision
        if not self.monitor.history or decision.step <= self._answered:
            return Action("continue", decision=decision)
        self._answered = decision.step
        if decision.halt:
            action = self._halt(decision)
        elif self.nudge and decision.fired and decision.score >= self.nudge_at:
            action = self._nudge(decision)
        else:
            action = Action("continue", decision=decision)
        if action.kind != "continue":
            self.actions.append(action)
            self._record(action)
        return action

    # -- the rungs -------------------------------------------------------------------------

    def _nudge(self, decision: HaltDecision) -> Action:
        window = self.monitor.policy.window
        fresh = [
            h
            for h in decision.fired
            if h in _NUDGES["en"] and decision.step - self._nudged.get(h, -(10**9)) >= window
        ]
        if not fresh:
            return Action("continue", decision=decision)
        for h in fresh:
            self._nudged[h] = decision.step
        words = _NUDGES[self._language]
        parts = [words[h] for h in fresh]
        if "drift" in fresh:
            task = safe_str(self.monitor.watch.task, 200)
            i = parts.index(words["drift"])
            parts[i] += words["task"].format(task=task) if task else "."
            if self._language == "en" and task:
                parts[i] += "" if parts[i].endswith(".") else "."
        sep = "" if self._language == "zh" else " "
        message = sep.join([*parts, words["ask"]])
        return Action("nudge", message, decision, {"fired": list(fresh)})

    def _halt(self, decision: HaltDecision) -> Action:
        if decision.hard:
            return Action("terminate", decision.reason, decision, {"limit": True})
        if self.store is not None and self.rollbacks < self.max_rollbacks:
            loaded = self.store.load_latest(health_check=self.health_check)
            if loaded is not None:
                self.rollbacks += 1
                assert self.restore is not None
                self.restore(loaded.state)
                self.monitor.reset()
                step = getattr(loaded.info, "step", None)
                return Action(
                    "rollback",
                    f"rolled back to the snapshot of step {step}",
                    decision,
                    {"to_step": step, "rollback": self.rollbacks},
                )
        if self.restart_hook is not None and self.restarts < self.max_restarts:
            self.restarts += 1
            summary = self.summary(decision)
            self.restart_hook(summary)
            self.monitor.reset()
            return Action("restart", summary, decision, {"restart": self.restarts})
        if self.escalate_hook is not None:
            report = self.report(decision)
            self.escalate_hook(report)
            return Action("escalate", "handed to a human with the run's history", decision, report)
        return Action("terminate", decision.reason, decision, {"limit": False})

    # -- what the hooks are given ------------------------------------------------------------

    def summary(self, decision: HaltDecision) -> str:
        """The summary a restart starts from: the task, how far the run got, what went wrong
        and the distinct things the agent said last."""
        m = self.monitor
        lines = [f"Task: {safe_str(m.watch.task, 500)}" if m.watch.task else "Task: (not given)"]
        lines.append(f"Steps so far: {m.steps}. Stopped because: {decision.reason or 'a halt'}.")
        outputs = _distinct_outputs(m, 5)
        if outputs:
            lines.append("Last distinct outputs:")
            lines.extend(f"- {o}" for o in outputs)
        lines.append("Start again from this summary with a different approach.")
        return "\n".join(lines)

    def report(self, decision: HaltDecision) -> dict[str, Any]:
        """What an escalation hands over: the task, the decision and the run's history."""
        m = self.monitor
        return {
            "task": safe_str(m.watch.task, 1000),
            "steps": m.steps,
            "score": decision.score,
            "fired": list(decision.fired),
            "reason": decision.reason,
            "strikes": [f"step {d.step}: {d.reason}" for d in m.history if d.reason][
                -10:
            ],  # fmt: skip
            "outputs": _distinct_outputs(m, 10),
            "interventions": [a.kind for a in self.actions],
        }

    def _record(self, action: Action) -> None:
        if self.recorder is None:
            return
        decision = action.decision
        assert decision is not None
        message = safe_str(action.message, 1000)
        detail = {**decision_detail(decision), "message": message}
        self.recorder.record(Intervention, action=action.kind, detail=detail)
        if action.stop:
            by = f"halt monitor ({action.kind})"
            record_halt(self.recorder, decision, by, message=message, action=action.kind)


def _distinct_outputs(monitor: HaltMonitor, n: int) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for step in reversed(monitor.watch.history):
        if step.output and step.digest not in seen:
            seen.add(step.digest)
            out.append(safe_str(step.output, 300))
        if len(out) >= n:
            break
    return out[::-1]
