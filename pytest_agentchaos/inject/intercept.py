"""One tool's (or model's) calls, taken by their argument mapping.

:class:`Interceptor` is the injection core that does not own the call: a framework adapter, or
the wrapper of a tool whose arguments are repaired, hands it the call's arguments as a mapping
and a function that runs the real call with a mapping. It records the call, decides its fault,
applies the fault *before* the real call (a failure raises, a replay returns an earlier output,
``malformed_params`` corrupts the mapping), optionally checks the corrupted mapping the way the
framework would, repairs it, runs the call and records how it ended. Sync and async alike.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..saferepr import safe_repr
from .call import EFFECT, FAULT, CallState
from .callables import apply_effect
from .errors import NativeErrors, failure_exception, http_status
from .session import _MISSING, ChaosSession

__all__ = ["Interceptor", "Outcome"]

#: What a finished call reports: (output to return, what the trace shows, tokens, usage error)
Outcome = Callable[[CallState, Any], Any]


class Interceptor:
    """The calls of one target (``channel`` ``"tool"`` or ``"model"``) of a chaos session.

    - ``schema``: the target's parameter JSON Schema (schema-aware ``malformed_params``).
    - ``check(mapping)``: called with arguments a fault corrupted, before the real call; it
      raises what the framework raises for arguments that fail its validation (so the agent
      sees a malformed call as the framework shows one). Its error is recorded, then raised.
      When it returns a mapping, that is what the framework's validation hands the tool (a
      value coerced back, an unknown key dropped): the call gets it, and the trace records it
      as a ``Repair`` by the framework (``detail["by"] == "framework"``), so that
      ``must_repair`` judges what the tool received. With a ``repairer`` the repair comes
      instead: it validates against the schema itself.
    - ``validator``: whose validation ``check`` is (``"pydantic-ai"``), as the trace names it.
    - ``repairer``: a ``ParamRepairer`` (``repair(args, at=, intended=)``, ``declined()``)
      wired to the session; every call's arguments go through it before the real call.
    - ``finish(state, output)``: records a successful output and returns what the caller gets
      (default: :meth:`ChaosSession.finish_ok`); adapters pass one that reads token usage.
    - ``errors``: builds the seam's own exception for an injected failure (a provider SDK's,
      a framework's; see :mod:`.provider_errors`), instead of the built-in kinds.
    - ``agent``: the agent whose calls these are (a multi-agent app's), shown in the trace.
    """

    def __init__(
        self,
        session: ChaosSession,
        target: str,
        *,
        channel: str = "tool",
        schema: Mapping[str, Any] | None = None,
        check: Callable[[Mapping[str, Any]], object] | None = None,
        repairer: Any = None,
        finish: Outcome | None = None,
        errors: NativeErrors | None = None,
        agent: str | None = None,
        validator: str | None = None,
    ) -> None:
        self.session = session
        self.target = target
        self.channel = channel
        self.schema = schema
        self.check = check
        self.validator = validator
        self.repairer = repairer
        self.errors = errors
        self.agent = agent
        self.finish = finish or session.finish_ok
        # the path of every call no fault hits and nothing repairs: the session's shortest
        self._plain = finish or session.finish_plain

    def begin(self, mapping: Mapping[str, Any], recorded: Any = None) -> CallState:
        """Record the call and decide its fault (budgets may raise here)."""
        __tracebackhide__ = True
        return self.session.begin(
            self.channel, self.target, mapping, self.schema, recorded=recorded, agent=self.caller()
        )

    def caller(self) -> str | None:
        """The agent a call is recorded under: the one this seam was made for."""
        return self.agent

    def call(
        self,
        mapping: Mapping[str, Any],
        invoke: Callable[[Mapping[str, Any]], Any],
        *,
        recorded: Any = None,
    ) -> Any:
        """Run one call: ``invoke(mapping)`` is the real call (not run when a fault fails or
        replays it); returns its output, or the replayed one."""
        __tracebackhide__ = True
        state = self.begin(mapping, recorded)
        session = self.session
        if state[EFFECT] is None and self.repairer is None:
            try:
                out = invoke(mapping)
            except BaseException as exc:  # cancelled, halted: the call still has its end
                session.finish_error(state, exc)
                raise
            return self._plain(state, out)
        effect = state[EFFECT]
        if effect is not None:
            if effect.delay:
                try:
                    session.delay(state)
                except BaseException as exc:  # a budget or a halt ended the wait
                    session.finish_error(state, exc)
                    raise
            if effect.failure is not None:  # the call fails: nothing else to prepare
                failed = failure_exception(effect.failure, state[FAULT], self.errors)
                session.finish_error(state, failed, status=http_status(effect.failure))
                raise failed
        mapping, replayed = self._prepare(state, mapping)
        if replayed is not _MISSING:
            return self.finish(state, replayed)
        try:
            out = invoke(mapping)
        except BaseException as exc:  # cancelled, halted: the call still has its end
            session.finish_error(state, exc)
            raise
        return self.finish(state, out)

    async def acall(
        self,
        mapping: Mapping[str, Any],
        invoke: Callable[[Mapping[str, Any]], Awaitable[Any]],
        *,
        recorded: Any = None,
    ) -> Any:
        """:meth:`call` for an async call (``invoke`` returns an awaitable); a fault's delay
        is a real ``await`` on a virtual loop."""
        __tracebackhide__ = True
        state = self.begin(mapping, recorded)
        session = self.session
        effect = state[EFFECT]
        if effect is not None:
            try:
                await session.adelay(state)
            except BaseException as exc:  # cancelled (a deadline), or a budget ended the wait
                session.finish_error(state, exc)
                raise
            if effect.failure is not None:  # the call fails: nothing else to prepare
                failed = failure_exception(effect.failure, state[FAULT], self.errors)
                session.finish_error(state, failed, status=http_status(effect.failure))
                raise failed
        mapping, replayed = self._prepare(state, mapping)
        if replayed is not _MISSING:
            return self.finish(state, replayed)
        try:
            out = await invoke(mapping)
        except BaseException as exc:  # cancelled, halted: the call still has its end
            session.finish_error(state, exc)
            raise
        if effect is not None and effect.lost is not None:
            raise await session.alose(state, out)  # the call ran; its reply is lost
        return self.finish(state, out)

    def _prepare(self, state: CallState, mapping: Mapping[str, Any]) -> tuple[Any, Any]:
        """(the arguments the real call gets, a replayed output or ``_MISSING``): the fault
        applied, the corrupted arguments checked, the arguments repaired."""
        __tracebackhide__ = True
        original = mapping
        if state.effect is not None:
            replayed, corrupted = apply_effect(self.session, state, self.errors)
            if replayed is not _MISSING:
                return mapping, replayed
            if corrupted is not None:
                mapping = corrupted
                if self.check is not None and self.repairer is None:  # else: repaired first
                    try:
                        seen = self.check(mapping)
                    except BaseException as exc:
                        self.session.finish_error(state, exc)
                        raise
                    if isinstance(seen, Mapping):
                        mapping = self._validated(state, mapping, seen)
        if self.repairer is not None:
            mapping = self._repair(state, mapping, original)
        return mapping, _MISSING

    def _validated(
        self, state: CallState, corrupted: Mapping[str, Any], seen: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        """Record what the framework's validation made of corrupted arguments; returns it."""
        from ..trace.events import Repair
        from ..trace.values import capture

        limit = self.session.max_value
        name = self.validator or "the framework's"
        self.session.record(
            Repair,
            tool=self.target,
            strategy=f"{name} validation",
            ok=True,
            before=capture(dict(corrupted), limit),
            after=capture(dict(seen), limit),
            detail={"index": state.index, "by": "framework", "validator": name},
        )
        return seen

    def _repair(self, state: CallState, mapping: Any, original: Any) -> Any:
        """The repaired arguments, or the repairer's ``declined`` error raised (recorded)."""
        __tracebackhide__ = True
        repairer = self.repairer
        intended = original if mapping is not original else None  # a fault corrupted it
        try:
            result = repairer.repair(mapping, at=state.index, intended=intended)
            ok, args = getattr(result, "ok"), getattr(result, "args")  # noqa: B009
            if ok and isinstance(args, Mapping):
                return args
            exc = repairer.declined(result)
            if not isinstance(exc, BaseException):
                raise TypeError(
                    f"{safe_repr(repairer, 60)}.declined() returned {safe_repr(exc, 60)}, "
                    "not an exception"
                )
        except AttributeError as broken:
            exc = TypeError(
                f"{safe_repr(repairer, 60)}.repair() returned what is not a repair result "
                f"(with ok and args): {safe_repr(broken, 120)}"
            )
        except BaseException as failed:  # the call ends in the trace whatever went wrong
            self.session.finish_error(state, failed)
            raise
        self.session.finish_error(state, exc)
        raise exc
