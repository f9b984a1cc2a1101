"""Which code is the runtime's, not the agent's: pytest, its plugins, this package and the
standard library's concurrency machinery.

The harness never raises a halt into runtime frames (``harness/unwind.py``) and virtual sleep
leaves the runtime's own ``sleep`` real (``clock/patch.py``): both ask :func:`is_runtime`.
"""

from __future__ import annotations

__all__ = ["RUNTIME", "is_runtime"]

#: Top-level packages and modules of the runtime.
RUNTIME = frozenset(
    {
        # pytest and the plugins that run tests
        "_pytest",
        "pytest",
        "pluggy",
        "pytest_asyncio",
        "xdist",
        "execnet",
        "anyio",
        "trio",
        "sniffio",
        "coverage",
        # this package, and the library it freezes time with
        "pytest_agentchaos",
        "freezegun",
        # the standard library that schedules, runs and waits for code
        "asyncio",
        "concurrent",
        "threading",
        "selectors",
        "contextlib",
        "queue",
        "multiprocessing",
        "subprocess",
        "runpy",
    }
)


def is_runtime(module: str) -> bool:
    """Whether the module named ``module`` (dotted) is part of the runtime."""
    return module.partition(".")[0] in RUNTIME
