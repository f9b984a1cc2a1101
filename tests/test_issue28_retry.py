"""must_retry (issue 28): failed tool, HTTP and model calls retried no earlier than their
Retry-After, never after a non-retryable failure, at most max_attempts times in a row, with
growing waits and no storm; over hand-built traces, against a brute-force reference
(hypothesis), through the plugin, the Supervisor and a real SDK's own retries."""

from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.escape.backoff import JITTERS, BackoffPolicy
from pytest_agentchaos.escape.policy import EscapePolicy
from pytest_agentchaos.escape.supervisor import Supervisor
from pytest_agentchaos.trace import Trace
from pytest_agentchaos.trace.events import (
    FaultInjected,
    ModelCall,
    ModelResult,
    RunEnded,
    RunStarted,
    ToolCall,
    ToolResult,
)
from pytest_agentchaos.verdicts import Expectations, judge, must_retry
from pytest_agentchaos.verdicts.retry import never_retry_rule


class Run:
    """A trace built call by call, as the harness records one."""

    def __init__(self) -> None:
        self.trace = Trace(meta={"test": "test_agent.py::test_agent"})
        self.trace.append(RunStarted(step=0, t=0.0))
        self.step = 0
        self.counts: dict[str, int] = {}

    def call(
        self,
        t: float,
        *,
        tool: str = "search",
        args: dict[str, Any] | None = None,
        ok: bool = True,
        status: int | None = None,
        error_type: str | None = None,
        message: str | None = None,
        output: Any = None,
        fault: dict[str, Any] | None = None,
        took: float = 0.0,
        channel: str = "tool",
    ) -> Run:
        self.step += 1
        index = self.counts[tool] = self.counts.get(tool, 0) + 1
        args = {"q": "paris"} if args is None else args
        self.trace.append(
            ToolCall(step=self.step, t=t, tool=tool, index=index, args=args, channel=channel)
        )
        if fault is not None:
            self.trace.append(
                FaultInjected(step=self.step, t=t, kind=fault.pop("kind", "http_error"),
                              channel=channel, target=tool, index=index, detail=fault)
            )  # fmt: skip
        if not ok and error_type is None:
            error_type = "InjectedHTTPError" if status is not None else "TimeoutError"
        self.trace.append(
            ToolResult(step=self.step, t=t + took, tool=tool, index=index, ok=ok,
                       output=output, error_type=error_type, message=message, status=status,
                       channel=channel)
        )  # fmt: skip
        return self

    def fail(self, t: float, status: int | None = 503, **kw: Any) -> Run:
        return self.call(t, ok=False, status=status, **kw)

    def limited(self, t: float, retry_after: float = 30.0, **kw: Any) -> Run:
        fault = {"kind": "rate_limit", "status": 429, "retry_after": retry_after}
        return self.call(t, ok=False, status=429, fault=fault, **kw)

    def end(self, status: str = "completed", error: Any = None) -> Trace:
        t = max((e.t for e in self.trace), default=0.0)
        detail = {} if error is None else {"error": error}
        self.trace.append(RunEnded(step=self.step, t=t, status=status, detail=detail))
        return self.trace


# -- Retry-After -------------------------------------------------------------------------------


def test_a_retry_before_retry_after_fails_as_the_issue_says() -> None:
    trace = Run().limited(0.0).call(29.0).end()
    verdict = must_retry(trace)
    assert (verdict.ok, verdict.outcome) == (False, "fail")
    lines = verdict.explanation.splitlines()
    assert (
        lines[0] == "must_retry failed: retried search at t=29.0s, Retry-After asked for t>=30.0s"
    )
    assert lines[1] == (
        "  - search call #2 (step 2, t=29.0s) retried call #1, which failed at t=0.0s with "
        "HTTP 429 (InjectedHTTPError) and a Retry-After of 30.0s: due at t>=30.0s, it came 1.0s "
        "early"
    )
    assert verdict.facts["early"] == 1 and verdict.facts["retries"] == 1


