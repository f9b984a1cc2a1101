"""Re-running a test body in-process under an explicit schedule: one *attempt* of a schedule
search or of its shrinking. Free of pytest.

An attempt is a whole chaos run (:func:`.run.build_run`: virtual time, the network guard, the
watchdog, everything undone on exit) around one call of the body, judged like any run; what
it failed with is its :class:`FailureKind`, so a shrunk schedule can be held to failing *the
same way* (the same exception type, the same failing verdicts, the same hard halt).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..errors import RunClosed
from ..saferepr import safe_str
from .run import Run, build_run

if TYPE_CHECKING:
    from ..faults.plan import FaultSpec
    from ..inject.chaos import Chaos
    from ..profiles.profile import ProfileRegistry
    from ..search.explore import Exploration
    from ..trace.trace import Trace
    from .settings import SessionSettings
    from .spec import RunSpec

__all__ = [
    "Attempt",
    "FailureKind",
    "FirstRun",
    "NotRerunnable",
    "failure_of",
    "not_rerunnable",
    "run_attempt",
    "search_schedules",
]


@dataclass(frozen=True, slots=True)
class FailureKind:
    """How a run failed: by a hard ``halt`` (its type), by failing ``verdict`` s (their names)
    or by an ``error`` the body raised (its type's qualified name, and ``where``: the file
    and line it was raised at, so that a schedule failing another ``assert`` of the test is
    not "the same failure")."""

    how: str
    name: str
    where: str = ""

    def __str__(self) -> str:
        return f"{self.how} {self.name}"  # where it was raised: the explanation's traceback


def _raised_at(error: BaseException) -> str:
    """Where ``error`` was raised: the innermost frame of its traceback, as ``file:line``
    (the file's name only: the same test checked out elsewhere fails the same way)."""
    tb = error.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return f"{os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"


def _type_name(error: BaseException) -> str:
    cls = type(error)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def failure_of(run: Run, error: BaseException | None) -> tuple[FailureKind | None, str]:
    """What a finished run failed with (``None``: it passed) and the explanation a user reads."""
    outcome = run.finish(error)
    if outcome.halt is not None:
        return FailureKind("halt", type(outcome.halt).__name__), outcome.message or str(
            outcome.halt
        )
    failing = sorted(v.name for v in outcome.verdicts if not v.ok)
    if failing:
        text = outcome.message or "\n".join(v.explanation for v in outcome.verdicts if not v.ok)
        return FailureKind("verdict", ",".join(failing)), text
    if error is not None:
        detail = safe_str(error, 400).strip()
        text = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
        failure = FailureKind("error", _type_name(error), _raised_at(error))
        return failure, "\n".join([text, *outcome.notes])
    return None, ""


@dataclass(frozen=True)
class Attempt:
    """One run of the body under ``schedule`` (decisions), and how it ended."""

    schedule: tuple[Mapping[str, Any], ...]
    failure: FailureKind | None
    explanation: str
    run: Run
    error: BaseException | None

    @property
    def trace(self) -> Trace:
        """The attempt's trace."""
        return self.run.trace

    @property
    def calls(self) -> dict[tuple[str, str], int]:
        """How many calls each (channel, target) received."""
        return self.run.session.calls_seen()


def run_attempt(
    settings: SessionSettings,
    spec: RunSpec,
    test_id: str,
    registry: ProfileRegistry,
    body: Callable[[Chaos], Any],
    schedule: Sequence[Mapping[str, Any]] | None,
    *,
    interrupts: tuple[type[BaseException], ...] = (KeyboardInterrupt, SystemExit),
    keep_trace: bool = False,
) -> Attempt:
    """Run ``body(chaos)`` once under exactly ``schedule`` (other calls fault-free; ``None``:
    an ordinary run, its faults drawn from the profile) and judge it. ``interrupts``
    propagate (the run is undone first); anything else the body raises is its failure.
    ``keep_trace``: write the trace where the settings say (an attempt of a search writes
    none)."""
    if schedule is not None:
        spec = replace(spec, schedule=tuple(schedule), beyond="none", explore=None)
    if not keep_trace:
        settings = replace(settings, trace_dir=None)
    error: BaseException | None = None
    with build_run(settings, spec, test_id, registry) as run:
        try:
            body(run.chaos)
        except interrupts:
            raise
        except BaseException as exc:  # noqa: BLE001 - the body's failure is the attempt's result
            error = exc
        failure, explanation = failure_of(run, error)
    return Attempt(tuple(run.trace.schedule()), failure, explanation, run, error)


def not_rerunnable(first: Mapping[tuple[str, str], int], again: Attempt) -> str | None:
    """Why a body cannot be searched (None: it can): the attempt that replays the first run's
    own schedule called its tools on an ended run (they were wrapped once and kept), or made
    other calls than the first run did, or failed where it passed."""
    error = again.error
    while error is not None and not isinstance(error, RunClosed):
        error = error.__context__
    if isinstance(again.error, RunClosed) or error is not None:
        return f"its tools were wrapped by a run that has ended (kept {_KEPT}?); {_WRAP}"
    if first and not again.calls:
        return (
            "a second run of its body made none of the calls the first made: its tools were "
            f"wrapped once and kept ({_KEPT}?) or it keeps state between runs; {_WRAP}"
        )
    if dict(first) != again.calls:
        return (
            f"a second run of its body with the same faults made other calls ({_calls(first)} "
            f"the first time, {_calls(again.calls)} the second): it keeps state between runs"
        )
    if again.failure is not None:
        return (
            f"a second run of its body with the same faults failed ({again.failure}) where "
            "the first passed: it keeps state between runs"
        )
    return None


_KEPT = "in a global, or by a fixture of a wider scope than function"
_WRAP = (
    "wrap them in the test body or in a function-scoped fixture, with the chaos fixture it is "
    "given (each run of the body gets its function-scoped fixtures afresh)"
)


def _calls(counts: Mapping[tuple[str, str], int]) -> str:
    return ", ".join(f"{t} x{n}" for (_, t), n in sorted(counts.items())) or "no calls"


class NotRerunnable(Exception):
    """The body cannot be searched: running it again does not run the same way."""


@dataclass(frozen=True)
class FirstRun:
    """What a search learns from a test's first (ordinary) run."""

    failure: FailureKind | None
    #: the fault decisions the run made
    schedule: tuple[Mapping[str, Any], ...]
    #: how many calls each (channel, target) received
    calls: Mapping[tuple[str, str], int]
    #: each target's first arguments
    args: Mapping[tuple[str, str], Any]
    #: the faults the search may place (the test's and its profile's)
    faults: tuple[FaultSpec, ...]
    seed: int
    #: each target's parameter schema, where it has one (corruptions are drawn on it)
    schemas: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, run: Run, error: BaseException | None, faults: Sequence[FaultSpec]) -> FirstRun:
        """The first run ``run`` (finished, or finished now with ``error``)."""
        from ..search.shrink import canonical
        from ..trace.events import ToolCall

        failure, _ = failure_of(run, error)
        args: dict[tuple[str, str], Any] = {}
        for event in run.trace:
            if isinstance(event, ToolCall) and event.index == 1:
                args.setdefault((event.channel, event.tool), event.args)
        return cls(
            failure,
            canonical(run.trace.schedule()),
            run.session.calls_seen(),
            args,
            tuple(faults),
            run.plan.seed,
            run.session.schemas_seen(),
        )


