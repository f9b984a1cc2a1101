"""A value written the way an error's own example shows ("expected A1 notation like A1:C9").

When a tool refuses a value and shows an example of what it takes, a value with the same
letters and digits in the same order, only in another case or with other marks between
them (``b2:d40``, ``A1-C9``), is that value written as the example writes its kind. Nothing
else is changed: no letter or digit is added, dropped or moved.
"""

from __future__ import annotations

import re

__all__ = ["error_example", "like_example"]

_EXAMPLE = re.compile(
    r"\b(?:like|e\.g\.|e\.g|for example|such as|for instance)[:,]?\s+[\"'`]?"
    r"(?P<x>[^\s\"'`,;()]{2,40}?)[\"'`]?(?=[\s,;)]|\.?$|\.\s)",
    re.IGNORECASE,
)
_RUN = re.compile(r"[^\W\d_]+|\d+|[^\w\s]")


def error_example(message: str) -> str | None:
    """The one example an error shows of what it takes, or None (none, or several)."""
    found = {m["x"] for m in _EXAMPLE.finditer(message[:2000])}
    return found.pop() if len(found) == 1 else None


def _kind(run: str) -> str:
    return "a" if run[0].isalpha() else "9" if run[0].isdigit() else "."


def like_example(value: str, example: str) -> str | None:
    """``value`` in the case and with the marks of ``example`` when it has the example's
    runs of letters and digits in the same order; None otherwise, or when nothing changes."""
    mine, theirs = _RUN.findall(value.strip()), _RUN.findall(example)
    if len(mine) != len(theirs) or len(mine) < 2 or "".join(mine) != value.strip().replace(" ", ""):
        return None
    out = []
    for own, other in zip(mine, theirs, strict=True):
        if _kind(own) != _kind(other):
            return None
        if _kind(own) == ".":
            out.append(other)
        elif _kind(own) == "a":
            if len(own) != len(other) and not (own.isalpha() and other.isalpha()):
                return None
            out.append(own.upper() if other.isupper() else own.lower() if other.islower() else own)
        else:
            out.append(own)
    written = "".join(out)
    return written if written != value else None
