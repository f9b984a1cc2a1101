"""The variants a chaos test runs as: under K seeds (``--chaos-runs=K``, ``chaos(runs=K)``:
pass^k) and under each profile of a matrix (``--chaos-profile=a,b``). Each variant is its own
test, its id showing the profile and the seed; free of pytest.

A run's seed derives from the session seed, the test function and the run number, so the
same session seed gives the same ids and seeds in every process (pytest-xdist workers too)
and a run replays with ``--chaos-seed``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..rng import stable_int
from .settings import SessionSettings
from .spec import RunSpec

__all__ = ["Variant", "case_id", "run_seed", "variants"]


@dataclass(frozen=True)
class Variant:
    """One run of a test: the matrix's ``profile`` (None: the test's own), the ``run`` number
    with its ``seed`` (None: a single run, seeded from its node id as usual) and the ``id``
    pytest shows."""

    profile: str | None
    run: int | None
    seed: int | None
    id: str
    #: how many runs the test function has (its ``runs=`` or ``--chaos-runs``)
    runs: int = 1
    #: ``--chaos-runs=auto:MAX``: the runs after the pass rate is decided are skipped
    auto: bool = False

    def apply(self, spec: RunSpec) -> RunSpec:
        """``spec`` for this variant: its profile and seed."""
        if self.profile is not None:
            spec = replace(spec, profile=self.profile)
        if self.run is not None:
            spec = replace(spec, seed=self.seed, run=self.run)
        return spec


def run_seed(session_seed: int, function_id: str, run: int) -> int:
    """The seed of run ``run`` (1-based) of the test function ``function_id``."""
    return stable_int("agentchaos-run", session_seed, function_id, run, bits=32)


def _distinct_seeds(session_seed: int, function_id: str, runs: int) -> dict[int, int]:
    """Each run's seed, a repeat drawn again (32-bit seeds collide now and then: two runs of
    one seed would test the same thing twice, under ids pytest renames)."""
    seeds: dict[int, int] = {}
    taken: set[int] = set()
    for run in range(1, runs + 1):
        seed, draw = run_seed(session_seed, function_id, run), 0
        while seed in taken:
            draw += 1
            seed = stable_int("agentchaos-run", session_seed, function_id, run, draw, bits=32)
        seeds[run] = seed
        taken.add(seed)
    return seeds


def variants(spec: RunSpec | None, settings: SessionSettings, function_id: str) -> list[Variant]:
    """The variants of a chaos test function (empty: it runs once, as it is). A test that
    pins its profile stays out of the matrix; one that pins its seed runs once."""
    runs = spec.runs if spec is not None and spec.runs is not None else settings.runs
    auto = settings.auto_runs and (spec is None or spec.runs is None) and runs > 1
    if spec is not None and spec.seed is not None:
        runs = 1
    pinned = spec is not None and spec.profile is not None
    profiles: list[str | None] = (
        list(settings.profiles) if len(settings.profiles) > 1 and not pinned else [None]
    )
    if runs == 1 and profiles == [None]:
        return []
    seeds = _distinct_seeds(settings.seed, function_id, runs) if runs > 1 else {}
    found = []
    for profile in profiles:
        for run in range(1, runs + 1) if runs > 1 else [None]:
            seed = seeds[run] if run is not None else None
            parts = [p for p in (profile, None if seed is None else f"seed{seed}") if p]
            found.append(Variant(profile, run, seed, "-".join(parts), runs, auto))
    return found


def case_id(node_id: str, variant_id: str) -> str:
    """The node id without the variant's part of its parameter id: the test case whose runs
    are judged together (``t.py::test[flaky-seed12]`` -> ``t.py::test``; the test's own
    parameters stay: ``t.py::test[a-seed12]`` -> ``t.py::test[a]``)."""
    head, sep, params = node_id.rpartition("::")
    name, bracket, ids = params.partition("[")
    if not bracket or not ids.endswith("]"):
        return node_id
    parts = ids[:-1]
    if parts == variant_id:
        kept = ""
    elif parts.startswith(variant_id + "-"):  # where the plugin's parametrize puts it
        kept = parts[len(variant_id) + 1 :]
    elif parts.endswith("-" + variant_id):
        kept = parts[: -len(variant_id) - 1]
    else:
        kept = parts.replace("-" + variant_id + "-", "-", 1)
    return f"{head}{sep}{name}" + (f"[{kept}]" if kept else "")
