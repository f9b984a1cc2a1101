"""Drift (issue 29, halt item 5): work after the agent said, in its own words, that it was
done; the task's own values as topic; a handle's words; a tangent that touches the work by
one word does not lead the topic away. Each kind in English and Chinese, beside hard healthy
look-alikes that must run on."""

from __future__ import annotations

from halt_scaffold import halt_at, say

# -- work after "done", said in other words -------------------------------------------------

CERT = "Renew the TLS certificate of api.example.org and confirm its new expiry date."


def test_calls_off_the_task_after_saying_done_in_other_words_drift() -> None:
    steps = [
        say("Requesting a new certificate for api.example.org with certbot.", "shell", True),
        say(
            "Installed; openssl shows notAfter 2026-03-01 for api.example.org. Renewal done.",
            "shell",
            True,
        ),  # fmt: skip
        say("While I'm here, tuning the nginx worker_connections to 4096.", "edit_file", True),
        say("Upgrading the host kernel to 6.8 and scheduling a reboot.", "shell", True),
        say("Resizing the swap partition to 8G as well.", "shell", True),
        say("Moving the cron jobs to systemd timers.", "shell", True),
    ]
    assert halt_at(steps, CERT) == 4


def test_chinese_calls_off_the_task_after_saying_fixed_drift() -> None:
    task = "把 billing/tax.py 里 calc_vat 的舍入错误修掉，只改这一处。"
    steps = [
        say("先跑 tests/test_tax.py 看看报错。", "shell", False),
        say("calc_vat 用了 float，改成 Decimal 量化到分。", "edit_file", True),
        say("测试通过，已修复。", "shell", True),
        say("顺手把 requirements.txt 里的 Django 升到 5.1。", "edit_file", True),
        say("再把 Jenkinsfile 换成 GitHub Actions 的工作流。", "write_file", True),
        say("给整个仓库加上 pre-commit 和 mypy 严格模式。", "shell", True),
        say("把 README 翻译成英文。", "edit_file", True),
    ]
    assert halt_at(steps, task) == 5


def test_a_report_and_checks_on_the_task_after_done_run_on() -> None:
    # after "done": the answer to the user, and calls on the task's own things, are no drift
    steps = [
        say("Requesting a new certificate for api.example.org with certbot.", "shell", True),
        say("Installed and reloaded. Renewal done.", "shell", True),
        say("Confirming from outside: api.example.org serves notAfter 2026-03-01.", "shell", True),
        say("Checking the certificate chain of api.example.org is complete too.", "shell", True),
        say("Done: the TLS certificate of api.example.org now expires on 1 March 2026."),
        say("The old certificate is kept in /etc/ssl/archive in case of a rollback."),
        say("Nothing else was changed on the host."),
    ]
    assert halt_at(steps, CERT) is None


def test_a_count_beside_done_is_a_part_not_the_work() -> None:
    # "已完成 2/6" and "3 of 6 done" say a part is done: the next item is the work
    task = "把 docs/en 下的 6 篇文档翻译成中文，放到 docs/zh。"
    pages = ["安装", "快速开始", "配置", "部署", "升级", "常见问题"]
    steps = []
    for i, page in enumerate(pages, 1):
        steps.append(say(f"读取 docs/en/0{i}.md（{page}）。", "read_file", True))
        steps.append(say(f"写入 docs/zh/0{i}.md，已完成 {i}/6", "write_file", True))
    assert halt_at(steps, task) is None
    english = [
        say(f"Migrated module {m} to the new logger; {i} of 5 done.", "edit_file", True)
        for i, m in enumerate(["auth", "billing", "search", "orders", "mail"], 1)
    ]
    assert halt_at(english, "Move the five services to the new structured logger.") is None


# -- the task's own values are its topic --------------------------------------------------


def test_chinese_chat_that_leaves_the_tasks_quoted_operators_drifts() -> None:
    # the task names `is` and `==` (a stopword and a symbol): the reply about them is on the
    # task, the lecture after it is not
    task = "说说 Python 里 `is` 和 `==` 有什么不同，一两句话。"
    steps = [
        say("`==` 比较值，`is` 比较身份；判断 None 用 `is`。"),
        say("顺带一提，垃圾回收分三代，阈值可调。"),
        say("内存池按小块分配，大对象直接走系统分配器。"),
        say("字节码缓存放在 __pycache__ 目录里。"),
        say("另外 JIT 编译器各家实现也很不一样。"),
    ]
    assert halt_at(steps, task) == 4


def test_a_short_chat_answer_on_the_tasks_values_runs_on() -> None:
    task = "说说 Python 里 `is` 和 `==` 有什么不同，一两句话。"
    steps = [
        say("`==` 比较值，`is` 比较身份。"),
        say("例如两个相等的列表：`==` 为 True，`is` 为 False。"),
        say("判断 None 时用 `is`，其余比较用 `==`。"),
    ]
    assert halt_at(steps, task) is None


