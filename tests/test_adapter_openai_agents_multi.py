"""The OpenAI Agents SDK adapter in a multi-agent app, against the real packages (offline):
the openai SDK's own errors at the model seam and the SDK's stock retry policies riding them
out on virtual time; tool timeouts as the SDK's own; ``chaos_agent`` following handoffs and
agents used as tools, every agent its own model target; ``RunConfig(model=chaos_model(...))``
filing each call under its agent; the triage -> FAQ / booking pattern under the ``spiral`` and
``flaky`` profiles for 50 seeds each.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

# `agents` must be the openai-agents package (another top-level `agents` has no `agents.run`)
if importlib.util.find_spec("agents") is None or importlib.util.find_spec("agents.run") is None:
    if os.environ.get("AGENTCHAOS_REQUIRE_FRAMEWORKS") == "1":
        raise RuntimeError(
            "the openai-agents extra is required here (AGENTCHAOS_REQUIRE_FRAMEWORKS=1)"
        )
    pytest.skip("the openai-agents extra is not installed", allow_module_level=True)

import httpx2
import openai
from agents import (
    Agent,
    FunctionTool,
    Handoff,
    MaxTurnsExceeded,
    Model,
    ModelBehaviorError,
    ModelResponse,
    ModelSettings,
    ModelTracing,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    RunContextWrapper,
    Runner,
    ToolTimeoutError,
    function_tool,
    handoff,
    set_tracing_disabled,
)
from agents.handoffs import HandoffInputData
from agents.retry import ModelRetrySettings, RetryPolicyContext, retry_policies
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.usage import Usage

from pytest_agentchaos import Chaos, ProfileRegistry
from pytest_agentchaos.adapters.openai_agents import ChaosModel, chaos_agent, chaos_model
from pytest_agentchaos.errors import ChaosConfigError, HardHalt
from pytest_agentchaos.inject.errors import InjectedFault
from pytest_agentchaos.inject.network import AllowList, NetworkGuard
from pytest_agentchaos.trace.events import (
    FaultInjected,
    ModelCall,
    ModelResult,
    ToolCall,
    ToolResult,
)
from pytest_agentchaos.trace.trace import Trace

set_tracing_disabled(True)

NO_IDS: dict[str, Any] = {"previous_response_id": None, "conversation_id": None, "prompt": None}
SDK_ERROR = "An error occurred while running the tool. Please try again."


def say(text: str) -> Any:
    return assistant_message(text)


def call(tool: str, args: Any, call_id: str) -> Any:
    return function_call(tool, args, call_id=call_id)


def items_of(input: Any) -> list[dict[str, Any]]:
    """The conversation a model is given, as plain dicts."""
    if isinstance(input, str):
        return [{"role": "user", "content": input}]
    return [i if isinstance(i, dict) else i.model_dump() for i in input]


Decide = Callable[[list[dict[str, Any]], int], Sequence[Any]]


class Brain(Model):
    """A scripted model that reads its conversation: ``decide(items, n)`` is its ``n``-th
    answer. ``calls`` counts how often it was really asked."""

    def __init__(self, decide: Decide) -> None:
        self.decide = decide
        self.calls = 0
        self.inputs: list[list[dict[str, Any]]] = []
        self.offered: list[list[str]] = []  # the handoffs offered, by tool name

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        n, self.calls = self.calls, self.calls + 1
        items = items_of(input)
        self.inputs.append(items)
        handoffs = kwargs.get("handoffs", args[3] if len(args) > 3 else [])
        self.offered.append([h.tool_name for h in handoffs])
        usage = Usage(requests=1, input_tokens=10, output_tokens=5, total_tokens=15)
        return ModelResponse(output=list(self.decide(items, n)), usage=usage, response_id=None)

    async def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        raise NotImplementedError("use ScriptedModel for streams")
        yield


def answering(text: str) -> Brain:
    return Brain(lambda items, n: [say(text)])


def question_of(items: list[dict[str, Any]]) -> str:
    for item in items:
        if item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            return " ".join(str(p.get("text", "")) for p in content or [])
    return ""


def last_output(items: list[dict[str, Any]]) -> tuple[str | None, str]:
    """(tool name, output) of the conversation's last item when it is a tool's output."""
    if not items or items[-1].get("type") != "function_call_output":
        return None, ""
    names = {i.get("call_id"): i.get("name") for i in items if i.get("type") == "function_call"}
    last = items[-1]
    return names.get(last.get("call_id")), str(last.get("output"))


def called(items: list[dict[str, Any]], name: str) -> int:
    return sum(1 for i in items if i.get("type") == "function_call" and i.get("name") == name)


# -- the customer-service app: triage -> FAQ / seat booking, a seat map agent as a tool ---------

TRIAGE, FAQ, BOOKING, SEAT_MAP = "Triage Agent", "FAQ Agent", "Seat Booking Agent", "Seat Map"
AGENTS = {TRIAGE, FAQ, BOOKING, SEAT_MAP}
QUESTIONS = (
    "How many bags can I bring on board?",
    "Please move me to seat 12A.",
    "What is the wifi password on the Mars shuttle?",  # FAQ hands it back to triage
)


def triage_brain(items: list[dict[str, Any]], n: int) -> list[Any]:
    if called(items, "transfer_to_triage_agent"):
        return [say("Sorry, I cannot help with that question.")]
    if "seat" in question_of(items).lower():
        return [call("transfer_to_seat_booking_agent", {}, f"triage-{n}")]
    return [call("transfer_to_faq_agent", {}, f"triage-{n}")]


def faq_brain(items: list[dict[str, Any]], n: int) -> list[Any]:
    name, out = last_output(items)
    question = question_of(items)
    if name == "faq_lookup":
        if out.startswith("Answer: "):
            return [say(out.removeprefix("Answer: "))]
        if out.startswith("No answer"):
            return [call("transfer_to_triage_agent", {}, f"faq-{n}")]
        if called(items, "faq_lookup") >= 3:
            return [say("Sorry, the FAQ is unavailable right now.")]
    return [call("faq_lookup", {"question": question}, f"faq-{n}")]


def booking_brain(items: list[dict[str, Any]], n: int) -> list[Any]:
    name, out = last_output(items)
    if name == "check_seat_map" and "free" in out:
        return [call("update_seat", {"seat": "12A"}, f"booking-{n}")]
    if name == "update_seat" and "confirmed" in out:
        return [say("Your seat is now 12A.")]
    if name is not None and called(items, str(name)) >= 3:
        return [say("Sorry, I could not change your seat.")]
    if name == "update_seat":
        return [call("update_seat", {"seat": "12A"}, f"booking-{n}")]
    return [call("check_seat_map", {"input": "Is seat 12A free?"}, f"booking-{n}")]


def seat_map_brain(items: list[dict[str, Any]], n: int) -> list[Any]:
    name, out = last_output(items)
    if name == "seat_map":
        return [say(out)]
    return [call("seat_map", {"seat": "12A"}, f"map-{n}")]


@function_tool(timeout=10)
async def faq_lookup(question: str) -> str:
    """Look a question up in the airline's FAQ."""
    if "bag" in question.lower():
        return "Answer: You may bring one carry-on bag."
    return "No answer in the FAQ."


