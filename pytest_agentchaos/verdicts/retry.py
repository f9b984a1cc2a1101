"""``must_retry``: the agent retried its failed tool, HTTP and model calls the way a server
wants them retried.

Pure over the trace. Every tool or HTTP call (``ToolCall`` -> ``ToolResult``) and model call
(``ModelCall`` -> ``ModelResult``; through ``chaos.provider`` each wire attempt of a provider
SDK's own retry loop is one) is an **attempt** of a **call**: its target (the tool, the HTTP
route, the model) and the action key of its arguments (a model call's recorded input), as the
loop detector keys them (:func:`~pytest_agentchaos.escape.keys.action_key`): request ids,
timestamps, nonces and attempt counters are masked and an idempotency key left out, so a retry
that renewed them is still the same call. After an attempt fails, the next attempt of the same
call is its **retry**, unless the target answered another call, made after the failure,
successfully first: then the agent moved on, and the same call later is a new request. Calls of
other targets, and calls that fail, may come between. A call's attempts, each a retry of the
one before, are one episode, which a success ends.

Rules, each judged retry by retry (a failed attempt F whose result came at ``t_F``, and its
retry R, called at ``t_R``; the wait is ``t_R - t_F``):

- **Retry-After** (``honor_retry_after``): when F asked for a wait ``ra``, ``t_R >= t_F + ra``,
  exactly (to a microsecond, the trace's resolution): a retry 29.9 s after a ``Retry-After:
  30`` is early. The wait F asked for is read, in order, from the fault that failed it (a
  ``FaultInjected`` of the same call with ``retry_after`` in its detail: ``rate_limit``), from
  its recorded output (a body with ``retry_after`` / ``retryAfter`` seconds or
  ``retry_after_ms``, as an injected HTTP 429's default body has), then from its error message
  ("retry after 30s", "try again in 6ms"). The trace does not record an HTTP error response's
  headers: a real server's ``Retry-After`` header is seen only where its body or message says it.
- **Non-retryable** (``never_retry``): F failed in a way retrying cannot fix, and R retried it.
  ``never_retry`` holds HTTP statuses (``404``), error type names (``"ValueError"``, compared
  with the recorded ``error_type``) and ``"4xx"``: every 4xx but 408 Request Timeout, 425 Too
  Early and 429 Too Many Requests (the default). F's status is its recorded one, else its
  fault's, else the one its message names (``Error code: 400``).
- **Attempts** (``max_attempts``): at most this many attempts in one episode.
- **Backoff** (``backoff``): the waits of an episode that no Retry-After governed grow: every
  wait after the first is longer than the first, and none is shorter than ``(1 -
  backoff_tolerance) x`` the longest wait before it (0.25: jitter may take a quarter off).
  Exponential backoff passes, with jitter that keeps each wait within the tolerance of its cap
  (the OpenAI and Anthropic SDKs draw 0.75..1 x the cap; the escape stack's ``Backoff`` never
  waits less than the wait before it), also once it reaches its cap; a fixed wait, no wait,
  and shrinking waits fail. "Full" jitter (any draw in 0..cap) cannot be told from no backoff one
  wait at a time; ``backoff=False`` turns the rule off. A single retry has no wait to compare:
  it is judged by the other rules alone.
- **Storm** (``max_rate``, None: not judged): after a failure of a target, until its next
  success, every call of that target (the same call or another) is an attempt after a failure;
  in any window of one virtual second, at most ``max_rate`` of them.

A run where no call failed is **not exercised**; with ``require_failure`` it fails.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..escape.error_tables import MESSAGE_STATUS
from ..escape.retry_after import retry_after_from_message
from ..saferepr import safe_str
from ..trace.events import FaultInjected, ModelCall, ModelResult, ToolCall, ToolResult
from ..trace.trace import Trace
from .effects import intent_of
from .verdict import Verdict, end_line, headed
from .verdict import seconds as _s

__all__ = ["CLIENT_ERRORS", "RETRYABLE_CLIENT_ERRORS", "must_retry", "never_retry_rule"]

#: ``never_retry``'s name for every 4xx but :data:`RETRYABLE_CLIENT_ERRORS`.
CLIENT_ERRORS = "4xx"
#: The 4xx statuses a retry can fix: 408 Request Timeout, 425 Too Early, 429 Too Many Requests.
RETRYABLE_CLIENT_ERRORS = frozenset({408, 425, 429})
#: How early a retry may be and still honour a Retry-After (float sums of virtual times).
_EPSILON = 1e-6
#: Most problems listed in a failure.
_SHOWN = 12
#: Output fields that hold a Retry-After in seconds (and in milliseconds).
_RA_SECONDS = ("retry_after", "retryAfter", "retry-after")
_RA_MILLIS = ("retry_after_ms", "retryAfterMs", "retry-after-ms")


@dataclass(frozen=True, slots=True)
class NeverRetry:
    """What may not be retried: statuses, error type names, and whether every 4xx but
    408 / 425 / 429 is among them."""

    statuses: frozenset[int] = frozenset()
    types: frozenset[str] = frozenset()
    client_errors: bool = False

    def reason(self, status: int | None, error_type: str | None) -> str | None:
        """Why a failure with this status and error type may not be retried (None: it may)."""
        if status is not None:
            if status in self.statuses:
                return f"status {status}"
            if self.client_errors and 400 <= status < 500 and status not in RETRYABLE_CLIENT_ERRORS:
                return f"status {status} (a 4xx but 408, 425, 429)"
        if error_type is not None and error_type in self.types:
            return f"error {error_type}"
        return None

    def __str__(self) -> str:
        parts = [CLIENT_ERRORS] if self.client_errors else []
        parts += [str(s) for s in sorted(self.statuses)] + sorted(self.types)
        return ", ".join(parts) or "nothing"


def never_retry_rule(value: Iterable[int | str] | int | str | None) -> NeverRetry:
    """``never_retry`` as a :class:`NeverRetry`: None is ``["4xx"]``; a status, an error type
    name or ``"4xx"``, or a list of them. Raises ``ValueError`` for anything else."""
    if value is None:
        return NeverRetry(client_errors=True)
    if isinstance(value, (int, str)):
        items: list[Any] = [value]
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
    else:
        raise ValueError(
            f"expected an HTTP status, an error type name or '4xx', or a list of them, got "
            f"{value!r}"
        )
    statuses: set[int] = set()
    types: set[str] = set()
    client = False
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise ValueError(f"expected an HTTP status, an error type name or '4xx', got {item!r}")
        if isinstance(item, int):
            if not 100 <= item <= 599:
                raise ValueError(f"expected an HTTP status (100..599), got {item}")
            statuses.add(item)
        elif item.lower() == CLIENT_ERRORS:
            client = True
        elif item.isdigit() and 100 <= int(item) <= 599:
            statuses.add(int(item))
        elif item.isidentifier():
            types.add(item)
        else:
            raise ValueError(f"expected an HTTP status, an error type name or '4xx', got {item!r}")
    return NeverRetry(frozenset(statuses), frozenset(types), client)


@dataclass(slots=True)
class _Failure:
    """A failed attempt: where it was called, when it failed, and how."""

    index: int
    step: int
    t: float
    end: float
    status: int | None
    error_type: str | None
    retry_after: float | None
    never: str | None

    def how(self) -> str:
        """``HTTP 429 (RateLimitError)``, ``ValueError``."""
        kind = self.error_type or "an error"
        if self.status is None:
            return safe_str(kind, 80)
        return f"HTTP {self.status}" + (f" ({safe_str(kind, 80)})" if self.error_type else "")


@dataclass(slots=True)
class _Episode:
    """One call's attempts in a row, each after a failure of the one before."""

    first: int
    first_t: float
    attempts: int = 1
    last: _Failure | None = None
    #: the waits no Retry-After governed, with the index of the call after each
    waits: list[tuple[float, int]] = field(default_factory=list)
    over: bool = False
    #: which failure of its target its latest failure was (1 for the first)
    seq: int = 0
    #: the arguments of its latest attempt, and their intent (worked out when first needed)
    args: Any = None
    key: Hashable = None
    keyed: bool = False

    def intent(self) -> Hashable:
        if not self.keyed:
            self.key, self.keyed = intent_of(self.args), True
        return self.key


