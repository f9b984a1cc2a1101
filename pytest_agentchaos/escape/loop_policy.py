"""``LoopPolicy``: loop detection thresholds and how actions are keyed (``[escape.loops]``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast

from ..config import (
    Validator,
    check_fields,
    choice,
    count,
    fail,
    integer,
    number,
    parse_table,
)
from ..saferepr import short
from .replies import ReplyEmbedder

__all__ = ["MAX_PERIOD", "KeyFunction", "LoopCall", "LoopPolicy"]

#: The longest repeating block the detector looks for.
MAX_PERIOD = 256


class LoopCall(NamedTuple):
    """A completed tool, HTTP or model call, as a user's key function receives it."""

    tool: str
    args: Any
    ok: bool
    result: Any
    error_type: str | None
    message: str | None
    status: int | None
    channel: str


#: A user's key for one tool's calls: two calls with equal keys are the same action. Its value
#: (any JSON-able data) replaces the arguments, outcome and result in the action's key.
KeyFunction = Callable[[LoopCall], Any]


@dataclass(frozen=True, slots=True)
class LoopPolicy:
    """Thresholds of the loop detectors and how actions are keyed (``[escape.loops]``).

    ``ignore_fields`` names fields (at any depth of arguments and results) whose values never
    matter; ``keys`` maps a tool name to a :data:`KeyFunction` of its own (in a profile, a
    ``"module:function"`` path).

    Two conventions on which frameworks differ, for the identical call failing again:

    - ``error_numbers``: its error differs only in a number (a line, a column, a position, a
      count). ``"ignore"`` (the default): the same error, so three make a loop; the number
      moving is the same failure reported at another place. ``"compare"``: another error
      ("the error moves"), no loop for that alone.
    - ``error_wording``: its errors are worded differently (not only in numbers or quoted
      values). ``"compare"`` (the default): the world answers differently, which is news, so
      no loop for that alone. ``"ignore"``: the call is stuck whatever the wording; the
      failures are keyed by the call, the error type and the status.

    Transient failures (timeouts, 5xx, 429, refused or reset connections, as the error
    classifier says) are no news under either: the identical call failing transiently is the
    same action whatever the error, on a tool's channel and on a model's.

    ``nudge_tokens``: a model's reply is keyed with the turn it answers, unless that turn is
    a nudge (:mod:`.turns`): it adds no number or identifier to the conversation and at most
    this many words (a Chinese or Japanese character counts half), fewer than the reply
    says. The same reply to "continue", then "next", then "are you there?" repeats, and so
    does a reply said again that says more than twice what its turn added (it ignored the
    turn); ``0`` keys every reply with its turn.

    ``reply_embedder`` (optional; given in Python, not an ``[escape.loops]`` key, as is
    ``semantic_similarity``): a callable text -> vector that compares what chat replies mean
    when their words differ: two replies whose vectors' cosine is at least
    ``semantic_similarity`` and whose numbers, names and code are the same are one reply said
    in new words ("All tasks complete." / "All tasks are complete."). A reply
    that changes one of those values is another reply. None (the default): words alone.
    """

    min_period: int = 1
    max_period: int = 8
    repeats_period_1: int = 3  # identical actions in a row that make a 1-step loop
    repeats: int = 3  # occurrences of a longer block that make a loop
    error_streak: int = 3  # the same tool failing with the same error, arguments varying
    state_repeats: int = 3
    state_window: int = 64
    node_visits: int = 5
    node_window_events: int = 64
    node_window_seconds: float = 60.0
    text_similarity: float = 0.8
    error_streak_window: int = 10  # actions within which a tool's same-error failures count
    error_numbers: str = "ignore"
    error_wording: str = "compare"
    nudge_tokens: int = 3  # the most words a user turn adds and is still a nudge (0: none is)
    ignore_fields: tuple[str, ...] = ()
    keys: Mapping[str, KeyFunction] = field(default_factory=dict, hash=False)
    reply_embedder: ReplyEmbedder | None = field(default=None, hash=False, compare=False)
    semantic_similarity: float = 0.9

    def __post_init__(self) -> None:
        check_fields(self, _FIELDS, "LoopPolicy")
        # given in Python only: not keys of [escape.loops]
        _embedder(self.reply_embedder, "LoopPolicy: reply_embedder")
        _similarity(self.semantic_similarity, "LoopPolicy: semantic_similarity")
        _check_periods(self.min_period, self.max_period, "LoopPolicy")
        # normalised: a list of names becomes a tuple, key-function paths are loaded
        object.__setattr__(self, "ignore_fields", tuple(self.ignore_fields))
        object.__setattr__(self, "keys", _key_functions(self.keys, "LoopPolicy: keys"))

    def repeats_for(self, period: int) -> int:
        """How many occurrences of a block of ``period`` actions make a loop."""
        return self.repeats_period_1 if period == 1 else self.repeats

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str = "[escape.loops]") -> LoopPolicy:
        """Validate an ``[escape.loops]`` table; errors name ``where``, the key and what is
        allowed. Missing keys keep their defaults."""
        values = parse_table(raw, _FIELDS, where, "loops")
        _check_periods(
            values.get("min_period", _DEFAULT.min_period),
            values.get("max_period", _DEFAULT.max_period),
            where,
        )
        return cls(**values)


