"""Building and undoing one chaos run: free of pytest, used by the plugin and other harnesses.

``with build_run(settings, spec, test_id, registry) as run:`` plans the run (validating the
profile, the markers' spec and the session settings before anything is installed), installs
global time, the network guard, the HTTP router, the loop observer and the watchdog, and undoes
all of it on exit; ``run.finish(error)`` judges the run after the test body.

Names load lazily: the plugin reads markers (``harness.spec``) at start-up without loading the
rest of the stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import exports

_EXPORTS = {
    "DEFAULT_WALL_TIMEOUT": "settings",
    "SessionSettings": "settings",
    "MARKERS": "spec",
    "RunSpec": "spec",
    "parse_marks": "spec",
    "Run": "run",
    "RunOutcome": "run",
    "RunPlan": "run",
    "build_run": "run",
    "find_halt": "run",
    "plan_run": "run",
    "Unwinder": "unwind",
    "Watchdog": "watchdog",
}

__all__ = [
    "DEFAULT_WALL_TIMEOUT",
    "MARKERS",
    "Run",
    "RunOutcome",
    "RunPlan",
    "RunSpec",
    "SessionSettings",
    "Unwinder",
    "Watchdog",
    "build_run",
    "find_halt",
    "parse_marks",
    "plan_run",
]


__getattr__, __dir__ = exports(__name__, _EXPORTS, globals())


if TYPE_CHECKING:
    from .run import Run, RunOutcome, RunPlan, build_run, find_halt, plan_run
    from .settings import DEFAULT_WALL_TIMEOUT, SessionSettings
    from .spec import MARKERS, RunSpec, parse_marks
    from .unwind import Unwinder
    from .watchdog import Watchdog
