"""A round of repair that changes nothing ends the rounds: the next would see the same
problems and ask a model proposer the same question again (a paid call, for nothing)."""

from __future__ import annotations

from typing import Any

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

SCHEMA = {
    "type": "object",
    "properties": {"start": {"type": "string"}, "end": {"type": "string"}},
    "required": ["start", "end"],
}
SENT = {"start": "2026-11-28T15:00:00Z", "end": "2026-11-28T04:00:00Z"}
ERROR = "Bad Request: The specified time range is empty. (end must be after start)"


def test_a_model_that_keeps_the_value_is_asked_once_per_problem() -> None:
    asked: list[Any] = []

    def model(problem: Any, call: Any, context: Any) -> list[Any]:
        asked.append(problem.path)
        return [call[problem.path[0]]]  # "the value is right": no change

    result = ParamRepairer(ToolSpec.from_schema("create_event", SCHEMA), model=model).repair(
        SENT, ERROR, "Block 3 to 4pm tomorrow"
    )
    assert not result.ok
    # each field once, and the whole call (path ()) once when the fields' answers leave
    # the error unanswered
    assert len(asked) == len(set(asked)) <= 3, asked


def test_a_model_that_declines_is_asked_once_per_problem() -> None:
    asked: list[Any] = []

    def model(problem: Any, call: Any, context: Any) -> list[Any]:
        asked.append(problem.path)
        return []

    result = ParamRepairer(ToolSpec.from_schema("create_event", SCHEMA), model=model).repair(
        SENT, ERROR, "Block 3 to 4pm tomorrow"
    )
    assert not result.ok
    # each field once, and the whole call (path ()) once when the fields' answers leave
    # the error unanswered
    assert len(asked) == len(set(asked)) <= 3, asked
