"""A parcel-tracking agent on the OpenAI Agents SDK, whose model spirals, and a halt monitor
that stops it before the SDK's ``max_turns`` does.

The model (:class:`StuckModel`, scripted, offline) looks the parcel up, then says the same
thing every turn and asks for the same lookup again: the tracking page never changes. Left
alone the SDK runs it until ``max_turns`` and raises ``MaxTurnsExceeded``. Watched, the run's
:class:`~pytest_agentchaos.halt.HaltMonitor` reads each model turn and tool result from the
chaos trace (``chaos_agent`` puts them there), and :class:`StopOnHalt` (run hooks the SDK
calls after every model answer and tool call) ends the run as soon as the monitor decides.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from agents import (
    Agent,
    Model,
    ModelResponse,
    ModelSettings,
    RunHooks,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from agents.retry import ModelRetryBackoffSettings, ModelRetrySettings, retry_policies
from agents.testing import assistant_message, function_call
from agents.usage import Usage

from pytest_agentchaos import Chaos
from pytest_agentchaos.adapters.openai_agents import chaos_agent
from pytest_agentchaos.halt import HaltDecision, HaltMonitor

set_tracing_disabled(True)

TASK = "Find out where parcel 8812 is and when it will arrive"
#: The SDK's cap on the agent's turns (model calls).
MAX_TURNS = 12


@function_tool
def track_parcel(parcel_id: str) -> str:
    """The tracking page of a parcel."""
    return f"Parcel {parcel_id}: in transit, last scan at the Leipzig hub."


class StuckModel(Model):
    """Looks the parcel up, then says the same thing and asks for the same lookup every turn
    (each time under a new call id, as a real model would). ``calls``: how often it was
    really asked."""

    def __init__(self) -> None:
        self.calls = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        self.calls += 1
        if self.calls == 1:
            text = "I'll look up parcel 8812 on the tracking page."
        else:
            text = "The parcel is still in transit. Let me check the tracking page again."
        output = [
            assistant_message(text, item_id=f"msg-{self.calls}"),
            function_call("track_parcel", {"parcel_id": "8812"}, call_id=f"call-{self.calls}"),
        ]
        usage = Usage(requests=1, input_tokens=120, output_tokens=20, total_tokens=140)
        return ModelResponse(output=output, usage=usage, response_id=None)

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("this example does not stream")
        yield  # pragma: no cover


class Halted(Exception):
    """The halt monitor decided the run must stop (raised by :class:`StopOnHalt`)."""

    def __init__(self, decision: HaltDecision) -> None:
        super().__init__(decision.reason)
        self.decision = decision


class StopOnHalt(RunHooks[Any]):
    """Run hooks that ask ``monitor`` after every model answer and every tool call, and stop
    the run (:class:`Halted`) once it decides to halt."""

    def __init__(self, monitor: HaltMonitor) -> None:
        self.monitor = monitor

    def _check(self) -> None:
        decision = self.monitor.decision
        if decision.halt:
            raise Halted(decision)

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        self._check()

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        self._check()


@dataclass
class Outcome:
    """How a run ended: ``halted`` (the monitor stopped it, ``reason`` says why) or ``done``."""

    status: str
    reason: str = ""
    answer: str = ""


#: The SDK's model retry policy: retry timeouts, dropped connections, 429 and 5xx (the
#: openai SDK's errors, which the SDK's stock policies read).
transient = retry_policies.any(
    retry_policies.network_error(), retry_policies.http_status([429, 500, 502, 503, 504])
)


def parcel_agent(model: Model) -> Agent[Any]:
    """The agent: one tool, and the SDK's own retries of transient model errors."""
    retry = ModelRetrySettings(
        max_retries=6,
        backoff=ModelRetryBackoffSettings(initial_delay=1.0, multiplier=2.0, jitter=False),
        policy=transient,
    )
    return Agent(
        name="parcel tracker",
        instructions="Track the user's parcel and say when it will arrive.",
        model=model,
        model_settings=ModelSettings(retry=retry),
        tools=[track_parcel],
    )


def run(chaos: Chaos, model: Model, *, watched: bool = True) -> Outcome:
    """Run the agent under ``chaos`` (model and tools wrapped by ``chaos_agent``), watched by
    a halt monitor unless ``watched`` is false. Raises ``MaxTurnsExceeded`` when the SDK's cap
    stops it."""
    agent = chaos_agent(chaos, parcel_agent(model))
    hooks = (
        StopOnHalt(HaltMonitor.for_run(chaos, task=TASK, embedder="lexical")) if watched else None
    )
    try:
        result = Runner.run_sync(agent, TASK, max_turns=MAX_TURNS, hooks=hooks)
    except Exception as error:
        halted = halted_by(error)
        if halted is None:
            raise
        return Outcome("halted", reason=str(halted))
    return Outcome("done", answer=str(result.final_output))


def halted_by(error: BaseException) -> Halted | None:
    """The :class:`Halted` that ``error`` is or wraps: the SDK wraps an exception raised by a
    hook during a tool call in a ``UserError`` ("Error running tool ...")."""
    seen: BaseException | None = error
    for _ in range(10):
        if seen is None or isinstance(seen, Halted):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None