@pytest.mark.parametrize(
    ("retry_at", "ok"),
    [(29.9, False), (29.999999, True), (30.0, True), (30.1, True), (45.0, True)],
)
def test_retry_after_is_exact_to_the_microsecond(retry_at: float, ok: bool) -> None:
    trace = Run().limited(0.0).call(retry_at).end()
    assert must_retry(trace).ok is ok


def test_the_wait_runs_from_the_failed_result_not_from_its_call() -> None:
    slow = Run().limited(0.0, took=5.0).call(31.0).end()  # failed at t=5: due at t>=35
    verdict = must_retry(slow)
    assert not verdict.ok
    assert "retried search at t=31.0s, Retry-After asked for t>=35.0s" in verdict.explanation
    summed = Run().limited(0.1, retry_after=30.0).call(0.1 + 30.0).end()  # float sums
    assert must_retry(summed).ok


def test_retry_after_read_from_the_body_and_the_message_when_no_fault_says_it() -> None:
    body = Run().fail(0.0, status=429, output={"error": "Too Many Requests", "retry_after": 12})
    assert "t>=12.0s" in must_retry(body.call(11.0).end()).explanation
    millis = Run().fail(0.0, status=429, output={"retry_after_ms": 2500})
    assert "t>=2.5s" in must_retry(millis.call(2.0).end()).explanation
    text = Run().fail(0.0, status=429, message="rate limited: please try again in 20s")
    assert "t>=20.0s" in must_retry(text.call(5.0).end()).explanation
    # the fault's exact value wins over the header's whole seconds in the message
    exact = Run().limited(0.0, retry_after=2.5, message="HTTP 429 (retry after 3s)")
    assert must_retry(exact.call(2.6).end()).ok


def test_honor_retry_after_false_does_not_judge_it() -> None:
    trace = Run().limited(0.0).call(1.0).end()
    assert must_retry(trace, honor_retry_after=False).ok


# -- non-retryable failures ----------------------------------------------------------------------


def test_a_retried_400_fails_and_408_425_429_may_be_retried() -> None:
    trace = Run().fail(0.0, status=400).call(1.0).end()
    verdict = must_retry(trace)
    assert verdict.explanation.splitlines()[:2] == [
        "must_retry failed: retried search after a non-retryable HTTP 400 (InjectedHTTPError)",
        "  - search call #2 (step 2, t=1.0s) retried call #1, which failed at t=0.0s with HTTP "
        "400 (InjectedHTTPError): status 400 (a 4xx but 408, 425, 429) is never retried "
        "(never_retry: 4xx)",
    ]
    for status in (408, 425, 429, 500, 503, None):
        assert must_retry(Run().fail(0.0, status=status).call(1.0).end()).ok, status


def test_never_retry_names_statuses_and_error_types() -> None:
    typed = Run().fail(0.0, status=None, error_type="ValueError").call(1.0).end()
    assert must_retry(typed).ok
    verdict = must_retry(typed, never_retry=["ValueError", 404])
    assert "error ValueError is never retried (never_retry: 404, ValueError)" in (
        verdict.explanation
    )
    only_503 = Run().fail(0.0, status=400).fail(1.0, status=400).end()
    assert must_retry(only_503, never_retry=503).ok  # replaces the default
    assert not must_retry(Run().fail(0.0, status=503).call(1.0).end(), never_retry=503).ok


def test_a_model_error_s_status_comes_from_its_fault_or_its_message() -> None:
    trace = Trace()
    trace.append(ModelCall(step=1, t=0.0, model="gpt", index=1, input={"messages": 1}))
    trace.append(ModelResult(step=1, t=0.0, model="gpt", index=1, ok=False,
                             error_type="BadRequestError",
                             message="Error code: 400 - bad"))  # fmt: skip
    trace.append(ModelCall(step=2, t=1.0, model="gpt", index=2, input={"messages": 1}))
    trace.append(ModelResult(step=2, t=1.0, model="gpt", index=2, ok=True, output="hi"))
    verdict = must_retry(trace)
    assert "gpt call #2 (step 2, t=1.0s) retried call #1" in verdict.explanation
    assert "HTTP 400 (BadRequestError)" in verdict.explanation


