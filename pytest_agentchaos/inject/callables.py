"""Wrapping Python tools (sync and async) so the plan's faults apply before they run.

An error fault raises before the real tool is called, so an injected failure has no side
effects. The wrapper keeps the tool's name, signature and docstring: frameworks introspect them.
Its frames are hidden from pytest's tracebacks (``__tracebackhide__``): a failure reads as the
user's own call of the tool.
"""

from __future__ import annotations

import datetime as _dt
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from ..config import fail
from ..saferepr import safe_repr
from .binding import Binder
from .call import CallState
from .errors import NativeErrors, failure_exception, http_status
from .schemas import check_tool_schema
from .session import _MISSING, ChaosSession

F = TypeVar("F", bound=Callable[..., Any])


def tool_name(fn: Callable[..., Any]) -> str:
    """The name a tool is known by: ``fn.__name__``, or its class's name for a callable object."""
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) and name else type(fn).__name__


def is_async_callable(fn: Callable[..., Any]) -> bool:
    """A coroutine function, or an object whose ``__call__`` is one."""
    call = getattr(type(fn), "__call__", None)  # noqa: B004 - we need the method itself
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


def finish_wrapper(wrapper: Callable[..., Any], fn: Callable[..., Any], name: str) -> None:
    """Copy name, docstring and signature (via ``__wrapped__``) from ``fn`` to ``wrapper``."""
    functools.update_wrapper(wrapper, fn)
    if not isinstance(getattr(fn, "__name__", None), str):  # a callable object
        wrapper.__name__ = wrapper.__qualname__ = name


def apply_effect(
    session: ChaosSession, state: CallState, native: NativeErrors | None = None
) -> tuple[Any, Any]:
    """Apply failure / replay / argument effects; returns (replayed output, mapping or None).
    A failure raises the seam's own exception when ``native`` builds one."""
    __tracebackhide__ = True
    effect = state.effect
    assert effect is not None
    if effect.failure is not None:
        exc = failure_exception(effect.failure, state.fault, native)
        # the status the failure was built with (what status_of would read, without the search)
        session.finish_error(state, exc, status=http_status(effect.failure))
        raise exc
    if effect.replay:
        previous = session.previous_output(state)
        if previous is not _MISSING:
            return previous, None
    return _MISSING, effect.args


def check_name(name: object, where: str) -> str:
    """A tool name given explicitly: it must be a non-empty string."""
    if not isinstance(name, str) or not name:
        raise fail(where, f"expected a non-empty tool name, got {safe_repr(name, 80)}")
    return name


def wrap(
    session: ChaosSession,
    fn: F,
    *,
    name: str | None = None,
    schema: Mapping[str, Any] | None = None,
    channel: str = "tool",
    repair: Any = None,
) -> F:
    """Return ``fn`` wrapped so calls are traced, budgeted and subject to the plan.

    ``schema`` is checked against its JSON Schema meta-schema now, so a bad schema fails here
    rather than inside a later fault. ``repair`` (a ``ParamRepairer``, or any object with
    ``repair(args, at=index)`` and ``declined(result)``) checks every call's arguments after
    the faults and before the tool runs: repaired arguments are what the tool gets; when it
    declines, the tool is not run and its ``declined`` error is raised (a ``Repair`` event
    says why either way).
    """
    __tracebackhide__ = True
    if not callable(fn):
        raise TypeError(f"chaos.wrap() needs a callable, got {safe_repr(fn, 80)}")
    target = check_name(name, "chaos.wrap(): name") if name is not None else tool_name(fn)
    if schema is not None:
        check_tool_schema(schema, f"chaos.wrap({target}): schema")
    binder = Binder(fn)
    to_mapping = binder.to_mapping
    begin, finish_error = session.begin, session.finish_error
    finish_ok, finish_plain = session.finish_ok, session.finish_plain
    wrapper: Callable[..., Any]
    if repair is not None:
        if schema is None:  # the repairer's spec makes malformed_params schema-aware
            schema = getattr(getattr(repair, "spec", None), "parameters", None)
        wrapper = _repairing(session, fn, target, schema, channel, binder, _wire(repair, session))
    elif is_async_callable(fn):

        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            state = begin(channel, target, to_mapping(args, kwargs), schema)
            mapping = None
            if state.effect is not None:
                try:
                    await session.adelay(state)
                except BaseException as exc:  # cancelled, or a budget ended the wait
                    finish_error(state, exc)
                    raise
                replayed, mapping = apply_effect(session, state)
                if replayed is not _MISSING:
                    return finish_ok(state, replayed)
            try:
                if mapping is not None:
                    out = await binder.call(fn, mapping)
                else:
                    out = await fn(*args, **kwargs)
            except BaseException as exc:  # SystemExit, a cancellation: the call has its end
                finish_error(state, exc)
                raise
            if state.effect is not None and state.effect.lost is not None:
                raise await session.alose(state, out)  # the tool ran; its reply is lost
            return finish_ok(state, out)

        wrapper = async_wrapper
    else:

        def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            state = begin(channel, target, to_mapping(args, kwargs) if args else kwargs, schema)
            if state[6] is None:  # no effect: the path of every call no fault hits
                try:
                    out = fn(*args, **kwargs)
                except BaseException as exc:  # SystemExit, a halt: the call has its end
                    finish_error(state, exc)
                    raise
                return finish_plain(state, out)
            try:
                session.delay(state)
            except BaseException as exc:  # a budget or a halt ended the wait
                finish_error(state, exc)
                raise
            replayed, mapping = apply_effect(session, state)
            if replayed is not _MISSING:
                return finish_ok(state, replayed)
            try:
                out = binder.call(fn, mapping) if mapping is not None else fn(*args, **kwargs)
            except BaseException as exc:
                finish_error(state, exc)
                raise
            return finish_ok(state, out)

        wrapper = sync_wrapper

    finish_wrapper(wrapper, fn, target)
    if name is not None:  # frameworks take a tool's name from __name__: keep it the trace's
        wrapper.__name__ = name
    wrapper.__chaos_tool__ = target  # type: ignore[union-attr]
    wrapper.__chaos_schema__ = schema  # type: ignore[union-attr]
    return wrapper  # type: ignore[return-value]


