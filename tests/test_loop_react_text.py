"""Chat-only ReAct runs (issue 29, loops): the model writes its tool call as text
(``Action:`` / ``Action Input:``, or ``Action: tool[input]``) and a new thought each time.
What the reply does is its call: the same call behind new thoughts is a loop; the same tool on
new input is the next item, however alike the thoughts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pytest_agentchaos.escape.reply_calls import observation, react_calls

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loop_alarms import alarms  # noqa: E402


def react(thought: str, tool: str, args: dict[str, Any]) -> str:
    return f"Thought: {thought}\nAction: {tool}\nAction Input: {json.dumps(args)}"


THOUGHTS = [
    "I need the open invoices for this customer before I can answer.",
    "The observation gave me nothing usable, so I will look the invoices up.",
    "Still missing the invoices; querying the billing system for them.",
    "Listing the customer's invoices should settle the question.",
    "Let me fetch the invoices from billing to see what is outstanding.",
]


def test_react_calls_reads_both_formats_and_no_final_answer() -> None:
    text = react("look it up", "billing.list", {"customer": "C-7"})
    assert react_calls(text) == ("Thought: look it up", [("billing.list", '{"customer": "C-7"}')])
    short = 'Thought: search first.\nAction: search["Oslo tallest"]'
    assert react_calls(short) == ("Thought: search first.", [("search", '"Oslo tallest"')])
    assert react_calls("Thought: done.\nFinal Answer: 42") is None
    assert react_calls("The action plan: first we reconcile, then we report.") is None


def test_the_same_react_call_behind_new_thoughts_is_a_loop_from_the_first_reply() -> None:
    args = {"customer": "C-7", "status": "open"}
    turns = ["Question: what does customer C-7 still owe?"] + [
        f"Observation: 0 invoices (request_id={n}9e1c-4b7a-8f2d-61c0a3e5b7d9)"
        for n in ("a81f1c2d-", "b2c93e4f-", "c03d5a6b-", "d4e77c8d-")
    ]  # the same result, a new request id each time
    replies = [react(t, "billing_list_invoices", args) for t in THOUGHTS]
    actions = [{"model": "m", "input": t, "output": r} for t, r in zip(turns, replies, strict=True)]
    found = alarms(actions)
    assert found and 2 <= found[0] <= 4


def test_the_same_react_tool_on_new_input_each_time_is_no_loop() -> None:
    turns = ["Question: first month with an open invoice for C-7?"] + [
        f"Observation: {n} invoices" for n in (0, 0, 0, 0)
    ]
    months = ["2026-01", "2026-02", "2026-03", "2026-04", "2026-05"]
    thought = "Nothing yet, so I check the next month."
    replies = [react(thought, "billing_list_invoices", {"month": m}) for m in months]
    actions = [{"model": "m", "input": t, "output": r} for t, r in zip(turns, replies, strict=True)]
    assert not alarms(actions)


def test_two_react_calls_alternating_on_the_same_observations_loop_from_the_first() -> None:
    lookup = react("Resolve the account first.", "crm_lookup", {"email": "kim@example.org"})
    orders = react("Now list the account's orders.", "orders_list", {"account": "A-31"})
    question = "Question: did kim@example.org order anything in May?"
    seen = {"lookup": 'Observation: {"account": "A-31"}', "orders": 'Observation: {"orders": []}'}
    actions = [{"model": "m", "input": question, "output": lookup}]
    for _lap in range(4):
        actions.append({"model": "m", "input": seen["lookup"], "output": orders})
        actions.append({"model": "m", "input": seen["orders"], "output": lookup})
    found = alarms(actions)
    assert found and 4 <= found[0] <= 9  # the third lap of "lookup, orders" from action 0


def test_the_same_react_call_on_a_new_observation_each_time_polls() -> None:
    poll = react("Wait for the export to finish.", "export_status", {"export": "E-9"})
    actions = [{"model": "m", "input": "Question: is export E-9 ready?", "output": poll}]
    for pct in (10, 35, 60, 85):
        turn = f"Observation: running, {pct}% done"
        actions.append({"model": "m", "input": turn, "output": poll})
    assert not alarms(actions)


def _message(args: dict[str, Any], call_id: str) -> str:
    call = {"id": call_id, "type": "function",
            "function": {"name": "render_frame", "arguments": json.dumps(args)}}  # fmt: skip
    return json.dumps({"role": "assistant", "content": "", "tool_calls": [call]})


APOLOGIES = ["Nothing came back. Let me look at the link again.",
             "Still no image; re-reading the frame id.",
             "No render yet, checking the URL once more."]  # fmt: skip


def _cycle(args_per_lap: list[dict[str, Any]]) -> list[dict[str, Any]]:
    error = json.dumps({"role": "tool", "content": '{"err": "frame not found", "status": 404}'})
    actions = []
    for lap, (args, apology) in enumerate(zip(args_per_lap, APOLOGIES, strict=True)):
        restated = "The frame id in the link is 88:12; rendering it at 2x."
        actions.append({"model": "m", "input": "render the hero frame", "output": restated})
        actions.append({"model": "m", "input": "continue", "output": _message(args, f"call_{lap}")})
        actions.append({"model": "m", "input": error, "output": apology})
    return actions


def test_the_same_tool_call_message_each_lap_of_a_chat_is_a_loop_whatever_is_said_between() -> None:
    found = alarms(_cycle([{"frame": "88:12", "scale": 2}] * 3))
    assert found and 6 <= found[0] <= 8


def test_a_tool_call_message_on_a_new_frame_each_lap_is_no_loop() -> None:
    frames = [{"frame": "88:12", "scale": 2}, {"frame": "88:13", "scale": 2},
              {"frame": "90:1", "scale": 2}]  # fmt: skip
    assert not alarms(_cycle(frames))


def test_a_react_call_in_full_width_punctuation_is_the_same_call() -> None:
    ascii_ = react("查一下。", "geo_lookup", {"address": "博云路2号"})
    wide = ascii_.replace(": ", "： ").replace("Action:", "Action：")
    assert react_calls(wide) is not None
    assert react_calls(wide)[1] == react_calls(ascii_)[1]  # type: ignore[index]


def test_observations_sent_under_a_new_turn_number_are_the_same_observations() -> None:
    lookup = react("Resolve the account first.", "crm_lookup", {"email": "kim@example.org"})
    orders = react("Now list the account's orders.", "orders_list", {"account": "A-31"})
    seen = ['Observation: {"account": "A-31", "tier": 2}', 'Observation: {"orders": [], "n": 0}']
    actions = [{"model": "m", "input": "[turn 1] Question: any May orders?", "output": lookup}]
    for n in range(8):
        turn = f"[turn {n + 2}] {seen[n % 2]}"
        actions.append({"model": "m", "input": turn, "output": orders if n % 2 == 0 else lookup})
    found = alarms(actions)
    assert found and 4 <= found[0] <= 6  # at the third lap from the first observation


def test_a_reply_making_two_calls_gives_both() -> None:
    """The second ``Action:`` ends the first call's input: each call keeps its own input
    (JSON text stays JSON, its per-call ids masked as a call's arguments are)."""
    text = (
        "Thought: compare both\nAction: search\nAction Input: paris\n"
        "Action: lookup\nAction Input: london"
    )
    assert react_calls(text) == (
        "Thought: compare both",
        [("search", "paris"), ("lookup", "london")],
    )
    numbered = (
        'Action 1: search\nAction Input 1: {"q": 1}\nAction 2: lookup\nAction Input 2: {"q": 2}'
    )
    assert react_calls(numbered) == ("", [("search", '{"q": 1}'), ("lookup", '{"q": 2}')])


def message(content: str, tool: str, args: dict[str, Any], n: int) -> str:
    call = {"id": f"call_{n:04x}", "type": "function"}
    call["function"] = {"name": tool, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return json.dumps({"role": "assistant", "content": content, "tool_calls": [call]})


def test_observation_tells_a_tool_result_from_a_persons_message() -> None:
    assert observation({"role": "tool", "tool_call_id": "c1", "content": "no rows"})
    assert observation([{"role": "user", "content": "hi"}, {"role": "function", "content": "x"}])
    parts = [{"type": "tool_result", "tool_use_id": "t1", "content": "42"}]
    assert observation({"role": "user", "content": parts})
    assert observation("Observation: running, 35% done")
    assert observation('{"status": "1", "count": "0"}')
    assert not observation("That merchant id is wrong, use 898310148160568.")
    assert not observation({"role": "user", "content": "Use the other account."})
    assert not observation("[turn 3] continue")  # a runner's counter, not data


def test_the_same_tool_call_after_each_user_correction_is_a_loop() -> None:
    # a person's message is no tool result: the same call handed back to each correction
    # ignored it, whatever the reply says around the call (f5525fd keyed it with each turn)
    args = {"order_id": "UP2026111409", "mer_id": "777290058110048"}
    said = [
        "Sure, I will check the settlement status of this order for you right away.",
        "Understood, the merchant id was wrong; I will query the order again with it.",
        "I am very sorry for the trouble, let me run the settlement query once more.",
        "Got it, I am sending the query again right now, please wait a moment.",
    ]
    turns = [
        "What is the settlement status of order UP2026111409?",
        "Wrong merchant id: 898310148160568.",
        "Still the old id.",
        "Change it.",
    ]
    replies = [message(s, "unionpay_query_order", args, n) for n, s in enumerate(said)]
    actions = [{"model": "m", "input": t, "output": r} for t, r in zip(turns, replies, strict=True)]
    found = alarms(actions)
    assert found and found[0] <= 3
    # the same call on a new tool result each time is no loop (the result is what it read)
    results = [f"Observation: clearing, {n} of 3 banks confirmed" for n in (0, 1, 2)]
    polled = [actions[0]] + [dict(a, input=r) for a, r in zip(actions[1:], results, strict=True)]
    assert not alarms(polled)


def test_the_same_tool_call_on_a_new_tool_message_each_time_polls() -> None:
    poll = message("Checking the export.", "export_status", {"export": "E-9"}, 1)
    history: list[dict[str, Any]] = [{"role": "user", "content": "Is export E-9 ready?"}]
    actions = [{"model": "m", "input": list(history), "output": poll}]
    for pct in (10, 35, 60, 85):
        history += [json.loads(poll), {"role": "tool", "content": f"running, {pct}% done"}]
        actions.append({"model": "m", "input": list(history), "output": poll})
    assert not alarms(actions)
