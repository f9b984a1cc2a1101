"""Applying fault plans to Python tools, httpx requests and model calls."""

from .chaos import Chaos
from .errors import (
    InjectedConnectionError,
    InjectedFault,
    InjectedHTTPError,
    InjectedTimeout,
)
from .http import ChaosRouter
from .model import default_tokens
from .session import CallState, ChaosSession

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