@dataclass(slots=True)
class _Target:
    #: the failed calls awaiting a retry
    pending: list[_Episode] = field(default_factory=list)
    failures: int = 0
    failing: bool = False
    window: deque[tuple[float, int, int]] = field(default_factory=deque)
    stormed: bool = False


@dataclass
class _Judge:
    max_attempts: int
    honor_retry_after: bool
    backoff: bool
    tolerance: float
    never: NeverRetry
    max_rate: float | None
    problems: list[tuple[str, str]] = field(default_factory=list)
    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("calls", "failures", "retries", "retried", "asked_wait", "early", "non_retryable",
             "over_attempts", "backoff", "storms"), 0)
    )  # fmt: skip

    def read(self, trace: Trace) -> None:
        # the targets that failed: a tool by its name, an HTTP route or a model by (channel,
        # name); a call of another target, or of one whose failures are all settled, is looked
        # at only if it fails
        states: dict[Any, _Target] = {}
        # the targets with a failure not settled: failing, or awaiting a retry
        hot: set[Any] = set()
        # a call of a target that failed, waiting for its result: (the call, the failed call
        # it retries or None, how many failures its target had when it was made)
        inflight: dict[tuple[Any, int], tuple[Any, _Episode | None, int]] = {}
        faults: dict[tuple[str, str, int], dict[str, Any]] = {}
        rate = self.max_rate
        calls = failures = 0
        latest: Any = None  # the latest call: most often the one the next result is of
        events: tuple[Any, ...] = trace.events
        for event in events:
            kind = type(event)
            if kind is ToolCall or kind is ModelCall:
                calls += 1
                latest = event
                if not hot:
                    continue
                if kind is ToolCall:
                    name = event.tool if event.channel == "tool" else (event.channel, event.tool)
                else:
                    name = ("model", event.model)
                state = states.get(name)
                if state is None or not (state.pending or state.failing):
                    continue  # nothing of this target awaits a retry: only a failure matters
                if rate is not None and state.failing:
                    self._storm(state, event, rate)
                episode = None
                if state.pending:
                    args = event.args if kind is ToolCall else event.input
                    episode = _awaited(state.pending, args)
                    if episode is not None:
                        self._retry(episode, event)
                inflight[(name, event.index)] = (event, episode, state.failures)
            elif kind is ToolResult or kind is ModelResult:
                ok = event.ok
                if ok and not hot:
                    continue
                if kind is ToolResult:
                    name = event.tool if event.channel == "tool" else (event.channel, event.tool)
                else:
                    name = ("model", event.model)
                state = states.get(name)
                if ok:
                    if state is None or not (state.pending or state.failing):
                        continue
                    found = inflight.pop((name, event.index), None) if inflight else None
                    if state.failing:
                        state.failing = False
                        state.window.clear()
                        state.stormed = False
                    if state.pending and found is not None:
                        # the target answered a call made after these failures: the agent
                        # moved on, and the same call later is a new request
                        since = found[2]
                        state.pending = [e for e in state.pending if e.seq > since]
                    if not state.pending:
                        hot.discard(name)
                    continue
                found = inflight.pop((name, event.index), None) if inflight else None
                if found is not None:
                    call, episode, _ = found
                elif latest is not None and _where(latest) == _where(event):
                    call, episode = latest, None
                else:
                    call, episode = _call_of(events, event), None
                if state is None:
                    state = states[name] = _Target()
                state.failing = True
                state.failures += 1
                hot.add(name)
                failures += 1
                fault = faults.pop(_where(event), None) if faults else None
                failure = self._failure(call, event, fault)
                if episode is None:
                    episode = _Episode(event.index, failure.t)
                episode.last = failure
                episode.seq = state.failures
                episode.args = call.args if type(call) is ToolCall else getattr(call, "input", None)
                state.pending.append(episode)
            elif kind is FaultInjected:
                detail = event.detail
                if isinstance(detail, dict) and ("retry_after" in detail or "status" in detail):
                    faults[_where(event)] = detail
        self.counts["calls"] = calls
        self.counts["failures"] = failures

    def _failure(self, call: Any, result: Any, fault: dict[str, Any] | None) -> _Failure:
        """What a failed result says: its status, error type and the wait it asked for."""
        status = getattr(result, "status", None) if type(result) is ToolResult else None
        if not _is_status(status):
            status = fault.get("status") if fault is not None else None
        message = result.message if isinstance(result.message, str) else None
        if not _is_status(status):
            status = _message_status(message)
        error_type = result.error_type if isinstance(result.error_type, str) else None
        wait = _retry_after(fault, result.output, message)
        return _Failure(
            result.index, call.step, call.t, result.t, status, error_type, wait,
            self.never.reason(status, error_type),
        )  # fmt: skip

    def _retry(self, episode: _Episode, call: Any) -> None:
        target = _target(call)
        counts = self.counts
        counts["retries"] += 1
        if episode.attempts == 1:
            counts["retried"] += 1
        episode.attempts += 1
        failed = episode.last
        assert failed is not None
        wait = call.t - failed.end
        if failed.retry_after is not None:
            counts["asked_wait"] += 1
            due = failed.end + failed.retry_after
            if self.honor_retry_after and call.t < due - _EPSILON:
                counts["early"] += 1
                self.problems.append((
                    f"retried {target} at t={_s(call.t)}s, Retry-After asked for t>={_s(due)}s",
                    f"{target} {_at(call)} retried call #{failed.index}, which failed at "
                    f"t={_s(failed.end)}s with {failed.how()} and a Retry-After of "
                    f"{_s(failed.retry_after)}s: due at t>={_s(due)}s, it came "
                    f"{_s(due - call.t)}s early",
                ))  # fmt: skip
        if failed.never is not None:
            counts["non_retryable"] += 1
            self.problems.append((
                f"retried {target} after a non-retryable {failed.how()}",
                f"{target} {_at(call)} retried call #{failed.index}, which failed at "
                f"t={_s(failed.end)}s with {failed.how()}: {failed.never} is never retried "
                f"(never_retry: {self.never})",
            ))  # fmt: skip
        if episode.attempts > self.max_attempts and not episode.over:
            episode.over = True
            counts["over_attempts"] += 1
            self.problems.append((
                f"attempted one {target} call {episode.attempts} times",
                f"{target} {_at(call)} was attempt {episode.attempts} of one call (call "
                f"#{episode.first} first, at t={_s(episode.first_t)}s), more than "
                f"max_attempts={self.max_attempts}",
            ))  # fmt: skip
        if failed.retry_after is None:
            self._backoff(episode, target, call, failed, wait)

    def _backoff(
        self, episode: _Episode, target: str, call: Any, failed: _Failure, wait: float
    ) -> None:
        waits = episode.waits
        if self.backoff and waits:
            tol = self.tolerance
            first, before = waits[0]
            longest, after = max(waits)
            problem = None
            if wait < (1 - tol) * longest - _EPSILON:
                problem = (
                    f"{target}'s backoff wait shrank to {_s(wait)}s",
                    f"shorter than (1 - {tol:g}) x the longest wait before it ({_s(longest)}s "
                    f"before call #{after})",
                )
            elif not wait > first + _EPSILON:
                problem = (
                    f"{target}'s backoff waits did not grow ({_s(first)}s, then {_s(wait)}s)",
                    f"not longer than the first wait ({_s(first)}s before call #{before})",
                )
            if problem is not None:
                self.counts["backoff"] += 1
                self.problems.append((
                    problem[0],
                    f"{target} {_at(call)} came {_s(wait)}s after call #{failed.index} "
                    f"failed ({failed.how()}): {problem[1]}; backoff waits must grow",
                ))  # fmt: skip
        waits.append((wait, call.index))

    def _storm(self, state: _Target, call: Any, rate: float) -> None:
        target = _target(call)
        window = state.window
        t = call.t
        while window and window[0][0] <= t - 1.0 + _EPSILON:
            window.popleft()
        window.append((t, call.index, call.step))
        if len(window) > rate and not state.stormed:
            state.stormed = True
            self.counts["storms"] += 1
            t0, first, step0 = window[0]
            self.problems.append((
                f"{len(window)} attempts of {target} within one virtual second after it failed",
                f"{target}: {len(window)} attempts within one virtual second while it was "
                f"failing, calls #{first}..#{call.index} (steps {step0}-{call.step}, "
                f"t={_s(t0)}s..{_s(t)}s), more than max_rate={rate:g}",
            ))  # fmt: skip


