"""Lazy re-exports for package ``__init__`` modules: a name's module loads on first use.

Loading the pytest plugin must stay cheap (DESIGN: lazy imports), so packages re-export their
public names without importing the modules behind them until someone reads one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["exports"]


def exports(
    package: str, names: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose name ``n`` lives in its submodule
    ``names[n]``; a loaded name is cached in ``namespace`` (the package's globals)."""
    public = sorted(names)

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return public

    return __getattr__, __dir__
