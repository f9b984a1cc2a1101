"""What the escape stack remembers of a run: actions reduced to small hashable keys.

A key is (node, tool, outcome, digest of the masked arguments and result). The result is part
of it, so polling that makes progress (same call, new result) is not mistaken for a loop.
:mod:`.keys` builds keys from calls.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..trace.values import deep_digest


def _canonical_encoder() -> Callable[[Any], str]:
    """Canonical JSON (sorted keys, no spaces, text as is, ``repr`` for the rest), made once:
    ``json.dumps`` builds an encoder on every call, which costs more than the encoding of a
    small call. Without a cycle check (a cycle raises ``RecursionError``, which
    :func:`digest` catches like any other failure)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator (PyPy): the standard encoder
        return json.JSONEncoder(
            sort_keys=True, default=repr, ensure_ascii=False, separators=(",", ":")
        ).encode
    encode = make(None, repr, json.encoder.encode_basestring, None, ":", ",", True, False, True)
    return lambda value: "".join(encode(value, 0))


_CANONICAL = _canonical_encoder()


def digest(value: Any) -> str:
    """A short, stable digest of a JSON-able value (canonical JSON + blake2b); never raises
    (text with lone surrogates, values too deep for the encoder: digested structurally)."""
    try:
        text = _CANONICAL(value)
    except Exception:
        return deep_digest(value)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


class ActionKey:
    """One agent action as the loop detector sees it. Immutable and hashable.

    ``outcome`` is a short label (``ok``, ``error:TimeoutError``, ``error:HTTPStatusError:503``);
    ``digest`` covers the (masked) arguments and the result or error message together, one
    digest per action. ``channel`` is ``tool``, ``http`` or ``model``. ``shown_args`` (the
    call's arguments, kept only to describe the action to humans) and ``coarse`` (a failed
    call keyed by its tool and error template alone, for "same error, other arguments"
    streaks) are not part of the identity: two keys are equal when node, tool, outcome,
    digest and channel are. ``stream`` says which stream the detector reads the action in,
    when not the channel's own (a model's reply that calls a tool in a run where no tool
    runs is read among the tool calls).
    """

    # A plain class rather than a frozen dataclass: a key is made for every action and looked
    # up a dozen times, so it is built with plain slot stores and hashed once.
    __slots__ = (
        "_channel", "_coarse", "_digest", "_hash", "_identity", "_node", "_outcome", "_shown",
        "_stream", "_tool",
    )  # fmt: skip

    def __init__(
        self,
        node: str | None = None,
        tool: str | None = None,
        outcome: str | None = None,
        digest: str | None = None,
        shown_args: Any = None,
        channel: str = "tool",
        coarse: str | None = None,
        same_as: str | None = None,
        stream: str | None = None,
    ) -> None:
        self._node = node
        self._tool = tool
        self._outcome = outcome
        self._digest = digest
        self._shown = shown_args
        self._channel = channel
        self._coarse = coarse
        kind = outcome if same_as is None else same_as
        self._identity = identity = (node, tool, kind, digest, channel)
        self._hash = hash(identity)
        if stream is None:
            stream = "node" if tool is None else "model" if channel == "model" else "tool"
        self._stream = stream

    @property
    def node(self) -> str | None:
        """The node of a graph agent the action belongs to (a visit has no tool)."""
        return self._node

    @property
    def tool(self) -> str | None:
        """The tool, endpoint or model called; None for a node visit or a bare step."""
        return self._tool

    @property
    def outcome(self) -> str | None:
        """``ok`` or ``error:<type>[:<status>]``."""
        return self._outcome

    @property
    def digest(self) -> str | None:
        """The digest of the masked arguments and result (or error template); for a visit or
        a step, of the state."""
        return self._digest

    @property
    def shown_args(self) -> Any:
        """The call's arguments, to describe it (not part of the identity)."""
        return self._shown

    @property
    def channel(self) -> str:
        """``tool``, ``http`` or ``model``."""
        return self._channel

    @property
    def coarse(self) -> str | None:
        """The coarse key of a failed call (not part of the identity)."""
        return self._coarse

    @property
    def stream(self) -> str:
        """Which stream the action belongs to: ``tool`` (tool and HTTP calls), ``model``, or
        ``node`` (a visit to a node of a graph agent, or a bare step)."""
        return self._stream

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, ActionKey):
            return NotImplemented
        return self._hash == other._hash and self._identity == other._identity

    def __repr__(self) -> str:
        return (
            f"ActionKey(node={self._node!r}, tool={self._tool!r}, outcome={self._outcome!r}, "
            f"digest={self._digest!r}, shown_args={self._shown!r}, channel={self._channel!r}, "
            f"coarse={self._coarse!r})"
        )

    @property
    def succeeded(self) -> bool:
        """Whether the action is no failure: a visit, a model output, a call that returned
        without reporting a failure."""
        return self._coarse is None and (self._outcome is None or self._outcome == "ok")

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuilt from its fields: a string's hash differs from one process to the next
        kind = self._identity[2]
        return (
            ActionKey,
            (self._node, self._tool, self._outcome, self._digest, self._shown, self._channel,
             self._coarse, None if kind == self._outcome else kind),
        )  # fmt: skip

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
