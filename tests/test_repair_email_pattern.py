"""An address field a ``pattern`` describes (``^[^@\\s]+@[^@\\s]+\\.[A-Za-z]{2,}$``, as a
helpdesk's, an invoicing API's or a CRM's schema writes it) lets ``mailto:`` through, just as
jsonschema's ``format: email`` does: the address inside is what the call means (issue 30,
the dev half's one wrong repair: a wrapped address passed as nothing to repair)."""

from __future__ import annotations

import pytest

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

_EMAIL = "^[^@\\s]+@[^@\\s]+\\.[A-Za-z]{2,}$"


def _spec(pattern: str) -> ToolSpec:
    return ToolSpec.from_schema(
        "t",
        {
            "type": "object",
            "properties": {"email": {"type": "string", "pattern": pattern}},
            "required": ["email"],
        },
    )


@pytest.mark.parametrize("pattern", [_EMAIL, "^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$"])
def test_a_mailto_address_in_an_address_pattern_is_unwrapped(pattern: str) -> None:
    result = ParamRepairer(_spec(pattern)).repair(
        {"email": "mailto:ana.ruiz@example.es"}, task="Add Ana, mailto:ana.ruiz@example.es"
    )
    assert result.ok and result.args == {"email": "ana.ruiz@example.es"}


def test_a_plain_address_is_left_as_it_is() -> None:
    args = {"email": "ana.ruiz@example.es"}
    result = ParamRepairer(_spec(_EMAIL)).repair(dict(args), task="Add ana.ruiz@example.es")
    assert result.args in (None, args)
    assert not any(step.ok and step.after != step.before for step in result.steps)


@pytest.mark.parametrize("pattern", ["^\\S+$", "^[a-z:.@]+$", "^mailto:[^@]+@.+$"])
def test_a_pattern_that_is_no_address_pattern_keeps_the_text(pattern: str) -> None:
    """A pattern that takes text without an ``@``, or that asks for the ``mailto:`` itself,
    is no address's: the text the schema lets pass stays."""
    sent = "mailto:ana@example.es"
    result = ParamRepairer(_spec(pattern)).repair({"email": sent}, task=f"Add {sent}")
    assert result.args in (None, {"email": sent})