def must_retry(
    trace: Trace,
    *,
    max_attempts: int = 3,
    honor_retry_after: bool = True,
    backoff: bool = True,
    backoff_tolerance: float = 0.25,
    never_retry: Iterable[int | str] | int | str | None = None,
    max_rate: float | None = None,
    require_failure: bool = False,
) -> Verdict:
    """Every failed call was retried as a server wants (see the module doc for the rules):
    not before its Retry-After, never after a non-retryable failure, at most
    ``max_attempts`` attempts in a row, with growing backoff waits, and (``max_rate``) no
    storm of attempts on a failing target. A run where no call failed is **not exercised**;
    with ``require_failure`` it fails."""
    never = never_retry if isinstance(never_retry, NeverRetry) else never_retry_rule(never_retry)
    judge = _Judge(max_attempts, honor_retry_after, backoff, backoff_tolerance, never, max_rate)
    judge.read(trace)
    counts = judge.counts
    facts: dict[str, Any] = dict(counts)
    facts["problems"] = len(judge.problems)
    end = end_line(trace)
    if not counts["failures"]:
        fired = ", ".join(f"{k}:{n}" for k, n in trace.fault_counts().items()) or "none"
        nothing = (
            f"no tool, HTTP or model call failed in this run ({counts['calls']} calls; faults "
            f"fired: {fired}; {end})"
        )
        if require_failure:
            return Verdict(
                "must_retry",
                False,
                headed(
                    f"must_retry failed: nothing to retry: {nothing}. Inject rate_limit, "
                    "http_error or timeout faults, or pass require_failure=False.",
                    trace,
                ),
                facts,
                exercised=False,
            )
        return Verdict(
            "must_retry",
            True,
            headed(
                f"must_retry not exercised: {nothing}; require_failure=True fails such a run",
                trace,
            ),
            facts,
            exercised=False,
        )
    problems = judge.problems
    if not problems:
        judged = [f"at most {max_attempts} attempts per call"]
        if honor_retry_after:
            judged.append(f"Retry-After honoured ({counts['asked_wait']} asked for a wait)")
        judged.append(f"no failure of never_retry ({never}) retried")
        if backoff:
            judged.append("backoff waits grew")
        if max_rate is not None:
            judged.append(f"at most {max_rate:g} attempts per virtual second on a failing target")
        return Verdict(
            "must_retry",
            True,
            headed(
                f"must_retry ok: {counts['failures']} failed attempt(s), {counts['retried']} "
                f"call(s) retried ({_retries(counts['retries'])}); {'; '.join(judged)}; {end}",
                trace,
            ),
            facts,
        )
    more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
    lines = [f"must_retry failed: {problems[0][0]}{more}"]
    lines += [f"  - {long}" for _, long in problems[:_SHOWN]]
    if len(problems) > _SHOWN:
        lines.append(f"  ... and {len(problems) - _SHOWN} more")
    lines.append(
        f"  {counts['failures']} failed attempt(s), {counts['retried']} call(s) retried "
        f"({_retries(counts['retries'])}); {end}"
    )
    return Verdict("must_retry", False, headed("\n".join(lines), trace), facts)


