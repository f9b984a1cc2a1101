"""Per-config and per-test plugin state, kept in pytest stashes (no module globals)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from ..harness.auto import AutoTally
from ..profiles.profile import ProfileRegistry

if TYPE_CHECKING:
    from ..harness.run import Run  # noqa: F401 - named in a StashKey below
    from ..harness.settings import SessionSettings
    from ..harness.spec import RunSpec  # noqa: F401 - named in a StashKey below
    from ..inject.chaos import Chaos  # noqa: F401 - named in a StashKey below


@dataclass
class PluginState:
    """What the whole session shares: its settings, the profiles and the summary rows."""

    settings: SessionSettings
    registry: ProfileRegistry
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: the baseline's cases, read at the start (``--chaos-baseline``)
    baseline: dict[str, dict[str, Any]] | None = None
    #: the tests whose run is set up and not yet reported, by node id (torn down at the
    #: session's end if an interruption skipped their teardown)
    live: dict[str, pytest.Item] = field(default_factory=dict)
    #: where this session's report went when it replays part of the recording in its report
    #: dir (``harness.replay.ReplayPlace``); ``placed``: decided (after collection)
    replay_place: Any = None
    placed: bool = False
    #: ``--chaos-runs=auto:MAX``: each case's judged runs and the decisions that stop them
    auto: AutoTally = field(default_factory=AutoTally)


STATE = pytest.StashKey[PluginState]()
SPEC = pytest.StashKey["RunSpec | None"]()
RUN = pytest.StashKey["Run"]()
#: the call phase's outcome, for the summary row written at teardown
CALL_OUTCOME = pytest.StashKey[str]()
#: while a re-run of a test's body sets its fixtures up (``plugin.body``): the ``Chaos`` of
#: that re-run's own run, which the ``agentchaos`` fixture gives instead of building one
ATTEMPT = pytest.StashKey["Chaos"]()
#: the name of the parameter that carries a chaos test's variant (its run, its profile)
VARIANT = "_agentchaos_variant"

__all__ = [
    "ATTEMPT",
    "CALL_OUTCOME",
    "RUN",
    "SPEC",
    "STATE",
    "VARIANT",
    "PluginState",
    "cwd_relative",
    "variant_of",
]


def cwd_relative(config: pytest.Config, nodeid: str) -> str:
    """The node id as the user can pass it from where pytest was run (ids are rootdir-relative)."""
    invoked = config.invocation_params.dir
    if invoked == config.rootpath:
        return nodeid
    path, sep, rest = nodeid.partition("::")
    return os.path.relpath(config.rootpath / path, invoked) + sep + rest


def variant_of(item: pytest.Item) -> Any:
    """The variant (run, profile) a parametrized chaos test item is; None: not one."""
    callspec = getattr(item, "callspec", None)
    return callspec.params.get(VARIANT) if callspec is not None else None
