"""Async agents under the plugin (pytest-asyncio, auto mode): wrapped async tools, wait_for
and gather, virtual sleeps, frozen time, httpx.AsyncClient on chaos.http, budgets."""

from __future__ import annotations

import hypothesis.internal.observability  # noqa: F401
import pytest

# An in-process run unloads every module it imported when it ends, and hypothesis's plugin
# imports hypothesis at each terminal summary: importing it here (above) keeps each run fast.

pytest.importorskip("pytest_asyncio")

# Test modules keep the real functions in a tuple: freezegun rewrites module attributes that
# hold them. Checking `is not REAL` before a long sleep means a broken patch fails the test
# instead of sleeping for an hour.
PRELUDE = """
import asyncio
import time

import pytest

REAL = (time.sleep, asyncio.sleep, time.monotonic, time.time)
"""


def ini(pytester: pytest.Pytester, *lines: str) -> None:
    body = "\n".join(
        [
            "[pytest]",
            "asyncio_mode = auto",
            "asyncio_default_fixture_loop_scope = function",
            *lines,
        ]
    )
    pytester.makeini(body + "\n")


@pytest.fixture(autouse=True)
def _ini(pytester: pytest.Pytester) -> None:
    ini(pytester)


def test_async_tool_with_a_timeout_fault(pytester):
    pytester.makepyfile(
        PRELUDE
        + """
@pytest.mark.chaos(faults=[{"kind": "timeout", "nth": 1, "seconds": 10}])
async def test_fetch(chaos):
    seen = []

    async def fetch(city):
        seen.append(city)
        await asyncio.sleep(0)
        return {"city": city}

    tool = chaos.wrap(fetch)
    assert asyncio.iscoroutinefunction(tool) and tool.__name__ == "fetch"
    with pytest.raises(TimeoutError, match="fetch timed out after 10s"):
        await tool("Oslo")
    assert seen == []
    assert await tool("Rome") == {"city": "Rome"}
    assert chaos.clock.now() == 10
"""
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["PASSED  *::test_fetch  profile=none *faults=timeout:1 tool_calls=2 *vtime=10.0s *"]
    )


def test_wait_for_and_gather_on_wrapped_tools(pytester):
    pytester.makepyfile(
        PRELUDE
        + """
@pytest.mark.chaos(faults=[{"kind": "http_error", "status": 502, "tools": "price", "nth": [2, 4]}])
async def test_parallel(chaos):
    async def price(item):
        await asyncio.sleep(0)
        return len(item)

    tool = chaos.wrap(price)
    assert await asyncio.wait_for(tool("tea"), timeout=5) == 3
    results = await asyncio.gather(*(tool(x) for x in ["a", "bb", "ccc", "dddd"]),
                                   return_exceptions=True)
    assert [type(r).__name__ for r in results] == ["InjectedHTTPError", "int",
                                                    "InjectedHTTPError", "int"]
    assert results[0].status == 502 and results[1] == 2
    ok = await asyncio.gather(tool("x"), tool("yy"))
    assert ok == [1, 2]
    assert [c.index for c in chaos.trace.tool_calls("price")] == [1, 2, 3, 4, 5, 6, 7]
"""
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["PASSED  *::test_parallel  *faults=http_error:2 tool_calls=7 *"])


def test_virtual_sleep_makes_long_sleeps_instant(pytester):
    pytester.makepyfile(
        PRELUDE
        + """
@pytest.mark.chaos(virtual_sleep=True)
async def test_async_sleeps(chaos):
    assert asyncio.sleep is not REAL[1] and time.sleep is not REAL[0]
    await asyncio.sleep(3600)
    time.sleep(3600)
    assert chaos.clock.now() == 7200
    assert await asyncio.sleep(5, result="done") == "done"
    assert chaos.clock.now() == 7205

@pytest.mark.chaos(virtual_sleep=True)
def test_sync_sleep(chaos):
    assert time.sleep is not REAL[0]
    start = time.monotonic()
    time.sleep(3600)
    assert chaos.clock.now() == 3600
    assert time.monotonic() - start == pytest.approx(3600)

def test_after(chaos):
    assert (time.sleep, asyncio.sleep) == REAL[:2]  # restored after each test
"""
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "PASSED  *::test_async_sleeps  *vtime=7205.0s *",
            "PASSED  *::test_sync_sleep  *vtime=3600.0s *",
        ]
    )


def test_ini_chaos_virtual_sleep(pytester):
    ini(pytester, "chaos_virtual_sleep = true")
    pytester.makepyfile(
        PRELUDE
        + """
async def test_ini(chaos):
    assert asyncio.sleep is not REAL[1]
    await asyncio.sleep(600)
    assert chaos.clock.now() == 600

@pytest.mark.chaos(virtual_sleep=False)
async def test_marker_turns_it_off(chaos):
    assert (time.sleep, asyncio.sleep) == REAL[:2]
"""
    )
    pytester.runpytest().assert_outcomes(passed=2)


