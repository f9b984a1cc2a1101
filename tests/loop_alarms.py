"""The loop alarms the harness raises on a hand-written run: the helper the loop tests share."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from bench_loop_corpus import harness  # noqa: E402
from loop_corpus import Case, to_events  # noqa: E402


def alarms(actions: list[dict[str, Any]]) -> list[int]:
    """The actions at which the harness's detection raises a loop alarm."""
    case = Case("t", "t.json", "hand-written", "", (), False, (), tuple(actions))
    events, owner = to_events(case)
    return [owner[i] for i, kind in harness(events) if kind == "loop" and 0 <= i < len(owner)]
