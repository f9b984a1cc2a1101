"""Clocks: VirtualClock arithmetic and listeners, RealClock's contract, and `install`,
which makes global time (time.*, datetime.now, time.sleep, asyncio.sleep) follow a
VirtualClock until it is uninstalled.

No test sleeps for real: every wait here is virtual or zero.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import math
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentchaos.clock import DEFAULT_EPOCH, Clock, RealClock, VirtualClock, install
from pytest_agentchaos.clock import patch as clock_patch
from pytest_agentchaos.inject import Chaos

# In a tuple: virtual sleep rebinds module-level names bound to the real functions.
_REAL = (time.sleep, asyncio.sleep)
EPOCH_TS = DEFAULT_EPOCH.timestamp()


@pytest.fixture
def installed():
    """Install helper: every handle it makes is uninstalled at teardown, whatever happens."""
    handles = []

    def make(clock: VirtualClock, **kw):
        handle = install(clock, **kw)
        handles.append(handle)
        return handle

    yield make
    for handle in handles:
        handle.uninstall()
    assert time.sleep is _REAL[0]
    assert asyncio.sleep is _REAL[1]


def _time_is_real() -> bool:
    """Global time is the real one: not frozen at the 2025 epoch and moving."""
    a = time.time()
    return abs(a - EPOCH_TS) > 86400 and abs(a - dt.datetime.now().timestamp()) < 60


# -- VirtualClock ----------------------------------------------------------------------------


class TestVirtualClock:
    def test_starts_at_zero(self):
        clock = VirtualClock()
        assert clock.now() == 0.0
        assert clock.elapsed == 0.0

    def test_is_a_clock(self):
        assert isinstance(VirtualClock(), Clock)
        assert isinstance(RealClock(), Clock)

    def test_advance_moves_now_and_elapsed(self):
        clock = VirtualClock()
        clock.advance(1.5)
        clock.advance(2)
        assert clock.now() == pytest.approx(3.5)
        assert clock.elapsed == pytest.approx(3.5)
        assert "3.500" in repr(clock)

    def test_sleep_advances_without_blocking(self):
        clock = VirtualClock()
        clock.sleep(3600)
        assert clock.now() == 3600

    async def test_asleep_advances_and_yields_to_loop(self):
        clock = VirtualClock()
        ran = []

        async def other():
            ran.append(clock.now())

        task = asyncio.ensure_future(other())
        await clock.asleep(86400)
        # The other task got to run during the (virtual) wait.
        assert ran == [86400]
        assert clock.now() == 86400
        await task

    @pytest.mark.parametrize("bad", [-1, -0.001, float("nan"), float("-inf")])
    @pytest.mark.parametrize("method", ["advance", "sleep"])
    def test_negative_or_nan_rejected(self, method, bad):
        clock = VirtualClock()
        clock.advance(5)
        with pytest.raises(ValueError, match="negative or NaN"):
            getattr(clock, method)(bad)
        assert clock.now() == 5

    @pytest.mark.parametrize("bad", [-1, float("nan")])
    async def test_asleep_rejects_negative_or_nan(self, bad):
        clock = VirtualClock()
        with pytest.raises(ValueError):
            await clock.asleep(bad)
        assert clock.now() == 0

    def test_listeners_get_each_advance(self):
        clock = VirtualClock()
        seen: list[float] = []
        clock.add_listener(seen.append)
        clock.advance(2)
        clock.sleep(3)
        assert seen == [2, 3]

    def test_zero_advance_does_not_notify(self):
        clock = VirtualClock()
        seen: list[float] = []
        clock.add_listener(seen.append)
        clock.advance(0)
        clock.sleep(0)
        assert seen == []
        assert clock.now() == 0

    def test_removed_listener_no_longer_called(self):
        clock = VirtualClock()
        seen: list[float] = []
        clock.add_listener(seen.append)
        clock.advance(1)
        clock.remove_listener(seen.append)
        clock.remove_listener(seen.append)  # removing twice is harmless
        clock.advance(1)
        assert seen == [1]
        assert clock.now() == 2

    def test_rejected_advance_does_not_notify(self):
        clock = VirtualClock()
        seen: list[float] = []
        clock.add_listener(seen.append)
        with pytest.raises(ValueError):
            clock.advance(-3)
        assert seen == []

    @given(st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), max_size=30))
    def test_elapsed_is_sum_of_advances(self, steps):
        clock = VirtualClock()
        seen: list[float] = []
        clock.add_listener(seen.append)
        for s in steps:
            clock.advance(s)
        assert clock.now() == pytest.approx(math.fsum(steps), rel=1e-9, abs=1e-9)
        assert seen == [s for s in steps if s != 0]


# -- RealClock -------------------------------------------------------------------------------


class TestRealClock:
    def test_now_is_monotonic(self):
        clock = RealClock()
        a = clock.now()
        b = clock.now()
        assert b >= a

    def test_zero_sleeps_return(self):
        clock = RealClock()
        clock.sleep(0)
        asyncio.run(clock.asleep(0))

    @pytest.mark.parametrize("bad", [-1, float("nan")])
    def test_rejects_negative_or_nan(self, bad):
        clock = RealClock()
        with pytest.raises(ValueError):
            clock.sleep(bad)
        with pytest.raises(ValueError):
            asyncio.run(clock.asleep(bad))


# -- install(freeze=True) ------------------------------------------------------------------


class TestFreeze:
    def test_time_follows_virtual_clock(self, installed):
        clock = VirtualClock()
        installed(clock, freeze=True)
        t0, m0, p0 = time.time(), time.monotonic(), time.perf_counter()
        assert t0 == pytest.approx(EPOCH_TS)
        clock.advance(90)
        assert time.time() - t0 == pytest.approx(90)
        assert time.monotonic() - m0 == pytest.approx(90)
        assert time.perf_counter() - p0 == pytest.approx(90)

    def test_time_does_not_move_without_the_clock(self, installed):
        clock = VirtualClock()
        installed(clock, freeze=True)
        a = time.time()
        sum(range(10000))
        assert time.time() == a

    def test_datetime_now_follows_virtual_clock(self, installed):
        clock = VirtualClock()
        installed(clock, freeze=True)
        assert dt.datetime.now(dt.timezone.utc) == DEFAULT_EPOCH
        clock.advance(3600 * 24)
        assert dt.datetime.now(dt.timezone.utc) == DEFAULT_EPOCH + dt.timedelta(days=1)
        assert dt.datetime.now(dt.timezone.utc).date() == dt.date(2025, 1, 2)

    def test_custom_epoch(self, installed):
        epoch = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.timezone.utc)
        clock = VirtualClock()
        installed(clock, freeze=True, epoch=epoch)
        assert time.time() == pytest.approx(epoch.timestamp())
        clock.advance(30)
        assert dt.datetime.now(dt.timezone.utc) == epoch + dt.timedelta(seconds=30)

    def test_starts_from_current_virtual_time(self, installed):
        clock = VirtualClock()
        clock.advance(100)
        installed(clock, freeze=True)
        assert time.time() == pytest.approx(EPOCH_TS + 100)

    def test_freeze_alone_leaves_sleep_real(self, installed):
        installed(VirtualClock(), freeze=True)
        assert time.sleep is _REAL[0]
        assert asyncio.sleep is _REAL[1]

    def test_uninstall_restores_real_time(self, installed):
        clock = VirtualClock()
        handle = installed(clock, freeze=True)
        assert handle.active
        assert not _time_is_real()
        handle.uninstall()
        assert not handle.active
        assert _time_is_real()
        # The clock no longer drives anything: advancing it leaves real time alone.
        before = time.time()
        clock.advance(10**6)
        assert time.time() - before < 60

    def test_uninstall_is_idempotent(self, installed):
        handle = installed(VirtualClock(), freeze=True, patch_sleep=True)
        handle.uninstall()
        handle.uninstall()
        assert _time_is_real()
        assert time.sleep is _REAL[0]

    def test_install_rolls_back_when_a_later_part_fails(self, monkeypatch):
        def broken(handle, clock):
            raise RuntimeError("cannot patch sleep")

        monkeypatch.setattr(clock_patch, "_patch_sleep", broken)
        with pytest.raises(RuntimeError, match="cannot patch sleep"):
            install(VirtualClock(), freeze=True, patch_sleep=True)
        assert _time_is_real()

    @staticmethod
    def _module_breaking_freezegun_scan(monkeypatch, failures):
        """A loaded module whose ``dir()`` raises ``failures`` times: what freezegun's scan of
        ``sys.modules`` meets when a module's attribute hook breaks, or a finaliser run by the
        garbage collector mid-scan changes what it reads. Its namespace cannot be read, so the
        scan of namespaces (``clock.module_scan``) hands it to freezegun's own."""
        import types

        left = [failures]

        class Hostile(types.ModuleType):
            def __getattribute__(self, name):
                if name == "__dict__":
                    raise TypeError("no namespace to read")
                return super().__getattribute__(name)

            def __dir__(self):
                if left[0] > 0:
                    left[0] -= 1
                    raise RuntimeError("dictionary changed size during iteration")
                return []

        monkeypatch.setitem(sys.modules, "agentchaos_hostile_module", Hostile("agentchaos_hm"))
        return left

    def test_a_scan_broken_once_is_retried_and_time_is_frozen_then_real_again(
        self, installed, monkeypatch
    ):
        left = self._module_breaking_freezegun_scan(monkeypatch, failures=1)
        clock = VirtualClock()
        handle = installed(clock, freeze=True)
        assert left == [0]
        assert time.time() == EPOCH_TS  # frozen at the epoch by the second attempt
        clock.advance(5)
        assert time.time() == EPOCH_TS + 5
        handle.uninstall()
        assert _time_is_real()

    def test_a_scan_that_keeps_failing_raises_and_leaves_time_real(self, monkeypatch):
        self._module_breaking_freezegun_scan(monkeypatch, failures=2)
        with pytest.raises(RuntimeError, match="changed size"):
            install(VirtualClock(), freeze=True, patch_sleep=True)
        assert _time_is_real()
        assert time.sleep is _REAL[0]
        # and the next run freezes time as usual
        handle = install(VirtualClock(), freeze=True)
        try:
            assert time.time() == EPOCH_TS
        finally:
            handle.uninstall()
        assert _time_is_real()

    def test_nothing_installed_when_both_off(self):
        handle = install(VirtualClock(), freeze=False, patch_sleep=False)
        assert not handle.active
        assert _time_is_real()


