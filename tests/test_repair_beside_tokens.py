"""A refused value the task writes only as part of a longer token (issue 30, kind C).

``s3://acme-media`` inside ``s3://acme-media/thumbnails/`` is no mention of its own: the
word before the whole token ("List") is not written beside the value, and taking it because
the field's pattern admits any word would send a request nobody made."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

_LOOSE = "^[a-zA-Z0-9.\\-_]{1,255}$"  # a character class any plain word fits


def _spec(pattern: str = _LOOSE) -> ToolSpec:
    return ToolSpec.from_schema(
        "t",
        {
            "type": "object",
            "properties": {"name": {"type": "string", "pattern": pattern}},
            "required": ["name"],
        },
    )


@settings(max_examples=40, deadline=None)
@given(
    verb=st.sampled_from(["List", "Open", "Delete", "Show", "Copy"]),
    scheme=st.sampled_from(["s3://", "gs://", "https://", "file://"]),
    name=st.from_regex(r"[a-z]{3,8}-[a-z]{3,8}", fullmatch=True),
    rest=st.sampled_from(["/thumbnails/", "/2026/q1.csv", "/a/b", "/"]),
)
def test_a_word_before_a_longer_token_is_not_the_value(
    verb: str, scheme: str, name: str, rest: str
) -> None:
    sent = f"{scheme}{name}"
    result = ParamRepairer(_spec()).repair({"name": sent}, task=f"{verb} {sent}{rest} now.")
    assert not (result.ok and result.args == {"name": verb}), result.args


@pytest.mark.parametrize(
    ("sent", "task"),
    [
        ("ana", "Email ana@example.com today"),  # the user part of an address
        ("reports", "Read reports/2026/q1.md please"),  # the first part of a path
        ("acme", "Clone acme/widgets"),
        ("release", "Tag release-2026 on main"),
    ],
)
def test_part_of_a_token_takes_no_neighbour(sent: str, task: str) -> None:
    result = ParamRepairer(_spec("^[A-Za-z]{1,20}$|^x-[a-z]+$")).repair({"name": sent}, task=task)
    assert result.args in (None, {"name": sent}), result.args


def test_a_code_written_beside_a_whole_word_is_still_taken() -> None:
    spec = _spec("^[A-Z]{3}$")
    result = ParamRepairer(spec).repair({"name": "Paris"}, task="Fly from Paris CDG tomorrow")
    assert result.ok and result.args == {"name": "CDG"}


@pytest.mark.parametrize(
    ("sent", "task"),
    [
        ("bucket:media", "use bucket:media now"),
        ("my bucket!", "please copy my bucket! today"),
        ("acme media", "Open acme media"),
    ],
)
def test_a_word_of_the_sentence_beside_the_value_is_no_code(sent: str, task: str) -> None:
    result = ParamRepairer(_spec()).repair({"name": sent}, task=task)
    assert result.args not in ({"name": w} for w in task.split() if w not in sent), result.args
