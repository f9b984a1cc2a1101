"""The order assistant (order_agent.py) against a scripted OpenAI endpoint: the team's real,
unmodified Agents SDK agent, the SDK's own ``OpenAIResponsesModel`` and the real ``openai``
client underneath.

Run it with `pytest examples/real_openai_agents_responses --chaos-profile=flaky`.

Nothing in the agent is wrapped or injected: ``chaos.provider("openai", respond=...)``
answers the Responses API at api.openai.com on the run's router (the SDK's HTTP client,
``httpx2``, goes through it), and only the model's answers are scripted: :func:`gpt` reads the
conversation it is sent, calls ``get_order_status``, then answers from the tool's output.
Every wire attempt is a model call in the trace, and the plan's model faults arrive as
OpenAI sends them (a 429 with ``retry-after``, a 5xx, a read timeout, a refused connection),
so it is the openai client's own retry loop (2 retries by default; the Agents SDK leaves
retries to it unless the agent sets ``ModelSettings.retry``) that rides them out, waiting on
virtual time (``virtual_sleep``).

When a turn's every attempt fails, ``Runner.run_sync`` raises the openai SDK's own error
unchanged; the team's fail-fast configuration (``max_retries=0``) gets there on the first
503: an expected failure, the last test.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

# `agents` must be the openai-agents package (another top-level `agents` has no `agents.run`)
if importlib.util.find_spec("agents") is None or importlib.util.find_spec("agents.run") is None:
    if os.environ.get("AGENTCHAOS_REQUIRE_FRAMEWORKS") == "1":
        raise RuntimeError("the openai-agents extra is required here")
    pytest.skip("the openai-agents extra is not installed", allow_module_level=True)

import ast
import itertools
import re
from typing import Any

import freezegun.api
import openai
from order_agent import MODEL, ask, order_agent

from pytest_agentchaos import Chaos
from pytest_agentchaos.inject.providers import ParsedRequest
from pytest_agentchaos.inject.scripted import ProviderEndpoint
from pytest_agentchaos.trace import FaultInjected, ModelCall, ModelResult

QUESTION = "Where is my order A-1001?"
ANSWER = "Order A-1001 has shipped with DHL and should arrive on Thursday."
#: The model turns a successful run answers: get_order_status, the answer.
TURNS = 2
#: The faults that fail a wire attempt (latency only slows it).
FAILURES = ("timeout", "http_error", "rate_limit", "connection_error")


def wall_clock() -> float:
    """Real seconds: under ``virtual_sleep`` ``time.perf_counter`` reads the virtual clock,
    and so does any name bound to it (freezegun rebinds them): freezegun's own stays real."""
    return freezegun.api.real_perf_counter()


def gpt(request: ParsedRequest) -> dict[str, Any]:
    """The scripted model: reads the question and the tool output it has been sent (the
    Agents SDK sends a tool's dict as its ``str()``)."""
    question = next(m["content"] for m in request.messages if m["role"] == "user")
    order_id = re.search(r"[A-Z]-\d{4}", question).group()
    outputs = [m["content"] for m in request.messages if m["role"] == "tool"]
    if not outputs:
        return {"tool_calls": [{"name": "get_order_status", "arguments": {"order_id": order_id}}]}
    order = ast.literal_eval(outputs[-1])
    if order["status"] != "shipped":
        return {"content": f"Order {order_id} is {order['status']}."}
    return {
        "content": f"Order {order_id} has shipped with {order['carrier']} and should arrive "
        f"on {order['eta']}."
    }


def ask_or_sdk_error(agent: Any) -> tuple[str | None, openai.APIError | None]:
    """The answer, or the SDK's own error when a turn's every attempt failed."""
    try:
        return ask(agent, QUESTION), None
    except openai.APIError as exc:
        return None, exc


def model_faults(chaos: Chaos) -> list[FaultInjected]:
    return [f for f in chaos.trace.faults() if f.channel == "model" and f.kind in FAILURES]


def assert_each_attempt_its_own_model_call(chaos: Chaos, endpoint: ProviderEndpoint) -> None:
    """Every wire attempt is a model call on the Responses API; every failed one was sent
    again, unchanged, by the SDK (its retry), unless it was the last the SDK would make."""
    calls, results = chaos.trace.of_type(ModelCall), chaos.trace.of_type(ModelResult)
    assert len(calls) == len(results) == len(endpoint.requests)
    assert {c.model for c in calls} == {MODEL}
    assert {r.api for r in endpoint.requests} == {"openai.responses"}
    failed = [i for i, r in enumerate(results) if not r.ok]
    assert len(failed) == len(model_faults(chaos))  # each failure an injected one
    assert len(endpoint.requests) == endpoint.calls + len(failed)
    for i in failed:
        if i + 1 < len(endpoint.requests):  # the retry: the same conversation again
            assert endpoint.requests[i + 1].messages == endpoint.requests[i].messages