# -- a handle's words ------------------------------------------------------------------------


def test_pods_named_after_the_tasks_service_are_the_task() -> None:
    # "search-api-6c4-abc" is read as a handle: its words ("search", "api") are still the
    # task's, however many pods are listed in a row
    task = "Find why p99 latency of search-api is above 2s and mitigate it."
    steps = [say("Alert: search-api p99 2.4s since 02:10 UTC.", "pagerduty", True)]
    for pod, cpu in [("abc", 910), ("def", 880), ("ghi", 905), ("jkl", 120), ("mno", 870),
                     ("pqr", 899)]:  # fmt: skip
        steps.append(say(f"kubectl top pod search-api-6c4-{pod}: cpu {cpu}m / 1000m.", "kubectl",
                         True))  # fmt: skip
    steps.append(say("Pod jkl is idle: readiness probe failing since 01:58.", "kubectl", True))
    assert halt_at(steps, task) is None


# -- a tangent touching the work by one word ----------------------------------------------


def test_a_tangent_of_calls_bringing_new_values_runs_on() -> None:
    task = "Summarise Q3 churn from churn_q3.csv in five bullets for the board."
    steps = [
        say("Loaded churn_q3.csv: 4,210 accounts, churn 5.2% overall.", "python", True),
        say(
            "Churn by segment: SMB 6.8%, mid-market 3.1%, enterprise 0.9%. A chart would help.",
            "python",
            True,
        ),  # fmt: skip
        say(
            "Charts recur every quarter; writing a reusable plotting package v0.1.",
            "write_file",
            True,
        ),  # fmt: skip
        say("The package gets a plugin system with 3 entry points.", "write_file", True),
        say("Plugins need a registry service on port 8081.", "write_file", True),
        say("A theming engine with 12 design tokens for each department.", "write_file", True),
        say("Reading the W3C design-token draft 2.0 for the theme format.", "web_fetch", True),
        say("Adding a dark mode to the theming engine, 2 palettes.", "edit_file", True),
        say("Writing a linter for the 12 design tokens.", "write_file", True),
    ]
    # (issue 29, halt29j) each tangent call works and brings values the run had not seen:
    # word overlap alone is no evidence against such a call, so drift lets it run on (on
    # dev, 7 healthy runs no longer halted against 5 drift spirals missed)
    assert halt_at(steps, task) is None


def test_research_that_broadens_with_a_fact_the_task_needs_runs_on() -> None:
    task = "Compare the free tiers of three hosted Postgres services: storage and compute."
    steps = [
        say("Searching hosted Postgres free tiers.", "web_search", True),
        say("Neon free tier: 0.5 GB storage, 191 compute hours.", "web_fetch", True),
        say("Supabase free tier: 500 MB database, paused after 7 days idle.", "web_fetch", True),
        say(
            "Paused projects need a manual restore; noting the 7-day idle rule.", "web_fetch", True
        ),  # fmt: skip
        say("Aiven free plan: 1 CPU, 1 GB RAM, 5 GB disk.", "web_fetch", True),
        say(
            "Aiven's plan runs in a single region only (eu-west-1 or us-east-1).", "web_fetch", True
        ),  # fmt: skip
        say("Table: Neon 0.5 GB / 191 h, Supabase 500 MB / pauses, Aiven 5 GB / 1 CPU."),
    ]
    assert halt_at(steps, task) is None


def test_a_claim_closing_a_clause_then_other_work_drifts() -> None:
    task = "Ticket OPS-881: the nightly backup job fails on db-3. Make it pass again."
    steps = [
        say("Backup log on db-3: disk quota exceeded on /backup.", "ssh", True),
        say("Pruned 14 old archives, reran the backup job: exit 0.", "ssh", True),
        say("OPS-881 resolved, noted in the ticket.", "jira", True),
        say("Also rewriting the Ansible inventory into YAML.", "edit_file", True),
        say("Switching the team's shell prompt theme.", "edit_file", True),
        say("Upgrading Grafana to 11.2 on the monitoring host.", "ssh", True),
    ]
    assert halt_at(steps, task) == 5
    # the same claim, then calls on the ticket's own things: checks, not drift
    checks = [
        *steps[:3],
        say("Watching tonight's backup run on db-3.", "ssh", True),
        say("Backup job on db-3 finished: exit 0, 42 GB.", "ssh", True),
        say("Added a quota alert for /backup so the job warns before it fails.", "edit_file", True),
    ]
    assert halt_at(checks, task) is None


# -- one task word, many new ones ----------------------------------------------------------


