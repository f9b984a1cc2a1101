"""Idempotency keys for side-effecting tools: one key per intent, the same on every retry.

A retry after a lost reply (the tool booked the flight, the agent saw a timeout) books it again
unless the tool can tell the retry from a new request. The usual way is an idempotency key the
caller sends with the request and the tool (or the API behind it) deduplicates on. The key must
be the same for every attempt of one intent, also when the agent itself asks again after an
error, in another process, after a rebirth; a fresh random key per call defeats it.

:func:`idempotency_key` derives the key from the intent: the tool and its arguments with their
volatile fields masked as the loop detector masks them (request ids, timestamps, attempt
counters, an idempotency key already there), plus an optional ``scope`` for two intents that
really are the same request twice (two tickets for one passenger: pass the task or order id).
:func:`keyed` wraps a tool so every call carries it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .history import digest
from .normalize import mask_args

__all__ = ["IDEMPOTENCY_FIELD", "idempotency_key", "is_key_field", "key_of", "keyed", "without_key"]

F = TypeVar("F", bound=Callable[..., Any])

#: The argument a keyed tool gets its key in, by default.
IDEMPOTENCY_FIELD = "idempotency_key"
#: How the names of an idempotency key's field read once lower-cased, ``-`` as ``_``.
_KEY_NAMES = frozenset({"idempotency_key", "idempotencykey"})
#: Field names already judged (bounded: names past the bound are judged anew).
_NAMES: dict[str, bool] = {}


def is_key_field(name: Any) -> bool:
    """Whether an argument's name is an idempotency key's: ``idempotency_key``,
    ``Idempotency-Key``, ``idempotencyKey``, in any case."""
    if type(name) is not str:
        return isinstance(name, str) and name.lower().replace("-", "_") in _KEY_NAMES
    found = _NAMES.get(name)
    if found is None:
        found = name.lower().replace("-", "_") in _KEY_NAMES
        if len(_NAMES) < 4096:
            _NAMES[name] = found
    return found


def key_of(args: Any) -> str | None:
    """The idempotency key a call's arguments carry (a string or an integer), at the top
    level or one level down (an HTTP call's ``json``); None when they carry none."""
    if type(args) is not dict and not isinstance(args, dict):
        return None
    names = _NAMES
    nested = None
    for name, value in args.items():  # the top level first, then each dict in it
        found = names.get(name) if type(name) is str else None
        if found is None:
            found = is_key_field(name)
        if found and isinstance(value, (str, int)) and not isinstance(value, bool):
            return str(value)
        if isinstance(value, dict):
            nested = [value] if nested is None else [*nested, value]
    for level in nested or ():
        for name, value in level.items():
            if is_key_field(name) and isinstance(value, (str, int)) and not isinstance(value, bool):
                return str(value)
    return None


def without_key(args: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` without their idempotency key fields (at the top level and one level down):
    what the call asks for, whatever key it carries."""
    return {
        name: {k: v for k, v in value.items() if not is_key_field(k)}
        if isinstance(value, dict)
        else value
        for name, value in args.items()
        if not is_key_field(name)
    }


def idempotency_key(tool: str, args: Mapping[str, Any], *, scope: str = "") -> str:
    """The idempotency key of calling ``tool`` with ``args``: the same for every call with the
    same arguments (volatile fields aside) and ``scope``, in any process; another for any
    other. ``book-3f9c0a1e2b4d5c6f``."""
    return f"{tool}-{digest(['idempotency', tool, scope, mask_args(without_key(args))])}"


def keyed(
    fn: F,
    *,
    name: str | None = None,
    field: str = IDEMPOTENCY_FIELD,
    scope: str | Callable[[Mapping[str, Any]], str] = "",
) -> F:
    """``fn`` with ``field`` set to :func:`idempotency_key` of its keyword arguments when the
    caller did not pass one: every retry of one intent carries one key. ``name`` names the
    tool in the key (default: the function's name); ``scope`` is a string or a function of the
    arguments (see :func:`idempotency_key`).

    Wrap outside the layer that records the call (``keyed(chaos.wrap(book))``, not
    ``chaos.wrap(keyed(book))``) so the trace shows the key the tool received. Positional
    arguments are bound to their names first (``fn`` must accept ``field``). Coroutine
    functions stay coroutine functions."""
    tool = name or getattr(fn, "__name__", None) or "tool"
    try:
        signature: inspect.Signature | None = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None

    def with_key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if args:
            kwargs = _by_name(tool, signature, args, kwargs)
        if kwargs.get(field) is None:
            plain = without_key({k: v for k, v in kwargs.items() if k != field})
            where = scope(plain) if callable(scope) else scope
            kwargs[field] = idempotency_key(tool, plain, scope=where)
        return kwargs

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def acall(*args: Any, **kwargs: Any) -> Any:
            return await fn(**with_key(args, kwargs))

        return acall  # type: ignore[return-value]

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(**with_key(args, kwargs))

    return call  # type: ignore[return-value]


def _by_name(
    tool: str, signature: inspect.Signature | None, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> dict[str, Any]:
    """Positional arguments bound to their parameters' names."""
    if signature is None:
        raise TypeError(f"keyed({tool}): pass the arguments by name")
    named: dict[str, Any] = {}
    for param, value in signature.bind_partial(*args, **kwargs).arguments.items():
        kind = signature.parameters[param].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            raise TypeError(f"keyed({tool}): *{param} cannot be passed by name")
        if kind is inspect.Parameter.VAR_KEYWORD:
            named.update(value)
        else:
            named[param] = value
    return named
