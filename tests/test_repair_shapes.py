"""Values in the wrong shape: a full name in one parameter of an owner/name pair, fields sent
beside the object they belong in, coordinates as text, a season written short, a value a
description names for "the main" one of something."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.repair.coerce import convert
from pytest_agentchaos.repair.compound import name_in_task, regroup, split_compound
from pytest_agentchaos.repair.fixes import Context, Decline, Fix
from pytest_agentchaos.repair.infer import InferenceRequest, RuleInferer
from pytest_agentchaos.repair.mechanical import fix_pattern

STR = {"type": "string"}
ISSUE = {
    "type": "object",
    "properties": {"owner": STR, "repo": STR, "title": STR},
    "required": ["owner", "repo", "title"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("args", "owner", "repo"),
    [
        ({"repo": "acme/widgets"}, "acme", "widgets"),
        ({"owner": "acme", "repo": "https://github.com/acme/widgets"}, "acme", "widgets"),
        ({"owner": "ACME", "repo": "acme/widgets.git"}, "ACME", "widgets"),
        ({"repo": "git@gitlab.com:team/tool.git"}, "team", "tool"),
    ],
)
def test_a_full_name_is_split_into_owner_and_name(args: Any, owner: str, repo: str) -> None:
    fixes = split_compound(args, ISSUE)
    assert isinstance(fixes, dict)
    assert (fixes["owner"].value, fixes["repo"].value) == (owner, repo)
    result = ParamRepairer(ToolSpec.from_schema("create_issue", ISSUE)).repair(
        {**args, "title": "Crash"}
    )
    assert result.ok and result.args == {"owner": owner, "repo": repo, "title": "Crash"}


def test_a_full_name_naming_another_owner_is_declined() -> None:
    declined = split_compound({"owner": "octo-org", "repo": "acme/widgets"}, ISSUE)
    assert isinstance(declined, Decline) and "which one is meant" in declined.reason
    result = ParamRepairer(ToolSpec.from_schema("create_issue", ISSUE)).repair(
        {"owner": "octo-org", "repo": "acme/widgets", "title": "x"}
    )
    assert not result.ok and result.args is None


@pytest.mark.parametrize(
    "args",
    [{"repo": "widgets"}, {"repo": "a/b/c"}, {"repo": 42}, {"repo": "has space/x"}, {}],
)
def test_nothing_else_is_split(args: Any) -> None:
    assert split_compound(args, ISSUE) is None
    no_pair = {"type": "object", "properties": {"path": STR, "repo": STR}}
    assert split_compound({"repo": "acme/widgets"}, no_pair) is None


@given(st.dictionaries(st.sampled_from(["owner", "repo", "title"]), st.text(max_size=40)))
@settings(max_examples=80, deadline=None)
def test_a_split_is_always_the_name_s_own_parts(args: dict[str, str]) -> None:
    fixes = split_compound(args, ISSUE)
    if isinstance(fixes, dict):
        assert fixes["repo"].value in args["repo"] and "/" not in fixes["repo"].value
        assert fixes["owner"].value.lower() in args["repo"].lower()


def test_the_name_the_task_writes_after_the_owner() -> None:
    task = "File an issue titled 'Broken link' in octo-org/octo-repo."
    assert name_in_task("repo", {"owner": "octo-org"}, ISSUE, task) == "octo-repo"
    assert name_in_task("repo", {"owner": "acme"}, ISSUE, task) is None  # another owner
    assert name_in_task("owner", {"repo": "octo-repo"}, ISSUE, task) is None
    both = "Move it from octo-org/a to octo-org/b."
    assert name_in_task("repo", {"owner": "octo-org"}, ISSUE, both) is None
    spec = ToolSpec.from_schema("create_issue", ISSUE)
    found = RuleInferer().infer(
        InferenceRequest(spec, {"owner": "octo-org", "title": "x"}, ("repo",), task)
    )
    assert found["repo"].value == "octo-repo"


EDIT = {
    "type": "object",
    "properties": {
        "path": STR,
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"oldText": STR, "newText": STR},
                "required": ["oldText", "newText"],
            },
        },
        "dryRun": {"type": "boolean"},
    },
    "required": ["path", "edits"],
    "additionalProperties": False,
}


def test_fields_sent_beside_the_object_they_belong_in() -> None:
    args = {"path": "/a.py", "oldText": "x = 1", "newText": "x = 2"}
    fix = regroup(args, EDIT)["edits"]
    assert isinstance(fix, Fix) and fix.value == [{"oldText": "x = 1", "newText": "x = 2"}]
    result = ParamRepairer(ToolSpec.from_schema("edit_file", EDIT)).repair(args)
    assert result.ok
    assert result.args == {"path": "/a.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}


def test_fields_that_do_not_make_the_object_are_not_moved() -> None:
    assert regroup({"path": "/a.py", "oldText": "x"}, EDIT) == {}  # newText is required
    assert regroup({"path": "/a.py", "edits": [], "oldText": "x", "newText": "y"}, EDIT) == {}
    result = ParamRepairer(ToolSpec.from_schema("edit_file", EDIT)).repair(
        {"path": "/a.py", "oldText": "x"}
    )
    assert not result.ok


PLACE = {
    "type": "object",
    "properties": {"latitude": {"type": "number"}, "longitude": {"type": "number"}},
}


@pytest.mark.parametrize(
    ("text", "want"),
    [("48.8606,2.3376", (48.8606, 2.3376)), ("(-33.86, 151.21)", (-33.86, 151.21))],
)
def test_coordinates_as_text(text: str, want: tuple[float, float]) -> None:
    fixed = convert(text, PLACE, Context(name="location"))
    assert isinstance(fixed, Fix)
    assert fixed.value == {"latitude": want[0], "longitude": want[1]}


@pytest.mark.parametrize("text", ["120.5, 2.3", "48.8", "48.8, 2.3, 7", "Paris"])
def test_text_that_is_no_pair_of_coordinates_is_not_read_as_one(text: str) -> None:
    assert isinstance(convert(text, PLACE, Context(name="location")), Decline)


SEASON = r"^[0-9]{4}-[0-9]{4}$"


@pytest.mark.parametrize(("text", "want"), [("2020-21", "2020-2021"), ("1999-00", "1999-2000")])
def test_a_season_written_short(text: str, want: str) -> None:
    fixed = fix_pattern(text, SEASON, Context())
    assert isinstance(fixed, Fix) and fixed.value == want


@pytest.mark.parametrize("text", ["2020-22", "2020-20", "20-21"])
def test_a_span_that_is_no_season_is_declined(text: str) -> None:
    assert isinstance(fix_pattern(text, SEASON, Context()), Decline)


MAIN_CALENDAR = "ID of the calendar (use 'primary' for the main calendar)"
CALENDAR = ToolSpec.from_schema(
    "create_event",
    {
        "type": "object",
        "properties": {
            "calendarId": STR | {"description": MAIN_CALENDAR},
            "summary": STR,
        },
        "required": ["calendarId", "summary"],
    },
)  # fmt: skip


@pytest.mark.parametrize(
    ("task", "want"),
    [("Add 'Call' to my calendar.", "primary"), ("Put 'Call' on the calendar", "primary")]
    + [("Add 'Call' to my work calendar.", None), ("Add 'Call' tomorrow.", None)],
)
def test_the_value_a_description_names_for_the_main_one(task: str, want: str | None) -> None:
    found = RuleInferer().infer(
        InferenceRequest(CALENDAR, {"summary": "Call"}, ("calendarId",), task)
    )
    assert (found["calendarId"].value if found else None) == want


def test_the_policy_turns_the_reshaping_off() -> None:
    from pytest_agentchaos.repair import RepairPolicy

    args = {"repo": "acme/widgets", "title": "x"}
    spec = ToolSpec.from_schema("create_issue", ISSUE)
    off = RepairPolicy(strategies={"split_compound": False})
    assert not ParamRepairer(spec, policy=off).repair(args).ok
    strict = RepairPolicy(threshold=0.95)
    assert not ParamRepairer(spec, policy=strict).repair(args).ok
    assert ParamRepairer(spec).repair(args).ok