def test_a_tangent_after_one_task_word_bringing_new_values_runs_on() -> None:
    # a step touches the task by one word ("Postgres") while its other words are new: those
    # words are no topic, so the tangent that follows them, each step linked to the last, is
    # drift
    task = "List the cheapest paid plan on the pricing pages of three managed Postgres hosts."
    steps = [
        say("Neon pricing: Launch plan 19 USD a month.", "browse", True, progress=1),
        say("Supabase pricing: Pro plan 25 USD a month.", "browse", True, progress=2),
        say("Searching the history of Postgres at Berkeley in 1986.", "google", True),
        say("In Berkeley history the Ingres project came first.", "browse", True),
        say("The Ingres project's team and its funding in 1973.", "browse", True),
        say("That funding came from DARPA and the NSF in 1973.", "browse", True),
        say("DARPA funding also built the ARPANET in 1969.", "google", True),
        say("The first email in 1971 ran on the ARPANET of DARPA.", "browse", True),
    ]
    # (issue 29, halt29j) each tangent call works and brings values the run had not seen:
    # word overlap alone is no evidence against such a call, so drift lets it run on (on
    # dev, 7 healthy runs no longer halted against 5 drift spirals missed)
    assert halt_at(steps, task) is None


def test_word_forms_of_the_tasks_verbs_are_the_task() -> None:
    # "removing" is the task's "remove", "duplicate" its "duplicated"
    task = "Remove the duplicated formatDate helper from src/utils/dates.ts."
    steps = [
        say("Reading src/utils/dates.ts.", "read_file", True),
        say("Removing the second formatDate.", "replace", False),
        say("Sorry, the match was ambiguous; widening it to the comment above.", "replace", False),
        say("Re-reading lines 120-140 for the exact text.", "read_file", True),
        say("Removing lines 124-139 with the exact text.", "replace", True),
        say("Type-checking.", "tsc", True),
        say("The duplicate is gone; tsc reports no errors."),
    ]
    assert halt_at(steps, task) is None


# -- healthy work that touches new things at each step -------------------------------------


def test_a_migration_touching_a_new_file_each_step_runs_on() -> None:
    task = "Move every service from log4j to logback."
    services = ["auth", "billing", "search", "orders", "mailer", "gateway", "ledger", "export"]
    steps = [
        say(
            f"services/{name}/pom.xml: swapped the dependency, wrote logback.xml; {3 + i} tests "
            "pass.",
            "edit_file",
            True,
        )  # fmt: skip
        for i, name in enumerate(services)
    ]
    assert halt_at(steps, task) is None
    zh = [
        say(
            f"迁移 services/{name}：替换依赖，新增 logback.xml，{3 + i} 个测试通过。",
            "edit_file",
            True,
        )  # fmt: skip
        for i, name in enumerate(services)
    ]
    assert halt_at(zh, "把所有服务的日志从 log4j 迁移到 logback。") is None


def test_polling_and_a_templated_sweep_run_on() -> None:
    polls = []
    for i, stage in enumerate(["build", "unit", "integration", "e2e", "package", "publish"]):
        polls.append(say(f"Pipeline 7731: stage {stage}, {i + 1}/6.", "ci_status", True,
                         progress=i + 1))  # fmt: skip
        polls.append(say("Waiting 60 s.", "sleep", True))
    assert halt_at(polls, "Wait for the release pipeline to finish and report.") is None
    sweep = [
        say(f"lr={lr}: validation loss {loss}, {epochs} epochs.", "train", True)
        for lr, loss, epochs in [
            ("0.1", "0.93", 4),
            ("0.03", "0.61", 6),
            ("0.01", "0.48", 9),
            ("0.003", "0.45", 12),
            ("0.001", "0.47", 15),
            ("0.0003", "0.52", 20),
        ]  # fmt: skip
    ]
    assert halt_at(sweep, "Find a good learning rate for the ranking model.") is None
    zh = [
        say(f"学习率 {lr}：验证损失 {loss}，{epochs} 轮。", "train", True)
        for lr, loss, epochs in [
            ("0.1", "0.93", 4),
            ("0.03", "0.61", 6),
            ("0.01", "0.48", 9),
            ("0.003", "0.45", 12),
            ("0.001", "0.47", 15),
        ]  # fmt: skip
    ]
    assert halt_at(zh, "给排序模型找一个合适的学习率。") is None


def test_a_step_done_before_the_next_is_no_claim() -> None:
    # "Step done, applying the next" and "Upload done, reloading" mark a part of the work
    task = "Rotate the signing key of the auth service and redeploy it."
    steps = [
        say("Generated key k-2026-02 for the auth service.", "vault", True),
        say("Key upload done, reloading the auth gateway.", "shell", True),
        say("Auth gateway reload done, restarting the auth token workers.", "kubectl", True),
        say("Auth workers 1-4 restarted with the new key.", "kubectl", True),
        say("Auth service redeployed: 3/3 pods ready.", "kubectl", True),
        say("Smoke login against the auth service: 200 OK.", "http", True),
    ]
    assert halt_at(steps, task) is None


