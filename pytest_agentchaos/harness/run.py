"""One chaos run, from session settings, a test's markers and its node id; free of pytest.

:func:`build_run` first *plans* the run (:func:`plan_run`: the profile with its stack tables,
seeds, budgets, allowed hosts, timeouts, the trace file), validating everything, and only then
installs what the run needs, each piece undone on exit whatever happened (a failing test, a
failing install, a Ctrl-C): global time, the network guard, the HTTP router, the loop observer,
the watchdog. :meth:`Run.finish` ends the run after the test body and judges it.
"""

from __future__ import annotations

import random
import re
import shlex
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..adapters.caps import record_cap
from ..config import fail
from ..errors import HaltSwallowed, HardHalt, WallTimeout
from ..inject.chaos import Chaos
from ..inject.lazy_router import arm as arm_router
from ..inject.network import AllowList, NetworkGuard, parse_allow_hosts
from ..patching import sweep
from ..profiles.budgets import Budgets
from ..profiles.profile import Profile, ProfileRegistry
from ..report.explain import halt_explanation, swallowed_note
from ..report.terminal import replay_command
from ..rng import derive_seed
from ..saferepr import safe_repr, safe_str
from ..trace.events import Detection
from ..verdicts.judge import Expectations, judge
from ..verdicts.verdict import Verdict
from .cause import error_detail, status_of_error
from .replay import Divergence, Recorded
from .settings import SessionSettings
from .spec import RunSpec
from .unwind import Unwinder, caller_outside_runtime
from .watchdog import Watchdog, is_agent_thread, is_library_thread

if TYPE_CHECKING:
    from ..errors import NetworkBlocked
    from ..escape.loops import LoopPolicy
    from ..inject.session import ChaosSession
    from ..trace.trace import Trace

__all__ = ["HARNESS", "Run", "RunOutcome", "RunPlan", "build_run", "find_halt", "plan_run"]

#: The ``detector`` name of the harness's own ``Detection`` events.
HARNESS = "harness"


@dataclass(frozen=True)
class RunPlan:
    """Everything one run needs, validated; nothing installed yet."""

    test_id: str
    profile: Profile
    seed: int
    budgets: Budgets
    freeze_time: bool
    virtual_sleep: bool
    allow: AllowList
    wall_timeout: float
    max_value: int
    expectations: Expectations
    replay: str
    loops: LoopPolicy | None = None
    trace_path: Path | None = None
    #: the recorded run this one replays (``--chaos-replay``)
    recorded: Recorded | None = None


def plan_run(
    settings: SessionSettings,
    spec: RunSpec,
    test_id: str,
    registry: ProfileRegistry,
    *,
    replay_id: str | None = None,
    recorded: Recorded | None = None,
) -> RunPlan:
    """Validate and resolve one run (``recorded``: the run it replays, whose profile, seed,
    budgets and fault decisions it takes); raises ``ChaosConfigError`` naming what is wrong."""
    if recorded is not None:
        spec = replace(spec, profile=recorded.profile, seed=recorded.seed)
        if registry.path(recorded.profile) is None:  # gone since: its stacks' tables too
            spec = replace(spec, profile="none")
    profile = registry.get(spec.profile or settings.default_profile)
    seed = spec.seed if spec.seed is not None else derive_seed(settings.seed, test_id)
    budgets = profile.budgets.override(spec.budgets)
    if spec.halt is not None:
        budgets = budgets.tighten(spec.halt)
    if recorded is not None:  # exactly the recorded limits: none the profile gained since
        budgets = recorded.budgets if recorded.budgets is not None else Budgets()
        profile = replace(profile, budgets=Budgets())
    virtual_sleep = settings.virtual_sleep if spec.virtual_sleep is None else spec.virtual_sleep
    freeze = settings.freeze_time if spec.freeze_time is None else spec.freeze_time
    hosts = settings.allow_hosts if spec.allow_hosts is None else spec.allow_hosts
    allow = parse_allow_hosts(list(hosts), "allow_hosts")
    wall = settings.wall_timeout if spec.wall_timeout is None else spec.wall_timeout
    loops = profile.policy("escape").loops if spec.escape is not None else None
    replay = replay_command(
        replay_id or test_id, settings.seed, settings.profile_option, settings.runs
    )
    if recorded is not None:
        replay = (
            f"pytest {shlex.quote(replay_id or test_id)} "
            f"--chaos-replay={shlex.quote(str(recorded.source))}"
        )
    elif spec.seed is not None and spec.run is None:
        replay += f"  # test seed pinned to {spec.seed} by @pytest.mark.chaos"
    replay = replay.replace(" --chaos-", " " + settings.flag_prefix)
    expectations = Expectations(
        halt=(
            {**spec.halt.as_dict(), **(spec.halt_rules or {})} if spec.halt is not None else None
        ),
        escape=spec.escape,
        repair=spec.repair,
        recover=spec.recover,
        retry=spec.retry,
        duplicate=spec.duplicate,
        follow=spec.follow,
    )
    trace_path = (
        settings.trace_dir / f"{safe_file_name(test_id)}.json"
        if settings.trace_dir is not None
        else None
    )
    return RunPlan(
        test_id=test_id,
        profile=profile,
        seed=seed,
        budgets=budgets,
        freeze_time=freeze or virtual_sleep,  # virtual sleeps must show in time readings
        virtual_sleep=virtual_sleep,
        allow=allow,
        wall_timeout=wall,
        max_value=settings.trace_max_value,
        expectations=expectations,
        replay=replay,
        loops=loops,
        trace_path=trace_path,
        recorded=recorded,
    )


