"""Chat replies that resend an artefact (a query, a config line, a search) (issue 29, loops):
a literal the artefact's condition takes that really changes between replies is progress,
not a loop; the artefact resent unchanged is a loop, from the first reply that sent it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pytest_agentchaos.escape.framing import remainders
from pytest_agentchaos.escape.texts import text_shingles

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loop_alarms import alarms  # noqa: E402


def chat(turns: list[str], replies: list[str]) -> list[dict[str, Any]]:
    return [{"model": "m", "input": t, "output": r} for t, r in zip(turns, replies, strict=True)]


QUERY = (
    "SELECT region, COUNT(*) AS orders, SUM(total) AS revenue FROM orders "
    "WHERE created_at >= '{start}' AND created_at < '{end}' AND total > {floor} "
    "GROUP BY region ORDER BY revenue DESC"
)


def test_a_literal_a_condition_takes_is_a_value_of_a_long_text() -> None:
    a = text_shingles("Here:\n" + QUERY.format(start="2026-03-01", end="2026-04-01", floor=0))
    b = text_shingles("Here:\n" + QUERY.format(start="2026-03-08", end="2026-04-01", floor=0))
    assert a[0] == b[0]  # the words are the same (a long text's numbers are masked) ...
    assert a[1] != b[1]  # ... but the literal the condition takes is not
    assert "='2026-03-08'" in b[1] and "=0" in b[1]
    # an arrow is no comparison: "step 3 -> 4" says no literal; nor is an exclamation mark
    assert not text_shingles("We went through every step of the plan -> 4 and then " * 3)[1]
    steps = "Please try these steps, in this order, and tell me what you see afterwards"
    assert not text_shingles(f"{steps}!\n1! Unplug it!\n2! Wait 30 s!\n3! Plug it in!")[1]
    # a sentence's end after the literal is punctuation, whichever mark it is
    said = "Every pair among the ten people at the table shakes hands exactly once, so C(10,2)"
    a = text_shingles(f"{said} = 45. That is the total.")
    b = text_shingles(f"{said} = 45! That is the total!")
    assert a[1] == b[1] == {"=45"}


def test_a_query_whose_window_moves_on_request_is_no_loop() -> None:
    windows = [("2026-03-01", "2026-04-01"), ("2026-03-08", "2026-04-01"),
               ("2026-03-08", "2026-03-15"), ("2026-03-15", "2026-03-22")]  # fmt: skip
    framings = ["Sure:", "From the 8th:", "Only that week:", "The week after:"]
    replies = [
        f"{f}\n{QUERY.format(start=s, end=e, floor=100)}"
        for f, (s, e) in zip(framings, windows, strict=True)
    ]
    turns = ["revenue by region for March", "only from the 8th", "just that week", "next week"]
    assert not alarms(chat(turns, replies))


def test_a_query_whose_floor_moves_is_no_loop() -> None:
    replies = [
        f"Updated:\n{QUERY.format(start='2026-03-01', end='2026-04-01', floor=n)}"
        for n in (100, 250, 500, 1000)
    ]
    turns = ["revenue by region, orders above 100", "raise it", "higher", "higher again"]
    assert not alarms(chat(turns, replies))


def test_the_same_query_resent_to_each_complaint_is_a_loop() -> None:
    query = QUERY.format(start="2026-03-01", end="2026-04-01", floor=100)
    framings = ["Sorry, fixed:", "You're right, here it is:", "Corrected:", "Try this:", "Now:"]
    replies = [f"{f}\n{query}" for f in framings]
    turns = ["revenue by region for March above 100"] + ["still counts refunds"] * 4
    assert alarms(chat(turns, replies))


CRON = "`0 */6 * * 1-5`"
WRAPPED = [
    "Use this schedule: {c}",
    "Sorry about that! Here is the corrected one:\n{c}\nIt runs every six hours on weekdays.",
    "Good catch, my mistake. Try this one:\n{c}\nThat should only fire during the week now.",
    "Apologies for the confusion! This version works:\n{c}\nLet me know whether it fires now.",
]


def test_the_same_inline_code_behind_framing_on_both_sides_is_a_loop() -> None:
    replies = [w.format(c=CRON) for w in WRAPPED]
    turns = ["cron for every 6 hours on weekdays", "it also fires on Saturday 00:00"]
    turns += ["still fires on Saturday", "same expression again"]
    assert alarms(chat(turns, replies))


def test_new_inline_code_behind_framing_on_both_sides_is_no_loop() -> None:
    crons = ["`0 */6 * * *`", "`0 */6 * * 1-5`", "`0 0,6,12,18 * * 1-5`", "`0 6-18/6 * * 1-5`"]
    replies = [w.format(c=c) for w, c in zip(WRAPPED, crons, strict=True)]
    turns = ["cron for every 6 hours", "weekdays only", "list the hours", "daytime only"]
    assert not alarms(chat(turns, replies))


def test_a_list_numbered_with_another_mark_ends_no_sentence() -> None:
    dots = "Sure, to be sure we agree, the plan again:\n1. Pull sales\n2. Rank items\nShall I?"
    bangs = dots.replace(". ", "! ")  # "1!" as a re-punctuated list writes its numbers
    assert [r.replace("! ", ". ") for r in remainders(bangs)] == remainders(dots)
