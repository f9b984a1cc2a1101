"""Fault kinds only a provider's wire can deliver: what goes wrong *inside* a model's answer.

They act on the calls of scripted provider endpoints (``chaos.provider``), whose arguments
say which API and whether the answer is streamed (``wire``, ``stream``); on any other model
call (``chaos.model``, a framework adapter) they never fire, since there is no wire to cut.
The stream kinds fire only on streamed requests, ``bad_tool_arguments`` only on requests that
offer tools.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from .effects import Effect
from .kinds import CallInfo, FaultKind, _draw, register
from .params import choice, one_or_many, seconds, seconds_or_range

__all__ = ["BAD_ARGUMENTS", "CUT_MODES"]

#: How ``stream_cut`` ends a stream: the connection drops (the client sees a protocol
#: error) or the server closes the stream early and cleanly (no error: the answer is short).
CUT_MODES = ("reset", "end")
#: How ``bad_tool_arguments`` breaks a tool call's arguments: cut in half (JSON that does not
#: end) or written as a Python dict (single quotes: not JSON at all).
BAD_ARGUMENTS = ("truncated", "not_json")


def _on_wire(call: CallInfo) -> bool:
    args = call.args
    return isinstance(args, Mapping) and bool(args.get("wire"))


def _streamed(call: CallInfo) -> bool:
    return _on_wire(call) and call.args.get("stream") is True


def _pick(rng: random.Random, modes: tuple[str, ...]) -> str:
    return modes[rng.randrange(len(modes))] if len(modes) > 1 else modes[0]


@register
class StreamCut(FaultKind):
    """A streamed answer stops about halfway through its text, by one of ``mode``:
    ``reset`` (the connection drops: the SDK's stream raises a protocol error) or ``end``
    (the server closes the stream early: no error, the answer is incomplete and has no
    finish reason); both by default. Streamed provider calls only."""

    name = "stream_cut"
    summary = "a streamed model answer stops mid-answer: the connection drops, or it just ends"
    params = {"mode": one_or_many(choice(CUT_MODES))}
    defaults = {"mode": CUT_MODES}
    details = {"mode": choice(CUT_MODES)}
    channels = ("model",)
    reusable = True

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any] | None:
        return {"mode": _pick(rng, tuple(self.values["mode"]))} if _streamed(call) else None

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        return Effect(wire={"cut": str(detail["mode"])})


@register
class NoFinishReason(FaultKind):
    """A streamed answer arrives whole but without its finish event (no ``finish_reason``,
    ``stop_reason`` or ``response.completed``). Streamed provider calls only."""

    name = "no_finish_reason"
    summary = "a streamed model answer arrives whole but never says it finished"
    params = {}
    channels = ("model",)
    reusable = True

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any] | None:
        return {} if _streamed(call) else None

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        return Effect(wire={"no_finish": True})


@register
class SlowFirstToken(FaultKind):
    """A streamed answer's first event comes ``seconds`` of virtual time late (a number or
    a ``[low, high]`` range; 10 by default), the rest at once. Streamed provider calls only
    (``latency`` delays any call)."""

    name = "slow_first_token"
    summary = "a streamed model answer's first token comes `seconds` (virtual) late"
    params = {"seconds": seconds_or_range}
    defaults = {"seconds": (10.0, 10.0)}
    details = {"seconds": seconds}
    channels = ("model",)
    reusable = True

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any] | None:
        return {"seconds": _draw(rng, self.values["seconds"])} if _streamed(call) else None

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        return Effect(delay=float(detail["seconds"]), wire={"slow_first_token": True})


@register
class BadToolArguments(FaultKind):
    """The answer's first tool call carries arguments that are not valid JSON, by one of
    ``mode``: ``truncated`` (cut in half) or ``not_json`` (a Python dict's repr); both by
    default. Provider calls that offer tools only (and on Anthropic's Messages API streamed
    ones: a whole answer carries its input as an object); an answer that calls no tool is
    sent as scripted (the run's notes say so)."""

    name = "bad_tool_arguments"
    summary = "the model's tool call comes with arguments that are not valid JSON"
    params = {"mode": one_or_many(choice(BAD_ARGUMENTS))}
    defaults = {"mode": BAD_ARGUMENTS}
    details = {"mode": choice(BAD_ARGUMENTS)}
    channels = ("model",)
    reusable = True

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any] | None:
        if not _on_wire(call) or not call.args.get("tools"):
            return None
        if call.args.get("wire") == "anthropic.messages" and not _streamed(call):
            return None  # a whole Anthropic answer carries its input as an object, never text
        return {"mode": _pick(rng, tuple(self.values["mode"]))}

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        return Effect(wire={"bad_arguments": str(detail["mode"])})


@register
class EmptyCompletion(FaultKind):
    """The model answers with nothing: no text, no tool call, a normal finish. Provider
    calls only."""

    name = "empty_completion"
    summary = "the model answers with nothing at all (no text, no tool call)"
    params = {}
    channels = ("model",)
    reusable = True

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any] | None:
        return {} if _on_wire(call) else None

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        return Effect(wire={"empty": True})