def test_sleep_is_not_patched_by_default(pytester):
    pytester.makepyfile(
        PRELUDE
        + """
async def test_async(chaos):
    assert time.sleep is REAL[0]
    assert asyncio.sleep is REAL[1]

@pytest.mark.chaos("flaky")
def test_sync(chaos):
    assert time.sleep is REAL[0]
"""
    )
    pytester.runpytest().assert_outcomes(passed=2)


def test_frozen_time_follows_the_chaos_clock(pytester):
    pytester.makepyfile(
        PRELUDE
        + """
import datetime

pytestmark = pytest.mark.chaos(freeze_time=True)

async def test_async(chaos):
    assert time.monotonic is not REAL[2]
    m0, t0 = time.monotonic(), time.time()
    assert t0 == 1735689600.0  # 2025-01-01T00:00:00Z
    chaos.clock.advance(100)
    assert time.monotonic() - m0 == pytest.approx(100)
    assert time.time() - t0 == pytest.approx(100)
    assert datetime.datetime.now(datetime.timezone.utc) == datetime.datetime(
        2025, 1, 1, 0, 1, 40, tzinfo=datetime.timezone.utc)
    await asyncio.sleep(0)  # the event loop still runs on real time

def test_sync(chaos):
    m0 = time.monotonic()
    chaos.clock.sleep(42.5)
    assert time.monotonic() - m0 == pytest.approx(42.5)
"""
    )
    pytester.runpytest().assert_outcomes(passed=2)


@pytest.mark.parametrize("how", ["ini", "marker"])
def test_freeze_time_can_be_turned_off(pytester, how):
    if how == "ini":
        ini(pytester, "chaos_freeze_time = false")
    marker = "@pytest.mark.chaos(freeze_time=False)" if how == "marker" else ""
    pytester.makepyfile(
        PRELUDE
        + f"""
{marker}
async def test_real_time(chaos):
    assert (time.monotonic, time.time) == REAL[2:]
    m0 = time.monotonic()
    chaos.clock.advance(100)
    assert chaos.clock.now() == 100
    assert time.monotonic() - m0 < 50   # real time did not jump with the chaos clock
    assert abs(time.time() - 1735689600.0) > 86400
"""
    )
    pytester.runpytest().assert_outcomes(passed=1)


def test_httpx_async_client_through_an_outage(pytester):
    pytester.makepyfile(
        PRELUDE
        + """
import httpx

@pytest.mark.chaos("outage")
async def test_weather(chaos):
    chaos.http.get("https://api.test/weather", name="weather").respond(json={"temp": 20})
    statuses = []
    async with httpx.AsyncClient() as client:
        for _ in range(10):
            r = await client.get("https://api.test/weather", params={"city": "Oslo"})
            statuses.append(r.status_code)
            if r.status_code != 503:
                break
            await chaos.clock.asleep(30)
    # the outage lasts the first 120 virtual seconds: calls at t=0, 30, 60 and 90 fail
    assert statuses == [503, 503, 503, 503, 200]
    assert r.json() == {"temp": 20}
    assert chaos.clock.now() == 120
    assert [c.tool for c in chaos.trace.tool_calls(channel="http")] == ["weather"] * 5

async def test_unrouted_request_never_reaches_the_network(chaos):
    chaos.http.get("https://api.test/weather").respond(json={})
    async with httpx.AsyncClient() as client:
        try:
            await client.get("https://elsewhere.test/")
        except BaseException:
            pass  # swallowed: the test fails all the same
"""
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "pytest-agentchaos: blocked a real HTTP request: GET https://elsewhere.test/ *",
            "FAILED  *::test_unrouted_request_never_reaches_the_network  *verdict=halted:network",
            "PASSED  *::test_weather  profile=outage *faults=http_error:4 tool_calls=5 *"
            "vtime=120.0s *",
        ]
    )


def test_async_runaway_is_stopped(pytester):
    pytester.makepyfile(
        PRELUDE
        + """
@pytest.mark.must_halt(max_tool_calls=5)
async def test_runaway(chaos):
    async def poll():
        raise ConnectionError("nope")

    tool = chaos.wrap(poll)
    for _ in range(1000):  # bounded only so that a broken budget cannot hang the suite
        try:
            await tool()
        except Exception:
            await asyncio.sleep(0)
"""
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "must_halt failed: the agent did not halt on its own within its budget",
            "  - hard budget max_tool_calls=5 stopped it at step 5, *",
            "replay: pytest *::test_runaway --chaos-seed=*",
        ]
    )


def test_virtual_sleep_covers_sleep_imported_by_name(pytester):
    pytester.makepyfile(
        """
        from asyncio import sleep as asleep
        from time import monotonic, sleep

        import pytest

        REAL = (sleep, asleep, monotonic)

        @pytest.mark.chaos(virtual_sleep=True)
        async def test_imported(chaos):
            assert monotonic is not REAL[2]  # frozen time reaches it
            # checked before sleeping, so that the unpatched case fails instead of waiting
            assert sleep is not REAL[0], "time.sleep imported by name was not made virtual"
            assert asleep is not REAL[1], "asyncio.sleep imported by name was not made virtual"
            sleep(3600)
            await asleep(3600)
            assert chaos.clock.now() == 7200
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)
