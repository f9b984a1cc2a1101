"""A chaos test's body as :mod:`..harness.rerun` runs it again in-process (a search's tries, a
breaking point's probes): each run gets the test's function-scoped fixtures afresh, set up
inside its chaos run and torn down before that run ends, as pytest gives them to the test's
own run, and a test method gets a fresh instance of its class. Fixtures of a wider scope
(class, module, session) are shared between the runs, as between two tests.

pytest has no public API to set one test's fixtures up twice; this does what
pytest-rerunfailures does to re-run a test: the function-scoped ``FixtureDef`` s are finished
through the finalizers the item holds in the session's ``SetupState``, and the item's request
is made anew (``Function._initrequest``) before its fixtures are filled again.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from ..harness.rerun import NotRerunnable
from ..saferepr import safe_str
from .state import ATTEMPT

if TYPE_CHECKING:
    from ..inject.chaos import Chaos

__all__ = ["FreshBody"]

_PASS_THROUGH = (pytest.skip.Exception, pytest.xfail.Exception)
_FRESH = "a re-run of the body sets its function-scoped fixtures up afresh"


class FreshBody:
    """``body(chaos)``: the test's body once more, with ``chaos`` as its ``agentchaos`` /
    ``chaos`` fixture (and the fixtures that use it) and its other function-scoped fixtures
    set up afresh. ``interrupts`` propagate as they are; a fixture that cannot be set up again
    or torn down raises :class:`NotRerunnable`, naming it."""

    def __init__(self, item: pytest.Item, interrupts: tuple[type[BaseException], ...]) -> None:
        self.item = item
        self.interrupts = interrupts
        #: the item's finalizers when its call began: later ones are its body's own
        self._mark = len(_finalizers(item))
        #: what the item's stash held when its call began: a fixture may take what a hook put
        #: there for it (``tmp_path`` pops the setup phase's outcome as it is torn down)
        self._stash: dict[Any, Any] = dict(getattr(item.stash, "_storage", {}))

    def start(self) -> None:
        """Before the first re-run (and outside any run): tear down what the test's own run
        set up, its body's finalizers (``request.addfinalizer``) and its function-scoped
        fixtures; the item's other finalizers are left for its teardown."""
        stack = _finalizers(self.item)
        own = stack[self._mark :]
        del stack[self._mark :]
        fixtures = [f for f in stack if _function_fixture(f) is not None]
        stack[:] = [f for f in stack if _function_fixture(f) is None]
        self._finish([*fixtures, *own])
        self._mark = len(stack)

    def __call__(self, chaos: Chaos) -> None:
        item = self.item
        item.stash[ATTEMPT] = chaos
        error: BaseException | None = None
        try:
            self._restore_stash()
            self._setup()
            with contextlib.suppress(*_PASS_THROUGH):
                item.runtest()
        except BaseException as exc:  # noqa: BLE001 - raised again once torn down
            error = exc
        finally:
            del item.stash[ATTEMPT]
        stack = _finalizers(item)
        added = stack[self._mark :]
        del stack[self._mark :]
        self._restore_stash()
        try:
            self._finish(added)
        except NotRerunnable:
            # over the body's own failure: a run whose fixtures stay up cannot be judged
            # against the next; not over an interruption or an earlier reason
            if not isinstance(error, (NotRerunnable, *self.interrupts)):
                raise
        if error is not None:
            raise error

    def _restore_stash(self) -> None:
        stash = self.item.stash
        for key, value in self._stash.items():
            if key not in stash:
                stash[key] = value

    def _setup(self) -> None:
        item: Any = self.item
        instance = item.__dict__.get("_instance")
        method = item.__dict__.get("_obj")
        if instance is not None and getattr(method, "__self__", None) is instance:
            # a test method bound to its instance (not a plugin's wrapper): a fresh instance
            item._instance = instance = item._getinstance()
            item._obj = getattr(instance, item.originalname)
        item._initrequest()
        try:
            item.setup()
        except self.interrupts:
            raise
        except BaseException as exc:  # noqa: BLE001 - any: said as the body's problem
            name = _failed_fixture(item)
            what = f"its fixture {name!r}" if name else "its fixtures"
            raise NotRerunnable(f"{what} cannot be set up again ({_said(exc)}): {_FRESH}") from None

    def _finish(self, finalizers: list[Callable[[], object]]) -> None:
        """Run ``finalizers`` last first, as pytest tears a test down; the first that fails
        is said (the others still run)."""
        problem: str | None = None
        for finalizer in reversed(finalizers):
            try:
                finalizer()
            except self.interrupts:
                raise
            except BaseException as exc:  # noqa: BLE001 - any: said as the body's problem
                if problem is None:
                    name = _function_fixture(finalizer)
                    what = f"its fixture {name.argname!r}" if name else "a finalizer of its"
                    problem = f"{what} failed to tear down between re-runs ({_said(exc)})"
        if problem is not None:
            raise NotRerunnable(problem)


def _finalizers(item: pytest.Item) -> list[Callable[[], object]]:
    """The item's finalizers in the session's setup state (pytest runs them last first)."""
    stack: Any = item.session._setupstate.stack  # noqa: SLF001 - see the module's docstring
    found: list[Callable[[], object]] = stack[item][0]
    return found


def _function_fixture(finalizer: Callable[[], object]) -> Any:
    """The function-scoped ``FixtureDef`` a finalizer finishes (None: another finalizer)."""
    if not isinstance(finalizer, functools.partial):
        return None
    fixturedef = getattr(finalizer.func, "__self__", None)
    if getattr(fixturedef, "scope", None) != "function" or not hasattr(fixturedef, "argname"):
        return None
    return fixturedef


def _failed_fixture(item: Any) -> str | None:
    """The name of the fixture whose setup just failed (its cached result holds the error)."""
    info = getattr(item, "_fixtureinfo", None)
    for defs in getattr(info, "name2fixturedefs", {}).values():
        for fixturedef in defs:
            cached = getattr(fixturedef, "cached_result", None)
            if cached is not None and cached[2] is not None:
                return str(fixturedef.argname)
    return None


def _said(error: BaseException) -> str:
    detail = safe_str(error, 200).strip()
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__
