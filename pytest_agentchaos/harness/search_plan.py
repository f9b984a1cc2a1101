"""What a schedule search does with one chaos test, decided from plain values: how many
schedules to search (and why none), the command that re-runs a found schedule, and what a
pinned schedule whose faults did not all fire says."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .settings import SessionSettings
    from .spec import RunSpec

__all__ = ["schedule_replay", "search_budget", "unfired_message"]


def search_budget(
    spec: RunSpec | None, session: int | None, *, expected_to_fail: bool
) -> tuple[int | None, str | None]:
    """How many schedules to search for a test (None: none) given its marks' ``spec`` and the
    session's ``--chaos-explore`` budget, and why not when it is not searched though a search
    was asked for (None: nothing to say)."""
    own = spec.explore if spec is not None else None
    asked = bool(own or session)
    if own is False:
        return None, "its chaos marker says explore=False" if session else None
    if spec is not None and spec.schedule is not None:
        return None, "its schedule is pinned (schedule=...)" if asked else None
    if expected_to_fail:
        return None, "it is marked xfail (its failure is expected)" if asked else None
    return own or session, None


def schedule_replay(test_id: str, settings: SessionSettings, path: str) -> str:
    """The command that runs ``test_id`` under the schedule file at ``path``: the session's own
    replay command (its seed, profile option and ``--chaos-runs``, which the ids of a test's
    runs need) with ``--chaos-schedule``, spelled with the session's option prefix."""
    from ..report.terminal import replay_command

    command = replay_command(test_id, settings.seed, settings.profile_option, settings.runs)
    command += f" --chaos-schedule={shlex.quote(path)}"
    return command.replace(" --chaos-", " " + settings.flag_prefix)


def unfired_message(node_id: str, missed: Sequence[str], pinned: int) -> str:
    """Why a test whose pinned schedule (of ``pinned`` faults) left ``missed`` unfired fails:
    a regression test whose faults never fire tests nothing."""
    return (
        f"{node_id}: {len(missed)} of the {pinned} faults its schedule "
        f"pins never fired: {'; '.join(missed)}; a regression test whose faults do not "
        "fire tests nothing: fix the schedule or the test"
    )
