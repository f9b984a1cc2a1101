"""The LangGraph ReAct agent's chaos suite: `pytest examples/langgraph_react --chaos-profile=flaky`.

The marker's fault keeps the live rates service down for its first calls whatever the session
profile adds, so the naive ReAct loop (ask again on every error) gets caught in a loop: the
supervised agent must escape it, the naive one is stopped by LangGraph's recursion_limit.
"""

from __future__ import annotations

import pytest
from langgraph.errors import GraphRecursionError
from react_rates_agent import (
    RatesPolicy,
    ask,
    cached_rates,
    fallback_chain,
    get_rates,
    naive_agent,
    supervised_agent,
)

from pytest_agentchaos import Chaos
from pytest_agentchaos.adapters.caps import record_cap
from pytest_agentchaos.adapters.langchain import chaos_middleware
from pytest_agentchaos.escape import Supervisor
from pytest_agentchaos.trace import Intervention, ToolCall

DOWN = {"kind": "http_error", "status": 503, "tools": ["get_rates"], "first": 40}


# not searched: asserts the cached answer the rates API it declares down forces
@pytest.mark.chaos(faults=[DOWN], explore=False)
@pytest.mark.must_escape(within_steps=5)
@pytest.mark.must_halt(max_steps=60)
def test_supervised_agent_falls_back_to_the_cache(chaos: Chaos) -> None:
    live, cache = chaos.wrap_tools([get_rates, cached_rates])
    supervisor = Supervisor.for_run(chaos, **fallback_chain(cache))
    agent = supervised_agent(RatesPolicy(), [live, cache], supervisor, chaos_middleware(chaos))
    assert ask(agent) == "250 EUR is 267.50 USD (cached rates)"
    actions = [e.action for e in chaos.trace.of_type(Intervention)]
    assert "breaker" in actions and "fallback" in actions


@pytest.mark.xfail(strict=True, reason="the naive ReAct loop asks for the failing call forever")
@pytest.mark.chaos(faults=[DOWN])
@pytest.mark.must_escape(within_steps=5)
def test_naive_agent_does_not_escape(chaos: Chaos) -> None:
    tools = chaos.wrap_tools([get_rates, cached_rates])
    ask(naive_agent(RatesPolicy(), tools, chaos_middleware(chaos)), recursion_limit=30)


# not searched: asserts the cap hit by the rates API it declares down
@pytest.mark.chaos("none", faults=[DOWN], explore=False)
def test_recursion_limit_is_recorded_as_the_frameworks_halt(chaos: Chaos) -> None:
    tools = chaos.wrap_tools([get_rates, cached_rates])
    agent = naive_agent(RatesPolicy(), tools, chaos_middleware(chaos))
    with pytest.raises(GraphRecursionError) as caught:
        ask(agent, recursion_limit=12)
    halt = record_cap(chaos, caught.value)
    assert halt is not None and halt.hard
    assert halt.detail["by"] == "framework" and halt.detail["limit"] == 12
    assert chaos.trace.hard_halts() == [halt]
    # what the cap cut short: the same failing call, asked for again at every turn
    calls = chaos.trace.of_type(ToolCall)
    assert len(calls) == halt.detail["tool_calls"] > 1
    assert {(c.tool, c.args["base"]) for c in calls} == {("get_rates", "EUR")}
