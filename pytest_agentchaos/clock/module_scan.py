"""freezegun's search of loaded modules for time functions, read from their ``__dict__``.

Freezing time also rebinds every module-level name bound to a real time function (``from
time import time``). freezegun finds those names, each time it starts, with ``dir(module)``
and ``getattr`` on every loaded module. A lazy module computes its ``dir()`` anew on each call
(transformers' ``_LazyModule`` lists every name it could import), and freezegun's first
``getattr`` of those names imports them all. With the ``semantic`` extra loaded that made the
first chaos test of a process take ~18 s and each one after ~0.8 s, for modules whose code
never reads the clock.

The names a module has bound are its ``__dict__``; reading that finds the same bindings
without running any module's code (no ``__dir__``, no ``__getattr__``, no import). What a
lazy module could import but has not is bound to no time function. :func:`dict_scan` puts
this reading in place of freezegun's for the length of one ``start()``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

Attributes = list[tuple[str, Any]]

#: module name -> (id of the module, hash of its names, its names bound to real time objects)
_CACHE: dict[str, tuple[int, int, Attributes]] = {}
_LOCK = threading.Lock()
_MISSING = object()


def time_bindings(module: ModuleType, real_ids: set[int]) -> Attributes | None:
    """The ``(name, value)`` pairs of ``module``'s own namespace whose value is one of the real
    time objects (``real_ids``: their ids), or ``None`` when the namespace cannot be read
    (no ``__dict__``, or another thread changed it mid-read): the caller then asks freezegun."""
    try:
        names = vars(module)
        key = hash(frozenset(names))
    except (TypeError, RuntimeError):
        return None
    cached = _CACHE.get(module.__name__)
    # same module, same names: the bindings found before, if each still holds its value
    if (
        cached is not None
        and cached[:2] == (id(module), key)
        and all(names.get(name, _MISSING) is value for name, value in cached[2])
    ):
        return cached[2]
    try:
        found = [(name, value) for name, value in list(names.items()) if id(value) in real_ids]
    except RuntimeError:
        return None
    _CACHE[module.__name__] = (id(module), key, found)
    return found


@contextlib.contextmanager
def dict_scan() -> Iterator[None]:
    """Within the block, freezegun's ``start()`` reads each module's ``__dict__`` instead of
    its ``dir()``. Where freezegun has no such internals (another release), it scans its own
    way: slower, the same result."""
    from freezegun import api

    original: Callable[[ModuleType], Attributes] | None = getattr(
        api, "_get_cached_module_attributes", None
    )
    real_ids = getattr(api, "_real_time_object_ids", None)
    if original is None or not isinstance(real_ids, set):
        yield
        return

    def attributes(module: ModuleType) -> Attributes:
        found = time_bindings(module, real_ids)
        return original(module) if found is None else found

    with _LOCK:  # one start() at a time puts its reading in place and takes it back
        setattr(api, "_get_cached_module_attributes", attributes)  # noqa: B010
        try:
            yield
        finally:
            setattr(api, "_get_cached_module_attributes", original)  # noqa: B010
