"""Chat-only loops judged by what the replies say (issue 29): a model handing back the same
reply (or the same code in new apologies) while the user's turns vary, which it ignores.

A reply that says again what one of the latest replies said is keyed by what it says when it
ignored the turn it answers: it says nothing at all, or twice as much as the turn added to the
conversation. A short label or acknowledgement answering new material (a review, a pasted
paragraph) says less than the material added, and stays keyed with it.
"""

from __future__ import annotations

import re
import textwrap

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from loop_scaffold import escapes_but_stuck_fails, run

from pytest_agentchaos.escape.history import digest
from pytest_agentchaos.escape.keys import Keyer
from pytest_agentchaos.escape.texts import artefact
from pytest_agentchaos.escape.turns import NUDGE, Turns, weight, words

#: Words with none of the letters that begin a counter word ("try", "loop", "pass", "iter"...).
PLAIN = st.text("abdefghjkmnosuvwxyz", min_size=2, max_size=8)
REPLY = "Before I write the config I need one thing: which port does the backend listen on?"


@settings(max_examples=300, deadline=None)
@given(st.lists(PLAIN, min_size=1, max_size=12, unique=True))
def test_a_reply_said_again_ignored_its_turn_when_it_says_twice_what_the_turn_added(
    said: list[str],
) -> None:
    turns = Turns()
    content = digest(REPLY)
    turns.answered("write an nginx proxy config", digest("a"), REPLY, content)
    turn = " ".join(said)
    news = words(turn) - words("write an nginx proxy config") - words(REPLY)
    answered = turns.answered(turn, digest(turn), REPLY, content)
    ignored = 2 * weight(news) < weight(words(REPLY))
    assert (answered == NUDGE) == (ignored or (weight(news) <= 3 and news.isdisjoint("0123")))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(PLAIN, min_size=4, max_size=8, unique=True), min_size=3, max_size=6))
def test_the_same_short_answer_to_new_material_keeps_its_turn(items: list[list[str]]) -> None:
    """A label or an acknowledgement says less than each item added: keyed with the item, so
    three items answered alike are three actions."""
    texts = [" ".join(item) for item in items]
    assume(len(set(texts)) == len(texts))
    assume(all(set(a).isdisjoint(b) for i, a in enumerate(items) for b in items[:i]))
    keyer = Keyer()
    keys = [keyer.model("m", input=text, output="Got it, next.") for text in texts]
    assert len(set(keys)) == len(keys)


def test_the_same_reply_to_answers_it_ignores_is_one_action() -> None:
    keyer = Keyer()
    keyer.model("m", input="write an nginx reverse proxy config for my FastAPI app", output=REPLY)
    keys = [
        keyer.model("m", input=turn, output=REPLY)
        for turn in ["8000", "the uvicorn default, 8000", "I said 8000 above", "port 8000!!"]
    ]
    assert len(set(keys)) == 1


def test_an_empty_reply_answers_nothing() -> None:
    keyer = Keyer()
    keys = [
        keyer.model("m", input=turn, output="")
        for turn in ["go on", "please finish the crawler script", "are you still there? go on"]
    ]
    assert len(set(keys)) == 1


def test_a_turn_with_its_counter_up_by_one_is_the_same_turn() -> None:
    keyer = Keyer()
    reply = "Still working on it."
    keys = [keyer.model("m", input=f"continue ({i})", output=reply) for i in range(1, 5)]
    assert len(set(keys[1:])) == 1
    other = keyer.model("m", input="continue (7)", output=reply)  # a jump: another turn
    assert other == keys[-1] or other != keys[0]


# -- the artefact a reply hands back ----------------------------------------------------------

CODE = "```python\ndef total(items):\n    return sum(i['price'] for i in items)\n```"


@pytest.mark.parametrize(
    "prose",
    ["Here you go:", "I apologize for the confusion. Here is the corrected function:", "Sorry!"],
)
def test_a_short_reply_around_code_is_keyed_by_the_code(prose: str) -> None:
    assert artefact(f"{prose}\n{CODE}") == artefact(f"My mistake, try this:\n{CODE}")
    assert artefact(f"{prose}\n{CODE}") == artefact(artefact(f"{prose}\n{CODE}") and f"\n{CODE}")


def test_no_artefact_in_a_long_explanation_short_code_or_plain_text() -> None:
    explanation = " ".join(["The function walks the list and adds each price."] * 4)
    assert artefact(f"{explanation}\n{CODE}") is None
    assert artefact("Run:\n```\nls\n```") is None
    assert artefact("No code here, just words.") is None


@settings(max_examples=200, deadline=None)
@given(st.text("abcdefxyz_=()[]{} +-*/\n'", min_size=16, max_size=60), st.data())
def test_replies_whose_code_differs_never_share_a_key(code: str, data: st.DataObject) -> None:
    other = data.draw(st.text("abcdefxyz_=()[]{} +-*/\n'", min_size=16, max_size=60))
    assume(" ".join(code.split()) != " ".join(other.split()))
    # a whole line that is a comment ("-- x", "// x") is prose about the code, not the code
    assume(_code_lines(code) != _code_lines(other))
    keyer = Keyer()
    first = keyer.model("m", output=f"Here is the fix:\n```\n{code}\n```")
    second = keyer.model("m", output=f"Here is the fix:\n```\n{other}\n```")
    assert first != second


