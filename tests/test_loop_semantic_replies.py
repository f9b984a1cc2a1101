"""The optional comparison of what chat replies mean (``LoopPolicy.reply_embedder``): the
same reply in new words is one reply; a reply that changes a number, a name or its code is
another, however close in meaning; without an embedder (or with a broken one) replies are
compared by their words, as before."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.escape.keys import Keyer
from pytest_agentchaos.escape.loop_policy import LoopPolicy


class Meanings:
    """A stand-in embedder: each text's meaning given by the test (the sentence model's
    job), counting how often it is asked."""

    def __init__(self, meanings: dict[str, Sequence[float]]) -> None:
        self.meanings = meanings
        self.calls: list[str] = []

    def __call__(self, text: str) -> Sequence[float]:
        self.calls.append(text)
        return self.meanings.get(text, [0.0, 0.0, 1.0])


DONE = {
    "en": ["All tasks complete.", "All tasks are complete.", "Everything on the list is done."],
    "zh": ["所有任务都已完成。", "任务全部完成了。", "清单上的事情都做完了。"],
}
CHANGED = {
    "en": ["Monthly churn is 4.2% for the Pro plan.", "Monthly churn is 4.5% for the Pro plan."],
    "zh": ["专业版的月流失率是4.2%。", "专业版的月流失率是4.5%。"],
}


def keys(texts: list[str], embed: Meanings | None) -> list[str]:
    keyer = Keyer(LoopPolicy(reply_embedder=embed))
    return [keyer.model("m", output=t).digest for t in texts]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_same_reply_in_new_words_is_one_reply(lang: str) -> None:
    texts = DONE[lang]
    embed = Meanings({t: [1.0, 0.05 * i, 0.0] for i, t in enumerate(texts)})
    assert len(set(keys(texts, embed))) == 1
    # without an embedder the words decide, and these differ
    assert len(set(keys(texts, None))) > 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_reply_that_changes_a_number_is_another_reply_whatever_it_means(lang: str) -> None:
    texts = CHANGED[lang]
    embed = Meanings(dict.fromkeys(texts, [1.0, 0.0, 0.0]))  # the embedder says: identical
    first, second = keys(texts, embed)
    assert first != second


def test_replies_far_apart_in_meaning_stay_apart() -> None:
    # a tutor asking a new question each turn: close in topic, not in meaning
    texts = ["What is the capital of France?", "Which river runs through Paris?", "Who painted it?"]
    vectors = ([1.0, 0.0, 0.0], [0.8, 0.6, 0.0], [0.8, 0.0, 0.6])  # cosine 0.8 or less
    embed = Meanings(dict(zip(texts, vectors, strict=True)))
    assert len(set(keys(texts, embed))) == 3


@pytest.mark.parametrize("broken", [[], [0.0, 0.0], ["x"], [float("nan"), 1.0], None])
def test_a_broken_embedder_leaves_the_words_to_decide(broken: object) -> None:
    texts = DONE["en"]
    embed = Meanings({})
    embed.meanings = dict.fromkeys(texts, broken)  # type: ignore[arg-type]
    assert keys(texts, embed) == keys(texts, None)


def test_code_is_never_embedded_and_a_text_is_encoded_once() -> None:
    embed = Meanings({})
    keyer = Keyer(LoopPolicy(reply_embedder=embed))
    code = "Here is the fix:\n```python\ndef total(items):\n    return sum(items)\n```"
    for _ in range(3):
        keyer.model("m", output=code)
        keyer.model("m", output="All tasks complete.")
    assert embed.calls == ["All tasks complete."]


def test_the_policy_refuses_an_embedder_that_is_not_callable() -> None:
    with pytest.raises(ChaosConfigError, match="reply_embedder"):
        LoopPolicy(reply_embedder="minilm")  # type: ignore[arg-type]
    with pytest.raises(ChaosConfigError, match="semantic_similarity"):
        LoopPolicy(semantic_similarity=1.5)
    # not a key of [escape.loops]: a profile cannot name a Python callable
    with pytest.raises(ChaosConfigError, match="unknown key 'reply_embedder'"):
        LoopPolicy.from_dict({"reply_embedder": "minilm"})
