"""Searching fault schedules for one that breaks the agent, with hypothesis. Free of pytest.

The search space comes from a first run: the targets the agent actually called (and how often)
and the fault kinds the profile may inject into each. Schedules are drawn in *episodes* biased
toward what breaks agents: a fault on one of the first calls, a burst on consecutive calls of
one target, a failure right after a recovery (fault, success, fault). The first schedule that
fails is shrunk (:mod:`.shrink`) to a minimal one that fails the same way.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ..faults.kinds import CallInfo
from .shrink import Schedule, Shrinker, canonical, schedule_key

if TYPE_CHECKING:
    from ..faults.plan import FaultSpec

__all__ = ["Exploration", "Option", "Outcome", "Space", "explore", "schedules", "space_of"]

#: Calls past the first run's count a schedule may still name (retries make more calls).
SLACK = 3
#: Schedules drawn per hypothesis example: hypothesis's cost per example is spread over them.
BATCH = 32
#: Draws in a row that bring no schedule not tried yet, after which the search deems the space
#: tried whole (a space of few schedules) and stops short of its budget.
STALE_DRAWS = 2_000


@dataclass(frozen=True)
class Option:
    """A fault the search may place: ``spec`` (a profile's fault) on calls of one target."""

    channel: str
    target: str
    calls: int
    spec: FaultSpec
    #: the arguments of the target's first call (a kind that corrupts arguments decides on them)
    args: Mapping[str, Any]
    #: the target's parameter schema, if it has one: a corruption is drawn only where the
    #: schema rejects it, as in an ordinary run (no "missing" key the schema does not require)
    schema: Mapping[str, Any] | None = None

    def decide(self, rng: random.Random, index: int) -> dict[str, Any] | None:
        """The spec's decision for call ``index`` of the target (``None``: it cannot apply)."""
        call = CallInfo(self.channel, self.target, index, 0.0, self.args, self.schema, True, 1_000)
        try:
            found = self.spec.kind.decide(rng, call)
        except Exception:  # noqa: BLE001 - a kind that cannot decide here is left out
            return None
        return dict(found) if found is not None else None


@dataclass(frozen=True)
class Space:
    """Where faults may go: one :class:`Option` per (target, fault) pair that applies."""

    options: tuple[Option, ...]

    def __bool__(self) -> bool:
        return bool(self.options)


def space_of(
    faults: Sequence[FaultSpec],
    calls: Mapping[tuple[str, str], int],
    args: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
    schemas: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
) -> Space:
    """The search space of a first run that made ``calls`` (per channel and target), for the
    profile's ``faults``: each fault on every target its kind, channels and ``tools`` globs
    allow (its probability and call selectors are the search's to decide)."""
    options = []
    args = args or {}
    schemas = schemas or {}
    for (channel, target), count in sorted(calls.items()):
        seen: set[str] = set()
        for spec in faults:
            if not spec.applies_to(channel) or not spec.selector.matches_target(target):
                continue
            key = repr(spec.to_dict())
            if key in seen:
                continue
            seen.add(key)
            place = (channel, target)
            option = Option(channel, target, count, spec, args.get(place, {}), schemas.get(place))
            if option.decide(random.Random(0), 1) is not None:
                options.append(option)
    return Space(tuple(options))


_SHAPES = ("single", "burst", "after_recovery")


def schedules(space: Space) -> Any:
    """A hypothesis strategy of schedules (decisions) over ``space``.

    A schedule is drawn as one *gene*, an integer hypothesis draws (small ones, boundary ones,
    the same one again ...), decoded into one to three episodes of faults (:func:`decode`).
    One draw per schedule keeps a schedule cheap: a schedule is drawn per attempt, and
    hypothesis's cost per draw would otherwise rival the attempt's own.
    """
    from hypothesis import strategies as st

    return st.integers(0, GENES).map(lambda gene: decode(space, gene))


#: The largest gene.
GENES = 2**64 - 1


def decode(space: Space, gene: int) -> Schedule:
    """The schedule of ``gene``: one to three episodes (:func:`episode`), a later one winning a
    call two of them name."""
    rng = random.Random(gene)
    placed: dict[tuple[str, str, int], dict[str, Any]] = {}
    for _ in range(rng.choice((1, 1, 2, 3))):
        for decision in episode(space, rng):
            placed[(decision["channel"], decision["target"], decision["index"])] = decision
    return canonical(list(placed.values()))


def episode(space: Space, rng: random.Random) -> list[dict[str, Any]]:
    """The faults one gene places, biased toward what breaks agents: half the episodes start
    on a target's first or second call; a third are one fault, a third a burst of 2 to 4 on
    consecutive calls, a third a failure right after a recovery (fault, a call that succeeds,
    fault again, maybe of another kind). Severities come from each fault's own ranges."""
    every = space.options
    option = every[rng.randrange(len(every))]
    top = option.calls + SLACK
    start = rng.randint(1, 2) if rng.random() < 0.5 else rng.randint(1, top)
    shape = _SHAPES[rng.randrange(len(_SHAPES))]
    if shape == "single":
        steps = [(start, option)]
    elif shape == "burst":
        steps = [(start + k, option) for k in range(rng.randint(2, 4))]
    else:
        same = [o for o in every if (o.channel, o.target) == (option.channel, option.target)]
        steps = [(start, option), (start + 2, same[rng.randrange(len(same))])]
    out = []
    for index, chosen in steps:
        detail = chosen.decide(rng, index)
        if detail is not None:
            out.append(
                {
                    "channel": chosen.channel,
                    "target": chosen.target,
                    "index": index,
                    "kind": chosen.spec.kind.name,
                    "detail": detail,
                }
            )
    return out


class Outcome(Protocol):
    """What an attempt tells the search: how it failed (``None``: it passed)."""

    @property
    def failure(self) -> Any: ...


OutcomeT = TypeVar("OutcomeT", bound=Outcome)


@dataclass(frozen=True)
class Exploration(Generic[OutcomeT]):
    """The result of a search: the first failing schedule (``None``: none in the budget), how
    it failed, its shrunk form and the run of it, and the attempts each phase made."""

    found: Schedule | None
    failure: Any
    shrunk: Schedule | None
    final: OutcomeT | None
    search_attempts: int
    shrink_attempts: int
    #: shrinking stopped at its budget before the passes settled
    exhausted: bool = False
    #: the failing schedule came from the known ones (a previous search's)
    known: bool = False

    @property
    def attempts(self) -> int:
        """All attempts: searching and shrinking."""
        return self.search_attempts + self.shrink_attempts


def explore(
    space: Space,
    attempt: Callable[[Schedule], OutcomeT],
    *,
    budget: int,
    seed: int,
    known: Sequence[Sequence[Mapping[str, Any]]] = (),
    shrink_budget: int | None = None,
    first: tuple[Schedule, OutcomeT] | None = None,
) -> Exploration[OutcomeT]:
    """Search up to ``budget`` distinct schedules (the ``known`` ones first, then hypothesis's,
    drawn under ``seed``; a schedule drawn again is not tried again, nor counted) for one whose
    attempt fails, then shrink it (up to ``shrink_budget``
    attempts, ``budget`` by default) to a minimal schedule that fails the same way.

    ``first``: a schedule already known to fail with its outcome (a first run that failed):
    no search, only shrinking.
    """
    tried: dict[str, OutcomeT] = {}
    counter = [0]

    def run(schedule: Schedule) -> OutcomeT:
        key = schedule_key(schedule)
        if key not in tried:
            counter[0] += 1
            tried[key] = attempt(canonical(schedule))
        return tried[key]

    found: tuple[Schedule, OutcomeT] | None = first
    from_known = False
    if found is None:
        for schedule in known:
            if counter[0] >= budget:
                break
            outcome = run(canonical(schedule))
            if outcome.failure is not None:
                found, from_known = (canonical(schedule), outcome), True
                break
    if found is None and space and counter[0] < budget:
        found = _search(space, run, budget - counter[0], seed, tried)
    search_attempts = counter[0]
    if found is None:
        return Exploration(None, None, None, None, search_attempts, 0)
    schedule, outcome = found
    target = outcome.failure
    before = counter[0]
    final: list[OutcomeT] = [outcome]

    def fails(candidate: Schedule) -> bool:
        result = run(candidate)
        return bool(result.failure == target)

    shrinker = Shrinker(fails, shrink_budget if shrink_budget is not None else budget)
    shrunk = shrinker.shrink(schedule)
    final_outcome = tried.get(schedule_key(shrunk.schedule), final[0])
    return Exploration(
        schedule,
        target,
        shrunk.schedule,
        final_outcome,
        search_attempts,
        counter[0] - before,
        exhausted=shrunk.exhausted,
        known=from_known,
    )


class _Found(Exception):
    pass


def _search(
    space: Space,
    run: Callable[[Schedule], OutcomeT],
    budget: int,
    seed: int,
    tried: Container[str],
) -> tuple[Schedule, OutcomeT] | None:
    """Draw schedules with hypothesis until one fails (None: none of ``budget`` did). Only a
    schedule not ``tried`` yet counts against the budget (hypothesis draws the same value
    again on purpose, and two genes may decode to one schedule); the search ends short of it
    once :data:`STALE_DRAWS` draws in a row brought nothing new."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    found: list[tuple[Schedule, OutcomeT]] = []
    count = [0, 0]  # new schedules tried, draws in a row that were not new

    def done() -> bool:
        return bool(found) or count[0] >= budget or count[1] >= STALE_DRAWS

    @settings(
        # enough examples for the budget when most draws repeat, and for the stale run
        max_examples=-(-budget // BATCH) * 8 + STALE_DRAWS // BATCH + 1,
        phases=[Phase.generate],
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        derandomize=False,
        print_blob=False,
    )
    @given(st.lists(st.integers(0, GENES), min_size=BATCH, max_size=BATCH))
    def search(genes: list[int]) -> None:
        if done():  # hypothesis replays the example that stopped it
            raise _Found
        for gene in genes:  # decoded only when tried: a batch may end past the budget
            schedule = decode(space, gene)
            if schedule_key(schedule) in tried:
                count[1] += 1
            else:
                count[0] += 1
                count[1] = 0
                outcome = run(schedule)
                if outcome.failure is not None:
                    found.append((schedule, outcome))
            if done():
                raise _Found

    search = hypothesis_seed(seed)(search)
    with contextlib.suppress(_Found):
        search()
    return found[0] if found else None
