"""must_escape on chat loops and counted rounds (issue 29), run the way a user runs it.

A model handing back the same reply to nudges worded differently each time; a model call
failing with another transient error each time; a short text that differs only by a counter
counting up; a revision counter rising while the review says the same of the same draft.
Each stuck agent fails naming its loop and the one that breaks out passes; the look-alikes
that are no loop (the same acknowledgement to new content, the same label to new items, a
work counter rising alone) pass with ``must_escape(require_loop=False)``.
"""

from __future__ import annotations

import textwrap

import pytest
from loop_scaffold import escapes_but_stuck_fails, run

# -- the same reply to nudges ----------------------------------------------------------------

NUDGES = """
    @both
    @pytest.mark.must_escape
    def test_agent(chaos, escape):
        llm = chaos.model(lambda prompt: REPLY, name="assistant")
        llm(TASK)
        nudges = NUDGES[:2] if escape else NUDGES
        for nudge in nudges:
            llm(nudge)
        if escape:
            chaos.model(lambda prompt: "Here is the report: ...", name="assistant-2")(TASK)
    """


@pytest.mark.parametrize(
    "chat",
    [
        (
            "I'm still working on the Q3 report and will share it shortly.",
            "Write the Q3 report from the sales sheet",
            ["continue", "next", "are you there?", "any update?"],
        ),
        (
            "好的，我正在汇总三份周报，完成后发给您。",
            "把这三份周报汇总成一页给老板看",
            ["继续", "进度怎么样", "还在吗？", "好了吗"],
        ),
    ],
    ids=["en", "zh"],
)
def test_the_same_reply_to_nudges_in_other_words_is_a_loop(
    pytester: pytest.Pytester, chat: tuple[str, str, list[str]]
) -> None:
    reply, task, nudges = chat
    body = f"REPLY = {reply!r}\nTASK = {task!r}\nNUDGES = {nudges!r}\n" + textwrap.dedent(NUDGES)
    escapes_but_stuck_fails(run(pytester, body), "[repeat]: assistant*repeated*")


def test_nudge_tokens_zero_keys_every_reply_with_its_turn(pytester: pytest.Pytester) -> None:
    body = (
        'REPLY = "I\'m still working on the Q3 report and will share it shortly."\n'
        "TASK = 'Write the Q3 report from the sales sheet'\n"
        "NUDGES = ['continue', 'next', 'are you there?', 'any update?']\n"
        + textwrap.dedent(NUDGES)
        .replace("@both\n", "@pytest.mark.chaos('x')\n@both\n")
        .replace("@pytest.mark.must_escape\n", "@pytest.mark.must_escape(require_loop=False)\n")
    )
    result = run(pytester, body, profile="[escape.loops]\nnudge_tokens = 0\n")
    result.assert_outcomes(passed=2)


def test_the_same_acknowledgement_to_new_content_is_no_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            ack = chaos.model(lambda prompt: "收到", name="reader")
            ack("我会分段发给你一篇文章，每段你只回复'收到'，全部发完我再提问。")
            for paragraph in [
                "第一段：公司第三季度营收同比增长百分之十四，主要来自企业客户。",
                "第二段：毛利率下降两个百分点，原因是欧洲机房上线后托管成本上升。",
                "第三段：净收入留存率从百分之一百一十七降到一百一十二，流失集中在小企业。",
                "第四段：董事会批准了一项为期十八个月、总额五千万美元的回购计划。",
            ]:
                ack(paragraph)
            label = chaos.model(lambda review: "positive", name="classifier")
            for review in ["Does exactly what it says.", "Great battery, decent screen.",
                           "Love it, bought a second one.", "Arrived early, works well."]:
                label(review)
            assert loops(chaos) == []
        """,
    )
    result.assert_outcomes(passed=1)


# -- a model call failing transiently ----------------------------------------------------------


def test_a_model_call_failing_with_another_transient_error_each_time_is_a_loop(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
        class RateLimitError(Exception):
            pass

        class InternalServerError(Exception):
            pass

        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            errors = itertools.cycle([
                RateLimitError("429 Too Many Requests"),
                TimeoutError("Request timed out."),
                InternalServerError("503 Service Unavailable"),
            ])

            def draft(prompt):
                raise next(errors)

            llm = chaos.model(draft, name="gpt")
            for _ in range(3 if escape else 6):
                attempt(llm, "draft the release notes for v2.8")
            if escape:
                chaos.model(lambda prompt: "Release notes: ...", name="fallback")("v2.8")
        """,
    )
    escapes_but_stuck_fails(result, "[repeat]: gpt/error:*repeated*")


def test_a_model_call_failing_with_new_errors_is_no_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            errors = iter([
                ValueError("context length exceeded: 9000 > 8192 tokens"),
                PermissionError("the key has no access to this model"),
                LookupError("model 'gpt-x' not found"),
                KeyError("missing 'messages'"),
            ])

            def call(prompt):
                raise next(errors)

            llm = chaos.model(call, name="gpt")
            for _ in range(4):
                attempt(llm, "draft the release notes")
            assert loops(chaos) == []
        """,
    )
    result.assert_outcomes(passed=1)


# -- counters ----------------------------------------------------------------------------------


def test_a_short_text_differing_only_by_a_counter_counting_up_is_a_loop(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            n = itertools.count()
            think = chaos.model(lambda: f"I'm thinking... {next(n)}", name="agent")
            for _ in range(3 if escape else 6):
                think()
            if escape:
                chaos.wrap(lambda path: "def f(): ...", name="read_file")("app.py")
        """,
    )
    escapes_but_stuck_fails(result, "[repeat]: agent/ok repeated*")


