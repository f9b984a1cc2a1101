"""Applying fault plans to Python tools, httpx requests and model calls.

Names load lazily: the plugin reads the network allow-list parser at start-up without loading
the injection stack (or httpx and respx, which only the HTTP router needs).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Chaos": "chaos",
    "ChaosRouter": "http",
    "CallState": "session",
    "ChaosSession": "session",
    "InjectedConnectionError": "errors",
    "InjectedFault": "errors",
    "InjectedHTTPError": "errors",
    "InjectedTimeout": "errors",
    "default_tokens": "model",
    "AllowList": "network",
    "NetworkGuard": "network",
}

__all__ = [
    "AllowList",
    "CallState",
    "Chaos",
    "ChaosRouter",
    "ChaosSession",
    "InjectedConnectionError",
    "InjectedFault",
    "InjectedHTTPError",
    "InjectedTimeout",
    "NetworkGuard",
    "default_tokens",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from .chaos import Chaos
    from .errors import (
        InjectedConnectionError,
        InjectedFault,
        InjectedHTTPError,
        InjectedTimeout,
    )
    from .http import ChaosRouter
    from .model import default_tokens
    from .network import AllowList, NetworkGuard
    from .session import CallState, ChaosSession
