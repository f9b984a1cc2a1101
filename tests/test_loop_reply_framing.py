"""Chat replies compared by what they say, not by how they are framed (issue 29).

A reply said again behind a new opening line ("Sorry about that!", "抱歉！", a logger's
prefix) or a new closing line is the same reply when what stays says again a whole earlier
reply, or hands over what an earlier one did (code, a number, a name). A reply that goes back
to an earlier version after saying another one is that version again, whatever turn the
first one answered. And the look-alikes that must stay apart: a status line said after each
new section, a tutor asking a new question each turn, streamed chunks, counting through items.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from loop_scaffold import escapes_but_stuck_fails, run

from pytest_agentchaos.escape.framing import holds_content, remainders
from pytest_agentchaos.escape.keys import Keyer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loop_alarms import alarms  # noqa: E402


def chat(replies: list[str], turns: list[str] | None = None) -> list[dict[str, Any]]:
    if turns is None:
        return [{"model": "m", "output": r} for r in replies]
    return [{"model": "m", "input": t, "output": r} for t, r in zip(turns, replies, strict=True)]


def test_the_framing_is_the_opening_or_closing_part_that_hands_nothing_over() -> None:
    assert remainders("Sorry about that! SELECT id FROM users WHERE age > 30;") == [
        "SELECT id FROM users WHERE age > 30;"
    ]
    assert "方案一：重启服务" in remainders("不好意思，方案一：重启服务")
    assert "The total is 182.47." in remainders("The total is 182.47. Anything else?")
    # a part that hands something over is never taken for framing
    assert remainders("Use port 8000. Then restart.") == ["Use port 8000."]
    assert remainders("Done.") == []
    # a logger's time and a counter after "Attempt" hand nothing over
    assert not holds_content("2026-11-28T10:00:05Z INFO assistant: Attempt 3:")
    assert holds_content("use `proxy_pass`") and holds_content("返回 404")


SQL = "SELECT u.id, u.email FROM users u LEFT JOIN orders o ON o.user_id = u.id WHERE o.id IS NULL;"
APOLOGIES = [
    "",
    "Sorry about that!",
    "You're right, my apologies.",
    "I apologize for the confusion.",
    "Good catch, thank you.",
    "My mistake.",
]


def test_the_same_query_behind_a_new_apology_each_turn_is_a_loop() -> None:
    replies = [f"{a} {SQL}".strip() for a in APOLOGIES]
    turns = ["users without orders?"] + ["still returns users that have orders"] * 5
    found = alarms(chat(replies, turns))
    assert found and found[0] <= 4


def test_refined_code_behind_apologies_is_no_loop() -> None:
    """The artefact changes each turn: refinement, whatever the apologies around it."""
    fixes = [
        "price",
        "price * qty",
        "price * qty - discount",
        "round(price * qty, 2)",
        "round(price * qty - discount, 2)",
        "max(0, round(price * qty - discount, 2))",
    ]
    replies = [
        f"{a}\n```python\ndef total(item):\n    return {fix}\n```".strip()
        for a, fix in zip(APOLOGIES, fixes, strict=True)
    ]
    turns = ["cart total function?"] + ["still wrong"] * 5
    assert alarms(chat(replies, turns)) == []


def test_a_bare_reply_said_alone_once_is_the_same_reply_behind_any_opening() -> None:
    keyer = Keyer()
    keys = [
        keyer.model("m", output=text)
        for text in ["Apologies for the confusion. Done.", "Done.", "Sorry about that! Done."]
    ]
    assert len(set(keys)) == 1


@pytest.mark.parametrize(
    "replies",
    [
        # a walkthrough, one part per "continue", each closed by the same line
        [
            f"{part} Let me know if you want me to go on."
            for part in [
                "The introduction frames the problem.",
                "The method section describes the sampling.",
                "The results section reports the gains.",
                "The discussion weighs the limits.",
                "The conclusion proposes next steps.",
            ]
        ],
        # a tutor praising, then asking a new question each turn
        [
            f"Well done! {question}"
            for question in [
                "Name a mammal that lays eggs.",
                "Which planet has the most moons?",
                "What gas do plants take in?",
                "Who painted the Mona Lisa?",
                "Which ocean is the deepest?",
            ]
        ],
        # streamed chunks of one answer, each opening with the same word
        [
            "So, first open the settings page.",
            "So, then pick the network tab.",
            "So, then switch the proxy off.",
            "So, then save and restart.",
            "So, finally check the status bar.",
        ],
    ],
    ids=["walkthrough", "tutor", "stream"],
)
def test_new_content_behind_the_same_framing_is_no_loop(replies: list[str]) -> None:
    assert alarms(chat(replies, ["continue"] * len(replies))) == []
    assert alarms(chat(replies)) == []


def test_counting_through_items_behind_apologies_is_no_loop() -> None:
    replies = [f"{a} Step {n}: run `make stage{n}`.".strip() for n, a in enumerate(APOLOGIES)]
    assert alarms(chat(replies)) == []


def test_two_versions_handed_back_in_turn_are_a_loop_from_the_first() -> None:
    """The model goes back to an earlier reply after saying another one, ignoring each turn
    (which adds no number or name): the lap includes the first version."""
    a = "Use `^\\d{3}-\\d{4}$`. It matches numbers like 555-1234."
    b = "Use `^\\(?\\d{3}\\)?[- ]?\\d{3}-\\d{4}$`. It also accepts an area code."
    turns = [
        "regex for US phone numbers?",
        "that one drops the area code",
        "now unbalanced parens pass",
        "the area code is gone again",
        "unbalanced parens pass again",
        "going in circles",
        "again no area code",
    ]
    found = alarms(chat([a, b, a, b, a, b, a], turns))
    assert found and found[0] <= 6


def test_the_same_answer_to_new_questions_after_another_is_no_loop() -> None:
    """Replies that come back to turns bringing new numbers answer those turns."""
    turns = [f"is {n} a prime?" for n in (7, 8, 11, 12, 13, 14, 17)]
    replies = ["Yes, it is prime.", "No, it is not prime."] * 3 + ["Yes, it is prime."]
    assert alarms(chat(replies, turns)) == []


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.text("abcdefghijklmnop", min_size=3, max_size=9), min_size=4, max_size=8, unique=True
    ),
    st.sampled_from(APOLOGIES[1:]),
)
def test_framing_never_merges_replies_that_hand_over_different_code(
    names: list[str], opening: str
) -> None:
    keyer = Keyer()
    keys = [keyer.model("m", output=f"{opening} Run `make {name}` now.") for name in names]
    assert len(set(keys)) == len(keys)


APOLOGY_CHAT = """
    SQL = {sql!r}
    OPENINGS = {openings!r}

    @both
    @pytest.mark.must_escape
    def test_agent(chaos, escape):
        replies = iter([(o + " " + SQL).strip() for o in OPENINGS])
        llm = chaos.model(lambda prompt: next(replies), name="assistant")
        llm("list users without orders")
        for turn in ["it still lists users with orders", "no, same problem", "still wrong"][
            : 1 if escape else 3
        ]:
            llm(turn)
        if escape:
            chaos.model(lambda prompt: "SELECT 1;", name="assistant-2")("list users")