def _call_of(events: tuple[Any, ...], result: Any) -> Any:
    """The call ``result`` is the result of (looked for backwards from it); the result itself
    when the trace lost its call."""
    position = next(n for n, event in enumerate(events) if event is result)
    where = _where(result)
    kind = ToolCall if type(result) is ToolResult else ModelCall
    for n in range(position - 1, -1, -1):
        event = events[n]
        if type(event) is kind and event.index == where[2] and _where(event) == where:
            return event
    return result


def _awaited(pending: list[_Episode], args: Any) -> _Episode | None:
    """The failed call among ``pending`` that a call with ``args`` retries (taken out of
    ``pending``), or None. The same arguments are the same call; others are compared by
    intent, worked out only then."""
    for n, episode in enumerate(pending):
        if episode.args == args:
            return pending.pop(n)
    key = intent_of(args)
    for n, episode in enumerate(pending):
        if episode.intent() == key:
            return pending.pop(n)
    return None


def _at(call: Any) -> str:
    return f"call #{call.index} (step {call.step}, t={_s(call.t)}s)"


def _target(event: Any) -> str:
    """The name of what a call or result is of: its tool, HTTP route or model."""
    return str(event.model) if type(event) in (ModelCall, ModelResult) else str(event.tool)


def _where(event: Any) -> tuple[str, str, int]:
    """A call's, result's or fault's channel, target and index: what pairs them."""
    kind = type(event)
    if kind is ModelCall or kind is ModelResult:
        return ("model", event.model, event.index)
    if kind is FaultInjected:
        return (event.channel, event.target, event.index)
    return (event.channel, event.tool, event.index)


def _retries(n: int) -> str:
    return f"{n} retry" if n == 1 else f"{n} retries"


def _is_status(value: Any) -> bool:
    return type(value) is int and 100 <= value <= 599


def _message_status(message: str | None) -> int | None:
    if not message:
        return None
    match = MESSAGE_STATUS.search(message[:2048])
    if match is None:
        return None
    return int(next(g for g in match.groups() if g))


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _retry_after(fault: dict[str, Any] | None, output: Any, message: str | None) -> float | None:
    """The wait a failure asked for: its fault's, its output's, or its message's."""
    if fault is not None:
        wait = _seconds(fault.get("retry_after"))
        if wait is not None:
            return wait
    if isinstance(output, dict):
        for name in _RA_SECONDS:
            wait = _seconds(output.get(name))
            if wait is not None:
                return wait
        for name in _RA_MILLIS:
            wait = _seconds(output.get(name))
            if wait is not None:
                return wait / 1000
    if message:
        return retry_after_from_message(message[:2048])
    return None
