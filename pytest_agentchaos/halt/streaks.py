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

import re
from collections import Counter, deque
from dataclasses import dataclass, field

from ..escape.normalize import mask_text
from ..escape.texts import error_template
from .values import read

__all__ = ["Failures", "Lows", "error_class", "error_classes", "signature"]

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
        # a changed failure of this tool ends its streak of the other one (a test run whose
        # failures shrink is work, not the same failure again)
        for key in [k for k in self.by_error if k[0] == tool and k[1] != masked]:
            del self.by_error[key]
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
        quoted values masked too; or of the same class) since it last worked."""
        masked = _masked(error or "")
        template = error_template(masked)
        return any(
            k[0] == tool and (k[1] == masked or error_template(k[1]) == template)
            for k in self.by_error
        )

    def clear(self) -> None:
        """Progress rose: every streak so far ends."""
        self.by_error.clear()
        self.by_call.clear()

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


@dataclass
class Lows:
    """The counts each tool's failures have stated since it last worked ("Failures: 9", "2
    problem(s) left", "还剩 3 个问题"): a failure stating one of them below its lowest so far,
    with none above the last stated, is a step toward success (a test re-run whose failures
    shrink; a module whose problems go 3, 2, 1 while the run's own counter waits)."""

    low: dict[str, dict[str, float]] = field(default_factory=dict)
    last: dict[str, dict[str, float]] = field(default_factory=dict)

    def lower(self, tool: str | None, ok: bool | None, counted: frozenset[str]) -> bool:
        """Read one step's call (``counted``: its ``"N word"`` pairs); whether it is a failure
        whose counts reach a new low. A success of the tool starts its counts over."""
        if tool is None or ok is None:
            return False
        if ok:
            self.low.pop(tool, None)
            self.last.pop(tool, None)
            return False
        now: dict[str, float] = {}
        for pair in counted:
            n, _, word = pair.partition(" ")
            try:
                now[word[:4]] = float(n)
            except ValueError:
                continue
        if len(self.low) > 1000:  # bounded memory for endless runs
            self.low.clear()
            self.last.clear()
        low = self.low.setdefault(tool, {})
        last = self.last.setdefault(tool, {})
        fell = any(word in low and count < low[word] for word, count in now.items())
        rose = any(word in last and count > last[word] for word, count in now.items())
        for word, count in now.items():
            low[word] = min(count, low.get(word, count))
            last[word] = count
        return fell and not rose


def _masked(text: str) -> str:
    return text if text.startswith(_CLASS) else mask_text(text[:_ERROR_LIMIT])


_CLASS = "class:"
#: The class of an error, inside any wording: an HTTP status, an exception's name, a command
#: or file not found, an errno name, an exit code.
_CLASSES = (
    ("http", re.compile(r"\b(?:HTTP(?:/\d(?:\.\d)?)?|status(?:[ _]code)?|code|error)\W{0,3}"
                        r"([1-5]\d\d)\b|\b([45]\d\d)\s+(?:[A-Z][a-z]+)(?:\s[A-Z][a-z]+)*",
                        re.IGNORECASE)),
    ("exception", re.compile(r"\b((?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Exit|"
                             r"Timeout|Interrupt|Denied|Refused|NotFound))\b")),
    ("command", re.compile(r"([\w.+-]+): (?:command )?not found|command not found:\s*([\w.+-]+)"
                           r"|'([\w.+-]+)' is not recognized|找不到命令\W*([\w.+-]+)")),
    ("errno", re.compile(r"\b(E(?:NOENT|ACCES|PERM|EXIST|CONNREFUSED|CONNRESET|TIMEDOUT|"
                         r"ADDRINUSE|NOSPC|ISDIR|NOTDIR))\b")),
    ("missing", re.compile(r"(?i)\b(no such file or directory|permission denied|"
                           r"connection refused|not found|timed? ?out|unauthori[sz]ed|forbidden)\b"
                           r"|(没有那个文件或目录|权限不够|拒绝连接|超时|未找到|找不到)")),
    ("exit", re.compile(r"(?i)\bexit(?:ed)?(?: with)?(?: code| status)?\W{0,3}(\d{1,3})\b"
                        r"|退出码\W{0,3}(\d{1,3})")),
)  # fmt: skip


def error_classes(text: str) -> frozenset[str]:
    """Every class of error named in ``text`` (``http:503``, ``exception:KeyError``,
    ``command:mvn``, ``missing:connection refused``, ...). An exception is named by its class
    alone (``psycopg2.OperationalError`` and ``OperationalError`` are one)."""
    head = text[:_ERROR_LIMIT]
    found = set()
    for name, pattern in _CLASSES:
        for match in pattern.finditer(head):
            value = next((g for g in match.groups() if g), match[0])
            if name == "exception":
                value = value.rsplit(".", 1)[-1]
            found.add(f"{name}:{value.casefold() if name == 'missing' else value}")
    return frozenset(found)


def error_class(text: str) -> str:
    """The classes of the error in ``text`` (:func:`error_classes`), sorted and joined; empty
    when none is recognised. "not found" says little beside a command or an exception that
    says more: it is left out then."""
    found = set(error_classes(text))
    if len(found) > 1:
        found = {f for f in found if not f.startswith("missing:")} or found
    return ",".join(sorted(found))


def signature(error: str | None, output: str = "") -> str:
    """What makes two failures the same: the error's class (with the failure counts it states
    and the names it quotes) where one is recognised, so the same failure in other words is
    the same; else the error masked (volatile details out, counts kept). With no error text,
    the tool's output is read instead."""
    text = (error if error else output)[:_ERROR_LIMIT]
    kind = error_class(text)
    if not kind:
        return mask_text(text)
    reading = read(mask_text(text))
    numbers = set(re.findall(r"\d+", kind))
    counts = sorted(c for c in reading.counted if c.split(" ", 1)[0] not in numbers)
    # the names it is about (a quoted name, a file, a test id), not the program's own
    names = sorted(
        v for v in reading.values
        if not kind.startswith("command:") and _NAMED.search(v) and not v.startswith("/")
    )  # fmt: skip
    names += sorted({q.casefold() for q in _QUOTED.findall(mask_text(text)) if q.strip()})
    return f"{_CLASS}{kind}|{','.join(counts)}|{','.join(names)}"


_QUOTED = re.compile(r"['\"`‘“]([^'\"`’”\n]{1,80})['\"`’”]")
_NAMED = re.compile(r"::|\w\.\w{1,5}$| ")
