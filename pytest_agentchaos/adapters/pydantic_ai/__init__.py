"""Chaos for pydantic-ai: its tools, toolsets, models and whole agents (one or several), through
the injection core (:class:`~pytest_agentchaos.inject.intercept.Interceptor`).

The public surface:

- :func:`wrap_tool` (what ``chaos.wrap`` calls for a pydantic-ai object): a ``Tool`` comes back
  as a ``Tool`` of the same type, a ``FunctionToolset`` as a ``FunctionToolset`` of the same
  type, any other toolset inside a :class:`ChaosToolset` (a ``WrapperToolset``). The
  model-facing tool definitions (name, description, argument JSON Schema) are unchanged.
- :func:`chaos_toolset` and :func:`chaos_model` (a :class:`ChaosModel`, a ``WrapperModel``; a
  ``FallbackModel`` comes back as a ``FallbackModel`` of them): the same for a toolset and for
  a model, from a ``Chaos`` or a ``ChaosSession``.
- :func:`chaos_agent`: a context manager that runs agents with their models and all their tools
  under chaos (``agent.override``), in one line: ``chaos_agent(chaos, agent)``, or
  ``chaos_agent(chaos, router, specialist)`` for an agent and the agents it delegates to.
- :func:`tool_spec`: a ``Tool``'s ``ToolSpec`` (its own JSON Schema), for a ``ParamRepairer``.

**Every agent its own target.** An agent's model calls are the target of its name (``name=``,
``agent.name``, the variable that holds it as pydantic-ai infers a name, else ``"model"``),
made unique in the run (``router``, ``router#2`` for a second agent of that name); a
``FallbackModel``'s fallbacks are ``router/fallback1``, ``router/fallback2`` ... Model and tool
calls name their agent in the trace (``ModelCall.agent``, ``ToolCall.agent``). A model shared by
several agents (``chaos_model(chaos, model)`` without a name) takes the running agent's target
per request (pydantic-ai's current run context), so stateful faults (``repeated_output``,
``paraphrased_output``, ``stale_output``) only ever replay an agent's own outputs.

**Errors pydantic-ai raises.** An injected model failure raises what pydantic-ai raises at that
seam, so the agent's ``FallbackModel``, its ``fallback_on`` and its retry hooks run as in
production. For a model that sends through the ``openai`` or ``anthropic`` SDK it is the SDK's
own exception (for a real response of the model's base URL) mapped by pydantic-ai's own
``map_api_errors``: ``ModelRateLimitError`` with ``retry_after``, ``ModelOverloadedError`` /
``ModelUnavailableError`` / ``ModelServerError``, ``ModelTimeoutError``,
``ModelConnectionError``, the SDK's exception as ``__cause__``. For any other model
(``FunctionModel``, ``TestModel``, your own) it is pydantic-ai's category of the same
(``ModelHTTPError.for_category``, ``ModelTimeoutError``, ``ModelConnectionError``). Each is
marked injected (``isinstance(exc, InjectedFault)``) and recorded under its own class name.
A tool's failure keeps the built-in family (``TimeoutError``, ``ConnectionError``,
``InjectedHTTPError``): a tool's real failure is its own exception, which pydantic-ai lets out
of the run unless a capability turns it into a retry.

**Timeouts are pydantic-ai's.** A fault's hang (a ``timeout`` or ``latency`` fault) ends where
an enclosing deadline ends it: a tool's ``timeout`` (``Tool(timeout=)``, ``@agent.tool(timeout=)``,
``FunctionToolset(timeout=)``, ``Agent(tool_timeout=)``) cuts it after the tool's timeout of
virtual time, and pydantic-ai gives the model its own retry prompt (``Timed out after 2
seconds.``, counted against the tool's retries). On a virtual event loop (``virtual_sleep``)
every anyio deadline does, a model's ``request_timeout`` included (``ModelRequestTimeout``).

**Streaming.** Streamed requests (``run_stream``, ``run(event_stream_handler=)``, ``iter``) go
through the plan as the others do: an error is raised before the stream opens (a
``FallbackModel`` falls back), a replayed output streams as a ``CompletedStreamedResponse``, a
live stream passes through and its final response is recorded, with its token usage.

Where tool calls are taken: pydantic-ai validates the model's arguments (its
``ToolsetTool.args_validator``, then the tool's ``args_validator`` function) *before* it calls
the toolset, and turns a ``ValidationError`` into a retry prompt to the model. A wrapped tool
moves that validation into the call: its validator only parses the model's JSON, and the call
goes through the ``Interceptor`` with the model's raw arguments, so that faults apply first (an
error fault raises without running anything), a ``malformed_params`` fault corrupts what the
model sent and meets pydantic-ai's own validator (the ``check``), and a ``repair=`` repairer
fixes the model's arguments before that validator sees them. A ``ValidationError`` raised there
reaches the model as the same retry prompt (``cause="validation_error"``, through the agent's
``wrap_tool_execute`` hook), and counts against the tool's retries as before. What changes:
capabilities' ``before/after_tool_validate`` hooks see the unvalidated arguments, and
``FunctionToolCallEvent.args_valid`` is true for them. A repairer that declines raises
``ModelRetry`` (the model is asked again, with the repairer's reason) rather than its
``RepairError``, which pydantic-ai would let out of the run.
"""

from __future__ import annotations

from .agents import chaos_agent
from .models import ChaosModel, chaos_model
from .tools import tool_spec
from .toolsets import ChaosToolset, chaos_toolset
from .wrap import wrap_tool

__all__ = [
    "ChaosModel",
    "ChaosToolset",
    "chaos_agent",
    "chaos_model",
    "chaos_toolset",
    "tool_spec",
    "wrap_tool",
]
