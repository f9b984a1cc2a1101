"""A langgraph-supervisor research team on ONE ``ChatOpenAI`` model object.

The supervisor (built by ``create_supervisor``) hands the task to two ``create_agent``
workers, then answers from what they report:

- ``analyst`` reads the revenue figures (``revenue`` tool) and says how revenue grew. Its
  middleware: ``ModelFallbackMiddleware`` (a backup model), ``ModelRetryMiddleware``
  (retryable model errors, with backoff) and ``ToolRetryMiddleware``.
- ``librarian`` reads the board minutes (``minutes`` tool). Its middleware: model and tool
  retries.
- The supervisor's own model calls, and a worker whose retries ran out, are retried by
  LangGraph's ``RetryPolicy`` on every node of the team's graph (``set_node_defaults``).

The model is a real ``ChatOpenAI`` (the ``openai`` SDK, LangChain's OpenAI error classes) whose
HTTP client answers from a script instead of the network (:func:`scripted_openai`): it plays
each agent from the agent's system prompt, so the same model object serves all three.
"""

from __future__ import annotations

import itertools
import json
import warnings
from collections.abc import Sequence
from typing import Any

import httpx2
from langchain.agents import create_agent
from langchain.agents.middleware import (
    ModelFallbackMiddleware,
    ModelRetryMiddleware,
    ToolRetryMiddleware,
)
from langchain_core.exceptions import ModelError
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.types import RetryPolicy

with warnings.catch_warnings():  # langgraph-supervisor builds on LangGraph's deprecated prebuilt
    warnings.simplefilter("ignore", DeprecationWarning)
    from langgraph_supervisor import create_supervisor

TASK = "How did revenue grow in 2025, and what did the board decide?"
ANSWER = "Revenue grew 25% in 2025 (12.5 after 10.0). The board approved the Lisbon office."
MODEL = "gpt-4o-mini"
BACKUP = "gpt-4o-mini-backup"

REVENUE = {2024: 10.0, 2025: 12.5}
MINUTES = {"expansion": "The board approved the Lisbon office."}


@tool
def revenue(year: int) -> dict[str, float]:
    """The company's revenue (millions) in a year and the year before."""
    return {str(year - 1): REVENUE[year - 1], str(year): REVENUE[year]}


@tool
def minutes(topic: str) -> str:
    """What the board's minutes say about a topic."""
    return MINUTES[topic]


# -- the scripted OpenAI endpoint -------------------------------------------------------------

_ids = itertools.count(1)


def _policy(messages: list[dict[str, Any]]) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """One turn: (text, tool calls). The agent is named by its system prompt ("You are X.")."""
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    role = system.split()[2].rstrip(".") if system.startswith("You are ") else ""
    if role == "supervisor":
        said = {  # the workers' reports (not the hand-back messages, which call a tool)
            m.get("name"): m["content"]
            for m in messages
            if m["role"] == "assistant" and not m.get("tool_calls")
        }
        for worker in ("analyst", "librarian"):
            if not said.get(worker):
                return "", [(f"transfer_to_{worker}", {})]
        return f"{said['analyst']} {said['librarian']}", []
    asked = {c["id"]: c["function"]["name"] for m in messages for c in m.get("tool_calls") or ()}
    last = messages[-1]
    tool_name, args = ("revenue", {"year": 2025}) if role == "analyst" else (
        "minutes", {"topic": "expansion"})  # fmt: skip
    if last["role"] != "tool" or asked.get(last.get("tool_call_id")) != tool_name:
        return "", [(tool_name, args)]
    result = last["content"]
    if result.startswith("Tool ") and "failed after" in result:  # the tool's retries ran out
        return "", [(tool_name, args)]  # ask again
    if role == "analyst":
        figures = json.loads(result)
        before, now = figures["2024"], figures["2025"]
        return (
            f"Revenue grew {round(100 * (now / before - 1))}% in 2025 ({now} after {before}).",
            [],
        )
    return result, []


def scripted_openai(request: httpx2.Request) -> httpx2.Response:
    """The chat completions endpoint, played by :func:`_policy` (answering as the model the
    request names)."""
    payload = json.loads(request.content)
    messages = [
        {**m, "content": m.get("content") or ""} for m in payload["messages"]
    ]  # fmt: skip
    text, calls = _policy(messages)
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{next(_ids)}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for name, args in calls
        ]  # fmt: skip
    return httpx2.Response(
        200,
        json={
            "id": f"chatcmpl-{next(_ids)}",
            "object": "chat.completion",
            "created": 1767225600,
            "model": payload["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52},
        },
    )


def team_model(name: str = MODEL) -> ChatOpenAI:
    """The team's ``ChatOpenAI`` (its SDK retries off: the team's middleware owns retries)."""
    return ChatOpenAI(
        model=name,
        api_key="sk-example",  # type: ignore[arg-type]
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(scripted_openai)),
    )


# -- the team -----------------------------------------------------------------------------------


def retryable(exc: Exception) -> bool:
    """The team's node retries: every error but a model error that says retrying cannot help
    (a 400, a 401 ...)."""
    return not isinstance(exc, ModelError) or exc.is_retryable


def research_team(model: Any, backup: Any, middleware: Sequence[Any] = ()) -> Any:
    """The compiled team: ``model`` serves the supervisor and both workers, ``backup`` is the
    analyst's fallback; ``middleware`` goes last (innermost) in each worker's list."""
    backoff = {"initial_delay": 1.0, "backoff_factor": 2.0, "max_delay": 30.0}
    analyst = create_agent(
        model,
        [revenue],
        name="analyst",
        system_prompt="You are analyst. Report how revenue grew, from the revenue tool.",
        middleware=[
            ModelFallbackMiddleware(backup),
            ModelRetryMiddleware(max_retries=3, on_failure="error", **backoff),  # type: ignore[arg-type]
            ToolRetryMiddleware(max_retries=6, **backoff),  # type: ignore[arg-type]
            *middleware,
        ],
    )
    librarian = create_agent(
        model,
        [minutes],
        name="librarian",
        system_prompt="You are librarian. Report what the board decided, from the minutes.",
        middleware=[
            ModelRetryMiddleware(max_retries=5, on_failure="error", **backoff),  # type: ignore[arg-type]
            ToolRetryMiddleware(max_retries=6, **backoff),  # type: ignore[arg-type]
            *middleware,
        ],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        builder = create_supervisor(
            [analyst, librarian],
            model=model,
            prompt="You are supervisor. Ask the analyst and the librarian, then answer.",
        )
    policy = RetryPolicy(
        max_attempts=6, initial_interval=1.0, backoff_factor=2.0, retry_on=retryable
    )
    return builder.set_node_defaults(retry_policy=policy).compile()


def ask(team: Any, question: str = TASK) -> str:
    """Run the team on one question; the supervisor's answer."""
    state = team.invoke({"messages": [HumanMessage(question)]}, {"recursion_limit": 100})
    return str(state["messages"][-1].content)
