"""What the halt heuristics read and say: one step as an :class:`Observation`, one
heuristic's verdict on it as a :class:`Signal`, and the :class:`Heuristic` protocol a
heuristic of your own follows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .policy import HEURISTICS

__all__ = ["Heuristic", "Observation", "Signal", "check_heuristics", "heuristic_name"]


@dataclass(frozen=True)
class Observation:
    """One step as the heuristics read it (built by the monitor)."""

    index: int
    output: str
    tool: str | None
    ok: bool | None
    error: str | None
    progress: float | None
    tokens: frozenset[str]
    info: frozenset[str]
    digest: str
    cjk: bool
    new_info: frozenset[str] = frozenset()
    #: capitalised names not seen before: news only in a step that repeats nothing
    new_names: frozenset[str] = frozenset()
    #: The tool call's arguments as text (canonical JSON, volatile details masked), or None
    #: when not given.
    args: str | None = None
    #: Seconds (virtual in a chaos run) since the previous step, when known.
    seconds: float | None = None
    #: A call that worked at this step besides ``tool`` (the model call whose answer the
    #: output is): its failures so far are no streak any more.
    worked: str | None = None
    #: The digest of the output with its values masked (:func:`.values.masked`).
    shape: str = ""
    #: The output with its values masked.
    masked: str = ""
    #: The artefacts the output hands back (code, a query, a formula), normalised.
    artefacts: frozenset[str] = frozenset()
    #: The state's key (:func:`.state.state_key`), or None when no state was logged.
    state: str | None = None
    #: The state as bounded plain data (for heuristics of your own), or None.
    state_value: Any = None
    #: What makes this failure the same as another (:func:`.streaks.signature`); None
    #: unless the call failed.
    failure: str | None = None
    #: A failure stating a count below the lowest its tool's failures stated since it last
    #: worked, none higher (:class:`.streaks.Lows`): a step toward success.
    lower: bool = False
    #: A call that worked with arguments (given) its tool had not been called with before in
    #: the run: another item, not the same one again.
    fresh: bool = False


@runtime_checkable
class Heuristic(Protocol):
    """A heuristic of your own: called with each step and the steps before it (the most
    recent last, up to four windows of them), it returns a strike's reason (a non-empty
    string, or ``True``) or no strike (``False``, ``None``, ``""``). Its ``name`` (a function's
    ``__name__`` unless it has a ``name``) names it in decisions and must differ from the
    built-in heuristics'; an optional ``weight`` (0 to 1, default 1) is its weight in the risk.

        def same_board(step, history):
            return bool(history) and step.state == history[-1].state and "board unchanged"

        HaltMonitor(task, heuristics=[same_board])
    """

    def __call__(self, step: Observation, history: Sequence[Observation]) -> object: ...


def heuristic_name(heuristic: Any) -> str:
    """The name a heuristic of your own goes by."""
    name = getattr(heuristic, "name", None) or getattr(heuristic, "__name__", None)
    return name if isinstance(name, str) else type(heuristic).__name__


def check_heuristics(heuristics: Any) -> tuple[Heuristic, ...]:
    """``heuristics`` checked: callables with distinct names that are not built-in names, and
    weights from 0 to 1. Raises ``TypeError`` / ``ValueError`` naming the one at fault."""
    if heuristics is None:
        return ()
    if isinstance(heuristics, (str, bytes)) or not isinstance(heuristics, (list, tuple)):
        raise TypeError(
            "HaltMonitor(heuristics=...) takes a list of callables "
            f"(step, history) -> reason or None, got {heuristics!r}"
        )
    names: set[str] = set()
    for h in heuristics:
        if not callable(h):
            raise TypeError(
                f"HaltMonitor(heuristics=...): {h!r} is not callable; a heuristic is called "
                "as heuristic(step, history) and returns a strike's reason or None"
            )
        name = heuristic_name(h)
        if not name or name == "<lambda>":
            raise ValueError(
                "HaltMonitor(heuristics=...): a lambda has no name; give the heuristic a "
                "`name` attribute or define it with def"
            )
        if name in HEURISTICS or name == "limits":
            raise ValueError(
                f"HaltMonitor(heuristics=...): {name!r} is a built-in heuristic's name; "
                f"built-in: {', '.join(HEURISTICS)}"
            )
        if name in names:
            raise ValueError(f"HaltMonitor(heuristics=...): two heuristics are named {name!r}")
        weight = getattr(h, "weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight <= 1:
            raise ValueError(
                f"HaltMonitor(heuristics=...): {name!r} has weight {weight!r}; a number from 0 to 1"
            )
        names.add(name)
    return tuple(heuristics)


@dataclass(frozen=True)
class Signal:
    """What one heuristic says of one step: ``strike`` (this step is one more occurrence),
    ``strikes`` (occurrences in its window), ``score`` (0 to 1) and ``reason``."""

    heuristic: str
    strike: bool
    strikes: int
    score: float
    reason: str = ""
    detail: dict[str, Any] = field(default_factory=dict)