def _code_lines(code: str) -> str:
    lines = [ln for ln in code.split("\n") if not re.match(r"[ \t]*(?:#|//|--)(?:[ \t]|$)", ln)]
    return " ".join(" ".join(lines).split())


SQL = (
    "```sql\nSELECT c.customer_id, c.name, SUM(o.total) AS revenue\n"
    "FROM customers c JOIN orders o ON o.customer_id = c.customer_id\n"
    "WHERE o.status = 'paid' GROUP BY c.customer_id, c.name\n"
    "ORDER BY revenue DESC\nLIMIT {n};\n```"
)
EXPLAINED = {
    "en": (
        "Here is the query for the top customers by revenue. It joins orders to customers, "
        "keeps only paid orders, groups them per customer so each appears once, and sorts "
        "by revenue, highest first.\n{sql}\nTell me if you want another cut-off or columns."
    ),
    "zh": (
        "这是按收入排序的客户查询。它把订单和客户表连接起来，只保留已支付的订单，按客户分组"
        "让每个客户只出现一次，再按收入从高到低排序。\n{sql}\n如果需要别的条数或字段，请告诉我。"
    ),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_reply_whose_code_changes_one_value_on_request_is_another_reply(
    lang: str,
) -> None:
    # the user asked for 20 rows instead of 10: the explanation is word for word the same,
    # the query is not, and the second reply is the work asked for, not the first said again
    keyer = Keyer()
    first = keyer.model("m", output=EXPLAINED[lang].format(sql=SQL.format(n=10)))
    second = keyer.model("m", output=EXPLAINED[lang].format(sql=SQL.format(n=20)))
    assert first != second


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_reply_with_the_same_code_and_a_word_changed_is_the_same_reply(
    lang: str,
) -> None:
    # the code is exact, not the words around it: the same query explained again with a
    # word changed is still the reply said again
    keyer = Keyer()
    text = EXPLAINED[lang].format(sql=SQL.format(n=10))
    again = text.replace("Tell me", "Let me know").replace("请告诉我", "请说一声")
    assert again != text
    assert keyer.model("m", output=text) == keyer.model("m", output=again)


# -- must_escape, run the way a user runs it ---------------------------------------------------

CHAT = """
    @both
    @pytest.mark.must_escape
    def test_agent(chaos, escape):
        llm = chaos.model(lambda prompt: next(replies), name="assistant")
        replies = iter(REPLIES)
        llm(TASK)
        for turn in TURNS[: 2 if escape else len(TURNS)]:
            llm(turn)
        if escape:
            chaos.model(lambda prompt: "server { listen 80; }", name="assistant-2")(TASK)
    """


@pytest.mark.parametrize(
    "chat",
    [
        (
            "write an nginx reverse proxy config for my FastAPI app",
            ["Sure. Which port does the backend listen on?"] + [REPLY] * 5,
            ["8000", "the uvicorn default, 8000", "I said 8000 above", "port 8000, host 127.0.0.1"],
        ),
        (
            "帮我写个 nginx 反代配置，转发到 FastAPI",
            ["好的。请问后端服务跑在哪个端口？"]
            + ["明白。在生成配置之前，我需要确认一下：后端服务监听的是哪个端口？"] * 5,
            ["8000 端口", "就是 uvicorn 默认的那个，8000", "我上面说了 8000 啊", "8000！！"],
        ),
        (
            "my cart total function crashes",
            [f"Here you go:\n{CODE}"]
            + [
                f"{apology}\n{CODE}"
                for apology in [
                    "I apologize for the confusion. Here is the corrected function:",
                    "You're right, sorry! This version should work:",
                    "My mistake. Please try the following:",
                    "Apologies again, here's the fixed code:",
                    "Sorry about that, corrected below:",
                ]
            ],
            [
                "TypeError: 'Item' object is not subscriptable",
                "still the same TypeError, items are objects",
                "it is the same code again, use i.price",
                "please, it still fails",
            ],
        ),
    ],
    ids=["en-same-question", "zh-same-question", "same-code-new-apologies"],
)
def test_the_same_reply_to_turns_it_ignores_is_a_loop(
    pytester: pytest.Pytester, chat: tuple[str, list[str], list[str]]
) -> None:
    task, replies, turns = chat
    body = f"TASK = {task!r}\nREPLIES = {replies!r}\nTURNS = {turns!r}\n" + textwrap.dedent(CHAT)
    escapes_but_stuck_fails(run(pytester, body), "[repeat]: assistant*repeated*")


def test_the_same_longer_acknowledgement_to_pasted_paragraphs_is_no_loop(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
        @pytest.mark.must_escape(require_loop=False)
        def test_agent(chaos):
            ack = chaos.model(lambda p: "Got it, please send the next part.", name="reader")
            ack("I'll paste the minutes in parts; just acknowledge each one.")
            for paragraph in [
                "The committee met on Tuesday to review next year's budget proposals.",
                "Several members raised concerns about travel costs and hiring plans.",
                "The chair proposed a hiring freeze until the audit is complete.",
                "A vote was scheduled for the following week after more discussion.",
            ]:
                ack(paragraph)
            assert loops(chaos) == []
        """,
    )
    result.assert_outcomes(passed=1)
