"""Fault kinds: what can go wrong with one call.

A kind validates its parameters, *decides* (given a seeded RNG and the call) a concrete,
JSON-able detail such as ``{"status": 503}``, and turns a detail into an :class:`Effect`.
The effect depends only on the detail, so a schedule read back from a trace replays exactly.
Adding a kind is one small class registered with :func:`register`.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping
from operator import itemgetter
from typing import Any, ClassVar

from ..config import integer
from ..saferepr import short
from . import mutations as _mut
from .effects import Effect, Failure, reason_phrase
from .params import (
    Validator,
    anything,
    boolean,
    choice,
    fail,
    http_status,
    json_data,
    one_or_many,
    optional,
    seconds,
    seconds_or_range,
    text,
)

#: The channels of calls: Python tools, HTTP requests and model calls. Every kind that acts on
#: a call applies to these (unless it says otherwise).
CALL_CHANNELS = ("tool", "http", "model")
#: The channels of the rebirth runner (:mod:`pytest_agentchaos.phoenix`): its steps, asked
#: before each one runs, and its snapshot loads, asked before each one reads the store.
RUNNER_CHANNELS = ("step", "snapshot")
#: Every channel a fault may hit.
CHANNELS = CALL_CHANNELS + RUNNER_CHANNELS


class CallInfo(tuple):  # type: ignore[type-arg]
    """What a fault may look at when deciding: which call, when, with what arguments.

    An immutable record (a tuple underneath, built on every call a fault may hit, so it must
    be cheap); read it by field name.
    """

    __slots__ = ()

    channel: str = property(itemgetter(0))  # type: ignore[assignment]
    target: str = property(itemgetter(1))  # type: ignore[assignment]
    index: int = property(itemgetter(2))  # type: ignore[assignment]
    t: float = property(itemgetter(3))  # type: ignore[assignment]
    args: Mapping[str, Any] = property(itemgetter(4))  # type: ignore[assignment]
    schema: Mapping[str, Any] | None = property(itemgetter(5))  # type: ignore[assignment]
    has_previous: bool = property(itemgetter(6))  # type: ignore[assignment]
    #: How many outputs of this target the run has kept count of (when a fault may replay one).
    outputs: int = property(itemgetter(7))  # type: ignore[assignment]

    def __new__(
        cls,
        channel: str,
        target: str,
        index: int,
        t: float,
        args: Mapping[str, Any],
        schema: Mapping[str, Any] | None = None,
        has_previous: bool = False,
        outputs: int = 0,
    ) -> CallInfo:
        return tuple.__new__(cls, (channel, target, index, t, args, schema, has_previous, outputs))

    def __repr__(self) -> str:
        return (
            f"CallInfo(channel={self.channel!r}, target={self.target!r}, index={self.index}, "
            f"t={self.t!r}, has_previous={self.has_previous}, outputs={self.outputs})"
        )


class FaultKind:
    """Base class. Subclasses set ``name``, ``params``, ``defaults`` and ``channels`` (the
    call channels unless they say otherwise)."""

    name: ClassVar[str] = ""
    params: ClassVar[dict[str, Validator]] = {}
    #: The keys of a decided detail and their validators: a schedule read back from a trace
    #: (or proposed by a search) is checked against them before it replays.
    details: ClassVar[dict[str, Validator]] = {}
    #: Detail keys that may be left out.
    optional_details: ClassVar[tuple[str, ...]] = ()
    #: Whether the kind replays a call's previous output (the run must then keep outputs).
    needs_previous: ClassVar[bool] = False
    defaults: ClassVar[dict[str, Any]] = {}
    channels: ClassVar[tuple[str, ...]] = CALL_CHANNELS
    summary: ClassVar[str] = ""
    #: Whether a decision's effect depends on nothing but its detail and the call's target
    #: (not its arguments): it is then built once per such pair (:meth:`effect_for`).
    reusable: ClassVar[bool] = False

    def __init__(self, *, where: str | None = None, **params: Any) -> None:
        where = where or f"fault {short(self.name)}"
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            allowed = ", ".join(sorted(self.params)) or "none"
            raise fail(
                where,
                f"unknown key {short(unknown[0])} for kind {short(self.name)}; allowed: {allowed}",
            )
        values = dict(self.defaults)
        for key, value in params.items():
            values[key] = self.params[key](value, f"{where}: {key}")
        self.values: dict[str, Any] = values
        self._effects: dict[Any, Effect] = {}

    @classmethod
    def from_config(cls, raw: Mapping[str, Any], where: str) -> FaultKind:
        """Build from one fault table, taking only this kind's keys (the rest are selector keys)."""
        return cls(where=where, **{k: v for k, v in raw.items() if k in cls.params})

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any] | None:
        """The concrete decision for this call, or ``None`` when the kind cannot apply."""
        return {}

    @classmethod
    def check_selector(cls, tools: tuple[str, ...] | None, where: str) -> None:
        """Refuse a selector this kind may not fire under (``tools``: its tool globs, ``None``
        when it names none); the base accepts any."""

    @classmethod
    def check_detail(cls, detail: object, where: str) -> dict[str, Any]:
        """Validate a decided detail (from a replayed schedule); returns it normalised."""
        if not isinstance(detail, Mapping):
            raise fail(where, f"expected a table of the decision's details, got {short(detail)}")
        missing = [k for k in cls.details if k not in detail and k not in cls.optional_details]
        if missing:
            raise fail(where, f"missing {short(missing[0])} for kind {short(cls.name)}")
        unknown = sorted(str(k) for k in detail if k not in cls.details)
        if unknown:
            allowed = ", ".join(cls.details) or "none"
            raise fail(
                where,
                f"unknown key {short(unknown[0])} for kind {short(cls.name)}; allowed: {allowed}",
            )
        return {k: cls.details[k](v, f"{where}.{k}") for k, v in detail.items()}

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        """What a decided ``detail`` does to ``call`` (the detail alone decides it, so a
        replayed schedule acts the same)."""
        raise NotImplementedError

    def effect_for(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        """:meth:`effect`, built once per (target, detail) for a :attr:`reusable` kind: effects
        are immutable, and a fault that fires again on the same tool needs no new one."""
        if not self.reusable:
            return self.effect(detail, call)
        try:
            key = (call.target, tuple(detail.items()))
            found = self._effects.get(key)
        except TypeError:  # a detail holding a list or a table (an http_error body)
            return self.effect(detail, call)
        if found is None:
            found = self._effects[key] = self.effect(detail, call)
        return found

    def depth(self, detail: Mapping[str, Any] | None = None) -> int:
        """How many of a target's latest outputs the run must keep for this kind (for a
        decided ``detail``, or for any decision when ``None``): 1 when it replays the
        previous output, 0 when it replays none."""
        return 1 if self.needs_previous else 0

    def keeps_first(self, detail: Mapping[str, Any] | None = None) -> bool:
        """Whether this kind replays a target's first output (the run then keeps it)."""
        return False

    def fits(self, detail: Mapping[str, Any], call: CallInfo) -> bool:
        """Whether a decision read back from a schedule can act on ``call`` now (a replay
        needs the output it replays)."""
        return call.has_previous if self.needs_previous else True

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.values!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.values == self.values

    def __hash__(self) -> int:
        return hash((type(self), json.dumps(self.values, sort_keys=True, default=repr)))


KINDS: dict[str, type[FaultKind]] = {}


def register(kind: type[FaultKind]) -> type[FaultKind]:
    """Class decorator: make a fault kind available to profiles and markers by its name."""
    if not kind.name:
        raise ValueError(f"{kind.__name__} has no name")
    KINDS[kind.name] = kind
    return kind


def kind_class(name: object, where: str) -> type[FaultKind]:
    """The kind registered as ``name``; an unknown name is an error naming ``where``."""
    if not isinstance(name, str):
        raise fail(where, f"expected a fault kind name (a string), got {short(name)}")
    try:
        return KINDS[name]
    except KeyError:
        raise fail(
            where, f"unknown fault kind {short(name)}; allowed: {', '.join(sorted(KINDS))}"
        ) from None


def _draw(rng: random.Random, low_high: tuple[float, float]) -> float:
    low, high = low_high
    return low if low == high else round(rng.uniform(low, high), 3)


_reason = reason_phrase


@register
class Timeout(FaultKind):
    """The call hangs for ``seconds`` of virtual time (a number or a ``[low, high]`` range to
    draw from; 30 by default), then fails with a timeout."""

    name = "timeout"
    reusable = True
    summary = "the call hangs for `seconds` (virtual), then raises TimeoutError / httpx.ReadTimeout"
    params = {"seconds": seconds_or_range}
    defaults = {"seconds": (30.0, 30.0)}
    details = {"seconds": seconds}

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any]:
        return {"seconds": _draw(rng, self.values["seconds"])}

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        s = float(detail["seconds"])
        return Effect(delay=s, failure=Failure("timeout", f"{call.target} timed out after {s:g}s"))