@pytest.mark.parametrize("bad", [True, 99, 600, "4x", "not a name!", [None], 2.5])
def test_a_bad_never_retry_is_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="expected an HTTP status"):
        never_retry_rule(bad)


# -- attempts ------------------------------------------------------------------------------------


def test_more_than_max_attempts_in_a_row_fails_once_per_episode() -> None:
    run = Run()
    for n in range(5):
        run.fail(2.0**n - 1)
    trace = run.call(40.0).end()
    verdict = must_retry(trace)
    assert verdict.facts["over_attempts"] == 1
    assert (
        "  - search call #4 (step 4, t=7.0s) was attempt 4 of one call (call #1 first, at "
        "t=0.0s), more than max_attempts=3"
    ) in verdict.explanation
    assert must_retry(trace, max_attempts=6).ok


def test_a_success_ends_an_episode_and_another_call_is_not_a_retry() -> None:
    run = Run().fail(0.0).call(1.0).fail(2.0).call(4.0)  # two episodes of two attempts
    run.fail(5.0, args={"q": "rome"}).call(5.0, args={"q": "lyon"})  # lyon is no retry of rome
    verdict = must_retry(run.end(), max_attempts=2)
    assert verdict.ok, verdict.explanation
    assert (verdict.facts["retries"], verdict.facts["retried"]) == (2, 2)


def test_a_retry_may_come_after_other_failures_but_not_after_the_agent_moved_on() -> None:
    between = Run().limited(0.0).fail(1.0, args={"q": "rome"}).call(2.0).end()
    assert "retried search at t=2.0s" in must_retry(between).explanation
    other_tool = Run().limited(0.0).call(1.0, tool="weather").call(2.0).end()
    assert "retried search at t=2.0s" in must_retry(other_tool).explanation
    moved_on = Run().limited(0.0).call(1.0, args={"q": "rome"}).call(2.0).end()
    verdict = must_retry(moved_on)  # search answered rome: paris again is a new request
    assert verdict.ok and verdict.facts["retries"] == 0


def test_volatile_fields_do_not_hide_a_retry() -> None:
    trace = (
        Run()
        .limited(0.0, args={"q": "paris", "request_id": "7f3a9c2e", "ts": 1718000000})
        .call(3.0, args={"q": "paris", "request_id": "b81d44f0", "ts": 1718000003})
        .end()
    )
    verdict = must_retry(trace)
    assert "retried search at t=3.0s, Retry-After asked for t>=30.0s" in verdict.explanation


# -- backoff -------------------------------------------------------------------------------------


def retries(waits: list[float], status: int = 503) -> Trace:
    """A call that fails, then is retried after each of ``waits``, the last retry succeeding."""
    run, t = Run(), 0.0
    for wait in waits:
        run.fail(t, status=status)
        t += wait
    return run.call(t).end()


@pytest.mark.parametrize(
    "waits",
    [
        [1, 2, 4, 8],
        [0.5, 1, 2, 4, 8, 8, 8],  # reaches its cap and stays there
        [0.45, 0.8, 1.9, 3.1, 6.2, 7.9, 6.1],  # the OpenAI SDK's jitter: 0.75..1 x the cap
        [3.0],  # one retry: no wait to compare
        [0.0],
    ],
)
def test_growing_waits_pass(waits: list[float]) -> None:
    verdict = must_retry(retries(waits), max_attempts=10)
    assert verdict.ok, verdict.explanation


@pytest.mark.parametrize(
    ("waits", "says"),
    [
        ([1, 1, 1], "search's backoff waits did not grow (1.0s, then 1.0s)"),
        ([0, 0, 0], "search's backoff waits did not grow (0.0s, then 0.0s)"),
        ([4, 2, 8], "search's backoff wait shrank to 2.0s"),
        ([1, 8, 4], "search's backoff wait shrank to 4.0s"),
    ],
)
def test_fixed_missing_or_shrinking_waits_fail(waits: list[float], says: str) -> None:
    verdict = must_retry(retries(waits), max_attempts=10)
    assert verdict.explanation.splitlines()[0].startswith(f"must_retry failed: {says}")
    assert must_retry(retries(waits), max_attempts=10, backoff=False).ok


