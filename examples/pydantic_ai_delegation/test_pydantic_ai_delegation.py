"""The support desk (pa_delegation_app.py) under chaos: the desk agent and the billing agent it
delegates to, both whole under chaos in one line (``chaos_agent(chaos, desk, billing)``), each
its own target (``desk``, ``billing``; their fallback models ``desk/fallback1``,
``billing/fallback1``), so a fault can aim at one agent's model and a replayed answer is the
agent's own.

Injected model errors are what pydantic-ai raises for the SDKs' own errors (an OpenAI 503 is
a ``ModelOverloadedError`` caused by ``openai.InternalServerError``), so the team's
``FallbackModel`` falls back to Anthropic and its retry hook retries, as in production. The
first test runs under the session's profile (``flaky`` in the main job) and passes whatever
it injects; the others aim one fault at one seam and check the team's answer to it.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

if any(importlib.util.find_spec(m) is None for m in ("pydantic_ai", "openai", "anthropic")):
    if os.environ.get("AGENTCHAOS_REQUIRE_FRAMEWORKS") == "1":
        raise RuntimeError("pydantic-ai, openai and anthropic are required here")
    pytest.skip("pydantic-ai with openai and anthropic is not installed", allow_module_level=True)

from pa_delegation_app import INVOICES, LOOKUP_TIMEOUT, make_team

from pytest_agentchaos import Chaos
from pytest_agentchaos.adapters.pydantic_ai import chaos_agent
from pytest_agentchaos.trace import FaultInjected, ModelCall, ModelResult, ToolResult

QUESTIONS = [(f"What is the status of {invoice}?", status) for invoice, status in INVOICES.items()]


def ask_all(chaos: Chaos, rounds: int = 1) -> list[tuple[str, str]]:
    """(answer, the status it must give) for each question, ``rounds`` times, one team."""
    desk, billing = make_team()
    answers = []
    with chaos_agent(chaos, desk, billing):
        for _ in range(rounds):
            for question, status in QUESTIONS:
                answers.append((desk.run_sync(question).output, status))
    return answers


def agents_of_targets(chaos: Chaos) -> dict[str, set[str | None]]:
    """Each model target, with the agents whose calls it took."""
    seen: dict[str, set[str | None]] = {}
    for call in chaos.trace.of_type(ModelCall):
        seen.setdefault(call.model, set()).add(call.agent)
    return seen


def test_every_answer_is_right_under_the_session_profile(chaos: Chaos) -> None:
    for answer, status in ask_all(chaos, rounds=4):
        assert status in answer
    # each agent's model calls are its own: its OpenAI model, and its Anthropic fallback
    owners = agents_of_targets(chaos)
    assert {"desk": {"desk"}, "billing": {"billing"}}.items() <= owners.items()
    assert {target: agents for target, agents in owners.items() if "/" in target}.items() <= {
        "desk/fallback1": {"desk"},
        "billing/fallback1": {"billing"},
    }.items()
    results = chaos.trace.of_type(ModelResult)
    if any(not r.ok and "/" not in r.model for r in results):  # a first model failed
        assert any(r.ok and r.model.endswith("/fallback1") for r in results)  # its fallback ran


# not searched: asserts every primary call fails with its 503
@pytest.mark.chaos(
    profile="none",
    faults=[{"kind": "http_error", "status": 503, "tools": ["desk", "billing"]}],
    explore=False,
)
def test_an_openai_outage_is_absorbed_by_the_anthropic_fallback(chaos: Chaos) -> None:
    for answer, status in ask_all(chaos):
        assert status in answer
    results = chaos.trace.of_type(ModelResult)
    primaries = [r for r in results if r.model in ("desk", "billing")]
    assert primaries and all(r.error_type == "ModelOverloadedError" for r in primaries)
    assert all(r.ok for r in results if r.model.endswith("/fallback1"))


# not searched: asserts the 429s it declares on calls 1 and 2
@pytest.mark.chaos(
    profile="none",
    faults=[{"kind": "rate_limit", "retry_after": 20, "tools": ["desk*"], "nth": [1, 2]}],
    explore=False,
)
def test_when_both_providers_rate_limit_the_team_hook_retries_the_request(chaos: Chaos) -> None:
    ((answer, status),) = ask_all(chaos)[:1]
    assert status in answer
    desk = [r for r in chaos.trace.of_type(ModelResult) if r.model.startswith("desk")]
    assert [(r.model, r.error_type) for r in desk[:3]] == [
        ("desk", "ModelRateLimitError"),
        ("desk/fallback1", "ModelRateLimitError"),
        ("desk", "ModelRateLimitError"),
    ]


# not searched: asserts the one hang it declares on the first lookup
@pytest.mark.chaos(
    profile="none",
    faults=[{"kind": "timeout", "seconds": 30, "tools": ["lookup_invoice"], "nth": [1]}],
    explore=False,
)
def test_a_hung_lookup_times_out_as_pydantic_ai_times_it_out(chaos: Chaos) -> None:
    (answer, status), *_ = ask_all(chaos)
    assert status in answer
    lookups = [r for r in chaos.trace.of_type(ToolResult) if r.tool == "lookup_invoice"]
    assert (lookups[0].ok, lookups[0].error_type) == (False, "InjectedTimeout")
    assert lookups[1].ok  # the model was told "Timed out after 5.0 seconds." and asked again
    assert LOOKUP_TIMEOUT <= chaos.clock.now() < 30  # the tool's timeout, not the whole hang


# not searched: asserts the one repeat it declares on the desk
@pytest.mark.chaos(
    profile="none",
    faults=[{"kind": "repeated_output", "channels": ["model"], "tools": ["desk"], "nth": [2]}],
    explore=False,
)
def test_a_replayed_desk_answer_is_the_desks_own(chaos: Chaos) -> None:
    (answer, status), *_ = ask_all(chaos)
    assert status in answer
    (fault,) = chaos.trace.of_type(FaultInjected)
    desk = [r.output for r in chaos.trace.of_type(ModelResult) if r.model == "desk"]
    assert desk[1] == desk[0] and desk[0].startswith("-> ask_billing(")  # asked billing again
