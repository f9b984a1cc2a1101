"""Concurrent asyncio waits on virtual time: they overlap as in real time, at no wall cost."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.errors import BudgetExhausted
from pytest_agentchaos.faults import parse_faults
from pytest_agentchaos.inject import Chaos
from pytest_agentchaos.profiles import Budgets

delays = st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=8)


@settings(max_examples=30, deadline=None)
@given(delays)
def test_gathered_sleeps_end_at_the_longest_and_sequential_ones_at_the_sum(ds: list[int]) -> None:
    async def agent() -> None:
        await asyncio.gather(*(asyncio.sleep(d) for d in ds))
        mid = chaos.clock.now()
        for d in ds:
            await asyncio.sleep(d)
        assert mid == max(ds)

    with Chaos.create(virtual_sleep=True) as chaos:
        asyncio.run(agent())
    assert chaos.clock.now() == max(ds) + sum(ds)


async def _tool(n: int) -> int:
    return n


LATENCY_10 = [{"kind": "latency", "seconds": 10}]


@pytest.mark.parametrize("virtual_sleep", [False, True])
def test_gathered_tool_latencies_overlap(virtual_sleep: bool) -> None:
    async def agent(chaos: Chaos) -> list[int]:
        tool = chaos.wrap(_tool)
        return await asyncio.gather(*(tool(n) for n in range(10)))

    with Chaos.create(faults=parse_faults(LATENCY_10, "t"), virtual_sleep=virtual_sleep) as chaos:
        assert asyncio.run(agent(chaos)) == list(range(10))
    assert chaos.clock.now() == 10  # not 100
    assert len(chaos.trace.faults("latency")) == 10


def test_wait_for_times_out_a_slow_tool_on_virtual_time() -> None:
    async def agent(chaos: Chaos) -> None:
        tool = chaos.wrap(_tool)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(tool(1), timeout=5)

    faults = parse_faults([{"kind": "latency", "seconds": 60}], "t")
    with Chaos.create(faults=faults, virtual_sleep=True) as chaos:
        asyncio.run(agent(chaos))
    assert chaos.clock.now() == 5


def test_concurrent_sleepers_do_not_add_up_against_max_seconds() -> None:
    async def agent() -> None:
        await asyncio.gather(*(asyncio.sleep(60) for _ in range(5)))

    with Chaos.create(budgets=Budgets(max_seconds=100), virtual_sleep=True) as chaos:
        asyncio.run(agent())
    assert chaos.clock.now() == 60 and chaos.session.halted is None


def test_a_task_sleeping_forever_is_stopped_by_max_seconds() -> None:
    async def agent() -> None:
        while True:
            try:  # noqa: SIM105 - an agent that swallows everything it can
                await asyncio.sleep(30)
            except Exception:
                pass

    with (
        Chaos.create(budgets=Budgets(max_seconds=100), virtual_sleep=True) as chaos,
        pytest.raises(BudgetExhausted, match="max_seconds"),
    ):
        asyncio.run(agent())
    assert [(e.budget, e.limit) for e in chaos.trace.budget_exhausted()] == [("max_seconds", 100)]


def test_the_loop_is_back_on_real_time_after_close() -> None:
    loop = asyncio.new_event_loop()
    try:
        chaos = Chaos.create(virtual_sleep=True)
        loop.run_until_complete(asyncio.sleep(50))
        assert chaos.clock.now() == 50
        chaos.close()
        assert "time" not in vars(loop)  # the instance patch is gone
        before = loop.time()
        loop.run_until_complete(asyncio.sleep(0.01))
        assert 0.005 < loop.time() - before < 5  # real time again
    finally:
        loop.close()


def test_virtual_async_time_in_a_pytest_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import asyncio
        import pytest

        @pytest.mark.chaos(virtual_sleep=True, max_seconds=600,
                           faults=[{"kind": "latency", "seconds": 45, "tools": ["search"]}])
        @pytest.mark.must_halt(max_seconds=600)
        async def test_agent(chaos):
            async def search(q):
                return q

            tool = chaos.wrap(search)
            results = await asyncio.gather(*(tool(q) for q in "abc"))
            assert results == ["a", "b", "c"]
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(tool("slow"), timeout=10)
            assert chaos.clock.now() == 55  # 45 for the three together, then a 10 s timeout
        """
    )
    pytester.makeini("[pytest]\nasyncio_mode = auto\n")
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["PASSED  *test_agent  *vtime=55.0s verdict=must_halt=ok"])


def test_a_fault_delay_on_a_real_clock_does_not_block_the_event_loop():
    """With a real clock a latency fault's wait is an await: other tasks keep running (a
    ticker due every 0.04 s ticks all five times during a 0.3 s wait; a blocking sleep let it
    tick once before and the rest after)."""
    import asyncio

    from pytest_agentchaos import Chaos, RealClock
    from pytest_agentchaos.faults import parse_faults

    chaos = Chaos.create(
        faults=parse_faults([{"kind": "latency", "seconds": 0.3}], "test"), clock=RealClock()
    )
    try:
        events: list[str] = []

        async def tool() -> str:
            return "done"

        slow = chaos.wrap(tool)

        async def call() -> None:
            await slow()
            events.append("done")

        async def ticker() -> None:
            for _ in range(5):
                events.append("tick")
                await asyncio.sleep(0.04)

        async def main() -> None:
            await asyncio.gather(call(), ticker())

        asyncio.run(main())
        assert events == ["tick"] * 5 + ["done"]
    finally:
        chaos.close()


@pytest.mark.parametrize("how", ["run_in_executor", "anyio.to_thread"])
def test_a_worker_thread_still_computing_takes_no_virtual_time(how: str) -> None:
    """A sync tool in a worker thread is compute: while it runs (here ~50 ms of real work, what
    a loaded CI machine can make of a quick tool) the loop does not jump to the deadline
    around it, so the call ends at t=0 and no timeout fires."""
    import time

    import anyio

    def tool() -> str:
        end = time.perf_counter() + 0.05
        while time.perf_counter() < end:
            pass
        return "done"

    async def agent() -> str:
        if how == "run_in_executor":
            call = asyncio.get_running_loop().run_in_executor(None, tool)
        else:
            call = anyio.to_thread.run_sync(tool)
        return await asyncio.wait_for(call, timeout=2)

    with Chaos.create(virtual_sleep=True) as chaos:
        assert asyncio.run(agent()) == "done"
    assert chaos.clock.now() == 0


@pytest.mark.parametrize("taken", [True, False])
def test_an_executor_worker_between_taking_an_item_and_running_it_counts_as_busy(
    taken: bool,
) -> None:
    """A loaded machine can pause a ``concurrent.futures`` worker right after it took an item
    from its queue and before it runs it: its frame is still ``_worker`` and the queue is empty.
    The loop must still wait for it, or the virtual clock jumps to the caller's deadline (a
    timeout the agent would never see in production). Here a thread stands in for the worker,
    held in exactly that window (the name, arguments and function name of the stdlib's)."""
    import queue
    import threading

    from pytest_agentchaos.clock.aio import _threads_busy

    hold = threading.Lock()
    hold.acquire()
    started = threading.Event()

    def _worker(executor_reference: object, work_queue: object) -> None:
        work_item = object() if taken else None
        started.set()
        hold.acquire()  # a C-level wait: the innermost Python frame stays ``_worker``
        del work_item

    worker = threading.Thread(
        target=_worker, name="asyncio_99", args=(None, queue.SimpleQueue()), daemon=True
    )
    worker.start()
    try:
        started.wait()
        assert _threads_busy(threading.get_ident()) is taken
    finally:
        hold.release()
        worker.join()
