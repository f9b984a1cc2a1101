"""Flat progress that is no stagnation: the same check that failed and now passes after a fix
(its outcome is news, not a redo), and a counter standing at the count the task gives (the
task is counted; what follows is checking). A counter flat below that count, or a call that
fails again, still strikes."""

from __future__ import annotations

from typing import Any

from pytest_agentchaos.halt import HaltMonitor


def _progress_strikes(task: str, steps: list[dict[str, Any]]) -> list[bool]:
    monitor = HaltMonitor(task=task, embedder="lexical")
    out = []
    for step in steps:
        decision = monitor.observe(**step)
        out.extend(s.strike for s in decision.signals if s.heuristic == "progress")
    return out


def _step(output: str, tool: str | None, ok: bool | None, **more: Any) -> dict[str, Any]:
    return {"output": output, "tool": tool, "ok": ok, "progress": 5, **more}


LINT = {"path": "src"}


def test_a_check_that_failed_and_passes_after_a_fix_is_no_redo() -> None:
    steps = [
        _step("Running lint on src.", "lint", False, args=LINT),
        _step("Removed the unused import from app.py.", "edit", True, args={"file": "app.py"}),
        _step("Running lint on src.", "lint", True, args=LINT),
    ]
    assert _progress_strikes("Make the lint check pass.", steps)[-1] is False


def test_a_check_that_fails_again_is_a_redo() -> None:
    steps = [
        _step("Running lint on src.", "lint", False, args=LINT),
        _step("Removed the unused import from app.py.", "edit", True, args={"file": "app.py"}),
        _step("Running lint on src.", "lint", False, args=LINT),
    ]
    assert _progress_strikes("Make the lint check pass.", steps)[-1] is True


def _talk(progress: int) -> list[dict[str, Any]]:
    # each step says something else, none of it new information: idle under the counter
    texts = [
        "Reading the guideline on refunds.",
        "Comparing my labels with the style notes.",
        "Looking over the how-to category.",
        "Thinking about the other bucket.",
        "Going through the bug reports.",
        "Reviewing the edge cases.",
    ]
    return [{"output": t, "progress": progress} for t in texts]


def test_a_counter_at_the_tasks_count_does_not_stagnate() -> None:
    assert not any(_progress_strikes("Label the 50 support snippets.", _talk(50)))


def test_a_counter_flat_below_the_tasks_count_still_stagnates() -> None:
    assert any(_progress_strikes("Label the 50 support snippets.", _talk(31)))
