"""The halt heuristics' finer rules, each with a spiral it catches and a healthy look-alike it
leaves alone: redoing an earlier step (a paraphrase, the same call again, "once more"), a
counter that stays flat while the agent redoes work, the same call failing between other
calls, off-topic talk, and what counts as new information."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pytest_agentchaos.halt import HaltMonitor
from pytest_agentchaos.halt.streaks import Failures
from pytest_agentchaos.halt.text import information, names


class Topics:
    """A fake sentence model: two texts that name the topic (any of its words) score ``cos``,
    any other two score 0 (each text gets its own direction, plus the topic's)."""

    def __init__(self, cos: float, *topic: str) -> None:
        self.cos, self.topic, self.seen = cos, topic, {}  # type: dict[str, int]

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def _one(self, text: str) -> list[float]:
        vector = [0.0] * 256
        own = self.seen.setdefault(text, 1 + len(self.seen))
        if any(word in text.lower() for word in self.topic):
            vector[0] = math.sqrt(self.cos)
            vector[own] = math.sqrt(1 - self.cos)
        else:
            vector[own] = 1.0
        return vector


def run(
    steps: list[dict[str, Any]], task: str = "", embedder: Any = "lexical"
) -> tuple[int | None, Any]:
    """Feed ``steps`` (keyword arguments of ``observe``) to a fresh monitor: (the step it
    halted at or None, the last decision)."""
    monitor = HaltMonitor(task=task, embedder=embedder)
    for i, step in enumerate(steps):
        decision = monitor.observe(**step)
        if decision.halt:
            return i, decision
    return None, monitor.history[-1]


def call(
    output: str, tool: str | None = None, ok: bool | None = None, **more: Any
) -> dict[str, Any]:
    return {"output": output, "tool": tool, "ok": ok, **more}


# -- what is new information ----------------------------------------------------------------------


def test_information_reads_file_names_possessives_and_chinese_text() -> None:
    assert {"profileform", "profileform.jsx"} <= information("Reading src/ProfileForm.jsx.")
    assert information("Still on ProfileForm's methods") == {"profileform"}
    assert information("路由都在 app.py 里注册，版本号在 __version__.py。") == {
        "app.py",
        "__version__.py",
    }
    assert information("I'm not sure that's enough.") == frozenset()  # apostrophes, no quote
    assert information("共三百二十条，两笔退款") == {"三百二十条", "两笔"}
    assert information("再检查一遍") == frozenset()  # 一 alone is "a", not a count


def test_a_number_after_a_name_is_a_label_not_a_count() -> None:
    assert "16 was" not in information("PostgreSQL 16 was released on 14 September 2023.")
    assert {"24 errors", "9 files"} <= information("Found 24 errors in 9 files")
    assert {"12 failed", "188 passed"} <= information("12 failed, 188 passed")


def test_names_are_capitalised_words_inside_a_sentence() -> None:
    assert names("Translating the Usage section. Deploying to Vercel.") == {"usage", "vercel"}
    assert names("Fixing the alt text. Then I'm done.") == frozenset()


# -- redoing an earlier step ----------------------------------------------------------------------


def test_paraphrased_searches_for_what_is_known_halt() -> None:
    model = Topics(0.7, "release", "launch", "came out", "shipped")  # below 0.8: no repeat
    steps = [
        call("Searching: PostgreSQL 16 release date", "web_search", True),
        call("PostgreSQL 16 was released on 14 September 2023."),
        call("let me look up when PostgreSQL 16 came out", "web_search", True),
        call("finding the launch day of the sixteenth version", "web_search", True),
        call("checking the day that version was released", "web_search", True),
        call("confirming when that major version shipped", "web_search", True),
    ]
    at, decision = run(steps, "When was PostgreSQL 16 released?", model)
    assert at == 5 and decision.fired[0] == "novelty"
    # a search that worked, worded like the last one, about the next thing: work
    items = ["Postgres", "MariaDB", "Oracle", "Firebird", "Cockroach", "Percona"]
    steps = [call(f"Searching the release notes of {db}", "web_search", True) for db in items]
    assert run(steps, "Collect the release notes of six databases", model)[0] is None


def test_the_same_call_made_again_is_no_new_work() -> None:
    handler = {"path": "src/mcp/handler.rs"}
    steps = [
        call("Reading src/mcp/handler.rs.", "read_file", True, args=handler),
        call("tools_list() returns one Vec; I'll add a cursor and next_cursor."),
        call("Now I should get on with the pagination."),
        call("Time to write it.", "read_file", True, args=handler),
        call("Moving forward with the slicing logic."),
        call("Let me proceed.", "read_file", True, args=handler),
    ]
    at, decision = run(steps, "Add cursor pagination to tools/list")
    assert at == 5 and "novelty" in decision.fired
    # the same re-read after every edit, each edit naming what it changed: work
    steps = [call("Reading src/billing.py.", "read_file", True, args={"path": "src/billing.py"})]
    for fn in ["total", "tax", "discount", "invoice_lines", "refund"]:
        steps.append(call(f"Annotated {fn}() in billing.py.", "edit_file", True, args={"fn": fn}))
        steps.append(
            call("Re-reading the file.", "read_file", True, args={"path": "src/billing.py"})
        )
    assert run(steps, "Add type hints to src/billing.py")[0] is None


def test_saying_it_does_that_again_marks_a_redo() -> None:
    steps = [
        call("Reading the README for the data location.", "read_file", True),
        call("The README does not say where the data is."),
        call("Reading the README again.", "read_file", True),
        call("Going through the README once more.", "read_file", True),
        call("Re-reading the README to be sure.", "read_file", True),
    ]
    assert run(steps, "Find the data location")[0] == 4
    # "again" about another thing than the earlier call of that tool: not a redo
    steps = [
        call("Running the build.", "shell", True),
        call("Fixing a missing alt text flagged by the linter.", "edit_file", True),
        call("Running the build again: compiled.", "edit_file", True),
        call("Deploying the preview.", "deploy", True),
        call("Checking that the preview renders.", "browser", True),
    ]
    assert run(steps, "Ship the landing page")[0] is None


# -- a flat counter -------------------------------------------------------------------------------


def test_a_flat_counter_while_the_same_call_is_made_again_halts_as_stagnation() -> None:
    url = "https://shop.example/catalogue"
    page = {"url": url}
    steps = [
        call(f"Page {p}: 48 products, 48 new rows.", "http_get", True, progress=p,
             args={**page, "page": p})
        for p in range(1, 6)
    ]  # fmt: skip
    page6 = [
        call(f"Asking for page 6 ({how}): 0 new rows.", "http_get", True, progress=5,
             args={**page, "page": 6})
        for how in ("first", "retry", "next link", "again")
    ]  # fmt: skip
    at, decision = run(steps + page6, "Scrape all 12 catalogue pages")
    # the same call, the same values, the counter flat: a repetition (the restated answer)
    # or a redo, whichever the monitor names first
    assert at == 8 and {"progress", "repetition"} & set(decision.fired)
    assert "redoes step" in decision.reason or "restated" in decision.reason
    # once more, then another request that works: the counter moves on
    fixed = call("Page 6 with sort=id: 48 new rows.", "http_get", True, progress=6,
                 args={"url": url, "page": 6, "sort": "id"})  # fmt: skip
    assert run(steps + page6[:2] + [fixed], "Scrape all 12 catalogue pages")[0] is None


def test_a_flat_counter_with_news_every_other_step_is_work() -> None:
    steps = []
    for title in ["Introduction", "Method", "Per-token estimates", "Batching", "Overheads",
                  "Scenarios", "Open questions", "Conclusion"]:  # fmt: skip
        steps.append(call(f"Drafting the section '{title}'.", "write_file", True, progress=10))
        steps.append(call(f"Checking the figures in '{title}'.", "read_file", True, progress=10))
    assert run(steps, "Write the energy report from the ten sources")[0] is None


# -- tool failures --------------------------------------------------------------------------------


def test_the_same_call_failing_between_other_calls_is_a_streak() -> None:
    data = {"path": "data.json"}
    steps = [
        call(
            "Reading data.json.", "read_file", False, error="file not found: data.json", args=data
        ),
        call("Checking config.yaml.", "read_file", True, args={"path": "config.yaml"}),
        call(
            "Reading data.json again.",
            "read_file",
            False,
            error="file not found: data.json",
            args=data,
        ),
        call("Looking at the README.", "read_file", True, args={"path": "README.md"}),
        call(
            "Loading data.json.", "read_file", False, error="file not found: data.json", args=data
        ),
    ]
    at, decision = run(steps, "Load data.json and average the orders")
    assert at == 4 and decision.fired[0] == "tool_failure"
    # without arguments, the reads that worked are that tool working: no streak to see
    assert run([{k: v for k, v in s.items() if k != "args"} for s in steps])[0] is None
    # the same read failing twice, then the file is found elsewhere and read
    found = call("Reading build/data.json: 1,204 orders.", "read_file", True,
                 args={"path": "build/data.json"})  # fmt: skip
    assert run(steps[:3] + [found], "Load data.json and average the orders")[0] is None


def test_a_bisection_fails_the_same_way_on_other_arguments_and_is_no_streak() -> None:
    error = "FAILED tests/test_cache.py::test_cache_ttl"
    steps = []
    for bad, good in [("1-64", "1-32"), ("33-64", "33-48"), ("49-56", "49-52"), ("53-54", "53")]:
        steps.append(call(f"Running candidates {bad}.", "pytest", False, error=error,
                          args={"candidates": bad}))  # fmt: skip
        steps.append(call(f"Running candidates {good}: passes.", "pytest", True,
                          args={"candidates": good}))  # fmt: skip
    assert run(steps, "Find the test that pollutes test_cache_ttl")[0] is None


def test_failures_count_by_error_until_the_tool_works_and_by_call_within_the_span() -> None:
    failures = Failures(span=4)
    assert failures.failure(0, "read", '{"p": "a"}', "not found: a") == 1
    failures.success("read", '{"p": "b"}')  # another call worked: clears the tool's count,
    assert failures.failure(1, "read", '{"p": "a"}', "not found: a") == 2  # not this call's
    assert failures.seen("read", "not found: a") and not failures.seen("read", "timeout")
    failures.success("read", '{"p": "b"}')
    assert failures.failure(9, "read", '{"p": "a"}', "not found: a") == 1  # the rest expired
    failures.success("read", '{"p": "a"}')
    assert failures.worst(9) == 0


# -- drift ----------------------------------------------------------------------------------------


def test_off_topic_talk_twice_in_a_row_is_drift() -> None:
    steps = [
        call("Looking up Manchester United's squad list.", "search", True),
        call("The squad page lists Onana as goalkeeper, shirt number 24."),
        call("Plan: wake up at 7am, eat breakfast, exercise for 30 minutes."),
        call("Next: finish the report for work and attend the 2pm meeting."),
        call("Adding groceries to the list: eggs, milk, bread and coffee."),
        call("Reminder: water the plants in the evening."),
    ]
    at, decision = run(steps, "Who is Manchester United's first-choice goalkeeper?")
    assert at == 5 and decision.fired[0] == "drift"
    # terse actions whose topic is in their tool, and a short aside of reasoning: work
    steps = [
        call("backup.service failed with exit code 28.", "shell", True),
        call("The backup journal says: no space left on device.", "shell", True),
        call("Tar streams without knowing the final size."),
        call("Retention was meant to prune old archives; that cron entry is gone."),
        call("Pruning archives older than 14 days: 47 removed.", "shell", True),
        call("Restoring the cron entry.", "edit_file", True),
        call("Starting the backup job by hand: it finishes.", "shell", True),
    ]
    assert run(steps, "Find out why the nightly backup job failed and fix it.")[0] is None


def test_chinese_self_reference_names_the_previous_message() -> None:
    steps = [call("读取 app.py，看看路由。", "read_file", True)] + [
        call(text)
        for text in [
            "回头看我上一条消息，我又在讨论自己。",
            "我前面的回复不够严谨。",
            "我上一个回答也有问题。",
            "我之前的输出还要再想想。",
        ]  # fmt: skip
    ]
    at, decision = run(steps, "给 Flask 项目加一个 /health 接口")
    assert at is not None and "self_reference" in decision.fired
    # correcting the previous answer with new numbers is work
    steps = [call("按季度统计：Q1 9,812，Q4 12,637。", "sql", True),
             call("我上一条回复要更正：Q1 是 9,840，Q4 是 12,609。"),
             call("我之前的回答里合计仍是 43,924 单，跨季度的 28 单只是挪了季度。")]  # fmt: skip
    assert run(steps, "统计每个季度的订单数")[0] is None


# -- what a sentence model reads alike ------------------------------------------------------------


def test_the_other_answer_is_no_repeat_however_alike_a_model_reads_it() -> None:
    model = Topics(0.95, "pydantic")  # versions are invisible to it
    monitor = HaltMonitor(task="Resolve the pydantic conflict", embedder=model)
    for output in ["Pinning pydantic==1.10.13.", "Pinning pydantic==2.6.4 instead.",
                   "Back to pydantic==1.10.13."]:  # fmt: skip
        decision = monitor.observe(output, "edit_file", True)
    repetition = next(s for s in decision.signals if s.heuristic == "repetition")
    assert repetition.detail.get("like") != 1  # 1.10.13 again is not 2.6.4 again
