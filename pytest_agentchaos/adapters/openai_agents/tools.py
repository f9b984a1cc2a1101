"""``FunctionTool`` tools under chaos: :func:`wrap_tool`, whose interception sits inside the
SDK's failure handling of the tool, on the model's parsed arguments."""

from __future__ import annotations

import contextlib
import copy
import inspect
import json
import types
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agents import Agent, FunctionTool, ToolTimeoutError

from ...inject.callables import _wire, check_name
from ...inject.errors import is_injected
from ...inject.intercept import Interceptor
from ...inject.session import ChaosSession
from ...saferepr import safe_repr
from .originals import ORIGINAL, _original
from .timeouts import _Raise, _raising_invoker, _TimedCore

Invoke = Callable[[Any, str], Awaitable[Any]]


def wrap_tool(
    session: ChaosSession,
    tool: FunctionTool,
    *,
    name: str | None = None,
    repair: Any = None,
    agent: str | None = None,
) -> FunctionTool:
    """A copy of ``tool`` (a ``FunctionTool``; same name, description and parameter schema)
    whose every call goes through ``session``'s plan before the real tool runs.

    ``name``: the tool's name in the trace (default: ``tool.name``; the model still sees
    ``tool.name``). ``repair``: a ``ParamRepairer`` that checks every call's arguments after
    the faults and before the SDK parses them. ``agent``: the agent whose tool it is, named
    on its ``ToolCall`` events. Wrapping a wrapped tool wraps the original again, so its
    calls are recorded once."""
    __tracebackhide__ = True
    if not isinstance(tool, FunctionTool):
        raise TypeError(f"wrap_tool() needs an Agents SDK FunctionTool, got {safe_repr(tool, 80)}")
    if agent is not None and not isinstance(agent, str):
        raise TypeError(f"wrap_tool(): agent must be an agent's name, got {safe_repr(agent, 80)}")
    original: FunctionTool = _original(tool)
    target = check_name(name, "chaos.wrap(): name") if name is not None else original.name
    repairer = _wire(repair, session) if repair is not None else None
    return _wrapped_tool(session, original, target, repairer, agent)


def _wrapped_tool(
    session: ChaosSession,
    original: FunctionTool,
    target: str,
    repairer: Any,
    agent: str | None,
    *,
    runs: Agent[Any] | None = None,
) -> FunctionTool:
    """``original`` wrapped (see :func:`wrap_tool`); ``runs``: for an agent used as a tool,
    the agent its nested run starts with instead of the original's."""
    timeout = original.timeout_seconds
    invoker: Any = original.on_invoke_tool
    inner = getattr(invoker, "_invoke_tool_impl", None)
    check = _validation(inner, original)
    core: Interceptor
    if timeout:
        core = _TimedCore(session, target, original, repairer=repairer, agent=agent)
        core.check = check
    else:
        core = Interceptor(
            session, target, schema=original.params_json_schema, repairer=repairer, agent=agent,
            check=check,
        )  # fmt: skip
    core.validator = "Agents SDK"
    wrapped = copy.copy(original)  # the SDK's own copy: the invoker is rebound to the copy
    nested = runs
    if callable(inner) and callable(getattr(invoker, "__agents_bind_function_tool__", None)):
        # A @function_tool (or agent.as_tool()): its invoker runs the failure handling around
        # `inner` (which parses the arguments and runs the function). Ours goes between them.
        if runs is not None:
            rebound = _runs_agent(inner, original._agent_instance, runs)
            if rebound is None:
                nested = None
            else:
                inner = rebound
        ours = _intercepting(core, inner, raises=False)
        ours.__dict__.update(getattr(inner, "__dict__", {}))  # approval and __wrapped__ hooks
        handler = copy.copy(invoker)
        if timeout:
            handler.__class__ = _raising_invoker(type(invoker))
        handler._invoke_tool_impl = ours
        handler._function_tool = None
        wrapped.on_invoke_tool = handler.__agents_bind_function_tool__(wrapped)
    else:  # a FunctionTool built by hand: its on_invoke_tool is the tool
        wrapped.on_invoke_tool = _intercepting(core, invoker, raises=True)
        nested = None
    if nested is not None:
        wrapped.__dict__["_agent_instance"] = nested
    elif runs is not None:
        session.note(
            f"agent tool {original.name!r}: this openai-agents version builds agent tools in a "
            f"way the adapter does not know, so its nested run starts with the original agent "
            f"{runs.name!r}, whose model calls and tools are not under chaos"
        )
    wrapped.__dict__[ORIGINAL] = original
    wrapped.__dict__["__chaos_tool__"] = target
    return wrapped