def _wire(repair: Any, session: ChaosSession) -> Any:
    """The repairer wired to the run (its trace and virtual clock) when it can be."""
    if not callable(getattr(repair, "repair", None)) or not callable(
        getattr(repair, "declined", None)
    ):
        raise TypeError(
            "chaos.wrap(repair=...) needs a ParamRepairer (an object with repair() and "
            f"declined()), got {safe_repr(repair, 80)}"
        )
    wired = getattr(repair, "wired", None)
    if not callable(wired):
        return repair
    clock = session.clock
    return wired(session, lambda: _dt.datetime.fromtimestamp(clock.now(), _dt.timezone.utc))


def _repairing(
    session: ChaosSession,
    fn: Callable[..., Any],
    target: str,
    schema: Mapping[str, Any] | None,
    channel: str,
    binder: Binder,
    repairer: Any,
) -> Callable[..., Any]:
    """The wrapper of a tool whose arguments are repaired before it runs."""
    from .intercept import Interceptor  # it builds on apply_effect above

    core = Interceptor(session, target, channel=channel, schema=schema, repairer=repairer)
    to_mapping = binder.to_mapping

    if is_async_callable(fn):

        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            return await core.acall(to_mapping(args, kwargs), lambda m: binder.call(fn, m))

        return async_wrapper

    def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return core.call(to_mapping(args, kwargs), lambda m: binder.call(fn, m))

    return sync_wrapper


def wrap_tools(
    session: ChaosSession,
    tools: Mapping[str, Callable[..., Any]] | Sequence[Callable[..., Any]],
    schemas: Mapping[str, Mapping[str, Any]] | None = None,
) -> Any:
    """Wrap every tool of a name -> callable mapping (or a list, named by ``__name__``)."""
    __tracebackhide__ = True
    if schemas is not None and not isinstance(schemas, Mapping):
        raise fail(
            "chaos.wrap_tools(): schemas",
            f"expected a mapping of tool name -> JSON Schema, got {safe_repr(schemas, 80)}",
        )
    schemas = schemas or {}
    if isinstance(tools, Mapping):
        names = list(tools)
    elif isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
        raise TypeError(
            f"wrap_tools() needs a mapping or a list of callables, got {safe_repr(tools, 80)}"
        )
    else:
        names = [tool_name(f) if callable(f) else "?" for f in tools]
    unknown = sorted(str(k) for k in schemas if k not in names)
    if unknown:
        raise fail(
            "chaos.wrap_tools(): schemas",
            f"a schema for {unknown[0]!r}, which is not among the tools: {', '.join(names)}",
        )
    if isinstance(tools, Mapping):
        return {k: wrap(session, f, name=k, schema=schemas.get(k)) for k, f in tools.items()}
    return [wrap(session, f, schema=schemas.get(tool_name(f))) for f in tools]
