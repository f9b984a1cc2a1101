"""Behaviour added after the design review: each test fails if its fix regresses."""

from __future__ import annotations

import asyncio
import threading

import pytest

from pytest_agentchaos.faults import CallInfo, FaultPlan, parse_faults
from pytest_agentchaos.inject import Chaos

# -- the plugin, as a user runs it -----------------------------------------------------------


def test_markers_added_by_a_conftest_are_honoured(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import pytest

        def pytest_collection_modifyitems(items):
            for item in items:
                if "agent" in item.name:
                    item.add_marker(pytest.mark.chaos("outage", max_steps=50))
                    item.add_marker(pytest.mark.must_halt(max_steps=3))
                if "typo" in item.name:
                    item.add_marker(pytest.mark.chaos(sed=1))
        """
    )
    pytester.makepyfile(
        """
        def test_agent(chaos):
            assert chaos.profile.name == "outage"
            for _ in range(5):
                chaos.step()

        def test_typo():
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_typo*",
            "*bad chaos marker: @pytest.mark.chaos: unknown argument 'sed'*",
            "*must_halt failed*",
            "*hard budget max_steps=3 stopped it at step 3*",
        ]
    )


def test_by_default_agent_time_is_real_so_polling_loops_end(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import time
        import pytest

        REAL = (time.sleep, time.monotonic)  # in a tuple: virtual time rebinds bare names

        def test_default(chaos):
            assert (time.sleep, time.monotonic) == REAL  # nothing frozen, nothing patched

        @pytest.mark.chaos(virtual_sleep=True)
        def test_polling_an_hour_on_virtual_time(chaos):
            deadline = time.monotonic() + 3600
            polls = 0
            while time.monotonic() < deadline:
                time.sleep(5)
                polls += 1
            assert polls == 720 and chaos.clock.now() == 3600
        """
    )
    pytester.runpytest().assert_outcomes(passed=2)


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ('chaos(faults=[{"kind": ["timeout"]}])', "kind: expected a fault kind name (a string)"),
        ('chaos("../../outside")', "'../../outside' is not a profile name"),
        (
            'chaos(faults=[{"kind": "timeout", "seconds": float("inf")}])',
            "expected a finite number",
        ),
        ('chaos(faults=[{"kind": "latency", "seconds": 1e12}])', "must be <= 10000000, got"),
        ('must_halt(max_seconds=float("nan"))', "expected a finite number of seconds"),
    ],
)
def test_bad_values_are_collection_errors_not_internal_errors(
    pytester: pytest.Pytester, marker: str, message: str
) -> None:
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.{marker}
        def test_x(chaos):
            pass
        """
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([f"*test_x*{message}*"])
    result.stdout.no_fnmatch_line("*INTERNALERROR*")


def test_none_means_unset_for_profile_and_seed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.chaos(profile=None, seed=None)
        def test_x(chaos):
            assert chaos.profile.name == "flaky"
        """
    )
    pytester.runpytest("--chaos-profile=flaky").assert_outcomes(passed=1)


def test_unrouted_httpx_request_never_reaches_the_network(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import httpx
        import pytest

        def test_x(chaos):  # never touches chaos.http, and swallows the refusal
            try:
                httpx.get("http://127.0.0.1:9/")
            except BaseException:
                pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["pytest-agentchaos: blocked a real HTTP request: GET http://127.0.0.1:9/ matches no *"]
    )


def test_a_configured_profiles_dir_that_is_missing_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nchaos_profiles_dir = nowhere\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini chaos_profiles_dir: *nowhere is not a directory*"])


# -- the library ------------------------------------------------------------------------------


def _decisions(faults: list[dict[str, object]]) -> list[tuple[int, str]]:
    plan = FaultPlan(parse_faults(faults, "t"), seed=11)
    out = []
    for i in range(1, 400):
        d = plan.decide(CallInfo("tool", "search", i, 0.0, {}))
        if d is not None:
            out.append((i, d.kind.name))
    return out


def test_adding_a_fault_for_another_tool_leaves_this_tools_faults_alone() -> None:
    search = {"kind": "http_error", "probability": 0.2, "tools": ["search"]}
    unrelated = {"kind": "timeout", "probability": 0.5, "tools": ["payments"]}
    assert _decisions([search]) == _decisions([unrelated, search])
    assert _decisions([search]) != _decisions([dict(search, status=503)])  # content matters


def test_a_result_carries_the_step_of_the_call_it_answers() -> None:
    async def slow(n: int) -> int:
        await asyncio.sleep(0)
        return n

    async def main(chaos: Chaos) -> None:
        tool = chaos.wrap(slow)
        await asyncio.gather(*(tool(n) for n in range(3)))

    with Chaos.create() as chaos:
        asyncio.run(main(chaos))
    calls = {c.index: c.step for c in chaos.trace.tool_calls()}
    results = {r.index: r.step for r in chaos.trace.tool_results()}
    assert calls == results == {1: 1, 2: 2, 3: 3}


def test_threaded_tools_get_distinct_call_indexes() -> None:
    with Chaos.create() as chaos:
        tool = chaos.wrap(lambda x: x, name="t")

        def worker() -> None:
            for i in range(200):
                tool(i)

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    indexes = sorted(c.index for c in chaos.trace.tool_calls())
    assert indexes == list(range(1, 1601))
    assert chaos.session.steps == chaos.session.tool_calls == 1600


FLAKY_SUITE = """
import pytest

def _agent(chaos, name, calls):
    tool = chaos.wrap(lambda q: q, name=name)
    for i in range(calls):
        try:
            tool(i)
        except Exception:
            pass

@pytest.mark.parametrize("n", range(4))
def test_agent(chaos, n):
    _agent(chaos, f"tool{n}", 30)

def test_other(chaos):
    _agent(chaos, "other", 50)
"""


def test_traces_do_not_depend_on_test_order(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_order=FLAKY_SUITE)
    ids = [f"test_order.py::test_agent[{n}]" for n in range(4)] + ["test_order.py::test_other"]
    forward = pytester.runpytest(
        *ids, "--chaos-seed=5", "--chaos-profile=flaky", "--chaos-trace-dir=a"
    )
    backward = pytester.runpytest(
        *reversed(ids), "--chaos-seed=5", "--chaos-profile=flaky", "--chaos-trace-dir=b"
    )
    forward.assert_outcomes(passed=5)
    backward.assert_outcomes(passed=5)
    a, b = sorted((pytester.path / "a").iterdir()), sorted((pytester.path / "b").iterdir())
    assert [p.name for p in a] == [p.name for p in b] and len(a) == 5
    assert all(x.read_bytes() == y.read_bytes() for x, y in zip(a, b, strict=True))
    assert sum(x.read_text().count('"FaultInjected"') for x in a) > 10  # faults did fire


def test_nothing_leaks_when_a_chaos_test_errors_in_setup_or_teardown(
    pytester: pytest.Pytester,
) -> None:
    import respx.mocks

    pytester.makepyfile(
        """
        import pytest

        @pytest.fixture
        def broken_setup(chaos):
            chaos.http.get("https://api.test/x").respond(json={})
            raise RuntimeError("setup broke")

        @pytest.fixture
        def broken_teardown(chaos):
            yield
            raise RuntimeError("teardown broke")

        @pytest.mark.chaos(virtual_sleep=True)
        def test_setup(broken_setup):
            pass

        @pytest.mark.chaos(virtual_sleep=True)
        def test_teardown(broken_teardown, chaos):
            chaos.http.get("https://api.test/x").respond(json={})

        @pytest.mark.chaos(virtual_sleep=True)
        async def test_interrupted(chaos):
            raise SystemExit(3)
        """
    )
    pytester.makeini("[pytest]\nasyncio_mode = auto\n")
    result = pytester.runpytest()
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*setup broke*"])
    # The conftest guard checks time and sleep after this test; here: respx and the loop class.
    assert respx.mocks.HTTPCoreMocker.routers == []
    loop = asyncio.new_event_loop()
    try:
        assert type(loop).time.__qualname__.endswith("BaseEventLoop.time")
    finally:
        loop.close()
