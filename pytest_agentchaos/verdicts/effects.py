"""Side effects in a trace, and which of them ran twice: the one duplicate check that
``must_recover_state`` and ``must_not_duplicate`` share.

An **effect** is a tool or HTTP call that took effect: a successful ``ToolResult``, or a
failed one whose reply a ``lost_reply`` fault lost after the tool ran (the agent saw an
error; the effect happened). A run of the rebirth runner's effect ledger (an ``Intervention``
``effect`` with ``ran`` true) is an effect too.

A call carries an **idempotency key** when its arguments hold one (``idempotency_key``,
``Idempotency-Key``, ``idempotencyKey``, any case, at the top level or one level down: an HTTP
call's ``json``), as a string or an integer. Its **intent** is its tool and the action key of
its arguments as the loop detector keys them (:func:`~pytest_agentchaos.escape.keys.action_key`:
request ids, timestamps and attempt counters masked), without the idempotency key, so a retry
that only renewed its volatile fields or its key has the intent of the call it retries.

Two rules read the same effects:

- :meth:`EffectLog.same_key`: effects of one tool with the same idempotency key (what
  ``must_recover_state`` calls a duplicate: the key names one effect, and it ran twice); and
  ledger keys that ran more than once (:meth:`EffectLog.ledger_twice`).
- :meth:`EffectLog.same_intent`: effects of one tool with the same intent that are not one
  effect by their key (what ``must_not_duplicate`` calls a duplicate): effects that share an
  idempotency key are one effect (the tool deduplicates them); each effect without a key, and
  each other key, is another.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..escape.idempotency import is_key_field, key_of, without_key
from ..escape.keys import call_digest
from ..escape.normalize import mask_args
from ..trace.events import FaultInjected, Intervention, ToolCall, ToolResult
from .verdict import seconds

__all__ = ["LOST_REPLY", "Effect", "EffectLog", "idempotency_key", "intent_of"]

#: The idempotency key a call's arguments carry (see :func:`~..escape.idempotency.key_of`).
idempotency_key = key_of

#: The fault kind whose call took effect while its reply was lost.
LOST_REPLY = "lost_reply"


class Effect(NamedTuple):
    """One call that took effect: where it is in the run, its arguments, its idempotency key,
    how its reply was lost (``timeout``/``reset``; None when the agent got it) and how many
    rebirths came before it (``epoch``)."""

    tool: str
    channel: str
    index: int  # type: ignore[assignment]  # shadows tuple.index
    step: int
    t: float
    args: Any
    key: str | None
    lost: str | None = None
    epoch: int = 0

    def where(self) -> str:
        """``call #2 (step 4, t=1.5s)``, with how its reply was lost, if it was."""
        lost = f"; its reply was lost: {self.lost}" if self.lost else ""
        return f"call #{self.index} (step {self.step}, t={seconds(self.t)}s{lost})"


