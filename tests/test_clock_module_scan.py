"""Freezing time finds the time functions modules bound by name from their namespace alone:
a lazy module's ``dir()`` / ``__getattr__`` (which list or import everything it could load)
are never run, and what a module binds, rebinds or adds is still frozen."""

from __future__ import annotations

import sys
import time
import types
from collections.abc import Iterator

import pytest

from pytest_agentchaos.clock import VirtualClock, install, module_scan


class LazyModule(types.ModuleType):
    """A module like transformers' ``_LazyModule``: its ``dir()`` and unknown names run code."""

    calls: list[str]

    def __dir__(self) -> list[str]:
        self.calls.append("__dir__")
        return [*super().__dir__(), "heavy_submodule"]

    def __getattr__(self, name: str) -> object:
        self.calls.append(f"getattr {name}")
        raise ImportError(f"importing {name} would load a model")


@pytest.fixture
def lazy() -> Iterator[LazyModule]:
    module = LazyModule("agentchaos_test_lazy_module")
    module.calls = []
    module.now = time.time  # type: ignore[attr-defined]  # `from time import time`
    sys.modules[module.__name__] = module
    try:
        yield module
    finally:
        del sys.modules[module.__name__]


def test_a_lazy_modules_bindings_are_frozen_without_running_its_code(lazy: LazyModule) -> None:
    real = time.time
    clock = VirtualClock()
    handle = install(clock)
    try:
        frozen = lazy.now()  # type: ignore[attr-defined]
        clock.advance(42)
        assert lazy.now() - frozen == pytest.approx(42)  # type: ignore[attr-defined]
    finally:
        handle.uninstall()
    assert lazy.now is real  # type: ignore[attr-defined]
    assert lazy.calls == []


def test_a_name_rebound_or_added_between_runs_is_seen(lazy: LazyModule) -> None:
    real = time.time
    install(VirtualClock()).uninstall()  # the module's bindings are now remembered

    lazy.now = len  # type: ignore[attr-defined]  # same names, another value
    handle = install(VirtualClock())
    try:
        assert lazy.now is len  # type: ignore[attr-defined]  # not overwritten by a stale memory
    finally:
        handle.uninstall()

    lazy.later = real  # type: ignore[attr-defined]  # a new name bound to the clock
    clock = VirtualClock()
    handle = install(clock)
    try:
        first = lazy.later()  # type: ignore[attr-defined]
        clock.advance(5)
        assert lazy.later() - first == pytest.approx(5)  # type: ignore[attr-defined]
    finally:
        handle.uninstall()
    assert lazy.later is real  # type: ignore[attr-defined]


def test_a_module_without_a_namespace_is_left_to_freezegun() -> None:
    from freezegun import api

    class Opaque:
        __name__ = "opaque"
        __slots__ = ()

    assert module_scan.time_bindings(Opaque(), api._real_time_object_ids) is None  # type: ignore[arg-type]


def test_another_freezegun_without_these_internals_keeps_its_own_scan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from freezegun import api

    own = api._get_cached_module_attributes
    # a release whose internals differ: its own scan runs (slower, the same bindings)
    monkeypatch.setattr(api, "_real_time_object_ids", frozenset(api._real_time_object_ids))
    with module_scan.dict_scan():
        assert api._get_cached_module_attributes is own
    monkeypatch.undo()
    with module_scan.dict_scan():
        assert api._get_cached_module_attributes is not own
    assert api._get_cached_module_attributes is own


def test_freezegun_gets_its_own_scan_back_even_when_start_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from freezegun import api

    own = api._get_cached_module_attributes

    class Broken(types.ModuleType):
        def __getattribute__(self, name: str) -> object:
            if name == "__dict__":
                raise RuntimeError("a finaliser ran mid-scan")
            return super().__getattribute__(name)

    broken = Broken("agentchaos_test_broken_module")
    monkeypatch.setitem(sys.modules, broken.__name__, broken)
    monkeypatch.setattr(api, "_get_cached_module_attributes", own)
    with pytest.raises(RuntimeError, match="mid-scan"):
        install(VirtualClock())
    assert api._get_cached_module_attributes is own
    assert time.time is api.real_time
