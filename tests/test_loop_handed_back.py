"""Chat replies that hand back the same artefact behind new framing (issue 29, loops):
inline code (a regex, a spreadsheet formula) said with a new short sentence each time, and
fenced code whose only change is the comment on top. And the look-alikes that must stay
apart: other code, code said with a value beside it, words in backticks, a long explanation.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_agentchaos.escape.keys import Keyer
from pytest_agentchaos.escape.texts import fenced_code, inline_artefact

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loop_alarms import alarms  # noqa: E402


def chat(turns: list[str], replies: list[str]) -> list[dict[str, Any]]:
    return [{"model": "m", "input": t, "output": r} for t, r in zip(turns, replies, strict=True)]


REGEX = r"`^\d{3}-\d{4}$`"
FRAMINGS = ["Sorry, use {c} instead.", "Let me fix that: {c}", "Here's an updated regex: {c}",
            "抱歉，改成 {c}", "更正：{c}", "请确认使用的是 {c}"]  # fmt: skip


def test_inline_code_behind_new_framing_is_one_artefact() -> None:
    found = {inline_artefact(f.format(c=REGEX)) for f in FRAMINGS}
    assert len(found) == 1 and None not in found


def test_inline_code_with_a_value_beside_it_or_words_in_backticks_is_no_artefact() -> None:
    assert inline_artefact(f"In D2 enter {REGEX}") is None  # a cell named outside the code
    assert inline_artefact("Open the `settings panel` and retry.") is None  # words, no code
    long = " ".join(["The pattern anchors both ends and counts the digits exactly."] * 2)
    assert inline_artefact(f"{long} {REGEX}") is None  # explained at length
    assert inline_artefact("```\nx = 1\n```") is None  # fenced: read as fenced code


def test_the_same_inline_code_to_the_same_complaint_is_a_loop() -> None:
    replies = [f.format(c=REGEX) for f in FRAMINGS[:5]]
    turns = ["regex for a phone number"] + ["It doesn't match '555 1234'."] * 4
    assert alarms(chat(turns, replies))


def test_inline_code_that_changes_each_time_is_no_loop() -> None:
    codes = [r"`^\d{3}-\d{4}$`", r"`^\d{3} \d{4}$`", r"`^\d{3}[- ]?\d{4}$`", r"`^\d{7}$`"]
    replies = [f.format(c=c) for f, c in zip(FRAMINGS[:4], codes, strict=True)]
    turns = ["regex for a phone number"] + ["It doesn't match '555 1234'."] * 3
    assert not alarms(chat(turns, replies))


CODE = "def dedupe(rows):\n    seen = set()\n    return [r for r in rows if r not in seen]\n"


def test_fenced_code_whose_only_change_is_its_comment_is_the_same_code() -> None:
    comments = ["# keep first row per id", "# fixed: preserves order", "  // corrected", "-- final"]
    found = {fenced_code(f"Here's the fix:\n```python\n{c}\n{CODE}```") for c in comments}
    assert len(found) == 1 and None not in found
    # a marker glued to a word is code (a directive, a shebang, a flag), not a comment
    assert fenced_code(f"```\n#include <a.h>\n{CODE}```") != fenced_code(f"```\n{CODE}```")
    assert fenced_code(f"```\n--force\n{CODE}```") != fenced_code(f"```\n{CODE}```")


def test_the_same_code_under_a_new_comment_to_the_same_failure_is_a_loop() -> None:
    comments = ["# keep first", "# fixed: order", "# corrected", "# handles dups", "# final"]
    replies = [f"You're right, here's the fix:\n```python\n{c}\n{CODE}```" for c in comments]
    turns = ["write dedupe"] + ["test_dedupe fails: got 5"] * 4
    assert alarms(chat(turns, replies))


CODE_CHARS = st.text("abxyz()[]{}=<>^$|*+;\\", min_size=6, max_size=30)
FRAME = st.sampled_from(FRAMINGS)


@settings(max_examples=300, deadline=None)
@given(CODE_CHARS, CODE_CHARS, FRAME, FRAME)
def test_replies_handing_back_other_inline_code_never_share_a_key(
    code: str, other: str, frame: str, other_frame: str
) -> None:
    assume("`" not in code + other)
    assume(" ".join(code.split()) != " ".join(other.split()))
    keyer = Keyer()
    first = keyer.model("m", output=frame.format(c=f"`{code}`"))
    second = keyer.model("m", output=other_frame.format(c=f"`{other}`"))
    assert first != second


@settings(max_examples=300, deadline=None)
@given(CODE_CHARS, FRAME, FRAME)
def test_the_same_inline_code_in_any_framing_is_one_reply(
    code: str, frame: str, other_frame: str
) -> None:
    assume(code.strip() and len(code.strip()) >= 6)
    keyer = Keyer()
    first = keyer.model("m", output=frame.format(c=f"`{code}`"))
    second = keyer.model("m", output=other_frame.format(c=f"`{code}`"))
    assert first == second


def test_a_counter_or_a_loggers_time_before_inline_code_is_framing() -> None:
    plain = inline_artefact(f"Sorry, use {REGEX} instead.")
    assert inline_artefact(f"Attempt 3: Sorry, use {REGEX} instead.") == plain
    zh = inline_artefact(f"抱歉，改成 {REGEX}")
    assert inline_artefact(f"第3次尝试：抱歉，改成 {REGEX}") == zh
    assert inline_artefact(f"2026-03-01T00:03:03Z INFO assistant: Sorry, use {REGEX} instead.")