@function_tool
def seat_map(seat: str) -> str:
    """Whether a seat is free."""
    return f"Seat {seat} is free."


@function_tool
def update_seat(seat: str) -> str:
    """Move the passenger to a seat."""
    return f"Seat change to {seat} confirmed."


RETRY = ModelSettings(
    retry=ModelRetrySettings(
        max_retries=6,
        policy=retry_policies.any(
            retry_policies.network_error(),
            retry_policies.http_status([429, 500, 502, 503]),
            retry_policies.retry_after(),
        ),
    )
)


def customer_service() -> Agent[Any]:
    """The triage agent of a fresh app (new scripted models)."""
    seat_map_agent = Agent(
        name=SEAT_MAP, model=Brain(seat_map_brain), model_settings=RETRY, tools=[seat_map]
    )
    faq = Agent(name=FAQ, model=Brain(faq_brain), model_settings=RETRY, tools=[faq_lookup])
    booking = Agent(
        name=BOOKING,
        model=Brain(booking_brain),
        model_settings=RETRY,
        tools=[seat_map_agent.as_tool("check_seat_map", "Ask the seat map."), update_seat],
    )
    triage = Agent(
        name=TRIAGE, model=Brain(triage_brain), model_settings=RETRY, handoffs=[faq, booking]
    )
    faq.handoffs.append(triage)
    booking.handoffs.append(handoff(triage))
    return triage


# -- what a multi-agent trace must show --------------------------------------------------------


def _calls(output: Any) -> list[str]:
    """The tool-call lines of a recorded model turn (what a paraphrase leaves as it was)."""
    text = output if isinstance(output, str) else ""
    return [line for line in text.splitlines() if line.startswith("-> ")]


def cross_agent_problems(trace: Trace) -> list[str]:
    """What breaks "every agent its own target": a model target serving more than one agent,
    or a replayed model turn that its agent never produced before."""
    problems: list[str] = []
    agent_of: dict[tuple[str, int], str | None] = {}
    served: dict[str, set[str | None]] = {}
    for c in trace.of_type(ModelCall):
        agent_of[(c.model, c.index)] = c.agent
        served.setdefault(c.model, set()).add(c.agent)
    for target, agents in served.items():
        if len(agents) != 1:
            problems.append(f"model target {target!r} serves {sorted(map(str, agents))}")
    replayed = {
        (f.target, f.index)
        for f in trace.of_type(FaultInjected)
        if f.channel == "model" and f.kind in ("repeated_output", "paraphrased_output")
    }
    said: dict[str | None, list[list[str]]] = {}
    for r in trace.of_type(ModelResult):
        if not r.ok:
            continue
        agent = agent_of[(r.model, r.index)]
        calls = [line.split("(", 1)[0] for line in _calls(r.output)]
        if (r.model, r.index) in replayed and calls not in said.get(agent, []):
            problems.append(f"{agent} replayed a turn it never said: {calls}")
        said.setdefault(agent, []).append(calls)
    return problems


def assert_agents_named(trace: Trace) -> set[str]:
    """Every model and tool call names its agent; returns the agents seen."""
    calls = [*trace.of_type(ModelCall), *trace.of_type(ToolCall)]
    agents = {c.agent for c in calls}
    assert None not in agents, [c for c in calls if c.agent is None][:3]
    assert agents <= AGENTS, agents
    return {a for a in agents if a is not None}


@pytest.fixture
def no_network() -> Iterator[list[str]]:
    """The network guard of a chaos test, around an in-process loop of runs: refusals."""
    refused: list[str] = []

    def refuse(target: str, via: str) -> BaseException:
        refused.append(f"{target} ({via})")
        return ConnectionRefusedError(f"blocked {target}")

    guard = NetworkGuard(AllowList(), refuse)
    guard.install()
    try:
        yield refused
    finally:
        guard.uninstall()


def run_app(chaos: Chaos, question: str) -> str:
    """One conversation with the app under chaos: its answer, or how the run ended."""
    app = chaos_agent(chaos, customer_service())
    try:
        return str(Runner.run_sync(app, question).final_output)
    except MaxTurnsExceeded:
        return "(max turns)"
    except (openai.APIError, ToolTimeoutError) as error:  # retries ran out: the app says so
        assert isinstance(error, InjectedFault)
        return f"({type(error).__name__})"


# -- native errors at the model seam -------------------------------------------------------------


def ask(model: Model) -> Any:
    """One direct model call (outside any run)."""

    async def go() -> Any:
        ask: Any = model.get_response
        return await ask(None, "hi", ModelSettings(), [], None, [], ModelTracing.DISABLED, **NO_IDS)

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("fault", "error", "status"),
    [
        ({"kind": "rate_limit", "retry_after": 30}, openai.RateLimitError, 429),
        ({"kind": "http_error", "status": 500}, openai.InternalServerError, 500),
        ({"kind": "http_error", "status": 503}, openai.InternalServerError, 503),
        ({"kind": "http_error", "status": 400}, openai.BadRequestError, 400),
        ({"kind": "http_error", "status": 418}, openai.APIStatusError, 418),
        ({"kind": "timeout", "seconds": 30}, openai.APITimeoutError, None),
        ({"kind": "connection_error"}, openai.APIConnectionError, None),
    ],
    ids=["429", "500", "503", "400", "418", "timeout", "connection"],
)
def test_an_injected_model_failure_is_the_openai_sdk_s_own_error(
    fault: dict[str, Any], error: type[BaseException], status: int | None
) -> None:
    model = answering("never")
    faults = [{**fault, "nth": 1, "channels": ["model"]}]
    with Chaos.create(faults=faults) as chaos, pytest.raises(error) as info:
        ask(chaos_model(chaos, model))
    exc = info.value
    assert isinstance(exc, InjectedFault) and type(exc).__name__ == error.__name__
    assert model.calls == 0
    assert str(exc.request.url) == "https://api.openai.com/v1/responses"
    if status is not None:
        assert isinstance(exc, openai.APIStatusError) and exc.status_code == status
    if status == 429:
        assert exc.response.headers["retry-after"] == "30"
        assert exc.response.headers["retry-after-ms"] == "30000"
        assert exc.code == "rate_limit_exceeded"
    if fault["kind"] == "timeout":
        assert isinstance(exc.__cause__, httpx2.ReadTimeout)
    (failed,) = chaos.trace.of_type(ModelResult)
    assert (failed.ok, failed.error_type) == (False, error.__name__)


