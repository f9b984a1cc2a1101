"""must_repair as a user runs it: markers, chaos.wrap(repair=...), and the messages a failing
run prints."""

from __future__ import annotations

import pytest

TOOL = '''
import datetime as dt
from typing import Literal

import pytest

from pytest_agentchaos.repair import LLMInferer, ParamRepairer, RepairError, ToolSpec

BOOKED = []


def book_flight(
    origin: str,
    destination: str,
    departure_date: dt.date,
    passengers: int,
    cabin_class: Literal["economy", "business", "first"] = "economy",
) -> dict:
    """Book a flight (strict: a date it cannot read is an error)."""
    dt.date.fromisoformat(departure_date)
    if cabin_class not in ("economy", "business", "first"):
        raise ValueError(f"cabin_class must be one of economy, business, first")
    BOOKED.append((origin, destination, departure_date, passengers, cabin_class))
    return {"booked": True}


def lenient_book(origin, destination, departure_date, passengers, cabin_class="economy"):
    """Accepts anything: a malformed call goes through as it is."""
    return {"booked": [origin, destination, departure_date, passengers, cabin_class]}


SPEC = ToolSpec.from_function(book_flight)
TASK = "Book 2 passengers in business class from LIS to OSL on October 26, 2024."
CALL = dict(origin="LIS", destination="OSL", departure_date="2024-10-26", passengers=2,
            cabin_class="business")
'''


def _run(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    pytester.makepyfile(test_agent=TOOL + body)
    return pytester.runpytest("-p", "no:randomly", "-v")


def test_a_repairing_wrapper_passes_must_repair(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
@pytest.mark.chaos(faults=[{"kind": "malformed_params", "probability": 1.0,
                            "mutations": ["reformat_date", "invalid_enum"]}])
@pytest.mark.must_repair
def test_agent(chaos):
    tool = chaos.wrap(book_flight, repair=ParamRepairer(SPEC, task=TASK))
    for _ in range(8):
        assert tool(**CALL) == {"booked": True}
    assert set(BOOKED) == {("LIS", "OSL", "2024-10-26", 2, "business")}
""",
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["*PASSED  test_agent.py::test_agent  *faults=malformed_params:8 *verdict=must_repair=ok"]
    )


def test_a_tool_that_accepts_malformed_arguments_fails_must_repair(
    pytester: pytest.Pytester,
) -> None:
    result = _run(
        pytester,
        """
@pytest.mark.chaos(faults=[{"kind": "malformed_params", "nth": [2],
                            "mutations": ["reformat_date"]}])
@pytest.mark.must_repair
def test_agent(chaos):
    tool = chaos.wrap(lenient_book, schema=SPEC.parameters)
    for _ in range(3):
        tool(**CALL)
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*must_repair failed: 1 of 1 parameter problem(s) not repaired as asked:*",
            '*call #2 of lenient_book (step 2) with {*"departure_date": "2024-10-26"*; '
            "corrupted by reformat_date (departure_date: '2024-10-26' -> *); succeeded: the tool "
            "ran with the malformed arguments and nothing repaired them*",
        ]
    )


def test_an_agent_that_gives_up_after_a_parameter_error_fails(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
@pytest.mark.chaos(faults=[{"kind": "malformed_params", "nth": [1],
                            "mutations": ["invalid_enum"]}])
@pytest.mark.must_repair(max_attempts=2)
def test_agent(chaos):
    tool = chaos.wrap(book_flight, schema=SPEC.parameters)
    try:
        tool(**CALL)
    except ValueError:
        pass  # the agent moves on without the booking
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*call #1 of book_flight*corrupted by invalid_enum (cabin_class: 'business' -> *)"
            "; failed with ValueError: cabin_class must be one of*",
            "*and no later call of this tool*",
            "*not repaired within 2 call(s) of book_flight*",
        ]
    )


