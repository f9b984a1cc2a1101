"""The loop that runs the tool (seed 003's graph around one call): validate and repair before
the tool runs, repair after a parameter error and call again, retry a transient error as it
is, give up with a :class:`~.results.RepairError` that says why."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .policy import RepairPolicy
from .results import RepairError, RepairResult
from .spec import ToolSpec

__all__ = ["ToolCalls"]


class ToolCalls:
    """``call`` and ``acall`` for a repairer: anything with a ``spec``, a ``policy`` and
    ``repair(args, error, task, now)`` (the base of :class:`~.repairer.ParamRepairer`)."""

    spec: ToolSpec
    policy: RepairPolicy

    def repair(
        self,
        args: Any,
        error: BaseException | str | int | None = None,
        task: str | None = None,
        now: _dt.datetime | None = None,
    ) -> RepairResult:
        raise NotImplementedError  # pragma: no cover

    def call(
        self,
        fn: Callable[..., Any],
        args: Mapping[str, Any],
        *,
        task: str | None = None,
        now: _dt.datetime | None = None,
        retry_transient: bool = True,
    ) -> Any:
        """Call ``fn(**args)`` the way seed 003's graph does, validating first: arguments
        that do not validate are repaired before the tool runs (or, when the repairer
        declines, the tool is not run: :class:`RepairError`); a parameter error from the tool
        is repaired and the call made again, up to ``policy.max_attempts`` more times; a
        transient error is retried as is within the same attempts, or raised as it is with
        ``retry_transient=False`` (the Supervisor's backoff retries it)."""
        current = self._checked(args, task, now)
        for attempt in range(self.policy.max_attempts + 1):
            try:
                return fn(**current)
            except Exception as exc:
                current = self._next(current, exc, attempt, task, now, retry_transient)
        raise AssertionError("unreachable")  # pragma: no cover

    async def acall(
        self,
        fn: Callable[..., Awaitable[Any]],
        args: Mapping[str, Any],
        *,
        task: str | None = None,
        now: _dt.datetime | None = None,
        retry_transient: bool = True,
    ) -> Any:
        """:meth:`call` for a coroutine function."""
        current = self._checked(args, task, now)
        for attempt in range(self.policy.max_attempts + 1):
            try:
                return await fn(**current)
            except Exception as exc:
                current = self._next(current, exc, attempt, task, now, retry_transient)
        raise AssertionError("unreachable")  # pragma: no cover

    def _checked(self, args: Any, task: str | None, now: _dt.datetime | None) -> dict[str, Any]:
        if isinstance(args, Mapping) and self.spec.is_valid(args):
            return dict(args)
        result = self.repair(args, None, task, now)
        if not result.ok or result.args is None:
            raise self._give_up(result, 0)
        return result.args

    def _next(
        self,
        current: dict[str, Any],
        exc: Exception,
        attempt: int,
        task: str | None,
        now: _dt.datetime | None,
        retry_transient: bool = True,
    ) -> dict[str, Any]:
        result = self.repair(current, exc, task, now)
        if result.strategy == "retry":  # transient: declined as a repair, retried as it is
            if not retry_transient or attempt == self.policy.max_attempts:
                raise exc  # the caller's backoff retries it; or the attempts are spent
            return dict(current)
        if not result.ok or result.args is None or attempt == self.policy.max_attempts:
            raise self._give_up(result, attempt) from exc
        if result.strategy == "none":  # valid by the schema, yet the tool refuses it
            reason = f"the tool refused arguments that validate: {str(exc)[:200]}"
            declined = RepairResult(False, None, "report_unrecoverable", 0.0, reason, (),
                                    result.diagnosis)  # fmt: skip
            raise self._give_up(declined, attempt) from exc
        return result.args

    def declined(self, result: RepairResult) -> RepairError:
        """The error raised for arguments the repairer will not fix: the tool was not run
        (``chaos.wrap(..., repair=)`` raises it from the wrapper)."""
        return self._give_up(result, 0)

    def _give_up(self, result: RepairResult, attempt: int) -> RepairError:
        if result.ok:
            message = (
                f"{self.spec.name}: still failing after {attempt} repaired attempt(s) "
                f"(last: {result.strategy}, {result.reason})"
            )
        else:
            message = f"{self.spec.name}: not repaired ({result.strategy}): {result.reason}"
        return RepairError(message, result)
