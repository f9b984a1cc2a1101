"""The breaking point of a severity parameter: bisection to the threshold with the pass rate's
interval there, clear errors for a bad target, and the option as a user runs it."""

from __future__ import annotations

import json

import pytest

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.faults import parse_faults
from pytest_agentchaos.search.breaking import Probe, bisect, parse_target, vary


def test_bisection_finds_the_least_failing_value_on_the_parameters_grid() -> None:
    seen: list[float] = []

    def probe(value: float) -> Probe:
        seen.append(value)
        return Probe(value, 10 if value <= 7.5 else 0, 10)

    point = bisect(parse_target("latency.seconds"), probe)
    assert (point.threshold, point.holds and point.holds.value) == (7.6, 7.5)
    assert point.breaks is not None and point.breaks.interval == pytest.approx((0.0, 0.2775), 1e-3)
    assert seen[:2] == [300.0, 0.0] and len(seen) == len(point.probes) <= 14
    assert point.describe() == (
        "latency.seconds: breaks at 7.6 (pass rate 0/10, 95% interval 0.00-0.28); holds at 7.5 "
        "(pass rate 10/10, 95% interval 0.72-1.00); min_pass_rate 1, 14 values probed"
    )


def test_a_pass_rate_below_min_pass_rate_breaks_and_the_ends_are_said() -> None:
    flaky = bisect(
        parse_target("rate_limit.probability"),
        lambda v: Probe(v, 10 if v < 0.3 else 6, 10),
        min_pass_rate=0.9,
    )
    assert flaky.threshold == 0.3 and flaky.breaks is not None and flaky.breaks.rate == 0.6
    never = bisect(parse_target("timeout.first"), lambda v: Probe(v, 10, 10))
    assert never.threshold is None and never.describe().startswith(
        "timeout.first: never broke up to 20"
    )
    always = bisect(parse_target("timeout.seconds"), lambda v: Probe(v, 0, 10))
    assert always.threshold == 0.0 and "breaks already at the mildest value 0" in always.describe()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("latency", "expected <fault>.<parameter> such as latency.seconds"),
        ("nap.seconds", "unknown fault kind 'nap'"),
        ("latency.status", "cannot bisect 'status'; bisectable parameters: seconds, retry_after"),
        ("timeout.retry_after", "kind 'timeout' has no parameter 'retry_after'"),
    ],
)
def test_a_bad_target_is_one_clear_error(raw: str, message: str) -> None:
    with pytest.raises(ChaosConfigError, match=message):
        parse_target(raw)


def test_vary_sets_the_parameter_on_faults_of_the_kind_or_adds_one() -> None:
    faults = parse_faults(
        [{"kind": "latency", "seconds": 1, "tools": ["search"]}, {"kind": "timeout"}], "f"
    )
    varied = vary(faults, parse_target("latency.seconds"), 9.5)
    assert [f.to_dict() for f in varied] == [
        {"kind": "latency", "seconds": [9.5, 9.5], "tools": ["search"]},
        {"kind": "timeout", "seconds": [30.0, 30.0], "tools": ["*"]},
    ]
    added = vary(faults[1:], parse_target("rate_limit.probability"), 0.25)
    assert added[-1].to_dict()["probability"] == 0.25


def test_the_option_reports_the_breaking_point_in_the_terminal_and_the_index(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        @pytest.mark.chaos(faults=[{"kind": "latency", "seconds": 1, "tools": ["search"]}])
        def test_deadline(chaos):
            tool = chaos.wrap(lambda q: q, name="search")
            for q in range(3):
                before = chaos.clock.now()
                tool(q)
                assert chaos.clock.now() - before <= 7.5, "too slow"
        """
    )
    result = pytester.runpytest("--chaos-breaking-point=latency.seconds", "--chaos-report-dir=out")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*agentchaos: breaking points*",
            "test_agent.py::test_deadline: latency.seconds: breaks at 7.6 (pass rate 0/10, 95% "
            "interval 0.00-0.28); holds at 7.5 (pass rate 10/10, 95% interval 0.72-1.00); "
            "min_pass_rate 1, 14 values probed",
        ]
    )
    (entry,) = json.loads((pytester.path / "out" / "index.json").read_text())["tests"]
    assert entry["breaking_point"]["threshold"] == 7.6
    assert entry["breaking_point"]["breaks"]["interval"] == [0.0, 0.2775]


def test_a_bad_breaking_point_option_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent="def test_agent(chaos):\n    pass\n")
    result = pytester.runpytest("--chaos-breaking-point=latency.status")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--chaos-breaking-point: cannot bisect 'status'*"])