def test_react_calls_naming_the_tasks_id_in_brackets_are_the_task() -> None:
    # "Action: track_parcel[SF20251128]" names the task's waybill: each such step is on it
    task = "客服：用户问运单 SF20251128 为什么三天没有更新，查清楚告诉他。"
    hubs = ["义乌", "杭州", "上海", "苏州", "南京", "合肥"]
    steps = [say("先确认运单 SF20251128 的状态：在途。", "track_parcel", True)]
    steps += [
        say(
            f"Thought: 查第 {i + 1} 段轨迹。\nAction: track_parcel[SF20251128]\n"
            f"Observation: 11-2{i} 到达{hub}中转站。",
            "track_parcel",
            True,
        )  # fmt: skip
        for i, hub in enumerate(hubs)
    ]
    assert halt_at(steps, task) is None


# -- a series' next step is no further off the topic ---------------------------------------


def test_a_poll_of_the_same_item_whose_words_leave_the_task_runs_on() -> None:
    # the tracker's words share nothing with the order's: each poll is the same call on the
    # same order, with news, so it is no further adrift than the first poll
    task = "帮我点一份牛肉面加卤蛋，30元以内，送到后告诉我。"
    order = {"order": "2026112818433921"}
    steps = [
        say("下单：大碗牛肉面×1，卤蛋×1，少辣。", "waimai_order", True, args={"shop": "MJ88"}),
        say("订单已接单，备餐中，预计19:05送达。", "waimai_track", True, args=order),
        say("骑手已到店，等待出餐，预计19:07送达。", "waimai_track", True, args=order),
        say("骑手已取餐，距您2.1公里，预计19:04送达。", "waimai_track", True, args=order),
        say("配送中，距您700米，预计19:01送达。", "waimai_track", True, args=order),
        say("已送达，骑手放在门口。", "waimai_track", True, args=order),
    ]
    assert halt_at(steps, task) is None


def test_a_range_narrowed_call_by_call_runs_on() -> None:
    # a bisection: the same import on the same file, the rows' numbers narrowing
    task = "Import the midterm grades (grades_midterm.xlsx, 612 students) into the school system."
    ranges = ["307-459", "307-383", "384-421", "384-402", "403-411", "403-406"]
    steps = [say("Importing the whole sheet.", "import_grades", False, args={"rows": "1-612"})]
    steps += [
        say(f"Rows {r}: {'ok' if i % 2 else 'rejected'}.", "import_rows", i % 2 == 1,
            args={"file": "v2.xlsx", "rows": r})
        for i, r in enumerate(ranges)
    ]  # fmt: skip
    assert halt_at(steps, task) is None


def test_the_same_sentence_with_new_values_is_a_sweep_not_drift() -> None:
    task = "Suggest a list price for the duplex at 88 Juniper Way from its income."
    steps = [
        say("Loading the rent roll for 88 Juniper Way (duplex).", "listing_get", True),
        say("Net operating income: 2 units x 3,450 x 12 = 82,800 gross; NOI 59,400."),
    ]
    steps += [
        say(f"At a {rate}% cap rate the implied value is {value}.")
        for rate, value in [("4.5", "1,320,000"), ("5.0", "1,188,000"), ("5.5", "1,080,000"),
                            ("6.0", "990,000"), ("6.5", "913,800")]
    ]  # fmt: skip
    assert halt_at(steps, task) is None


def test_calls_on_new_items_off_the_task_bringing_new_values_run_on() -> None:
    # another item each call (another query, not another number) is no series: drift
    task = "Fix the flaky checkout test in tests/test_cart.py."
    steps = [
        say("Running tests/test_cart.py: test_checkout fails 1 in 5.", "pytest", True,
            args={"path": "tests/test_cart.py"}),
    ]  # fmt: skip
    steps += [
        say(text, "web_search", True, args={"q": q})
        for text, q in [
            ("Top espresso grinders of 2026 ranked.", "espresso grinders"),
            ("Flat white versus cortado: the milk ratio.", "flat white cortado"),
            ("Roasting profiles for light Ethiopian beans.", "ethiopian roast"),
            ("Water hardness and scale in boilers.", "water hardness boiler"),
            ("Cleaning group heads with backflush tablets.", "backflush group head"),
        ]
    ]
    # (issue 29, halt29j) each tangent call works and brings values the run had not seen:
    # word overlap alone is no evidence against such a call, so drift lets it run on (on
    # dev, 7 healthy runs no longer halted against 5 drift spirals missed)
    assert halt_at(steps, task) is None
