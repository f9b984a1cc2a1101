"""Error classification: is a failure worth retrying, and what kind of failure is it?

An :class:`ErrorClassifier` maps an error to a :class:`ErrorClass`: a kind (``transient``,
``persistent`` or ``unknown``), a category (``timeout``, ``rate_limit``, ``auth``,
``validation``, ``not_found``, ``server_error``, ``connection``, ``llm_refusal`` or
``unknown``), the rule that decided it and any Retry-After the error carries.

Evidence is weighed in a fixed order, most reliable first: an explicit HTTP status, then the
exception (its status, then its type by MRO class *name*, so httpx, requests, urllib3 and SDK
errors are recognised without importing them; ``raise ... from`` causes are followed), then
the message (English and Chinese patterns, and a status the message names, e.g.
``Error code: 429``). Every table is data in a :class:`ClassifierPolicy`
(:mod:`.classifier_policy`), starting from the defaults in :mod:`.error_tables`; Retry-After is
read by :mod:`.retry_after`.

The classifier is stateful per tool (seed 000's statistical rule): a tool whose transient
failures keep repeating is escalated to persistent, since retrying it is no longer paying off.
"""

from __future__ import annotations

import builtins
import math
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any, TypeGuard, cast

from ..status import attr as _attr
from ..status import is_status as _is_status
from ..status import status_of as _status_of
from ..trace.events import ModelResult, ToolResult
from .classifier_policy import ClassifierPolicy
from .error_tables import (
    CATEGORIES,
    CATEGORY_KINDS,
    DEFAULT_EXCEPTIONS,
    DEFAULT_PATTERNS,
    DEFAULT_STATUS,
    DEFAULT_STATUS_CLASSES,
    KINDS,
    MESSAGE_STATUS,
    OTHER_PATTERNS,
    REFUSAL_PATTERNS,
    Category,
    Kind,
    MessageRule,
    Verdict,
)
from .retry_after import Headers, retry_after_from_headers, retry_after_from_message

__all__ = [
    "MAX_MESSAGE",
    "ErrorClass",
    "ErrorClassifier",
    # defined elsewhere since the split; still importable from here
    "CATEGORIES",
    "CATEGORY_KINDS",
    "DEFAULT_EXCEPTIONS",
    "DEFAULT_PATTERNS",
    "DEFAULT_STATUS",
    "DEFAULT_STATUS_CLASSES",
    "KINDS",
    "Category",
    "ClassifierPolicy",
    "Headers",
    "Kind",
    "MessageRule",
    "Verdict",
    "retry_after_from_headers",
    "retry_after_from_message",
]

#: Messages longer than this are read at both ends (half each): an HTML error page or a long
#: body cannot make classification slow, and a traceback's last line (the error) is still read.
MAX_MESSAGE = 2048


