"""The parcel assistant (parcel_tracker.py) against a scripted Anthropic endpoint: the team's
real, unmodified pydantic-ai agent, its real ``AnthropicModel`` and the real ``anthropic``
SDK underneath.

Run it with `pytest examples/real_pydantic_ai_anthropic --chaos-profile=flaky`.

Nothing in the agent is wrapped or injected: ``chaos.provider("anthropic", respond=...)``
answers the Messages API at api.anthropic.com on the run's router (the SDK's HTTP client,
``httpx2``, goes through it; pydantic-ai streams), and only Claude's answers are scripted:
:func:`claude` reads the conversation it is sent, calls ``track_parcel``, then
``delivery_window`` when the parcel is out for delivery, then gives the structured report
(pydantic-ai's ``final_result`` tool). Every wire attempt is a model call in the trace, and
the plan's model faults arrive as Anthropic sends them (a 429 with ``retry-after``, a 5xx, a
read timeout, a refused connection), so it is the anthropic SDK's own retry loop (2 retries by
default) that rides them out, waiting on virtual time (``virtual_sleep``).

When a turn's every attempt fails, pydantic-ai raises its own ``ModelAPIError``
(``ModelHTTPError`` for a status, ``ModelConnectionError`` for a transport failure) with the
SDK's exception as ``__cause__``; the team's fail-fast configuration (``max_retries=0``) gets
there on the first 429: an expected failure, the last test.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

if any(importlib.util.find_spec(m) is None for m in ("pydantic_ai", "anthropic")):
    if os.environ.get("AGENTCHAOS_REQUIRE_FRAMEWORKS") == "1":
        raise RuntimeError("pydantic-ai and anthropic are required here")
    pytest.skip("pydantic-ai with anthropic is not installed", allow_module_level=True)

import itertools
import json
import math
import re
from typing import Any

import anthropic
import freezegun.api
from parcel_tracker import MODEL, ParcelReport, ask, parcel_agent
from pydantic_ai.exceptions import ModelAPIError, ModelHTTPError

from pytest_agentchaos import Chaos
from pytest_agentchaos.inject.providers import ParsedRequest
from pytest_agentchaos.inject.scripted import ProviderEndpoint
from pytest_agentchaos.trace import FaultInjected, ModelCall, ModelResult

OUT_FOR_DELIVERY = "Where is my parcel PX-1042?"
REPORT = ParcelReport(
    tracking_number="PX-1042",
    status="out_for_delivery",
    delivery_window="14:00-16:00",
    message="Your parcel left the Leeds depot at 07:42 and arrives 14:00-16:00 today.",
)
#: The model turns a successful run answers: track_parcel, delivery_window, final_result.
TURNS = 3
#: The faults that fail a wire attempt (latency only slows it).
FAILURES = ("timeout", "http_error", "rate_limit", "connection_error")


def wall_clock() -> float:
    """Real seconds: under ``virtual_sleep`` ``time.perf_counter`` reads the virtual clock,
    and so does any name bound to it (freezegun rebinds them): freezegun's own stays real."""
    return freezegun.api.real_perf_counter()


def tool_results(request: ParsedRequest) -> dict[str, Any]:
    """What each tool returned in the conversation, by tool name."""
    names = {
        call["id"]: call["name"]
        for message in request.messages
        for call in message.get("tool_calls", ())
    }
    results = {}
    for message in request.messages:
        if message["role"] == "tool":
            content = message["content"]
            name = names[message["tool_call_id"]]
            results[name] = json.loads(content) if content.startswith("{") else content
    return results


def claude(request: ParsedRequest) -> dict[str, Any]:
    """The scripted model: reads the question and the tool results it has been sent."""
    question = next(m["content"] for m in request.messages if m["role"] == "user")
    number = re.search(r"PX-\d+", question).group()
    done = tool_results(request)
    if "track_parcel" not in done:
        return {"tool_calls": [{"name": "track_parcel", "arguments": {"tracking_number": number}}]}
    parcel = done["track_parcel"]
    if parcel["status"] == "out_for_delivery" and "delivery_window" not in done:
        depot = {"depot": parcel["depot"]}
        return {"tool_calls": [{"name": "delivery_window", "arguments": depot}]}
    window = done.get("delivery_window")
    report = {
        "tracking_number": number,
        "status": parcel["status"],
        "delivery_window": window,
        "message": f"Your parcel left the {parcel['depot']} depot at {parcel['last_scan']} "
        f"and arrives {window} today.",
    }
    return {"tool_calls": [{"name": "final_result", "arguments": report}]}


def ask_or_model_error(agent: Any) -> tuple[ParcelReport | None, ModelAPIError | None]:
    """The report, or pydantic-ai's error when a turn's every attempt failed."""
    try:
        return ask(agent, OUT_FOR_DELIVERY), None
    except ModelAPIError as exc:
        assert isinstance(exc.__cause__, anthropic.APIError)  # the SDK's own, underneath
        return None, exc


def model_faults(chaos: Chaos) -> list[FaultInjected]:
    return [f for f in chaos.trace.faults() if f.channel == "model" and f.kind in FAILURES]


