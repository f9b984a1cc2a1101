"""The injection core for calls a framework owns (``Interceptor``): what every adapter relies on."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from pytest_agentchaos import Chaos
from pytest_agentchaos.inject.errors import InjectedFault
from pytest_agentchaos.inject.intercept import Interceptor
from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.trace.events import ToolCall, ToolResult

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
    "required": ["city", "days"],
}


def ends(chaos: Chaos) -> list[tuple[bool, str | None]]:
    return [(r.ok, r.error_type) for r in chaos.trace.of_type(ToolResult)]


def test_a_call_no_fault_hits_runs_once_and_is_recorded() -> None:
    seen: list[Mapping[str, Any]] = []
    with Chaos.create() as chaos:
        core = Interceptor(chaos.session, "forecast", schema=SCHEMA)
        assert (
            core.call({"city": "Oslo", "days": 2}, lambda m: seen.append(m) or "sunny") == "sunny"
        )
    assert seen == [{"city": "Oslo", "days": 2}]
    assert [c.args for c in chaos.trace.of_type(ToolCall)] == [{"city": "Oslo", "days": 2}]
    assert ends(chaos) == [(True, None)]


def test_an_error_fault_never_reaches_the_real_call() -> None:
    ran: list[int] = []
    with Chaos.create(faults=[{"kind": "timeout", "seconds": 30}]) as chaos:
        core = Interceptor(chaos.session, "forecast")
        with pytest.raises(InjectedFault):
            core.call({"city": "Oslo"}, lambda m: ran.append(1))
        assert chaos.clock.now() == pytest.approx(30)  # virtual time
    assert ran == [] and ends(chaos) == [(False, "InjectedTimeout")]


def test_corrupted_arguments_meet_the_framework_check_and_the_error_is_recorded() -> None:
    def check(args: Mapping[str, Any]) -> None:
        if not isinstance(args.get("days"), int):
            raise ValueError("days must be an integer")

    fault = {"kind": "malformed_params", "mutations": "wrong_type"}
    with Chaos.create(faults=[fault], seed=1) as chaos:
        core = Interceptor(chaos.session, "forecast", schema=SCHEMA, check=check)
        with pytest.raises(ValueError, match="days must be"):
            core.call({"city": "Oslo", "days": 2}, lambda m: "never")
    assert ends(chaos) == [(False, "ValueError")]


def test_a_repairer_fixes_corrupted_arguments_before_the_check_would_refuse_them() -> None:
    def check(args: Mapping[str, Any]) -> None:  # pragma: no cover - repair comes instead
        raise AssertionError("the check runs only without a repairer")

    fault = {"kind": "malformed_params", "mutations": "wrong_type"}
    repairer = ParamRepairer(ToolSpec.from_schema("forecast", SCHEMA))
    with Chaos.create(faults=[fault], seed=1) as chaos:
        core = Interceptor(chaos.session, "forecast", schema=SCHEMA, check=check, repairer=repairer)
        got = core.call({"city": "Oslo", "days": 2}, lambda m: dict(m))
    assert got == {"city": "Oslo", "days": 2}
    assert ends(chaos) == [(True, None)]


def test_a_replayed_output_is_returned_without_calling() -> None:
    calls: list[int] = []
    with Chaos.create(faults=[{"kind": "repeated_output", "nth": 2}]) as chaos:
        core = Interceptor(chaos.session, "forecast")
        first = core.call({"city": "Oslo"}, lambda m: calls.append(1) or "rain")
        assert core.call({"city": "Rome"}, lambda m: calls.append(1) or "sun") == first
    assert calls == [1]


def test_a_cancelled_call_still_has_its_end_in_the_trace() -> None:
    async def main(core: Interceptor) -> None:
        async def forever(_: Mapping[str, Any]) -> None:
            await asyncio.Event().wait()

        task = asyncio.ensure_future(core.acall({"city": "Oslo"}, forever))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with Chaos.create() as chaos:
        asyncio.run(main(Interceptor(chaos.session, "forecast")))
    assert ends(chaos) == [(False, "CancelledError")]


def test_a_custom_finish_decides_what_the_caller_gets_and_the_trace_shows() -> None:
    with Chaos.create() as chaos:
        session = chaos.session

        def finish(state: Any, out: Any) -> Any:
            return session.finish_ok(state, out.upper(), recorded=f"said {out}")

        core = Interceptor(session, "echo", finish=finish)
        assert core.call({}, lambda m: "hi") == "HI"
    assert chaos.trace.of_type(ToolResult)[0].output == "said hi"
