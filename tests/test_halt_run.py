"""The halt monitor on a chaos run: it reads the model's outputs and the tools' results from
the run's trace, and writes its strikes and its decision back into it."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from pytest_agentchaos import Chaos, ProfileRegistry
from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.halt import HaltMonitor, HaltPolicy
from pytest_agentchaos.trace import Detection, Halt


def test_a_spiralling_model_is_halted_from_the_trace_and_the_trace_says_why() -> None:
    answers = iter(["Let me check the order status."] + ["The order is still pending."] * 20)
    with Chaos.create(ProfileRegistry.default().get("none"), seed=1) as chaos:
        model = chaos.model(lambda prompt: next(answers))
        monitor = HaltMonitor.for_run(chaos, task="Find out why order 1234 is late",
                                      embedder="lexical")  # fmt: skip
        steps = 0
        while not monitor.decision.halt and steps < 20:
            model("what now?")
            steps += 1
    assert steps == 4  # the third time the same answer: halted by the agent's own monitor
    (halt,) = chaos.trace.of_type(Halt)
    assert not halt.hard and halt.detail["by"] == "halt_monitor"
    assert "repetition" in halt.detail["fired"] and "repeats step" in halt.reason
    kinds = {d.kind for d in chaos.trace.of_type(Detection) if d.detector == "halt"}
    assert "repetition" in kinds


def test_tool_results_are_steps_too() -> None:
    def deploy(env: str) -> str:
        raise PermissionError("403 Forbidden: token lacks scope deploy")

    with Chaos.create(ProfileRegistry.default().get("none"), seed=1) as chaos:
        tool = chaos.wrap(deploy)
        monitor = HaltMonitor.for_run(chaos, task="Deploy to staging", embedder="lexical")
        for _ in range(6):
            with contextlib.suppress(PermissionError):
                tool("staging")
            if monitor.decision.halt:
                break
    assert monitor.decision.halt and monitor.decision.fired[0] == "tool_failure"
    assert len(chaos.trace.of_type(Halt)) == 1


def test_the_profiles_halt_table_is_the_monitors_policy(tmp_path: Path) -> None:
    (tmp_path / "patient.toml").write_text("[halt]\nstrikes = 5\n[halt.weights]\ndrift = 0.5\n")
    (tmp_path / "bad.toml").write_text("[halt]\nstrikes = 0\n")
    registry = ProfileRegistry([tmp_path])
    assert registry.get("patient").policy("halt") == HaltPolicy(strikes=5, weights={"drift": 0.5})
    with pytest.raises(ChaosConfigError, match=r"bad.toml: \[halt\]: strikes: must be >= 1"):
        registry.get("bad")
    with Chaos.create(registry.get("patient"), seed=1) as chaos:
        assert HaltMonitor.for_run(chaos, embedder="lexical").policy.strikes == 5


def _poll(chaos, monitor, waits: bool) -> None:
    """A job poller whose calls time out now and then; it retries, waiting (or not)."""
    model = chaos.model(lambda p: f"The export job exp-7 is at {p}; checking again.")
    status = chaos.wrap(lambda pct: f"exp-7 still running, {pct}% done.", name="job_status")
    for pct in (10, 20, 30, 40, 50, 60):
        for call, arg in ((model, f"{pct}%"), (status, pct)):
            for _ in range(8):
                try:
                    call(arg)
                    break
                except TimeoutError:
                    if waits:
                        chaos.clock.sleep(2.0)
        if monitor.decision.halt:
            return


def test_retried_timeouts_of_a_progressing_poll_are_no_spiral(make_chaos) -> None:
    # four model timeouts and three tool timeouts in a row, each retried after a wait: the
    # failed calls said nothing (no repetition, no drift, no news lost), and a transient
    # error retried after a wait counts every other time
    chaos = make_chaos(
        {"kind": "timeout", "channels": ["model"], "nth": [2, 3, 4, 5]},
        {"kind": "timeout", "tools": ["job_status"], "nth": [2, 3, 4]},
    )
    monitor = HaltMonitor.for_run(chaos, task="Run the export job exp-7", embedder="lexical")
    _poll(chaos, monitor, waits=True)
    assert not monitor.decision.halt, monitor.decision.reason
    fired = {name for d in monitor.history for name in d.fired}
    assert not fired & {"repetition", "drift", "novelty"}


def test_a_transient_error_hammered_without_a_wait_is_a_streak() -> None:
    monitor = HaltMonitor(task="Search for the book", embedder="lexical")
    for _ in range(3):
        d = monitor.observe("", tool="web_search", ok=False, error="HTTP 429 Too Many Requests")
    assert d.halt and d.fired == ("tool_failure",)


def test_a_transient_error_retried_after_waits_counts_every_other_time() -> None:
    def failures_to_halt(error: str) -> int:
        monitor = HaltMonitor(task="Search for the book", embedder="lexical")
        for n in range(1, 20):
            if monitor.observe("", tool="web_search", ok=False, error=error, seconds=5).halt:
                return n
        return 0

    assert failures_to_halt("HTTP 503 Service Unavailable") == 6
    assert failures_to_halt("file not found: books.csv") == 3  # persistent: each counts


def _import_pages(chaos, monitor, pages: int) -> None:
    """An importer whose model call times out now and then; each timeout is retried after a
    wait, and each answer imports the next page."""
    model = chaos.model(lambda p: f"Page {p} is in; importing page {int(p) + 1}.")
    page = chaos.wrap(lambda n: f"Imported page {n} of {pages}: 50 rows.", name="import_page")
    for n in range(1, pages + 1):
        while True:
            try:
                model(str(n))
                break
            except TimeoutError:
                chaos.clock.sleep(2.0)
        page(n)
        if monitor.decision.halt:
            return


def test_model_timeouts_between_its_answers_are_no_streak(make_chaos) -> None:
    # seven timeouts in twelve pages, never more than two in a row: the model works between
    # them, which ends the streak (the same as a tool that works again)
    chaos = make_chaos({"kind": "timeout", "channels": ["model"], "nth": [2, 3, 5, 6, 8, 10, 11]})
    monitor = HaltMonitor.for_run(chaos, task="Import every page", embedder="lexical")
    _import_pages(chaos, monitor, 12)
    assert chaos.trace.of_type(Halt) == [], monitor.decision.reason


def test_model_timeouts_in_a_row_are_a_streak(make_chaos) -> None:
    chaos = make_chaos({"kind": "timeout", "channels": ["model"], "nth": list(range(2, 12))})
    monitor = HaltMonitor.for_run(chaos, task="Import every page", embedder="lexical")
    _import_pages(chaos, monitor, 12)
    (halt,) = chaos.trace.of_type(Halt)
    assert halt.detail["fired"] == ["tool_failure"] and "model:model" in halt.reason
