"""Turning a call's ``(*args, **kwargs)`` into a name -> value mapping and back.

The mapping is what the trace records and what ``malformed_params`` corrupts; the call is
rebuilt from the (possibly corrupted) mapping so the tool sees realistic bad input.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

_POS_ONLY = inspect.Parameter.POSITIONAL_ONLY
_POS_OR_KW = inspect.Parameter.POSITIONAL_OR_KEYWORD
_VAR_POS = inspect.Parameter.VAR_POSITIONAL
_VAR_KW = inspect.Parameter.VAR_KEYWORD


class Binder:
    """Caches a callable's signature for fast binding.

    Most tools take plain positional-or-keyword parameters: their positional arguments are
    named by position (no ``Signature.bind``, which costs more than the rest of a call's
    recording). Other signatures, and calls that do not fit, bind the slow, exact way.
    """

    __slots__ = ("signature", "_pos_only", "_var_pos", "_var_kw", "_names")

    def __init__(self, fn: Callable[..., Any]) -> None:
        try:
            self.signature: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):
            self.signature = None
        params = list(self.signature.parameters.values()) if self.signature else []
        self._pos_only = [p.name for p in params if p.kind is _POS_ONLY]
        self._var_pos = next((p.name for p in params if p.kind is _VAR_POS), None)
        self._var_kw = next((p.name for p in params if p.kind is _VAR_KW), None)
        leading: list[str] = []
        for p in params:
            if p.kind is not _POS_OR_KW:
                break
            leading.append(p.name)
        simple = self.signature is not None and not self._pos_only and self._var_pos is None
        #: positional names when positional arguments can be named by position alone
        self._names: tuple[str, ...] | None = tuple(leading) if simple else None

    def to_mapping(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The call's arguments by parameter name (``**kwargs`` merged in; positional ones
        that cannot be bound go under ``"args"``); with no positional ones, ``kwargs`` itself."""
        if not args:
            return kwargs
        names = self._names
        if names is None or len(args) > len(names):
            return self._bind(args, kwargs)
        # the common one-argument case skips zip
        mapping = (
            {names[0]: args[0]} if len(args) == 1 else dict(zip(names[: len(args)], args))  # noqa: B905 - equal lengths
        )
        if kwargs:
            for key in kwargs:
                if key in mapping:
                    return self._bind(args, kwargs)  # a clash: let bind() say what is wrong
            mapping.update(kwargs)
        return mapping

    def _bind(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        if self.signature is None:
            return {"args": list(args), **kwargs}
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError:
            return {"args": list(args), **kwargs}
        mapping = dict(bound.arguments)
        if self._var_kw is not None and self._var_kw in mapping:
            mapping.update(mapping.pop(self._var_kw))
        return mapping

    def call(self, fn: Callable[..., Any], mapping: Mapping[str, Any]) -> Any:
        """Call ``fn`` with the arguments in ``mapping``."""
        __tracebackhide__ = True
        values = dict(mapping)
        positional = [values.pop(name) for name in self._pos_only if name in values]
        if self._var_pos is not None and self._var_pos in values:
            positional.extend(values.pop(self._var_pos))
        elif self.signature is None and "args" in values:
            positional.extend(values.pop("args"))
        return fn(*positional, **values)