@pytest.mark.chaos(virtual_sleep=True)
@pytest.mark.must_halt(max_model_calls=3 * TURNS)
def test_the_agent_answers_under_the_session_profile(chaos: Chaos) -> None:
    endpoint = chaos.provider("openai", respond=gpt)
    answer, error = ask_or_sdk_error(order_agent())
    assert_each_attempt_its_own_model_call(chaos, endpoint)
    if error is None:
        assert answer == ANSWER
        assert endpoint.calls == TURNS
    else:  # three failures in a row on one turn: the SDK's 2 retries were not enough
        assert [r.ok for r in chaos.trace.of_type(ModelResult)[-3:]] == [False] * 3
    if model_faults(chaos):  # the SDK retried: more wire attempts than answered turns
        assert len(endpoint.requests) > endpoint.calls
    else:
        assert answer == ANSWER and len(endpoint.requests) == TURNS


# not searched: asserts the timeout it declares on the 2nd attempt
@pytest.mark.chaos(
    virtual_sleep=True,
    faults=[{"kind": "timeout", "seconds": 60, "nth": 2, "channels": ["model"]}],
    explore=False,
)
def test_a_read_timeout_is_retried_by_the_sdk_as_a_model_call_of_its_own(chaos: Chaos) -> None:
    """The session's profile, plus a read timeout on the second attempt (the answer does not
    come for 60 s), so the retry always runs."""
    endpoint = chaos.provider("openai", respond=gpt)
    answer, error = ask_or_sdk_error(order_agent())
    assert_each_attempt_its_own_model_call(chaos, endpoint)
    calls, results = chaos.trace.of_type(ModelCall), chaos.trace.of_type(ModelResult)
    assert (results[1].ok, results[1].error_type) == (False, "ReadTimeout")
    assert calls[2].t >= calls[1].t + 60  # the retry came after the 60 virtual seconds
    assert len(endpoint.requests) > endpoint.calls
    assert error is not None or answer == ANSWER


# not searched: asserts the 20 s 429 it declares on the 1st attempt
@pytest.mark.chaos(
    profile="rate_limited",
    virtual_sleep=True,
    faults=[{"kind": "rate_limit", "retry_after": 20, "first": 1, "channels": ["model"]}],
    explore=False,
)
def test_the_sdk_waits_the_retry_after_on_virtual_time(chaos: Chaos) -> None:
    """rate_limited: 40% of attempts get a 429 with a Retry-After of 5-30 s (and the first
    one a 20 s one, so there is always one to honour). The SDK sleeps exactly that long
    (``retry-after-ms``, which it prefers) before its retry, on the virtual clock."""
    endpoint = chaos.provider("openai", respond=gpt)
    started = wall_clock()
    answer, error = ask_or_sdk_error(order_agent())
    wall = wall_clock() - started
    assert_each_attempt_its_own_model_call(chaos, endpoint)
    calls = chaos.trace.of_type(ModelCall)
    limits = {f.index: f.detail["retry_after"] for f in model_faults(chaos)}
    assert limits[1] == 20
    waited = 0.0
    for call, after in itertools.pairwise(calls):
        if call.index in limits:  # the SDK's retry came exactly Retry-After later
            assert after.t - call.t == pytest.approx(limits[call.index], abs=1e-3)
            waited += limits[call.index]
    assert waited >= 20  # the run's only waits: the Retry-Afters, virtual
    assert chaos.clock.now() == pytest.approx(waited, abs=0.01)
    assert wall < 5 < waited  # the SDK's waits cost no wall time
    if error is None:
        assert answer == ANSWER
    else:  # 429 three times in a row: the SDK gave up with its own error
        assert isinstance(error, openai.RateLimitError)


@pytest.mark.xfail(
    strict=True,
    raises=openai.InternalServerError,
    reason="the fail-fast client (max_retries=0) does not retry a 503: the openai SDK's "
    "InternalServerError comes out of Runner.run_sync unchanged",
)
@pytest.mark.chaos(
    profile="none",
    faults=[{"kind": "http_error", "status": 503, "first": 1, "channels": ["model"]}],
)
def test_the_fail_fast_client_does_not_survive_a_503(chaos: Chaos) -> None:
    chaos.provider("openai", respond=gpt)
    ask(order_agent(max_retries=0), QUESTION)