# -- install(patch_sleep=True) ---------------------------------------------------------------


class TestVirtualSleep:
    def test_time_sleep_is_virtual(self, installed, monkeypatch):
        real_calls: list[float] = []
        # Whatever time.sleep is at install time is what a real wait would call.
        monkeypatch.setattr(time, "sleep", real_calls.append)
        clock = VirtualClock()
        handle = installed(clock, freeze=False, patch_sleep=True)
        time.sleep(3600)
        assert clock.now() == 3600
        assert real_calls == []
        handle.uninstall()
        assert time.sleep == real_calls.append

    def test_time_sleep_moves_frozen_time(self, installed):
        clock = VirtualClock()
        installed(clock, freeze=True, patch_sleep=True)
        t0 = time.time()
        time.sleep(45)
        assert time.time() - t0 == pytest.approx(45)
        assert clock.now() == 45

    def test_negative_sleep_rejected(self, installed):
        clock = VirtualClock()
        installed(clock, freeze=False, patch_sleep=True)
        with pytest.raises(ValueError):
            time.sleep(-1)
        assert clock.now() == 0

    def test_asyncio_sleep_inside_asyncio_run_is_instant(self, installed):
        clock = VirtualClock()
        installed(clock, freeze=True, patch_sleep=True)

        async def agent():
            start = time.monotonic()
            value = await asyncio.sleep(3600, result="done")
            return value, time.monotonic() - start

        value, frozen_delta = asyncio.run(agent())
        assert value == "done"
        assert clock.now() == 3600
        assert frozen_delta == pytest.approx(3600)

    def test_asyncio_sleep_without_freeze(self, installed):
        clock = VirtualClock()
        installed(clock, freeze=False, patch_sleep=True)
        assert asyncio.run(asyncio.sleep(7200, result=1)) == 1
        assert clock.now() == 7200

    def test_wait_for_times_out_on_virtual_time(self, installed):
        clock = VirtualClock()
        installed(clock, freeze=True, patch_sleep=True)

        async def agent():
            assert await asyncio.wait_for(asyncio.sleep(3, result="x"), timeout=5) == "x"
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(asyncio.sleep(100), timeout=5)

        asyncio.run(agent())
        assert clock.now() == pytest.approx(3 + 5)

    def test_concurrent_sleeps_overlap(self, installed):
        clock = VirtualClock()
        installed(clock, freeze=False, patch_sleep=True)

        async def agent():
            return await asyncio.gather(asyncio.sleep(10, 1), asyncio.sleep(20, 2))

        assert asyncio.run(agent()) == [1, 2]
        assert clock.now() == pytest.approx(20)  # as in real time: the longest wait, not the sum

    def test_uninstall_restores_originals(self, installed):
        handle = installed(VirtualClock(), freeze=False, patch_sleep=True)
        assert time.sleep is not _REAL[0]
        assert asyncio.sleep is not _REAL[1]
        handle.uninstall()
        assert time.sleep is _REAL[0]
        assert asyncio.sleep is _REAL[1]

    def test_uninstall_after_exception_restores_originals(self, installed):
        handle = installed(VirtualClock(), freeze=True, patch_sleep=True)
        try:
            time.sleep(5)
            raise KeyError("agent crashed")
        except KeyError:
            pass
        finally:
            handle.uninstall()
        assert time.sleep is _REAL[0]
        assert asyncio.sleep is _REAL[1]
        assert _time_is_real()


