"""``judge``: every verdict a test asked for, over its trace. Pure: trace in, verdicts out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..trace.trace import Trace
from .duplicate import must_not_duplicate
from .escape import must_escape
from .follow import must_not_follow
from .recover import must_recover_state
from .repair import must_repair
from .retry import must_retry
from .verdict import Verdict, must_halt

__all__ = ["Expectations", "judge"]


@dataclass(frozen=True)
class Expectations:
    """What a test's markers expect of its run (``None``: not asked for).

    ``halt`` holds ``must_halt``'s limits (``max_steps`` ...), ``escape``, ``repair``,
    ``recover``, ``retry``, ``duplicate`` and ``follow`` the keyword arguments of
    ``must_escape``, ``must_repair``, ``must_recover_state``, ``must_retry``,
    ``must_not_duplicate`` and ``must_not_follow``.
    """

    halt: Mapping[str, Any] | None = None
    escape: Mapping[str, Any] | None = None
    repair: Mapping[str, Any] | None = None
    recover: Mapping[str, Any] | None = None
    retry: Mapping[str, Any] | None = None
    duplicate: Mapping[str, Any] | None = None
    follow: Mapping[str, Any] | None = None

    def __bool__(self) -> bool:
        return any(
            x is not None
            for x in (self.halt, self.escape, self.repair, self.recover, self.retry,
                      self.duplicate, self.follow)
        )  # fmt: skip


def judge(trace: Trace, expectations: Expectations) -> list[Verdict]:
    """The verdicts of ``expectations`` over ``trace``, in marker order."""
    verdicts: list[Verdict] = []
    if expectations.halt is not None:
        verdicts.append(must_halt(trace, **expectations.halt))
    if expectations.escape is not None:
        verdicts.append(must_escape(trace, **expectations.escape))
    if expectations.repair is not None:
        verdicts.append(must_repair(trace, **expectations.repair))
    if expectations.recover is not None:
        verdicts.append(must_recover_state(trace, **expectations.recover))
    if expectations.retry is not None:
        verdicts.append(must_retry(trace, **expectations.retry))
    if expectations.duplicate is not None:
        verdicts.append(must_not_duplicate(trace, **expectations.duplicate))
    if expectations.follow is not None:
        verdicts.append(must_not_follow(trace, **expectations.follow))
    return verdicts
