"""What the halt monitor's step-by-step tests share: running steps through a monitor with the
lexical embedder, and writing a step."""

from __future__ import annotations

from typing import Any

from pytest_agentchaos.halt import HaltMonitor

__all__ = ["halt_at", "say"]


def halt_at(steps: list[dict[str, Any]], task: str = "") -> int | None:
    """The step at which a fresh monitor for ``task`` halts ``steps``, or None."""
    monitor = HaltMonitor(task=task, embedder="lexical")
    for step in steps:
        if monitor.observe(**step).halt:
            return monitor.decision.step
    return None


def say(output: Any, tool: str | None = None, ok: bool | None = None, **more: Any) -> dict:
    """One step's keyword arguments for ``HaltMonitor.observe``."""
    return {"output": output, "tool": tool, "ok": ok, **more}
