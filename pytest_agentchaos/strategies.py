"""Hypothesis strategies for property tests of an agent's repair loop: ``valid_args(spec)``,
``malformed_args(spec)`` and ``Malformed``. They are test tooling and live in
:mod:`pytest_agentchaos.testing.strategies` (which needs hypothesis); this module re-exports
them on first use, so the stack never imports a test library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import exports

if TYPE_CHECKING:
    from .testing.strategies import Malformed, malformed_args, valid_args

__all__ = ["Malformed", "malformed_args", "valid_args"]

__getattr__, __dir__ = exports(
    "pytest_agentchaos.testing",
    {"Malformed": "strategies", "malformed_args": "strategies", "valid_args": "strategies"},
    globals(),
)
