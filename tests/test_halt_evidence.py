"""Issue 29's halt monitor: information as evidence (values in one writing, counters that are
no news), a logged state, heuristics of your own, failures without error text, structured
outputs, artefacts and restated answers; each kind with a spiral that halts and a healthy
look-alike that does not, hostile input, and must_halt on the new kinds."""

from __future__ import annotations

from typing import Any

import pytest
from halt_scaffold import say
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.halt import HaltMonitor
from pytest_agentchaos.halt.artefacts import artefacts
from pytest_agentchaos.halt.monitor import as_text
from pytest_agentchaos.halt.state import state_key
from pytest_agentchaos.halt.streaks import error_class, signature
from pytest_agentchaos.halt.values import Counters, fold, masked, number, read, values


def halt_at(steps: list[dict[str, Any]], task: str = "", **kwargs: Any) -> int | None:
    monitor = HaltMonitor(task=task, embedder="lexical", **kwargs)
    for i, step in enumerate(steps):
        if monitor.observe(**step).halt:
            return i
    return None


# -- values -------------------------------------------------------------------------------------


def test_a_value_is_the_same_in_every_writing() -> None:
    assert number("1,156.50") == number("1156.5") == "1156.5"
    assert number("twenty-one") == number("二十一") == number("21") == "21"
    assert number("二〇二四") == "2024" and number("三百二十") == "320"
    assert number("壹仟壹佰伍拾陆") == "1156" and number("hello") is None
    assert values("The total is 42 dollars.") == values("合计 42 元") == {"42"}
    assert values("最终：一千一百五十六元五角") == values("Total: $1,156.50") == {"1156.5"}
    assert "date_20240316" in values("Due March 16, 2024") & values("截止 2024年3月16日")
    assert values("也就是三月十六号") == {"md_0316"} <= values("ISO: 2024-03-16")


def test_enumerations_and_volatile_tokens_are_no_values() -> None:
    assert values("第一步 读取；第二步 解析；第三步 保存") == frozenset()
    assert values("Step one: read. Step two: parse.") == frozenset()
    assert values("1. fetch\n2. parse\n3. save") == frozenset()
    assert values("took 1.52s at 12:03:44, id 550e8400-e29b-41d4-a716-446655440000") == set()
    assert values("Waiting 60 s before checking again.") == {"60"}  # a wait is a value


def test_full_width_punctuation_does_not_glue_a_path_to_a_number() -> None:
    assert fold("app.py，3 个错误") == "app.py, 3 个错误"
    assert {"app.py", "3"} <= values("见 app.py，3 个错误")


def test_quoted_text_is_its_words_in_any_order() -> None:
    assert values('search "tax rate california 2023"') == values(
        'search "california 2023 tax rate"'
    )


def test_a_counter_that_rises_by_one_is_no_news() -> None:
    counters = Counters()
    assert counters.drop(0, read("[loop 1] checking auth.py").numbers) == frozenset()
    assert counters.drop(1, read("[loop 2] checking auth.py").numbers) == {"2"}
    assert counters.drop(2, read("[loop 3] checking auth.py, 48 rows").numbers) == {"3"}


@given(st.text(max_size=200))
@settings(max_examples=200, deadline=None)
def test_folding_and_masking_are_idempotent(text: str) -> None:
    assert fold(fold(text)) == fold(text)
    assert masked(masked(text)) == masked(text)


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(["attempt", "loop", "第"]))
@settings(max_examples=50, deadline=None)
def test_a_counter_only_difference_never_counts_as_new_information(start: int, word: str) -> None:
    monitor = HaltMonitor(embedder="lexical")
    for i in range(3):
        monitor.observe(f"{word} {start + i}: I will look into the failing import")
    assert not monitor.watch.history[-1].new_info


# -- kinds: spirals that halt, look-alikes that do not ---------------------------------------------


def test_a_counter_in_every_message_does_not_hide_a_repeat() -> None:
    steps = [say(f"[iteration {i}] Let me try a different approach to the config parser.")
             for i in range(1, 8)]  # fmt: skip
    assert halt_at(steps) is not None


def test_the_same_answer_restated_in_other_writings_halts() -> None:
    steps = [
        say("分项：打车 86.5，午餐 90，酒店 980。"),
        say("合计：1,156.50 元。"),
        say("再核对一遍：一千一百五十六元五角。"),
        say("总额确认为 ¥1156.5，和上面一致。"),
        say("最终报销总额：壹仟壹佰伍拾陆元伍角整。"),
        say("结论不变：1156.5 元。"),
    ]
    assert halt_at(steps, "算报销总额") is not None
    healthy = [say(f"第 {i} 张发票：{100 + 7 * i} 元，累计 {sum(range(i + 1)) * 7} 元。")
               for i in range(1, 9)]  # fmt: skip
    assert halt_at(healthy, "算报销总额") is None


