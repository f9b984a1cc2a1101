"""Turning a call's ``(*args, **kwargs)`` into a name -> value mapping and back.

The mapping is what the trace records and what ``malformed_params`` corrupts; the call is
rebuilt from the (possibly corrupted) mapping so the tool sees realistic bad input.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

_POS_ONLY = inspect.Parameter.POSITIONAL_ONLY
_VAR_POS = inspect.Parameter.VAR_POSITIONAL
_VAR_KW = inspect.Parameter.VAR_KEYWORD


class Binder:
    """Caches a callable's signature for fast binding."""

    __slots__ = ("signature", "_pos_only", "_var_pos", "_var_kw")

    def __init__(self, fn: Callable[..., Any]) -> None:
        try:
            self.signature: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):
            self.signature = None
        params = self.signature.parameters.values() if self.signature else ()
        self._pos_only = [p.name for p in params if p.kind is _POS_ONLY]
        self._var_pos = next((p.name for p in params if p.kind is _VAR_POS), None)
        self._var_kw = next((p.name for p in params if p.kind is _VAR_KW), None)

    def to_mapping(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        if not args:
            return dict(kwargs)
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
        values = dict(mapping)
        positional = [values.pop(name) for name in self._pos_only if name in values]
        if self._var_pos is not None and self._var_pos in values:
            positional.extend(values.pop(self._var_pos))
        elif self.signature is None and "args" in values:
            positional.extend(values.pop("args"))
        return fn(*positional, **values)
