"""What a chaos test costs (issue 26, performance): the parts a run used to build per test are
built once per process (the watchdog's timer thread, the HTTP router's patches wait for the
first request), and a finished run is not kept by the session. The numbers are in
``bench/bench_session_overhead.py``; these tests check that nothing of it changes what a
user sees."""

from __future__ import annotations

import gc
import threading
import time
from pathlib import Path

import httpcore
import pytest
import respx

from pytest_agentchaos.errors import WallTimeout
from pytest_agentchaos.harness import RunSpec, SessionSettings, build_run
from pytest_agentchaos.profiles import ProfileRegistry

METHODS = (
    (httpcore.ConnectionPool, "handle_request"),
    (httpcore.AsyncConnectionPool, "handle_async_request"),
    (httpcore.HTTPConnection, "handle_request"),
    (httpcore.AsyncHTTPProxy, "handle_async_request"),
)
REAL = tuple(vars(cls).get(name) for cls, name in METHODS)


def transports_untouched() -> bool:
    return tuple(vars(cls).get(name) for cls, name in METHODS) == REAL and not (
        respx.mocks.HTTPCoreMocker._patches or respx.mocks.HTTPCoreMocker.routers
    )


def test_the_router_starts_with_the_first_request_and_leaves_nothing(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import httpx
        import pytest

        def test_no_request(chaos):
            assert chaos._http is None  # nothing started for a test that sends nothing

        def test_an_undeclared_request_is_refused_by_the_router(chaos):
            try:
                httpx.get("https://api.test/x")
            except BaseException:
                pass  # swallowed: the test fails all the same

        async def call(url):
            async with httpx.AsyncClient() as client:
                return await client.get(url)

        @pytest.mark.chaos(faults=[{"kind": "http_error", "status": 503}])
        def test_declared_routes_after_a_first_request(chaos):
            import asyncio

            with pytest.raises(BaseException, match="matches no route"):
                asyncio.run(call("https://api.test/first"))
            # (a refused request halts the run: the test ends here as failed)

        @pytest.mark.chaos(allow_hosts=["127.0.0.1"])
        def test_declared_route_then_an_allowed_host(chaos):
            chaos.http.get("https://api.test/w", name="w").respond(json={"ok": 1})
            assert httpx.get("https://api.test/w").json() == {"ok": 1}
            with pytest.raises(httpx.ConnectError):  # passed through to the real transport
                httpx.get("http://127.0.0.1:9/")
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*blocked a real HTTP request: GET https://api.test/x matches no route declared *",
            "*blocked a real HTTP request: GET https://api.test/first matches no route *",
        ]
    )
    assert transports_untouched()


def test_a_finished_run_is_not_kept_by_the_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import gc
        import weakref

        RUNS = []

        def test_one(chaos):
            RUNS.append(weakref.ref(chaos.session))

        def test_two(chaos):
            RUNS.append(weakref.ref(chaos.session))

        def test_later():
            gc.collect()
            assert [r() for r in RUNS] == [None, None]
        """
    )
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=3)


def test_the_watchdog_timer_serves_run_after_run(tmp_path: Path) -> None:
    registry = ProfileRegistry.default(None)
    before = threading.enumerate()
    for i in range(200):  # quick runs: each only leaves its entry, no thread per run
        settings = SessionSettings(seed=1, wall_timeout=30)
        with build_run(settings, RunSpec(), f"t::{i}", registry) as run:
            run.finish(None)
    assert threading.enumerate() == before  # the timer is no thread of threading's
    spin = SessionSettings(seed=1, wall_timeout=0.3)

    def agent() -> None:  # the agent's code (the test's own frame owns the run)
        while True:
            time.sleep(0.01)

    started = time.monotonic()
    with pytest.raises(WallTimeout), build_run(spin, RunSpec(), "t::spin", registry) as run:
        agent()
    assert 0.25 < time.monotonic() - started < 5  # the late deadline of a long run does not
    assert run.watchdog is not None and run.watchdog.fired is not None  # delay a short one
    gc.collect()