def safe_file_name(test_id: str) -> str:
    """A file name for a node id: readable, and unique (ids differing in punctuation too)."""
    import hashlib

    readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", test_id).strip("_")[:160] or "test"
    return f"{readable}-{hashlib.blake2b(test_id.encode(), digest_size=4).hexdigest()}"


def find_halt(error: BaseException | None) -> HardHalt | None:
    """The hard halt that ``error`` is or carries in an exception group (asyncio's
    ``TaskGroup`` wraps what its tasks raise), if any."""
    stack = [error] if error is not None else []
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, HardHalt):
            return current
        group = getattr(current, "exceptions", None)
        if isinstance(group, (tuple, list)) and isinstance(current, BaseException):
            stack.extend(reversed([e for e in group if isinstance(e, BaseException)]))
    return None


@dataclass(frozen=True)
class RunOutcome:
    """How a finished run is judged.

    ``message`` is set when the harness fails the test itself (a hard halt, swallowed or not;
    a failing verdict); ``notes`` are what the failure section adds when the message did not
    say it (the test failed by its own error).
    """

    verdicts: tuple[Verdict, ...]
    halt: HardHalt | None
    message: str | None
    notes: tuple[str, ...] = ()


@dataclass
class Run:
    """One chaos test in progress: its :class:`Chaos`, plan and how it ended."""

    chaos: Chaos
    plan: RunPlan
    unwinder: Unwinder
    watchdog: Watchdog | None = None
    outcome: RunOutcome | None = None
    threads_left: list[str] = field(default_factory=list)
    #: a replay's watch on its calls, and where it diverged from the recorded run
    replaying: Divergence | None = None
    divergence: str | None = None
    _closed: bool = False
    _stack: ExitStack | None = None

    @property
    def session(self) -> ChaosSession:
        """The chaos session that counts, injects and records this run's calls."""
        return self.chaos.session

    @property
    def trace(self) -> Trace:
        """The run's trace."""
        return self.chaos.trace

    @property
    def replay(self) -> str:
        """The pytest command that replays this run (same test, session seed and profile)."""
        return self.plan.replay

    @property
    def divergence_note(self) -> str | None:
        """What a replay that made other calls than its recorded run says of it."""
        if self.divergence is None or self.plan.recorded is None:
            return None
        return f"the replay diverged from {self.plan.recorded.source}: {self.divergence}"

    @property
    def closed(self) -> bool:
        """Whether the run has been torn down (set as :func:`build_run` exits)."""
        return self._closed

    def finish(
        self, error: BaseException | None = None, *, status: str | None = None
    ) -> RunOutcome:
        """The test body is over (``error`` is what it raised): end the run and judge it.
        ``status`` overrides the ``RunEnded`` status the error gives (``interrupted``: the
        session was stopped before the test's own end reached the run)."""
        if self.outcome is not None:
            return self.outcome
        if self.watchdog is not None:
            self.watchdog.stop()
        self.unwinder.disarm()
        session = self.session
        halt = find_halt(error)
        if status is not None:
            pass
        elif halt is not None:
            status = "halted"
        elif error is None:
            status = None
        elif record_cap(session, error) is not None:
            status = "halted"  # a framework's own cap (recursion_limit, max_turns) hit
        else:
            status = status_of_error(error)
        if self.replaying is not None:
            self.divergence = self.replaying.finish()
            if self.divergence is not None:
                session.trace.meta["replay_diverged"] = self.divergence
        if error is not None:
            session.end(status, error=error_detail(error))
        else:
            session.end(status)
        verdicts = tuple(judge(self.trace, self.plan.expectations))
        self.outcome = self._outcome(error, halt, verdicts)
        return self.outcome

    def _outcome(
        self, error: BaseException | None, halt: HardHalt | None, verdicts: tuple[Verdict, ...]
    ) -> RunOutcome:
        failing = [v.explanation for v in verdicts if not v.ok]
        stopped = self.session.halted
        the_halt = halt or stopped
        halt_text: list[str] = []
        if the_halt is not None:
            # A failing verdict already names the halt; a watchdog's stacks are shown anyway.
            if not failing or isinstance(the_halt, WallTimeout):
                halt_text.append(halt_explanation(self.trace, the_halt))
            elif isinstance(the_halt, HaltSwallowed):
                halt_text.append(swallowed_note(the_halt.halt, unwound=True))
            if halt is None and stopped is not None:
                halt_text.append(swallowed_note(stopped, unwound=False))
        if halt is not None or error is None:
            parts = failing + halt_text
            return RunOutcome(verdicts, halt, "\n".join(parts) if parts else None)
        # The test failed by its own error: the section shows what it did not say.
        return RunOutcome(verdicts, None, None, tuple(failing + halt_text))

    def unmatched_faults(self) -> list[str]:
        """Faults that name tools (not every tool) yet matched none of this run's calls on
        their channels, though there were such calls: a typo in a glob, or a tool the agent
        never called. Described for the summary."""
        plan = self.session.plan
        seen = self.session.calls_seen()
        notes = []
        if self.plan.recorded is None:  # a replay says where it diverged instead
            for channel, target, index, kind in plan.unreached(seen):
                made = seen.get((channel, target), 0)
                notes.append(
                    f"schedule: call {index} of {safe_repr(target, 60)} ({kind}) never came: "
                    + (f"the run made {made} such call(s)" if made else f"no {channel} call "
                       f"of {safe_repr(target, 60)} was made")
                )  # fmt: skip
        for i in plan.unmatched():
            spec = plan.faults[i]
            if spec.selector.tools == ("*",):
                continue
            calls = sorted({t for c, t in seen if spec.applies_to(c)})
            if not calls:
                continue
            shown = ", ".join(safe_repr(t, 60) for t in calls[:12])
            more = f" and {len(calls) - 12} more" if len(calls) > 12 else ""
            notes.append(
                f"fault #{i} ({spec.kind.name}, tools={list(spec.selector.tools)}) matched none "
                f"of the calls: {shown}{more}"
            )
        return notes

    def close(self) -> None:
        """Tear the run down now (what leaving :func:`build_run` does; idempotent): for a
        caller whose own teardown was cut short (a Ctrl-C in a fixture's teardown)."""
        stack = self._stack
        if stack is not None:
            self._stack = None
            stack.close()

    def _close(self) -> None:
        self._closed = True


