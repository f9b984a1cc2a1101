"""Supervisor.call: breaker -> call -> classify -> backoff -> fallback, all on virtual time."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from pytest_agentchaos.errors import BudgetExhausted, ChaosConfigError
from pytest_agentchaos.escape import BreakerOpen
from pytest_agentchaos.escape.policy import EscapePolicy
from pytest_agentchaos.escape.supervisor import Supervisor
from pytest_agentchaos.inject import Chaos, InjectedHTTPError
from pytest_agentchaos.profiles import Budgets
from pytest_agentchaos.trace import Intervention


def actions(chaos: Chaos) -> list[str]:
    return [e.action for e in chaos.trace.of_type(Intervention)]


def test_transient_errors_are_retried_with_backoff_on_virtual_time(make_chaos: Any) -> None:
    chaos = make_chaos({"kind": "http_error", "status": 503, "first": 2})
    calls = []
    tool = chaos.wrap(lambda q: calls.append(q) or "ok", name="search")
    outcome = Supervisor.for_run(chaos).call_outcome("search", tool, {"q": "x"})
    assert (outcome.value, outcome.attempts, outcome.fallback) == ("ok", 3, False)
    assert calls == ["x"]  # the two injected 503s never reached the tool
    assert actions(chaos) == ["backoff", "backoff"]
    waits = [i.detail["delay"] for i in chaos.trace.of_type(Intervention)]
    assert chaos.clock.now() == pytest.approx(sum(waits))


def test_retry_after_is_honoured(make_chaos: Any) -> None:
    chaos = make_chaos({"kind": "rate_limit", "retry_after": 30, "first": 1})
    tool = chaos.wrap(lambda: "ok", name="search")
    assert Supervisor.for_run(chaos).call("search", tool) == "ok"
    assert chaos.clock.now() >= 30


def test_a_persistent_error_goes_straight_to_the_fallback_chain(make_chaos: Any) -> None:
    chaos = make_chaos(
        {"kind": "http_error", "status": 404, "tools": ["web_search"]},
        {"kind": "http_error", "status": 401, "tools": ["kb"]},
    )
    web = chaos.wrap(lambda q: "web", name="web_search")
    tools = {
        "kb": chaos.wrap(lambda q: "kb", name="kb"),
        "cache": chaos.wrap(lambda q: f"cached {q}", name="cache"),
    }
    supervisor = Supervisor.for_run(
        chaos, tools=tools, fallbacks={"web_search": [("kb", 0.8), ("cache", 0.6)]}
    )
    outcome = supervisor.call_outcome("web_search", web, {"q": "flights"})
    assert (outcome.value, outcome.tool, outcome.confidence, outcome.fallback) == (
        "cached flights",
        "cache",
        0.6,
        True,
    )
    assert [c.tool for c in chaos.trace.tool_calls()] == ["web_search", "kb", "cache"]
    (fallback,) = [i for i in chaos.trace.of_type(Intervention) if i.action == "fallback"]
    assert fallback.detail["from"] == "web_search" and fallback.detail["to"] == "cache"


def test_when_every_fallback_fails_the_original_error_propagates(make_chaos: Any) -> None:
    chaos = make_chaos({"kind": "http_error", "status": 404})
    supervisor = Supervisor.for_run(
        chaos, tools={"kb": chaos.wrap(lambda: 1, name="kb")}, fallbacks={"web": [("kb", 0.5)]}
    )
    with pytest.raises(InjectedHTTPError, match="web: HTTP 404"):
        supervisor.call("web", chaos.wrap(lambda: 1, name="web"))


def test_an_open_breaker_fails_fast_to_the_fallback(make_chaos: Any) -> None:
    chaos = make_chaos({"kind": "http_error", "status": 500, "tools": ["flaky"]})
    calls: list[str] = []
    flaky = chaos.wrap(lambda: calls.append("flaky"), name="flaky")
    backup = chaos.wrap(lambda: "backup", name="backup")
    supervisor = Supervisor.for_run(
        chaos, tools={"backup": backup}, fallbacks={"flaky": [("backup", 0.9)]}
    )
    assert supervisor.call("flaky", flaky) == "backup"  # attempts spent, breaker opened
    assert supervisor.breakers.for_tool("flaky").state == "open"
    before = len(chaos.trace.tool_calls(tool="flaky"))
    assert supervisor.call("flaky", flaky) == "backup"
    # Refused by the breaker: at most the one half-open probe after its reset timeout.
    assert len(chaos.trace.tool_calls(tool="flaky")) - before <= 1


def test_validation_errors_do_not_trip_the_breaker(make_chaos: Any) -> None:
    chaos = make_chaos()

    def strict(date: str) -> str:
        raise ValueError(f"date must be YYYY-MM-DD, got {date!r}")

    supervisor = Supervisor.for_run(chaos)
    for _ in range(10):
        with pytest.raises(ValueError):
            supervisor.call("book", chaos.wrap(strict, name="book"), {"date": "October 26"})
    assert supervisor.breakers.for_tool("book").state == "closed"
    assert "backoff" not in actions(chaos)  # a persistent error is not retried


def test_a_hard_budget_is_never_retried() -> None:
    with Chaos.create(budgets=Budgets(max_tool_calls=2)) as chaos:
        supervisor = Supervisor.for_run(chaos)
        tool = chaos.wrap(lambda: "ok", name="t")
        supervisor.call("t", tool)
        supervisor.call("t", tool)
        with pytest.raises(BudgetExhausted):
            supervisor.call("t", tool)
    assert "backoff" not in actions(chaos)


def test_async_calls(make_chaos: Any) -> None:
    chaos = make_chaos({"kind": "timeout", "seconds": 30, "first": 1})

    async def fetch(url: str) -> str:
        return url

    supervisor = Supervisor.for_run(chaos)
    outcome = asyncio.run(supervisor.acall_outcome("fetch", chaos.wrap(fetch), {"url": "u"}))
    assert (outcome.value, outcome.attempts) == ("u", 2)
    assert chaos.clock.now() >= 30


def test_same_seed_same_decisions() -> None:
    def run() -> str:
        with Chaos.create(seed=9) as chaos:
            tool = chaos.wrap(lambda: "ok", name="t")
            supervisor = Supervisor.for_run(chaos)
            boom = iter([TimeoutError(), ConnectionError(), None])

            def flaky() -> str:
                error = next(boom)
                if error is not None:
                    raise error
                return tool()

            supervisor.call("t", flaky)
        return chaos.trace.to_json()

    assert run() == run()


def test_profile_escape_table_configures_the_supervisor(pytester: pytest.Pytester) -> None:
    pytester.mkdir("chaos_profiles")
    (pytester.path / "chaos_profiles" / "patient.toml").write_text(
        '[escape.backoff]\nmax_attempts = 8\njitter = "none"\n'
        # else 5 transient failures escalate to persistent, and open the breaker
        "[escape.classifier]\nescalate_after = 8\n[escape.breaker]\nfailure_threshold = 10\n"
    )
    pytester.makepyfile(
        """
        import pytest
        from pytest_agentchaos.escape.supervisor import Supervisor

        @pytest.mark.chaos("patient", faults=[{"kind": "http_error", "status": 503, "first": 6}])
        def test_patient(chaos):
            outcome = Supervisor.for_run(chaos).call_outcome("t", chaos.wrap(lambda: 1, name="t"))
            assert outcome.attempts == 7
            assert chaos.clock.now() == 1 + 2 + 4 + 8 + 16 + 32
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"loop": {}},
            "[escape]: unknown key 'loop'; allowed: loops, classifier, backoff, breaker, "
            "max_breaker_wait, interventions",
        ),
        (3, "[escape]: escape must be a table/dict, got 3"),
        ({"backoff": 3}, "[escape.backoff]: backoff must be a table/dict, got 3"),
        ({"max_breaker_wait": -1}, "[escape]: max_breaker_wait: must be >= 0 seconds, got -1"),
        ({"max_breaker_wait": "1m"}, "[escape]: max_breaker_wait: expected a number of seconds"),
        ({"max_breaker_wait": math.nan}, "[escape]: max_breaker_wait: expected a number of"),
        ({"loops": {"repeats": 1}}, "[escape.loops]: repeats: must be >= 2, got 1"),
        (
            {"breaker": {"threshold": 3}},
            "[escape.breaker]: unknown key 'threshold'; allowed: failure_threshold, reset_timeout",
        ),
        ({"backoff": {"jitter": "half"}}, "[escape.backoff]: jitter: 'half' is not one of"),
        ({"classifier": {"window": 0}}, "[escape.classifier]: window: must be >= 1, got 0"),
    ],
)
def test_escape_policy_errors_name_the_key(raw: Any, message: str) -> None:
    with pytest.raises(ChaosConfigError) as exc:
        EscapePolicy.from_dict(raw)
    assert str(exc.value).startswith(message)
    assert "\n" not in str(exc.value)


