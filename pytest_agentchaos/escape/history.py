"""What the escape stack remembers of a run: actions reduced to small hashable keys.

A key is (node, tool, outcome, digest of the masked arguments and result). The result is part
of it, so polling that makes progress (same call, new result) is not mistaken for a loop.
:mod:`.keys` builds keys from calls.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..trace.values import deep_digest

#: Canonical JSON, made once (``json.dumps`` with options builds an encoder per call).
_CANONICAL = json.JSONEncoder(
    sort_keys=True, default=repr, ensure_ascii=False, separators=(",", ":")
).encode


def digest(value: Any) -> str:
    """A short, stable digest of a JSON-able value (canonical JSON + blake2b); never raises
    (text with lone surrogates, values too deep for the encoder: digested structurally)."""
    try:
        text = _CANONICAL(value)
    except Exception:
        return deep_digest(value)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


@dataclass(frozen=True, slots=True)
class ActionKey:
    """One agent action as the loop detector sees it.

    ``outcome`` is a short label (``ok``, ``error:TimeoutError``, ``error:HTTPStatusError:503``);
    ``digest`` covers the (masked) arguments and the result or error message together, one
    digest per action. ``channel`` is ``tool``, ``http`` or ``model``. ``coarse`` (not part of
    the identity) keys a failed call by its tool and error template alone, for "same error,
    other arguments" streaks.
    """

    node: str | None = None
    tool: str | None = None
    outcome: str | None = None
    digest: str | None = None
    # The call's arguments, kept only to describe the action to humans (formatted on demand,
    # as that is rare); not part of the key's identity.
    shown_args: Any = field(default=None, compare=False)
    channel: str = "tool"
    coarse: str | None = field(default=None, compare=False)
    # The hash, worked out once: a key is looked up a dozen times per action.
    _hash: int = field(default=0, init=False, compare=False, repr=False)

    def __hash__(self) -> int:
        found = self._hash
        if not found:
            found = hash((self.node, self.tool, self.outcome, self.digest, self.channel))
            object.__setattr__(self, "_hash", found)
        return found

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuilt from its fields: a string's hash differs from one process to the next
        return (
            ActionKey,
            (self.node, self.tool, self.outcome, self.digest, self.shown_args, self.channel,
             self.coarse),
        )  # fmt: skip

    @property
    def stream(self) -> str:
        """Which stream the action belongs to: ``tool`` (tool and HTTP calls), ``model``, or
        ``node`` (a visit to a node of a graph agent, or a bare step)."""
        if self.tool is None:
            return "node"
        return "model" if self.channel == "model" else "tool"

    def describe(self) -> str:
        """A short human label, e.g. ``@node search(q='x') -> ok`` (``step`` when empty)."""
        if self.tool is not None and self.shown_args is not None:
            return _label(self.node, self.tool, self.shown_args, self.outcome)
        parts = [p for p in (self.node and f"@{self.node}", self.tool, self.outcome) if p]
        if self.tool is None and self.digest is not None:  # a visit or step with a state
            parts.append(f"(state {self.digest[:8]})")
        if self.tool is None:
            return " ".join(parts) or "step"
        return "/".join(parts)


def _label(node: str | None, tool: str, args: Any, outcome: str | None) -> str:
    if isinstance(args, dict):
        shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    else:
        shown = "" if args is None else repr(args)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    where = f"@{node} " if node else ""
    return f"{where}{tool}({shown})" + (f" -> {outcome}" if outcome else "")


@dataclass(frozen=True, slots=True)
class Entry:
    """One action in a :class:`History`: its key, its step and the time ``t`` it was taken."""

    key: ActionKey
    step: int
    t: float


class History:
    """A bounded window over the most recent actions (a ring buffer)."""

    def __init__(self, maxlen: int = 256) -> None:
        if maxlen < 1:
            raise ValueError(f"history maxlen must be >= 1, got {maxlen}")
        self._entries: deque[Entry] = deque(maxlen=maxlen)
        self.total = 0

    def append(self, key: ActionKey, step: int, t: float) -> Entry:
        """Remember an action (dropping the oldest when full) and return its entry."""
        entry = Entry(key, step, t)
        self._entries.append(entry)
        self.total += 1
        return entry

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries)

    def last(self, n: int) -> list[Entry]:
        """The last ``n`` entries, oldest first."""
        if n <= 0:
            return []
        return list(self._entries)[-n:]
