"""The halt monitor on runs it was not written for (issue 29, second round): a loop counter in
a step whose call worked, a capital after a bracketed tag, an error that is only an exit
status, a state that moves on, and one event counted by several heuristics. Each kind with a
spiral that halts and a healthy look-alike that does not, property tests, and must_halt."""

from __future__ import annotations

from typing import Any

import pytest
from halt_scaffold import say
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.halt import HaltMonitor
from pytest_agentchaos.halt.text import names
from pytest_agentchaos.halt.values import loop_place, read, values


def run(steps: list[dict[str, Any]], task: str = "", **kwargs: Any) -> HaltMonitor:
    monitor = HaltMonitor(task=task, embedder="lexical", **kwargs)
    for step in steps:
        if monitor.observe(**step).halt:
            break
    return monitor


def halt_at(steps: list[dict[str, Any]], task: str = "") -> int | None:
    monitor = run(steps, task)
    return monitor.decision.step if monitor.decision.halt else None


# -- loop counters in steps whose call worked -----------------------------------------------------

LOOP_WORDS = ["iter", "loop", "attempt", "round", "step", "try", "retry", "cycle", "turn"]


@given(
    st.sampled_from(LOOP_WORDS),
    st.integers(0, 10**5),
    st.sampled_from(["[{w} {n}]", "{w} #{n}:", "{w}: {n},"]),
)
@settings(max_examples=150, deadline=None)
def test_a_loop_counter_is_no_news_even_where_the_call_worked(
    word: str, start: int, shape: str
) -> None:
    monitor = HaltMonitor(task="t", embedder="lexical")
    for n in (start, start + 1):
        head = shape.format(w=word.capitalize(), n=n)
        monitor.observe(f"{head} dumping the schema again", tool="bash", ok=True)
    assert not monitor.watch.history[-1].new_info


@given(st.sampled_from(["page", "item", "file", "row", "batch", "chapter"]), st.integers(0, 10**5))
@settings(max_examples=100, deadline=None)
def test_the_item_a_worked_call_names_stays_news(noun: str, start: int) -> None:
    monitor = HaltMonitor(task="t", embedder="lexical")
    for n in (start, start + 1):
        monitor.observe(f"Imported {noun} {n}.", tool="importer", ok=True)
    assert monitor.watch.history[-1].new_info


def test_loop_places_in_english_and_chinese() -> None:
    def places(text: str) -> list[bool]:
        return [loop_place(place) for place, _ in read(text).numbers]

    assert places("[iter 5] reading") == [True]
    assert places("step: 9\naction: set") == [True]
    assert places("Attempt #3 failed") == [True]
    assert places("第3轮测试") == [True]
    assert places("重试 3 次") == [True]
    assert places("page 4 of 9") == [False, False]
    assert places("total: 17 items") == [False]


def test_the_same_dump_rerun_under_a_new_iteration_number_halts() -> None:
    dump = {"cmd": "python -m config.schema --dump"}
    words = [
        "Let me try a different approach: dump the schema",
        "Another angle: print the schema",
        "New idea - regenerate the schema output",
        "Switching strategy: emit the schema once more",
        "Different approach this time: look at the schema dump",
        "Once more, the schema dump",
    ]
    steps = [say(f"[iter {i + 3}] {w}.", "bash", True, args=dump) for i, w in enumerate(words)]
    assert halt_at(steps) is not None
    # the same template over other pages: each call's item is its page
    pages = [
        say(f"[iter {i}] Fetched page {i}.", "fetch", True, args={"page": i}) for i in range(12)
    ]
    assert halt_at(pages) is None


# -- names ----------------------------------------------------------------------------------------


def test_a_capital_after_a_bracketed_tag_opens_a_sentence() -> None:
    assert names("[iter 3] Let me look at Vercel") == {"vercel"}
    assert names("(see above) the Usage section") == {"usage"}


def test_a_name_the_run_saw_as_a_value_is_no_news() -> None:
    monitor = HaltMonitor(task="t", embedder="lexical")
    monitor.observe("", tool="pytest", ok=False, error="ImportError: numpy.core.multiarray failed")
    monitor.observe("The multiarray ImportError is back.", tool="edit_file", ok=True)
    assert not monitor.watch.history[-1].new_names


# -- an error that is only an exit status ---------------------------------------------------------


def test_exit_status_failures_are_told_apart_by_what_the_output_says() -> None:
    tsc = {"cmd": "npx tsc --noEmit"}
    flip = [
        say("Cannot find module 'zod/v4'.", "bash", False, error="exit 2", args=tsc),
        say("error TS5095: Option 'bundler' needs 'preserve'.", "bash", False, error="exit 2",
            args=tsc),
    ]  # fmt: skip
    monitor = run(flip)
    failures = [s.failure for s in monitor.watch.history]
    assert failures[0] != failures[1]
    same = run([say("Cannot find module 'zod/v4'.", "bash", False, error="exit 2", args=tsc)] * 3)
    assert same.decision.halt and "tool_failure" in same.decision.fired


