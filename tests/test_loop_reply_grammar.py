"""A chat reply re-said in another tense or number is the same reply (issue 29, "done"
replies reworded): "All tasks complete.", "All tasks are complete." and "All tasks have been
completed." say one thing, so an auto-continue loop answering them in turn repeats. Grammar
words and regular inflections are folded; negations, numbers, names and the question mark
are not, so a reply that changes what it says stays another reply."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.escape.observer import detect_loops
from pytest_agentchaos.escape.replies import _GRAMMAR_WORDS, ReplyTexts, _said
from pytest_agentchaos.escape.texts import text_shingles
from pytest_agentchaos.trace.events import ModelCall, ModelResult, RunEnded

DONE = [
    "All tasks complete.",
    "All tasks are complete.",
    "All tasks complete!",
    "All tasks have been completed.",
    "All tasks are complete.",
    "All tasks complete.",
]


def test_a_done_reply_in_other_tenses_is_one_reply() -> None:
    texts = ReplyTexts(0.8)
    assert len({texts.key(t) for t in DONE}) == 1


def test_an_auto_continue_loop_answering_done_in_new_tenses_is_found() -> None:
    events: list = []
    turns = ["Release chores for 2.4.0: bump badges.", *["continue"] * len(DONE)]
    outputs = ["Bumped the version badge to 2.4.0 and drafted the changelog.", *DONE]
    for i, (turn, output) in enumerate(zip(turns, outputs, strict=True)):
        events.append(ModelCall(step=i, t=float(i), model="m", index=i, input=turn))
        events.append(ModelResult(step=i, t=float(i), model="m", index=i, output=output))
    events.append(RunEnded(step=len(turns), t=float(len(turns))))
    assert [d for d in detect_loops(events) if d.kind == "loop"]


def test_what_a_reply_says_is_not_folded_away() -> None:
    texts = ReplyTexts(0.8)
    said = [
        "All tasks are complete.",
        "All tasks are not complete.",  # a negation
        "Two tasks are complete.",  # a quantity
        "Is the build green?",
        "The build is green.",  # the answer to the question is not the question
        "Deploy 2.4.1 is done.",
        "Deploy 2.4.2 is done.",  # a number
        "Uploading the report to the archive now.",
        "Uploaded the report to the archive.",  # under way, then done (review)
    ]
    keys = [texts.key(t) for t in said]
    assert len(set(keys)) == len(keys)


def test_a_text_of_grammar_words_alone_keeps_them() -> None:
    assert _said("It has been.")[0] == frozenset({"it"})
    assert _said("Has been.")[0] == frozenset({"has", "been"})


WORDS = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=10).filter(
    lambda w: w not in _GRAMMAR_WORDS
)


@settings(max_examples=200, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=10), st.sampled_from(["is", "are", "was", "the"]))
def test_grammar_words_never_decide_and_values_always_do(words: list[str], grammar: str) -> None:
    """Adding a grammar word changes nothing; the values (numbers, names) are kept as
    :func:`text_shingles` reads them."""
    text = " ".join(words)
    assert _said(f"{grammar} {text}")[0] == _said(text)[0]
    for said in (text, f"12 {text}", f"{text} v2.4.1"):
        assert _said(said)[1] == text_shingles(said)[1]


def test_hostile_texts_do_not_raise() -> None:
    for text in ["", "?", "\x00" * 10, "is " * 100_000, "ed" * 50_000, "🙂" * 1000]:
        words, values = _said(text)
        assert isinstance(words, frozenset) and isinstance(values, frozenset)
