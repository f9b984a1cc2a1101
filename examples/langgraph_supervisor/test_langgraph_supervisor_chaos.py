"""The langgraph-supervisor research team's chaos suite (research_team.py).

Run it with `pytest examples/langgraph_supervisor --chaos-profile=flaky`.

The team's one `ChatOpenAI` object goes under chaos once (`chaos_model`): the supervisor and
both workers call it, and each of them is its own target in the trace (`supervisor`,
`analyst`, `librarian`). An injected failure is the exception `ChatOpenAI` raises for it
(`OpenAIRateLimitError`, `OpenAIAPIError` ...), so the team's own `ModelRetryMiddleware`,
`ModelFallbackMiddleware` and LangGraph `RetryPolicy` handle it as in production. The
workers' tools go through `chaos_middleware`, last in each worker's middleware list so that
`ToolRetryMiddleware` sees its faults. Backoff sleeps run on virtual time.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

if any(
    importlib.util.find_spec(m) is None
    for m in ("langchain", "langgraph_supervisor", "langchain_openai", "httpx2")
):
    if os.environ.get("AGENTCHAOS_REQUIRE_FRAMEWORKS") == "1":
        raise RuntimeError("the langchain extra is required here")
    pytest.skip("the langchain extra is not installed", allow_module_level=True)

from typing import Any

from research_team import ANSWER, BACKUP, ask, research_team, team_model

from pytest_agentchaos import Chaos
from pytest_agentchaos.adapters.langchain import chaos_middleware, chaos_model
from pytest_agentchaos.trace import ModelCall, ModelResult

AGENTS = {"supervisor", "analyst", "librarian"}


def team(chaos: Chaos) -> Any:
    """The team with its model, the analyst's backup (a target of its own, named) and its
    workers' tools under chaos."""
    model = chaos_model(chaos, team_model())
    backup = chaos_model(chaos, team_model(BACKUP), name="analyst-backup")
    return research_team(model, backup, [chaos_middleware(chaos)])


def each_agent_its_own_target(chaos: Chaos) -> None:
    calls = [c for c in chaos.trace.of_type(ModelCall) if c.model != "analyst-backup"]
    assert {c.agent for c in calls} == AGENTS  # every agent's calls, named
    assert all(c.model == c.agent for c in calls)  # one target per agent


@pytest.mark.chaos(virtual_sleep=True)
@pytest.mark.must_halt(max_steps=200, max_seconds=3600)
def test_the_team_answers_under_the_session_profile(chaos: Chaos) -> None:
    assert ask(team(chaos)) == ANSWER
    each_agent_its_own_target(chaos)


# not searched: asserts the two 429s it declares on the analyst
@pytest.mark.chaos(
    profile="none",
    virtual_sleep=True,
    faults=[{"kind": "rate_limit", "retry_after": 20, "tools": ["analyst"], "first": 2}],
    explore=False,
)
def test_openais_rate_limits_are_retried_by_the_analysts_middleware(chaos: Chaos) -> None:
    assert ask(team(chaos)) == ANSWER
    failed = [r for r in chaos.trace.of_type(ModelResult) if not r.ok]
    assert [(r.model, r.error_type) for r in failed] == [("analyst", "OpenAIRateLimitError")] * 2
    # ModelRetryMiddleware backs off on its own schedule (1 s, then 2 s, +-25%): LangChain
    # does not read the 429's Retry-After (20 s) that OpenAI's error carries
    assert 2.0 < chaos.clock.now() < 20


# not searched: asserts the four 503s it declares, then the backup
@pytest.mark.chaos(
    profile="none",
    virtual_sleep=True,
    faults=[{"kind": "http_error", "status": 503, "tools": ["analyst"], "first": 4}],
    explore=False,
)
def test_the_analyst_falls_back_to_the_backup_model_when_its_retries_run_out(
    chaos: Chaos,
) -> None:
    assert ask(team(chaos)) == ANSWER
    analyst = [
        (r.model, r.error_type) for r in chaos.trace.of_type(ModelResult) if r.model != "supervisor"
    ]
    # four attempts (ModelRetryMiddleware: 1 + 3 retries), then the backup model's turn; the
    # analyst's next turn is the main model's again (the fallback is per call)
    assert analyst[:6] == [("analyst", "OpenAIAPIError")] * 4 + [
        ("analyst-backup", None), ("analyst", None)
    ]  # fmt: skip
    backup = [c for c in chaos.trace.of_type(ModelCall) if c.model == "analyst-backup"]
    assert [c.agent for c in backup] == ["analyst"]


# The spiral profile's model faults: half the model calls answered with the agent's previous
# answer in other words, a fifth word for word. (Not the whole profile: its garbled_output may
# truncate the supervisor's final answer, which no team can notice; that is not this test's point.)
SPIRAL_MODEL_FAULTS = [
    {"kind": "paraphrased_output", "channels": ["model"], "probability": 0.5},
    {"kind": "repeated_output", "channels": ["model"], "probability": 0.2},
]


# not searched: asserts on the replays seed 1 (a seed that replays) draws from its faults
@pytest.mark.chaos(profile="none", faults=SPIRAL_MODEL_FAULTS, seed=1, explore=False)
@pytest.mark.must_halt(max_steps=300)
def test_stateful_faults_replay_each_agent_only_its_own_answers(chaos: Chaos) -> None:
    """Stateful model faults answer a call with the agent's previous answer: the supervisor
    may hand off again, a worker may call its tool again, but no agent is ever handed another
    agent's answer, and the team still answers."""
    answer = ask(team(chaos))
    assert "25%" in answer and "Lisbon" in answer
    each_agent_its_own_target(chaos)
    replayed = [f for f in chaos.trace.faults() if f.channel == "model"]
    assert replayed, "the profile replayed no model call: the test proves nothing"
    outputs = {(r.model, r.index): r.output for r in chaos.trace.of_type(ModelResult)}
    for fault in replayed:
        said = str(outputs[(fault.target, fault.index)])
        if fault.target == "supervisor":  # only the supervisor hands off
            assert "-> revenue(" not in said and "-> minutes(" not in said
        else:
            assert "-> transfer_to_" not in said
