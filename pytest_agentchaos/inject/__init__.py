"""Applying fault plans to Python tools, httpx requests and model calls."""

from .chaos import Chaos
from .errors import (
    InjectedConnectionError,
    InjectedFault,
    InjectedHTTPError,
    InjectedTimeout,
)
from .model import default_tokens
from .session import CallState, ChaosSession


def __getattr__(name: str) -> object:
    if name == "ChaosRouter":  # imports httpx and respx: only on demand
        from .http import ChaosRouter

        return ChaosRouter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CallState",
    "Chaos",
    "ChaosRouter",
    "ChaosSession",
    "InjectedConnectionError",
    "InjectedFault",
    "InjectedHTTPError",
    "InjectedTimeout",
    "default_tokens",
]