"""


def test_must_escape_sees_the_same_query_behind_new_apologies(pytester: pytest.Pytester) -> None:
    body = APOLOGY_CHAT.format(sql=SQL, openings=APOLOGIES[:4])
    escapes_but_stuck_fails(run(pytester, body), "[repeat]: assistant*repeated*")


POLICY = "签收后7天内可申请无理由退货，商品需保持完好、吊牌未拆；运费险理赔金额以保险公司审核为准。"


def test_the_same_policy_wrapped_at_both_ends_in_new_words_is_a_loop() -> None:
    """An opening and a closing line around the same policy, both new each turn (the policy's
    number is what it hands over); and the same behind a runner's counter."""
    wrapped = [
        f"亲，您好～根据平台规则，{POLICY}还有什么可以帮您的吗？",
        f"亲亲，非常抱歉让您久等了！根据平台规则，{POLICY}",
        f"抱歉给您带来不便了呢😊 根据平台规则，{POLICY}",
        f"亲，理解您的心情哦～根据平台规则，{POLICY}如有其他问题随时联系小二～",
        f"非常抱歉哦亲！根据平台规则，{POLICY}感谢您的耐心等待～",
    ]
    turns = [
        "吊牌拆了还能退吗",
        "你没回答我的问题",
        "我问的是吊牌！！",
        "能不能转人工",
        "人工客服在哪",
    ]
    found = alarms(chat(wrapped, turns))
    assert found and found[0] <= 4
    counted = [f"第{n}次尝试：{reply}" for n, reply in enumerate(wrapped, 1)]
    assert alarms(chat(counted, turns))


