"""LangChain / LangGraph: chaos for langchain-core tools, chat models and ``create_agent`` agents.

- ``chaos.wrap(tool)`` / ``chaos.wrap_tools([...])`` take a langchain-core ``BaseTool``
  (``@tool`` functions, ``StructuredTool``, your own ``BaseTool`` subclass; sync and async) and
  return a copy **of the same type**: same name, description and argument schema (the model
  sees the same tool), whose calls go through the fault plan before the real tool runs
  (:func:`wrap_tool`). LangGraph's ``ToolNode`` and ``create_react_agent`` take it unchanged.
- ``chaos_model(chaos, model)`` returns the chat model under chaos, **of the same class**
  (``isinstance`` and ``_llm_type`` unchanged; ``bind_tools``, ``with_structured_output``,
  streaming, async and batch work as before): every call, from any graph (a ``StateGraph`` of
  your own, ``create_react_agent``, ``create_agent``, a langgraph-supervisor team) goes through
  the plan on the model channel (:func:`chaos_model`).
- ``create_agent(model, tools, middleware=[..., chaos_middleware(chaos)])`` puts a whole agent
  under chaos in one line: every model call and every tool call go through the plan
  (:func:`chaos_middleware`). It must sit **last** in the list (innermost), so the agent's
  ``ModelRetryMiddleware`` / ``ModelFallbackMiddleware`` / ``ToolRetryMiddleware`` /
  ``ToolErrorMiddleware`` see its faults; it warns (:class:`ChaosPlacementWarning`) when one of
  them sits inside it.

**Every agent its own target.** A model call's target is the agent making it: the agent's name
(``create_agent(name=...)``, which LangGraph passes down as ``lc_agent_name``), else the graph
node that runs the agent's graph (langgraph-supervisor runs each worker, and the supervisor
itself, as a node named after it; ``create_react_agent`` agents have no ``lc_agent_name``);
with no agent to name (a model called outside any graph, an unnamed agent at the top, the
nodes of a graph of your own), the model's name, one target per model object and node. Two
agents sharing one model object still get two targets, so ``repeated_output`` /
``paraphrased_output`` / ``stale_output`` only ever hand an agent its own earlier answer; two
agents with the same name in different places of the graph get ``name`` and ``name#2``.
``ModelCall`` and ``ToolCall`` events name the agent (``agent=``). Aim a fault at one agent's
model calls with ``{"tools": ["research*"], "channels": ["model"]}``.

**Native errors.** An injected model failure is the exception the chat model raises for it:
``ChatOpenAI`` / ``AzureChatOpenAI`` (any ``BaseChatOpenAI``) the ``openai`` SDK's error for
the model's base URL, converted as ``langchain_openai`` converts it (``OpenAIRateLimitError``,
a subclass of both ``openai.RateLimitError`` and LangChain's ``ModelRateLimitError``, raised
``from`` the SDK error, with the response's status, ``retry-after`` headers and request id);
``ChatAnthropic`` the ``anthropic`` SDK's, converted as ``langchain_anthropic`` does; any other
chat model LangChain's provider-neutral ``ModelRateLimitError`` / ``ModelAPIError`` /
``ModelTimeoutError`` / ``ModelConnectionError`` (and the other ``ModelError`` kinds by status),
carrying ``status_code``, ``headers``, ``retry_after`` and ``body``. So ``ModelRetryMiddleware``
retries exactly what it would retry in production (``is_retryable``) and
``ModelFallbackMiddleware`` falls back. Every injected error is also an ``InjectedFault``.
Tool failures keep the built-in kinds (``TimeoutError``, ``ConnectionError``,
``InjectedHTTPError``): a tool's real failure is its own exception, and ``ToolRetryMiddleware``
retries them; a ``malformed_params`` fault's arguments meet the tool's own validation (a
``ValidationError``, which the tool node turns into a message to the model), and ``repair=``
may fix them first. A ``GraphRecursionError`` that ends a test is recorded as the framework's
cap (see :mod:`pytest_agentchaos.adapters.caps`).
"""

from __future__ import annotations

from .middleware import ChaosPlacementWarning, chaos_middleware
from .models import chaos_model
from .state import STATE as STATE
from .tools import ORIGINAL as ORIGINAL
from .tools import model_schema, wrap_tool

__all__ = [
    "ChaosPlacementWarning",
    "chaos_middleware",
    "chaos_model",
    "model_schema",
    "wrap_tool",
]
