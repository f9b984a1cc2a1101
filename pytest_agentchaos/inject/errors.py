"""Exceptions that injected faults raise, and how a seam's own exceptions are marked injected.

On a plain Python tool or model function a fault raises one of ours, which subclass the
built-in exceptions an agent already handles (``TimeoutError``, ``ConnectionError``,
``RuntimeError``). Where a framework or a provider SDK is in the loop, a fault raises *that
seam's own* exception (``openai.RateLimitError``, pydantic-ai's ``ModelHTTPError`` ...), built
by the code that builds the real one (see :mod:`.provider_errors` and the adapters), so the
agent's ``except`` clauses, retry policies and fallbacks treat it as real.

Either way the exception is recognisably injected: it is an instance of :class:`InjectedFault`
(a native one through a subclass that keeps the native class's name, module and behaviour),
carries the ``FaultInjected`` event as ``.fault``, and (Python 3.11+) a note naming the fault.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ..faults.effects import Failure
from ..saferepr import safe_str
from ..trace.events import FaultInjected

X = TypeVar("X", bound=BaseException)

#: Builds the exception a seam raises for an injected failure (its own type, as the real
#: failure would raise it). ``None`` from it means "no native form": the built-in one is used.
NativeErrors = Callable[[Failure], "BaseException | None"]


class InjectedFault(Exception):
    """Base of every exception raised by an injected fault (a native one included:
    ``isinstance(exc, InjectedFault)`` tells an injected ``openai.RateLimitError`` from a
    real one)."""

    injected = True
    #: the trace event of the fault that raised it
    fault: FaultInjected | None = None

    def __init__(self, message: str, *, fault: FaultInjected | None = None) -> None:
        super().__init__(message)
        self.fault = fault


class InjectedTimeout(InjectedFault, TimeoutError):
    """The call hung until it timed out (virtual time)."""


class InjectedConnectionError(InjectedFault, ConnectionError):
    """The connection was refused or dropped."""


class InjectedConnectionReset(InjectedConnectionError, ConnectionResetError):
    """The connection was reset after the request went out: its reply was lost
    (``lost_reply``; the call itself ran)."""


class InjectedCrash(InjectedFault, RuntimeError):
    """An agent's step crashed with an unexpected error (the ``crash`` fault)."""


class InjectedProtocolError(InjectedFault, RuntimeError):
    """The call failed with a JSON-RPC error response (``protocol_error``); ``code`` is its
    error code."""

    def __init__(self, message: str, *, code: int, fault: FaultInjected | None = None) -> None:
        super().__init__(message, fault=fault)
        self.code = code


