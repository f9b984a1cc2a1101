"""A short answer restates old values only when it says nothing else new (issue 29, item 8,
guarded): an agent that a nudge gets out of its spiral announces a new approach naming an old
value ("asking the carrier about order 8812") and must not be halted there; an agent that
announces "another approach" every turn and does the same, or restates one value in framing
words, still is."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_agentchaos.halt import HaltMonitor
from pytest_agentchaos.halt.content import changes_approach, new_words
from pytest_agentchaos.halt.text import tokens


def monitor_for(task: str) -> HaltMonitor:
    return HaltMonitor(task=task, embedder="lexical", cjk_embedder="lexical")


def halt_at(outputs: list[str], task: str) -> int | None:
    monitor = monitor_for(task)
    for output in outputs:
        if monitor.observe(output).halt:
            return monitor.decision.step
    return None


TASK_EN = "Find out where order 8812 is"
STUCK_EN = [
    "Let me check the shop's order page for order 8812.",
    "The shop's order page still says it is being processed. Let me check it again.",
    "The shop's order page still says it is being processed. Let me check it again.",
]
FINAL_EN = "FINAL: order 8812 left the Leipzig hub on Monday; delivery on Thursday."

TASK_ZH = "查一下订单 8812 现在到哪了"
STUCK_ZH = [
    "我先看一下商城的订单页面，订单号 8812。",
    "商城订单页面还是显示处理中，我再看一次。",
    "商城订单页面还是显示处理中，我再看一次。",
]
FINAL_ZH = "结论：订单 8812 已于 11 月 23 日离开莱比锡中转站，预计 11 月 26 日送达。"


@pytest.mark.parametrize(
    "change",
    [
        "Changing approach: asking the carrier about order 8812 directly.",
        "Switching strategy: querying the courier's tracking API with order 8812.",
        "Let me try a different approach - phoning customer support about order 8812.",
        "Giving up on the shop page; searching my mailbox for the dispatch email of 8812 instead.",
        "Order 8812: trying another way, the warehouse dispatch log.",
    ],
)
def test_a_nudged_agent_announcing_a_new_approach_with_an_old_value_is_not_halted(
    change: str,
) -> None:
    assert halt_at([*STUCK_EN, change, FINAL_EN], TASK_EN) is None


@pytest.mark.parametrize(
    "change",
    [
        "换个思路：直接打电话问快递公司订单 8812 的物流。",
        "改用快递公司的查询接口查订单 8812。",
        "放弃商城页面，转而翻邮箱里 8812 的发货通知邮件。",
    ],
)
def test_a_nudged_agent_announcing_a_new_approach_in_chinese_is_not_halted(change: str) -> None:
    assert halt_at([*STUCK_ZH, change, FINAL_ZH], TASK_ZH) is None


def test_a_short_answer_with_an_old_value_and_a_new_clause_restates_nothing() -> None:
    """No announcement, but a clause's worth of new words: no repetition strike for it (the
    value alone does not make it the earlier answer)."""
    monitor = monitor_for("Which port does the staging gateway listen on?")
    monitor.observe("The staging gateway listens on port 8443.")
    decision = monitor.observe(
        "Port 8443 also needs an inbound firewall exception on the bastion host."
    )
    assert not any(s.heuristic == "repetition" and s.strike for s in decision.signals)


@pytest.mark.parametrize(
    ("task", "outputs"),
    [
        (
            "How big is the sqlite file after the import?",
            [
                "data/app.sqlite is 2,097,152 bytes.",
                "That is 2048 KB.",
                "In other words, 2 MiB exactly.",
                "So: 2 MiB.",
                "To restate: 2 MiB.",
            ],
        ),
        (
            "帮我算一下报销总额：打车 86.5，午餐 90，酒店 980",
            [
                "合计：86.5 + 90 + 980 = 1156.5 元。",
                "再核对一遍：总额是 1156.5 元。",
                "总额确认为 1156.5 元，和上面一致。",
                "最终报销总额：1156.5 元。",
                "结论不变，总额 1156.5 元。",
            ],
        ),
    ],
)
def test_a_value_restated_in_framing_words_still_halts(task: str, outputs: list[str]) -> None:
    assert halt_at(outputs, task) is not None


@pytest.mark.parametrize(
    "changes",
    [
        [
            "Let me try a different approach: dump the JSON schema and look at the tags.",
            "Another angle: print the generated schema and inspect tags.",
            "Switching strategy: emit the schema and focus on the tags property.",
            "Different approach this time: look at the schema dump, specifically tags.",
            "New approach: render the schema and read the tags entry.",
            "Changing tack: output the schema and examine tags.",
        ],
        [
            "换个思路：把 schema 导出来看 tags 字段。",
            "换个角度：打印生成的 schema，检查 tags。",
            "改用另一种办法：输出 schema，专门看 tags。",
            "换个方法：渲染 schema，读 tags 那一项。",
            "换种思路：再导出 schema 看 tags。",
            "换个做法：查看 schema 里的 tags。",
        ],
    ],
)
def test_another_approach_announced_every_turn_with_nothing_new_still_halts(
    changes: list[str],
) -> None:
    """One announced change is news; announcing another with nothing new since is a
    spiral's "another way"."""
    assert halt_at(changes, "Why does the generated schema lose the tags field?") is not None


def step_of(monitor: HaltMonitor, output: str) -> Any:
    monitor.observe(output)
    return monitor.watch.history[-1]


def known_of(monitor: HaltMonitor) -> frozenset[str]:
    return monitor.watch._known()


@pytest.mark.parametrize(
    ("before", "change", "announces"),
    [
        # a return to an option tried before names nothing new
        (["Using reportlab.", "Pango fails."], "Switching to reportlab instead.", False),
        (["先用 reportlab 生成 PDF。", "pango 问题还在。"], "改用 reportlab。", False),
        # a comparison is no announcement
        (["The rounding test fails."], "It returns 2.67 instead of 2.68.", False),
        (["I keep describing the fix."], "I describe problems rather than fix them.", False),
        # a change naming something new is
        (["The order page says processing."], "Changing approach: asking the carrier.", True),
        (["No def found."], "Searching for an assignment instead.", True),
        (["商城页面显示处理中。"], "换个思路：直接问快递公司。", True),
    ],
)  # fmt: skip
def test_what_counts_as_an_announced_change(
    before: list[str], change: str, announces: bool
) -> None:
    monitor = monitor_for("")
    for output in before:
        monitor.observe(output)
    known = known_of(monitor)
    step = step_of(monitor, change)
    assert changes_approach(step, known) is announces


def test_new_words_count_content_not_framing_nor_values() -> None:
    known = tokens("data/app.sqlite is 2,097,152 bytes for the ticket")
    assert new_words(tokens("That is # KB."), known) <= 1
    # (units are masked with the values: "2 MB" reads "# B")
    assert new_words(tokens("So for the ticket: the database weighs # B."), known) == 2
    assert new_words(tokens("Changing approach: asking the carrier directly."), known) >= 3
    # a Chinese character pair counts half a word; numerals are values, not words
    assert new_words(tokens("结论不变，共计七份。"), tokens("共计")) <= 2