def test_a_paraphrase_with_rising_progress_and_the_same_items_still_counts() -> None:
    steps = [
        say("Applying the edit to config.py now.", "edit", True, progress=1,
            args={"path": "config.py"}),
    ] + [
        say(text, "edit", True, progress=i + 2, args={"path": "config.py"})
        for i, text in enumerate([
            "Re-applying the change to config.py.",
            "Making the config.py edit once more.",
            "Doing the config.py update again.",
            "Editing config.py one more time.",
        ])
    ]  # fmt: skip
    assert halt_at(steps, "Edit config.py") is not None


def test_a_state_that_alternates_halts_and_one_that_moves_on_does_not() -> None:
    boards = [{"x": 1}, {"x": 2}] * 4
    steps = [say("Trying the other setting.", "apply", True, state=b) for b in boards]
    assert halt_at(steps) is not None
    moving = [say(f"Step {i}: moved.", "apply", True, state={"x": i}) for i in range(8)]
    assert halt_at(moving) is None


def test_a_state_standing_still_while_progress_rises_contradicts_the_counter() -> None:
    steps = [say(f"Applied edit number {i}.", "edit", True, progress=i, state={"hash": "ab12"})
             for i in range(8)]  # fmt: skip
    monitor = HaltMonitor(embedder="lexical")
    decisions = [monitor.observe(**s) for s in steps]
    assert any(d.halt for d in decisions)
    assert any(s.heuristic == "state" and s.strike for d in decisions for s in d.signals)


def test_a_failure_without_error_text_reworded_is_the_same_failure() -> None:
    outputs = [
        "FAILED tests/test_money.py::test_half_even (got 2.67, want 2.68).",
        "Still one red test: the rounding case returns 2.67 instead of 2.68.",
        "test_half_even keeps failing: expected 2.68, received 2.67.",
        "Same outcome: 2.67 vs 2.68 on the half-even case.",
    ]
    steps: list[dict[str, Any]] = []
    for i, out in enumerate(outputs):
        steps.append(say(out, "pytest", False, args={"k": "money"}))
        steps.append(say(f"Trying fix {i}.", "edit_file", True))
    assert halt_at(steps, "make test_money pass") is not None


def test_a_shrinking_failure_count_without_error_text_is_work() -> None:
    steps: list[dict[str, Any]] = []
    for failed in (9, 7, 5, 3, 2, 1):
        steps.append(say(f"{failed} failed, {20 - failed} passed", "pytest", False, args={}))
        steps.append(say("Fixing the next failure.", "edit_file", True))
    assert halt_at(steps, "make the tests pass") is None


def test_an_error_class_is_recognised_inside_varying_wording() -> None:
    assert error_class("upstream returned 503 Service Unavailable") == "http:503"
    assert error_class("Error: status code 503") == "http:503"
    assert error_class("bash: mvn: command not found") == error_class("/bin/sh: 1: mvn: not found")
    assert signature("HTTP 503 (request id 8f3a9c2b11)") == signature("got 503 Service Unavailable")
    assert signature("ModuleNotFoundError: No module named 'yaml'") != signature(
        "ModuleNotFoundError: No module named 'toml'"
    )


def test_chat_only_apologies_handing_back_the_same_code_halt() -> None:
    code = "```sql\nSELECT region, SUM(total) FROM orders GROUP BY 1;\n```"
    steps = [
        say(f"{opener} Here is the corrected query:\n{code}")
        for opener in ("Sorry about that!", "My apologies, I see the issue now.",
                       "You're right, I made an error.", "Apologies again, this one works:",
                       "I understand the frustration.")
    ]  # fmt: skip
    assert artefacts(steps[0]["output"]) == artefacts(steps[1]["output"])
    assert halt_at(steps, "Total sales per region") is not None


def test_structured_outputs_are_read_as_their_fields() -> None:
    assert as_text({"thought": "check", "action": {"tool": "ls", "args": ["-l"]}}) == (
        "thought: check\ntool: ls\nargs: -l"
    )
    assert as_text('{"a": 1}') == "a: 1" and as_text("{not json") == "{not json"
    steps = [say({"thought": "I should check the log again", "action": "read_log"})] * 5
    assert halt_at(steps) is not None


def test_react_format_words_keep_nothing_on_topic() -> None:
    steps = [
        say("Thought: run the failing test\nAction: bash\nObservation: week 53 parses wrong",
            "bash", False, error="1 failed"),
        say("Thought: parse_date uses %W\nAction: read_file\nObservation: parse.py line 41",
            "read_file", True),
    ] + [
        say(f"Thought: {topic}\nAction: edit_file\nObservation: saved", "edit_file", True)
        for topic in ("the docs theme looks dated", "switch the stylesheet colours",
                      "reformat the changelog headings", "add a badge row to the readme",
                      "tidy the contributor guide")
    ]  # fmt: skip
    assert halt_at(steps, "Fix parse_date for ISO week 53") is not None