def test_a_wait_a_retry_after_governed_is_not_a_backoff_wait() -> None:
    # 1s, then 30s as the 429 asked, then 2s: the backoff waits are 1 and 2
    trace = Run().fail(0.0).limited(1.0).fail(31.0).call(33.0).end()
    assert must_retry(trace, max_attempts=4).ok
    shrank = Run().fail(0.0).fail(4.0).limited(12.0).call(42.0 + 5.0).end()
    assert must_retry(shrank, max_attempts=4).ok  # 4 then 8: grew; the 30+5 is governed


def test_backoff_tolerance_says_how_much_jitter_may_take_off() -> None:
    trace = retries([1.0, 4.0, 2.5], status=503)
    assert not must_retry(trace, max_attempts=5).ok  # 2.5 < 0.75 x 4
    assert must_retry(trace, max_attempts=5, backoff_tolerance=0.5).ok


# -- storms --------------------------------------------------------------------------------------


def test_a_storm_on_a_failing_target_fails_with_max_rate() -> None:
    run = Run().fail(0.0)
    for n in range(6):  # six other searches within half a second of the failure
        run.call(0.1 * (n + 1), args={"q": f"city {n}"}, ok=False, status=503)
    trace = run.call(5.0, args={"q": "x"}).end()
    assert must_retry(trace).ok  # max_rate is not judged by default
    verdict = must_retry(trace, max_rate=5)
    assert verdict.facts["storms"] == 1
    assert (
        "  - search: 6 attempts within one virtual second while it was failing, calls #2..#7 "
        "(steps 2-7, t=0.1s..0.6s), more than max_rate=5"
    ) in verdict.explanation
    assert must_retry(trace, max_rate=6).ok


def test_a_success_ends_the_storm_window() -> None:
    run = Run().fail(0.0).call(0.1, args={"q": "a"})  # recovered
    for n in range(3):
        run.call(0.2 + 0.1 * n, args={"q": f"b{n}"})
    run.fail(0.6).call(0.7, args={"q": "c"})
    assert must_retry(run.end(), max_rate=2).ok


# -- outcomes ------------------------------------------------------------------------------------


def test_no_failed_call_is_not_exercised_unless_required() -> None:
    trace = Run().call(0.0).call(1.0).end()
    idle = must_retry(trace)
    assert (idle.ok, idle.outcome) == (True, "not_exercised")
    assert idle.explanation == (
        "must_retry not exercised: no tool, HTTP or model call failed in this run (2 calls; "
        "faults fired: none; the run ended completed at t=1.000s); require_failure=True fails "
        "such a run"
    )
    strict = must_retry(trace, require_failure=True)
    assert (strict.ok, strict.outcome) == (False, "fail")
    assert strict.explanation.startswith("must_retry failed: nothing to retry: ")


def test_a_failure_not_retried_passes_and_says_what_was_judged() -> None:
    verdict = must_retry(Run().limited(0.0).call(31.0).fail(32.0, status=404).end())
    assert verdict.outcome == "pass"
    assert verdict.explanation == (
        "must_retry ok: 2 failed attempt(s), 1 call(s) retried (1 retry); at most 3 attempts "
        "per call; Retry-After honoured (1 asked for a wait); no failure of never_retry (4xx) "
        "retried; backoff waits grew; the run ended completed at t=32.000s"
    )


def test_it_says_first_what_ended_the_run() -> None:
    error = {"type": "AssertionError", "message": "no answer", "where": "test_a.py:3 in test_a"}
    trace = Run().limited(0.0).call(1.0).end(status="error", error=error)
    lines = must_retry(trace).explanation.splitlines()
    assert lines[0].startswith("the run ended at step 2 with AssertionError: no answer")
    assert lines[1].startswith("must_retry failed: retried search at t=1.0s")


