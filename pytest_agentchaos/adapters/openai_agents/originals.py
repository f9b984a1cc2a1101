"""The original a chaos wrapper (tool, model, handoff, agent clone) stands for."""

from __future__ import annotations

from typing import Any

#: The attribute of a wrapped tool, model, handoff or agent clone that holds its original.
ORIGINAL = "__chaos_original__"


def _original(obj: Any) -> Any:
    """The object a chaos wrapper (tool, model, handoff, agent clone) stands for, or ``obj``."""
    found = getattr(obj, "__dict__", {}).get(ORIGINAL)
    return obj if found is None else found