def _client(handler: Callable[[httpx2.Request], Any]) -> openai.AsyncOpenAI:
    transport = httpx2.MockTransport(handler)
    return openai.AsyncOpenAI(
        api_key="sk-test",
        base_url="http://llm.test/v1",
        http_client=httpx2.AsyncClient(transport=transport),
        max_retries=0,
    )


def test_the_error_s_request_is_the_wrapped_model_s_endpoint() -> None:
    def unreachable(request: httpx2.Request) -> Any:  # pragma: no cover - faults come first
        raise AssertionError("the fault fires before the client sends")

    responses = OpenAIResponsesModel(model="gpt-4o", openai_client=_client(unreachable))
    chat = OpenAIChatCompletionsModel(model="gpt-4o", openai_client=_client(unreachable))
    fault = {"kind": "http_error", "status": 503, "channels": ["model"]}
    urls = []
    with Chaos.create(faults=[fault]) as chaos:
        for model in (responses, chat):
            with pytest.raises(openai.InternalServerError) as info:
                ask(chaos_model(chaos, model))
            urls.append(str(info.value.request.url))
    assert urls == ["http://llm.test/v1/responses", "http://llm.test/v1/chat/completions"]


P = retry_policies
HTTP_5XX = P.http_status([429, 500, 502, 503])


@pytest.mark.parametrize(
    ("fault", "policy", "retried"),
    [
        ({"kind": "rate_limit", "retry_after": 30}, P.http_status([429]), True),
        ({"kind": "rate_limit", "retry_after": 30}, P.retry_after(), True),
        ({"kind": "rate_limit", "retry_after": 30}, P.network_error(), False),
        ({"kind": "http_error", "status": 500}, HTTP_5XX, True),
        ({"kind": "http_error", "status": 503}, HTTP_5XX, True),
        ({"kind": "http_error", "status": 400}, HTTP_5XX, False),
        ({"kind": "timeout", "seconds": 30}, P.network_error(), True),
        ({"kind": "connection_error"}, P.network_error(), True),
        ({"kind": "connection_error"}, P.any(P.never(), P.network_error()), True),
        ({"kind": "http_error", "status": 503}, P.all(HTTP_5XX, P.network_error()), False),
    ],
    ids=[
        "429-http_status",
        "429-retry_after",
        "429-network_error",
        "500",
        "503",
        "400",
        "timeout",
        "connection",
        "any",
        "all",
    ],
)
def test_the_sdk_s_stock_retry_policies_treat_injected_failures_as_real(
    fault: dict[str, Any], policy: Any, retried: bool
) -> None:
    settings = ModelSettings(retry=ModelRetrySettings(max_retries=3, policy=policy))
    model = answering("done")
    with Chaos.create(faults=[{**fault, "nth": 1, "channels": ["model"]}], virtual_sleep=True) as c:
        agent = chaos_agent(c, Agent(name="A", model=model, model_settings=settings))
        if retried:
            result = Runner.run_sync(agent, "go")
            assert result.final_output == "done" and result.context_wrapper.usage.requests == 2
        else:
            with pytest.raises(openai.APIError):
                Runner.run_sync(agent, "go")
    assert model.calls == (1 if retried else 0)
    assert [r.ok for r in c.trace.of_type(ModelResult)] == ([False, True] if retried else [False])


def test_an_injected_retry_after_is_honoured_on_virtual_time() -> None:
    settings = ModelSettings(retry=ModelRetrySettings(max_retries=2, policy=P.retry_after()))
    fault = {"kind": "rate_limit", "retry_after": 30, "nth": 1, "channels": ["model"]}
    with Chaos.create(faults=[fault], virtual_sleep=True) as chaos:
        agent = chaos_agent(
            chaos, Agent(name="A", model=answering("done"), model_settings=settings)
        )
        started = time.perf_counter()
        result = Runner.run_sync(agent, "go")
        elapsed = time.perf_counter() - started
        assert result.final_output == "done" and chaos.clock.now() >= 30
    first, second = chaos.trace.of_type(ModelResult)
    assert first.error_type == "RateLimitError" and second.ok and second.t >= 30
    assert elapsed < 10  # generous: the 30 s wait is virtual


