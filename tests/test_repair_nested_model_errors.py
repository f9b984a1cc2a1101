"""An SDK that validates an inner object with its own model reports the inner field alone
(``1 validation error for VectorParams`` then ``distance``): the repairer reads it where the
call holds it (``vectors.distance``), as it reads the same error written with the full path, and
never guesses between two places that both hold such a field. The values an enum allows are
read from pydantic's own text ("Input should be 'Cosine', 'Euclid' or 'Dot'") where the schema
lists none."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, ValidationError

from pytest_agentchaos.repair import ParamRepairer, ToolSpec


class VectorParams(BaseModel):
    size: int
    distance: Literal["Cosine", "Euclid", "Dot"]


def _error(inner: dict[str, object]) -> str:
    with pytest.raises(ValidationError) as caught:
        VectorParams.model_validate(inner)
    return str(caught.value)


PARAMS = {
    "type": "object",
    "properties": {"size": {"type": "integer"}, "distance": {"type": "string"}},
    "required": ["size", "distance"],
}
CREATE = ToolSpec.from_schema(
    "create_collection",
    {
        "type": "object",
        "properties": {"name": {"type": "string"}, "vectors": PARAMS},
        "required": ["name", "vectors"],
    },
)
TASK = "Create a collection 'faq' for 768-dim embeddings compared by cosine distance."


def test_a_nested_models_error_is_read_where_the_call_holds_the_field() -> None:
    args = {"name": "faq", "vectors": {"size": 768, "distance": "cosine"}}
    error = _error(args["vectors"])  # type: ignore[arg-type]
    assert "for VectorParams\ndistance\n" in error
    result = ParamRepairer(CREATE).repair(args, error, TASK)
    assert result.ok, result.reason
    assert result.args == {"name": "faq", "vectors": {"size": 768, "distance": "Cosine"}}
    # the same as the error written with the whole path
    full = error.replace("\ndistance\n", "\nvectors.distance\n")
    assert ParamRepairer(CREATE).repair(args, full, TASK).args == result.args


def test_two_places_holding_the_field_are_not_guessed_between() -> None:
    spec = ToolSpec.from_schema(
        "copy_collection",
        {
            "type": "object",
            "properties": {"source": PARAMS, "target": PARAMS},
            "required": ["source", "target"],
        },
    )
    args = {
        "source": {"size": 768, "distance": "cosine"},
        "target": {"size": 768, "distance": "dot"},
    }
    error = _error(args["source"])
    result = ParamRepairer(spec).repair(args, error, "Copy it, cosine for the source.")
    # neither place is picked from the field's name alone: whatever comes back, the target's
    # value is never rewritten on the strength of an error about an unnamed place
    assert not result.ok or result.args["target"]["distance"] == "dot"
