"""Exceptions that injected faults raise on the Python-tool and model channels, and into the
rebirth runner's steps (``crash``).

They subclass the built-in exceptions an agent already handles (``TimeoutError``,
``ConnectionError``, ``RuntimeError``) and carry ``injected = True`` plus the trace event that
caused them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..faults.effects import Failure
from ..trace.events import FaultInjected


class InjectedFault(Exception):
    """Base of every exception raised by an injected fault."""

    injected = True

    def __init__(self, message: str, *, fault: FaultInjected | None = None) -> None:
        super().__init__(message)
        self.fault = fault


class InjectedTimeout(InjectedFault, TimeoutError):
    """The call hung until it timed out (virtual time)."""


class InjectedConnectionError(InjectedFault, ConnectionError):
    """The connection was refused or dropped."""


class InjectedCrash(InjectedFault, RuntimeError):
    """An agent's step crashed with an unexpected error (the ``crash`` fault)."""


class InjectedHTTPError(InjectedFault):
    """The call failed with an HTTP status; ``retry_after`` is set for 429s."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        retry_after: float | None = None,
        fault: FaultInjected | None = None,
    ) -> None:
        super().__init__(message, fault=fault)
        self.status = status
        self.status_code = status
        self.body = body
        self.headers = dict(headers or {})
        self.retry_after = retry_after


def failure_exception(failure: Failure, fault: FaultInjected | None = None) -> InjectedFault:
    """The exception a Python tool or model function raises for ``failure``.

    Its traceback (Python 3.11+) carries a note naming the injected fault, so an unhandled
    one reads as "your call of this tool, failed on purpose by this fault".
    """
    exc: InjectedFault
    if failure.kind == "timeout":
        exc = InjectedTimeout(failure.message, fault=fault)
    elif failure.kind == "connection":
        exc = InjectedConnectionError(failure.message, fault=fault)
    elif failure.kind == "crash":
        exc = InjectedCrash(failure.message, fault=fault)
    else:
        exc = InjectedHTTPError(
            failure.message,
            status=failure.status or 500,
            body=failure.body,
            headers=failure.headers,
            retry_after=failure.retry_after,
            fault=fault,
        )
    if fault is not None and hasattr(exc, "add_note"):
        what = "step run" if fault.channel == "step" else "call"
        exc.add_note(
            f"injected by pytest-agentchaos: fault {fault.kind!r} (faults[{fault.fault}] of the "
            f"plan) on {what} {fault.index} of {fault.target!r}, step {fault.step}"
        )
    return exc