def _ok_response() -> dict[str, Any]:
    text = {"type": "output_text", "text": "hello", "annotations": []}
    message = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
               "content": [text]}  # fmt: skip
    usage = {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7,
             "input_tokens_details": {"cached_tokens": 0},
             "output_tokens_details": {"reasoning_tokens": 0}}  # fmt: skip
    return {"id": "resp_1", "object": "response", "created_at": 0, "status": "completed",
            "model": "gpt-4o", "output": [message], "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [], "usage": usage}  # fmt: skip


RATE_LIMITED = {
    "error": {"message": "Rate limit reached", "type": "requests", "param": None,
              "code": "rate_limit_exceeded"}
}  # fmt: skip


def _provider_suggested_run(*, from_transport: bool) -> dict[str, Any]:
    """A real ``OpenAIResponsesModel`` whose first request is rate limited (Retry-After 30),
    by its transport or by a fault, retried by ``provider_suggested()``: what happened."""
    sent: list[str] = []
    seen: list[BaseException] = []

    async def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(request.url.path)
        if from_transport and len(sent) == 1:
            headers = {"retry-after": "30", "retry-after-ms": "30000"}
            return httpx2.Response(429, headers=headers, json=RATE_LIMITED)
        return httpx2.Response(200, json=_ok_response())

    suggested = P.provider_suggested()

    def policy(context: RetryPolicyContext) -> Any:
        seen.append(context.error)
        return suggested(context)

    model = OpenAIResponsesModel(model="gpt-4o", openai_client=_client(handler))
    settings = ModelSettings(retry=ModelRetrySettings(max_retries=2, policy=policy))
    faults = [] if from_transport else [{"kind": "rate_limit", "retry_after": 30, "nth": 1}]
    with Chaos.create(faults=faults, virtual_sleep=True) as chaos:
        agent = chaos_agent(chaos, Agent(name="A", model=model, model_settings=settings))
        result = Runner.run_sync(agent, "go")
        (error,) = seen
        return {
            "answer": result.final_output,
            "requests": result.context_wrapper.usage.requests,
            "waited": chaos.clock.now(),
            "error": (type(error).__name__, error.status_code, error.code),  # type: ignore[attr-defined]
            "retry-after": error.response.headers["retry-after-ms"],  # type: ignore[attr-defined]
            "url": str(error.request.url),  # type: ignore[attr-defined]
            "results": [(r.ok, r.error_type) for r in chaos.trace.of_type(ModelResult)],
            "http": sent,
        }


def test_provider_suggested_retries_an_injected_error_as_the_same_error_from_the_wire() -> None:
    wire = _provider_suggested_run(from_transport=True)
    injected = _provider_suggested_run(from_transport=False)
    assert wire["http"] == ["/v1/responses", "/v1/responses"]
    assert injected["http"] == ["/v1/responses"]  # the injected one never reached the client
    for key in ("answer", "requests", "waited", "error", "retry-after", "url", "results"):
        assert injected[key] == wire[key], key
    assert injected["answer"] == "hello" and injected["waited"] == 30.0


def test_provider_suggested_does_not_retry_for_a_model_that_gives_no_advice() -> None:
    """A ``Model`` that keeps the base ``get_retry_advice`` gets no advice, injected error or
    real: ``provider_suggested()`` alone never retries it."""
    settings = ModelSettings(retry=ModelRetrySettings(max_retries=2, policy=P.provider_suggested()))
    with Chaos.create(faults=[{"kind": "rate_limit", "nth": 1}], virtual_sleep=True) as chaos:
        agent = chaos_agent(chaos, Agent(name="A", model=answering("x"), model_settings=settings))
        with pytest.raises(openai.RateLimitError):
            Runner.run_sync(agent, "go")


def _streamed(agent: Agent[Any], question: str = "go") -> Any:
    async def go() -> Any:
        streamed = Runner.run_streamed(agent, question)
        async for _ in streamed.stream_events():
            pass
        return streamed

    return asyncio.run(go())


def test_a_streamed_run_retries_a_rate_limit_raised_before_any_content() -> None:
    settings = ModelSettings(retry=ModelRetrySettings(max_retries=2, policy=P.retry_after()))
    scripted = ScriptedModel([[say("streamed answer")]])
    fault = {"kind": "rate_limit", "retry_after": 20, "nth": 1, "channels": ["model"]}
    with Chaos.create(faults=[fault], virtual_sleep=True) as chaos:
        agent = chaos_agent(chaos, Agent(name="A", model=scripted, model_settings=settings))
        streamed = _streamed(agent)
        assert streamed.final_output == "streamed answer" and chaos.clock.now() >= 20
    assert [(r.ok, r.error_type) for r in chaos.trace.of_type(ModelResult)] == [
        (False, "RateLimitError"),
        (True, None),
    ]
    assert len(scripted.calls) == 1


def test_a_streamed_run_without_a_retry_policy_raises_the_native_error() -> None:
    scripted = ScriptedModel([[say("never")]])
    fault = {"kind": "http_error", "status": 502, "nth": 1, "channels": ["model"]}
    with Chaos.create(faults=[fault]) as chaos:
        agent = chaos_agent(chaos, Agent(name="A", model=scripted))
        with pytest.raises(openai.InternalServerError) as info:
            _streamed(agent)
    assert isinstance(info.value, InjectedFault) and info.value.status_code == 502
    assert len(scripted.calls) == 0


# -- tool timeouts are the SDK's own -------------------------------------------------------------

SLOW: list[str] = []


@function_tool(timeout=5)
async def slow(city: str) -> str:
    """A tool with the SDK's timeout."""
    SLOW.append(city)
    return f"fast enough for {city}"


@function_tool(timeout=5, timeout_behavior="raise_exception")
async def slow_raise(city: str) -> str:
    """A tool whose timeout ends the run."""
    SLOW.append(city)
    return "never"


def _late(ctx: Any, error: Exception) -> str:
    assert isinstance(error, ToolTimeoutError)
    return f"the forecast service took over {error.timeout_seconds:g}s"


@function_tool(timeout=5, timeout_error_function=_late)
async def slow_formatted(city: str) -> str:
    """A tool with its own timeout message."""
    SLOW.append(city)
    return "never"


@pytest.fixture(autouse=True)
def _clear() -> None:
    SLOW.clear()


def _tool_run(tool: FunctionTool, fault: dict[str, Any], *, virtual: bool) -> tuple[Any, Chaos]:
    model = Brain(
        lambda items, n: [say("done")] if n else [call(tool.name, {"city": "Oslo"}, "c1")]
    )
    with Chaos.create(
        faults=[{**fault, "nth": 1, "channels": ["tool"]}], virtual_sleep=virtual
    ) as c:
        Runner.run_sync(chaos_agent(c, Agent(name="A", model=model, tools=[tool])), "go")
    return last_output(model.inputs[1])[1], c


@pytest.mark.parametrize("virtual", [True, False], ids=["virtual-loop", "plain-loop"])
@pytest.mark.parametrize("seconds", [30, 2])
def test_a_timeout_fault_on_a_tool_with_a_timeout_is_the_sdk_s_timeout(
    virtual: bool, seconds: int
) -> None:
    """The call hangs past the tool's timeout: the SDK ends it at 5 s (however long the
    fault's hang) and the model reads the SDK's own message."""
    seen, chaos = _tool_run(slow, {"kind": "timeout", "seconds": seconds}, virtual=virtual)
    assert seen == "Tool 'slow' timed out after 5 seconds." and SLOW == []
    (failed,) = chaos.trace.of_type(ToolResult)
    assert (failed.error_type, failed.message, failed.t) == (
        "ToolTimeoutError",
        "Tool 'slow' timed out after 5 seconds.",
        5.0,
    )
    (call_,) = chaos.trace.of_type(ToolCall)
    assert call_.agent == "A"


@pytest.mark.parametrize("virtual", [True, False], ids=["virtual-loop", "plain-loop"])
def test_a_timeout_of_a_raise_exception_tool_ends_the_run_with_tool_timeout_error(
    virtual: bool,
) -> None:
    with pytest.raises(ToolTimeoutError, match="Tool 'slow_raise' timed out after 5 seconds"):
        _tool_run(slow_raise, {"kind": "timeout", "seconds": 30}, virtual=virtual)
    assert SLOW == []


@pytest.mark.parametrize("virtual", [True, False], ids=["virtual-loop", "plain-loop"])
def test_a_tool_s_timeout_error_function_writes_what_the_model_reads(virtual: bool) -> None:
    seen, _ = _tool_run(slow_formatted, {"kind": "timeout", "seconds": 30}, virtual=virtual)
    assert seen == "the forecast service took over 5s"


def test_other_failures_of_a_tool_with_a_timeout_keep_the_tool_s_failure_handling() -> None:
    seen, chaos = _tool_run(slow, {"kind": "http_error", "status": 503}, virtual=True)
    assert seen == SDK_ERROR and SLOW == []
    (failed,) = chaos.trace.of_type(ToolResult)
    assert failed.error_type == "InjectedHTTPError"


def test_a_latency_shorter_than_the_tool_s_timeout_lets_the_tool_answer() -> None:
    seen, chaos = _tool_run(slow, {"kind": "latency", "seconds": 3}, virtual=True)
    assert seen == "fast enough for Oslo" and SLOW == ["Oslo"]
    assert chaos.trace.of_type(ToolResult)[0].t == 3.0


@pytest.mark.parametrize("virtual", [True, False], ids=["virtual-loop", "plain-loop"])
def test_a_latency_longer_than_the_tool_s_timeout_meets_the_sdk_s_timeout(virtual: bool) -> None:
    seen, chaos = _tool_run(slow, {"kind": "latency", "seconds": 8}, virtual=virtual)
    assert seen == "Tool 'slow' timed out after 5 seconds." and SLOW == []
    (ended,) = chaos.trace.of_type(ToolResult)  # the cancelled call still has its end
    assert (ended.error_type, ended.t) == ("ToolTimeoutError", 5.0)


def test_a_model_s_own_timeout_cuts_a_hanging_call_and_the_policy_retries_it() -> None:
    """``ModelSettings(timeout=10)``: a model call that hangs 30 s (a ``timeout`` fault) is
    ended by the SDK at 10 s with its ``ModelTimeoutError``, which ``network_error()``
    retries, as it would a real hang."""
    retry = ModelRetrySettings(max_retries=2, policy=P.network_error())
    settings = ModelSettings(timeout=10, retry=retry)
    fault = {"kind": "timeout", "seconds": 30, "nth": 1, "channels": ["model"]}
    with Chaos.create(faults=[fault], virtual_sleep=True) as chaos:
        agent = chaos_agent(
            chaos, Agent(name="A", model=answering("done"), model_settings=settings)
        )
        assert Runner.run_sync(agent, "go").final_output == "done"
    first, second = chaos.trace.of_type(ModelResult)  # the cut-short call has its end
    assert (first.ok, first.error_type, first.t) == (False, "CancelledError", 10.0)
    assert second.ok and 10 < second.t < 11  # after the policy's short backoff


# -- one line puts the whole app under chaos ---------------------------------------------------


def test_chaos_agent_follows_handoffs_and_agent_tools_and_leaves_the_originals_alone() -> None:
    triage = customer_service()
    faq, booking = triage.handoffs
    assert isinstance(faq, Agent) and isinstance(booking, Agent)
    before = {id(a): (a.model, list(a.tools), list(a.handoffs)) for a in (triage, faq, booking)}
    with Chaos.create() as chaos:
        app = chaos_agent(chaos, triage)
        faq2, booking2 = app.handoffs
        assert isinstance(faq2, Agent) and isinstance(booking2, Agent)
        assert (faq2.name, booking2.name) == (FAQ, BOOKING)
        assert faq2.handoffs == [app]  # the cycle FAQ -> triage closes on the clone
        back = booking2.handoffs[0]
        assert isinstance(back, Handoff) and back._agent_ref is not None
        assert back._agent_ref() is app
        map_tool = booking2.tools[0]
        assert isinstance(map_tool, FunctionTool)
        assert map_tool._agent_instance.name == SEAT_MAP  # type: ignore[attr-defined]
        assert isinstance(map_tool._agent_instance.model, ChaosModel)  # type: ignore[attr-defined]
        for clone in (app, faq2, booking2, map_tool._agent_instance):  # type: ignore[attr-defined]
            assert isinstance(clone.model, ChaosModel)
        answers = [str(Runner.run_sync(app, q).final_output) for q in QUESTIONS]
    assert answers == [
        "You may bring one carry-on bag.",
        "Your seat is now 12A.",
        "Sorry, I cannot help with that question.",
    ]
    after = {id(a): (a.model, list(a.tools), list(a.handoffs)) for a in (triage, faq, booking)}
    assert after == before
    assert all(not isinstance(a.model, ChaosModel) for a in (triage, faq, booking))
    assert assert_agents_named(chaos.trace) == AGENTS
    models = {c.model for c in chaos.trace.of_type(ModelCall)}
    assert models == AGENTS  # each agent its own target, named after it
    assert cross_agent_problems(chaos.trace) == []
    by_tool = {(c.tool, c.agent) for c in chaos.trace.of_type(ToolCall)}
    assert by_tool == {
        ("faq_lookup", FAQ),
        ("check_seat_map", BOOKING),
        ("seat_map", SEAT_MAP),
        ("update_seat", BOOKING),
    }


def test_a_fault_aimed_at_one_agent_hits_only_that_agent() -> None:
    fault = {"kind": "http_error", "status": 503, "tools": ["FAQ*"], "channels": ["model"]}
    with Chaos.create(faults=[fault], virtual_sleep=True) as chaos:
        app = chaos_agent(chaos, customer_service())
        with pytest.raises(openai.InternalServerError):  # retries run out: every call fails
            Runner.run_sync(app, QUESTIONS[0])
    failed = {(r.model, r.error_type) for r in chaos.trace.of_type(ModelResult) if not r.ok}
    assert failed == {(FAQ, "InternalServerError")}
    assert {f.target for f in chaos.trace.of_type(FaultInjected)} == {FAQ}


def test_handoff_objects_keep_their_name_callbacks_filters_and_input_type() -> None:
    handed: list[Any] = []
    filtered: list[int] = []

    def keep_last(data: HandoffInputData) -> HandoffInputData:
        filtered.append(len(data.new_items))
        return data

    from pydantic import BaseModel

    class Reason(BaseModel):
        why: str

    async def on_handoff(ctx: RunContextWrapper[Any], reason: Reason) -> None:
        handed.append(reason.why)

    helper = Agent(name="Helper", model=answering("helped"))
    hidden = Agent(name="Hidden", model=answering("never"))
    brain = Brain(lambda items, n: [call("escalate", {"why": "angry"}, "h1")])
    front = Agent(
        name="Front",
        model=brain,
        handoffs=[
            handoff(
                helper,
                tool_name_override="escalate",
                tool_description_override="Escalate to a human-like helper.",
                on_handoff=on_handoff,
                input_type=Reason,
                input_filter=keep_last,
            ),
            handoff(hidden, is_enabled=lambda ctx, agent: False),
        ],
    )
    with Chaos.create() as chaos:
        app = chaos_agent(chaos, front)
        rebuilt = app.handoffs[0]
        assert isinstance(rebuilt, Handoff)
        original = front.handoffs[0]
        assert isinstance(original, Handoff)
        assert (rebuilt.tool_name, rebuilt.tool_description, rebuilt.input_json_schema) == (
            original.tool_name,
            original.tool_description,
            original.input_json_schema,
        )
        assert rebuilt.input_filter is keep_last
        hidden_handoff = front.handoffs[1]
        assert isinstance(hidden_handoff, Handoff)
        assert app.handoffs[1].is_enabled is hidden_handoff.is_enabled  # type: ignore[union-attr]
        result = Runner.run_sync(app, "I want a human")
        assert result.final_output == "helped" and result.last_agent.name == "Helper"
        assert result.last_agent is not helper  # the clone: its calls are under chaos
    assert handed == ["angry"] and len(filtered) == 1  # on_handoff and input_filter ran
    assert brain.offered == [["escalate"]]  # the disabled handoff stays hidden
    assert [c.model for c in chaos.trace.of_type(ModelCall)] == ["Front", "Helper"]


def test_a_handoff_whose_target_is_known_only_when_it_runs_is_cloned_then() -> None:
    helper = Agent(name="Helper", model=answering("helped"))

    async def pick(ctx: RunContextWrapper[Any], input_json: str | None) -> Agent[Any]:
        return helper

    by_hand = Handoff(
        tool_name="to_helper",
        tool_description="Hand over.",
        input_json_schema={},
        on_invoke_handoff=pick,
        agent_name="Helper",
    )
    front = Agent(
        name="Front",
        model=Brain(lambda items, n: [call("to_helper", {}, "h1")]),
        handoffs=[by_hand],
    )
    with Chaos.create() as chaos:
        result = Runner.run_sync(chaos_agent(chaos, front), "go")
    assert result.final_output == "helped" and result.last_agent is not helper
    calls = [(c.model, c.agent) for c in chaos.trace.of_type(ModelCall)]
    assert calls == [("Front", "Front"), ("Helper", "Helper")]


def test_an_agent_tool_keeps_its_parameters_and_runs_the_clone() -> None:
    extracted: list[str] = []

    async def extract(result: Any) -> str:
        extracted.append(result.last_agent.name)
        return f"[{result.final_output}]"

    inner = Agent(name="Inner", model=answering("inner answer"))
    tool = inner.as_tool(
        "ask_inner", "Ask the inner agent.", custom_output_extractor=extract, max_turns=3
    )
    outer_model = Brain(
        lambda items, n: [say("ok")] if n else [call("ask_inner", {"input": "hi"}, "t1")]
    )
    outer = Agent(name="Outer", model=outer_model, tools=[tool])
    with Chaos.create() as chaos:
        app = chaos_agent(chaos, outer)
        wrapped = app.tools[0]
        assert isinstance(wrapped, FunctionTool)
        assert (wrapped.name, wrapped.description) == ("ask_inner", "Ask the inner agent.")
        assert wrapped.params_json_schema == tool.params_json_schema
        Runner.run_sync(app, "go")
    assert last_output(outer_model.inputs[1])[1] == "[inner answer]" and extracted == ["Inner"]
    assert [(c.model, c.agent) for c in chaos.trace.of_type(ModelCall)] == [
        ("Outer", "Outer"),
        ("Inner", "Inner"),
        ("Outer", "Outer"),
    ]
    assert [(c.tool, c.agent) for c in chaos.trace.of_type(ToolCall)] == [("ask_inner", "Outer")]
    assert tool._agent_instance is inner  # type: ignore[attr-defined]


def test_two_agents_with_one_name_are_two_targets() -> None:
    first = Agent(name="Support", model=answering("first"))
    second = Agent(name="Support", model=answering("second"))
    front = Agent(
        name="Front",
        model=Brain(
            lambda items, n: [call("ask", {"input": "x"}, f"c{n}")] if n < 2 else [say("k")]
        ),
        tools=[first.as_tool("ask", "first"), second.as_tool("ask_again", "second")],
    )
    with Chaos.create() as chaos:
        app = chaos_agent(chaos, front)
        targets = sorted(t._agent_instance.model.name for t in app.tools)  # type: ignore[attr-defined]
    assert targets == ["Support", "Support#2"]
    assert chaos.trace.meta["agents"]["Support#2"] == "Support"


def test_two_different_tools_with_one_name_are_two_targets() -> None:
    @function_tool(name_override="lookup")
    def lookup_a(q: str) -> str:
        """A."""
        return "a"

    @function_tool(name_override="lookup")
    def lookup_b(q: str) -> str:
        """B."""
        return "b"

    b = Agent(name="B", model=answering("b"), tools=[lookup_b])
    a = Agent(name="A", model=answering("a"), tools=[lookup_a], handoffs=[b])
    with Chaos.create() as chaos:
        app = chaos_agent(chaos, a)
        helper = app.handoffs[0]
        assert isinstance(helper, Agent)
        names = [app.tools[0].__chaos_tool__, helper.tools[0].__chaos_tool__]  # type: ignore[union-attr]
    assert names == ["lookup", "lookup#2"]


def test_a_cycle_is_cloned_once_per_agent() -> None:
    a = Agent(name="A", model=answering("a"))
    b = Agent(name="B", model=answering("b"), handoffs=[a])
    a.handoffs = [b, handoff(a)]  # a cycle, and a handoff to itself
    with Chaos.create() as chaos:
        a2 = chaos_agent(chaos, a)
    b2 = a2.handoffs[0]
    assert isinstance(b2, Agent) and b2.handoffs == [a2]
    self_handoff = a2.handoffs[1]
    assert isinstance(self_handoff, Handoff) and self_handoff._agent_ref is not None
    assert self_handoff._agent_ref() is a2
    assert set(chaos.trace.meta["agents"]) == {"A", "B"}


def test_putting_a_clone_under_chaos_again_wraps_the_originals_once() -> None:
    triage = customer_service()
    with Chaos.create() as chaos:
        twice = chaos_agent(chaos, chaos_agent(chaos, triage))
        Runner.run_sync(twice, QUESTIONS[0])
    assert [c.model for c in chaos.trace.of_type(ModelCall)] == [TRIAGE, FAQ, FAQ]
    assert len(chaos.trace.of_type(ToolCall)) == 1
    assert isinstance(twice.model, ChaosModel) and twice.model.model is triage.model


# -- RunConfig(model=chaos_model(...)): each call filed under its agent -------------------------


class Router(Model):
    """One model for every agent of a run (as ``RunConfig(model=...)`` makes it): it answers
    as the agent its system instructions name."""

    def __init__(self) -> None:
        self.brains = {TRIAGE: triage_brain, FAQ: faq_brain, BOOKING: booking_brain,
                       SEAT_MAP: seat_map_brain}  # fmt: skip
        self.calls: dict[str, int] = {}

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        who = str(system_instructions)
        n = self.calls[who] = self.calls.get(who, 0) + 1
        output = self.brains[who](items_of(input), n - 1)
        return ModelResponse(output=list(output), usage=Usage(requests=1), response_id=None)

    async def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        raise NotImplementedError
        yield


def model_free_app() -> Agent[Any]:
    """The customer-service app with no models of its own (the run config gives one)."""
    seat_map_agent = Agent(name=SEAT_MAP, instructions=SEAT_MAP, tools=[seat_map])
    faq = Agent(name=FAQ, instructions=FAQ, tools=[faq_lookup])
    booking = Agent(
        name=BOOKING,
        instructions=BOOKING,
        tools=[seat_map_agent.as_tool("check_seat_map", "Ask the seat map."), update_seat],
    )
    triage = Agent(name=TRIAGE, instructions=TRIAGE, handoffs=[faq, booking])
    faq.handoffs.append(triage)
    return triage


def test_a_run_config_chaos_model_files_each_call_under_the_agent_that_makes_it() -> None:
    with Chaos.create() as chaos:
        config = RunConfig(model=chaos_model(chaos, Router()))
        answers = [
            str(Runner.run_sync(model_free_app(), q, run_config=config).final_output)
            for q in QUESTIONS
        ]
    assert answers[1] == "Your seat is now 12A."  # through the seat map agent, as a tool
    assert {c.model for c in chaos.trace.of_type(ModelCall)} == AGENTS
    assert assert_agents_named(chaos.trace) == AGENTS


def test_a_run_config_chaos_model_replays_each_agent_s_own_turns_only() -> None:
    fault = {"kind": "repeated_output", "channels": ["model"], "probability": 0.3}
    replays = 0
    for seed in range(10):
        with Chaos.create(faults=[fault], seed=seed) as chaos:
            config = RunConfig(model=chaos_model(chaos, Router()))
            for q in QUESTIONS:
                with contextlib.suppress(MaxTurnsExceeded):  # a replay may spiral
                    Runner.run_sync(model_free_app(), q, run_config=config, max_turns=8)
        assert cross_agent_problems(chaos.trace) == []
        replays += len(chaos.trace.of_type(FaultInjected))
    assert replays > 10


def test_a_model_call_outside_a_run_is_filed_under_model() -> None:
    """No agent is running: the call's target is ``"model"``, and the trace says why. (In a
    run the agent is known even when the run config leaves turn spans out: its agent span
    names it.)"""
    with Chaos.create() as chaos:
        ask(chaos_model(chaos, answering("x")))
        config = RunConfig(
            model=chaos_model(chaos, Router()), tracing={"include_task_and_turn_spans": False}
        )
        Runner.run_sync(model_free_app(), QUESTIONS[0], run_config=config)
    assert [c.model for c in chaos.trace.of_type(ModelCall)] == ["model", TRIAGE, FAQ, FAQ]
    assert any("filed under target 'model'" in n for n in chaos.trace.meta["notes"])


def test_a_chaos_model_with_a_name_keeps_it_and_names_the_agent() -> None:
    with Chaos.create() as chaos:
        config = RunConfig(model=chaos_model(chaos, Router(), name="gpt"))
        Runner.run_sync(model_free_app(), QUESTIONS[0], run_config=config)
    calls = chaos.trace.of_type(ModelCall)
    assert {c.model for c in calls} == {"gpt"} and {c.agent for c in calls} == {TRIAGE, FAQ}


# -- the app under the spiral and flaky profiles, 50 seeds each ----------------------------------

SEEDS = range(50)


def _profile_runs(profile: str, *, shared: bool = False) -> tuple[list[str], list[str], set[str]]:
    """(answers, trace problems, agents seen) of the app under ``profile``, seeds 0..49."""
    registry = ProfileRegistry.default()
    answers: list[str] = []
    problems: list[str] = []
    seen: set[str] = set()
    for seed in SEEDS:
        with Chaos.create(registry.get(profile), seed=seed, virtual_sleep=True) as chaos:
            if shared:  # the old behaviour: every agent's model calls under one target
                chaos.session.agent_target = lambda name, owner, channel="model": (  # type: ignore[method-assign]
                    "model" if channel == "model" else name
                )
            try:
                answers.append(run_app(chaos, QUESTIONS[seed % len(QUESTIONS)]))
            except ModelBehaviorError as error:
                answers.append(f"(ModelBehaviorError: {error})")
            problems.extend(f"seed {seed}: {p}" for p in cross_agent_problems(chaos.trace))
            seen |= assert_agents_named(chaos.trace)
    return answers, problems, seen


@pytest.mark.parametrize("profile", ["spiral", "flaky"])
def test_the_customer_service_app_has_no_cross_agent_replays(
    profile: str, no_network: list[str]
) -> None:
    answers, problems, seen = _profile_runs(profile)
    assert problems == []
    assert [a for a in answers if "ModelBehaviorError" in a or "not found" in a] == []
    assert no_network == []
    assert seen == AGENTS
    assert sum(a.startswith("(") for a in answers) < len(answers) // 2  # mostly answered


def test_the_old_shared_model_target_fails_the_checker(no_network: list[str]) -> None:
    answers, problems, _ = _profile_runs("spiral", shared=True)
    assert any("serves" in p for p in problems)
    assert any("never said" in p for p in problems)
    assert any("not found in agent" in a for a in answers)  # another agent's tool call
    assert no_network == []


# -- hostile and wrong inputs ---------------------------------------------------------------------


def test_wrong_arguments_are_refused_in_one_line() -> None:
    with Chaos.create() as chaos:
        with pytest.raises(TypeError, match="needs an Agents SDK Agent"):
            chaos_agent(chaos, "triage")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="model must be an Agents SDK Model instance"):
            chaos_agent(chaos, Agent(name="a"), model="gpt-4o")  # type: ignore[arg-type]
        with pytest.raises(ChaosConfigError, match="chaos_agent\\(\\): name"):
            chaos_agent(chaos, Agent(name="a", model=answering("x")), name="")
        with pytest.raises(ChaosConfigError, match="chaos_model\\(\\): name"):
            chaos_model(chaos, answering("x"), name="")
        helper = Agent(name="Helper", model="gpt-4o")
        front = Agent(name="Front", model=answering("x"), handoffs=[helper])
        with pytest.raises(TypeError, match="agent 'Helper' has model 'gpt-4o'"):
            chaos_agent(chaos, front)
        with pytest.raises(TypeError, match="needs a Chaos"):
            chaos_agent(object(), front)