@register
class HttpError(FaultKind):
    """The call fails with an HTTP ``status`` (one code or a list to draw from; 500 by
    default) and ``body`` (by default ``{"error": <reason phrase>, "status": <code>}``)."""

    name = "http_error"
    reusable = True
    summary = "the call fails with an HTTP status (one or a list to draw from) and optional body"
    params = {"status": one_or_many(http_status), "body": json_data}
    defaults = {"status": (500,), "body": None}
    details = {"status": http_status, "body": json_data}
    optional_details = ("body",)

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any]:
        statuses = self.values["status"]
        status = statuses[rng.randrange(len(statuses))] if len(statuses) > 1 else statuses[0]
        return {"status": status, "body": self.values["body"]}

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        status = int(detail["status"])
        msg = f"{call.target}: HTTP {status} {_reason(status)}"
        return Effect(failure=Failure("http", msg, status=status, body=detail.get("body")))


@register
class RateLimit(FaultKind):
    """The call fails with 429 Too Many Requests, asking to retry after ``retry_after``
    seconds (a number or a ``[low, high]`` range; 30 by default; the ``Retry-After`` header
    rounds it up to whole seconds)."""

    name = "rate_limit"
    reusable = True
    summary = "the call fails with 429 Too Many Requests and a Retry-After of `retry_after` seconds"
    params = {"retry_after": seconds_or_range}
    defaults = {"retry_after": (30.0, 30.0)}
    details = {"status": choice((429,)), "retry_after": seconds}
    optional_details = ("status",)

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any]:
        return {"status": 429, "retry_after": _draw(rng, self.values["retry_after"])}

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        ra = float(detail["retry_after"])
        header = str(math.ceil(ra))  # RFC 9110: delay-seconds is a whole number
        return Effect(
            failure=Failure(
                "http",
                f"{call.target}: HTTP 429 Too Many Requests (retry after {header}s)",
                status=429,
                headers={"Retry-After": header},
                retry_after=ra,
            )
        )


