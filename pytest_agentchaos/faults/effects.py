"""What an injected fault does to one call, independent of the channel it hits.

A fault kind turns its resolved decision into an :class:`Effect`; each injector (Python
callables, httpx, model calls) applies the effect in its own terms: a ``Failure`` becomes
``TimeoutError`` for a Python tool and ``httpx.ReadTimeout`` on the HTTP path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Literal

FailureKind = Literal["timeout", "http", "connection", "reset", "crash", "protocol"]


@dataclass(frozen=True, slots=True)
class Failure:
    """The call fails instead of returning: a timeout, an HTTP status, a refused connection,
    a connection reset after the request went out (``reset``: a lost reply), a JSON-RPC error
    response (``protocol``: ``status`` holds its code), or (on the rebirth runner's ``step``
    channel) a crash: an unexpected exception.

    ``body`` is the body the fault was given (``None``: none was). Seams that speak a
    provider's API fill in that provider's own error body; the others use :meth:`any_body`.
    """

    kind: FailureKind
    message: str
    status: int | None = None
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    retry_after: float | None = None

    def any_body(self) -> Any:
        """The body given, else a generic one: ``{"error": <reason phrase>, "status": <code>}``
        (``"retry_after"`` in place of the status for a rate limit)."""
        if self.body is not None:
            return self.body
        status = self.status or 500
        if self.retry_after is not None:
            return {"error": reason_phrase(status), "retry_after": self.retry_after}
        return {"error": reason_phrase(status), "status": status}


def reason_phrase(status: int) -> str:
    """The standard reason phrase of an HTTP status (``"Error"`` for an unassigned code)."""
    phrase = _PHRASES.get(status)
    return phrase if phrase is not None else "Error"


_PHRASES = {int(s): s.phrase for s in HTTPStatus}


class _Unchanged:
    """The type of :data:`UNCHANGED`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNCHANGED"

    def __reduce__(self) -> str:
        return "UNCHANGED"


#: What an :attr:`Effect.reply` returns when the output gives it nothing to act on (no list
#: to cut, an output already empty): the call keeps its output, and the fault is not recorded
#: as fired.
UNCHANGED: Any = _Unchanged()


@dataclass(frozen=True, slots=True)
class Effect:
    """Applied in this order: ``delay``, ``failure``, ``args``, ``replay``, ``transform``;
    after the real call returned: ``lost``, else ``reply``.

    The faults with ``lost`` or ``reply`` act on what the real call returned, so they are
    recorded (a ``FaultInjected`` event) only once they act: a fault whose call failed by
    itself, or whose output gave it nothing to act on, did nothing and is not in the trace
    (the run's notes say so).
    """

    delay: float = 0.0
    failure: Failure | None = None
    args: Mapping[str, Any] | None = None
    replay: bool = False
    #: Which earlier output a replay returns: 1 the previous one, ``k`` the k-th most recent,
    #: 0 the first the target ever returned in the run.
    replay_age: int = 1
    transform: Callable[[Any], Any] | None = None
    #: What only a provider's wire can do to an answer (see :mod:`.wire_kinds`): a stream
    #: cut (``"cut": "reset" | "end"``), no finish event (``"no_finish": True``), tool-call
    #: arguments that are not JSON (``"bad_arguments": "truncated" | "not_json"``), an empty
    #: answer (``"empty": True``).
    wire: Mapping[str, Any] | None = None
    #: The call runs for real (its effect happens), then its reply is lost: the caller waits
    #: until ``lost_after`` seconds (virtual) after the call started, then gets this failure
    #: (``timeout`` or ``reset``) instead of the output (``lost_reply``).
    lost: Failure | None = None
    lost_after: float = 0.0
    #: What the call's successful output becomes (``empty_output``, ``error_in_body`` ...):
    #: it returns :data:`UNCHANGED` when the output gives it nothing to act on.
    reply: Callable[[Any], Any] | None = None

    @property
    def acts_after(self) -> bool:
        """Whether the fault acts on the real call's outcome (see the class doc)."""
        return self.lost is not None or self.reply is not None
