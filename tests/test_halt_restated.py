"""The same value, query or call again in another form (issue 29, items 1, 2 and 8): a short
answer restated in other units or rounded, a search query with its words shuffled, an edit
applied and undone in turn. Each with a spiral that halts, a healthy look-alike that does not,
and property tests of the value comparison."""

from __future__ import annotations

from typing import Any

from halt_scaffold import say
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.halt import HaltMonitor
from pytest_agentchaos.halt.quantities import Known, precision, unit_at
from pytest_agentchaos.halt.values import read


def halt_at(steps: list[dict[str, Any]], task: str = "") -> int | None:
    monitor = HaltMonitor(task=task, embedder="lexical", cjk_embedder="lexical")
    for step in steps:
        if monitor.observe(**step).halt:
            return monitor.decision.step
    return None


# -- values in other units and rounded -----------------------------------------------------------


def test_one_length_in_other_units_and_words_is_restated() -> None:
    known = Known()
    first = read("The main span is 1,280 m.")
    assert known.restated([v for _, v in first.numbers], first.quantities) == {}
    for text in ("about 1.28 kilometres", "four thousand two hundred feet", "roughly 0.8 miles"):
        reading = read(text)
        restated = known.restated([v for _, v in reading.numbers], reading.quantities)
        assert set(restated.values()) == {"1280"}, text


def test_another_length_in_the_same_unit_is_news() -> None:
    known = Known()
    for text in ("10 min", "11 min", "1280 m", "1290 m"):
        reading = read(text)
        assert known.restated([v for _, v in reading.numbers], reading.quantities) == {}, text


def test_only_a_number_said_to_be_rounded_restates_a_precise_one() -> None:
    def restated(texts: list[str]) -> list[dict[str, str]]:
        known = Known()
        readings = [read(t) for t in texts]
        return [
            known.restated([v for _, v in r.numbers], r.quantities, r.approximate) for r in readings
        ]

    rounded = ["lag about 1,200", "lag 1.2k", "一千二百左右", "lag ~1200"]
    assert restated(["lag total 1203", *rounded])[1:] == [{"1200": "1203"}] * len(rounded)
    assert restated(["lag total 1203", "page 1200"])[1] == {}  # not said to be rounded
    assert restated(["lag total 1203", "about 1,000"])[1] == {}  # one digit: too round


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 3))
def test_the_next_number_of_a_sequence_is_never_restated(start: int, step: int) -> None:
    """Pages, rows, ids counted up: each is news, round or not."""
    known = Known()
    for n in (start, start + step, start + 2 * step):
        reading = read(f"Imported page {n} ({n} rows).")
        assert (
            known.restated([v for _, v in reading.numbers], reading.quantities, reading.approximate)
            == {}
        )


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10**5), st.sampled_from(["m", "km", "ft", "kg", "lb", "min", "h"]))
def test_a_quantity_converted_and_written_back_is_restated(value: int, unit: str) -> None:
    quantity = unit_at(str(value), f" {unit}")
    assert quantity is not None
    metres = f"{quantity.value / 1000:.6g}" if unit != "km" else str(value * 1000)
    other = {"m": "km", "km": "m", "ft": "m", "kg": "g", "lb": "kg", "min": "s", "h": "s"}[unit]
    factor = {"km": 1000, "m": 1, "g": 0.001, "kg": 1, "s": 1}[other]
    written = f"{quantity.value / factor:.12g}"
    converted = unit_at(written, f" {other}")
    assert converted is not None and metres
    assert abs(converted.value - quantity.value) <= max(converted.tolerance, quantity.tolerance)


def test_precision_is_half_the_last_significant_digit() -> None:
    assert (precision("1280"), precision("1.28"), precision("7")) == (5.0, 0.005, 0.5)


def test_a_chat_restating_one_length_in_other_units_halts() -> None:
    replies = [
        "The main span is 1,280 m (4,200 ft).",
        "That is, the central span measures about 1.28 kilometres.",
        "Put differently: four thousand two hundred feet between the towers.",
        "Roughly 0.8 miles, i.e. 1280 metres, for the main span.",
        "So the answer remains one thousand two hundred eighty meters.",
        "In short: 1.28 km / 4200 ft.",
    ]
    at = halt_at([say(r) for r in replies], task="How long is the bridge's main span?")
    assert at is not None and at >= 2


def test_a_chat_giving_other_lengths_does_not_halt() -> None:
    replies = [
        "The main span is 1,280 m.",
        "The total length with approaches is 2.7 km.",
        "The towers rise 227 m above the water.",
        "The deck clearance is about 67 m at high tide.",
        "Each main cable is 0.92 m thick.",
    ]
    assert halt_at([say(r) for r in replies], task="Give me the bridge's dimensions") is None


