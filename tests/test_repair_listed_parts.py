"""A part of a text value the tool's error quotes and refuses, beside the values it accepts
there (issue 30, valid_tool_error: the error points at a part of a query or filter and lists
the accepted values). The one listed value that is the same word inflected replaces the part;
another word, or several inflections, is no repair."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.repair.listed_parts import listed_part


def _spec(name: str) -> ToolSpec:
    return ToolSpec.from_schema(
        "t",
        {
            "type": "object",
            "properties": {name: {"type": "string", "description": "an expression"}},
            "required": [name],
        },
    )


def _github_422(field: str, message: str) -> str:
    """A GitHub-style 422 body: the field named, the refusal in the error's message."""
    error = {"message": message, "resource": "Search", "field": field, "code": "invalid"}
    return json.dumps({"message": "Validation Failed", "errors": [error], "status": "422"})


def test_a_search_qualifier_takes_the_listed_form_of_its_word() -> None:
    error = _github_422(
        "q", "'opening' is not a valid value for the 'state' qualifier (open, closed)"
    )
    result = ParamRepairer(_spec("q")).repair(
        {"q": "is:issue state:opening crash"}, error, "open issues about the crash"
    )
    assert result.ok and result.args == {"q": "is:issue state:open crash"}


def test_a_filter_attribute_takes_the_listed_plural() -> None:
    error = json.dumps(
        {
            "message": "Attribute `author` is not filterable. Available filterable attributes "
            "are: `authors, year, language`.",
            "code": "invalid_search_filter",
        }
    )
    result = ParamRepairer(_spec("filter")).repair(
        {"filter": "author = tolkien AND year > 1950"}, error, "Books by Tolkien after 1950."
    )
    assert result.ok and result.args == {"filter": "authors = tolkien AND year > 1950"}


@pytest.mark.parametrize(
    ("value", "error"),
    [
        # another word, not an inflection: which one the user meant is not the error's to say
        ("state:shut bug", "'shut' is not a valid value for the 'state' qualifier (open, closed)"),
        # two listed values inflect the part: no one value
        ("kind:box x", "'box' is not a valid value for the 'kind' qualifier (boxes, boxed)"),
        # an ending English spelling does not give: car/card, bus/buss, tag/tages
        ("format:car x", "'car' is not a valid value for the 'format' qualifier (card, list)"),
        ("kind:bus x", "'bus' is not a valid value for the 'kind' qualifier (buss, car)"),
        ("kind:tag x", "'tag' is not a valid value for the 'kind' qualifier (tages, open)"),
        # a one-syllable consonant-vowel-consonant word doubles its last letter: "stared" is
        # stare's past, not star's
        ("is:star x", "'star' is not a valid value for the 'is' qualifier (stared, open)"),
        ("is:stared x", "'stared' is not a valid value for the 'is' qualifier (star, open)"),
        # the part twice in the value: which place is refused is not said
        ("tag:tag x", "'tag' is not a valid value for the 'kind' qualifier (tags, open)"),
        # no list at all
        ("state:opened x", "'opened' is not a valid value for the 'state' qualifier"),
    ],
)
def test_no_one_inflected_value_no_part_repair(value: str, error: str) -> None:
    assert listed_part(value, error) is None


@settings(max_examples=60, deadline=None)
@given(
    word=st.from_regex(r"[a-z]{3,9}", fullmatch=True),
    other=st.from_regex(r"[a-z]{3,9}", fullmatch=True),
)
def test_only_an_inflection_of_the_quoted_part_is_taken(word: str, other: str) -> None:
    error = f"'{word}' is not a valid value for the 'x' qualifier ({other}, zzzq)"
    found = listed_part(f"x:{word} y", error)
    if found is not None:
        part, meant = found[1], found[2]
        assert part == word and meant == other
        a, b = sorted((word, other), key=len)
        endings = ("s", "es", "ed", "d", "ing", a[-1] + "ed", a[-1] + "ing")
        assert b in {a + s for s in endings} | {a[:-1] + s for s in ("ies", "ied")}


@pytest.mark.parametrize(
    "error",
    [
        "'opened' is not a valid value for 'state'; must be one of open, closed, or merged",
        "'opened' is not a valid value for 'state'; must be one of: open, closed or merged",
        "Invalid value 'opened' for state. Allowed values: open | closed | merged",
    ],
)
def test_lists_written_with_an_oxford_comma_a_colon_or_bars_are_read(error: str) -> None:
    assert listed_part("is:pr state:opened", error) == ("is:pr state:open", "opened", "open")


def test_a_huge_value_is_not_read() -> None:
    error = "'opened' is not a valid value for the 'state' qualifier (open, closed)"
    assert listed_part("state:opened " + "x" * 5_000, error) is None


@pytest.mark.parametrize(
    ("value", "part", "meant"),
    [
        ("category:book x", "category", "categories"),  # y after a consonant -> ies
        ("is:tag x", "tag", "tagged"),  # one syllable, consonant-vowel-consonant: doubled
        ("is:star x", "star", "starred"),
        ("is:starred x", "starred", "star"),
        ("state:opened x", "opened", "open"),  # two syllables: not doubled
    ],
)
def test_english_spelling_of_endings_is_followed(value: str, part: str, meant: str) -> None:
    error = f"'{part}' is not a valid value for the 'x' qualifier ({meant}, zzzq)"
    repaired = value.replace(part, meant, 1)
    assert listed_part(value, error) == (repaired, part, meant)


@pytest.mark.parametrize(
    ("part", "listed", "meant"),
    [
        ("category", "categories, tags", "categories"),  # a consonant's y -> ies
        ("tag", "tagged, open", "tagged"),  # one syllable: the consonant doubles
        ("stop", "stopping, open", "stopping"),
        ("create", "creating, open", "creating"),  # a silent e drops before ing
        ("opened", "open, closed", "open"),  # two syllables: no doubling, still read
        ("commit", "committed, open", "committed"),  # stress-dependent doubling: both kept
    ],
)
def test_english_spelling_rules_link_a_word_and_its_inflection(
    part: str, listed: str, meant: str
) -> None:
    error = f"'{part}' is not a valid value for the 'kind' qualifier ({listed})"
    assert listed_part(f"kind:{part} x", error) == (f"kind:{meant} x", part, meant)


@pytest.mark.parametrize(
    ("part", "listed"),
    [
        ("star", "stared, open"),  # stared is stare's past; star's is starred
        ("tag", "taged, open"),
        ("category", "categorys, open"),
        ("hop", "hoping, open"),  # hoping is hope's; hop's is hopping
    ],
)
def test_a_spelling_english_does_not_give_is_not_an_inflection(part: str, listed: str) -> None:
    error = f"'{part}' is not a valid value for the 'kind' qualifier ({listed})"
    assert listed_part(f"kind:{part} x", error) is None