@register
class ConnectionFault(FaultKind):
    """The call fails at once with a refused connection (no parameters)."""

    name = "connection_error"
    reusable = True
    summary = "the connection is refused or dropped: ConnectionError / httpx.ConnectError"
    params = {}

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        return Effect(failure=Failure("connection", f"{call.target}: connection refused"))


#: The error codes JSON-RPC 2.0 defines, with their standard messages.
JSONRPC_ERRORS = {
    -32700: "Parse error",
    -32600: "Invalid Request",
    -32601: "Method not found",
    -32602: "Invalid params",
    -32603: "Internal error",
}


def jsonrpc_code(value: Any, where: str) -> int:
    """A JSON-RPC error code: a negative integer (-32768 to -32000 are the protocol's own)."""
    code: int = integer(minimum=None)(value, where)
    if code >= 0:
        raise fail(where, f"expected a negative JSON-RPC error code (e.g. -32603), got {code}")
    return code


@register
class ProtocolError(FaultKind):
    """The call fails with a JSON-RPC error response: ``code`` (one or a list to draw from;
    -32603 Internal error by default) and ``message`` (default: the code's standard message,
    or "Server error"). On an MCP client session it is the SDK's own ``MCPError``; on a
    Python tool :class:`~pytest_agentchaos.inject.errors.InjectedProtocolError` (a
    ``RuntimeError`` with ``code``). Tool calls only."""

    name = "protocol_error"
    reusable = True
    channels = ("tool",)
    summary = "the call fails with a JSON-RPC error response (MCP: the SDK's MCPError)"
    params = {"code": one_or_many(jsonrpc_code), "message": optional(text)}
    defaults = {"code": (-32603,), "message": None}
    details = {"code": jsonrpc_code, "message": text}

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any]:
        codes = self.values["code"]
        code = codes[rng.randrange(len(codes))] if len(codes) > 1 else codes[0]
        message = self.values["message"] or JSONRPC_ERRORS.get(code, "Server error")
        return {"code": code, "message": message}

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        code, message = int(detail["code"]), str(detail["message"])
        return Effect(failure=Failure("protocol", message, status=code))


