"""Suite-wide guard: no test may leave anything the harness patches behind (DESIGN: no leaks):
global time, sleeps, sockets, trace/profile hooks, the thread excepthook, the watchdog's signal."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import hypothesis.internal.observability  # noqa: F401 - see _fast_quiet_pytester
import pytest

# pytester's in-process runs drop the modules first imported inside them; numpy's extension
# modules (imported lazily by a dependency in some of those runs: numpy.linalg, numpy.fft ...)
# refuse to load a second time in one process, and the sentence model needs them afterwards.
# Loaded here, they are kept.
with contextlib.suppress(ImportError):  # the semantic extra is not installed
    import numpy.fft
    import numpy.linalg
    import numpy.random  # noqa: F401

from pytest_agentchaos.faults import parse_faults
from pytest_agentchaos.inject import Chaos

# In a tuple: virtual sleep and freezegun rebind module-level names bound to these.
_REAL = (time.time, time.monotonic, time.sleep, asyncio.sleep, datetime.datetime, datetime.date)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``runs_first`` go first (in their order): xdist hands out tests in collection
    order, and a test of tens of seconds collected last ends the run on one worker alone."""
    items.sort(key=lambda item: item.get_closest_marker("runs_first") is None)


_SOCKETS = (socket.socket.connect, socket.getaddrinfo, socket.gethostbyname)
_SIGNAL = getattr(signal, "SIGUSR2", None)


def _hooks() -> tuple[object, ...]:
    handler = signal.getsignal(_SIGNAL) if _SIGNAL is not None else None
    return (sys.gettrace(), sys.getprofile(), threading.excepthook, handler)


@pytest.fixture(autouse=True)
def _no_leaked_patches() -> Iterator[None]:
    hooks = _hooks()
    yield
    now = (time.time, time.monotonic, time.sleep, asyncio.sleep, datetime.datetime, datetime.date)
    leaked = [
        real.__name__ for real, current in zip(_REAL, now, strict=True) if current is not real
    ]
    assert not leaked, f"global time left patched after the test: {leaked}"
    sockets = (socket.socket.connect, socket.getaddrinfo, socket.gethostbyname)
    assert sockets == _SOCKETS, "the network guard was left installed after the test"
    assert _hooks() == hooks, "a trace/profile hook, thread excepthook or signal handler leaked"


# Third-party plugins the inner runs never use, each seconds of imports per subprocess run
# (langsmith's ~1.5 s, hypothesis's ~1.3 s, faker's ~0.8 s: three xdist processes per run).
_INNER_OPTIONS = (
    "-p no:randomly",
    "-p no:langsmith_plugin",
    "-p no:hypothesispytest",
    "-p no:faker",
    "-o asyncio_default_fixture_loop_scope=function",
)


@pytest.fixture(autouse=True)
def _fast_quiet_pytester(request: pytest.FixtureRequest) -> None:
    """pytester runs: keep them quiet about pytest-asyncio's loop scope, in file order, and
    80 columns wide (as pytest's own suite does): the inner runs' summary lines are cut to the
    terminal's width, and CI's terminal is not ours.

    pytest-randomly (when installed) would shuffle the inner runs' tests, and their expected
    output is written in file order; the outer suite still runs shuffled. The plugins the
    inner runs never use are not loaded (see ``_INNER_OPTIONS``).

    (Importing hypothesis.internal.observability above keeps it loaded: pytester unloads
    modules an inner run imports, and the hypothesis plugin re-imported it, ~1 s, every run.)
    """
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester")  # it clears PYTEST_ADDOPTS when it starts
        monkeypatch = request.getfixturevalue("monkeypatch")
        monkeypatch.setenv("PYTEST_ADDOPTS", " ".join(_INNER_OPTIONS))
        monkeypatch.setenv("COLUMNS", "80")


@pytest.fixture
def make_chaos() -> Iterator[Callable[..., Chaos]]:
    """``make_chaos(*fault_dicts, **create_kwargs)``: a library-level run (no plugin);
    every run is closed at teardown."""
    runs: list[Chaos] = []

    def make(*faults: dict[str, Any], **kw: Any) -> Chaos:
        chaos = Chaos.create(faults=parse_faults(list(faults), "test"), **kw)
        runs.append(chaos)
        return chaos

    yield make
    for chaos in runs:
        chaos.close()