def test_many_problems_are_cut_short_and_judge_runs_it() -> None:
    run = Run()
    for n in range(20):
        run.fail(float(n), status=400, args={"q": str(n)}).call(n + 0.5, args={"q": str(n)})
    verdict = must_retry(run.end())
    assert "(and 19 more problem(s))" in verdict.explanation.splitlines()[0]
    assert "  ... and 8 more" in verdict.explanation
    [judged] = judge(run.trace, Expectations(retry={"max_attempts": 5}))
    assert judged.name == "must_retry" and not judged.ok
    assert Expectations(retry={})


def test_a_trace_read_back_from_json_is_judged_the_same() -> None:
    trace = Run().limited(0.0).fail(10.0).call(41.0).end()
    assert must_retry(Trace.from_json(trace.to_json())) == must_retry(trace)


# -- a brute-force reference -------------------------------------------------------------------


@dataclass
class Attempt:
    target: str
    q: str
    t: float
    end: float
    ok: bool
    status: int | None
    retry_after: float | None


EPS = 1e-6


def reference(
    attempts: list[Attempt],
    max_attempts: int,
    honor: bool,
    backoff: bool,
    tol: float,
    never: set[int],
    max_rate: float | None,
) -> dict[str, int]:
    """must_retry's counts, computed the long way round from the list of attempts."""
    counts = dict.fromkeys(["failures", "retries", "early", "non_retryable", "over_attempts",
                            "backoff", "storms"], 0)  # fmt: skip

    def retried(i: int) -> int | None:
        """The failed attempt ``i`` retries: the previous attempt of the same call, when it
        failed and no other call of the target succeeded in between (the agent moved on)."""
        for j in range(i - 1, -1, -1):
            if attempts[j].target != attempts[i].target:
                continue
            if attempts[j].q == attempts[i].q:
                return None if attempts[j].ok else j
            if attempts[j].ok:
                return None
        return None

    for i, a in enumerate(attempts):
        counts["failures"] += not a.ok
        j = retried(i)
        if j is None:
            continue
        counts["retries"] += 1
        chain = [j]  # this episode's attempts before a, back to its first
        while (k := retried(chain[0])) is not None:
            chain.insert(0, k)
        prev = attempts[j]
        if honor and prev.retry_after is not None and a.t < prev.end + prev.retry_after - EPS:
            counts["early"] += 1
        if prev.status in never:
            counts["non_retryable"] += 1
        if len(chain) + 1 == max_attempts + 1:
            counts["over_attempts"] += 1
        if backoff and prev.retry_after is None:
            waits = [
                attempts[chain[m + 1]].t - attempts[chain[m]].end
                for m in range(len(chain) - 1)
                if attempts[chain[m]].retry_after is None
            ]
            wait = a.t - prev.end
            if waits and (wait < (1 - tol) * max(waits) - EPS or not wait > waits[0] + EPS):
                counts["backoff"] += 1
    if max_rate is not None:
        for target in {a.target for a in attempts}:
            mine = [a for a in attempts if a.target == target]
            stormed = False
            for i, a in enumerate(mine):
                if i == 0 or mine[i - 1].ok:
                    stormed = False
                    continue
                since = i  # back to the first attempt after the failures began
                while since > 0 and not mine[since - 1].ok:
                    since -= 1
                window = [b for b in mine[since + 1 : i + 1] if b.t > a.t - 1.0 + EPS]
                if len(window) > max_rate and not stormed:
                    stormed = True
                    counts["storms"] += 1
    return counts


STATUSES = [None, 400, 404, 408, 425, 429, 500, 503]


