"""Chaos on an ``mcp`` ``ClientSession``: its ``call_tool`` and ``list_tools`` replaced on the
instance (the object and its type stay the same, so every holder of the session, a
framework's MCP client included, calls through the plan), put back when the run closes.

- ``list_tools`` passes the server's listing through untouched and keeps each tool's
  ``inputSchema``: it is the tool's schema for ``malformed_params`` and, with ``repair=True``,
  the :class:`~pytest_agentchaos.repair.ToolSpec` of the tool's ``ParamRepairer``.
- ``call_tool`` goes through the injection core (:class:`~pytest_agentchaos.inject.intercept.
  Interceptor`), one target per tool name, and delivers faults as MCP does (see
  :mod:`.results`). A fault's hang is cut by the request's read timeout (the call's
  ``read_timeout_seconds``, else the session's), as the SDK cuts a real one.
- The trace records each call's arguments and its result as it goes on the wire; a result
  with ``is_error`` set (the server's own or an injected one) is a failed call.
- A call whose arguments the repairer declines to repair is not sent: the caller gets a result
  with ``is_error`` and the repairer's reason, as from a server whose validation rejected it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ...faults.effects import Effect, Failure
from ...inject.acting import acting_agent
from ...inject.call import EFFECT, FAULT, CallState, new_state
from ...inject.callables import _wire
from ...inject.errors import failure_exception
from ...inject.intercept import Interceptor
from ...inject.session import _MISSING, ChaosSession
from ...saferepr import safe_repr
from .results import content_text, mcp_errors, on_content, recorded_form, tool_error, wire_form

__all__ = ["McpCalls", "McpSeam", "seam_of"]

#: The instance attribute that holds a wrapped session's seam.
SEAM_ATTR = "__chaos_mcp__"


def seam_of(client: Any) -> McpSeam | None:
    """The seam installed on ``client`` (a ``ClientSession``), if any."""
    seam = getattr(client, "__dict__", {}).get(SEAM_ATTR)
    return seam if isinstance(seam, McpSeam) else None


class McpCalls(Interceptor):
    """The calls of one MCP tool: the injection core, with MCP's ways of failing. Each call
    names the agent whose tool execution makes it (:func:`~pytest_agentchaos.inject.acting.
    acting_agent`), so one session shared by several agents files each call under its own."""

    def caller(self) -> str | None:
        """The agent this seam was made for, else the one whose tool execution runs now."""
        return self.agent if self.agent is not None else acting_agent(self.session)

    async def call_mcp(
        self,
        mapping: Mapping[str, Any],
        invoke: Callable[[Mapping[str, Any]], Awaitable[Any]],
        timeout: float | None,
        state: CallState | None = None,
    ) -> Any:
        """One ``tools/call``: ``invoke(mapping)`` sends it; ``timeout`` is the request's read
        timeout (``None``: none); ``state``: the call, when the caller has begun it already."""
        __tracebackhide__ = True
        if state is None:
            state = self.begin(mapping)
        session = self.session
        effect = state[EFFECT]
        if effect is not None:
            if effect.delay:
                cut = timeout is not None and effect.delay >= timeout
                try:
                    await session.adelay(state, timeout if cut else None)
                except BaseException as exc:  # cancelled, or a budget ended the wait
                    session.finish_error(state, exc)
                    raise
                if cut:  # the SDK gave up waiting before the hang ended
                    failed = failure_exception(
                        Failure("timeout", f"{self.target} timed out after {timeout:g}s"),
                        state[FAULT],
                        self.errors,
                    )
                    session.finish_error(state, failed)
                    raise failed
            failure = effect.failure
            if failure is not None:
                if failure.kind == "http":  # a tool's failure: MCP says so in the result
                    result = tool_error(self.target, failure)
                    session.finish_error(
                        state,
                        error_type="ToolError",
                        message=content_text(result),
                        status=failure.status,
                        output=recorded_form(result),
                    )
                    return result
                failed = failure_exception(failure, state[FAULT], self.errors)
                session.finish_error(state, failed)
                raise failed
        try:
            mapping, replayed = self._prepare(state, mapping)
        except Exception as declined:  # the repairer declined (recorded): MCP says so in a
            if self.repairer is None:  # result, as a server whose validation rejected it
                raise
            return tool_error(self.target, Failure("http", str(declined)))
        if replayed is not _MISSING:
            return self.finish(state, replayed)
        try:
            out = await invoke(mapping)
        except BaseException as exc:  # the SDK's own error, a cancellation: the call ends
            session.finish_error(state, exc)
            raise
        if effect is not None and effect.lost is not None:  # the trace keeps what was lost
            raise await session.alose(state, wire_form(out), native=self.errors)
        return self.finish(state, out)


def _finisher(session: ChaosSession) -> Callable[[CallState, Any], Any]:
    """The ``finish`` of an MCP tool's calls: output faults on the result's content, the
    result recorded in its wire form, a result with ``is_error`` recorded as a failure."""
    from mcp.types import CallToolResult  # the SDK's types load with the first call

    def finish(state: CallState, result: Any) -> Any:
        __tracebackhide__ = True
        if not isinstance(result, CallToolResult):  # another result type the caller allowed
            return session.finish_ok(state, result, recorded=recorded_form(result))
        if result.is_error:
            session.finish_error(
                state,
                error_type="ToolError",
                message=content_text(result),
                output=recorded_form(result),
            )
            return result
        effect = state[EFFECT]
        if effect is not None:
            if effect.replay:  # a kept result: the caller gets its own copy
                result = result.model_copy(deep=True)
            if effect.reply is not None:
                state, result = session.reply(_on_content_state(state, effect), result)
            if effect.transform is not None:
                decision = state.decision
                prose = decision is not None and decision.kind.name == "paraphrased_output"
                result = on_content(effect.transform, result, always=True, json_text=prose)
        return session.finish_ok(state, result, transform=False, recorded=recorded_form(result))

    return finish


def _on_content_state(state: CallState, effect: Effect) -> CallState:
    """``state`` whose effect's ``reply`` acts on a result's content."""
    reply = effect.reply
    assert reply is not None
    mapped = dataclasses.replace(effect, reply=lambda result: on_content(reply, result))
    return new_state(
        state.channel, state.target, state.index, state.step, state.t, state.key,
        mapped, state.fault, state.decision,
    )  # fmt: skip


class McpSeam:
    """The chaos seam installed on one ``ClientSession`` (see the module doc).

    ``repair``: ``None``; ``True`` (a ``ParamRepairer`` for every listed tool, from its
    ``inputSchema`` and the run's ``[repair]`` policy); or a mapping of tool name ->
    ``ParamRepairer``.
    """

    def __init__(
        self, run: ChaosSession, client: Any, *, repair: Any = None, policy: Any = None
    ) -> None:
        if repair is not None and repair is not True and not isinstance(repair, Mapping):
            raise TypeError(
                "chaos.wrap(session, repair=...): expected True (repair every tool against its "
                "inputSchema) or a mapping of tool name -> ParamRepairer, got "
                f"{safe_repr(repair, 80)}"
            )
        self.run = run
        self.client = client
        self.repair = repair
        self.policy = policy
        #: the tools the server listed, by name (``mcp.types.Tool``)
        self.tools: dict[str, Any] = {}
        self._call_tool = client.call_tool
        self._list_tools = client.list_tools
        self._listed = False
        self._calls: dict[str, McpCalls] = {}
        self._finish: Callable[[CallState, Any], Any] | None = None

    # -- installing ----------------------------------------------------------------------

    def install(self) -> None:
        """Replace the session's methods (on the instance) until the run closes."""
        attrs = self.client.__dict__
        attrs["call_tool"] = self.call_tool
        attrs["list_tools"] = self.list_tools
        attrs[SEAM_ATTR] = self
        self.run.add_cleanup(self.uninstall)

    def uninstall(self) -> None:
        """Put the session's own methods back (it stays usable after the run)."""
        attrs = self.client.__dict__
        if attrs.get(SEAM_ATTR) is self:
            for key in ("call_tool", "list_tools", SEAM_ATTR):
                attrs.pop(key, None)

    # -- the session's methods -----------------------------------------------------------

    async def list_tools(self, *args: Any, **kwargs: Any) -> Any:
        """The server's listing, unchanged; each tool's schema is kept for its calls."""
        result = await self._list_tools(*args, **kwargs)
        self._absorb(result)
        return result

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | None = None,
        progress_callback: Any = None,
        **kwargs: Any,
    ) -> Any:
        """``ClientSession.call_tool`` through the run's plan and trace."""
        __tracebackhide__ = True
        core = self._calls.get(name)
        if core is None:
            core = await self._core(name)
        mapping: Mapping[str, Any] = arguments if arguments is not None else {}
        state = core.begin(mapping)
        if state[EFFECT] is None and core.repairer is None:  # no fault, nothing to repair: the
            try:  # call goes as it came, and its end is recorded
                out = await self._call_tool(
                    name, arguments, read_timeout_seconds, progress_callback, **kwargs
                )
            except BaseException as exc:  # the SDK's own error, a cancellation: the call ends
                self.run.finish_error(state, exc)
                raise
            return core.finish(state, out)
        timeout = read_timeout_seconds
        if timeout is None:
            timeout = getattr(self.client, "_session_read_timeout_seconds", None)

        def invoke(given: Mapping[str, Any]) -> Awaitable[Any]:
            sent = arguments if given is mapping else dict(given)
            call: Awaitable[Any] = self._call_tool(
                name, sent, read_timeout_seconds, progress_callback, **kwargs
            )
            return call

        return await core.call_mcp(mapping, invoke, timeout, state)

    # -- tools ---------------------------------------------------------------------------

    def _absorb(self, result: Any) -> None:
        for tool in getattr(result, "tools", None) or ():
            name = getattr(tool, "name", None)
            if isinstance(name, str):
                self.tools[name] = tool
                self._calls.pop(name, None)  # a changed schema: the next call rebuilds
        if getattr(result, "next_cursor", None) is None:
            self._listed = True

    async def _core(self, name: str) -> McpCalls:
        """The calls of tool ``name``, its schema read from the server's listing (listed
        once now if the agent called before listing, as the SDK itself does to validate a
        result)."""
        if name not in self.tools and not self._listed:
            self._listed = True
            try:
                self._absorb(await self._list_tools())
            except Exception as exc:  # a server that cannot list: calls go on without schemas
                self.run.note(f"MCP session: tools/list failed ({type(exc).__name__}): calls "
                              "have no schema for malformed_params or repair")  # fmt: skip
        tool = self.tools.get(name)
        schema = getattr(tool, "input_schema", None) if tool is not None else None
        if not isinstance(schema, Mapping):
            schema = None
        if self._finish is None:
            self._finish = _finisher(self.run)
        core = McpCalls(
            self.run,
            name,
            schema=schema,
            repairer=self._repairer(name, tool, schema),
            finish=self._finish,
            errors=mcp_errors(name),
        )
        self._calls[name] = core
        return core

    def _repairer(self, name: str, tool: Any, schema: Mapping[str, Any] | None) -> Any:
        repair = self.repair
        if repair is None:
            return None
        if isinstance(repair, Mapping):
            found = repair.get(name)
            return _wire(found, self.run) if found is not None else None
        if schema is None:
            self.run.note(f"MCP tool {name!r} has no listed inputSchema: no repair of its calls")
            return None
        from ...repair import ParamRepairer, ToolSpec

        description = getattr(tool, "description", None) or ""
        try:
            spec = ToolSpec(name, dict(schema), description)
        except Exception as exc:  # a schema the repairer cannot read: say so, do not repair
            self.run.note(f"MCP tool {name!r}: its inputSchema cannot drive repair: {exc}")
            return None
        kwargs = {"policy": self.policy} if self.policy is not None else {}
        return _wire(ParamRepairer(spec, **kwargs), self.run)
