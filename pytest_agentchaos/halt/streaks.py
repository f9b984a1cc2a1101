"""Tool failures the halt monitor counts: the same failure again is a streak, in a row or with
other steps between.

Two ways to be "the same failure", both with the error's volatile details masked (ids, times,
temp paths; counts kept, so "4 failed" after "12 failed" is an error changing toward success):

- **the same tool, the same error**, whatever the arguments, until that tool works once: a
  write that keeps failing however its arguments are trimmed is one streak, but a bisection
  (a test failing on some commits, passing on others) is not, as its passes clear it.
- **the same call** (tool and arguments, when the caller gives them), **the same error**,
  within ``span`` steps, whatever else worked in between: reading ``data.json`` three times
  while reading other files successfully between the tries is a streak. Only a success of that
  very call clears it.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

from ..escape.normalize import error_template, mask_text

__all__ = ["Failures"]

#: How much of an error (and of a call's arguments) is compared.
_ERROR_LIMIT = 2000


@dataclass
class Failures:
    """The failures of one run so far; ``span``: the steps a call's repeats are counted in."""

    span: int
    by_error: Counter[tuple[str, str]] = field(default_factory=Counter)
    by_call: dict[tuple[str, str, str], deque[int]] = field(default_factory=dict)
    #: Masked errors that are transient (a timeout, a 5xx, a 429, a dropped connection):
    #: worth a few retries, so every other one counts.
    transient: set[str] = field(default_factory=set)

    def success(self, tool: str, args: str | None) -> None:
        """``tool`` worked (with ``args``, masked by the monitor, or unknown: None)."""
        for key in [k for k in self.by_error if k[0] == tool]:
            del self.by_error[key]
        for done in [k for k in self.by_call if k[0] == tool and (args is None or k[1] == args)]:
            del self.by_call[done]

    def failure(
        self, index: int, tool: str, args: str | None, error: str | None, transient: bool = False
    ) -> int:
        """Step ``index``: ``tool`` failed with ``error``. Returns how many times this failure
        has now happened (by either way of counting, the larger; a ``transient`` error's
        every other time)."""
        masked = _masked(error or "")
        if transient:
            self.transient.add(masked)
        self.by_error[tool, masked] += 1
        count = self.by_error[tool, masked]
        if args is not None:
            marks = self.by_call.setdefault((tool, args, masked), deque())
            marks.append(index)
            count = max(count, self._recent(marks, index))
        return self._counted(masked, count)

    def seen(self, tool: str, error: str | None) -> bool:
        """Whether ``tool`` has failed with an error of the same template (numbers, paths and
        quoted values masked too) since it last worked."""
        template = error_template(error)
        return any(k[0] == tool and error_template(k[1]) == template for k in self.by_error)

    def worst(self, index: int) -> int:
        """The most times any one failure has happened (as of step ``index``)."""
        calls = [self._counted(k[2], self._recent(m, index)) for k, m in self.by_call.items()]
        errors = [self._counted(k[1], n) for k, n in self.by_error.items()]
        return max([*errors, *calls], default=0)

    def _counted(self, masked: str, count: int) -> int:
        return count // 2 if masked in self.transient else count

    def _recent(self, marks: deque[int], index: int) -> int:
        while marks and marks[0] <= index - self.span:
            marks.popleft()
        return len(marks)


def _masked(text: str) -> str:
    return mask_text(text[:_ERROR_LIMIT])