@st.composite
def schedules(draw: Any) -> list[Attempt]:
    attempts, t = [], 0.0
    for _ in range(draw(st.integers(1, 14))):
        t += draw(st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, 3.0, 7.5, 29.9, 30.0, 31.0]))
        took = draw(st.sampled_from([0.0, 0.0, 0.1, 1.0]))
        ok = draw(st.booleans())
        status = None if ok else draw(st.sampled_from(STATUSES))
        wait = None
        if not ok and draw(st.booleans()):
            wait = draw(st.sampled_from([0.5, 1.0, 2.0, 30.0]))
        target = draw(st.sampled_from(["search", "search", "book"]))
        q = draw(st.sampled_from(["a", "a", "b"]))
        attempts.append(Attempt(target, q, t, t + took, ok, status, wait))
        t += took
    return attempts


def as_trace(attempts: list[Attempt], seed: int) -> Trace:
    rng = random.Random(seed)
    run = Run()
    for a in attempts:
        args = {"q": a.q, "request_id": f"{rng.getrandbits(64):016x}"}  # volatile: masked
        fault = None
        if a.retry_after is not None:
            fault = {"kind": "rate_limit", "retry_after": a.retry_after}
        run.call(a.t, tool=a.target, args=args, ok=a.ok, status=a.status, fault=fault,
                 took=a.end - a.t)  # fmt: skip
    return run.end()


@given(
    schedules(),
    st.integers(1, 4),
    st.booleans(),
    st.booleans(),
    st.sampled_from([0.0, 0.25, 0.5]),
    st.sampled_from([None, 1.0, 2.0, 3.5]),
    st.integers(0, 2**32),
)
@settings(max_examples=400, deadline=None)
def test_must_retry_agrees_with_a_brute_force_reference(
    attempts: list[Attempt],
    max_attempts: int,
    honor: bool,
    backoff: bool,
    tol: float,
    max_rate: float | None,
    seed: int,
) -> None:
    never = {s for s in range(400, 500) if s not in (408, 425, 429)}
    expected = reference(attempts, max_attempts, honor, backoff, tol, never, max_rate)
    verdict = must_retry(
        as_trace(attempts, seed), max_attempts=max_attempts, honor_retry_after=honor,
        backoff=backoff, backoff_tolerance=tol, max_rate=max_rate,
    )  # fmt: skip
    got = {k: verdict.facts[k] for k in expected}
    assert got == expected
    assert verdict.ok == (sum(v for k, v in expected.items() if k not in
                              ("failures", "retries")) == 0)  # fmt: skip
    assert verdict.exercised == (expected["failures"] > 0)


# -- the Supervisor passes it by construction ---------------------------------------------------


FAULTS = st.sampled_from(
    [
        {"kind": "http_error", "status": 503},
        {"kind": "http_error", "status": 500},
        {"kind": "http_error", "status": 400},
        {"kind": "http_error", "status": 404},
        {"kind": "http_error", "status": 425},
        {"kind": "http_error", "status": 499},
        {"kind": "rate_limit", "retry_after": 30},
        {"kind": "rate_limit", "retry_after": [0.5, 90]},
        {"kind": "timeout", "seconds": 5},
        {"kind": "connection_error"},
    ]
)


@given(st.lists(st.one_of(st.none(), FAULTS), min_size=1, max_size=12), st.sampled_from(JITTERS),
       st.integers(0, 2**32), st.integers(1, 6))  # fmt: skip
@settings(max_examples=60, deadline=None)
def test_the_supervisor_passes_must_retry_whatever_fails(
    schedule: list[dict[str, Any] | None], jitter: Any, seed: int, max_attempts: int
) -> None:
    from pytest_agentchaos.faults import parse_faults
    from pytest_agentchaos.inject import Chaos

    faults = [{**f, "nth": n, "tools": ["search"]} for n, f in enumerate(schedule, 1) if f]
    policy = EscapePolicy(backoff=BackoffPolicy(jitter=jitter, max_attempts=max_attempts))
    with Chaos.create(faults=parse_faults(faults, "test"), seed=seed) as chaos:
        search = chaos.wrap(lambda q: f"results for {q}", name="search")
        supervisor = Supervisor.for_run(chaos, policy=policy)
        for q in ("paris", "rome", "lyon"):
            with contextlib.suppress(Exception):
                supervisor.call("search", search, {"q": q})
    verdict = must_retry(chaos.trace, max_attempts=max_attempts)
    assert verdict.ok, verdict.explanation


