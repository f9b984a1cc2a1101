"""``PhoenixRunner``: run an agent step by step; when it crashes, loops or stagnates, destroy
its scratch state and bring it back from its latest healthy snapshot (the Phoenix pattern).

The agent is any object with ``step(n)`` (one step of work; returns a :class:`StepReport` or
just its output), ``to_state()`` and ``from_state(state)`` (JSON data, see :mod:`.state`),
and optionally ``reset()`` (its self-destruct: caches, scratch memory). The runner:

- snapshots at the start, every ``interval`` steps and at every milestone the agent marks;
- watches each step: an exception (not a :class:`~pytest_agentchaos.errors.HardHalt`) is a
  crash; the escape stack's :class:`~pytest_agentchaos.escape.loops.LoopDetector` over the
  step's output and reported state finds logical loops; progress the agent reports that
  stops rising for ``stagnation_rounds`` steps is stagnation (a step reporting none is
  unknown, not zero);
- on trouble: ``reset()``, a backoff on the run's clock, then ``from_state`` of the newest
  snapshot that loads and passes the health check (corrupt ones skipped, with why); when
  none does, a soft reset to the state the agent started with. A reborn agent that falls
  into the same trouble within ``relapse_steps`` marks its snapshot bad, so the next rebirth
  goes one further back (multi-version rollback);
- after ``max_rebirths``, escalates: the ``escalate`` callback, else
  :class:`RebirthsExhausted` (a hard halt an agent cannot swallow).

Side effects: the agent makes its external calls through :meth:`PhoenixRunner.effect` with an
idempotency key. A key already done returns the recorded result without calling again, so a
step replayed after a rebirth does not charge a card twice; a key started but never finished
(the crash came mid-call) is first asked of the ``reconcile`` hook.

Every decision is an event in the trace: ``Detection`` (detector ``phoenix``) for the trouble,
``Intervention`` for ``rebirth``, ``soft_reset``, ``escalate``, each ``effect`` and the run's
``outcome``; the store records the ``Snapshot`` events.

In a chaos run (:meth:`PhoenixRunner.for_run`) the run's fault plan reaches the runner: before
each step it may ``crash`` (an ``InjectedCrash`` the runner treats as the agent's crash), before
each load it may ``corrupt_snapshot`` the newest snapshot (which the load then skips), and
``RebirthsExhausted`` stops the run as every hard halt does. Outside one nothing is injected.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..clock.clock import Clock, RealClock
from ..errors import HardHalt
from ..escape.history import ActionKey, digest
from ..escape.loops import LoopDetector, LoopPolicy
from ..escape.recorder import Recorder
from ..saferepr import safe_str
from ..trace.events import Detection, Intervention
from .injection import FaultSource, corrupt_before_load, crash_before_step
from .policy import PhoenixPolicy

__all__ = [
    "PhoenixAgent",
    "PhoenixOutcome",
    "PhoenixRunner",
    "RebirthsExhausted",
    "StepReport",
    "Trouble",
]


class PhoenixAgent(Protocol):
    """What :class:`PhoenixRunner` drives (``reset()`` is optional)."""

    def step(self, step: int) -> Any: ...

    def to_state(self) -> Any: ...

    def from_state(self, state: Any) -> None: ...


@dataclass(frozen=True)
class StepReport:
    """What one step tells the runner: its ``output`` (what the loop detector keys),
    ``progress`` (a number that rises with real work; ``None``: not reported), ``state`` (a
    summary of where the agent is, for the detector's state rule), ``done`` (the goal is
    reached), ``milestone`` (snapshot now and keep it)."""

    output: Any = None
    progress: float | None = None
    state: Any = None
    done: bool = False
    milestone: bool = False
    label: str | None = None


@dataclass(frozen=True)
class Trouble:
    """Why the agent was reborn: ``crash``, ``loop`` or ``stagnation``, at which step."""

    kind: str
    step: int
    reason: str


@dataclass(frozen=True)
class PhoenixOutcome:
    """How a run ended: ``done`` (the agent reached its goal), the step it reached,
    the steps run in all (replays included), its rebirths and each trouble."""

    done: bool
    step: int
    steps_run: int
    rebirths: int
    troubles: tuple[Trouble, ...] = ()
    escalated: bool = False
    reason: str = ""


class RebirthsExhausted(HardHalt):
    """The agent kept failing after ``max_rebirths`` rebirths, and no escalation callback was
    given."""

    reason = "max_rebirths"


class _NullRecorder:
    def record(self, cls: Any, **fields: Any) -> Any:
        return None


@dataclass
class _Effect:
    done: bool = False
    result: Any = None


@dataclass
class _Rebirth:
    kind: str
    at: int  # steps_run when it happened
    info: Any  # the snapshot restored (None for a soft reset)


class PhoenixRunner:
    """Runs ``agent`` with rebirth from ``store`` (see the module's doc)."""

    def __init__(
        self,
        agent: PhoenixAgent,
        store: Any,
        *,
        policy: PhoenixPolicy | None = None,
        loops: LoopPolicy | None = None,
        clock: Clock | None = None,
        recorder: Recorder | None = None,
        health_check: Callable[[Any], bool] | None = None,
        escalate: Callable[[dict[str, Any]], Any] | None = None,
        reconcile: Callable[[str], tuple[bool, Any]] | None = None,
        name: str | None = None,
        session: FaultSource | None = None,
    ) -> None:
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"name must be a non-empty str, got {safe_str(repr(name), 80)}")
        self.agent = agent
        #: The runner's name: the target of the faults of its ``step`` and ``snapshot`` channels.
        self.name = name if name is not None else type(agent).__name__
        #: The chaos run's session (``for_run`` sets it): its fault plan and hard halts.
        self.session = session
        self.store = store
        self.policy = policy or PhoenixPolicy()
        self.loop_policy = loops or LoopPolicy()
        self.clock = clock or RealClock()
        self.recorder: Recorder = recorder if recorder is not None else _NullRecorder()
        self.health_check = health_check
        self.escalate_hook = escalate
        self.reconcile = reconcile
        self.rebirths = 0
        self.troubles: list[Trouble] = []
        self._effects: dict[str, _Effect] = {}
        self._last: _Rebirth | None = None
        self._steps_run = 0
        self._fresh()

    @classmethod
    def for_run(cls, run: Any, agent: PhoenixAgent, store: Any, **kwargs: Any) -> PhoenixRunner:
        """A runner wired to a chaos run: its virtual clock, its trace, its fault plan (``crash``
        and ``corrupt_snapshot``), its hard halts and the profile's ``[phoenix]`` policy (give
        the store the same recorder: ``run.session``)."""
        if "policy" not in kwargs:
            profile = run.profile
            kwargs["policy"] = profile.policy("phoenix") if profile is not None else PhoenixPolicy()
        return cls(
            agent, store, clock=run.clock, recorder=run.session, session=run.session, **kwargs
        )

    # -- the run ---------------------------------------------------------------------------

    def run(self, max_steps: int = 1000) -> PhoenixOutcome:
        """Step the agent until it reports ``done`` or ``max_steps`` steps have run (replays
        after a rebirth count); returns how it ended."""
        if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
            raise ValueError(f"max_steps must be an int >= 1, got {max_steps!r}")
        self._initial = self.agent.to_state()
        step = 0
        self.store.save(self._initial, step=0, label="start")
        while self._steps_run < max_steps:
            step += 1
            self._steps_run += 1
            trouble: Trouble | None = None
            report = StepReport()
            try:
                if self.session is not None:
                    crash_before_step(self.session, self.name, step)
                report = _as_report(self.agent.step(step))
            except HardHalt:
                raise
            except Exception as exc:
                trouble = Trouble("crash", step, f"{type(exc).__name__}: {safe_str(exc, 200)}")
            if trouble is None:
                if report.done:
                    self.store.save(self.agent.to_state(), step=step, label="done", milestone=True)
                    return self._outcome(True, step, "the agent reached its goal")
                trouble = self._watch(report, step)
            if trouble is not None:
                restored = self._rebirth(trouble)
                if restored is None:
                    return self._outcome(False, step, "escalated", escalated=True)
                step = restored
                continue
            if report.milestone or step % self.policy.interval == 0:
                label = report.label or ("milestone" if report.milestone else None)
                self.store.save(
                    self.agent.to_state(), step=step, label=label, milestone=report.milestone
                )
        return self._outcome(False, step, f"max_steps ({max_steps}) ran out")

    def _outcome(
        self, done: bool, step: int, reason: str, escalated: bool = False
    ) -> PhoenixOutcome:
        outcome = PhoenixOutcome(
            done, step, self._steps_run, self.rebirths, tuple(self.troubles), escalated, reason
        )
        detail = {
            "runner": safe_str(self.name, 120),
            "done": done,
            "step": step,
            "steps_run": self._steps_run,
            "rebirths": self.rebirths,
            "escalated": escalated,
            "reason": reason,
        }
        self.recorder.record(Intervention, action="outcome", detail=detail)
        return outcome

    # -- watching ----------------------------------------------------------------------------

    def _fresh(self) -> None:
        self._detector = LoopDetector(self.loop_policy)
        self._best: float | None = None
        self._flat = 0

    def _watch(self, report: StepReport, step: int) -> Trouble | None:
        key = ActionKey(tool="phoenix.step", outcome="ok", digest=_digest(report.output))
        state = None if report.state is None else _digest(report.state)
        for loop in self._detector.observe(key, step, self.clock.now(), state=state):
            if loop.new:
                return Trouble("loop", step, loop.describe())
        progress = report.progress
        if progress is None or self.policy.stagnation_rounds == 0:
            return None  # unknown progress is not zero progress
        if self._best is None or progress > self._best:
            self._best, self._flat = progress, 0
            return None
        self._flat += 1
        if self._flat >= self.policy.stagnation_rounds:
            return Trouble(
                "stagnation",
                step,
                f"progress has not risen above {self._best} for {self._flat} steps",
            )
        return None

    # -- rebirth -----------------------------------------------------------------------------

    def _rebirth(self, trouble: Trouble) -> int | None:
        """Reborn at the step it returns; None when the run escalated instead."""
        self.troubles.append(trouble)
        detail = {"step": trouble.step, "reason": trouble.reason}
        self.recorder.record(Detection, detector="phoenix", kind=trouble.kind, detail=detail)
        self.rebirths += 1
        if self.rebirths > self.policy.max_rebirths:
            self._escalate(trouble)
            return None
        last = self._last
        if (
            last is not None
            and last.info is not None
            and last.kind == trouble.kind
            and self._steps_run - last.at <= self.policy.relapse_steps
        ):
            self.store.mark_bad(last.info)  # the same trouble soon after: go further back
        reset = getattr(self.agent, "reset", None)
        if callable(reset):
            reset()
        waited = self.policy.wait(self.rebirths)
        if waited > 0:
            self.clock.sleep(waited)
        if self.session is not None:
            corrupt_before_load(self.session, self.name, self.store)
        loaded = self.store.load_latest(health_check=self.health_check)
        passed = loaded.skipped if loaded is not None else getattr(self.store, "last_skipped", ())
        skipped = [
            {"snapshot": safe_str(getattr(getattr(s, "info", None), "file", "?"), 120),
             "step": _step_of(getattr(s, "info", None)),
             "reason": safe_str(getattr(s, "reason", ""), 200)}
            for s in passed
        ]  # fmt: skip
        if loaded is None:
            self.agent.from_state(self._initial)
            step, info = 0, None
            self.recorder.record(Intervention, action="soft_reset", detail={"skipped": skipped})
        else:
            self.agent.from_state(loaded.state)
            step, info = int(loaded.info.step), loaded.info
        self._last = _Rebirth(trouble.kind, self._steps_run, info)
        self._fresh()
        self.recorder.record(
            Intervention,
            action="rebirth",
            detail={
                "trigger": trouble.kind,
                "reason": trouble.reason,
                "from_step": trouble.step,
                "to_step": step,
                "snapshot": None if info is None else safe_str(getattr(info, "file", info), 120),
                "skipped": skipped,
                "rebirth": self.rebirths,
                "waited": waited,
            },
        )
        return step

    def _escalate(self, trouble: Trouble) -> None:
        detail = {
            "rebirths": self.rebirths - 1,
            "max_rebirths": self.policy.max_rebirths,
            "troubles": [f"{t.kind} at step {t.step}: {t.reason}" for t in self.troubles],
        }
        self.recorder.record(Intervention, action="escalate", detail=detail)
        if self.escalate_hook is None:
            halt = RebirthsExhausted(
                f"the agent kept failing after {self.policy.max_rebirths} rebirths "
                f"(last: {trouble.kind} at step {trouble.step}: {trouble.reason})",
                **detail,
            )
            if self.session is not None:  # the run stays halted, even if the halt is caught
                self.session.stop(halt, **detail)
            raise halt
        self.escalate_hook(detail)

    # -- side effects ------------------------------------------------------------------------

    def effect(self, key: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call ``fn(*args, **kwargs)`` once per idempotency ``key`` across rebirths: a key
        already done returns its recorded result without calling ``fn``; a key started but
        never finished (``fn`` raised: it may have happened) is asked of the ``reconcile`` hook
        (``(True, result)``: it happened). A call an injected fault failed (an exception with
        ``injected = True``: the chaos harness fails calls before they run) did not happen."""
        if not isinstance(key, str) or not key:
            raise ValueError(f"an effect's idempotency key must be a non-empty str, got {key!r}")
        entry = self._effects.get(key)
        if entry is not None and entry.done:
            self._record_effect(key, ran=False, why="done before a rebirth: not run again")
            return entry.result
        if entry is not None and self.reconcile is not None:
            happened, result = self.reconcile(key)
            if happened:
                self._effects[key] = _Effect(True, result)
                self._record_effect(key, ran=False, why="reconciled: it had happened")
                return result
        self._effects[key] = _Effect()
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            error = f"{type(exc).__name__}: {safe_str(exc, 200)}"
            if getattr(exc, "injected", False) is True:
                del self._effects[key]
                self._record_effect(key, ran=False, why=f"failed before it ran: {error}")
            else:
                self._record_effect(key, ran=True, why=f"raised {error}: it may have happened")
            raise
        self._effects[key] = _Effect(True, result)
        self._record_effect(key, ran=True, why="run")
        return result

    def _record_effect(self, key: str, ran: bool, why: str) -> None:
        self.recorder.record(
            Intervention,
            action="effect",
            detail={"key": safe_str(key, 200), "ran": ran, "why": why},
        )


def _as_report(value: Any) -> StepReport:
    if isinstance(value, StepReport):
        return value
    if isinstance(value, Mapping) and value.keys() <= _REPORT_KEYS and "output" in value:
        return StepReport(**value)
    return StepReport(output=value)


_REPORT_KEYS = frozenset(StepReport.__dataclass_fields__)


def _digest(value: Any) -> str:
    """The loop detector's digest of any value (its safe ``repr`` when it is no JSON data)."""
    try:
        return digest(value)
    except Exception:
        return digest(safe_str(value, 10_000))


def _step_of(info: Any) -> int | None:
    """The step a skipped snapshot was taken at (``None``: unknown)."""
    step = getattr(info, "step", None)
    return step if isinstance(step, int) and not isinstance(step, bool) else None
