"""A model's structured reply keyed by what it does, not by its commentary on itself (issue
29, loops): a planner returning the same action with new ``reasoning`` and a lower
``confidence``, a recommender handing back the same train with a new ``reason``, says the same
reply again. Another target, another train, another time is another reply."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.escape.field_names import commentary_field
from pytest_agentchaos.escape.keys import Keyer

ACTION = {"action": "restart", "target": "deployment/checkout-api", "namespace": "prod"}


def test_commentary_fields_are_named_by_their_words() -> None:
    for name in ("reasoning", "reason", "thought", "confidence", "confidence_score",
                 "thoughtProcess", "explanation"):  # fmt: skip
        assert commentary_field(name), name
    for name in ("action", "target", "query", "train", "seat", "reason_code"):
        assert not commentary_field(name), name


def test_the_same_action_with_new_reasoning_is_one_reply() -> None:
    keyer = Keyer()
    keys = {
        keyer.model("planner", output=json.dumps({**ACTION, "reasoning": why, "confidence": c}))
        for why, c in [
            ("pods unhealthy", 0.9),
            ("restart should clear it", 0.85),
            ("restarting again to be safe", 0.8),
        ]  # fmt: skip
    }
    assert len(keys) == 1


def test_another_target_is_another_reply_whatever_the_reasoning() -> None:
    keyer = Keyer()
    first = keyer.model("planner", output={**ACTION, "reasoning": "pods unhealthy"})
    other = keyer.model(
        "planner", output={**ACTION, "target": "deployment/cart", "reasoning": "pods unhealthy"}
    )
    assert first != other


def test_a_reply_of_commentary_alone_keeps_it() -> None:
    keyer = Keyer()
    assert keyer.model("m", output={"thought": "search the docs", "confidence": 1}) != (
        keyer.model("m", output={"thought": "ask the user", "confidence": 1})
    )


#: A train, a flight, a room: a name holding a number (a reply's words are compared as a set,
#: so free text would make "G" and "G G" one).
TRAIN = st.from_regex(r"[A-Z]{1,2}[0-9]{1,4}", fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(TRAIN, TRAIN, st.text(max_size=30))
def test_replies_that_differ_outside_their_commentary_never_share_a_key(
    train: str, other: str, reason: str
) -> None:
    if train == other:
        return
    keyer = Keyer()
    first = keyer.model("m", output={"train": train, "seat": "2nd", "reason": reason})
    second = keyer.model("m", output={"train": other, "seat": "2nd", "reason": reason})
    assert first != second