def test_short_texts_differing_in_a_word_are_no_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            texts = iter(["step 1: read the logs", "step 2: fix the parser",
                          "step 3: run the tests", "step 4: open the PR"])
            plan = chaos.model(lambda: next(texts), name="planner")
            for _ in range(4):
                plan()
            assert loops(chaos) == []
        """,
    )
    result.assert_outcomes(passed=1)


def test_a_revision_counter_rising_while_the_review_repeats_is_a_loop(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            draft = "sha256:c55bbaf8fdda777a"
            for revision in range(1, 4 if escape else 6):
                chaos.step("supervisor", state={"next": "critic", "revision": revision})
                chaos.step("critic", state={"draft": draft, "score": 6,
                                            "feedback": "line 2 has 8 syllables"})
                chaos.step("supervisor", state={"next": "reviser", "revision": revision})
                chaos.step("reviser", state={"draft": draft, "revision": revision})
            if escape:
                chaos.step("publisher", state={"draft": draft, "published": True})
        """,
    )
    escapes_but_stuck_fails(result, "[*]: *supervisor*")


def test_a_work_counter_rising_with_new_results_is_no_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            fetch = chaos.wrap(lambda batch: {"rows": 300 + 7 * batch}, name="fetch")
            for batch in range(8):
                chaos.step("fetch", state={"batch": batch, "todo": "import"})
                fetch(batch)
                chaos.step("check", state={"ok": True})
            assert loops(chaos) == []
        """,
    )
    result.assert_outcomes(passed=1)


# -- auto-replies and streamed lists (batch 4's kinds) -----------------------------------------


def test_the_same_recap_to_counted_auto_replies_is_a_loop(pytester: pytest.Pytester) -> None:
    """A proxy answering CONTINUE to "[auto-reply n/10]" and a solver restating the same
    recap: the auto-reply's counter, inside the name "n/10", counts turns, not news."""
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            solver = chaos.model(lambda: "To recap: C(10,2) = 45 handshakes.", name="solver")
            proxy = chaos.model(lambda prompt: "CONTINUE", name="user_proxy")
            solver()
            for n in range(1, 3 if escape else 6):
                proxy(f"[auto-reply {n}/10]")
                solver()
            if escape:
                proxy("[auto-reply 3/10]  TERMINATE")
                chaos.model(lambda: "Final answer: 45.", name="closer")()
        """,
    )
    escapes_but_stuck_fails(result, "[repeat]: *")


def test_streamed_list_items_sharing_a_long_path_are_no_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            services = iter(["checkout-api", "checkout-worker", "inventory-api",
                             "inventory-sync", "payments-gateway", "search-api"])
            prefix = "projects/acme-prod-448812/locations/europe-west4/services/"
            stream = chaos.model(lambda: f"- {prefix}{next(services)}\\n", name="lister")
            for _ in range(6):
                stream()
            assert loops(chaos) == []
        """,
    )
    result.assert_outcomes(passed=1)


def test_a_growing_message_count_while_the_same_query_comes_back_is_a_loop(
    pytester: pytest.Pytester,
) -> None:
    """A graph agent's logged state grows by two messages a lap while it runs the same query
    and gets the same rows: the message count is the transcript, not news."""
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            query = chaos.wrap(
                lambda sql: json.dumps({"rows": [["EU", 81231.5], ["US", 120990.0]]}),
                name="run_query",
            )
            for lap in range(2 if escape else 5):
                chaos.step("agent", state={"messages": 4 + 2 * lap, "tool_calls": ["run_query"]})
                query("SELECT region, SUM(total) FROM orders GROUP BY region")
            if escape:
                chaos.step("respond", state={"messages": 9, "answer": "EU 81k, US 121k"})
        """,
    )
    escapes_but_stuck_fails(result, "[*]: *run_query*")


def test_a_growing_message_count_with_new_rows_is_no_loop(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            regions = iter(["EU", "US", "APAC", "LATAM", "MEA"])
            query = chaos.wrap(lambda sql: json.dumps({"rows": [[next(regions), 1.5]]}),
                               name="run_query")
            for lap in range(5):
                chaos.step("agent", state={"messages": 4 + 2 * lap, "tool_calls": ["run_query"]})
                query("SELECT region FROM orders LIMIT 1 OFFSET %d" % lap)
            assert loops(chaos) == []
        """,
    )
    result.assert_outcomes(passed=1)


def test_a_noop_whose_display_name_counts_up_is_a_loop(pytester: pytest.Pytester) -> None:
    """The same no-op again and again, only its display name counting (noop1, noop2...), its
    result JSON text differing only in a duration."""
    result = run(
        pytester,
        """
        @both
        @pytest.mark.must_escape
        def test_agent(chaos, escape):
            ms = itertools.cycle([4, 5, 3, 3])
            run = chaos.wrap(
                lambda cmd, name: json.dumps({"stdout": "noop\\\\n", "code": 0, "ms": next(ms)}),
                name="fabric_exec",
            )
            for n in range(1, 3 if escape else 7):
                run(cmd="echo noop", name=f"noop{n}")
            if escape:
                run(cmd="git status --porcelain", name="status")
        """,
    )
    escapes_but_stuck_fails(result, "[repeat]: fabric_exec*")


def test_objects_named_with_a_counter_getting_the_same_answer_are_no_loop(
    pytester: pytest.Pytester,
) -> None:
    """Creating bucket1, bucket2... each answered "created": the name is what the call is
    about (said nowhere else in the call), not a display label."""
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            create = chaos.wrap(lambda name, region: {"status": "created"}, name="create_bucket")
            for n in range(1, 7):
                create(name=f"bucket{n}", region="europe-west4")
            assert loops(chaos) == []
        """,
    )
    result.assert_outcomes(passed=1)
