"""The output faults of the semantic spiral: ``repeated_output`` on model calls,
``stale_output`` (an older output, as from a cache that stopped refreshing) and
``paraphrased_output`` (the previous answer in other words)."""

from __future__ import annotations

import json
import re

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos import ChaosConfigError
from pytest_agentchaos.faults import KINDS, parse_faults
from pytest_agentchaos.faults.paraphrase import corpus, paraphrase, paraphrase_value
from pytest_agentchaos.inject.chaos import Chaos


class Source:
    """A tool whose every real call returns something new."""

    def __init__(self) -> None:
        self.calls = 0

    def fetch(self, url: str) -> dict[str, object]:
        self.calls += 1
        return {"url": url, "version": self.calls}


# -- repeated_output on model calls -------------------------------------------------------


def test_repeated_output_reaches_model_calls(make_chaos):
    answers = iter(["Plan: search flights.", "Plan: book the 9:40 to Oslo."])
    asked = []

    def model(prompt: str) -> str:
        asked.append(prompt)
        return next(answers)

    chaos = make_chaos({"kind": "repeated_output", "nth": 2})
    llm = chaos.model(model)
    first = llm("where to?")
    assert llm("and now?") == first  # the model was not asked again
    assert asked == ["where to?"]
    results = chaos.trace.model_results()
    assert [r.output for r in results] == [first, first]
    assert chaos.trace.faults()[0].channel == "model"


# -- stale_output ---------------------------------------------------------------------------


def test_stale_output_returns_the_first_output_without_running_the_tool(make_chaos):
    src = Source()
    chaos = make_chaos({"kind": "stale_output", "first": 4})
    fetch = chaos.wrap(src.fetch)
    # the first two calls: no output older than the previous one yet, so they run
    assert [fetch("a")["version"], fetch("b")["version"]] == [1, 2]
    assert fetch("c") == {"url": "a", "version": 1}  # no error, just old
    assert fetch("d") == {"url": "a", "version": 1}
    assert src.calls == 2
    assert [r.ok for r in chaos.trace.tool_results()] == [True] * 4
    assert [f.detail for f in chaos.trace.faults()] == [{"age": "first"}] * 2


def test_stale_output_by_age_counts_back_from_the_latest(make_chaos):
    src = Source()
    chaos = make_chaos({"kind": "stale_output", "age": 3, "nth": 5})
    fetch = chaos.wrap(src.fetch)
    versions = [fetch(str(i))["version"] for i in range(5)]
    assert versions == [1, 2, 3, 4, 2]  # the 3rd most recent of 1, 2, 3, 4
    assert src.calls == 4


def test_stale_output_waits_for_an_output_old_enough(make_chaos):
    src = Source()
    chaos = make_chaos({"kind": "stale_output", "age": 4})
    fetch = chaos.wrap(src.fetch)
    versions = [fetch("x")["version"] for _ in range(6)]
    assert versions == [1, 2, 3, 4, 1, 2]
    assert [f.index for f in chaos.trace.faults()] == [5, 6]


def test_stale_output_on_http_returns_the_old_response(make_chaos):
    chaos = make_chaos({"kind": "stale_output", "nth": 3})
    counter = iter(range(1, 100))
    chaos.http.get("https://api.test/price").mock(
        side_effect=lambda request: httpx.Response(200, json={"price": next(counter)})
    )
    with httpx.Client() as client:
        prices = [client.get("https://api.test/price").json()["price"] for _ in range(3)]
    assert prices == [1, 2, 1]


def test_stale_output_replays_from_a_schedule(make_chaos):
    src = Source()
    first = make_chaos({"kind": "stale_output", "age": 2, "probability": 0.5}, seed=11)
    fetch = first.wrap(src.fetch)
    seen = [fetch("q")["version"] for _ in range(12)]
    assert first.trace.faults()
    again = Source()
    replay = Chaos.create(schedule=first.trace.schedule())
    try:
        fetch2 = replay.wrap(again.fetch)
        assert [fetch2("q")["version"] for _ in range(12)] == seen
    finally:
        replay.close()


@pytest.mark.parametrize(
    ("age", "message"),
    [
        (1, "1 is repeated_output"),
        (0, "from 2 to 20"),
        (21, "from 2 to 20"),
        ("last", '"first" or a whole number'),
        (True, '"first" or a whole number'),
        (2.5, '"first" or a whole number'),
    ],
)
def test_a_bad_stale_age_names_the_fault_and_what_is_allowed(age, message):
    with pytest.raises(ChaosConfigError) as exc:
        parse_faults([{"kind": "stale_output", "age": age}], "faults")
    assert str(exc.value).startswith("faults[0]")
    assert message in str(exc.value)


# -- paraphrased_output ---------------------------------------------------------------------


