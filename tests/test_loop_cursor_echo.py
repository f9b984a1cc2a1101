"""Pagers (issue 29, item 1): a cursor that does not advance is no news, one that advances is.

A pager whose cursor (an offset, a ``max_id``, a page token, a ``since_id``) is sent again and
echoed back with the same items is stuck, even when the server stamps each answer with a fresh
request id and time; a pager whose cursor advances and returns new items is working, whether
the cursor is a number the agent chose or an opaque token the server issued and the agent
passes back. Results as dicts, JSON text and prose."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.escape.observer import detect_loops
from pytest_agentchaos.trace.events import Event, RunEnded, ToolCall, ToolResult

CURSORS = ("offset", "max_id", "page_token", "since_id")
FORMS = ("dict", "json", "prose")
NAMES = st.lists(
    st.text("abcdefghijklmnopqrstuvwxyz", min_size=4, max_size=9), min_size=12, max_size=12,
    unique=True,
)  # fmt: skip
#: An opaque token as servers issue them: letters and digits mixed.
TOKEN = st.tuples(
    st.text("abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ", min_size=12, max_size=20),
    st.integers(10**5, 10**9),
).map(lambda t: f"{t[0][:6]}{t[1]}{t[0][6:]}")


def _result(form: str, items: list[dict[str, Any]], echo: dict[str, Any]) -> Any:
    value = {"items": items, **echo}
    if form == "json":
        return json.dumps(value)
    if form == "prose":
        shown = ", ".join(f"{i['name']} (#{i['id']})" for i in items)
        extra = "; ".join(f"{k} {v}" for k, v in echo.items())
        return f"Showing {len(items)} items: {shown}. {extra}. More available."
    return value


def _alarms(calls: list[tuple[dict[str, Any], Any]]) -> list[str]:
    events: list[Event] = []
    for i, (args, result) in enumerate(calls):
        events.append(ToolCall(i, float(i), tool="list_items", index=i, args=args))
        events.append(ToolResult(i, float(i), tool="list_items", index=i, output=result))
    events.append(RunEnded(len(calls), float(len(calls))))
    return [d.kind for d in detect_loops(events) if d.kind == "loop"]


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(FORMS),
    st.sampled_from(CURSORS),
    NAMES,
    st.lists(st.integers(100_000, 999_999), min_size=5, max_size=5, unique=True),
)
def test_a_cursor_sent_again_and_echoed_with_the_same_items_is_a_loop(
    form: str, cursor: str, names: list[str], request_ids: list[int]
) -> None:
    items = [{"id": 101, "name": names[0]}, {"id": 102, "name": names[1]}]
    calls = []
    for k, rid in enumerate(request_ids):
        echo = {cursor: 40, "request_id": f"req_{rid}", "served_at": f"2026-11-29T01:0{k}:1{k}Z"}
        calls.append(({cursor: 40, "limit": 2}, _result(form, items, echo)))
    assert _alarms(calls)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(FORMS), st.sampled_from(CURSORS), NAMES, st.integers(1, 50))
def test_a_cursor_that_advances_with_new_items_is_no_loop(
    form: str, cursor: str, names: list[str], size: int
) -> None:
    calls = []
    for k in range(6):
        items = [
            {"id": 1000 + 10 * k, "name": names[2 * k]},
            {"id": 1001 + 10 * k, "name": names[2 * k + 1]},
        ]
        at = size * k
        calls.append(({cursor: at, "limit": 2}, _result(form, items, {cursor: at + size})))
    assert not _alarms(calls)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(FORMS), NAMES, st.lists(TOKEN, min_size=6, max_size=6, unique=True))
def test_an_issued_token_passed_back_is_news_only_with_new_items(
    form: str, names: list[str], tokens: list[str]
) -> None:
    """A fresh token each page is no news by itself: the same items behind it are a loop,
    new items are a pager working."""
    for stuck in (True, False):
        calls: list[tuple[dict[str, Any], Any]] = []
        previous = None
        for k, token in enumerate(tokens):
            j = 0 if stuck else k
            items = [{"id": 7, "name": names[2 * j]}, {"id": 8, "name": names[2 * j + 1]}]
            args: dict[str, Any] = {"limit": 2} if previous is None else {"cursor": previous}
            calls.append((args, _result(form, items, {"next_cursor": token})))
            previous = token
        assert bool(_alarms(calls)) == stuck