# -- a state that moves on ------------------------------------------------------------------------


def test_a_state_never_seen_before_is_progress_though_the_words_repeat() -> None:
    moving = [
        say("Step done, applying the next change.", "apply", True, state={"x": i}) for i in range(8)
    ]
    assert halt_at(moving) is None
    flipping = [say("Applying the change.", "apply", True, state={"x": i % 2}) for i in range(8)]
    assert halt_at(flipping) is not None


def test_checking_a_return_is_part_of_that_return() -> None:
    # undo (back to A), then run the tests in A: one return, one strike of state
    a, b = {"resolution": "node"}, {"resolution": "bundler"}
    steps = [
        say("Reading the config.", "read", True, state=a),
        say("Switching from node to bundler.", "edit", True, state=b),
        say("Reverting to node.", "edit", True, state=a),
        say("Tests fail as before.", "bash", False, error="exit 1", state=a),
    ]
    monitor = run(steps)
    strikes = [s.strike for d in monitor.history for s in d.signals if s.heuristic == "state"]
    assert strikes == [False, False, True, False]


# -- a restated answer worked out once more -------------------------------------------------------


def test_the_same_total_worked_out_again_with_a_new_partial_sum_still_counts() -> None:
    answers = [
        "Items: taxi 86.5, lunch 45 x 2 = 90, hotel 980.",
        "Total: 86.5 + 90 + 980 = 1,156.50.",
        "Checking once more: the three add up to 1,156.5.",
        "The total is confirmed as $1156.5.",
        "Another way: 980 + 90 = 1070, plus 86.5 gives 1156.50.",
        "Final reimbursement total: 1156.5.",
        "So the total stays 1,156.50.",
    ]
    assert halt_at([say(a) for a in answers]) is not None


def test_a_poll_whose_new_count_shares_the_total_is_not_a_restatement() -> None:
    steps = [say("Applying api:v2.14.", "kubectl", True)]
    for ready in (2, 3, 3, 4, 5, 6):
        steps.append(
            say(f"Rollout: {ready} of 6 replicas available.", "status", True, progress=ready)
        )
        steps.append(
            say("Waiting 20 s for the next readiness check.", "sleep", True, progress=ready)
        )
    assert halt_at(steps) is None


def test_each_redo_while_progress_waits_is_a_strike_though_it_repeats_too() -> None:
    query = {"pattern": "time.sleep", "path": "app/"}
    steps = [
        say({"stage": "search", "found": "6 places"}, "rg", True, progress=0, args=query),
        say({"stage": "edit", "file": "app/worker.py", "done": "2/6"}, "edit", True, progress=2),
        say({"stage": "search", "found": "4 left"}, "rg", True, progress=2, args=query),
        say({"stage": "search", "found": "4 left", "note": "double-check"}, "rg", True, progress=2,
            args=query),
        say({"stage": "check", "note": "search again"}, "rg", True, progress=2, args=query),
        say({"stage": "search", "found": "4, as before", "done": "2/6"}, "rg", True, progress=2,
            args=query),
    ]  # fmt: skip
    monitor = run(steps)
    assert monitor.decision.halt and "progress" in monitor.decision.fired


def test_a_counter_past_its_own_total_is_an_item_counted_again() -> None:
    plugins = ["github", "gitlab", "jira", "jenkins", "sonar", "zentao", "feishu", "tapd"]
    steps = [
        say(f"[{n}/8] {name} synced.", "run_pipeline", True, progress=n, args={"plugin": name})
        for n, name in enumerate(plugins[:7], 1)
    ]
    rerun = [say(f"Re-running jenkins, [{n}/8] done.", "run_pipeline", True, progress=n,
                 args={"plugin": "jenkins"}) for n in range(8, 13)]  # fmt: skip
    monitor = run(steps + rerun)
    assert monitor.decision.halt and "progress" in monitor.decision.fired
    assert "past its own total (11 of 8)" in monitor.decision.reason
    # every plugin once: the counter reaches its total and stops there
    done = steps + [
        say("[8/8] tapd synced.", "run_pipeline", True, progress=8, args={"plugin": "tapd"})
    ]
    assert halt_at(done) is None


@given(st.integers(2, 40), st.integers(1, 5))
@settings(max_examples=60, deadline=None)
def test_a_counter_that_stays_within_its_total_never_counts_past_it(total: int, step: int) -> None:
    monitor = HaltMonitor(task="t", embedder="lexical")
    for n in range(0, total + 1, step):
        d = monitor.observe(f"[{n}/{total}] item {n} done.", tool="work", ok=True, progress=n)
        assert not any("past its own total" in s.reason for s in d.signals)