def test_the_supervisor_honours_retry_after_and_never_retries_a_400(make_chaos: Any) -> None:
    chaos = make_chaos(
        {"kind": "rate_limit", "retry_after": 30, "nth": 1, "tools": ["search"]},
        {"kind": "http_error", "status": 503, "nth": [2, 3], "tools": ["search"]},
        {"kind": "http_error", "status": 400, "tools": ["book"]},
    )
    supervisor = Supervisor.for_run(chaos)
    search = chaos.wrap(lambda q: "ok", name="search")
    assert supervisor.call("search", search, {"q": "x"}) == "ok"
    with pytest.raises(Exception, match="400"):
        supervisor.call("book", chaos.wrap(lambda f: "booked", name="book"), {"f": "LH1"})
    calls = [(c.tool, round(c.t, 3)) for c in chaos.trace.of_type(ToolCall)]
    assert calls[0] == ("search", 0.0) and calls[1][1] >= 30.0
    assert [tool for tool, _ in calls].count("book") == 1
    verdict = must_retry(chaos.trace, max_attempts=5)
    assert verdict.ok, verdict.explanation
    assert verdict.facts["retries"] == 3


# -- a real SDK's own retries, through chaos.provider ---------------------------------------------

HI = [{"role": "user", "content": "hi"}]


def test_the_openai_sdk_s_own_retries_honour_retry_after(make_chaos: Any) -> None:
    import openai

    chaos = make_chaos(
        {"kind": "rate_limit", "retry_after": 30, "first": 2, "channels": ["model"]},
        virtual_sleep=True,
    )
    chaos.provider("openai", script=[{"content": "done"}])
    client = openai.OpenAI(api_key="sk-test")
    client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
    )
    verdict = must_retry(chaos.trace)
    assert verdict.ok, verdict.explanation
    assert (verdict.facts["retries"], verdict.facts["asked_wait"]) == (2, 2)
    # one attempt fewer allowed than the SDK's default three
    assert "was attempt 3 of one call" in must_retry(chaos.trace, max_attempts=2).explanation


def test_the_openai_sdk_s_backoff_after_server_errors_grows(make_chaos: Any) -> None:
    import openai

    chaos = make_chaos(
        {"kind": "http_error", "status": 503, "first": 3, "channels": ["model"]},
        virtual_sleep=True,
    )
    chaos.provider("openai", script=[{"content": "done"}])
    client = openai.OpenAI(api_key="sk-test", max_retries=3)
    client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
    )
    verdict = must_retry(chaos.trace, max_attempts=4)
    assert verdict.ok, verdict.explanation
    assert verdict.facts["retries"] == 3


# -- through the plugin ------------------------------------------------------------------------


AGENTS = """
import pytest
from pytest_agentchaos.escape import Supervisor

RATE = {"kind": "rate_limit", "retry_after": 30, "first": 1, "tools": ["search"]}


def search(q):
    return ["result"]


@pytest.mark.chaos(faults=[RATE], virtual_sleep=True)
@pytest.mark.must_retry
def test_early(chaos):
    s = chaos.wrap(search, name="search")
    try:
        s("paris")
    except Exception:
        chaos.clock.sleep(29)
    assert s("paris") == ["result"]


@pytest.mark.chaos(faults=[RATE], virtual_sleep=True)
@pytest.mark.must_retry
def test_patient(chaos):
    s = chaos.wrap(search, name="search")
    try:
        s("paris")
    except Exception:
        chaos.clock.sleep(30)
    assert s("paris") == ["result"]


@pytest.mark.chaos(faults=[{"kind": "http_error", "status": 400, "first": 1}])
@pytest.mark.must_retry
def test_stubborn(chaos):
    s = chaos.wrap(search, name="search")
    try:
        s("paris")
    except Exception:
        pass
    s("paris")


@pytest.mark.chaos(faults=[{"kind": "http_error", "status": 503, "first": 3}])
@pytest.mark.must_retry(max_attempts=5)
def test_hammer(chaos):
    s = chaos.wrap(search, name="search")
    for _ in range(5):
        try:
            return s("paris")
        except Exception:
            chaos.clock.sleep(1)


@pytest.mark.chaos(faults=[RATE, {"kind": "http_error", "status": 503, "nth": [2, 3]}])
@pytest.mark.must_retry(max_attempts=5)
def test_supervised(chaos):
    assert Supervisor.for_run(chaos).call("search", chaos.wrap(search, name="search"), {"q": "x"})


@pytest.mark.must_retry(require_failure=True)
def test_nothing_failed(chaos):
    chaos.wrap(search, name="search")("paris")
"""


