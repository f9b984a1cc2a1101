"""Replies turned down (issue 29, halt): in a conversation with no tool call, a reply that
apologises for the one before it says the user turned that one down. An apology loop does so
every turn, handing back the same thing in new words; a refinement apologises now and then,
between answers that work. English and Chinese, spirals and their healthy look-alikes."""

from __future__ import annotations

from pytest_agentchaos.halt import HaltMonitor


def halt_at(replies: list[str], task: str = "") -> int | None:
    monitor = HaltMonitor(task=task, embedder="lexical")
    for reply in replies:
        if monitor.observe(reply).halt:
            return monitor.decision.step
    return None


TASK_EN = "Write a shell one-liner that deletes log files older than 14 days under /srv/app/logs."
LOOP_EN = [
    "find /srv/app/logs -name '*.log' -mtime 14 -delete",
    "Sorry, that only matched files exactly 14 days old. Fixed: "
    "find /srv/app/logs -type f -name '*.log' -mtime 14 -exec rm {} +",
    "My apologies, you're right that recent files survive. Corrected with an explicit path "
    'test: find /srv/app/logs/ -name "*.log" -mtime 14 -print -delete',
    "I apologise for the trouble. Here it is written in long options so each part is clear: "
    "find /srv/app/logs -name '*.log' -mtime 14 -delete",
    "Sorry again, this one is final: find /srv/app/logs -name '*.log' -mtime 14 -delete",
]

TASK_ZH = "写一条 crontab，每周一早上 9 点执行 /opt/report/weekly.sh。"
LOOP_ZH = [
    "这样写：0 9 * * 1 /opt/report/weekly.sh",
    "抱歉，刚才没加日志，修正：0 9 * * 1 /opt/report/weekly.sh >> /var/log/weekly.log",
    "不好意思，时区的问题我理解错了，改成：0 9 * * MON /opt/report/weekly.sh",
    "再次道歉，这版把分钟和小时分开写清楚了：分钟 0，小时 9，星期 1，命令不变。",
    "非常抱歉，最终版：0 9 * * 1 /opt/report/weekly.sh，这次肯定没问题。",
]


def test_a_reply_apologising_for_the_last_one_every_turn_halts() -> None:
    # the first answer, then a reply turned down each turn: the first apology is a retry,
    # the next three in a row halt
    assert halt_at(LOOP_EN, TASK_EN) == 4
    assert halt_at(LOOP_ZH, TASK_ZH) == 4


def test_no_halt_before_the_fourth_apology_in_a_row() -> None:
    assert halt_at(LOOP_EN[:4], TASK_EN) is None
    assert halt_at(LOOP_ZH[:4], TASK_ZH) is None


def test_apologies_every_other_turn_never_add_up() -> None:
    replies = [LOOP_EN[0]]
    for i in range(1, 5):
        replies += [LOOP_EN[i], f"Here is what it printed on run {i}: {i * 37} files matched."]
    assert halt_at(replies, TASK_EN) is None


def test_a_refinement_that_apologises_now_and_then_runs_on() -> None:
    replies = [
        "find /srv/app/logs -name '*.log' -mtime +14 -delete",
        "Sorry, I forgot the rotated archives: "
        "find /srv/app/logs -name '*.log*' -mtime +14 -delete",
        "Good that the 412 old archives are gone. To run it nightly, add it to cron at 03:15.",
        "My apologies, the cron line needs the full path on your box: 15 3 * * * /usr/bin/find "
        "/srv/app/logs -name '*.log*' -mtime +14 -delete",
        "Glad it ran: last night's job removed 37 files and logged nothing unexpected.",
        "If you also want a dry run first, replace -delete with -print.",
    ]
    assert halt_at(replies, TASK_EN) is None
    replies_zh = [
        "这样写：0 9 * * 1 /opt/report/weekly.sh",
        "抱歉，漏了环境变量，脚本开头加上 source /etc/profile。",
        "你说周一 9 点 weekly.sh 已经跑了，报表共 56 页，说明这条 crontab 已经生效。",
        "不好意思，weekly.sh 的邮件没发出去是因为 crontab 的 PATH 里没有 mail，"
        "改用 /usr/bin/mail。",
        "好的，这周一 weekly.sh 的邮件已经收到，附件 3 个，都正常。",
    ]
    assert halt_at(replies_zh, TASK_ZH) is None


def test_two_apologies_then_an_answer_that_works_runs_on() -> None:
    replies = [
        "SELECT name, SUM(total) FROM orders GROUP BY customer_id;",
        "Sorry, name is not grouped: SELECT customer_id, name, SUM(total) FROM orders "
        "GROUP BY customer_id, name;",
        "My apologies, the totals should be for 2024 only: SELECT customer_id, name, SUM(total) "
        "FROM orders WHERE created_at >= '2024-01-01' AND created_at < '2025-01-01' "
        "GROUP BY customer_id, name;",
        "That matches the finance report now: 1,284 customers, top total 98,410.20.",
        "For a dashboard, add ORDER BY 3 DESC LIMIT 20.",
    ]
    task = "Total 2024 order value per customer, with the customer's name."
    assert halt_at(replies, task) is None


def test_apologies_in_a_run_of_tool_calls_are_judged_by_their_failures() -> None:
    # a retry that apologises while its error changes is no apology loop of replies
    monitor = HaltMonitor(task="Upload the report", embedder="lexical")
    decisions = []
    for i, error in enumerate(["HTTP 413", "HTTP 401", "timeout after 30 s"]):
        decisions.append(monitor.observe("Sorry, retrying the upload.", "upload", False,
                                         error=error, args={"part": i}))  # fmt: skip
    decisions.append(monitor.observe("Uploaded.", "upload", True, args={"part": 3}))
    assert not any(d.halt for d in decisions)