def test_paraphrased_output_returns_the_previous_answer_in_other_words(make_chaos):
    answers = iter(["I'm still looking into why the build fails."] + ["unused"] * 10)
    asked = []

    def model(prompt: str) -> str:
        asked.append(prompt)
        return next(answers)

    chaos = make_chaos({"kind": "paraphrased_output", "first": 5})
    llm = chaos.model(model)
    outputs = [llm(f"turn {i}") for i in range(5)]
    assert asked == ["turn 0"]  # every later answer is a paraphrase, the model is not asked
    assert len(set(outputs)) >= 3  # not an exact repeat: an exact-digest check misses it
    for a, b in zip(outputs, outputs[1:], strict=False):
        assert a != b
    assert [r.output for r in chaos.trace.model_results()] == outputs


def test_paraphrased_output_is_the_same_under_the_same_seed(make_chaos):
    def run(seed: int) -> list[str]:
        chaos = make_chaos({"kind": "paraphrased_output", "probability": 0.7}, seed=seed)
        llm = chaos.model(lambda p: "Sorry, the tool returned an error, let me try again.")
        return [llm(str(i)) for i in range(8)]

    assert run(3) == run(3)


def test_paraphrased_output_keeps_the_shape_of_a_structured_answer(make_chaos):
    reply = {
        "id": "msg_01",
        "role": "assistant",
        "content": [{"type": "text", "text": "It seems the file is missing, let me check again."}],
        "usage": {"input_tokens": 12, "output_tokens": 9},
    }
    chaos = make_chaos({"kind": "paraphrased_output", "nth": 2})
    llm = chaos.model(lambda prompt: json.loads(json.dumps(reply)))
    llm("a")
    second = llm("b")
    assert second["id"] == "msg_01" and second["role"] == "assistant"
    assert second["content"][0]["type"] == "text"
    assert second["content"][0]["text"] != reply["content"][0]["text"]
    assert second["usage"] == reply["usage"]


def test_paraphrased_output_cannot_target_http():
    with pytest.raises(ChaosConfigError, match="cannot apply to channels"):
        parse_faults([{"kind": "paraphrased_output", "channels": ["http"]}], "faults")
    assert set(KINDS["paraphrased_output"].channels) == {"model", "tool"}


def test_an_answer_from_the_corpus_becomes_another_answer_of_its_group():
    en = corpus("en")
    group = next(iter(en.answers.values()))
    out = paraphrase(group[0], 1)
    assert out in group and out != group[0]


def test_chinese_text_is_paraphrased_in_chinese():
    text = "抱歉，我再试一次，看看能不能找到这个文件。"
    out = paraphrase(text, 0)
    assert out != text
    assert re.search(r"[\u4e00-\u9fff]", out)
    assert not re.search(r"[A-Za-z]{3,}", out)


def test_frames_are_swapped_never_stacked():
    text = "Qz vb wx"  # no phrase of the corpus: only a frame can change it
    out = text
    for variant in range(12):
        out = paraphrase(out, variant)
        assert out.lower().count("qz vb wx") == 1
        assert len(out) < len(text) + 60


def test_identifiers_numbers_urls_and_objects_are_left_alone():
    assert paraphrase_value("req_8812") == "req_8812"
    assert paraphrase_value("42") == "42"
    assert paraphrase_value("https://example.com/a b") == "https://example.com/a b"
    obj = object()
    assert paraphrase_value(obj) is obj
    assert paraphrase_value({"url": "see the docs here"}) == {"url": "see the docs here"}


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1, max_size=200), st.integers(min_value=0, max_value=10_000))
def test_a_paraphrase_never_equals_its_text(text, variant):
    out = paraphrase(text, variant)
    if text.strip():
        assert out != text
        assert paraphrase(text, variant) == out  # it depends only on text and variant
    else:
        assert out == text


@settings(max_examples=60, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=40),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=20,
    ),
    st.integers(min_value=0, max_value=999),
)
def test_paraphrase_value_keeps_the_structure(value, variant):
    def shape(v):
        if isinstance(v, dict):
            return {k: shape(x) for k, x in v.items()}
        if isinstance(v, list):
            return [shape(x) for x in v]
        return type(v).__name__

    assert shape(paraphrase_value(value, variant)) == shape(value)


def test_a_run_keeps_only_the_outputs_its_faults_can_replay():
    from pytest_agentchaos.faults import FaultPlan

    def plan(*faults):
        return FaultPlan(parse_faults(list(faults), "faults"), seed=1)

    none, repeat = plan({"kind": "timeout"}), plan({"kind": "repeated_output"})
    assert (none.depth, none.keeps_first) == (0, False)
    assert (repeat.depth, repeat.keeps_first) == (1, False)
    stale = plan({"kind": "stale_output"}, {"kind": "stale_output", "age": 7})
    assert (stale.depth, stale.keeps_first) == (7, True)