class InjectedHTTPError(InjectedFault):
    """The call failed with an HTTP status; ``retry_after`` is set for 429s."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        retry_after: float | None = None,
        fault: FaultInjected | None = None,
    ) -> None:
        super().__init__(message, fault=fault)
        self.status = status
        self.status_code = status
        self.body = body
        self.headers = dict(headers or {})
        self.retry_after = retry_after


# -- native exceptions, marked injected ---------------------------------------------------------

_classes: dict[type[BaseException], type[BaseException]] = {}
_classes_lock = threading.Lock()


def _copy_native(native: type[X], args: tuple[Any, ...], attrs: dict[str, Any]) -> X:
    """An exception of class ``native`` holding ``args`` and ``attrs``, not initialised again."""
    exc = native.__new__(native)
    exc.args = args
    exc.__dict__.update(attrs)
    return exc


def _remarked(
    build: Callable[..., BaseException], args: tuple[Any, ...], attrs: dict[str, Any]
) -> BaseException:
    """Unpickling an injected native exception that pickles through a factory of its own:
    built by it, marked again, its attributes (the fault, the notes) put back."""
    exc = build(*args)
    exc.__class__ = injected_class(type(exc))
    exc.__dict__.update(attrs)
    return exc


def _restored(
    native: type[BaseException], args: tuple[Any, ...], attrs: dict[str, Any]
) -> BaseException:
    """Unpickling any other injected native exception: copied back without calling its
    ``__init__`` (which may take arguments ``args`` does not hold), then marked again."""
    return _copy_native(injected_class(native), args, attrs)


def _reduce(self: BaseException) -> Any:
    """Pickle an injected native exception: through the native class's own ``__reduce__``
    when it has one (pydantic-ai's categorised errors rebuild through a factory), else by its
    arguments and attributes; either way it comes back injected, with its fault."""
    cls = type(self)
    native: type[BaseException] = cls.__chaos_native__  # type: ignore[attr-defined]
    attrs = dict(self.__dict__)
    if native.__reduce__ is BaseException.__reduce__:
        return (_restored, (native, self.args, attrs))
    self.__class__ = native
    try:
        reduced = self.__reduce_ex__(2)
    finally:
        self.__class__ = cls
    return (_remarked, (reduced[0], reduced[1], attrs))


def injected_class(native: type[X]) -> type[X]:
    """The class of an injected ``native`` exception: a subclass of ``native`` and of
    :class:`InjectedFault` with the native name, qualname and module, so that tracebacks,
    ``type(exc).__name__`` and every ``except native`` read as the real thing. One per native
    class; it pickles (as itself)."""
    if issubclass(native, InjectedFault):
        return native
    found = _classes.get(native)
    if found is not None:
        return found  # type: ignore[return-value]
    with _classes_lock:
        found = _classes.get(native)
        if found is None:
            namespace = {
                "__module__": native.__module__,
                "__qualname__": native.__qualname__,
                "__doc__": native.__doc__,
                "__chaos_native__": native,
                "__reduce__": _reduce,
            }
            found = type(native.__name__, (native, InjectedFault), namespace)
            _classes[native] = found
    return found  # type: ignore[return-value]


def mark_injected(exc: X, fault: FaultInjected | None = None) -> X:
    """Make ``exc`` (a seam's own exception, fresh) recognisably injected by ``fault``: its
    class becomes :func:`injected_class` of its own, it carries ``fault`` and a note naming
    it. An exception whose class cannot take the mixin keeps its class and gets the
    ``injected`` and ``fault`` attributes only."""
    if not isinstance(exc, InjectedFault):
        try:
            exc.__class__ = injected_class(type(exc))
        except TypeError:  # a class with a layout of its own (a C extension's exception)
            with contextlib.suppress(AttributeError):  # exceptions have a __dict__
                exc.injected = True  # type: ignore[attr-defined]
    try:  # noqa: SIM105 - a try costs nothing, a suppress() context ~0.5 us per fault
        exc.fault = fault  # type: ignore[attr-defined]
    except AttributeError:  # pragma: no cover - exceptions have a __dict__
        pass
    if fault is not None:
        _add_note(exc, fault)
    return exc


def is_injected(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by an injected fault (a native one included)."""
    return isinstance(exc, InjectedFault) or getattr(exc, "injected", False) is True


#: The fixed parts of a fault's note, by (kind, fault, channel, target): formatted once.
_heads: dict[tuple[Any, ...], tuple[str, str]] = {}


def _add_note(exc: BaseException, fault: FaultInjected) -> None:
    """Note on ``exc`` which fault raised it (shown under its traceback; Python 3.11+)."""
    add_note = getattr(exc, "add_note", None)
    if add_note is None:  # pragma: no cover - Python 3.10
        return
    key = (fault.kind, fault.fault, fault.channel, fault.target)
    parts = _heads.get(key)
    if parts is None:
        what = "step run" if fault.channel == "step" else "call"
        parts = (
            f"injected by pytest-agentchaos: fault {fault.kind!r} (faults[{fault.fault}] of "
            f"the plan) on {what} ",
            f" of {fault.target!r}, step ",
        )
        if len(_heads) < 4096:
            _heads[key] = parts
    add_note(f"{parts[0]}{fault.index}{parts[1]}{fault.step}")


class Templates:
    """Native exceptions built once per failure, then copied for each raise.

    Building a provider SDK's exception runs the SDK's own code (a response parsed, a body
    validated: up to ~100 us); a copy with the same class, arguments and attributes costs
    ~1 us. A copy shares the template's attribute values (the response, the body), which the
    exception's readers never change; its traceback, context and notes are its own, and its
    cause chain is copied the same way. With ``marked`` (the default) a copy is of the native
    class's :func:`injected_class` already (:func:`mark_injected` then only adds the fault);
    without, it keeps the native class (for a builder that maps it into another exception).
    """

    __slots__ = ("_build", "_last", "_made", "_marked")

    def __init__(
        self, build: Callable[[Failure], BaseException | None], *, marked: bool = True
    ) -> None:
        self._build = build
        self._made: dict[Any, _Recipe | None] = {}
        self._marked = marked
        # the last failure seen and its recipe: a fault that fires again on the same target
        # brings the very same (immutable) Failure, found without building its key
        self._last: tuple[Failure | None, _Recipe | None] = (None, None)

    def __call__(self, failure: Failure) -> BaseException | None:
        last, recipe = self._last
        if last is not failure:
            key = _key(failure)
            try:
                recipe = self._made[key]
            except KeyError:
                recipe = self._made[key] = self._recipe(self._build(failure))
            except TypeError:  # an unhashable body: no template
                return self._build(failure)
            self._last = (failure, recipe)
        return None if recipe is None else recipe.make()

    def _recipe(self, template: BaseException | None) -> _Recipe | None:
        if template is None:
            return None
        cls = injected_class(type(template)) if self._marked else type(template)
        return _Recipe(template, cls)


class _Recipe:
    """How to copy one template exception (see :class:`Templates`), worked out once: its
    class, arguments, the attributes copies share, those each copy copies (a body or headers a
    handler could change in place), and its cause chain (at most 8 deep), copied the same way.
    A template is never changed once built, so what it holds is read once."""

    __slots__ = ("args", "cause", "cls", "copied", "shared", "suppress")

    def __init__(self, exc: BaseException, cls: type[BaseException], depth: int = 0) -> None:
        self.cls = cls
        self.args = exc.args
        attrs = {k: v for k, v in exc.__dict__.items() if k != "__notes__"}
        self.copied = tuple((k, v) for k, v in attrs.items() if type(v) in _COPIED)
        self.shared = {k: v for k, v in attrs.items() if type(v) not in _COPIED}
        cause = exc.__cause__
        self.cause = None if cause is None or depth >= 8 else _Recipe(cause, type(cause), depth + 1)
        self.suppress = exc.__suppress_context__

    def make(self) -> BaseException:
        """A fresh copy: no traceback, context or notes of its own yet."""
        cls = self.cls
        exc = cls.__new__(cls)
        exc.args = self.args
        attrs = exc.__dict__
        attrs.update(self.shared)
        for k, v in self.copied:
            attrs[k] = v.copy()
        if self.cause is not None:
            exc.__cause__ = self.cause.make()
        if self.suppress:
            exc.__suppress_context__ = True
        return exc


#: What a copy of an exception copies rather than shares: a body or headers (a dict or list) a
#: handler could change in place. An HTTP response is shared between copies: copying one costs
#: more than the rest of a fault (~6 us), and its readers (retry loops reading ``Retry-After``)
#: do not change it.
_COPIED = frozenset((dict, list))


def _key(failure: Failure) -> Any:
    body = failure.body
    if isinstance(body, (dict, list)):
        import json

        body = json.dumps(body, sort_keys=True, default=repr)
    return (
        failure.kind,
        failure.status,
        failure.retry_after,
        body,
        tuple(failure.headers.items()) if failure.headers else (),
    )


def http_status(failure: Failure) -> int | None:
    """The HTTP status the exception built for ``failure`` carries, when it is known without
    looking at the exception (an ``http`` failure's own status); ``None``: look."""
    return failure.status if failure.kind == "http" else None


def failure_exception(
    failure: Failure,
    fault: FaultInjected | None = None,
    native: NativeErrors | None = None,
) -> BaseException:
    """The exception a call raises for ``failure``: the seam's own (``native(failure)``) when
    the seam has one, else one of ours (a ``TimeoutError``, ``ConnectionError``, or
    :class:`InjectedHTTPError`). Either way it is marked injected by ``fault``.

    Its traceback (Python 3.11+) carries a note naming the injected fault, so an unhandled
    one reads as "your call of this tool, failed on purpose by this fault".
    """
    broken: str | None = None
    if native is not None:
        try:
            built = native(failure)
        except Exception as error:  # a seam's builder that fails must not lose the fault
            built, broken = None, f"{type(error).__name__}: {safe_str(error, 300)}"
        if isinstance(built, BaseException):
            return mark_injected(built, fault)
    exc: InjectedFault
    if failure.kind == "timeout":
        exc = InjectedTimeout(failure.message, fault=fault)
    elif failure.kind == "connection":
        exc = InjectedConnectionError(failure.message, fault=fault)
    elif failure.kind == "reset":
        exc = InjectedConnectionReset(failure.message, fault=fault)
    elif failure.kind == "crash":
        exc = InjectedCrash(failure.message, fault=fault)
    elif failure.kind == "protocol":
        exc = InjectedProtocolError(failure.message, code=failure.status or -32603, fault=fault)
    else:
        exc = InjectedHTTPError(
            failure.message,
            status=failure.status or 500,
            body=failure.any_body(),
            headers=failure.headers,
            retry_after=failure.retry_after,
            fault=fault,
        )
    if fault is not None:
        _add_note(exc, fault)
    if broken is not None and hasattr(exc, "add_note"):
        exc.add_note(f"(the seam's own exception could not be built: {broken})")
    return exc
