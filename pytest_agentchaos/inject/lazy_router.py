"""The run's HTTP router, started by the run's first httpx request instead of at every run's
start.

A started respx router patches httpcore's transports with its mock machinery, which costs
about a millisecond per run, most runs never send a request, and a run must still answer
every request its agent sends through httpx (a request no route declares is refused by the
router with its URL, not only by the socket guard). So a run puts light trampolines on the
very methods respx patches; the first request that reaches one starts the router
(``chaos.http``) and goes on through it, exactly as if it had been started with the run.
Declaring a route on ``chaos.http`` starts it too (the trampolines below it then pass
straight on to the real transport).
"""

from __future__ import annotations

import pkgutil
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..patching import Patches

if TYPE_CHECKING:
    from .chaos import Chaos

__all__ = ["arm"]

#: (class, method name, is a coroutine function) of each method respx's httpcore mocker
#: patches, resolved once per process
_TARGETS: list[tuple[type, str, bool]] = []


def _targets() -> list[tuple[type, str, bool]]:
    """The methods to put trampolines on; empty when they are not the ``(self, request)``
    methods respx expects (another httpcore): the router then starts with the run."""
    if not _TARGETS:
        import inspect

        from respx.mocks import HTTPCoreMocker  # httpx and httpcore load with it

        found = []
        for target in HTTPCoreMocker.targets:
            try:
                cls = pkgutil.resolve_name(target)
            except (ImportError, AttributeError):  # pragma: no cover - another httpcore
                continue
            for name in HTTPCoreMocker.target_methods:
                method = getattr(cls, name, None)
                if method is None:
                    continue
                if inspect.getfullargspec(method).args != ["self", "request"]:
                    return []  # pragma: no cover - another httpcore
                found.append((cls, name, inspect.iscoroutinefunction(method)))
        _TARGETS[:] = found
    return _TARGETS


def arm(chaos: Chaos) -> None:
    """Start ``chaos``'s router on the first httpx request of the run (its session's close
    undoes the trampolines, after the router has stopped)."""
    if "httpx2" in sys.modules:  # its transports go through the router too (see wire)
        from .wire import intercept_httpx2

        intercept_httpx2(chaos)
    targets = _targets()
    if not targets:  # pragma: no cover - another httpcore: start it now
        chaos.http  # noqa: B018
        return
    patches = Patches()
    lock = threading.Lock()

    def start() -> None:
        with lock:
            patches.undo()  # first: respx must patch the real methods, not these
            chaos.http  # noqa: B018 - starts the router (once)

    chaos.session.add_cleanup(patches.undo)
    for cls, name, is_async in targets:
        patches.set(cls, name, _trampoline(chaos, start, name, getattr(cls, name), is_async))


def _trampoline(
    chaos: Chaos, start: Callable[[], None], name: str, real: Callable[..., Any], is_async: bool
) -> Callable[..., Any]:
    """``real``'s stand-in: named and shaped like it (respx inspects what it patches, and
    passes requests on to it by keyword)."""
    if is_async:

        async def handle_async_request(self: Any, request: Any) -> Any:
            if chaos._http is not None:  # respx's pass-through to the real transport
                return await real(self, request)
            start()
            return await getattr(self, name)(request)

        trampoline: Callable[..., Any] = handle_async_request
    else:

        def handle_request(self: Any, request: Any) -> Any:
            if chaos._http is not None:  # respx's pass-through to the real transport
                return real(self, request)
            start()
            return getattr(self, name)(request)

        trampoline = handle_request
    trampoline.__name__ = trampoline.__qualname__ = name
    return trampoline
