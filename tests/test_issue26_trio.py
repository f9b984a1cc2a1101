"""trio (issue 26): an async tool under a fault's wait (``timeout``, ``latency``, a
``rate_limit`` the agent backs off from) runs under trio and anyio-on-trio as under asyncio:
the wait is virtual time and yields to trio's scheduler; trio's own scheduler keeps real time
under frozen global time, so ``trio.sleep`` never hangs."""

from __future__ import annotations

import time

import pytest

trio = pytest.importorskip("trio")

from pytest_agentchaos.escape import Backoff, BackoffPolicy, RetryDecision  # noqa: E402
from pytest_agentchaos.inject import Chaos  # noqa: E402
from pytest_agentchaos.inject.errors import InjectedHTTPError  # noqa: E402


async def lookup(city: str) -> str:
    return f"sunny in {city}"


@pytest.mark.parametrize("virtual_sleep", [False, True], ids=["plain", "virtual-sleep"])
@pytest.mark.parametrize("kind", ["timeout", "latency"])
def test_a_faults_wait_runs_under_trio(kind: str, virtual_sleep: bool) -> None:
    fault = {"kind": kind, "seconds": 30, "tools": ["*"], "nth": [1]}
    chaos = Chaos.create(faults=[fault], virtual_sleep=virtual_sleep, freeze_time=virtual_sleep)
    with chaos:
        tool = chaos.wrap(lookup)
        model = chaos.model(lookup, name="llm")

        async def agent() -> list[str]:
            got = []
            for call in (tool, tool, model, model):
                try:
                    got.append(await call("Oslo"))
                except TimeoutError as exc:
                    got.append(type(exc).__name__)
            return got

        started = time.perf_counter()
        got = trio.run(agent)
    assert time.perf_counter() - started < 5  # 60 virtual seconds, no wall time
    first = "InjectedTimeout" if kind == "timeout" else "sunny in Oslo"
    assert got == [first, "sunny in Oslo", first, "sunny in Oslo"]
    assert chaos.clock.now() == 60.0
    assert [r.ok for r in chaos.trace.tool_results()] == [kind == "latency", True]


def test_calls_started_together_in_a_nursery_wait_together() -> None:
    fault = {"kind": "latency", "seconds": 10, "tools": ["*"]}
    with Chaos.create(faults=[fault]) as chaos:
        tool = chaos.wrap(lookup)
        got: list[str] = []

        async def agent() -> None:
            async def one(city: str) -> None:
                got.append(await tool(city))

            async with trio.open_nursery() as nursery:
                for city in ("Oslo", "Rome", "Lima"):
                    nursery.start_soon(one, city)

        trio.run(agent)
    assert sorted(got) == ["sunny in Lima", "sunny in Oslo", "sunny in Rome"]
    assert chaos.clock.now() == 10.0  # overlapping waits, as under asyncio.gather


def test_a_rate_limit_backed_off_on_virtual_time_under_trio() -> None:
    fault = {"kind": "rate_limit", "retry_after": 45, "tools": ["*"], "nth": [1, 2]}
    with Chaos.create(faults=[fault]) as chaos:
        tool = chaos.wrap(lookup)
        backoff = Backoff(BackoffPolicy(jitter="none"), chaos.clock, recorder=chaos.session)

        def retry(exc: Exception) -> RetryDecision:  # honour the Retry-After
            return exc.retry_after if isinstance(exc, InjectedHTTPError) else None

        async def agent() -> str:
            result: str = await backoff.acall(lambda: tool("Oslo"), should_retry=retry)
            return result

        assert trio.run(agent) == "sunny in Oslo"
    assert chaos.clock.now() == 90.0  # two Retry-After waits of 45 s, virtual
    assert [r.ok for r in chaos.trace.tool_results()] == [False, False, True]


def test_anyio_on_trio() -> None:
    anyio = pytest.importorskip("anyio")
    fault = {"kind": "latency", "seconds": 5, "tools": ["*"]}
    with Chaos.create(faults=[fault], virtual_sleep=True, freeze_time=True) as chaos:
        tool = chaos.wrap(lookup)

        async def agent() -> str:
            await anyio.sleep(0.01)  # anyio's own sleep: trio's, on real time
            result: str = await tool("Oslo")
            return result

        assert anyio.run(agent, backend="trio") == "sunny in Oslo"
    assert chaos.clock.now() == 5.0


def test_trio_sleeps_under_frozen_time_do_not_hang(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import time
        import trio

        def test_agent(chaos):
            tool = chaos.wrap(lambda: "ok", name="tool")

            async def agent():
                started = time.monotonic()
                await trio.sleep(0.05)              # trio's scheduler: real time
                with trio.move_on_after(0.05):
                    await trio.sleep(10)
                time.sleep(60)                      # the agent's own sleep: virtual
                return tool(), time.monotonic() - started

            assert trio.run(agent) == ("ok", 60.0)
        """
    )
    pytester.makeini("[pytest]\nchaos_virtual_sleep = true\n")
    result = pytester.runpytest_subprocess("-p", "no:randomly", timeout=60)
    result.assert_outcomes(passed=1)
