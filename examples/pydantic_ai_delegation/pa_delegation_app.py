"""A support desk of two pydantic-ai agents: a ``desk`` agent that answers customers and
delegates billing questions to a ``billing`` agent (inside its tool, the documented
``await billing.run(..., usage=ctx.usage)``), which looks invoices up.

The team's resilience configuration, which the chaos suite exercises:

- each agent's model is a ``FallbackModel``: an OpenAI model first, an Anthropic model when it
  fails (any ``ModelAPIError``: rate limits, 5xx, timeouts, dropped connections);
- when both fail, a ``Hooks`` capability retries the request (``RetryModelRequest``), up to
  ``MODEL_ATTEMPTS`` attempts;
- every tool has a timeout and retries: a tool that times out, or fails, is a retry prompt to
  the model (pydantic-ai's own for a timeout, the hook's for an error), up to ``TOOL_RETRIES``.

The models are real ``OpenAIChatModel`` / ``AnthropicModel`` objects over real SDK clients,
whose HTTP transport is a scripted endpoint (``httpx2.MockTransport``): offline and
deterministic, with the wire formats of both APIs. Each agent's script is its own: the desk
asks billing, then answers with what billing said; billing looks the invoice up, then reports.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from typing import Any

import httpx2
from anthropic import AsyncAnthropic
from openai import AsyncOpenAI
from pydantic_ai import Agent, ModelRetry, RetryModelRequest, RunContext, Tool
from pydantic_ai.capabilities import Hooks
from pydantic_ai.exceptions import FallbackExceptionGroup, ModelAPIError
from pydantic_ai.models import Model
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider

#: Attempts of one model request (each tries the whole FallbackModel chain).
MODEL_ATTEMPTS = 4
#: Retries of a tool that timed out or failed, before the run gives up.
TOOL_RETRIES = 5
#: Seconds a tool may take: the invoice lookup, and the delegation to billing (a whole run).
LOOKUP_TIMEOUT = 5.0
DELEGATE_TIMEOUT = 60.0

ANTHROPIC_MODEL = "claude-sonnet-4-6"

INVOICES = {"INV-1001": "paid on 2024-03-02", "INV-1002": "overdue since 2024-04-15"}

#: A script's move: ("call", tool, args) or ("say", text). A script gets the question and the
#: tool's result (``None`` before the call, and after a failed one: it calls again).
Move = tuple[str, Any, Any]
Script = Callable[[str, str | None], Move]


def desk_script(question: str, tool_result: str | None) -> Move:
    """The desk: ask billing about the invoice in the question, then answer with its report."""
    if tool_result is None:
        return ("call", "ask_billing", {"question": question})
    return ("say", f"Thanks for waiting. Billing says: {tool_result}")


def billing_script(question: str, tool_result: str | None) -> Move:
    """Billing: look the invoice up, then report its status."""
    invoice = re.search(r"INV-\d+", question)
    if tool_result is None:
        return ("call", "lookup_invoice", {"invoice": invoice.group(0) if invoice else "?"})
    return ("say", f"invoice {tool_result}")


# -- the scripted endpoints: each API's wire format -------------------------------------------

_ids = itertools.count(1)


def _is_error(content: str) -> bool:
    """Whether an OpenAI tool message is pydantic-ai's retry prompt (``{"error": ...}``)."""
    try:
        return "error" in json.loads(content)
    except (ValueError, TypeError):
        return False


def _openai_endpoint(script: Script) -> httpx2.MockTransport:
    def handle(request: httpx2.Request) -> httpx2.Response:
        messages = json.loads(request.content)["messages"]
        question = next(m["content"] for m in messages if m["role"] == "user")
        last = messages[-1]
        result = last["content"] if last["role"] == "tool" else None
        if result is not None and _is_error(result):  # a retry prompt: the script tries again
            result = None
        move = script(question, result)
        n = next(_ids)
        if move[0] == "call":
            call = {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": move[1], "arguments": json.dumps(move[2])},
            }
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": move[1]}, "stop"
        return httpx2.Response(200, json={
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1700000000,
            "model": "gpt-4o", "choices": [{"index": 0, "message": message,
                                            "finish_reason": finish}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 10, "total_tokens": 50},
        })  # fmt: skip

    return httpx2.MockTransport(handle)


