"""The id a client makes up for each message or mutation it sends (Slack's and Intercom's
``client_msg_id``, Relay's ``clientMutationId``) names the call, not what it is about: the same
message posted again under a fresh one is the same call. A message's own id
(``reply_to_msg_id``) says which message a call is about and stays content."""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from loop_alarms import alarms

from pytest_agentchaos.escape.keys import Keyer

_ASK = "Hi Sam, could you share the email address on your account?"


def _ask_again(field: str, ids: list[str]) -> list[dict[str, Any]]:
    """A support agent posting the same question under a fresh client id each time, and
    reading back a conversation that already holds the answer."""
    out: list[dict[str, Any]] = []
    for n, client_id in enumerate(ids):
        out.append(
            {
                "tool": "intercom.reply",
                "args": {"conversation_id": "2154", "body": _ASK, field: client_id},
                "result": {"type": "conversation", "id": "2154", "state": "open"},
            }
        )
        out.append(
            {
                "tool": "intercom.get_conversation",
                "args": {"id": "2154"},
                "result": {"last_customer_message": "It's sam@example.com", "parts": 10 + n},
            }
        )
    return out


def test_the_same_message_posted_under_fresh_client_ids_is_a_loop() -> None:
    for field in ("client_msg_id", "clientMutationId", "clientMessageId"):
        assert alarms(_ask_again(field, [str(uuid.uuid4()) for _ in range(4)])), field


@settings(max_examples=25, deadline=None)
@given(st.lists(st.uuids().map(str), min_size=2, max_size=5, unique=True))
def test_a_client_message_id_never_parts_two_sends(ids: list[str]) -> None:
    keyer = Keyer()
    keys = {
        keyer.tool("chat.postMessage", {"channel": "C1", "text": "hi", "client_msg_id": i}).digest
        for i in ids
    }
    assert len(keys) == 1


def test_replies_to_other_messages_are_other_calls() -> None:
    keyer = Keyer()
    keys = {
        keyer.tool("reply", {"text": "thanks", "reply_to_msg_id": f"m{n}x7"}).digest
        for n in range(4)
    }
    assert len(keys) == 4