# -- heuristics of your own ------------------------------------------------------------------


def test_a_heuristic_of_your_own_strikes_like_a_built_in() -> None:
    def slow_tool(step: Any, history: Any) -> str | None:
        return "the tool took too long" if step.tool == "slow" else None

    steps = [say(f"Call {i}", "slow", True, args={"i": i}) for i in range(5)]
    monitor = HaltMonitor(embedder="lexical", heuristics=[slow_tool])
    decisions = [monitor.observe(**s) for s in steps]
    halted = next(d for d in decisions if d.halt)
    assert halted.step == 2 and halted.fired[0] == "slow_tool" and "too long" in halted.reason


def test_wrong_heuristics_are_clear_errors() -> None:
    def repetition(step: Any, history: Any) -> None:
        return None

    with pytest.raises(TypeError, match="list of callables"):
        HaltMonitor(embedder="lexical", heuristics="mine")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not callable"):
        HaltMonitor(embedder="lexical", heuristics=[42])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="built-in"):
        HaltMonitor(embedder="lexical", heuristics=[repetition])
    with pytest.raises(ValueError, match="lambda"):
        HaltMonitor(embedder="lexical", heuristics=[lambda s, h: None])
    bad = HaltMonitor(embedder="lexical", heuristics=[_returns_a_number])
    with pytest.raises(TypeError, match="returned 3"):
        bad.observe("x")


def _returns_a_number(step: Any, history: Any) -> int:
    return 3


# -- hostile input -----------------------------------------------------------------------------


class Hostile:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    __str__ = __repr__


def test_outputs_and_states_that_fight_back_are_read_with_bounded_work() -> None:
    monitor = HaltMonitor(embedder="lexical")
    monitor.observe(Hostile(), state=Hostile())
    recursive: dict[str, Any] = {"a": [1, 2]}
    recursive["self"] = recursive
    monitor.observe("ok", state=recursive)
    monitor.observe("ok", state={frozenset({1}): {1, 2}, "l": [[]] * 3})
    # 100 MB of text and a 2M-item state are read by their heads (what that costs against
    # prose: bench/bench_hostile_text.py)
    decision = monitor.observe("x" * 100_000_000, state=list(range(2_000_000)))
    assert decision.step == 3 and monitor.observe({"k": "y" * 50_000_000}).step == 4
    assert state_key(recursive) == state_key(recursive)


@given(st.recursive(st.none() | st.integers() | st.text(max_size=5),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c,
                                                                         max_size=3),
                    max_leaves=10).filter(lambda s: s is not None))  # fmt: skip
@settings(max_examples=100, deadline=None)
def test_state_recurrence_is_symmetric(state: Any) -> None:
    """A, B, A strikes as B, A, B does (None is no state: not logged)."""
    other = {"other": True}
    a = HaltMonitor(embedder="lexical")
    b = HaltMonitor(embedder="lexical")
    for s in (state, other, state):
        da = a.observe("same words", state=s)
    for s in (other, state, other):
        db = b.observe("same words", state=s)
    strike = [x.strike for x in da.signals if x.heuristic == "state"]
    assert strike == [x.strike for x in db.signals if x.heuristic == "state"]


# -- must_halt on the new kinds --------------------------------------------------------------------

AGENT = """
import pytest
from pytest_agentchaos.halt import HaltMonitor

def run(chaos, answers, states=None, task="Fix the flaky test"):
    model = chaos.model(lambda prompt: next(answers))
    monitor = HaltMonitor(task=task, embedder="lexical")
    for i in range(1000):
        out = model("next?")
        d = monitor.observe(out, state=states[i % len(states)] if states else None)
        if d.halt:
            chaos.session.record_halt = None
            return d
    return None
"""


@pytest.mark.parametrize(
    ("answers", "states", "outcome"),
    [
        # a loop counter in every message: the same answer, halted by the monitor
        ("(f'[attempt {i}] Let me try a different approach.' for i in range(99))", "None",
         "passed"),
        # the board flips between two states while the words vary
        ("(f'Trying the idea number {i} now with care.' for i in range(99))",
         "[{'x': 1}, {'x': 2}]", "passed"),
        # real progress: every answer names a new value, the state moves on
        ("(f'Fixed test_{i}.py, {i} done.' for i in range(99))", "None", "failed"),
    ],
)  # fmt: skip
def test_must_halt_on_the_new_kinds(
    pytester: pytest.Pytester, answers: str, states: str, outcome: str
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(agent=AGENT)
    pytester.makepyfile(
        test_a=f"""
        import pytest
        from agent import run

        @pytest.mark.must_halt(max_model_calls=12)
        def test_halts(chaos):
            assert run(chaos, {answers}, {states}) is not None or True
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(**{outcome: 1})