def _anthropic_endpoint(script: Script) -> httpx2.MockTransport:
    """Anthropic's Messages API; pydantic-ai streams its requests, so the answer is the
    server-sent events of one message."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        messages = json.loads(request.content)["messages"]
        first = messages[0]["content"]
        question = first if isinstance(first, str) else first[0]["text"]
        last = messages[-1]["content"]
        results = [b for b in last if isinstance(b, dict) and b.get("type") == "tool_result"]
        result = None
        if results and not results[0].get("is_error"):  # an error: the script tries again
            content = results[0]["content"]
            result = content if isinstance(content, str) else content[0]["text"]
        move = script(question, result)
        n = next(_ids)
        if move[0] == "call":
            start = {"type": "tool_use", "id": f"toolu_{n}", "name": move[1], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(move[2])}
            stop = "tool_use"
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": move[1]}
            stop = "end_turn"
        message = {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": ANTHROPIC_MODEL,
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 40, "output_tokens": 1},
        }
        events = [
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start",
             {"type": "content_block_start", "index": 0, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop},
                               "usage": {"output_tokens": 10}}),
            ("message_stop", {"type": "message_stop"}),
        ]  # fmt: skip
        body = "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events)
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=body.encode()
        )

    return httpx2.MockTransport(handle)


def team_model(script: Script) -> FallbackModel:
    """An agent's model: OpenAI first, Anthropic on any ``ModelAPIError`` (the default)."""
    openai = AsyncOpenAI(
        api_key="sk-scripted",
        base_url="https://api.openai.com/v1",
        http_client=httpx2.AsyncClient(transport=_openai_endpoint(script)),
    )
    anthropic = AsyncAnthropic(
        api_key="sk-ant-scripted",
        http_client=httpx2.AsyncClient(transport=_anthropic_endpoint(script)),
    )
    primary: Model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=openai))
    backup: Model = AnthropicModel(
        ANTHROPIC_MODEL, provider=AnthropicProvider(anthropic_client=anthropic)
    )
    return FallbackModel(primary, backup)


# -- the team's retries -----------------------------------------------------------------------


async def retry_model_request(
    ctx: RunContext[Any], *, request_context: Any, error: Exception
) -> Any:
    """When the whole fallback chain failed on transient errors, try the request again."""
    transient = isinstance(error, ModelAPIError) or (
        isinstance(error, FallbackExceptionGroup)
        and all(isinstance(e, ModelAPIError) for e in error.exceptions)
    )
    if transient and request_context.attempt < MODEL_ATTEMPTS:
        raise RetryModelRequest()
    raise error


async def tool_error_to_retry(
    ctx: RunContext[Any], *, call: Any, tool_def: Any, args: Any, error: Exception
) -> Any:
    """A tool that failed is a retry prompt to the model (its retries are counted)."""
    raise ModelRetry(f"{call.tool_name} failed ({type(error).__name__}: {error}); try again")


def resilience() -> Hooks[Any]:
    return Hooks(model_request_error=retry_model_request, tool_execute_error=tool_error_to_retry)


# -- the agents -------------------------------------------------------------------------------


def lookup_invoice(invoice: str) -> str:
    """Look up an invoice's payment status.

    Args:
        invoice: the invoice number, e.g. INV-1001.
    """
    return (
        f"{invoice} is {INVOICES[invoice]}"
        if invoice in INVOICES
        else f"{invoice}: no such invoice"
    )


def make_team() -> tuple[Agent[None, str], Agent[None, str]]:
    """(desk, billing): the desk delegates billing questions to billing."""
    billing = Agent(
        team_model(billing_script),
        name="billing",
        tools=[Tool(lookup_invoice, timeout=LOOKUP_TIMEOUT, max_retries=TOOL_RETRIES)],
        capabilities=[resilience()],
    )

    async def ask_billing(ctx: RunContext[None], question: str) -> str:
        """Ask the billing team about an invoice.

        Args:
            question: the customer's question.
        """
        result = await billing.run(question, usage=ctx.usage)
        return result.output

    desk = Agent(
        team_model(desk_script),
        name="desk",
        tools=[Tool(ask_billing, timeout=DELEGATE_TIMEOUT, max_retries=TOOL_RETRIES)],
        capabilities=[resilience()],
    )
    return desk, billing