def test_an_agent_that_retries_after_a_parameter_error_passes(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
@pytest.mark.chaos(faults=[{"kind": "malformed_params", "nth": [1],
                            "mutations": ["invalid_enum"]}])
@pytest.mark.must_repair
def test_agent(chaos):
    tool = chaos.wrap(book_flight, schema=SPEC.parameters)
    for attempt in range(3):
        try:
            return tool(**CALL)
        except ValueError:
            continue
""",
    )
    result.assert_outcomes(passed=1)


def test_inventing_a_removed_value_fails_as_a_different_request(
    pytester: pytest.Pytester,
) -> None:
    result = _run(
        pytester,
        """
@pytest.mark.chaos(faults=[{"kind": "malformed_params", "nth": [1],
                            "mutations": ["missing_required"]}])
@pytest.mark.must_repair(tools="book_flight")
def test_agent(chaos):
    guesser = LLMInferer(lambda prompt: '{"origin": "MAD", "destination": "MAD", '
                         '"departure_date": "2030-01-01", "passengers": 9}')
    tool = chaos.wrap(book_flight, repair=ParamRepairer(SPEC, inferer=guesser))
    tool(**CALL)
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*must_repair failed: 1 of 1 parameter problem(s) of book_flight not repaired*",
            "*corrupted by missing_required (* removed); repaired by llm_infer_missing_param*"
            ": repaired into a different request: * in the agent's call, an unrepairable fault "
            "changed it and the repair made it *",
        ]
    )


def test_a_declined_repair_does_not_run_the_tool(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
@pytest.mark.chaos(faults=[{"kind": "malformed_params", "nth": [1],
                            "mutations": ["missing_required"]}])
@pytest.mark.must_repair
def test_agent(chaos):
    tool = chaos.wrap(book_flight, repair=ParamRepairer(SPEC))  # no task: nothing to infer
    with pytest.raises(RepairError, match="no value for the required"):
        tool(**CALL)
    assert BOOKED == []  # the tool never ran
    tool(**CALL)  # the agent asks again; this call is not corrupted
""",
    )
    result.assert_outcomes(passed=1)


def test_nothing_malformed_is_not_exercised_and_fails_only_when_required(
    pytester: pytest.Pytester,
) -> None:
    result = _run(
        pytester,
        """
@pytest.mark.chaos(faults=[{"kind": "latency", "seconds": 1}])
@pytest.mark.must_repair(require_problem=True)
def test_strict(chaos):
    chaos.wrap(book_flight)(**CALL)


@pytest.mark.must_repair
def test_default(chaos):
    chaos.wrap(book_flight)(**CALL)
""",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*must_repair failed: nothing to repair: no call had malformed parameters (1 faults*",
            "PASSED  test_agent.py::test_default *verdict=must_repair=not_exercised*",
        ]
    )


def test_the_tools_argument_limits_what_is_judged(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
@pytest.mark.chaos(faults=[{"kind": "malformed_params", "tools": ["lenient_book"],
                            "mutations": ["reformat_date"]}])
@pytest.mark.must_repair(tools=["book_flight"], require_problem=False)
def test_agent(chaos):
    chaos.wrap(lenient_book, schema=SPEC.parameters)(**CALL)
    chaos.wrap(book_flight)(**CALL)
""",
    )
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("must_repair(3)", "@pytest.mark.must_repair: takes keyword arguments only*"),
        ("must_repair(max_attempts=-1)", "@pytest.mark.must_repair: max_attempts: *"),
        ("must_repair(tools=[])", "@pytest.mark.must_repair: tools: expected a tool name*"),
        ("must_repair(tools=[3])", "@pytest.mark.must_repair: tools: *"),
        ("must_repair(require_problem='no')", "@pytest.mark.must_repair: require_problem: *"),
        ("must_repair(retries=2)", "@pytest.mark.must_repair: unknown argument 'retries'*"),
    ],
)
def test_bad_must_repair_arguments_are_reported(
    pytester: pytest.Pytester, marker: str, message: str
) -> None:
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.{marker}
        def test_one(chaos):
            pass
        """
    )
    result = pytester.runpytest()
    assert result.ret != 0
    result.stdout.fnmatch_lines([f"*{message}"])


def test_a_profiles_repair_table_reaches_a_repairer_made_for_the_run(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(
        ".toml",
        **{
            "chaos_profiles/strict": """
[[faults]]
kind = "malformed_params"
mutations = ["invalid_enum"]
nth = [1]

[repair]
threshold = 0.85
max_attempts = 1

[repair.synonyms.cabin_class]
coach = "economy"
"""
        },
    )
    result = _run(
        pytester,
        """
@pytest.mark.chaos(profile="strict")
@pytest.mark.must_repair
def test_policy(chaos):
    repairer = ParamRepairer.for_run(chaos, SPEC)
    assert (repairer.policy.threshold, repairer.policy.max_attempts) == (0.85, 1)
    assert repairer.repair({**CALL, "cabin_class": "coach"}).args["cabin_class"] == "economy"
    tool = chaos.wrap(book_flight, repair=repairer)
    assert tool(**CALL) == {"booked": True}  # corrupted, repaired before the tool ran
""",
    )
    result.assert_outcomes(passed=1)