@dataclass(frozen=True, slots=True)
class ErrorClass:
    """How an error was classified and why.

    ``reason`` names the rule that decided (``status 429``, ``exception ReadTimeout (a
    TimeoutException)``, ``message matches /rate[ _-]?limit/``), so a failure report can say
    why the stack retried or gave up. ``escalated`` is set when a transient error became
    persistent because its tool kept failing.
    """

    kind: Kind
    category: Category
    reason: str
    retry_after: float | None = None
    escalated: bool = False

    @property
    def transient(self) -> bool:
        """Worth retrying (after a backoff)."""
        return self.kind == "transient"

    @property
    def persistent(self) -> bool:
        """Retrying the same call will not help."""
        return self.kind == "persistent"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, for trace events."""
        return {
            "kind": self.kind,
            "category": self.category,
            "reason": self.reason,
            "retry_after": self.retry_after,
            "escalated": self.escalated,
        }


# -- the classifier ---------------------------------------------------------------------------


class _Window:
    """A tool's outcomes since its last success: the last ``size`` of them, and how many of
    those were transient failures (kept as a running count: O(1) per outcome)."""

    __slots__ = ("outcomes", "transient")

    def __init__(self, size: int) -> None:
        self.outcomes: deque[bool] = deque(maxlen=size)
        self.transient = 0

    def push(self, transient: bool) -> None:
        outcomes = self.outcomes
        if len(outcomes) == outcomes.maxlen and outcomes[0]:
            self.transient -= 1
        outcomes.append(transient)
        self.transient += transient


class ErrorClassifier:
    """Classifies errors and escalates tools whose transient failures keep repeating.

    ``classify`` is O(1) in the length of the run. The state is per tool and reset by
    ``record_success``; one classifier serves one run (not thread-safe). ``wall`` gives the
    current epoch time for Retry-After HTTP-dates when the response has no ``Date`` header.
    """

    def __init__(
        self,
        policy: ClassifierPolicy | None = None,
        *,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.policy = policy if policy is not None else ClassifierPolicy()
        self._wall = wall
        self._windows: dict[str, _Window] = {}

    def classify(
        self,
        error: BaseException | int | str | None = None,
        tool: str | None = None,
        *,
        status: int | None = None,
        message: str | None = None,
        exception: str | None = None,
        headers: Headers | None = None,
    ) -> ErrorClass:
        """Classify one failure (of ``tool``, if given, which then counts toward escalation).

        ``error`` is an exception, an HTTP status or a message. ``exception`` names an
        exception class when only its name is known (a trace's ``error_type``).
        """
        exc: BaseException | None = None
        if isinstance(error, BaseException):
            exc = error
        elif isinstance(error, bool):
            raise TypeError(f"cannot classify {error!r}")
        elif isinstance(error, int):
            status = error if status is None else status
        elif isinstance(error, str):
            message = error if message is None else message
        elif error is not None:
            raise TypeError(f"cannot classify {type(error).__name__} {error!r}")

        result = self._decide(exc, status, message, exception)
        retry_after = self._retry_after(exc, headers, message)
        if retry_after is not None:
            result = replace(result, retry_after=retry_after)
        return self._escalate(result, tool) if tool is not None else result

    def classify_event(self, event: ToolResult | ModelResult) -> ErrorClass | None:
        """Classify a traced result: ``None`` for a success (which resets its tool)."""
        name = event.tool if isinstance(event, ToolResult) else event.model
        if event.ok:
            self.record_success(name)
            return None
        status = event.status if isinstance(event, ToolResult) else None
        return self.classify(
            None,
            name,
            status=status,
            message=event.message,
            exception=event.error_type,
        )

    def record_success(self, tool: str) -> None:
        """``tool`` succeeded: its transient failures no longer count toward escalation."""
        self._windows.pop(tool, None)

    def reset(self, tool: str | None = None) -> None:
        """Forget the failures of ``tool``, or of every tool."""
        if tool is None:
            self._windows.clear()
        else:
            self._windows.pop(tool, None)

    def transient_failures(self, tool: str) -> int:
        """How many transient failures of ``tool`` count toward escalation right now."""
        window = self._windows.get(tool)
        return window.transient if window is not None else 0

    # -- internals ----------------------------------------------------------------------------

    def _escalate(self, result: ErrorClass, tool: str) -> ErrorClass:
        policy = self.policy
        if not policy.escalate:
            return result
        window = self._windows.get(tool)
        if window is None:
            window = self._windows[tool] = _Window(policy.window)
        window.push(result.transient)
        if not result.transient or window.transient < policy.escalate_after:
            return result
        reason = (
            f"{result.reason}; escalated to persistent: {window.transient} transient failures "
            f"of tool {tool!r} in its last {len(window.outcomes)} outcomes since its last "
            f"success (escalate_after={policy.escalate_after}, window={policy.window})"
        )
        return ErrorClass("persistent", result.category, reason, result.retry_after, True)

    def _decide(
        self,
        exc: BaseException | None,
        status: int | None,
        message: str | None,
        exception: str | None,
    ) -> ErrorClass:
        policy = self.policy
        if _is_status(status):
            verdict = policy.status_verdict(status)
            if verdict is not None:
                return ErrorClass(*verdict, f"status {status}")
        chain = list(_chain(exc))
        for i, current in enumerate(chain):
            cause = f" (cause of {type(chain[0]).__name__})" if i else ""
            code = _status_of(current)
            if code is not None:
                verdict = policy.status_verdict(code)
                if verdict is not None:
                    reason = f"status {code} (from {type(current).__name__}){cause}"
                    return ErrorClass(*verdict, reason)
            found = self._by_type(type(current))
            if found is not None:
                return ErrorClass(*found[0], f"{found[1]}{cause}")
        if exception:
            found = self._by_name(exception)
            if found is not None:
                return ErrorClass(*found[0], found[1])
        texts = [message] if message is not None else []
        texts += [_text(e) for e in chain]
        for text in texts:
            decided = self._by_message(_clip(text))
            if decided is not None:
                return decided
        return ErrorClass("unknown", "unknown", "no status, exception or message rule matched")

    def _by_type(self, cls: type[BaseException]) -> tuple[Verdict, str] | None:
        table = self.policy.exceptions
        for base in cls.__mro__:
            verdict = table.get(base.__name__)
            if verdict is not None:
                via = "" if base is cls else f" (a {base.__name__})"
                return verdict, f"exception {cls.__name__}{via}"
        return None

    def _by_name(self, name: str) -> tuple[Verdict, str] | None:
        bare = name.rsplit(".", 1)[-1]
        builtin = getattr(builtins, bare, None)
        if isinstance(builtin, type) and issubclass(builtin, BaseException):
            return self._by_type(builtin)
        verdict = self.policy.exceptions.get(bare)
        return (verdict, f"exception {bare}") if verdict is not None else None

    def _by_message(self, text: str) -> ErrorClass | None:
        if not text:
            return None
        found = _first_rule(self.policy.patterns, text) or _first_rule(REFUSAL_PATTERNS, text)
        if found is not None:
            return found
        for match in MESSAGE_STATUS.finditer(text):
            code = int(next(g for g in match.groups() if g))
            verdict = self.policy.status_verdict(code)
            if verdict is not None:
                return ErrorClass(*verdict, f"message names status {code}")
        return _first_rule(OTHER_PATTERNS, text)

    def _retry_after(
        self,
        exc: BaseException | None,
        headers: Headers | None,
        message: str | None,
    ) -> float | None:
        if exc is not None:
            value = _attr(exc, "retry_after")
            if _is_number(value):
                return max(0.0, float(value))
        for source in _header_sources(exc, headers):
            seconds = retry_after_from_headers(source, self._wall)
            if seconds is not None:
                return seconds
        for text in (message, _text(exc) if exc is not None else None):
            if text:
                seconds = retry_after_from_message(_clip(text))
                if seconds is not None:
                    return seconds
        return None


def _first_rule(rules: Iterable[MessageRule], text: str) -> ErrorClass | None:
    for rule in rules:
        match = rule.pattern.search(text)
        if match is not None:
            reason = f"message matches /{rule.pattern.pattern}/: {match.group(0)!r}"
            return ErrorClass(rule.kind, rule.category, reason)
    return None


def _chain(exc: BaseException | None, limit: int = 8) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from (``__cause__``, unsuppressed
    ``__context__``), without cycles."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen and len(seen) < limit:
        seen.add(id(exc))
        yield exc
        if exc.__cause__ is not None:
            exc = exc.__cause__
        elif not exc.__suppress_context__:
            exc = exc.__context__
        else:
            exc = None


def _header_sources(exc: BaseException | None, headers: Headers | None) -> Iterator[Headers]:
    if headers is not None:
        yield headers
    if exc is None:
        return
    for found in (_attr(exc, "headers"), _attr(_attr(exc, "response"), "headers")):
        if callable(getattr(found, "items", None)):
            yield cast(Headers, found)


def _clip(text: str) -> str:
    if len(text) <= MAX_MESSAGE:
        return text
    half = MAX_MESSAGE // 2
    return f"{text[:half]}\n{text[-half:]}"


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # an exception whose __str__ fails still classifies by its type
        return ""


def _is_number(value: object) -> TypeGuard[int | float]:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