def test_agents_without_a_model_use_the_model_given() -> None:
    helper = Agent(name="Helper", model="gpt-4o", instructions=FAQ)
    front = Agent(name="Front", model=answering("x"), handoffs=[helper])
    with Chaos.create() as chaos:
        app = chaos_agent(chaos, front, model=Router())
    helper2 = app.handoffs[0]
    assert isinstance(helper2, Agent) and isinstance(helper2.model, ChaosModel)
    assert isinstance(helper2.model.model, Router) and helper2.model.name == "Helper"
    assert isinstance(app.model, ChaosModel) and isinstance(app.model.model, Router)


def test_odd_agent_and_model_names_are_targets_like_any() -> None:
    class Odd(Brain):
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    odd = Agent(name="", model=Odd(lambda items, n: [say("ok")]))
    glob = Agent(name="*[x]?", model=answering("ok"))
    with Chaos.create() as chaos:
        Runner.run_sync(chaos_agent(chaos, odd), "go")
        Runner.run_sync(chaos_agent(chaos, glob), "go")
        assert "ChaosModel" in repr(chaos_agent(chaos, odd).model)
    assert [c.model for c in chaos.trace.of_type(ModelCall)] == ["agent", "*[x]?"]


def test_a_hostile_on_handoff_error_reaches_the_run_as_it_would() -> None:
    def broken(ctx: RunContextWrapper[Any]) -> None:
        raise LookupError("no such queue")

    helper = Agent(name="Helper", model=answering("x"))
    front = Agent(
        name="Front",
        model=Brain(lambda items, n: [call("transfer_to_helper", {}, "h1")]),
        handoffs=[handoff(helper, on_handoff=broken)],
    )
    with Chaos.create() as chaos, pytest.raises(LookupError, match="no such queue"):
        Runner.run_sync(chaos_agent(chaos, front), "go")