@dataclass
class EffectLog:
    """The effects of a run, read one event at a time (:meth:`feed`), so a verdict that reads
    the trace for other things too reads it once. ``tools``: only these tools' calls are
    effects (None: every tool's)."""

    tools: Collection[str] | None = None
    #: each ledger key's runs, as the number of rebirths before each run
    ledger: dict[str, list[int]] = field(default_factory=dict)
    effects: list[Effect] = field(default_factory=list)
    #: the tools whose calls carried an idempotency key
    keyed_tools: set[str] = field(default_factory=set)
    #: the tools a lost_reply fault hit
    lost_tools: set[str] = field(default_factory=set)
    _calls: dict[tuple[str, str, int], tuple[ToolCall, str | None]] = field(
        default_factory=dict, repr=False
    )
    _lost: dict[tuple[str, str, int], str] = field(default_factory=dict, repr=False)

    def feed(self, event: Any, epoch: int = 0) -> None:
        """Take one event of the trace (events of other types are ignored)."""
        kind = type(event)
        if kind is ToolCall:
            tool = event.tool
            if self.tools is not None and tool not in self.tools:
                return
            key = idempotency_key(event.args)
            if key is not None:
                self.keyed_tools.add(tool)
            self._calls[(event.channel, tool, event.index)] = (event, key)
        elif kind is ToolResult:
            found = self._calls.pop((event.channel, event.tool, event.index), None)
            if found is None:
                return
            lost = None
            if not event.ok:
                lost = self._lost.pop((event.channel, event.tool, event.index), None)
                if lost is None:
                    return
            call, key = found
            self.effects.append(
                Effect(call.tool, call.channel, call.index, call.step, call.t, call.args, key,
                       lost, epoch)
            )  # fmt: skip
        elif kind is FaultInjected:
            if event.kind == LOST_REPLY:
                detail = event.detail if isinstance(event.detail, dict) else {}
                mode = detail.get("mode")
                self._lost[(event.channel, event.target, event.index)] = (
                    mode if isinstance(mode, str) and mode else "lost"
                )
                self.lost_tools.add(event.target)
        elif kind is Intervention and event.action == "effect":
            detail = event.detail if isinstance(event.detail, dict) else {}
            if detail.get("ran") is True:
                self.ledger.setdefault(str(detail.get("key")), []).append(epoch)

    def read(self, events: Iterable[Any]) -> EffectLog:
        """Feed every event (at epoch 0); returns self."""
        tools = self.tools
        feed = self.feed
        for event in [  # the events that can matter, in order, picked out at once
            e
            for e in events
            if (
                (type(e) is ToolCall or type(e) is ToolResult)
                and (tools is None or e.tool in tools)
            )
            or (type(e) is FaultInjected and e.kind == LOST_REPLY)
            or (type(e) is Intervention and e.action == "effect")
        ]:
            feed(event)
        return self

    @staticmethod
    def lost(events: Iterable[Any]) -> set[str]:
        """The tools a ``lost_reply`` fault hit."""
        return {e.target for e in events if type(e) is FaultInjected and e.kind == LOST_REPLY}

    # -- the rules ----------------------------------------------------------------------------

    def keyed(self) -> dict[tuple[str, str], list[Effect]]:
        """The effects that carried an idempotency key, by tool and key, in run order."""
        groups: dict[tuple[str, str], list[Effect]] = {}
        for effect in self.effects:
            if effect.key is not None:
                groups.setdefault((effect.tool, effect.key), []).append(effect)
        return groups

    def same_key(self) -> dict[tuple[str, str], list[Effect]]:
        """Tools whose one idempotency key took effect more than once."""
        return {k: runs for k, runs in self.keyed().items() if len(runs) > 1}

    def ledger_twice(self) -> dict[str, list[int]]:
        """Ledger keys that ran more than once (the rebirths before each run)."""
        return {k: runs for k, runs in self.ledger.items() if len(runs) > 1}

    def same_intent(self, tools: Collection[str] | None = None) -> list[list[Effect]]:
        """Each group of effects of one tool (of ``tools``; None: every tool) with one intent
        that took effect more than once: more than one distinct idempotency key among them,
        or an effect without one beside any other. In run order of each group's first effect;
        each group holds one effect per identity (the first effect of each key)."""
        groups: dict[tuple[str, str, Hashable], list[Effect]] = {}
        for effect in self.effects:
            if tools is not None and effect.tool not in tools:
                continue
            groups.setdefault((effect.tool, effect.channel, intent_of(effect.args)), []).append(
                effect
            )
        found = []
        for effects in groups.values():
            if len(effects) < 2:
                continue
            seen: set[str] = set()
            distinct = []
            for effect in effects:
                if effect.key is None:
                    distinct.append(effect)
                elif effect.key not in seen:
                    seen.add(effect.key)
                    distinct.append(effect)
            if len(distinct) > 1:
                found.append(distinct)
        return found

    def reused(self, tools: Collection[str] | None = None) -> int:
        """How many effects shared an idempotency key with an earlier effect of their tool
        (retries the tool could deduplicate)."""
        return sum(
            len(runs) - 1
            for (tool, _), runs in self.keyed().items()
            if tools is None or tool in tools
        )


def intent_of(args: Any) -> Hashable:
    """A call's intent: its arguments as the loop detector keys them (volatile fields masked),
    without their idempotency key: a retry that added, kept or renewed one asks for what the
    first call asked for. Two calls have one intent exactly when the digests of their masked
    arguments (:func:`~pytest_agentchaos.escape.keys.call_digest`, what their action keys
    hold) are equal; flat arguments (text, integers, null) are compared as they are, without
    writing the digest."""
    if type(args) is dict:
        masked = mask_args(args)
        keyed = False
        for name, value in masked.items():
            if type(name) is not str or type(value) not in _FLAT:
                break
            if is_key_field(name):
                keyed = True
        else:
            if keyed:
                masked = {k: v for k, v in masked.items() if not is_key_field(k)}
            return frozenset(masked.items())
        return call_digest(without_key(args))
    if args is None:
        return None
    return call_digest(args)


#: The values compared as they are: JSON equality is Python's for these (not for a float or a
#: boolean: ``1 == 1.0 == True``).
_FLAT = frozenset({str, int, type(None)})
