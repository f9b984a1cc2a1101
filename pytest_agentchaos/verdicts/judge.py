"""``judge``: every verdict a test asked for, over its trace. Pure: trace in, verdicts out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..trace.trace import Trace
from .escape import must_escape
from .recover import must_recover_state
from .repair import must_repair
from .verdict import Verdict, must_halt

__all__ = ["Expectations", "judge"]


@dataclass(frozen=True)
class Expectations:
    """What a test's markers expect of its run (``None``: not asked for).

    ``halt`` holds ``must_halt``'s limits (``max_steps`` ...), ``escape``, ``repair`` and
    ``recover`` the keyword arguments of ``must_escape``, ``must_repair`` and
    ``must_recover_state``.
    """

    halt: Mapping[str, Any] | None = None
    escape: Mapping[str, Any] | None = None
    repair: Mapping[str, Any] | None = None
    recover: Mapping[str, Any] | None = None

    def __bool__(self) -> bool:
        return any(x is not None for x in (self.halt, self.escape, self.repair, self.recover))


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
    return verdicts