def test_must_retry_through_the_plugin_and_its_reports(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agents=AGENTS)
    result = pytester.runpytest(
        "-p", "no:randomly", "-v", "--junitxml=junit.xml", "--chaos-report-dir=report"
    )
    result.assert_outcomes(passed=2, failed=4)
    result.stdout.fnmatch_lines(
        [
            "must_retry failed: retried search at t=29.0s, Retry-After asked for t>=30.0s",
            "must_retry failed: retried search after a non-retryable HTTP 400 (*)",
            "must_retry failed: search's backoff waits did not grow (1.0s, then 1.0s)*",
            "must_retry failed: nothing to retry: no tool, HTTP or model call failed*",
        ]
    )
    out = result.stdout.str()
    assert "FAILED  test_agents.py::test_early  * verdict=must_retry=FAIL" in out or (
        "verdict=must_retry=FAIL" in out
    )
    assert "PASSED  test_agents.py::test_patient " in out and "verdict=must_retry=ok" in out
    assert "retries 9 (4 against must_retry's rules)" in out
    junit = (pytester.path / "junit.xml").read_text()
    assert 'name="agentchaos.verdict.must_retry" value="FAIL: must_retry failed: retried' in junit
    assert 'name="agentchaos.retries" value="1"' in junit
    import json

    index = json.loads((pytester.path / "report" / "index.json").read_text())
    by_test = {t["node_id"].split("::")[-1]: t for t in index["tests"]}
    patient = by_test["test_patient"]
    assert patient["verdicts"][0]["name"] == "must_retry"
    assert patient["verdicts"][0]["outcome"] == "pass"
    assert patient["metrics"]["retries"] == 1 and patient["metrics"]["retry_problems"] == 0
    idle = by_test["test_nothing_failed"]["verdicts"][0]
    assert (idle["outcome"], idle["ok"]) == ("fail", False)


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("must_retry(max_attempts=0)", "@pytest.mark.must_retry: max_attempts: *"),
        ("must_retry(never_retry='4x')", "@pytest.mark.must_retry: never_retry: expected *"),
        ("must_retry(never_retry=[])", "@pytest.mark.must_retry: never_retry: expected *"),
        ("must_retry(max_rate=0.5)", "@pytest.mark.must_retry: max_rate: *"),
        ("must_retry(backoff_tolerance=2)", "@pytest.mark.must_retry: backoff_tolerance: *"),
        ("must_retry(retries=3)", "@pytest.mark.must_retry: unknown argument 'retries'; *"),
        ("must_not_duplicate(tools=[])", "@pytest.mark.must_not_duplicate: tools: expected *"),
        ("must_not_follow(strict=True)", "@pytest.mark.must_not_follow: unknown argument *"),
    ],
)
def test_a_bad_marker_argument_is_named(
    pytester: pytest.Pytester, marker: str, message: str
) -> None:
    pytester.makepyfile(
        test_bad=f"""
        import pytest

        @pytest.mark.{marker}
        def test_it(chaos):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    assert result.ret != 0
    result.stdout.fnmatch_lines([f"*{message}"])


def test_the_markers_are_documented(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.must_retry(max_attempts=3, honor_retry_after=True, backoff=True, *",
            "@pytest.mark.must_not_duplicate(tools=None, require_lost_reply=False): *",
            "@pytest.mark.must_not_follow(require_injection=False): *",
        ]
    )