# -- the same switch through Chaos.create -----------------------------------------------------


class TestChaosCreateClock:
    def test_freeze_and_virtual_sleep_until_close(self):
        chaos = Chaos.create(freeze_time=True, virtual_sleep=True)
        try:
            t0 = time.time()
            assert t0 == pytest.approx(EPOCH_TS)
            time.sleep(120)
            assert chaos.clock.now() == 120
            assert chaos.session.now() == 120
            assert time.time() - t0 == pytest.approx(120)
        finally:
            chaos.close()
        assert time.sleep is _REAL[0]
        assert asyncio.sleep is _REAL[1]
        assert _time_is_real()

    def test_with_block_restores_even_when_body_raises(self):
        with (
            pytest.raises(RuntimeError, match="boom"),
            Chaos.create(freeze_time=True, virtual_sleep=True) as chaos,
        ):
            time.sleep(10)
            assert chaos.clock.now() == 10
            raise RuntimeError("boom")
        assert time.sleep is _REAL[0]
        assert asyncio.sleep is _REAL[1]
        assert _time_is_real()

    def test_close_twice_is_safe(self):
        chaos = Chaos.create(freeze_time=True, virtual_sleep=True)
        chaos.close()
        chaos.close()
        assert time.sleep is _REAL[0]
        assert _time_is_real()

    def test_default_leaves_global_time_alone(self):
        with Chaos.create() as chaos:
            assert time.sleep is _REAL[0]
            assert _time_is_real()
            assert isinstance(chaos.clock, VirtualClock)