@register
class Latency(FaultKind):
    """The call is delayed by ``seconds`` of virtual time (a number or a ``[low, high]``
    range; 2 by default), then runs for real."""

    name = "latency"
    reusable = True
    summary = "the call takes `seconds` (virtual) longer, then runs for real"
    params = {"seconds": seconds_or_range}
    defaults = {"seconds": (2.0, 2.0)}
    details = {"seconds": seconds}

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any]:
        return {"seconds": _draw(rng, self.values["seconds"])}

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        return Effect(delay=float(detail["seconds"]))


@register
class MalformedParams(FaultKind):
    """The call's arguments are corrupted before it runs, by one of ``mutations`` (all by
    default) drawn with a key it can corrupt. With the tool's schema, only corruptions the
    schema rejects are drawn (no ``unknown_key`` where extra keys are allowed, no
    ``out_of_range`` where nothing is bounded): a corruption no check could catch tests no
    agent. Tool and HTTP calls only; it does not fire when no mutation fits the arguments."""

    name = "malformed_params"
    summary = (
        "the arguments are corrupted before the tool runs (with a schema: only in ways it rejects)"
    )
    params = {"mutations": one_or_many(choice(_mut.MUTATIONS))}
    defaults = {"mutations": _mut.MUTATIONS}
    channels = ("tool", "http")
    details = {
        "mutation": choice(_mut.MUTATIONS),
        "key": text,
        "value": json_data,
        "original": anything,
        "repairable": boolean,
    }
    optional_details = ("value", "original", "repairable")

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any] | None:
        return _mut.decide(rng, tuple(self.values["mutations"]), call.args, call.schema)

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        return Effect(args=_mut.apply_mutation(call.args, detail))


@register
class RepeatedOutput(FaultKind):
    """The tool is not run: its previous output comes back again (no parameters). It does
    not fire until the target has an output to repeat."""

    name = "repeated_output"
    reusable = True
    needs_previous = True
    summary = "the tool is not run; its previous output is returned again (stale)"
    params = {}

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any] | None:
        return {} if call.has_previous else None

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        return Effect(replay=True)


#: The oldest output ``stale_output`` may return by count (``age``); older ones: ``"first"``.
MAX_STALE_AGE = 20


def stale_age(value: Any, where: str) -> int | str:
    """``"first"`` or a whole number of calls back, from 2 to :data:`MAX_STALE_AGE`."""
    if value == "first":
        return "first"
    if isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= MAX_STALE_AGE:
        raise fail(
            where,
            f'expected "first" or a whole number from 2 to {MAX_STALE_AGE} (1 is '
            f"repeated_output), got {short(value)}",
        )
    return value


