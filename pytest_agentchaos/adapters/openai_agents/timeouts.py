"""A tool with the SDK's own timeout under chaos: a fault that hangs it is the SDK's timeout,
with the outcome the SDK gives one (the model's text, or ``ToolTimeoutError`` raised)."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agents import FunctionTool, ToolTimeoutError
from agents.tool import default_tool_timeout_error_message

from ...clock.clock import VirtualClock
from ...inject.call import CallState, new_state
from ...inject.errors import mark_injected
from ...inject.intercept import Interceptor
from ...inject.session import ChaosSession


class _TimedCore(Interceptor):
    """The interceptor of a tool with the SDK's own timeout (``timeout_seconds``). A fault
    that makes a call hang at least that long (a ``timeout``, a ``latency`` as long) is the
    SDK's timeout: on a virtual event loop (or a real one) the call hangs past the timeout, so
    that the SDK's own ``asyncio.wait_for`` ends it, in virtual time, as it ends a tool that
    hangs; on a loop that does not keep virtual time (``virtual_sleep`` off) the SDK's timer
    cannot see time pass, so the call ends after the tool's timeout with a
    ``ToolTimeoutError`` that :func:`_intercepting` turns into what the SDK makes of one."""

    def __init__(
        self,
        session: ChaosSession,
        target: str,
        tool: FunctionTool,
        *,
        repairer: Any,
        agent: str | None,
    ) -> None:
        super().__init__(
            session, target, schema=tool.params_json_schema, repairer=repairer, agent=agent
        )
        self.tool = tool
        self.timeout = float(tool.timeout_seconds or 0.0)
        self._begun: CallState | None = None

    def begin(self, mapping: Mapping[str, Any], recorded: Any = None) -> CallState:
        __tracebackhide__ = True
        state, self._begun = self._begun, None
        return state if state is not None else super().begin(mapping, recorded)

    async def acall(
        self,
        mapping: Mapping[str, Any],
        invoke: Callable[[Mapping[str, Any]], Awaitable[Any]],
        *,
        recorded: Any = None,
    ) -> Any:
        __tracebackhide__ = True
        state = super().begin(mapping, recorded)
        effect = state.effect
        if effect is None or not (
            (effect.failure is not None and effect.failure.kind == "timeout")
            or (effect.failure is None and effect.delay >= self.timeout)
        ):
            self._begun = state  # taken by begin() as the interceptor starts, before any await
            return await super().acall(mapping, invoke, recorded=recorded)
        return await self._time_out(state)

    async def _time_out(self, state: CallState) -> Any:
        """Hang ``state``'s call until the SDK's timeout ends it (see the class doc)."""
        __tracebackhide__ = True
        session = self.session
        clock = session.clock
        effect = state.effect
        assert effect is not None
        if isinstance(clock, VirtualClock) and not clock.on_virtual_loop():
            hang = self.timeout
        else:
            hang = max(effect.delay, self.timeout) + self.timeout  # the SDK's timer fires first
        hanging = new_state(
            state.channel, state.target, state.index, state.step, state.t, state.key,
            dataclasses.replace(effect, delay=hang), state.fault, state.decision,
        )  # fmt: skip
        error = mark_injected(ToolTimeoutError(self.tool.name, self.timeout), state.fault)
        try:
            await session.adelay(hanging)
        except asyncio.CancelledError as cancelled:  # the SDK's timeout, or the run's end
            timed_out = session.now() - state.t >= self.timeout - 1e-9
            session.finish_error(state, error if timed_out else cancelled)
            raise
        except BaseException as exc:  # a budget ended the wait
            session.finish_error(state, exc)
            raise
        session.finish_error(state, error)
        raise error

    async def outcome(self, ctx: Any, error: ToolTimeoutError) -> Any:
        """What the SDK makes of a timeout of this tool: the model's text, or a
        :class:`_Raise` of ``error`` for its invoker to raise."""
        tool = self.tool
        if tool.timeout_behavior == "raise_exception":
            return _Raise(error)
        formatter = tool.timeout_error_function
        if formatter is None:
            return default_tool_timeout_error_message(
                tool_name=tool.name, timeout_seconds=self.timeout
            )
        result = formatter(ctx, error)
        return await result if inspect.isawaitable(result) else result


class _Raise:
    """A tool result that its invoker raises (``ToolTimeoutError``, past the SDK's failure
    handling, as the SDK raises it)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


_INVOKERS: dict[type, type] = {}


def _raising_invoker(base: Any) -> type:
    """A subclass of the SDK's failure-handling invoker that raises a :class:`_Raise` result
    (also once rebound to a copy of the tool)."""
    found = _INVOKERS.get(base)
    if found is not None:
        return found

    async def call(self: Any, ctx: Any, input: str) -> Any:
        out = await base.__call__(self, ctx, input)
        if isinstance(out, _Raise):
            raise out.error from TimeoutError()
        return out

    def bind(self: Any, function_tool: FunctionTool) -> Any:
        bound = base.__agents_bind_function_tool__(self, function_tool)
        if type(bound) is base:
            bound.__class__ = type(self)
        return bound

    namespace = {
        "__module__": base.__module__,
        "__qualname__": base.__qualname__,
        "__call__": call,
        "__agents_bind_function_tool__": bind,
    }
    found = _INVOKERS[base] = type(base.__name__, (base,), namespace)
    return found