def _validation(inner: Any, tool: FunctionTool) -> Callable[[Mapping[str, Any]], object] | None:
    """What the SDK's own parsing hands a ``@function_tool``'s function for arguments a fault
    corrupted (a number sent as text coerced back, an unknown key dropped), by name, read
    through the hook the SDK prepares approvals with (it runs no user code: a model with
    validators of its own, or a function with ``*args``, gives ``None``, and the SDK's own
    refusal is recorded when the call runs)."""
    prepare = getattr(inner, "__agents_prepare_arguments__", None)
    func = getattr(inner, "__agents_function_tool_wrapped_callable__", None)
    properties = tool.params_json_schema.get("properties")
    if not callable(prepare) or not callable(func) or not isinstance(properties, dict):
        return None
    try:
        if any(p.kind is p.VAR_POSITIONAL for p in inspect.signature(func).parameters.values()):
            return None
    except (TypeError, ValueError):
        return None
    names = list(properties)

    def check(mapping: Mapping[str, Any]) -> object:
        try:
            text = json.dumps(dict(mapping), ensure_ascii=False)
            prepared = prepare(text, tool.name)
            args, kwargs = list(prepared.args), dict(prepared.kwargs)
        except Exception:  # noqa: BLE001 - cannot tell: the call shows what the SDK does
            return None
        if (not args and not kwargs and mapping) or len(args) > len(names):
            return None  # not prepared (user code), or a layout this reading does not know
        seen = {**dict(zip(names, args, strict=False)), **kwargs}
        try:
            json.dumps(seen)  # the call re-sends them as JSON text: plain values only
        except (TypeError, ValueError):
            return None
        return seen

    return check


def _runs_agent(inner: Any, nested: Any, agent: Agent[Any]) -> Any:
    """``inner`` (``agent.as_tool()``'s implementation, whose nested run starts with the agent
    it closes over as ``self``, ``nested``) closing over ``agent`` instead, every other
    parameter of ``as_tool`` kept; ``None`` when its layout is not that."""
    code = getattr(inner, "__code__", None)
    cells = getattr(inner, "__closure__", None)
    if code is None or cells is None or "self" not in code.co_freevars:
        return None
    at = code.co_freevars.index("self")
    try:
        if cells[at].cell_contents is not nested:
            return None
    except ValueError:  # an empty cell
        return None
    closure = (*cells[:at], types.CellType(agent), *cells[at + 1 :])
    rebound = types.FunctionType(
        code, inner.__globals__, inner.__name__, inner.__defaults__, closure
    )
    rebound.__kwdefaults__ = inner.__kwdefaults__
    rebound.__qualname__ = inner.__qualname__
    rebound.__dict__.update(inner.__dict__)
    return rebound


def _intercepting(core: Interceptor, invoke: Invoke, *, raises: bool) -> Invoke:
    """``invoke(ctx, input_json)`` with its calls going through ``core``: faults and repair act
    on the parsed arguments; the real invoker gets them back as JSON text (the model's own
    text when nothing changed them). ``raises``: a timeout the SDK raises is raised here (a
    hand-built tool), not handed to the invoker as a :class:`_Raise`."""
    timed = core if isinstance(core, _TimedCore) else None

    async def invoke_tool(ctx: Any, input_json: str) -> Any:
        __tracebackhide__ = True
        args = _parse(input_json)
        the_core = core
        if args is None:  # not a JSON object: the SDK will say so, unless repair fixes it
            args = {}
            if core.repairer is not None:
                the_core = copy.copy(core)
                the_core.repairer = _TextFirst(core.repairer, args, input_json)
            recorded: Any = {"(arguments)": input_json}
        else:
            recorded = None

        async def run(mapping: Mapping[str, Any]) -> Any:
            __tracebackhide__ = True
            if mapping is args:
                text = input_json
            else:
                text = json.dumps(dict(mapping), ensure_ascii=False, default=str)
                with contextlib.suppress(AttributeError):  # arguments prepared for approval
                    ctx._function_tool_arguments = None  # are the model's, not these
            return await invoke(ctx, text)

        try:
            return await the_core.acall(args, run, recorded=recorded)
        except ToolTimeoutError as error:  # a hang that no SDK timer ended (see _TimedCore)
            if timed is None or not is_injected(error):
                raise
            outcome = await timed.outcome(ctx, error)
            if raises and isinstance(outcome, _Raise):
                raise error from TimeoutError()
            return outcome

    return invoke_tool


def _parse(input_json: str) -> dict[str, Any] | None:
    """The model's arguments as the SDK reads them (empty text is ``{}``), or ``None``."""
    if not input_json:
        return {}
    try:
        parsed = json.loads(input_json)
    except (ValueError, TypeError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


class _TextFirst:
    """A repairer handed the model's JSON text in place of ``placeholder`` (the empty
    arguments faults saw), so that it can read arguments the SDK could not parse."""

    def __init__(self, repairer: Any, placeholder: Mapping[str, Any], text: str) -> None:
        self.repairer, self.placeholder, self.text = repairer, placeholder, text

    def repair(self, args: Any, **kwargs: Any) -> Any:
        return self.repairer.repair(self.text if args is self.placeholder else args, **kwargs)

    def declined(self, result: Any) -> Any:
        return self.repairer.declined(result)
