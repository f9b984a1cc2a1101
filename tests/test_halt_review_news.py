"""Review regressions of the news rules (issue 29, halt): an agent's own progress toward a
total ("chapter 4/12") is news when nothing names it a loop's counter, and a failure that brings
a wholly new message each step is no repeat: neither may halt a healthy agent."""

from __future__ import annotations

from pytest_agentchaos.halt.monitor import HaltMonitor


def test_progress_toward_a_total_is_news_without_a_loop_word() -> None:
    for steps, task in (
        ([f"Translated chapter {i}/12 and saved it." for i in range(1, 9)], "translate the book"),
        ([f"Upload {i}/12 done." for i in range(1, 9)], "upload the files"),
    ):
        monitor = HaltMonitor(task=task, embedder="lexical")
        assert not any(monitor.observe(step).halt for step in steps), steps[0]


def test_failures_with_a_new_message_each_step_are_not_halted_as_repeats() -> None:
    errors = [
        "permission denied", "disk quota exceeded", "read only file system",
        "device or resource busy", "stale file handle", "operation not permitted",
    ]  # fmt: skip
    monitor = HaltMonitor(task="free up the mount", embedder="lexical")
    for n, error in enumerate(errors):
        decision = monitor.observe(
            f'mount failed: "{error}"', tool="mount", ok=False, args={"opt": n},
            error=f'mount: "{error}"',
        )  # fmt: skip
        assert not decision.halt, (n, error)