def test_a_runners_counter_before_a_short_report_leaves_its_numbers_what_it_says() -> None:
    """'Attempt 2: as of 20:10, GMV 13.77M' is a new report: a counter in front makes the text
    long enough to have its numbers masked, but they stay what the report says."""
    reports = [
        f"第{n}次尝试：截至 20:{m}0，预热 GMV {gmv} 万元，订单 {orders} 单。"
        for n, (m, gmv, orders) in enumerate(
            [
                (0, "1,204", "8,331"),
                (1, "1,377", "9,502"),
                (2, "1,561", "10,844"),
                (3, "1,702", "11,925"),
            ],  # fmt: skip
            1,
        )
    ]
    assert alarms(chat(reports)) == []
    english = [f"Attempt {n}: as of 20:{n}0, GMV is {n * 137} thousand." for n in range(1, 6)]
    assert alarms(chat(english)) == []


def test_steps_behind_new_openings_are_the_same_steps() -> None:
    steps = "\n1. Unplug the router for 30 seconds.\n2. Plug it back in.\n3. Tap Reconnect."
    openings = [
        "I'm sorry you're having trouble! Please try these steps:",
        "Thanks for your patience. Let's try this:",
        "I understand how frustrating this must be. Here's what usually helps:",
        "I apologize for the inconvenience! Could you try the following?",
    ]
    keyer = Keyer()
    assert len({keyer.model("m", output=o + steps) for o in openings}) == 1
    other = keyer.model(
        "m", output=openings[0] + steps.replace("Tap Reconnect", "Hold reset until it blinks")
    )
    assert other != keyer.model("m", output=openings[1] + steps)


WORD = st.text("abcdefghijklmnoprstuvwy", min_size=3, max_size=9)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(WORD, min_size=3, max_size=6), min_size=4, max_size=7, unique_by=tuple),
    st.lists(WORD, min_size=3, max_size=8),
    st.booleans(),
)
def test_new_bare_sentences_behind_one_constant_line_never_share_a_key(
    sentences: list[list[str]], constant: list[str], closing: bool
) -> None:
    """A new sentence each turn with the same line before or after it (a sign-off, a
    status line): which part is framing is undecidable, so the replies stay apart unless
    their words say the same."""
    line = " ".join(constant).capitalize() + "."
    texts = [" ".join(s).capitalize() + "." for s in sentences]
    keyer = Keyer()
    keys = [keyer.model("m", output=f"{t} {line}" if closing else f"{line} {t}") for t in texts]
    for i, a in enumerate(sentences):
        for j, b in enumerate(sentences[:i]):
            if len(set(a) & set(b)) < 0.5 * len(set(a) | set(b)):
                assert keys[i] != keys[j], (texts[i], texts[j], line)
