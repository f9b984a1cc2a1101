"""A pydantic ``Decimal`` field refuses text that is no number (``decimal_parsing``, "Input
should be a valid decimal"): the value it wants is a number, though its JSON schema also admits a
string (pydantic writes ``anyOf: [number, string]`` for a Decimal). The repairer reads the
error's type as a number's, so a formatted amount comes back as the number it writes, and a
value it cannot read as one is declined rather than sent back as other text."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from pydantic import BaseModel, ValidationError

from pytest_agentchaos.repair import ParamRepairer, ToolSpec


class Refund(BaseModel):
    invoice: str
    amount: Decimal


SPEC = ToolSpec.from_schema("refund", Refund.model_json_schema())


def _error(args: dict[str, object]) -> str:
    """The 422 body FastAPI sends for the model (its ``detail`` is the error's ``errors()``)."""
    with pytest.raises(ValidationError) as caught:
        Refund.model_validate(args)
    return json.dumps({"detail": caught.value.errors(include_url=False)}, default=str)


def test_the_schema_admits_text_and_the_error_asks_for_a_decimal() -> None:
    amount = SPEC.schema_at(("amount",))
    assert {"type": "string"} in [
        {k: v for k, v in branch.items() if k == "type"} for branch in amount["anyOf"]
    ]
    assert "decimal_parsing" in _error({"invoice": "INV-7", "amount": "1,130.50"})


def test_a_formatted_amount_comes_back_as_the_number_it_writes() -> None:
    args = {"invoice": "INV-7", "amount": "1,130.50"}
    result = ParamRepairer(SPEC).repair(args, _error(args), "Refund 1,130.50 on INV-7.")
    assert result.ok, result.reason
    assert result.args == {"invoice": "INV-7", "amount": 1130.5}
    assert not isinstance(result.args["amount"], str)


@pytest.mark.parametrize("amount", ["about a thousand", "1130 or so"])
def test_text_that_is_no_number_is_never_sent_back_as_other_text(amount: str) -> None:
    args = {"invoice": "INV-7", "amount": amount}
    result = ParamRepairer(SPEC).repair(args, _error(args), "Refund part of INV-7.")
    assert not result.ok or not isinstance(result.args["amount"], str), json.dumps(result.args)