@contextmanager
def build_run(
    settings: SessionSettings,
    spec: RunSpec,
    test_id: str,
    registry: ProfileRegistry,
    *,
    replay_id: str | None = None,
    last_resort: Callable[[str], None] | None = None,
    recorded: Recorded | None = None,
) -> Iterator[Run]:
    """Plan, install and (on exit, whatever happened) undo one chaos run (``recorded``: the
    run it replays, see :mod:`.replay`).

    Raises ``ChaosConfigError`` before installing anything when the run is misconfigured.
    """
    plan = plan_run(settings, spec, test_id, registry, replay_id=replay_id, recorded=recorded)
    sweep()  # names an earlier run left to a fixture torn down after it (see patching)
    baseline = {t.ident for t in threading.enumerate()}
    with ExitStack() as stack:
        stack.callback(_claim(test_id))
        chaos = Chaos.create(
            plan.profile,
            seed=plan.seed,
            faults=spec.faults,
            budgets=plan.budgets,
            test_id=test_id,
            freeze_time=plan.freeze_time,
            virtual_sleep=plan.virtual_sleep,
            allow_hosts=plan.allow,
            max_value=plan.max_value,
            schedule=recorded.schedule if recorded is not None else spec.schedule,
            schedule_beyond="none" if recorded is not None else spec.beyond,
        )
        stack.callback(chaos.close)
        # The agent's own randomness (an SDK's retry jitter, a framework's ids) draws from
        # the test's seed, so a run and its replay see the same waits in the same order.
        stack.callback(random.setstate, random.getstate())
        random.seed(derive_seed(plan.seed, "random"))
        session = chaos.session
        session.trace.meta["session_seed"] = settings.seed
        if settings.profile_option is not None:
            session.trace.meta["profile_option"] = settings.profile_option
        if settings.runs > 1:
            session.trace.meta["runs"] = settings.runs
        owner = caller_outside_runtime(sys._getframe(1))
        # Unwinding ends with the test body (finish) or, at the latest, with the run.
        run = Run(
            chaos,
            plan,
            Unwinder(lambda: run.outcome is not None or run.closed, id(owner) if owner else None),
        )
        del owner
        run._stack = stack
        if plan.trace_path is not None:
            stack.callback(_write_trace, run, plan.trace_path)
        stack.callback(_threads_left, run, baseline)
        stack.callback(run._close)
        session.on_swallow = run.unwinder.arm
        if recorded is not None:
            session.trace.meta["replay_of"] = str(recorded.source)
            run.replaying = Divergence(recorded, session.trace.subscribe)
        if plan.loops is not None:
            from ..escape.observer import LoopObserver

            stack.callback(LoopObserver.watch(session.trace, plan.loops)[1])

        def refuse(target: str, via: str) -> NetworkBlocked:
            from ..errors import NetworkBlocked

            halt = NetworkBlocked(
                f"pytest-agentchaos: blocked a real network connection to {target} ({via}): "
                "a chaos test may not reach the network; declare the request on chaos.http, or "
                "allow the host with @pytest.mark.chaos(allow_hosts=[...]) or ini "
                "chaos_allow_hosts"
            )
            session.stop(halt, target=target, via=via)
            return halt

        if not plan.allow.any:
            guard = NetworkGuard(plan.allow, refuse)
            stack.callback(guard.uninstall)  # first: an install that fails midway is undone
            guard.install()
        arm_router(chaos)  # httpx goes through the run's router, imported now or later
        stack.callback(_quiet_thread_halts(session))
        if plan.wall_timeout > 0:
            run.watchdog = Watchdog(
                session, run.unwinder, plan.wall_timeout, last_resort=last_resort
            )
            stack.callback(run.watchdog.stop)
            run.watchdog.start()
        stack.callback(run.finish)  # ends the run if the caller did not
        try:
            yield run
        except BaseException as exc:
            run.finish(exc)
            raise


