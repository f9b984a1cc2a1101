"""Budgets enforced at runtime by ChaosSession, step counting, counters, and determinism:
the same seed and call sequence give the same trace, and a trace's schedule replays."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.clock import VirtualClock
from pytest_agentchaos.errors import BudgetExhausted, HardHalt
from pytest_agentchaos.faults import parse_faults
from pytest_agentchaos.inject import Chaos, ChaosSession, InjectedFault
from pytest_agentchaos.inject.callables import wrap
from pytest_agentchaos.profiles import Budgets, inline_profile
from pytest_agentchaos.trace import BudgetExhaustedEvent, RunEnded, Step, Trace


def runaway(fn, limit=1000):
    """An agent loop that swallows every Exception and keeps going."""
    for _ in range(limit):
        try:
            fn()
        except Exception:
            continue
    raise AssertionError("the loop was never stopped")


# -- BudgetExhausted is a hard halt --------------------------------------------------------


class TestHardHalt:
    def test_is_base_exception_not_exception(self):
        exc = BudgetExhausted("max_steps", 3, 4)
        assert isinstance(exc, BaseException)
        assert isinstance(exc, HardHalt)
        assert not isinstance(exc, Exception)
        assert (exc.budget, exc.limit, exc.count) == ("max_steps", 3, 4)
        assert exc.detail == {"budget": "max_steps", "limit": 3, "count": 4}
        assert str(exc) == "budget max_steps exhausted: 4 > limit 3"

    def test_fractional_message(self):
        assert "90.500 > limit 60" in str(BudgetExhausted("max_seconds", 60.0, 90.5))

    def test_except_exception_loop_is_stopped(self, make_chaos):
        ran = []
        chaos = make_chaos(budgets=Budgets(max_tool_calls=5))
        tool = chaos.wrap(lambda: ran.append(1), name="t")
        with pytest.raises(BudgetExhausted):
            runaway(tool)
        assert len(ran) == 5


# -- each budget ------------------------------------------------------------------------------


class TestBudgets:
    def test_max_steps(self, make_chaos):
        ran = []
        chaos = make_chaos(budgets=Budgets(max_steps=3))
        tool = chaos.wrap(lambda: ran.append(1), name="t")
        tool(), tool(), tool()
        with pytest.raises(BudgetExhausted) as info:
            tool()
        assert (info.value.budget, info.value.limit, info.value.count) == ("max_steps", 3, 4)
        assert len(ran) == 3
        # the refused call is not recorded as a call
        assert len(chaos.trace.tool_calls()) == 3

    def test_max_steps_counts_model_calls_and_explicit_steps(self, make_chaos):
        chaos = make_chaos(budgets=Budgets(max_steps=4))
        tool = chaos.wrap(lambda: 1, name="t")
        model = chaos.model(lambda p: p)
        assert chaos.step("plan") == 1
        tool()
        model("x")
        assert chaos.step() == 4
        with pytest.raises(BudgetExhausted) as info:
            chaos.step("one too many")
        assert info.value.budget == "max_steps"

    def test_max_tool_calls_ignores_model_calls(self, make_chaos):
        chaos = make_chaos(budgets=Budgets(max_tool_calls=2))
        tool = chaos.wrap(lambda: 1, name="t")
        model = chaos.model(lambda p: p)
        for _ in range(5):
            model("x")
        tool(), tool()
        with pytest.raises(BudgetExhausted) as info:
            tool()
        assert (info.value.budget, info.value.limit, info.value.count) == ("max_tool_calls", 2, 3)
        assert chaos.session.model_calls == 5

    def test_max_tool_calls_counts_all_tools_together(self, make_chaos):
        chaos = make_chaos(budgets=Budgets(max_tool_calls=3))
        a, b = chaos.wrap(lambda: 1, name="a"), chaos.wrap(lambda: 2, name="b")
        a(), b(), a()
        with pytest.raises(BudgetExhausted):
            b()

    def test_max_model_calls_ignores_tool_calls(self, make_chaos):
        calls = []
        chaos = make_chaos(budgets=Budgets(max_model_calls=2))
        tool = chaos.wrap(lambda: 1, name="t")
        model = chaos.model(lambda p: calls.append(p))
        for _ in range(5):
            tool()
        model("a"), model("b")
        with pytest.raises(BudgetExhausted) as info:
            model("c")
        assert (info.value.budget, info.value.count) == ("max_model_calls", 3)
        assert calls == ["a", "b"]

    def test_max_seconds_with_timeout_fault_stops_on_third_call(self, make_chaos):
        ran = []
        chaos = make_chaos({"kind": "timeout", "seconds": 30}, budgets=Budgets(max_seconds=60))
        tool = chaos.wrap(lambda: ran.append(1), name="search")
        outcomes = []
        with pytest.raises(BudgetExhausted) as info:
            for _ in range(10):
                try:
                    tool()
                except Exception as exc:
                    outcomes.append(type(exc).__name__)
        assert outcomes == ["InjectedTimeout", "InjectedTimeout"]
        assert len(chaos.trace.tool_calls()) == 3
        assert (info.value.budget, info.value.limit, info.value.count) == ("max_seconds", 60, 90)
        assert ran == []
        assert chaos.clock.now() == 90

    def test_max_seconds_with_latency(self, make_chaos):
        ran = []
        chaos = make_chaos({"kind": "latency", "seconds": 25}, budgets=Budgets(max_seconds=60))
        tool = chaos.wrap(lambda: ran.append(1), name="t")
        tool(), tool()
        with pytest.raises(BudgetExhausted):
            tool()
        assert len(ran) == 2  # the third call was stopped during its delay

    def test_max_seconds_from_session_sleep(self, make_chaos):
        chaos = make_chaos(budgets=Budgets(max_seconds=10))
        chaos.session.sleep(10)  # exactly at the limit is fine
        with pytest.raises(BudgetExhausted) as info:
            chaos.session.sleep(0.5)
        assert info.value.budget == "max_seconds"

    def test_max_seconds_stops_virtual_time_sleep(self, make_chaos):
        chaos = make_chaos(budgets=Budgets(max_seconds=100), virtual_sleep=True)
        sleeps = 0
        with pytest.raises(BudgetExhausted):
            for _ in range(100):
                try:
                    time.sleep(30)  # an agent's backoff, made virtual
                    sleeps += 1
                except Exception:
                    continue
        assert sleeps == 3
        assert chaos.clock.now() == 120

    def test_max_seconds_is_virtual_time_only(self, make_chaos):
        chaos = make_chaos(budgets=Budgets(max_seconds=0.001))
        tool = chaos.wrap(lambda: sum(range(10000)), name="t")
        for _ in range(20):
            tool()  # real time passes, virtual time does not
        assert chaos.session.halted is None

    def test_seconds_count_from_session_start(self):
        clock = VirtualClock()
        clock.advance(1000)
        with Chaos.create(clock=clock, budgets=Budgets(max_seconds=50)) as chaos:
            assert chaos.session.now() == 0
            chaos.session.sleep(40)
            assert chaos.session.counters()["seconds"] == 40

    def test_max_tokens(self, make_chaos):
        chaos = make_chaos(budgets=Budgets(max_tokens=100))
        model = chaos.model(lambda p: {"usage": {"total_tokens": 45}})
        model("a"), model("b")
        with pytest.raises(BudgetExhausted) as info:
            model("c")
        assert (info.value.budget, info.value.limit, info.value.count) == ("max_tokens", 100, 135)

    def test_create_budgets_override_profile_budgets(self):
        profile = inline_profile("p", budgets=Budgets(max_steps=2, max_tool_calls=1))
        with Chaos.create(profile=profile, budgets=Budgets(max_tool_calls=5)) as chaos:
            assert chaos.budgets == Budgets(max_steps=2, max_tool_calls=5)
            tool = chaos.wrap(lambda: 1, name="t")
            tool(), tool()
            with pytest.raises(BudgetExhausted) as info:
                tool()
        assert info.value.budget == "max_steps"
        assert chaos.trace.meta["budgets"] == {"max_steps": 2, "max_tool_calls": 5}

    def test_no_budgets_means_unlimited(self, make_chaos):
        chaos = make_chaos()
        tool = chaos.wrap(lambda: 1, name="t")
        for _ in range(500):
            tool()
        chaos.session.sleep(10**6)
        assert chaos.session.halted is None


# -- after the halt ---------------------------------------------------------------------------


class TestSticky:
    def test_later_calls_raise_again_and_event_recorded_once(self, make_chaos):
        ran = []
        chaos = make_chaos(budgets=Budgets(max_steps=2))
        tool = chaos.wrap(lambda: ran.append(1), name="t")
        other = chaos.wrap(lambda: ran.append(2), name="other")
        model = chaos.model(lambda p: ran.append(p))
        tool(), tool()
        for fn in (tool, other, lambda: model("x"), chaos.step, tool):
            with pytest.raises(BudgetExhausted) as info:
                fn()
            assert (info.value.budget, info.value.limit, info.value.count) == ("max_steps", 2, 3)
        assert ran == [1, 1]
        (event,) = chaos.trace.budget_exhausted()
        assert isinstance(event, BudgetExhaustedEvent)
        assert (event.budget, event.limit, event.count) == ("max_steps", 2, 3)
        assert event.to_dict()["type"] == "BudgetExhausted"
        assert chaos.session.halted is not None
        assert chaos.session.halted.budget == "max_steps"

    async def test_async_tools_sticky(self, make_chaos):
        ran = []

        async def t():
            ran.append(1)

        chaos = make_chaos(budgets=Budgets(max_tool_calls=1))
        tool = chaos.wrap(t)
        await tool()
        for _ in range(3):
            with pytest.raises(BudgetExhausted):
                await tool()
        assert ran == [1]
        assert len(chaos.trace.budget_exhausted()) == 1

    def test_run_ended_status_halted(self):
        with pytest.raises(BudgetExhausted), Chaos.create(budgets=Budgets(max_steps=1)) as chaos:
            chaos.step()
            chaos.step()
        ended = chaos.trace[-1]
        assert isinstance(ended, RunEnded) and ended.status == "halted"

    def test_run_ended_status_completed(self):
        with Chaos.create(budgets=Budgets(max_steps=1)) as chaos:
            chaos.step()
        assert chaos.trace[-1].status == "completed"
        assert len(chaos.trace.of_type(RunEnded)) == 1
        chaos.session.end()
        assert len(chaos.trace.of_type(RunEnded)) == 1  # written once

    @settings(max_examples=25, deadline=None)
    @given(limit=st.integers(min_value=1, max_value=50))
    def test_never_more_than_max_steps_calls(self, limit):
        ran = []
        with Chaos.create(budgets=Budgets(max_steps=limit)) as chaos:
            tool = chaos.wrap(lambda: ran.append(1), name="t")
            with pytest.raises(BudgetExhausted):
                runaway(tool, limit=limit + 10)
        assert len(ran) == limit
        (event,) = chaos.trace.budget_exhausted()
        assert (event.limit, event.count) == (limit, limit + 1)
        assert chaos.session.steps == limit

    @settings(max_examples=25, deadline=None)
    @given(limit=st.integers(min_value=1, max_value=30), faulty=st.booleans())
    def test_never_more_than_max_tool_calls_even_when_failing(self, limit, faulty):
        faults = parse_faults([{"kind": "connection_error", "every": 2}], "t") if faulty else ()
        with Chaos.create(faults=faults, budgets=Budgets(max_tool_calls=limit)) as chaos:
            tool = chaos.wrap(lambda: None, name="t")
            with pytest.raises(BudgetExhausted):
                runaway(tool, limit=limit + 10)
        assert len(chaos.trace.tool_calls()) == limit
        assert chaos.session.tool_calls == limit


# -- steps and counters --------------------------------------------------------------------


class TestStepsAndCounters:
    def test_step_returns_index_and_records_event(self, make_chaos):
        chaos = make_chaos()
        assert chaos.step("think") == 1
        assert chaos.step() == 2
        steps = chaos.trace.of_type(Step)
        assert [(s.step, s.label) for s in steps] == [(1, "think"), (2, None)]

    def test_events_carry_step_index_and_virtual_time(self, make_chaos):
        chaos = make_chaos({"kind": "latency", "seconds": 2, "tools": "slow"})
        slow = chaos.wrap(lambda: 1, name="slow")
        fast = chaos.wrap(lambda: 2, name="fast")
        chaos.step("plan")
        slow()
        fast()
        rows = [(type(e).__name__, e.step, e.t) for e in list(chaos.trace)[1:]]
        assert rows == [
            ("Step", 1, 0.0),
            ("ToolCall", 2, 0.0),
            ("FaultInjected", 2, 0.0),
            ("ToolResult", 2, 2.0),
            ("ToolCall", 3, 2.0),
            ("ToolResult", 3, 2.0),
        ]
        assert chaos.trace.steps == 3
        assert chaos.trace.elapsed == 2.0

    def test_counters(self, make_chaos):
        chaos = make_chaos({"kind": "timeout", "seconds": 7, "nth": 1, "tools": "t"})
        tool = chaos.wrap(lambda: 1, name="t")
        model = chaos.model(lambda p: {"usage": {"total_tokens": 11}})
        assert chaos.session.counters() == {
            "steps": 0,
            "tool_calls": 0,
            "model_calls": 0,
            "tokens": 0,
            "seconds": 0.0,
        }
        with pytest.raises(TimeoutError):
            tool()
        tool()
        model("a"), model("b")
        chaos.step()
        assert chaos.session.counters() == {
            "steps": 5,
            "tool_calls": 2,
            "model_calls": 2,
            "tokens": 22,
            "seconds": 7.0,
        }

    def test_session_usable_without_chaos(self):
        """ChaosSession is the runtime on its own: production code can wrap with it."""
        session = ChaosSession(budgets=Budgets(max_tool_calls=1), seed=3, test_id="prod")
        tool = wrap(session, lambda x: x * 2, name="double")
        assert tool(4) == 8
        with pytest.raises(BudgetExhausted):
            tool(5)
        assert session.trace.meta["seed"] == 3 and session.trace.meta["test"] == "prod"
        assert [e.type_name for e in session.trace] == [
            "RunStarted",
            "ToolCall",
            "ToolResult",
            "BudgetExhausted",
        ]
        session.close()


# -- determinism -------------------------------------------------------------------------------


CHAOTIC = [
    {"kind": "http_error", "status": [500, 502, 503], "probability": 0.3},
    {"kind": "latency", "seconds": [0.5, 4], "probability": 0.3},
    {"kind": "malformed_params", "probability": 0.2, "tools": "book"},
    {"kind": "repeated_output", "probability": 0.2},
    {"kind": "garbled_output", "probability": 0.1},
]


def _scripted_run(seed=0, schedule=None, faults=CHAOTIC, calls=40):
    """Run a fixed call sequence; returns the closed Chaos."""
    specs = parse_faults(faults, "t") if faults else ()
    with Chaos.create(seed=seed, faults=specs, schedule=schedule, test_id="t::run") as chaos:
        search = chaos.wrap(lambda query, limit=3: {"hits": [query] * limit}, name="search")
        book = chaos.wrap(lambda flight, seats=1: {"booked": flight, "seats": seats}, name="book")
        model = chaos.model(lambda p: {"text": p.upper(), "usage": {"total_tokens": len(p)}})
        for i in range(calls):
            try:
                if i % 3 == 0:
                    model(f"turn {i}")
                elif i % 3 == 1:
                    search(f"q{i}", limit=i % 4 + 1)
                else:
                    book(flight=f"TP{i}", seats=i % 3 + 1)
            except (InjectedFault, TypeError):  # TypeError: a malformed call
                pass
    return chaos


class TestDeterminism:
    def test_same_seed_same_trace(self):
        a, b = _scripted_run(seed=7), _scripted_run(seed=7)
        assert a.trace.faults(), "the scripted run should hit some faults"
        assert a.trace.to_json() == b.trace.to_json()
        assert a.trace == b.trace

    def test_different_seed_different_faults(self):
        assert _scripted_run(seed=1).trace.schedule() != _scripted_run(seed=2).trace.schedule()

    def test_trace_round_trips_json(self):
        chaos = _scripted_run(seed=3)
        again = Trace.from_json(chaos.trace.to_json())
        assert again.to_json() == chaos.trace.to_json()
        assert again.schedule() == chaos.trace.schedule()

    def test_schedule_replays_same_faults(self):
        original = _scripted_run(seed=11)
        schedule = original.trace.schedule()
        assert len(schedule) >= 3
        replay = _scripted_run(seed=999, schedule=schedule, faults=None)
        assert replay.plan.replaying
        assert replay.trace.schedule() == schedule

        def outcome(trace):
            return [{k: v for k, v in e.to_dict().items() if k != "fault"} for e in list(trace)[1:]]

        assert outcome(replay.trace) == outcome(original.trace)

    def test_schedule_survives_json(self):
        original = _scripted_run(seed=5)
        schedule = Trace.from_json(original.trace.to_json()).schedule()
        replay = _scripted_run(seed=0, schedule=schedule, faults=CHAOTIC)
        assert replay.trace.to_json().replace('"seed": 0', "") == original.trace.to_json().replace(
            '"seed": 5', ""
        )

    def test_empty_schedule_means_no_faults(self):
        replay = _scripted_run(seed=11, schedule=[], faults=CHAOTIC)
        assert replay.trace.faults() == []

    @settings(max_examples=20, deadline=None)
    @given(seed=st.integers(min_value=0, max_value=2**32 - 1))
    def test_any_seed_is_reproducible(self, seed):
        a = _scripted_run(seed=seed, calls=12)
        b = _scripted_run(seed=seed, calls=12)
        assert a.trace.to_json() == b.trace.to_json()


# -- known problem -----------------------------------------------------------------------------


class TestFrozenTimeAndBudget:
    def test_frozen_time_matches_virtual_clock_after_max_seconds(self):
        chaos = Chaos.create(
            faults=parse_faults([{"kind": "timeout", "seconds": 30}], "t"),
            budgets=Budgets(max_seconds=60),
            freeze_time=True,
        )
        try:
            t0 = time.monotonic()
            tool = chaos.wrap(lambda: 1, name="t")
            with pytest.raises(BudgetExhausted):
                runaway(tool)
            assert chaos.clock.now() == 90
            assert time.monotonic() - t0 == pytest.approx(90)
        finally:
            chaos.close()
