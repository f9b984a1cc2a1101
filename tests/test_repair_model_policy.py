"""When a model proposer is consulted and when its proposal is not enough (issue 30).

A decision the rules decline because it involves a field beside the refused one ("set -3"
where the task says "remove 3": the sign may be what the mode should say) cannot be settled
by a proposal for the refused field alone: a model answering ``3`` there would turn a removal
into "set the stock to 3". Declines about the value alone still go to the model.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec, scripted_model
from pytest_agentchaos.repair.fixes import Context


def _stock(mode_field: str, modes: list[str], amount_field: str) -> ToolSpec:
    return ToolSpec.from_schema(
        "adjust",
        {
            "type": "object",
            "properties": {
                "item": {"type": "string"},
                mode_field: {"type": "string", "enum": modes},
                amount_field: {"type": "integer", "minimum": 0},
            },
            "required": ["item", mode_field, amount_field],
            "additionalProperties": False,
        },
    )


_SHAPES = st.sampled_from(
    [
        ("mode", ["set", "increment", "decrement"], "quantity", "Remove {n} units of {item}."),
        ("direction", ["absolute", "up", "down"], "steps", "Turn {item} down by {n} steps."),
        ("operation", ["replace", "add", "subtract"], "amount", "Take {n} off the {item} count."),
    ]
)


@settings(max_examples=25, deadline=None)
@given(shape=_SHAPES, n=st.integers(min_value=2, max_value=500))
def test_a_model_cannot_drop_a_sign_a_choice_beside_may_carry(shape: Any, n: int) -> None:
    mode_field, modes, amount_field, task = shape
    spec = _stock(mode_field, modes, amount_field)
    args = {"item": "SKU-1", mode_field: modes[0], amount_field: -n}
    absolute = {**args, amount_field: n}  # what a model answering for the amount alone gives
    for model in (None, scripted_model(absolute)):
        result = ParamRepairer(spec, model=model).repair(args, task=task.format(n=n, item="SKU-1"))
        assert not result.ok, result.args
    # the whole intended call (the mode changed too) is still reachable by a model
    meant = {**args, mode_field: modes[2], amount_field: n}
    result = ParamRepairer(spec, model=scripted_model(meant)).repair(
        args, task=task.format(n=n, item="SKU-1")
    )
    assert not result.ok or result.args == meant


def test_a_sign_with_no_choice_beside_is_still_a_slip() -> None:
    spec = ToolSpec.from_schema(
        "pick",
        {
            "type": "object",
            "properties": {"count": {"type": "integer", "minimum": 0, "maximum": 100}},
            "required": ["count"],
        },
    )
    result = ParamRepairer(spec).repair({"count": -5}, task="pick 5 samples")
    assert result.ok and result.args == {"count": 5}


def test_a_decline_about_the_value_alone_still_asks_the_model() -> None:
    spec = ToolSpec.from_schema(
        "route",
        {
            "type": "object",
            "properties": {"mode": {"type": "string", "enum": ["driving", "walking", "transit"]}},
            "required": ["mode"],
        },
    )
    asked: list[str] = []

    def model(problem: Any, call: Any, context: Context) -> list[Any]:
        asked.append(problem.field)
        return ["driving"]

    assert not ParamRepairer(spec).repair({"mode": "car"}, task="go by car").ok
    result = ParamRepairer(spec, model=model).repair({"mode": "car"}, task="go by car")
    assert asked == ["mode"]
    assert result.ok and result.args == {"mode": "driving"}
