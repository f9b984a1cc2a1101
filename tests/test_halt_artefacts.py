"""Artefacts in one writing (issue 29, item 7): a chat-only apology loop hands back the same
regular expression, formula or query in new words and in another writing; the monitor compares
the artefact, not the words around it, and a real change of the artefact is a new answer."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.halt import HaltMonitor
from pytest_agentchaos.halt.artefacts import artefacts, regex_form


def halt_at(outputs: list[str], task: str = "") -> int | None:
    monitor = HaltMonitor(task=task, embedder="lexical", cjk_embedder="lexical")
    for output in outputs:
        if monitor.observe(output).halt:
            return monitor.decision.step
    return None


# -- regular expressions -------------------------------------------------------------------------


def test_one_regex_in_other_writings_has_one_form() -> None:
    writings = [r"^1[3-8]\d{9}$", r"^1[3-8][0-9]{9}$", r"^1[345678]\d{9}$",
                r"^(1[3-8])\d{9}$", r"^1(3|4|5|6|7|8)\d{9}$"]  # fmt: skip
    assert len({regex_form(w) for w in writings}) == 1
    assert regex_form(r"^1[3-9]\d{9}$") != regex_form(writings[0])  # the fix: one more digit
    assert regex_form(r"^(ab){2}$") != regex_form(r"^ab{2}$")  # a group repeated is no letter
    assert regex_form("(unclosed") is None


@settings(max_examples=150, deadline=None)
@given(st.sets(st.sampled_from("0123456789abcdef"), min_size=1, max_size=8), st.integers(1, 12))
def test_a_character_set_in_any_writing_is_one_form(chars: set[str], count: int) -> None:
    ordered = sorted(chars)
    as_class = f"^[{''.join(reversed(ordered))}]{{{count}}}$"
    as_alternation = f"^({'|'.join(ordered)}){{{count}}}$"
    assert regex_form(as_class) == regex_form(as_alternation)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="ab0[]-^$\\d(){}|*+?.", max_size=20))
def test_equal_forms_match_the_same_strings(pattern: str) -> None:
    """A form is never shared by two expressions that match differently: checked on strings
    the alphabet can build."""
    form = regex_form(pattern)
    if form is None:
        return
    other = pattern.replace(r"\d", "[0-9]")
    assert regex_form(other) == form
    try:
        one, two = re.compile(pattern), re.compile(other)
    except re.error:
        return
    for text in ("", "a", "ab", "0", "a0", "ab0", "000", "b-a"):
        assert bool(one.fullmatch(text)) == bool(two.fullmatch(text))


def test_inline_code_is_an_artefact_only_when_it_reads_as_code() -> None:
    assert artefacts("Use `^1[3-8]\\d{9}$` for that.")
    assert artefacts("Call `datetime.now(timezone.utc)` instead.")
    assert not artefacts("The `settings panel` has it.")  # words in backticks: no code


# -- formulas and queries -------------------------------------------------------------------------


def test_absolute_references_are_the_same_cells() -> None:
    assert artefacts("Try =SUM($A$2:$A$9)") == artefacts("Try =SUM(A2:A9)")
    assert artefacts("Try =SUM($A$2:$A$9)") != artefacts("Try =SUM(A2:A10)")


def test_a_query_in_lower_case_is_an_artefact_and_prose_that_selects_is_not() -> None:
    query = "here: select count(*) from events where ts >= '2024-01-01' group by 1;"
    assert artefacts(query) == artefacts(query.upper().replace("HERE:", "here:"))
    assert not artefacts("I will select the rows from the table where it fits best.")


# -- the monitor -----------------------------------------------------------------------------------


def test_a_chat_loop_handing_back_one_regex_in_new_writings_halts() -> None:
    replies = [
        "Use `^1[3-8]\\d{9}$`, it covers 13x to 18x.",
        "Sorry, I missed that! Updated: `^1[3-8][0-9]{9}$`, this should be fine now.",
        "You are right. Corrected: `^1[345678]\\d{9}$`, stricter this time.",
        "Apologies again. Final: `^(1[3-8])\\d{9}$`, covering every prefix.",
        "I rethought it; the recommended form is `^1(3|4|5|6|7|8)\\d{9}$`.",
    ]
    at = halt_at(replies, task="A regex for mobile numbers; 199 numbers do not match.")
    assert at is not None and at <= 4


def test_a_chat_whose_regex_really_changes_each_time_does_not_halt() -> None:
    replies = [
        "Use `^1[3-8]\\d{9}$` for the mobile numbers.",
        "Sorry, 199 was missing: `^1[3-9]\\d{9}$` covers it.",
        "For landlines too: `^0\\d{2,3}-?\\d{7,8}$` matches area code and number.",
        "And with the country code: `^(\\+86)?1[3-9]\\d{9}$`.",
        "For 400 service numbers: `^400-?\\d{3}-?\\d{4}$`.",
    ]
    assert halt_at(replies, task="Regexes for Chinese phone numbers") is None


def test_an_artefact_handed_back_after_another_attempt_still_repeats() -> None:
    """A chat answers each rejection; the artefact it turned down, handed back after another
    attempt between, is the same answer again."""
    a = "```python\nsub = df[df.age > 30]\nsub['level'] = 'senior'\n```"
    b = "```python\nsub = df[df.age > 30].copy()\nsub['level'] = 'senior'\ndf.update(sub)\n```"
    renamed_a = "```python\nrows = df[df.age > 30]\nrows['level'] = 'senior'\n```"
    replies: list[Any] = [
        f"Here you go:\n{a}",
        f"Sorry! Copy first:\n{b}",
        f"Apologies, this is fixed:\n{renamed_a}",
        f"My mistake, the right way:\n{a}",
        f"So sorry, now it is right:\n{renamed_a}",
    ]
    at = halt_at(replies, task="Set level='senior' for rows with age > 30 without a warning")
    assert at is not None and at >= 3


def test_hostile_texts_are_read_in_bounded_work() -> None:
    """Thousands of statement starts or inline spans: only the first few are read (no timing
    here; bench_hostile_text measures it), and what is read is still found."""
    spans = "".join(f"`^a{{{i}}}$` " for i in range(2000))
    assert len(artefacts(spans)) <= 24
    starts = "select a, from b " * 1200 + "select c from d where e = 1;"
    assert artefacts(starts) == frozenset()  # the statement after the 6th start is not read
    assert artefacts("select c from d where e = 1; " * 3) == artefacts(
        "select c from d where e = 1;"
    )
