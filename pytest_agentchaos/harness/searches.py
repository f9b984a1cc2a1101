"""One test's searches, driven from its first run: the schedule search with shrinking
(``--chaos-explore``) and the bisection of a breaking point (``--chaos-breaking-point``).
Free of pytest: the body is any re-runnable callable (the plugin's is ``plugin.body``).

Both re-run the body in-process, each run a whole chaos run (:func:`.rerun.run_attempt`), after
the test's own run is closed (runs cannot overlap). A body that does not run the same way twice
raises :class:`.rerun.NotRerunnable` with the reason.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .rerun import Attempt, FirstRun, run_attempt, search_schedules

if TYPE_CHECKING:
    from ..faults.plan import FaultSpec
    from ..inject.chaos import Chaos
    from ..profiles.profile import ProfileRegistry
    from ..search.breaking import BreakingPoint, Target
    from ..search.explore import Exploration
    from .run import Run
    from .settings import SessionSettings
    from .spec import RunSpec

__all__ = ["Body", "Found", "bisect_test", "known_schedules", "search_test"]


class Body(Protocol):
    """A test body that can run again: ``body(chaos)`` runs it once with that run's chaos;
    ``start()`` (once, before the first re-run) undoes what the test's own run set up;
    ``interrupts`` are what propagate out of a run as they are."""

    interrupts: tuple[type[BaseException], ...]

    def __call__(self, chaos: Chaos) -> object: ...

    def start(self) -> None: ...


@dataclass(frozen=True)
class Found:
    """What a search found: the shrunk ``schedule`` (decisions), the run of it (``final``, its
    trace kept), the search's counts, and whether the test's own run had failed already."""

    schedule: tuple[Mapping[str, Any], ...]
    final: Attempt
    exploration: Exploration[Attempt]
    own_run_failed: bool
    seed: int
    profile: str

    def write(self, path: Path, test_id: str) -> Path:
        """Write the schedule file (see :func:`..search.schedule.write_schedule_file`)."""
        from ..search.schedule import write_schedule_file

        return write_schedule_file(
            path,
            test=test_id,
            schedule=self.schedule,
            seed=self.seed,
            profile=self.profile,
            failure={"kind": str(self.exploration.failure), "explanation": self.final.explanation},
        )

    def message(self, where: str, path: Path, replay: str) -> str:
        """What the test fails with: how the schedule was found and shrunk, the shrunk run's
        explanation, the marker to paste and the schedule file with its replay command."""
        from ..search.schedule import marker_line

        exploration, final = self.exploration, self.final
        found = len(exploration.found or ())
        if self.own_run_failed:
            head = f"its run failed ({exploration.failure}) with {found} fault(s)"
        else:
            source = "a previous search's schedule" if exploration.known else "a schedule"
            head = (
                f"{source} of {found} fault(s) failed ({exploration.failure}) after "
                f"{exploration.search_attempts} attempt(s)"
            )
        lines = [
            f"{where}: {head}; shrunk to {len(self.schedule)} fault(s) in "
            f"{exploration.shrink_attempts} more attempt(s)"
            + (" (stopped at the budget)" if exploration.exhausted else ""),
            final.explanation or "(the shrunk schedule fails without an explanation)",
        ]
        if not self.schedule:
            lines.append(
                "it fails the same way with no fault at all: if its assertions name the faults "
                "it declares, any other schedule breaks them, not the agent; "
                "chaos(explore=False) keeps it out of searches"
            )
        if final.failure != exploration.failure:
            lines.append(
                f"note: run again, the shrunk schedule failed otherwise ({final.failure}): the "
                "body does not run the same way twice"
            )
        lines += [
            "pin it as a regression test:",
            marker_line(self.schedule, seed=self.seed),
            f"schedule file: {path} (replay: {replay})",
        ]
        return "\n".join(lines)


def search_test(
    settings: SessionSettings,
    spec: RunSpec,
    test_id: str,
    registry: ProfileRegistry,
    body: Body,
    run: Run,
    error: BaseException | None,
    *,
    budget: int,
    known: Sequence[Sequence[Mapping[str, Any]]] = (),
) -> Found | None:
    """Search up to ``budget`` schedules for one that fails the test's body, from its own run
    ``run`` (which ended with ``error``; it is closed here), and shrink the first that fails
    (a failing own run: its own faults). ``None``: nothing failed, or the own run failed
    without a fault. Decisions of the shrunk schedule that never fired are dropped (its run
    is the same without them). Raises :class:`.rerun.NotRerunnable`."""
    spec = dataclasses.replace(spec, seed=run.plan.seed, profile=run.plan.profile.name)
    first = FirstRun.of(run, error, (*spec.faults, *run.plan.profile.faults))
    run.close()  # the attempts need the process: runs cannot overlap

    def attempt(schedule: Sequence[Mapping[str, Any]] | None, keep_trace: bool = False) -> Attempt:
        return run_attempt(
            settings, spec, test_id, registry, body, schedule,
            interrupts=body.interrupts, keep_trace=keep_trace,
        )  # fmt: skip

    body.start()
    exploration = search_schedules(first, attempt, budget=budget, known=known)
    shrunk = exploration.shrunk if exploration is not None else None
    if exploration is None or shrunk is None:
        return None
    final = attempt(shrunk, keep_trace=True)
    fired = _fired(shrunk, final)
    if len(fired) < len(shrunk):
        again = attempt(fired, keep_trace=True)
        if again.failure == final.failure:
            shrunk, final = fired, again
    return Found(
        tuple(shrunk), final, exploration, first.failure is not None, spec.seed or 0,
        spec.profile or "none",
    )  # fmt: skip


def known_schedules(path: Path, test_id: str) -> list[tuple[Mapping[str, Any], ...]]:
    """The schedule a previous search kept for ``test_id`` in the schedule file at ``path``
    (none when there is none, or it is unreadable or another test's): tried first."""
    from ..errors import ChaosConfigError
    from ..search.schedule import read_schedule_file

    if not path.is_file():
        return []
    with contextlib.suppress(ChaosConfigError):
        found = read_schedule_file(path)
        if found.get("test") == test_id:
            return [tuple(found.decisions)]
    return []


def _fired(
    schedule: Sequence[Mapping[str, Any]], attempt: Attempt
) -> tuple[Mapping[str, Any], ...]:
    """The decisions of ``schedule`` that fired in ``attempt``'s run."""
    seen = {
        (d.get("channel", "tool"), d["target"], int(d["index"])) for d in attempt.trace.schedule()
    }
    return tuple(
        d for d in schedule if (d.get("channel", "tool"), d["target"], int(d["index"])) in seen
    )


def bisect_test(
    settings: SessionSettings,
    spec: RunSpec,
    test_id: str,
    registry: ProfileRegistry,
    body: Body,
    run: Run,
    target: Target,
    *,
    runs: int,
) -> BreakingPoint:
    """Bisect ``target`` (one severity parameter of the test's faults) over fresh runs of the
    body, ``runs`` seeds at each value probed, from the test's own run ``run`` (closed here).
    Raises :class:`.rerun.NotRerunnable`."""
    from ..rng import derive_seed
    from ..search.breaking import Probe, bisect, vary

    profile = run.plan.profile
    faults = (*spec.faults, *profile.faults)
    seed = run.plan.seed
    run.close()  # the probes need the process: runs cannot overlap

    def probe(value: float) -> Probe:
        varied_registry: Any = _Varied(registry, vary(faults, target, value))
        passed = 0
        for k in range(runs):
            varied = dataclasses.replace(
                spec,
                faults=(),
                profile=profile.name,
                seed=derive_seed(seed, f"breaking-{k}"),
                explore=None,
                schedule=None,  # a pinned schedule would leave no fault to vary
                beyond="none",
            )
            attempt = run_attempt(
                settings, varied, test_id, varied_registry, body, None, interrupts=body.interrupts
            )
            passed += attempt.failure is None
        return Probe(value, passed, runs)

    min_rate = spec.min_pass_rate if spec.min_pass_rate is not None else 1.0
    body.start()
    return bisect(target, probe, min_pass_rate=min_rate)


class _Varied:
    """A profile registry whose profiles carry ``faults`` instead of their own (the probes of
    a breaking point vary one parameter of them)."""

    def __init__(self, registry: Any, faults: tuple[FaultSpec, ...]) -> None:
        self._registry = registry
        self._faults = faults

    def get(self, name: str) -> Any:
        return dataclasses.replace(self._registry.get(name), faults=self._faults)

    def path(self, name: str) -> Any:
        return self._registry.path(name)