@register
class StaleOutput(FaultKind):
    """The tool is not run: an older output comes back with no error, as from a cache that
    stopped refreshing. ``age``: ``"first"`` (default: the first output the target returned
    in the run) or ``k``, the k-th most recent (2 to 20). It fires only when there is an
    output older than the previous one."""

    name = "stale_output"
    reusable = True
    needs_previous = True
    summary = "the tool is not run; an older output (the first, or `age` calls back) returns"
    params = {"age": stale_age}
    defaults = {"age": "first"}
    details = {"age": stale_age}

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any] | None:
        detail = {"age": self.values["age"]}
        return detail if self.fits(detail, call) else None

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        age = detail["age"]
        return Effect(replay=True, replay_age=0 if age == "first" else int(age))

    def effect_for(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        """:meth:`effect`, built once per (target, detail) for a :attr:`reusable` kind: effects
        are immutable, and a fault that fires again on the same tool needs no new one."""
        if not self.reusable:
            return self.effect(detail, call)
        try:
            key = (call.target, tuple(detail.items()))
            found = self._effects.get(key)
        except TypeError:  # a detail holding a list or a table (an http_error body)
            return self.effect(detail, call)
        if found is None:
            found = self._effects[key] = self.effect(detail, call)
        return found

    def depth(self, detail: Mapping[str, Any] | None = None) -> int:
        age = (detail or self.values)["age"]
        return 1 if age == "first" else int(age)

    def keeps_first(self, detail: Mapping[str, Any] | None = None) -> bool:
        return bool((detail or self.values)["age"] == "first")

    def fits(self, detail: Mapping[str, Any], call: CallInfo) -> bool:
        # an output older than the previous one must exist
        age = detail["age"]
        return call.outputs >= (2 if age == "first" else int(age))


@register
class ParaphrasedOutput(FaultKind):
    """The model (or tool) is not run: its previous output comes back in other words
    (:func:`~pytest_agentchaos.faults.paraphrase.paraphrase`, from the English and Chinese
    corpus in ``fixtures/paraphrases``), so an exact-repeat check misses it and only a
    semantic one can see it. Structured outputs keep their shape (their prose strings are
    paraphrased); other objects come back unchanged. No parameters; it does not fire until
    the target has an output."""

    name = "paraphrased_output"
    needs_previous = True
    channels = ("model", "tool")
    summary = "the model is not run; its previous answer returns paraphrased (same meaning)"
    params = {}
    details = {"variant": integer(minimum=0)}

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any] | None:
        return {"variant": rng.randrange(1000)} if call.has_previous else None

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        from .paraphrase import paraphrase_value  # the corpus loads on first use

        variant = int(detail["variant"])
        return Effect(replay=True, transform=lambda value: paraphrase_value(value, variant))


GARBLE_MODES = ("truncate", "non_json")


@register
class GarbledOutput(FaultKind):
    """The call runs for real, but its output comes back garbled by one of ``mode``
    (``truncate`` or ``non_json``, see :func:`garble`; both by default)."""

    name = "garbled_output"
    summary = "the real output comes back truncated or as a non-JSON payload"
    params = {"mode": one_or_many(choice(GARBLE_MODES))}
    defaults = {"mode": GARBLE_MODES}
    details = {"mode": choice(GARBLE_MODES)}

    def decide(self, rng: random.Random, call: CallInfo) -> dict[str, Any]:
        modes = self.values["mode"]
        return {"mode": modes[rng.randrange(len(modes))] if len(modes) > 1 else modes[0]}

    def effect(self, detail: Mapping[str, Any], call: CallInfo) -> Effect:
        mode = str(detail["mode"])
        return Effect(transform=lambda value: garble(mode, value))


def garble(mode: str, value: Any) -> Any:
    """Corrupt an output: ``truncate`` cuts its text form in half, ``non_json`` swaps it
    for an HTML error page. Structured values come back as (broken) JSON text."""
    if mode == "non_json":
        page = "<html><head><title>502 Bad Gateway</title></head><body>upstream error</body></html>"
        return page.encode() if isinstance(value, bytes) else page
    if isinstance(value, bytes):
        return value[: max(1, len(value) // 2)] if len(value) > 1 else b"{"
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return text[: max(1, len(text) // 2)] if len(text) > 1 else "{"