# -- a query asked again in other words ----------------------------------------------------------


def test_a_query_shuffled_again_and_again_halts() -> None:
    task = "Find out which PostgreSQL version first shipped the MERGE statement."
    queries = [
        ("Searching for when MERGE landed.", "postgresql MERGE statement first version"),
        ("MERGE is listed under version 15. Double-checking.", "MERGE command added postgres"),
        ("Looking up: first postgres version MERGE", "first postgres version MERGE statement"),
        ("search -> postgres MERGE statement version", "postgres MERGE statement version first"),
        ("Trying: version postgresql first shipped", "version postgresql first shipped MERGE"),
        ("One more angle: MERGE statement postgres", "MERGE statement postgres version first"),
    ]
    steps = [say(out, "web_search", True, args={"q": q}) for out, q in queries]
    assert halt_at(steps, task) is not None


def test_queries_that_each_ask_a_new_word_do_not_halt() -> None:
    task = "Compare the MERGE support of databases."
    queries = ["postgresql MERGE", "mysql MERGE upsert", "sqlite MERGE upsert",
               "oracle MERGE syntax", "sqlserver MERGE syntax", "db2 MERGE syntax"]  # fmt: skip
    steps = [say(f"Searching: {q}", "web_search", True, args={"q": q}) for q in queries]
    assert halt_at(steps, task) is None


# -- a call applied and undone in turn -----------------------------------------------------------


def test_an_edit_applied_and_undone_in_turn_halts_whatever_the_words() -> None:
    add = {"path": "package.json", "op": "add", "key": "type", "value": "module"}
    remove = {"path": "package.json", "op": "remove", "key": "type"}
    steps = [
        say("[attempt 1] Building to see the whole error.", "bash", False, args={"cmd": "build"}),
        say("[attempt 2] Adding type: module to package.json.", "edit_file", True, args=add),
        say("[attempt 3] postcss.config.js breaks now; removing type.", "edit_file", True,
            args=remove),
        say("[attempt 4] The import error is back, adding it again.", "edit_file", True, args=add),
        say("[attempt 5] postcss fails again, taking the field out.", "edit_file", True,
            args=remove),
        say("[attempt 6] Import error again... putting type=module back.", "edit_file", True,
            args=add),
    ]  # fmt: skip
    at = halt_at(steps, task="Fix: Cannot use import statement outside a module")
    assert at is not None and at >= 3


def test_edits_of_other_keys_each_time_do_not_halt() -> None:
    steps = [
        say(f"Setting {key} in package.json.", "edit_file", True,
            args={"path": "package.json", "op": "add", "key": key, "value": str(i)})
        for i, key in enumerate(["type", "main", "exports", "engines", "files", "scripts"])
    ]  # fmt: skip
    assert halt_at(steps, task="Prepare package.json for publishing") is None


# -- a short answer naming the same names --------------------------------------------------------


def test_a_name_restated_short_is_a_repeat_and_other_names_are_not() -> None:
    monitor = HaltMonitor(task="Who owns the payments gateway?", embedder="lexical")
    monitor.observe("The owner is Dana Ortiz.")
    monitor.observe("Reach Dana Ortiz's team for it.")
    last = monitor.watch.history[-1]
    assert not last.new_names  # a possessive is the name
    monitor.observe("The name you need: Dana Ortiz.")
    assert any(s.heuristic == "repetition" and s.strike for s in monitor.decision.signals)
    other = HaltMonitor(task="Who owns the services?", embedder="lexical")
    other.observe("Payments is owned by Dana Ortiz.")
    other.observe("Search is owned by Lee Wong.")
    assert not any(s.strike for s in other.decision.signals if s.heuristic == "repetition")


def test_a_counter_that_stays_put_is_no_news_and_a_new_item_number_is() -> None:
    monitor = HaltMonitor(task="Draft the five sections", embedder="lexical")
    for n in (1, 2, 3):
        monitor.observe(f"Section {n}/5 drafted.", progress=n)
    monitor.observe("Section 3/5 again: polishing the timeline.", progress=3)
    assert not monitor.watch.history[-1].new_info
    other = HaltMonitor(task="Import the pages", embedder="lexical")
    for n in (1, 2, 3, 9):
        other.observe(f"Imported page {n}.", tool="importer", ok=True)
    assert other.watch.history[-1].new_info == {"9"}