def test_escape_policy_reads_every_table() -> None:
    policy = EscapePolicy.from_dict(
        {
            "loops": {"max_period": 4},
            "classifier": {"escalate_after": 3},
            "backoff": {"base": 2},
            "breaker": {"failure_threshold": 2},
            "max_breaker_wait": 5,
            "interventions": ["explore", "stop"],
        }
    )
    assert policy.loops.max_period == 4 and policy.classifier.escalate_after == 3
    assert policy.backoff.base == 2.0 and policy.breaker.failure_threshold == 2
    assert policy.max_breaker_wait == 5.0 and isinstance(policy.max_breaker_wait, float)
    assert policy.interventions == ("explore", "stop")
    assert EscapePolicy.from_dict({}) == EscapePolicy()
    # inf: wait for an open breaker's probe however long it takes, as it always could
    assert EscapePolicy.from_dict({"max_breaker_wait": math.inf}).max_breaker_wait == math.inf
    with pytest.raises(ChaosConfigError, match="^EscapePolicy: max_breaker_wait: must be >= 0"):
        EscapePolicy(max_breaker_wait=-1)


def test_breaker_open_is_reported_to_callers_without_fallbacks(make_chaos: Any) -> None:
    chaos = make_chaos({"kind": "http_error", "status": 500})
    supervisor = Supervisor.for_run(chaos, policy=EscapePolicy(max_breaker_wait=0))
    tool = chaos.wrap(lambda: 1, name="t")
    with pytest.raises(InjectedHTTPError):
        supervisor.call("t", tool)
    with pytest.raises((BreakerOpen, InjectedHTTPError)):
        supervisor.call("t", tool)