@given(st.integers(1, 4096), st.sampled_from([("KB", "MB"), ("MiB", "GiB"), ("MB", "GB")]))
@settings(max_examples=100, deadline=None)
def test_a_data_size_is_one_value_in_every_unit(n: int, units: tuple[str, str]) -> None:
    small, big = units
    assert (
        values(f"{n * 1024} {small}")
        == values(f"{n} {big}")
        == {str(n * 1024 ** (2 if small[0] == "K" else 3))}
    )


def test_sizes_in_words_and_bytes_and_letters_that_are_no_unit() -> None:
    assert values("two megabytes") == values("2,097,152 bytes") == values("2 MiB") == {"2097152"}
    assert values("5 kB") == {"5000"}  # the SI kilobyte
    assert values("option 3 b") == {"3"}  # a lone b is no unit


def test_the_same_size_restated_in_other_units_halts() -> None:
    steps = [
        say("Checking the file.", "stat", True, args={"path": "data/app.sqlite"}),
        say("data/app.sqlite is 2,097,152 bytes."),
        say("That is 2048 KB."),
        say("In other words, two megabytes (2 MiB) exactly."),
        say("So for the ticket: the database weighs 2 MB."),
    ]
    assert halt_at(steps, task="How big is the sqlite file?") is not None
    sizes = [say(f"Downloaded part {i}: {i * 12} MB of 96 MB.", "fetch", True, progress=i)
             for i in range(1, 9)]  # fmt: skip
    assert halt_at(sizes, task="Download the dataset") is None


# -- one event, several heuristics ----------------------------------------------------------------

_STEP = st.fixed_dictionaries(
    {
        "output": st.sampled_from(
            ["Retrying.", "Back to node.", "Sorry, fixed it.", "Done: 3 rows.", ""]
        ),
        "tool": st.sampled_from([None, "bash", "edit"]),
        "ok": st.sampled_from([None, True, False]),
        "state": st.sampled_from([None, {"x": 1}, {"x": 2}]),
        "progress": st.sampled_from([None, 1, 2]),
    }
)


@given(st.lists(_STEP, min_size=1, max_size=25))
@settings(max_examples=200, deadline=None)
def test_a_halt_always_has_one_pattern_at_its_full_strikes(steps: list[dict[str, Any]]) -> None:
    monitor = HaltMonitor(task="Fix the build", embedder="lexical")
    for step in steps:
        decision = monitor.observe(**step)
        if decision.halt:
            assert any(s.score >= 1.0 and s.strikes >= 3 for s in decision.signals), decision
            break


def test_three_heuristics_at_two_strikes_each_do_not_halt() -> None:
    # a return (state), the failure it brings back (tool_failure) and nothing new (novelty)
    a, b = {"mode": "a"}, {"mode": "b"}
    run_ = {"cmd": "make"}
    steps = [
        say("make: error A in x.c", "bash", False, error="exit 2", args=run_, state=a),
        say("Switching to mode b.", "edit", True, state=b),
        say("make: error B in y.c", "bash", False, error="exit 2", args=run_, state=b),
        say("Back to mode a.", "edit", True, state=a),
        say("make: error A in x.c", "bash", False, error="exit 2", args=run_, state=a),
        say("Mode b again.", "edit", True, state=b),
    ]
    monitor = run(steps)
    assert not monitor.decision.halt, monitor.decision.reason


# -- must_halt ------------------------------------------------------------------------------------

AGENT = """
import pytest
from pytest_agentchaos.halt import HaltMonitor

def run(chaos, answers, tool_result):
    model = chaos.model(lambda prompt: next(answers))
    tool = chaos.wrap(tool_result, name="bash")
    monitor = HaltMonitor.for_run(chaos, task="Find why validate_config rejects empty tags",
                                  embedder="lexical")
    for i in range(1000):
        tool(model("next?"))
        if monitor.decision.halt:
            return monitor
    return monitor
"""


@pytest.mark.parametrize(
    ("answers", "tool_result", "outcome"),
    [
        # a new iteration number and new words each turn, the same dump each time
        ("(f'[iter {i}] A different approach: dump the schema.' for i in range(99))",
         "lambda cmd: 'schema: tags: list[str], min_items=1'", "passed"),
        # the same template, a new page each turn: work
        ("(f'[iter {i}] Fetching page {i}.' for i in range(99))",
         "lambda cmd: cmd.replace('Fetching', 'Fetched')", "failed"),
    ],
)  # fmt: skip
def test_must_halt_with_a_loop_counter_in_every_message(
    pytester: pytest.Pytester, answers: str, tool_result: str, outcome: str
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(agent=AGENT)
    pytester.makepyfile(
        test_a=f"""
        import pytest
        from agent import run

        @pytest.mark.must_halt(max_model_calls=10)
        def test_halts(chaos):
            run(chaos, {answers}, {tool_result})
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(**{outcome: 1})
    if outcome == "failed":
        result.stdout.fnmatch_lines(["*must_halt failed: the agent did not halt on its own*"])