def search_schedules(
    first: FirstRun,
    attempt: Callable[[Sequence[Mapping[str, Any]]], Attempt],
    *,
    budget: int,
    known: Sequence[Sequence[Mapping[str, Any]]] = (),
) -> Exploration[Attempt] | None:
    """Search and shrink from a first run (see :func:`..search.explore.explore`).

    A first run that failed with faults is shrunk (after one attempt checks that its schedule
    fails the same way again); one that passed is replayed once (the re-runnability check),
    then schedules are searched. ``None``: a first run that failed without any fault (nothing
    to shrink). Raises :class:`NotRerunnable` with the reason.
    """
    from ..search.explore import explore, space_of

    if first.failure is not None:
        if not first.schedule:
            return None
        again = attempt(first.schedule)
        if again.failure != first.failure:
            otherwise = again.failure or "it passed"
            reason = not_rerunnable(first.calls, again) or (
                f"a second run with the same faults failed otherwise ({otherwise}, not "
                f"{first.failure})"
            )
            raise NotRerunnable(reason)
        exploration = explore(
            space_of((), {}), attempt, budget=budget, seed=first.seed, first=(first.schedule, again)
        )
        return replace(exploration, search_attempts=1)
    again = attempt(first.schedule)
    why = not_rerunnable(first.calls, again)
    if why is not None:
        raise NotRerunnable(why)
    exploration = explore(
        space_of(first.faults, first.calls, first.args, first.schemas),
        attempt,
        budget=budget,
        seed=first.seed,
        known=known,
    )
    return replace(exploration, search_attempts=exploration.search_attempts + 1)
