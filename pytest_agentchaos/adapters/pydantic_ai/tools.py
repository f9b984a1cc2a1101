"""A pydantic-ai ``Tool``'s calls under chaos: pydantic-ai's validation of the model's arguments
moved into the call (after the faults and the repairer), and the ``Tool`` copy that does it."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ...errors import ChaosConfigError
from ...inject.callables import _wire, check_name
from ...inject.intercept import Interceptor
from ...inject.session import ChaosSession
from ...repair.spec import ToolSpec
from ...saferepr import safe_repr, safe_str
from .deadlines import _acall
from .framework import FunctionSchema, ModelRetry, RunContext, Tool, from_json
from .runs import _label


class _Hook:
    """One tool's calls: its Interceptor settings, pydantic-ai's own validation of its
    arguments (the validator and the tool's ``args_validator`` function), run in the call."""

    __slots__ = ("agent", "func", "real", "repairer", "schema", "session", "target", "timeout")

    def __init__(
        self,
        session: ChaosSession,
        target: str,
        schema: Mapping[str, Any],
        real: Any,
        func: Callable[..., Any] | None,
        repairer: Any,
        agent: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self.session = session
        self.target = target
        self.schema = schema
        self.real = real
        self.func = func
        self.repairer = repairer
        self.agent = agent  # the agent's name in the run (None: the running agent's, per call)
        self.timeout = timeout  # the tool's own ``Tool(timeout=)``, when it has one

    async def run(
        self,
        args: Mapping[str, Any],
        ctx: RunContext[Any],
        call: Callable[[dict[str, Any]], Awaitable[Any]],
    ) -> Any:
        """Run one call: ``args`` are the model's (parsed, unvalidated), ``call(validated)``
        the real tool."""
        __tracebackhide__ = True
        real, func = self.real, self.func
        # the model's arguments came as JSON text: pydantic-ai validates them in JSON mode
        # (where "2024-10-26" is a datetime and "red" an Enum), so the call must too
        text = args.text if isinstance(args, _JsonArgs) else None

        def validate(mapping: Mapping[str, Any]) -> dict[str, Any]:
            context = ctx.validation_context
            if text is None:
                validated = real.validate_python(dict(mapping), context=context)
            elif mapping is args:  # as the model sent them
                validated = real.validate_json(text, context=context)
            else:  # corrupted by a fault, or repaired: as JSON text again
                encoded = json.dumps(dict(mapping), ensure_ascii=False, default=str)
                validated = real.validate_json(encoded, context=context)
            return validated if isinstance(validated, dict) else dict(validated)

        async def invoke(mapping: Mapping[str, Any]) -> Any:
            __tracebackhide__ = True
            validated = validate(mapping)
            if func is not None:
                checked = func(ctx, **validated)
                if inspect.isawaitable(checked):
                    await checked
            return await call(validated)

        session = self.session
        core = Interceptor(
            session,
            self.target,
            schema=self.schema,
            # with a repairer, repair comes first: the validator then sees the repaired call
            check=validate if self.repairer is None else None,
            repairer=self.repairer,
            agent=self.agent if self.agent is not None else _label(session, ctx.agent),
            validator="pydantic-ai",
        )
        return await _acall(core, args, invoke, deadline=True, timeout=self.timeout)


class _JsonArgs(dict):  # type: ignore[type-arg]
    """A model's arguments parsed from its JSON text, which they keep (``text``) for the real
    validation in the call."""

    __slots__ = ("text",)

    def __init__(self, parsed: dict[str, Any], text: str | bytes | bytearray) -> None:
        super().__init__(parsed)
        self.text = text


class _Unvalidated:
    """Stands in for a tool's argument validator: it only parses the model's arguments into
    a dict (anything else goes to the real validator, which rejects it as before), so that
    the call sees what the model sent; the real validation runs in the call (:class:`_Hook`)."""

    __slots__ = ("hook", "owner", "tool")

    def __init__(self, hook: _Hook, owner: object = None, tool: Any = None) -> None:
        self.hook = hook
        self.owner = owner  # the ChaosToolset layer that intercepts it (None: the Tool itself)
        self.tool = tool  # the wrapped toolset's own ToolsetTool (a ChaosToolset's tools)

    def validate_json(
        self, input: str | bytes | bytearray, *, allow_partial: Any = False, **kwargs: Any
    ) -> Any:
        try:
            parsed = from_json(input, allow_partial=allow_partial)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return _JsonArgs(parsed, input)
        return self.hook.real.validate_json(input, allow_partial=allow_partial, **kwargs)

    def validate_python(self, input: Any, *, allow_partial: Any = False, **kwargs: Any) -> Any:
        if isinstance(input, Mapping):
            return dict(input)
        return self.hook.real.validate_python(input, allow_partial=allow_partial, **kwargs)

    def __repr__(self) -> str:
        return f"<chaos-intercepted validator of {self.hook.target!r}>"


@dataclasses.dataclass(kw_only=True)
class _ChaosSchema(FunctionSchema):
    """A ``Tool``'s function schema whose calls go through the chaos run (see :class:`_Hook`);
    everything pydantic-ai reads from it is the original's."""

    hook: _Hook | None = dataclasses.field(default=None, repr=False, compare=False)

    async def call(self, args_dict: dict[str, Any], ctx: RunContext[Any]) -> Any:
        __tracebackhide__ = True
        assert self.hook is not None
        run = super().call  # the original: runs the function (sync ones in a thread)
        return await self.hook.run(args_dict, ctx, lambda validated: run(validated, ctx))


class _AsRetry:
    """A repairer whose refusal is a ``ModelRetry`` (pydantic-ai asks the model again, with
    the repairer's reason) instead of an exception that would end the run."""

    __slots__ = ("repairer", "spec")

    def __init__(self, repairer: Any) -> None:
        self.repairer = repairer
        self.spec = getattr(repairer, "spec", None)

    def repair(self, args: Any, *, at: int | None = None, intended: Any = None) -> Any:
        return self.repairer.repair(args, at=at, intended=intended)

    def declined(self, result: Any) -> BaseException:
        error = self.repairer.declined(result)
        retry = ModelRetry(safe_str(error, 1000))
        retry.__cause__ = error
        return retry


def _repairer(repair: Any, session: ChaosSession) -> Any:
    return None if repair is None else _AsRetry(_wire(repair, session))


def tool_spec(tool: Tool[Any]) -> ToolSpec:
    """The :class:`~pytest_agentchaos.repair.ToolSpec` of a pydantic-ai ``Tool``: its name,
    description and the argument JSON Schema the model sees (for ``ParamRepairer``)."""
    if not isinstance(tool, Tool):
        raise TypeError(f"tool_spec() needs a pydantic-ai Tool, got {safe_repr(tool, 80)}")
    return ToolSpec.from_schema(tool.name, tool.function_schema.json_schema, tool.description)


def _is_wrapped_tool(tool: Tool[Any]) -> bool:
    return isinstance(tool.function_schema, _ChaosSchema)


def _wrap_tool(
    session: ChaosSession,
    tool: Any,
    *,
    name: str | None = None,
    repair: Any = None,
    agent: str | None = None,
    timeout: Any = None,
) -> Any:
    """:func:`wrap_tool` for a ``Tool``; ``agent`` names the agent whose tool it is (default:
    the agent that runs it, per call); ``timeout``, the timeout its toolset or agent gives a
    tool without its own (``FunctionToolset(timeout=)``, ``Agent(tool_timeout=)``)."""
    __tracebackhide__ = True
    if not isinstance(tool, Tool):
        raise TypeError(f"expected a pydantic-ai Tool or toolset, got {safe_repr(tool, 80)}")
    if _is_wrapped_tool(tool):
        raise ChaosConfigError(
            f"chaos.wrap(): the pydantic-ai tool {tool.name!r} is under chaos already; wrap the "
            "original tool (wrapping twice would record every call twice)"
        )
    target = check_name(name, "chaos.wrap(): name") if name is not None else tool.name
    schema = tool.function_schema
    hook = _Hook(
        session,
        target,
        schema.json_schema,
        schema.validator,
        tool.args_validator,
        _repairer(repair, session),
        agent,
        _seconds(tool.timeout) if tool.timeout is not None else _seconds(timeout),
    )
    fields = {f.name: getattr(schema, f.name) for f in dataclasses.fields(FunctionSchema)}
    fields["validator"] = _Unvalidated(hook)
    wrapped = copy.copy(tool)
    wrapped.function_schema = _ChaosSchema(**fields, hook=hook)
    wrapped.args_validator = None  # run by the hook, on the validated arguments
    return wrapped


def _seconds(value: Any) -> float | None:
    """A timeout as pydantic-ai takes it (seconds, > 0), or None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None