def test_an_agent_that_swallows_model_errors_still_leaves_them_in_the_trace() -> None:
    fault = {"kind": "http_error", "status": 500, "channels": ["model"]}
    with Chaos.create(faults=[fault], virtual_sleep=True) as chaos:
        app = chaos_agent(chaos, customer_service())
        with contextlib.suppress(Exception):  # the hostile agent swallows everything
            Runner.run_sync(app, QUESTIONS[0])
    failed = chaos.trace.of_type(ModelResult)
    assert len(failed) == 7  # the first try and the retry policy's 6
    assert {(r.model, r.ok, r.error_type) for r in failed} == {
        (TRIAGE, False, "InternalServerError")
    }


def test_a_hard_halt_is_not_swallowed_by_the_retry_policy() -> None:
    from pytest_agentchaos.profiles.budgets import Budgets

    fault = {"kind": "http_error", "status": 503, "channels": ["model"]}
    with Chaos.create(faults=[fault], budgets=Budgets(max_model_calls=3), virtual_sleep=True) as c:
        app = chaos_agent(c, customer_service())
        with pytest.raises(HardHalt, match="max_model_calls"):
            Runner.run_sync(app, QUESTIONS[0])


def test_an_agent_tool_of_an_unknown_layout_is_wrapped_and_says_its_agent_is_not() -> None:
    """An agent tool whose implementation is not the SDK's own (here: wrapped by hand): the
    tool's calls are under chaos, its nested run is the original agent's, the trace says so."""
    inner = Agent(name="Inner", model=answering("inner answer"))
    tool = inner.as_tool("ask_inner", "Ask the inner agent.")
    impl = tool.on_invoke_tool._invoke_tool_impl  # type: ignore[attr-defined]

    async def by_hand(ctx: Any, input_json: str) -> Any:
        return await impl(ctx, input_json)

    tool.on_invoke_tool._invoke_tool_impl = by_hand  # type: ignore[attr-defined]
    outer_model = Brain(
        lambda items, n: [say("ok")] if n else [call("ask_inner", {"input": "hi"}, "t1")]
    )
    with Chaos.create() as chaos:
        app = chaos_agent(chaos, Agent(name="Outer", model=outer_model, tools=[tool]))
        assert app.tools[0]._agent_instance is inner  # type: ignore[union-attr]
        Runner.run_sync(app, "go")
    assert last_output(outer_model.inputs[1])[1] == "inner answer"
    assert [c.model for c in chaos.trace.of_type(ModelCall)] == ["Outer", "Outer"]
    assert [c.tool for c in chaos.trace.of_type(ToolCall)] == ["ask_inner"]
    (note,) = [n for n in chaos.trace.meta["notes"] if "ask_inner" in n]
    assert "starts with the original agent 'Inner'" in note


def test_a_hand_built_tool_with_a_timeout_times_out_as_the_sdk_s() -> None:
    async def echo(ctx: Any, input_json: str) -> str:
        SLOW.append(input_json)
        return input_json

    schema = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    by_hand = FunctionTool(
        "echo", "Echo.", schema, echo, timeout_seconds=5, timeout_behavior="raise_exception"
    )
    with pytest.raises(ToolTimeoutError, match="Tool 'echo' timed out after 5 seconds"):
        _tool_run(by_hand, {"kind": "timeout", "seconds": 30}, virtual=False)
    assert SLOW == []


def test_wrap_tool_refuses_an_agent_that_is_not_a_name() -> None:
    from pytest_agentchaos.adapters.openai_agents import wrap_tool

    with Chaos.create() as chaos, pytest.raises(TypeError, match="agent must be an agent's name"):
        wrap_tool(chaos.session, slow, agent=Agent(name="a"))  # type: ignore[arg-type]
