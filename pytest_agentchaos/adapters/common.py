"""What the framework adapters share: how a model turn reads in the trace, and how a replayed
or paraphrased model turn gets its new words. Free of any framework."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..inject.call import CallState
from ..inject.errors import NativeErrors
from ..inject.session import ChaosSession
from ..inject.turn import describe_turn, transformed

__all__ = [
    "describe_turn",
    "finish_model",
    "native_errors",
    "schema_of_model",
    "transformed",
]


def finish_model(
    session: ChaosSession,
    read: Callable[[Any], tuple[str, list[tuple[str, Any]], int | None]],
    rewrite: Callable[[Any, str], Any],
) -> Callable[[CallState, Any], Any]:
    """An ``Interceptor`` ``finish`` for a framework's model responses: ``read(response)`` is
    (text, tool calls as (name, args), tokens or None); ``rewrite(response, text)`` a copy of
    the response saying ``text`` (used when a fault paraphrases a replayed answer). The trace
    records the turn as :func:`describe_turn` shows it."""

    def finish(state: CallState, response: Any) -> Any:
        __tracebackhide__ = True
        try:
            text, calls, tokens = read(response)
        except Exception as exc:  # a response the adapter cannot read: keep it, say so
            return session.finish_ok(
                state, response, transform=False, usage_error=f"unreadable response: {exc}"
            )
        new = transformed(state, text)
        if new is not None:
            response, text = rewrite(response, new), new
        return session.finish_ok(
            state, response, tokens=tokens, transform=False, recorded=describe_turn(text, calls)
        )

    return finish


def schema_of_model(model: Any) -> Mapping[str, Any] | None:
    """The JSON Schema of a pydantic model class (or a JSON Schema dict as it is)."""
    if isinstance(model, Mapping):
        return model
    dump = getattr(model, "model_json_schema", None)
    if callable(dump):
        schema = dump()
        return schema if isinstance(schema, Mapping) else None
    return None


def native_errors(
    session: ChaosSession,
    provider: str,
    seam: str,
    *,
    base_url: str | None = None,
    path: str | None = None,
    marked: bool = True,
) -> NativeErrors | None:
    """The ``provider`` SDK's errors (:func:`~pytest_agentchaos.inject.provider_errors.
    provider_errors`) for ``seam`` (a few words naming it in a note), or ``None`` when the SDK
    is not installed: the seam then raises the built-in kinds, and the run's trace says so once
    (meta ``notes``)."""
    from ..inject.provider_errors import provider_errors

    errors = provider_errors(provider, base_url=base_url, path=path, marked=marked)
    if errors is None:
        session.note(
            f"{seam}: the {provider} package is not installed, so injected faults raise the "
            "built-in errors (TimeoutError, ConnectionError, InjectedHTTPError), not its own"
        )
    return errors
