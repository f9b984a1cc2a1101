"""The time an agent has waited, logged in its state (issue 29, loops): ``waited_s``,
``wait_seconds``, ``waiting_time`` rise on every report by themselves, as a clock does. A state
that stands still but for them (and a poll counter) while the same status check comes back
is looping; a field that counts work (``processed``) is still work."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_agentchaos.escape.field_names import _volatile_field

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loop_alarms import alarms  # noqa: E402


@pytest.mark.parametrize("name", ["waited_s", "wait_seconds", "waitingTime", "waited_ms"])
def test_the_time_waited_is_a_clock(name: str) -> None:
    assert _volatile_field(name)


@pytest.mark.parametrize("name", ["wait", "waiting", "processed", "wait_queue", "seconds"])
def test_other_names_are_not(name: str) -> None:
    assert not _volatile_field(name)


def test_a_state_that_stands_still_but_for_the_time_waited_is_a_loop() -> None:
    actions: list[dict[str, Any]] = []
    for n in range(1, 6):
        actions.append({"tool": "check", "args": {"change": "CHG-1"}, "result": "pending"})
        actions.append({"state": {"phase": "waiting", "polls": n, "waited_s": 60 * n}})
    assert alarms(actions)
