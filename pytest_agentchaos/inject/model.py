"""Wrapping model calls: the plan's faults apply, outputs and token usage are traced."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .binding import Binder
from .callables import _pre, finish_wrapper, is_async_callable, tool_name
from .session import _MISSING, ChaosSession

F = TypeVar("F", bound=Callable[..., Any])

TokenCounter = Callable[[Any], "int | None"]


def default_tokens(output: Any) -> int | None:
    """Token usage from the common response shapes (OpenAI, Anthropic, dicts), else ``None``."""
    usage = output.get("usage") if isinstance(output, Mapping) else getattr(output, "usage", None)
    if usage is None:
        return None

    def get(key: str) -> Any:
        return usage.get(key) if isinstance(usage, Mapping) else getattr(usage, key, None)

    total = get("total_tokens")
    if isinstance(total, int):
        return total
    parts = [
        get(k) for k in ("input_tokens", "output_tokens", "prompt_tokens", "completion_tokens")
    ]
    numbers = [p for p in parts if isinstance(p, int)]
    return sum(numbers) if numbers else None


def wrap_model(
    session: ChaosSession,
    fn: F,
    *,
    name: str = "model",
    tokens: TokenCounter | None = None,
) -> F:
    """Return the model function ``fn`` wrapped: traced, budgeted, subject to the plan."""
    if not callable(fn):
        raise TypeError(f"chaos.model() needs a callable, got {fn!r}")
    count = tokens or default_tokens
    binder = Binder(fn)
    target = name or tool_name(fn)

    if is_async_callable(fn):

        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            state = session.begin("model", target, binder.to_mapping(args, kwargs))
            if state.effect is not None:
                await session.adelay(state)
                replayed, _ = _pre(session, state, binder)
                if replayed is not _MISSING:
                    return session.finish_ok(state, replayed, tokens=count(replayed))
            try:
                out = await fn(*args, **kwargs)
            except Exception as exc:
                session.finish_error(state, exc)
                raise
            return session.finish_ok(state, out, tokens=count(out))

        wrapper: Callable[..., Any] = async_wrapper
    else:

        def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
            state = session.begin("model", target, binder.to_mapping(args, kwargs))
            if state.effect is not None:
                session.delay(state)
                replayed, _ = _pre(session, state, binder)
                if replayed is not _MISSING:
                    return session.finish_ok(state, replayed, tokens=count(replayed))
            try:
                out = fn(*args, **kwargs)
            except Exception as exc:
                session.finish_error(state, exc)
                raise
            return session.finish_ok(state, out, tokens=count(out))

        wrapper = sync_wrapper

    finish_wrapper(wrapper, fn, target)
    return wrapper  # type: ignore[return-value]
