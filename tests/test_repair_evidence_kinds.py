"""Repairs that rest on evidence rather than word lists, kind by kind (issue 30): a default the
description gives for when the user states none, parameter names matched by what the schema
itself says, and the declines that stay declines when the evidence is missing or ambiguous."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

# the MCP reference time server's convert_time schema, as the server lists it (local zone UTC)
CONVERT_TIME = ToolSpec.from_schema(
    "convert_time",
    {
        "type": "object",
        "properties": {
            "source_timezone": {
                "type": "string",
                "description": "Source IANA timezone name (e.g., 'America/New_York', "
                "'Europe/London'). Use 'UTC' as local timezone if no source timezone provided "
                "by the user.",
            },
            "time": {"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"},
            "target_timezone": {
                "type": "string",
                "description": "Target IANA timezone name (e.g., 'Asia/Tokyo', "
                "'America/San_Francisco'). Use 'UTC' as local timezone if no target timezone "
                "provided by the user.",
            },
        },
        "required": ["source_timezone", "time", "target_timezone"],
    },
)


# -- a default for when the user states none ---------------------------------------------------


def test_a_removed_target_zone_is_declined_not_filled_with_the_local_zone_default() -> None:
    # the call lost its target zone on the way; without the task nothing shows the user gave
    # none, so the description's "use 'UTC' if no target timezone provided" does not apply
    result = ParamRepairer(CONVERT_TIME).repair({"source_timezone": "UTC", "time": "16:00"})
    assert not result.ok, result.args
    assert "target_timezone" in result.reason


def test_a_removed_target_zone_the_task_names_is_taken_from_the_task() -> None:
    result = ParamRepairer(CONVERT_TIME).repair(
        {"source_timezone": "UTC", "time": "16:00"}, task="What is 16:00 UTC in Tokyo?"
    )
    assert result.ok and result.args == {
        "source_timezone": "UTC",
        "time": "16:00",
        "target_timezone": "Asia/Tokyo",
    }


def test_the_local_zone_default_holds_where_the_task_gives_no_source_zone() -> None:
    result = ParamRepairer(CONVERT_TIME).repair(
        {"time": "09:30", "target_timezone": "Asia/Singapore"},
        task="What's 09:30 here in Singapore time?",
    )
    assert result.ok and result.args["source_timezone"] == "UTC"


def test_a_default_stated_as_a_fact_fills_a_required_field_without_a_task() -> None:
    spec = ToolSpec.from_schema(
        "videos",
        {
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "part": {"type": "string", "description": "Resource parts. Default: snippet,id"},
            },
            "required": ["q", "part"],
        },
    )
    result = ParamRepairer(spec).repair({"q": "sourdough"})
    assert result.ok and result.args == {"q": "sourdough", "part": "snippet,id"}


@settings(max_examples=40, deadline=None)
@given(
    zone=st.sampled_from(["Asia/Tokyo", "Europe/Berlin", "America/Chicago", "Australia/Sydney"]),
    time=st.sampled_from(["08:00", "16:45", "23:10"]),
    removed=st.sampled_from(["source_timezone", "target_timezone"]),
)
def test_a_removed_zone_is_never_filled_without_a_task(zone: str, time: str, removed: str) -> None:
    call: dict[str, Any] = {"source_timezone": "UTC", "time": time, "target_timezone": zone}
    del call[removed]
    result = ParamRepairer(CONVERT_TIME).repair(call)
    assert not result.ok, result.args


@pytest.mark.parametrize("removed", ["source_timezone", "target_timezone"])
def test_a_present_zone_is_never_replaced_by_the_default(removed: str) -> None:
    call = {"source_timezone": "Europe/Paris", "time": "10:00", "target_timezone": "Asia/Tokyo"}
    kept = next(k for k in ("source_timezone", "target_timezone") if k != removed)
    del call[removed]
    result = ParamRepairer(CONVERT_TIME).repair(call)
    assert not result.ok or result.args[kept] == call[kept]


# -- parameter names matched by the schema's own evidence --------------------------------------

PLACES = ToolSpec.from_schema(
    "places",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Search query"},
            "count": {"type": "integer", "description": "Number of results (1-20)"},
            "country": {"type": "string", "description": "Two-letter country code"},
            "timeout": {"type": "integer", "description": "Seconds to wait"},
            "latitude": {"type": "number"},
            "longitude": {"type": "number"},
        },
        "required": ["query"],
    },  # extra keys pass the schema, as on most MCP servers
)


@pytest.mark.parametrize(
    ("sent", "want"),
    [
        ({"q": "cafes"}, {"query": "cafes"}),  # a prefix
        ({"query": "cafes", "lat": 1.5, "lng": 2.5},
         {"query": "cafes", "latitude": 1.5, "longitude": 2.5}),  # a prefix, its consonants
        ({"query": "cafes", "num_results": 5}, {"query": "cafes", "count": 5}),  # its prose
    ],
)  # fmt: skip
def test_a_key_the_schema_names_by_abbreviation_or_prose_is_renamed(
    sent: dict[str, Any], want: dict[str, Any]
) -> None:
    result = ParamRepairer(PLACES).repair(sent)
    assert result.ok and result.args == want, result.reason


@pytest.mark.parametrize(
    "sent",
    [
        {"query": "cafes", "to": 5},  # "to" is no abbreviation of "timeout"
        {"query": "cafes", "l": 1.5},  # "latitude" or "longitude": both take the number
        {"query": "cafes", "nums": "five"},  # fits no parameter its prose names
    ],
)
def test_a_key_without_one_parameter_it_names_and_fits_is_not_renamed(
    sent: dict[str, Any],
) -> None:
    result = ParamRepairer(PLACES).repair(sent)
    renamed = [s for s in result.steps if s.strategy == "rename_key"]
    assert not renamed, renamed


def test_an_extra_key_is_renamed_by_elimination_only_to_a_parameter_that_tells_values_apart() -> (
    None
):
    booking = {
        "type": "object",
        "properties": {
            "restaurant": {"type": "string"},
            "seats": {"type": "integer", "minimum": 1, "maximum": 6},
            "note": {"type": "string"},
        },
        "required": ["restaurant"],
    }
    spec = ToolSpec.from_schema("book", booking)
    fixed = ParamRepairer(spec).repair({"restaurant": "Nopa", "party_size": 4})
    assert fixed.ok and fixed.args == {"restaurant": "Nopa", "seats": 4}
    # a text fits "note" too, and "note" takes any text: no evidence that it is the one
    kept = ParamRepairer(spec).repair({"restaurant": "Nopa", "seats": 4, "dress": "smart"})
    assert not any(s.strategy == "rename_key" for s in kept.steps)
    # 9 seats fit no parameter: not renamed into one
    wide = ParamRepairer(spec).repair({"restaurant": "Nopa", "party_size": 9})
    assert not any(s.strategy == "rename_key" for s in wide.steps)


def test_an_extra_key_the_task_names_beside_its_value_is_not_renamed_by_elimination() -> None:
    search = ToolSpec.from_schema(
        "search",
        {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
        },
    )
    # "page 2": the user asked for a page the tool does not have, not for 2 results
    result = ParamRepairer(search).repair(
        {"query": "bugs", "page": 2}, task="Search bugs and show page 2."
    )
    assert not result.ok or "limit" not in result.args, result.args
    renamed = ParamRepairer(search).repair({"query": "bugs", "count": 5}, task="5 bugs please")
    assert renamed.ok and renamed.args == {"query": "bugs", "limit": 5}


ROUTE = ToolSpec.from_schema(
    "route",
    {
        "type": "object",
        "properties": {"start": {"type": "string"}, "end": {"type": "string"}},
        "required": ["start", "end"],
    },
)


def test_keys_paired_by_elimination_follow_the_order_the_task_writes_the_values() -> None:
    sent = {"origin": "San Diego", "destination": "Phoenix"}
    fixed = ParamRepairer(ROUTE).repair(sent, task="Directions from San Diego to Phoenix.")
    assert fixed.ok and fixed.args == {"start": "San Diego", "end": "Phoenix"}


@pytest.mark.parametrize(
    "task",
    [
        None,  # nothing settles which is which
        "Directions to Phoenix from San Diego.",  # the task writes them the other way round
        "Directions between the two cities.",  # the task writes neither
    ],
)
def test_keys_paired_by_elimination_are_not_renamed_where_the_task_does_not_settle_it(
    task: str | None,
) -> None:
    result = ParamRepairer(ROUTE).repair(
        {"origin": "San Diego", "destination": "Phoenix"}, task=task
    )
    assert not result.ok, result.args


@settings(max_examples=60, deadline=None)
@given(
    a=st.from_regex(r"[A-Z][a-z]{3,8}", fullmatch=True),
    b=st.from_regex(r"[A-Z][a-z]{3,8}", fullmatch=True),
    filler=st.sampled_from(["please", "now", "for me", "quickly"]),
)
def test_a_pairing_never_swaps_what_the_task_orders(a: str, b: str, filler: str) -> None:
    if a.lower() == b.lower():
        return
    task = f"route {filler} from {b} to {a}"  # the task writes b first
    result = ParamRepairer(ROUTE).repair({"from_city": a, "to_city": b}, task=task)
    assert not result.ok or result.args == {"start": b, "end": a}


# -- a name where the task writes the id beside it ---------------------------------------------

FLIGHTS = ToolSpec.from_schema(
    "search_flights",
    {
        "type": "object",
        "properties": {
            "origin": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "destination": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "note": {"type": "string"},
        },
        "required": ["origin", "destination"],
        "additionalProperties": False,
    },
)


@pytest.mark.parametrize(
    ("sent", "task", "want"),
    [
        ({"origin": "Paris", "destination": "JFK"}, "flights from Paris CDG to New York JFK",
         {"origin": "CDG", "destination": "JFK"}),
        ({"origin": "Paris", "destination": "JFK"}, "from Paris (CDG) to JFK",
         {"origin": "CDG", "destination": "JFK"}),
        ({"origin": "北京", "destination": "PVG"}, "北京（PEK）到上海 PVG",
         {"origin": "PEK", "destination": "PVG"}),
    ],
)  # fmt: skip
def test_a_name_is_replaced_by_the_code_the_task_writes_beside_it(
    sent: dict[str, Any], task: str, want: dict[str, Any]
) -> None:
    result = ParamRepairer(FLIGHTS).repair(sent, task=task)
    assert result.ok and result.args == want, result.reason


@pytest.mark.parametrize(
    "task",
    [
        "flights from Paris to New York JFK",  # no code beside Paris
        "flights from Paris CDG or ORY to JFK",  # two codes: which is not for us to say
        "from Paris (JFK) to JFK",  # the code beside it already fills the other field
    ],
)
def test_a_name_without_one_code_beside_it_is_declined(task: str) -> None:
    result = ParamRepairer(FLIGHTS).repair({"origin": "Paris", "destination": "JFK"}, task=task)
    assert not result.ok, result.args


def test_an_id_in_a_free_text_field_is_taken_only_from_parentheses_with_a_digit() -> None:
    spec = ToolSpec.from_schema(
        "assign",
        {"type": "object", "properties": {"author_id": {"type": "string"}}, "required": []},
    )
    refused = "No people resource with id 'Ana Silva'"
    fixed = ParamRepairer(spec).repair(
        {"author_id": "Ana Silva"}, refused, task="by author 12 (Ana Silva)"
    )
    assert fixed.ok and fixed.args == {"author_id": "12"}
    # a word beside the name is no id of hers
    plain = ParamRepairer(spec).repair(
        {"author_id": "Ana Silva"}, refused, task="by author Ana Silva please"
    )
    assert not plain.ok


def test_a_number_written_beside_a_version_name_fills_a_numeric_field() -> None:
    spec = ToolSpec.from_schema(
        "create_issue",
        {
            "type": "object",
            "properties": {"title": {"type": "string"}, "milestone": {"type": ["integer", "null"]}},
            "required": ["title"],
        },
    )
    task = "Open 'Ship it' under milestone 3 (v2.1)."
    result = ParamRepairer(spec).repair({"title": "Ship it", "milestone": "v2.1"}, task=task)
    assert result.ok and result.args == {"title": "Ship it", "milestone": 3}


@settings(max_examples=60, deadline=None)
@given(
    name=st.from_regex(r"[A-Z][a-z]{3,9}", fullmatch=True),
    code=st.from_regex(r"[A-Z]{3}", fullmatch=True),
    words=st.lists(st.sampled_from(["fly", "to", "from", "please", "tomorrow", "JFK"]), max_size=5),
)
def test_a_code_taken_beside_a_name_is_always_one_the_task_writes(
    name: str, code: str, words: list[str]
) -> None:
    task = " ".join([*words, name, code, *words])
    result = ParamRepairer(FLIGHTS).repair({"origin": name, "destination": "JFK"}, task=task)
    if result.ok:
        assert result.args["origin"] in task.split()
        assert result.args["origin"] != "JFK"  # another field holds it


# -- shapes: fields sent beside the object they belong in, a value for an object's one field ---

CUSTOMER = ToolSpec.from_schema(
    "create_customer",
    {
        "$defs": {
            "Address": {
                "type": "object",
                "properties": {
                    "line1": {"type": "string"},
                    "city": {"type": "string"},
                    "country": {"type": "string", "pattern": "^[A-Z]{2}$"},
                },
                "required": ["line1", "city", "country"],
                "additionalProperties": False,
            },
            "Tag": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
                "additionalProperties": False,
            },
        },
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "address": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}], "default": None},
            "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
)


def test_fields_sent_beside_an_optional_object_they_all_belong_in_are_moved_into_it() -> None:
    sent = {"name": "Eva", "line1": "Keizersgracht 12", "city": "Amsterdam", "country": "NL"}
    result = ParamRepairer(CUSTOMER).repair(sent)
    assert result.ok and result.args == {
        "name": "Eva",
        "address": {"line1": "Keizersgracht 12", "city": "Amsterdam", "country": "NL"},
    }


def test_fields_that_do_not_all_belong_in_one_optional_object_are_not_moved() -> None:
    # "phone" belongs nowhere: the call is not an address sent flat, and dropping it or the
    # address fields is not ours to do
    sent = {"name": "Eva", "line1": "K 12", "city": "Amsterdam", "country": "NL", "phone": "1"}
    result = ParamRepairer(CUSTOMER).repair(sent, task="Eva, K 12, Amsterdam, NL, phone 1")
    assert not result.ok or "address" not in result.args


def test_a_text_sent_for_an_object_fills_the_one_field_that_takes_text() -> None:
    result = ParamRepairer(CUSTOMER).repair({"name": "Bolt", "tags": ["friendly"]})
    assert result.ok and result.args == {"name": "Bolt", "tags": [{"name": "friendly"}]}
    # a number fits the id and not the name: that is the field it fills
    numbered = ParamRepairer(CUSTOMER).repair({"name": "Bolt", "tags": [7]})
    assert numbered.ok and numbered.args == {"name": "Bolt", "tags": [{"id": 7}]}


# -- a number in the layout a pattern asks for -------------------------------------------------

AMOUNT = r"^[0-9]+\.[0-9]{2}$"


@pytest.mark.parametrize(
    ("sent", "want"),
    [("250", "250.00"), ("1.050,00", "1050.00"), ("1,050.00", "1050.00"), ("12,5", "12.50"),
     ("1 234,56", "1234.56"), ("3.1", "3.10")],
)  # fmt: skip
def test_a_number_is_written_with_the_decimals_the_pattern_asks_for(sent: str, want: str) -> None:
    from pytest_agentchaos.repair.fixes import Context, Fix
    from pytest_agentchaos.repair.mechanical import fix_pattern

    fixed = fix_pattern(sent, AMOUNT, Context())
    assert isinstance(fixed, Fix) and fixed.value == want


@pytest.mark.parametrize("sent", ["1.050", "1,050", "12.345", "250.005", "2,5,0", "250 EUR"])
def test_a_number_whose_marks_are_ambiguous_or_would_lose_a_digit_is_declined(sent: str) -> None:
    from pytest_agentchaos.repair.fixes import Context, Decline
    from pytest_agentchaos.repair.mechanical import fix_pattern

    assert isinstance(fix_pattern(sent, AMOUNT, Context()), Decline)


@settings(max_examples=80, deadline=None)
@given(cents=st.integers(0, 10**9))
def test_a_relaid_number_is_always_the_same_number(cents: int) -> None:
    from decimal import Decimal

    from pytest_agentchaos.repair.fixes import Context, Fix
    from pytest_agentchaos.repair.mechanical import fix_pattern

    value = Decimal(cents) / 100
    german = f"{value:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".")
    for sent in (german, f"{value:,.2f}", f"{value:.1f}" if cents % 10 == 0 else str(value)):
        fixed = fix_pattern(sent, AMOUNT, Context())
        if isinstance(fixed, Fix):
            assert Decimal(fixed.value) == value, (sent, fixed.value)


# -- a refused value the task spells otherwise -------------------------------------------------

STATIONS = ToolSpec.from_schema(
    "trains",
    {
        "type": "object",
        "properties": {
            "from_station": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "to_station": {"type": "string", "pattern": "^[A-Z]{3}$"},
        },
        "required": ["from_station", "to_station"],
    },
)


def test_a_refused_code_one_character_off_the_tasks_is_the_tasks() -> None:
    sent = {"from_station": "VNB", "to_station": "HGH"}
    result = ParamRepairer(STATIONS).repair(sent, "unknown station code: VNB", task="VNP to HGH")
    assert result.ok and result.args == {"from_station": "VNP", "to_station": "HGH"}


@pytest.mark.parametrize(
    "task",
    [
        "VNP or VNC to HGH",  # two codes one character off: which is not ours to say
        "VNB to HGH",  # the task writes the refused code as sent: the tool does not have it
        "from VNBB to HGH",  # a character added is another code, not a typo of this one
        "vnp to HGH",  # another shape: not the same code respelt
    ],
)
def test_a_refused_code_without_one_same_shaped_spelling_in_the_task_is_declined(task: str) -> None:
    sent = {"from_station": "VNB", "to_station": "HGH"}
    result = ParamRepairer(STATIONS).repair(sent, "unknown station code: VNB", task=task)
    assert not result.ok, result.args


def test_a_refused_value_ending_the_tasks_sentence_loses_the_full_stop() -> None:
    spec = ToolSpec.from_schema(
        "who", {"type": "object", "properties": {"email": {"type": "string"}}, "required": []}
    )
    error = "LookupError: no employee with email 'dana.lee@acme.io.'"
    result = ParamRepairer(spec).repair(
        {"email": "dana.lee@acme.io."}, error, task="Who is dana.lee@acme.io."
    )
    assert result.ok and result.args == {"email": "dana.lee@acme.io"}
    # the task writes the address with its dot inside a name: not a sentence's end
    inside = ParamRepairer(spec).repair(
        {"email": "dana.lee@acme.io."}, error, task="Who is dana.lee@acme.io.uk"
    )
    assert not inside.ok, inside.args


def test_a_field_inside_an_optional_object_is_repaired_and_its_problem_then_gone() -> None:
    sent = {"name": "Anna", "address": {"line1": "Hauptstr. 5", "city": "Berlin",
                                        "country": "Germany"}}  # fmt: skip
    result = ParamRepairer(CUSTOMER).repair(sent)
    assert result.ok and result.args["address"]["country"] == "DE", result.reason
    # a country no table knows stays declined, inside the optional object as at the top
    unknown = {**sent, "address": {**sent["address"], "country": "Atlantis"}}
    assert not ParamRepairer(CUSTOMER).repair(unknown).ok


# -- durations, units, times and days written another way --------------------------------------

SLOTS = ToolSpec.from_schema(
    "find_slots",
    {
        "type": "object",
        "properties": {
            "duration_minutes": {"type": "integer", "minimum": 15, "maximum": 240},
            "length": {"type": "integer"},
            "temperature": {
                "type": "number",
                "description": "Target temperature in degrees Celsius",
            },
            "time": {"type": "string", "format": "time"},
            "day": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
            "notify": {"type": "boolean", "default": True},
        },
        "required": [],
    },
)


@pytest.mark.parametrize(
    ("sent", "want"),
    [
        ({"duration_minutes": "1h30"}, {"duration_minutes": 90}),
        ({"duration_minutes": "2 hours 15 minutes"}, {"duration_minutes": 135}),
        ({"temperature": "21.5°C"}, {"temperature": 21.5}),
    ],
)
def test_a_duration_or_a_reading_in_the_fields_unit_is_its_number(
    sent: dict[str, Any], want: dict[str, Any]
) -> None:
    result = ParamRepairer(SLOTS).repair(sent)
    assert result.ok and result.args == want, result.reason


@pytest.mark.parametrize(
    "sent",
    [
        {"length": "1h30"},  # the field states no unit: minutes or hours is not ours to say
        {"temperature": "70°F"},  # another scale: converting changes what the user gave
    ],
)
def test_a_duration_or_reading_without_the_fields_unit_is_declined(sent: dict[str, Any]) -> None:
    assert not ParamRepairer(SLOTS).repair(sent).ok


def test_a_time_in_the_h_notation_is_read_on_the_24_hour_clock() -> None:
    from pytest_agentchaos.repair.dates import read_time

    assert read_time("14h30").isoformat() == "14:30:00"
    assert read_time("9h").isoformat() == "09:00:00"
    with pytest.raises(ValueError):
        read_time("25h10")


def test_a_cjk_month_and_day_is_its_next_occurrence() -> None:
    import datetime as dt

    now = dt.datetime(2026, 3, 10, 9, 0, tzinfo=dt.timezone.utc)
    result = ParamRepairer(SLOTS).repair({"day": "3月15日"}, now=now)
    assert result.ok and result.args == {"day": "2026-03-15"}
    # a day far behind the clock: the last one or the next, which is open
    assert not ParamRepairer(SLOTS).repair({"day": "9月15日"}, now=now).ok


@pytest.mark.parametrize(
    ("task", "ok"),
    [
        ("Book it, don't send any notifications.", True),
        ("Book it, no projector needed; let everyone know.", False),  # no said to another thing
        (None, False),  # "none" alone: no value, or no
    ],
)
def test_none_for_a_yes_no_is_no_only_where_the_task_says_no_to_it(
    task: str | None, ok: bool
) -> None:
    result = ParamRepairer(SLOTS).repair({"notify": "none"}, task=task)
    assert result.ok is ok and (not ok or result.args == {"notify": False})


# -- what descriptions state, and what a loose schema would silently drop ----------------------

LOOSE = ToolSpec.from_schema(
    "git_and_slack",
    {
        "type": "object",
        "properties": {
            "origin": {"type": "string"},
            "branch_type": {
                "type": "string",
                "description": "Whether to list local branches ('local'), remote branches "
                "('remote') or all branches ('all').",
            },
            "thread_ts": {
                "type": "string",
                "description": "The timestamp of the parent message in the format "
                "'1234567890.123456'.",
            },
        },
        "required": [],
    },  # extra keys pass, as on most MCP servers
)


def test_values_quoted_in_parentheses_after_their_gloss_are_the_allowed_ones() -> None:
    fixed = ParamRepairer(LOOSE).repair({"branch_type": "locally"})
    assert fixed.ok and fixed.args == {"branch_type": "local"}
    assert not ParamRepairer(LOOSE).repair({"branch_type": "tags"}).ok


@pytest.mark.parametrize(
    ("sent", "want"),
    [("1729587600123456", "1729587600.123456"), ("1729587600.123456", "1729587600.123456"),
     ("172958760.12", "172958760.12")],  # another length, the same format: valid as it is
)  # fmt: skip
def test_a_value_takes_the_marks_of_the_format_its_description_gives(sent: str, want: str) -> None:
    result = ParamRepairer(LOOSE).repair({"thread_ts": sent})
    assert result.ok and result.args == {"thread_ts": want}


@pytest.mark.parametrize("sent", ["17295876001234", "C024BE91L", "1729587600-123456"])
def test_a_value_that_the_format_cannot_take_by_its_marks_alone_is_declined(sent: str) -> None:
    assert not ParamRepairer(LOOSE).repair({"thread_ts": sent}).ok


def test_a_key_the_tool_would_ignore_is_declined_where_the_task_states_its_value() -> None:
    sent = {"origin": "Paris", "waypoints": ["Lyon"]}
    declined = ParamRepairer(LOOSE).repair(sent, task="Route from Paris via Lyon.")
    assert not declined.ok and "waypoints" in declined.reason
    # a key whose value the task does not state is the tool's to ignore
    kept = ParamRepairer(LOOSE).repair({"origin": "Paris", "trace_id": "x-91"}, task="From Paris")
    assert kept.ok and kept.args == {"origin": "Paris", "trace_id": "x-91"}


# -- an enum value the task names for a phrase the model copied from it ------------------------


def _enum_spec(values: list[str]) -> ToolSpec:
    return ToolSpec.from_schema(
        "pick",
        {"type": "object", "properties": {"v": {"type": "string", "enum": values}}, "required": []},
    )


@pytest.mark.parametrize(
    ("values", "sent", "task", "want"),
    [
        (["comments", "reactions", "created"], "most commented", "the most commented bugs",
         "comments"),
        (["completed", "not_planned", "reopened"], "wontfix", "close it as won't fix / not planned",
         "not_planned"),
    ],
)  # fmt: skip
def test_the_allowed_value_the_task_names_in_or_beside_its_own_phrase_is_taken(
    values: list[str], sent: str, task: str, want: str
) -> None:
    result = ParamRepairer(_enum_spec(values)).repair({"v": sent}, task=task)
    assert result.ok and result.args == {"v": want}, result.reason


@pytest.mark.parametrize(
    ("values", "sent", "task"),
    [
        (["merge", "squash", "rebase"], "fast-forward", "Merge PR 42 as a fast-forward"),  # verb
        (["zip", "tar", "gztar"], "7z", "Zip up build as a 7z archive"),  # another thing
        (["completed", "not_planned"], "wontfix", "wontfix, not completed"),  # negated
        (["comments", "created"], "most discussed", "the most commented bugs"),  # not copied
        (["comments", "commits"], "most commented", "most commented, or commits / comments"),
    ],
)
def test_an_allowed_value_the_task_names_elsewhere_or_negates_is_declined(
    values: list[str], sent: str, task: str
) -> None:
    result = ParamRepairer(_enum_spec(values)).repair({"v": sent}, task=task)
    assert not result.ok, result.args


@settings(max_examples=60, deadline=None)
@given(
    verb=st.sampled_from(["Merge", "Squash", "Rebase"]),
    other=st.sampled_from(["fast-forward", "octopus", "ours", "subtree"]),
    filler=st.sampled_from(["PR 42", "the branch", "it now"]),
)
def test_a_task_verb_never_becomes_the_value_of_another_thing_it_asks_for(
    verb: str, other: str, filler: str
) -> None:
    task = f"{verb} {filler} as a {other}"
    result = ParamRepairer(_enum_spec(["merge", "squash", "rebase"])).repair(
        {"v": other}, task=task
    )
    assert not result.ok, result.args


def _refund(required: list[str]) -> ToolSpec:
    return ToolSpec.from_schema(
        "refund",
        {
            "type": "object",
            "properties": {
                "payment": {"type": "string"},
                "amount": {
                    "anyOf": [{"type": "integer", "exclusiveMinimum": 0}, {"type": "null"}],
                    "default": None,
                    "description": "Amount in cents. Omit to refund the full amount.",
                },
            },
            "required": required,
        },
    )


def test_a_word_the_description_says_leaving_the_field_out_gives_drops_the_field() -> None:
    result = ParamRepairer(_refund(["payment"])).repair(
        {"payment": "pi_1", "amount": "full"}, task="Refund pi_1 in full."
    )
    assert result.ok and result.args == {"payment": "pi_1"}


@pytest.mark.parametrize(
    ("required", "amount"),
    [(["payment", "amount"], "full"), (["payment"], "half"), (["payment"], "most")],
)
def test_a_word_omitting_does_not_give_or_a_required_field_is_declined(
    required: list[str], amount: str
) -> None:
    result = ParamRepairer(_refund(required)).repair({"payment": "pi_1", "amount": amount})
    assert not result.ok, result.args


def test_items_an_error_quotes_are_no_problem_once_their_list_is_joined_as_asked() -> None:
    spec = ToolSpec.from_schema(
        "list_issues",
        {
            "type": "object",
            "properties": {
                "labels": {
                    "type": "string",
                    "description": "A list of comma separated label names.",
                }
            },
            "required": [],
            "additionalProperties": False,
        },
    )
    error = "For 'properties/labels', ['bug', 'needs-triage'] is not of type 'string'."
    result = ParamRepairer(spec).repair({"labels": ["bug", "needs-triage"]}, error)
    assert result.ok and result.args == {"labels": "bug,needs-triage"}, result.reason


@pytest.mark.parametrize("place", ["India", "Germany", "Chad", "Georgia"])
def test_a_place_the_tool_does_not_have_is_not_recoded_when_the_task_writes_it_as_sent(
    place: str,
) -> None:
    spec = ToolSpec.from_schema(
        "weather",
        {
            "type": "object",
            "properties": {
                "q": {"type": "string", "description": "City name, state code and country code"}
            },
            "required": ["q"],
        },
    )
    result = ParamRepairer(spec).repair(
        {"q": place}, "city not found", task=f"What's the weather in {place}?"
    )
    assert not result.ok, result.args


@pytest.mark.parametrize(
    ("task", "want"),
    [
        ("Charges since March 1st.", "2026-03-01"),  # past, though the next is nearer in days
        ("Charges since March 10.", "2026-03-10"),  # today
        ("Charges since Dec 1.", "2025-12-01"),  # the last Dec 1, the nearer one
        ("Charges since March 12.", "2025-03-12"),  # the next is 2 days ahead: since is past
    ],
)
def test_a_day_without_its_year_after_since_is_the_last_such_day(task: str, want: str) -> None:
    import datetime as dt

    now = dt.datetime(2026, 3, 10, 9, 0, tzinfo=dt.timezone.utc)
    sent = task.removeprefix("Charges since ").rstrip(".")
    result = ParamRepairer(SLOTS).repair({"day": sent}, task=task, now=now)
    assert result.ok and result.args == {"day": want}, result.reason


def test_a_day_without_its_year_nearer_behind_than_ahead_is_declined_without_since() -> None:
    import datetime as dt

    now = dt.datetime(2026, 3, 10, 9, 0, tzinfo=dt.timezone.utc)
    result = ParamRepairer(SLOTS).repair({"day": "March 1st"}, task="Charges on March 1st", now=now)
    assert not result.ok, result.args