def assert_each_attempt_its_own_model_call(chaos: Chaos, endpoint: ProviderEndpoint) -> None:
    """Every wire attempt is a model call; every failed one was sent again, unchanged, by the
    SDK (its retry), unless it was the last the SDK would make."""
    calls, results = chaos.trace.of_type(ModelCall), chaos.trace.of_type(ModelResult)
    assert len(calls) == len(results) == len(endpoint.requests)
    assert {c.model for c in calls} == {MODEL}
    assert all(r.stream for r in endpoint.requests)  # pydantic-ai streams Anthropic's answers
    failed = [i for i, r in enumerate(results) if not r.ok]
    assert len(failed) == len(model_faults(chaos))  # each failure an injected one
    assert len(endpoint.requests) == endpoint.calls + len(failed)
    for i in failed:
        if i + 1 < len(endpoint.requests):  # the retry: the same conversation again
            assert endpoint.requests[i + 1].messages == endpoint.requests[i].messages


@pytest.mark.chaos(virtual_sleep=True)
@pytest.mark.must_halt(max_model_calls=3 * TURNS)
def test_the_agent_reports_under_the_session_profile(chaos: Chaos) -> None:
    endpoint = chaos.provider("anthropic", respond=claude)
    report, error = ask_or_model_error(parcel_agent())
    assert_each_attempt_its_own_model_call(chaos, endpoint)
    if error is None:
        assert report == REPORT
        assert endpoint.calls == TURNS
    else:  # three failures in a row on one turn: the SDK's 2 retries were not enough
        assert [r.ok for r in chaos.trace.of_type(ModelResult)[-3:]] == [False] * 3
    if model_faults(chaos):  # the SDK retried: more wire attempts than answered turns
        assert len(endpoint.requests) > endpoint.calls
    else:
        assert report == REPORT and len(endpoint.requests) == TURNS


# not searched: asserts the 529 it declares on the 2nd attempt
@pytest.mark.chaos(
    virtual_sleep=True,
    faults=[{"kind": "http_error", "status": 529, "nth": 2, "channels": ["model"]}],
    explore=False,
)
def test_an_overload_is_retried_by_the_sdk_as_a_model_call_of_its_own(chaos: Chaos) -> None:
    """The session's profile, plus Anthropic's 529 ``overloaded_error`` on the second attempt,
    so the retry always runs."""
    endpoint = chaos.provider("anthropic", respond=claude)
    report, error = ask_or_model_error(parcel_agent())
    assert_each_attempt_its_own_model_call(chaos, endpoint)
    second = chaos.trace.of_type(ModelResult)[1]
    assert (second.ok, second.error_type) == (False, "overloaded_error")
    assert len(endpoint.requests) > endpoint.calls
    assert error is not None or report == REPORT


# not searched: asserts the 20 s 429 it declares on the 1st attempt
@pytest.mark.chaos(
    profile="rate_limited",
    virtual_sleep=True,
    faults=[{"kind": "rate_limit", "retry_after": 20, "first": 1, "channels": ["model"]}],
    explore=False,
)
def test_the_sdk_waits_the_retry_after_on_virtual_time(chaos: Chaos) -> None:
    """rate_limited: 40% of attempts get a 429 with a Retry-After of 5-30 s (and the first
    one a 20 s one, so there is always one to honour). Anthropic sends it in whole seconds;
    the SDK sleeps exactly that long before its retry, on the virtual clock."""
    endpoint = chaos.provider("anthropic", respond=claude)
    started = wall_clock()
    report, error = ask_or_model_error(parcel_agent())
    wall = wall_clock() - started
    assert_each_attempt_its_own_model_call(chaos, endpoint)
    calls = chaos.trace.of_type(ModelCall)
    limits = {f.index: math.ceil(f.detail["retry_after"]) for f in model_faults(chaos)}
    assert limits[1] == 20
    waited = 0
    for call, after in itertools.pairwise(calls):
        if call.index in limits:  # the SDK's retry came exactly Retry-After later
            assert after.t - call.t == pytest.approx(limits[call.index])
            waited += limits[call.index]
    assert waited >= 20  # the run's only waits: the Retry-Afters, virtual
    assert chaos.clock.now() == pytest.approx(waited, abs=0.01)
    assert wall < 5 < waited  # the SDK's waits cost no wall time
    if error is None:
        assert report == REPORT
    else:  # 429 three times in a row: the SDK gave up, pydantic-ai says so
        assert isinstance(error, ModelHTTPError) and error.status_code == 429
        assert isinstance(error.__cause__, anthropic.RateLimitError)


@pytest.mark.xfail(
    strict=True,
    raises=ModelHTTPError,
    reason="the fail-fast client (max_retries=0) does not retry a 429: anthropic.RateLimitError "
    "reaches pydantic-ai, which raises ModelHTTPError (a ModelRateLimitError, status 429)",
)
@pytest.mark.chaos(
    profile="none",
    faults=[{"kind": "rate_limit", "retry_after": 5, "first": 1, "channels": ["model"]}],
)
def test_the_fail_fast_client_does_not_survive_a_429(chaos: Chaos) -> None:
    chaos.provider("anthropic", respond=claude)
    ask(parcel_agent(max_retries=0), OUT_FOR_DELIVERY)