def _embedder(value: Any, where: str) -> ReplyEmbedder | None:
    """None, or a callable text -> vector (given in Python: a vector model is no TOML value)."""
    if value is not None and not callable(value):
        raise fail(where, f"expected a callable text -> vector or nothing, got {short(value)}")
    return cast("ReplyEmbedder | None", value)


def _check_periods(min_period: int, max_period: int, where: str) -> None:
    if min_period > max_period:
        raise fail(
            f"{where}: min_period", f"must be <= max_period ({max_period}), got {short(min_period)}"
        )


def _field_names(value: Any, where: str) -> tuple[str, ...]:
    """A list of field names."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise fail(where, f"expected a list of field names, got {short(value)}")
    for i, name in enumerate(value):
        if not isinstance(name, str) or not name:
            raise fail(f"{where}[{i}]", f"expected a non-empty field name, got {short(name)}")
    return tuple(value)


def load_function(path: str, where: str) -> Callable[..., Any]:
    """The callable a ``"module:attribute"`` (or ``"module.attribute"``) path names."""
    module_name, sep, attribute = path.partition(":")
    if not sep:
        module_name, _, attribute = path.rpartition(".")
    if not module_name or not attribute:
        raise fail(where, f"expected 'module:function', got {short(path)}")
    try:
        found: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            found = getattr(found, part)
    except Exception as exc:  # ImportError, AttributeError, or the module's own error
        raise fail(where, f"cannot load {short(path)}: {type(exc).__name__}: {exc}") from None
    if not callable(found):
        raise fail(where, f"{short(path)} is not callable")
    return found  # type: ignore[no-any-return]


def _key_functions(value: Any, where: str) -> dict[str, KeyFunction]:
    """A table of tool name -> key function (a callable, or a ``"module:function"`` path)."""
    if not isinstance(value, Mapping):
        raise fail(where, f"expected a table of tool name -> 'module:function', got {short(value)}")
    functions: dict[str, KeyFunction] = {}
    for tool, fn in value.items():
        at = f"{where}.{tool}"
        if not isinstance(tool, str) or not tool:
            raise fail(where, f"expected tool names as keys, got {short(tool)}")
        if isinstance(fn, str):
            functions[tool] = load_function(fn, at)
        elif callable(fn):
            functions[tool] = fn
        else:
            raise fail(at, f"expected 'module:function' or a callable, got {short(fn)}")
    return functions


def _similarity(value: Any, where: str) -> float:
    """A share of words in common, above 0 and at most 1."""
    share: float = number(minimum=0, exclusive_min=True, maximum=1)(value, where)
    return share


#: Every field of a :class:`LoopPolicy` with its check (the keys of an ``[escape.loops]``
#: table). Every action costs O(max_period): a longer block than this is no loop worth a test.
_FIELDS: dict[str, Validator] = {
    "min_period": integer(minimum=1, maximum=MAX_PERIOD),
    "max_period": integer(minimum=1, maximum=MAX_PERIOD),
    "repeats_period_1": count(minimum=2),
    "repeats": count(minimum=2),
    "error_streak": count(minimum=2),
    "state_repeats": count(minimum=2),
    "state_window": count(),
    "node_visits": count(minimum=2),
    "node_window_events": count(),
    "node_window_seconds": number(minimum=0, exclusive_min=True, unit="seconds", finite=False),
    "text_similarity": _similarity,
    "error_streak_window": count(),
    "error_numbers": choice(("ignore", "compare")),
    "error_wording": choice(("compare", "ignore")),
    "nudge_tokens": integer(minimum=0, maximum=64),
    "ignore_fields": _field_names,
    "keys": _key_functions,
}
#: Where ``from_dict`` finds the defaults a cross-field rule needs (a slotted dataclass has
#: no class attributes to read them from).
_DEFAULT = LoopPolicy()
