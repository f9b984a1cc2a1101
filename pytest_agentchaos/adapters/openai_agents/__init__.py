"""OpenAI Agents SDK: chaos for ``FunctionTool`` tools, for models, for a whole multi-agent app.

- ``chaos_agent(chaos, agent)`` is the whole app in one line: a clone of ``agent`` whose model
  and function tools are wrapped, and so, recursively and once each, every agent it can reach:
  its handoffs (``Agent`` entries and ``Handoff`` objects) and the agents it uses as tools
  (``agent.as_tool(...)``); cycles (FAQ -> triage -> FAQ) are fine (:func:`chaos_agent`).
- ``chaos_model(chaos, model)`` wraps a ``Model``: every model call goes through the plan;
  its text and the tool calls it asks for are recorded (the halt monitor reads them), its
  usage counts against ``max_tokens``, and ``repeated_output`` / ``paraphrased_output``
  answer in the model's place (:class:`ChaosModel`). As the run's model
  (``RunConfig(model=chaos_model(chaos, model))``, which every agent of the run uses) it
  files each call under the agent that makes it.
- ``chaos.wrap(tool)`` / ``chaos.wrap_tools([...])`` take a ``FunctionTool`` and return a
  ``FunctionTool``: same name, description, strict flag and ``params_json_schema`` (the model
  sees the very same tool), whose calls go through the plan before the real tool runs
  (:func:`wrap_tool`).

**Every agent its own target.** Each agent's model calls are a target of their own, named
after the agent (``"Triage Agent"``; a second agent of the same name is ``"Triage Agent#2"``),
so ``repeated_output``, ``paraphrased_output`` and ``stale_output`` replay only that agent's
own answers, never another agent's (whose tool calls it does not have), and a fault aims at
one agent with ``{"tools": ["Triage*"], "channels": ["model"]}``. ``ModelCall`` and
``ToolCall`` events name their agent (``agent=``).

**Model errors are the openai SDK's own.** An injected model failure raises what the
``openai`` client raises: ``openai.RateLimitError`` for a 429 (with ``retry-after`` and
``retry-after-ms`` headers when the fault gives a delay), ``InternalServerError`` for a 5xx,
``BadRequestError`` for a 400 ..., ``APITimeoutError`` for a timeout and
``APIConnectionError`` for a dropped connection, built by the openai client's own code for a
request to the wrapped model's endpoint (``OpenAIResponsesModel``: ``<base_url>/responses``,
``OpenAIChatCompletionsModel``: ``<base_url>/chat/completions``; any other ``Model``: the
OpenAI API's ``/responses``). That is the default for every ``Model``: the SDK's retry runtime
reads openai errors, so the stock retry policies (``retry_policies.network_error()``,
``http_status([...])``, ``retry_after()``, ``provider_suggested()`` with a model whose
``get_retry_advice`` reads them, ``any`` / ``all``) retry an injected failure exactly as they
retry a real one, and honour its Retry-After (on virtual time with ``virtual_sleep=True``).
The exceptions are marked injected (``isinstance(exc, InjectedFault)``) for the trace.

**Tool errors reach the model as the SDK surfaces them.** The interception sits *inside* the
SDK's failure handling of a ``@function_tool`` (between its ``failure_error_function`` and the
code that parses the arguments and runs the function), so an injected failure is caught where
the tool's own exception would be: by default the model reads the SDK's fixed "An error
occurred while running the tool. Please try again.", while the trace keeps the real error. On
a tool with its own timeout (``@function_tool(timeout=...)``) a fault that hangs the call at
least that long (a ``timeout``; a ``latency`` as long) meets the SDK's timeout, at the tool's
timeout in virtual time: the model reads "Tool 'x' timed out after N seconds." (or the tool's
``timeout_error_function``'s text), or, with ``timeout_behavior="raise_exception"``, the run
raises ``agents.ToolTimeoutError``. With ``virtual_sleep=True`` it is the SDK's own timer that
ends the call; without, the adapter gives the call the outcome the SDK gives a timeout. A
``malformed_params`` fault's arguments go on as the JSON text the model would have sent; the
SDK parses and validates them (a ``ModelBehaviorError``, which reaches the model the same
way) before the function could run. ``repair=`` (a ``ParamRepairer``) sees the model's
arguments, JSON text that is no object included, before the SDK does. A ``MaxTurnsExceeded``
that ends a test is recorded as the framework's cap (:mod:`pytest_agentchaos.adapters.caps`).
"""

from __future__ import annotations

from .agents import chaos_agent
from .models import UNKNOWN_AGENT as UNKNOWN_AGENT
from .models import ChaosModel, chaos_model
from .models import running_agent as running_agent
from .originals import ORIGINAL as ORIGINAL
from .tools import Invoke as Invoke
from .tools import wrap_tool

__all__ = ["ChaosModel", "chaos_agent", "chaos_model", "wrap_tool"]
