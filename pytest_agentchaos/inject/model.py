"""Wrapping model calls: the plan's faults apply, outputs and token usage are traced."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ..saferepr import safe_repr, safe_str
from .binding import Binder
from .call import CallState
from .callables import apply_effect, check_name, finish_wrapper, is_async_callable
from .session import _MISSING, ChaosSession

F = TypeVar("F", bound=Callable[..., Any])

TokenCounter = Callable[[Any], "int | None"]

_TOKEN_KEYS = ("input_tokens", "output_tokens", "prompt_tokens", "completion_tokens")


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def default_tokens(output: Any) -> int | None:
    """Token usage from the common response shapes (OpenAI, Anthropic, dicts), else ``None``.

    ``usage.total_tokens``, else the sum of its input/output (prompt/completion) counts.
    Raises ``ValueError`` when a usage is reported but its counts are not counts
    (``"lots"``, ``-3``, ``1.5``): silently reading none would leave ``max_tokens`` unenforced.
    """
    if isinstance(output, Mapping):
        usage = output.get("usage")
    else:
        try:
            usage = getattr(output, "usage", None)
        except Exception:
            return None
    if usage is None:
        return None

    def get(key: str) -> Any:
        try:
            return usage.get(key) if isinstance(usage, Mapping) else getattr(usage, key, None)
        except Exception:
            return None

    total = get("total_tokens")
    if total is not None:
        if not _is_count(total):
            raise ValueError(f"usage.total_tokens is {safe_repr(total, 60)}, not a count")
        return int(total)
    parts = {key: get(key) for key in _TOKEN_KEYS}
    for key, value in parts.items():
        if value is not None and not _is_count(value):
            raise ValueError(f"usage.{key} is {safe_repr(value, 60)}, not a count")
    numbers = [int(v) for v in parts.values() if v is not None]
    return sum(numbers) if numbers else None


def _usage(count: TokenCounter, output: Any) -> tuple[int | None, str | None]:
    """(tokens, None), or (None, why the usage could not be read)."""
    try:
        tokens = count(output)
    except ValueError as exc:  # default_tokens: a usage whose counts are not counts
        return None, safe_str(exc, 200)
    except Exception as exc:
        return None, f"{type(exc).__name__}: {safe_str(exc, 200)}"
    if tokens is None or _is_count(tokens):
        return tokens, None
    return None, f"the counter returned {safe_repr(tokens, 60)}, not a count"


def wrap_model(
    session: ChaosSession,
    fn: F,
    *,
    name: str = "model",
    tokens: TokenCounter | None = None,
) -> F:
    """Return the model function ``fn`` wrapped: traced, budgeted, subject to the plan."""
    __tracebackhide__ = True
    if not callable(fn):
        raise TypeError(f"chaos.model() needs a callable, got {safe_repr(fn, 80)}")
    if tokens is not None and not callable(tokens):
        raise TypeError(f"chaos.model(): tokens must be a callable, got {safe_repr(tokens, 80)}")
    target = check_name(name, "chaos.model(): name")
    count = tokens or default_tokens
    binder = Binder(fn)

    def done(state: CallState, out: Any) -> Any:
        __tracebackhide__ = True
        used, why = _usage(count, out)
        return session.finish_ok(state, out, tokens=used, usage_error=why)

    if is_async_callable(fn):

        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            state = session.begin("model", target, binder.to_mapping(args, kwargs))
            if state.effect is not None:
                try:
                    await session.adelay(state)
                except BaseException as exc:  # cancelled, or a budget ended the wait
                    session.finish_error(state, exc)
                    raise
                replayed, _ = apply_effect(session, state)
                if replayed is not _MISSING:
                    return done(state, replayed)
            try:
                out = await fn(*args, **kwargs)
            except BaseException as exc:  # SystemExit, a cancellation: the call has its end
                session.finish_error(state, exc)
                raise
            return done(state, out)

        wrapper: Callable[..., Any] = async_wrapper
    else:

        def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            state = session.begin("model", target, binder.to_mapping(args, kwargs))
            if state.effect is not None:
                try:
                    session.delay(state)
                except BaseException as exc:  # a budget or a halt ended the wait
                    session.finish_error(state, exc)
                    raise
                replayed, _ = apply_effect(session, state)
                if replayed is not _MISSING:
                    return done(state, replayed)
            try:
                out = fn(*args, **kwargs)
            except BaseException as exc:  # SystemExit, a cancellation: the call has its end
                session.finish_error(state, exc)
                raise
            return done(state, out)

        wrapper = sync_wrapper

    finish_wrapper(wrapper, fn, target)
    return wrapper  # type: ignore[return-value]
