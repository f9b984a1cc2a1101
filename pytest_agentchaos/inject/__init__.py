"""Applying fault plans to Python tools, httpx requests and model calls.

Names load lazily: the plugin reads the network allow-list parser at start-up without loading
the injection stack (or httpx and respx, which only the HTTP router needs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import exports

_EXPORTS = {
    "Chaos": "chaos",
    "ChaosRouter": "http",
    "CallState": "call",
    "ChaosSession": "session",
    "InjectedConnectionError": "errors",
    "InjectedConnectionReset": "errors",
    "InjectedCrash": "errors",
    "InjectedFault": "errors",
    "InjectedHTTPError": "errors",
    "InjectedProtocolError": "errors",
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
    "InjectedConnectionReset",
    "InjectedCrash",
    "InjectedFault",
    "InjectedHTTPError",
    "InjectedProtocolError",
    "InjectedTimeout",
    "NetworkGuard",
    "default_tokens",
]


__getattr__, __dir__ = exports(__name__, _EXPORTS, globals())


if TYPE_CHECKING:
    from .call import CallState
    from .chaos import Chaos
    from .errors import (
        InjectedConnectionError,
        InjectedConnectionReset,
        InjectedCrash,
        InjectedFault,
        InjectedHTTPError,
        InjectedProtocolError,
        InjectedTimeout,
    )
    from .http import ChaosRouter
    from .model import default_tokens
    from .network import AllowList, NetworkGuard
    from .session import ChaosSession
