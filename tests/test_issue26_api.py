"""Bad calls of the chaos API and of the clock fail at the user's line, with no plugin frames;
absurd waits are a clear error that leaves the clock where it was; virtual ``asyncio.sleep``
keeps what the real one does with zero, negative and infinite delays."""

from __future__ import annotations

import asyncio
import math
import re
import time

import pytest

from pytest_agentchaos.clock import VirtualClock
from pytest_agentchaos.clock.clock import MAX_SECONDS, RealClock
from pytest_agentchaos.clock.patch import install
from pytest_agentchaos.inject import Chaos

#: A file of the plugin's own code, as it shows in a traceback.
PLUGIN_FRAME = re.compile(r"pytest_agentchaos[/\\][\w/\\.]*\.py:\d+")


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "--assert=plain", "-p", "no:cacheprovider", "-p", "no:randomly", *args
    )


def _no_plugin_frames(result: pytest.RunResult) -> None:
    frames = [line for line in result.outlines if PLUGIN_FRAME.search(line)]
    assert not frames, "the user sees the plugin's own code:\n" + "\n".join(frames)


class TestAbsurdWaits:
    @pytest.mark.parametrize("bad", [1e300, math.inf, 10**400, MAX_SECONDS * 1.5])
    @pytest.mark.parametrize("method", ["advance", "sleep"])
    def test_too_long_is_refused_and_the_clock_stays(self, method: str, bad: float) -> None:
        clock = VirtualClock()
        ticks: list[float] = []
        clock.add_listener(ticks.append)
        clock.advance(5)
        with pytest.raises(ValueError, match=r"is too long: virtual time is at 5 s and ends at"):
            getattr(clock, method)(bad)
        assert clock.now() == 5
        assert ticks == [5]  # no listener (freezegun) heard of the refused wait

    def test_the_end_of_virtual_time_is_reachable_exactly(self) -> None:
        clock = VirtualClock()
        clock.sleep(MAX_SECONDS)
        assert clock.now() == MAX_SECONDS
        clock.sleep(0)
        with pytest.raises(ValueError, match="too long"):
            clock.sleep(1)

    @pytest.mark.parametrize("bad", ["5", b"5", None, [1]])
    def test_a_wait_is_a_number(self, bad: object) -> None:
        with pytest.raises(TypeError, match=r"clock.sleep\(\): seconds: expected a number"):
            VirtualClock().sleep(bad)  # type: ignore[arg-type]

    def test_numbers_of_other_types_are_waits(self) -> None:
        from decimal import Decimal
        from fractions import Fraction

        clock = VirtualClock()
        clock.sleep(Decimal("1.5"))  # type: ignore[arg-type]
        clock.sleep(Fraction(1, 2))
        clock.sleep(True)
        assert clock.now() == 3

    async def test_asleep_refuses_too_long(self) -> None:
        clock = VirtualClock()
        with pytest.raises(ValueError, match=r"clock.asleep\(\): seconds: inf is too long"):
            await clock.asleep(math.inf)
        assert clock.now() == 0

    def test_the_real_clock_refuses_too_long_before_it_waits(self) -> None:
        with pytest.raises(ValueError, match=r"clock.sleep\(\): seconds: 1e\+300 is too long"):
            RealClock().sleep(1e300)
        with pytest.raises(ValueError, match="negative or NaN"):
            RealClock().sleep(-1)

    def test_frozen_time_stays_in_step_up_to_the_end(self) -> None:
        clock = VirtualClock()
        handle = install(clock, freeze=True, patch_sleep=True)
        try:
            start = time.time()
            time.sleep(MAX_SECONDS - 1)
            assert time.time() - start == pytest.approx(MAX_SECONDS - 1)
            with pytest.raises(ValueError, match=r"time.sleep\(\): seconds: 2 is too long"):
                time.sleep(2)
            assert time.time() - start == pytest.approx(MAX_SECONDS - 1)
        finally:
            handle.uninstall()


class TestVirtualAsyncioSleep:
    """Under virtual sleep, ``asyncio.sleep`` keeps the real one's answers to odd delays."""

    def _run(self, main: object) -> float:
        clock = VirtualClock()
        handle = install(clock, freeze=False, patch_sleep=True)
        try:
            asyncio.run(main(clock))  # type: ignore[operator]
        finally:
            handle.uninstall()
        return clock.now()

    def test_zero_and_negative_delays_only_yield(self) -> None:
        async def main(clock: VirtualClock) -> None:
            assert await asyncio.sleep(-1, result="r") == "r"
            await asyncio.sleep(0)
            await asyncio.sleep(-math.inf)

        assert self._run(main) == 0

    def test_an_infinite_delay_waits_until_cancelled_without_moving_time(self) -> None:
        async def main(clock: VirtualClock) -> None:
            forever = asyncio.ensure_future(asyncio.sleep(math.inf))
            await asyncio.sleep(30)
            assert not forever.done()
            forever.cancel()
            with pytest.raises(asyncio.CancelledError):
                await forever

        assert self._run(main) == 30

    def test_an_infinite_delay_under_wait_for_times_out_on_virtual_time(self) -> None:
        async def main(clock: VirtualClock) -> None:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.sleep(math.inf), timeout=60)

        assert self._run(main) == 60

    @pytest.mark.parametrize("bad", [1e300, math.nan])
    def test_a_finite_absurd_or_nan_delay_is_a_clear_error(self, bad: float) -> None:
        async def main(clock: VirtualClock) -> None:
            with pytest.raises(ValueError, match=r"asyncio.sleep\(\): delay: "):
                await asyncio.sleep(bad)

        assert self._run(main) == 0


def test_a_bad_wait_in_a_chaos_test_names_the_call_at_the_users_line(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nchaos_virtual_sleep = true\n")
    pytester.makepyfile(
        test_agent="""
        import asyncio
        import math
        import time

        def test_time_sleep(chaos):
            time.sleep(math.inf)

        def test_asyncio_sleep(chaos):
            async def agent():
                await asyncio.sleep(1e300)
            asyncio.run(agent())

        def test_clock_sleep(chaos):
            chaos.clock.sleep(-1)

        def test_sleeps_past_the_end(chaos):
            for _ in range(40):
                time.sleep(3e7)
        """
    )
    result = _run(pytester)
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(
        [
            ">       time.sleep(math.inf)",
            "E       ValueError: time.sleep(): seconds: inf is too long: a wait lasts at most "
            "1,000,000,000 s (about 31 years)",
            "E       ValueError: asyncio.sleep(): delay: 1e+300 is too long: *",
            ">       chaos.clock.sleep(-1)",
            "E       ValueError: clock.sleep(): seconds: cannot wait a negative or NaN time, "
            "got -1",
            ">           time.sleep(3e7)",
            "E           ValueError: time.sleep(): seconds: 30000000.0 is too long: virtual time "
            "is at 9.9e+08 s and ends at 1,000,000,000 s (about 31 years)",
        ]
    )
    _no_plugin_frames(result)
    assert "OverflowError" not in result.stdout.str()


def test_wrap_tools_names_each_tool_by_its_key_and_refuses_a_non_tool() -> None:
    with Chaos.create() as chaos:
        calls: list[str] = []

        def search(q: str) -> str:
            calls.append(q)
            return q

        with pytest.raises(TypeError, match=r"tools\['lookup'\]"):
            chaos.wrap_tools({"search": search, "lookup": 5})
        wrapped = chaos.wrap_tools({"find": search})
        assert list(wrapped) == ["find"]
        assert wrapped["find"]("x") == "x"
        assert [c.tool for c in chaos.trace.tool_calls()] == ["find"]
