"""The run's own progress counter as evidence of work (issue 29, halt): a step whose counter
rises is the work whatever its words (a checklist in the domain's jargon never touches the
task's words), and calls that work after the last count (closing, follow-ups) are no idling.
English and Chinese, with the spirals that must still halt."""

from __future__ import annotations

from halt_scaffold import halt_at, say

TASK_EN = "Close the books for November."
ACCOUNTS = [
    ("1000", "Cash"),
    ("1100", "Receivables"),
    ("1200", "Stock"),
    ("1500", "Prepaids"),
    ("2000", "Payables"),
    ("2100", "Accruals"),
    ("2400", "VAT"),
    ("3000", "Equity"),
]


def test_a_checklist_whose_counter_rises_is_work_whatever_its_words() -> None:
    steps = [
        say(
            "Closing the November books: the checklist has 8 accounts.",
            "sheets_read",
            True,
            progress=0,
        )
    ]
    for n, (number, name) in enumerate(ACCOUNTS, 1):
        steps.append(
            say(
                f"Reconcile {number} {name}: ledger vs subledger ok.",
                "recon",
                True,
                progress=n,
                args={"account": number},
            )
        )
    assert halt_at(steps, TASK_EN) is None
    zh = [say("十一月结账：清单共 8 个科目。", "sheets_read", True, progress=0)]
    for n, (number, _) in enumerate(ACCOUNTS, 1):
        zh.append(
            say(
                f"核对科目 {number}：总账与明细账一致。",
                "recon",
                True,
                progress=n,
                args={"account": number},
            )
        )
    assert halt_at(zh, "把十一月的账结掉。") is None


def test_steps_off_the_task_with_a_counter_standing_still_still_drift() -> None:
    steps = [
        say("Checklist loaded: 8 accounts.", "sheets_read", True, progress=0),
        say("Tie-out 1000 Cash: ledger vs subledger ok.", "recon", True, progress=1),
    ]
    for topic in [
        "the history of double-entry bookkeeping in Venice",
        "a biography of Luca Pacioli and his printers",
        "Renaissance merchant letters and their couriers",
        "how Florentine guilds settled their disputes",
        "the Medici bank's branches in Bruges and London",
        "paper making in Fabriano in the fourteenth century",
    ]:
        steps.append(
            say(f"Reading about {topic}.", "web_search", True, progress=1, args={"q": topic})
        )
    assert halt_at(steps, TASK_EN) is not None


def tickets(wrap_up: list[tuple[str, str]]) -> list[dict]:
    steps = []
    for n in range(1, 7):
        steps.append(
            say(
                f"Ticket T-{700 + n}: refund requested. Looking up the order.",
                "order_query",
                True,
                progress=n - 1,
                args={"ticket": 700 + n},
            )
        )
        steps.append(
            say(
                f"Ticket T-{700 + n} handled: refund issued.",
                "ticket_update",
                True,
                progress=n,
                args={"ticket": 700 + n},
            )
        )
    for tool, text in wrap_up:
        steps.append(say(text, tool, True, progress=6, args={"text": text}))
    return steps


def test_calls_that_work_after_the_last_count_are_no_idling() -> None:
    wrap_up = [
        ("ticket_close", f"Follow-up on T-{700 + n}: customer confirmed, closing.")
        for n in (6, 2, 4, 1, 5, 3)
    ]
    assert halt_at(tickets(wrap_up), "Work the refund queue (6 tickets).") is None


def test_the_same_check_redone_after_the_last_count_still_halts() -> None:
    wrap_up = [("ticket_stats", "Checking the queue once more: all 6 refund tickets closed.")] * 6
    assert halt_at(tickets(wrap_up), "Work the refund queue (6 tickets).") is not None