#: The run whose patches are installed. Process-wide on purpose: what a run patches (time,
#: sockets, the thread excepthook, a signal handler) is process-wide, so runs cannot overlap.
_ACTIVE: list[str] = []
_ACTIVE_LOCK = threading.Lock()


def _claim(test_id: str) -> Callable[[], None]:
    """Mark ``test_id``'s run as the process's active one; returns the release."""
    with _ACTIVE_LOCK:
        if _ACTIVE:
            raise fail(
                test_id,
                f"another chaos run is active in this process ({_ACTIVE[0]}): a run patches "
                "time, sockets and signal handlers process-wide, so runs cannot overlap",
            )
        _ACTIVE.append(test_id)

    def release() -> None:
        with _ACTIVE_LOCK:
            if test_id in _ACTIVE:
                _ACTIVE.remove(test_id)

    return release


def _quiet_thread_halts(session: ChaosSession) -> Callable[[], None]:
    """While the run lasts, an agent thread that a hard halt ended is recorded in the trace
    instead of printed as an unhandled thread exception (the halt is the harness's doing and
    the test's failure says so); other thread exceptions go to the previous hook. Returns the
    undo."""
    previous = threading.excepthook

    def hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is not None and issubclass(args.exc_type, HardHalt):
            name = args.thread.name if args.thread is not None else "?"
            session.record(
                Detection,
                detector=HARNESS,
                kind="thread_halted",
                detail={"thread": safe_str(name, 80), "halt": args.exc_type.__name__},
            )
            return
        previous(args)

    threading.excepthook = hook

    def undo() -> None:
        if threading.excepthook is hook:
            threading.excepthook = previous

    return undo


def _write_trace(run: Run, path: Path) -> None:
    try:
        run.trace.write(path, indent=1)
    except OSError as exc:
        raise fail("--chaos-trace-dir", f"cannot write {path}: {exc.strerror or exc}") from None


def _threads_left(run: Run, baseline: set[int | None]) -> None:
    left = [
        t
        for t in threading.enumerate()
        if t.ident not in baseline and is_agent_thread(t) and not is_library_thread(t)
    ]
    run.threads_left = [f"{safe_str(t.name, 60)}{' (daemon)' if t.daemon else ''}" for t in left]
    if run.threads_left:
        run.trace.meta["threads_left"] = list(run.threads_left)
