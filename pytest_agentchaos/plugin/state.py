"""Per-config and per-test plugin state, kept in pytest stashes (no module globals)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..profiles.profile import Profile, ProfileRegistry
from .markers import TestChaos

if TYPE_CHECKING:
    from ..inject.chaos import Chaos
    from ..verdicts.verdict import Verdict


@dataclass
class PluginState:
    """What the whole session shares: the seed, the profiles and the summary rows."""

    seed: int
    registry: ProfileRegistry
    default_profile: str
    profile_option: str | None
    freeze_time: bool
    virtual_sleep: bool
    trace_dir: Path | None
    rows: list[dict[str, Any]] = field(default_factory=list)

    def profile(self, name: str) -> Profile:
        return self.registry.get(name)


@dataclass
class RunState:
    """One chaos test in progress: its run, its verdicts and how to replay it."""

    chaos: Chaos
    spec: TestChaos
    replay: str
    verdicts: list[Verdict] = field(default_factory=list)


STATE = pytest.StashKey[PluginState]()
SPEC = pytest.StashKey["TestChaos | None"]()
RUN = pytest.StashKey[RunState]()

__all__ = ["RUN", "SPEC", "STATE", "PluginState", "RunState"]
