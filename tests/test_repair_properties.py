"""Wrong repairs as a kind: generated schemas, generated tasks, generated mistakes.

Each drawn tool has a few fields of the kinds real tools declare (enums with near members,
prefixed ids, dates, e-mails, URIs, bounded counts, nested objects, lists of enum values,
unions, amounts in a stated currency, measures in a stated unit). The task states some of the
meant values, not others; the call gets some right, some wrong in a way a model does, and
leaves some out. Whatever the repairer makes of it must be one of two things: a call that
validates and holds every value the task states (and, for a field the task leaves open, only
what the sent value itself names), or a decline. A value neither the task nor the call holds
is never filled.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

NOW = dt.datetime(2025, 6, 3, 8, 0, tzinfo=dt.timezone.utc)
#: A field's outcome when only a decline is right.
DECLINE = object()


@dataclass(frozen=True)
class Mistake:
    """What the model sent for a field, and the values a repair may put there: ``stated`` when
    the task writes the meant value, ``open`` when it does not (empty: only a decline is right
    unless the value is left as sent)."""

    sent: Any
    stated: tuple[Any, ...]
    open: tuple[Any, ...] = ()
    error: str | None = None  # the tool's own error, when only it says what is wrong


@dataclass(frozen=True)
class Kind:
    """One kind of field: its schema, the meant value, how a task states it, and mistakes."""

    name: str
    schema: dict[str, Any]
    meant: Any
    phrase: str  # how the task states the meant value
    mistakes: tuple[Mistake, ...] = field(default=())


SIZES = ["small", "medium", "large", "x-large"]
TIERS = ["gold", "gold_plus", "silver"]

KINDS: tuple[Kind, ...] = (
    Kind("size", {"type": "string", "enum": SIZES}, "large", "in size large", (
        Mistake("LARGE", ("large",), ("large",)),
        Mistake(" Large ", ("large",), ("large",)),
        Mistake("extra large", (), ()),   # a modifier left over: not "large"
        Mistake("big", ("large",), ()),
        Mistake("XL", (), ()),             # near x-large and large: the task says large
    )),
    Kind("tier", {"type": "string", "enum": TIERS}, "gold_plus", "on the gold plus tier", (
        Mistake("Gold Plus", ("gold_plus",), ("gold_plus",)),
        Mistake("gold-plus", ("gold_plus",), ("gold_plus",)),
        Mistake("gold", (), ()),           # a valid member the task does not ask for
        Mistake("golden", (), ()),
    )),
    Kind("order_id", {"type": "string", "pattern": r"^ORD-\d{4}$"}, "ORD-0042",
         "for order ORD-0042", (
        Mistake("ord-0042", ("ORD-0042",), ("ORD-0042",)),
        Mistake("0042", ("ORD-0042",), ()),
        Mistake(42, ("ORD-0042",), ()),
        Mistake("ORD-42", ("ORD-0042",), ()),
        Mistake("order", ("ORD-0042",), ()),
    )),
    Kind("day", {"type": "string", "format": "date"}, "2025-07-14", "on July 14, 2025", (
        Mistake("07/14/2025", ("2025-07-14",), ("2025-07-14",)),
        Mistake("14/07/2025", ("2025-07-14",), ("2025-07-14",)),
        Mistake("July 14 2025", ("2025-07-14",), ("2025-07-14",)),
        Mistake(14, ("2025-07-14",), ()),
        Mistake("04/07/2025", ("2025-07-14",), ()),  # neither order is the task's day
    )),
    Kind("email", {"type": "string", "format": "email"}, "ana.lopez@example.com",
         "and send it to ana.lopez@example.com", (
        Mistake("ana.lopez at example dot com", ("ana.lopez@example.com",),
                ("ana.lopez@example.com",)),
        Mistake("ana.lopez", ("ana.lopez@example.com",), ()),
        Mistake("Ana Lopez", ("ana.lopez@example.com",), ()),
    )),
    Kind("count", {"type": "integer", "minimum": 1, "maximum": 10}, 4, "4 copies", (
        Mistake("4", (4,), (4,)),
        Mistake("four", (4,), (4,)),
        Mistake(40, (), ()),                # out of range, the task says 4: not clamped to 10
        Mistake(0, (4,), ()),
    )),
    Kind("weight_kg", {"type": "number", "description": "Parcel weight in kilograms."}, 2.5,
         "weighing 2.5 kg", (
        Mistake("2.5 kg", (2.5,), (2.5,)),
        Mistake("2.5kg", (2.5,), (2.5,)),
        Mistake("5.5 lb", (), ()),          # another unit: never the bare number
    )),
    Kind("amount", {"type": "number", "description": "Amount to charge, in euros."}, 20,
         "charging 20 euros", (
        Mistake("20 EUR", (20,), (20,)),
        Mistake("€20", (20,), (20,)),
        Mistake("$20", (), ()),             # another currency: never stripped to 20
        Mistake("20 USD", (), ()),
    )),
    Kind("colors", {"type": "array", "items": {"type": "string", "enum": ["red", "green",
                                                                          "blue"]}},
         ["red"], "in red", (
        Mistake("red", (["red"],), (["red"],)),
        Mistake("Red", (["red"],), (["red"],)),
        Mistake("all", (), (["red", "green", "blue"],)),  # every listed value, no one-item list
    )),
    Kind("ref", {"anyOf": [{"type": "string", "pattern": r"^usr_[a-z0-9]{6}$"},
                           {"type": "integer", "minimum": 1}]}, "usr_ab12cd",
         "for user usr_ab12cd", (
        Mistake("USR_AB12CD", ("usr_ab12cd",), ("usr_ab12cd",)),
        Mistake("ab12cd", ("usr_ab12cd",), ()),
    )),
    Kind("status", {"type": "string", "enum": ["open", "closed", "archived"]}, "closed",
         "that are closed", (
        Mistake("close", ("closed",), ("closed",)),
        Mistake("Closed.", ("closed",), ("closed",)),
        Mistake("done", ("closed",), ()),
        Mistake("opened", (), ("open",)),
    )),
    Kind("sort", {"type": "string", "description": "Sort order. Allowed: asc, desc."}, "desc",
         "newest first (desc)", (
        Mistake("DESC", ("desc",), ("desc",)),
        Mistake("descending", ("desc",), ("desc",)),
        Mistake("newest", ("desc",), ()),
    )),
    Kind("limit", {"type": "integer", "description": "How many results, between 1 and 50."}, 20,
         "the top 20", (
        Mistake(100, (), ()),               # out of the described range: no clamp without intent
        Mistake("20 results", (20,), (20,)),
        Mistake(-5, (), ()),
    )),
    Kind("starts_at", {"type": "string", "format": "date-time"}, "2025-08-01T09:30:00+02:00",
         "at 09:30 on August 1, 2025 Paris time (+02:00)", (
        Mistake("2025-08-01T09:30:00", ("2025-08-01T09:30:00+02:00",), ()),  # no offset
        Mistake("2025-08-01 09:30:00+02:00", ("2025-08-01T09:30:00+02:00",),
                ("2025-08-01T09:30:00+02:00",)),
    )),
    Kind("site", {"type": "string", "format": "uri"}, "https://example.com/a%20b",
         "for https://example.com/a%20b", (
        Mistake("https://example.com/a b", ("https://example.com/a%20b",),
                ("https://example.com/a%20b",)),
        # the task's address, cut: the task's; else a web address takes https
        Mistake("example.com", ("https://example.com/a%20b",), ("https://example.com",)),
    )),
    Kind("invoice", {"type": "string", "pattern": r"^INV-\d{3}$"}, "INV-204",
         "for invoice INV-204", (
        Mistake("INV-203", ("INV-204",), (), "Invoice INV-203 not found"),
        Mistake("INV-204", (), (), "Invoice INV-204 is already paid"),
        Mistake("INV-205", ("INV-204",), (), '{"detail": "No invoice with id INV-205"}'),
    )),
    Kind("region", {"type": "string", "description": "Region code such as eu-west-1."},
         "eu-west-3", "in region eu-west-3", (
        Mistake("eu-west-1", ("eu-west-3",), (), "region eu-west-1 is not enabled for this "
                                                 "account"),
        Mistake("Paris", ("eu-west-3",), (), "unknown region: Paris"),
    )),
    Kind("address", {"type": "object", "properties": {
            "city": {"type": "string"},
            "zip": {"type": "string", "pattern": r"^\d{5}$"}},
          "required": ["city", "zip"], "additionalProperties": False},
         {"city": "Lyon", "zip": "69002"}, "to Lyon 69002", (
        Mistake({"city": "Lyon", "zip": 69002}, ({"city": "Lyon", "zip": "69002"},),
                ({"city": "Lyon", "zip": "69002"},)),
        Mistake({"city": "Lyon"}, ({"city": "Lyon", "zip": "69002"},), ()),
        Mistake({"city": "Lyon", "zip": "6902"}, ({"city": "Lyon", "zip": "69002"},), ()),
    )),
)  # fmt: skip


Scenario = tuple[ToolSpec, dict[str, Any], "str | None", dict[str, Any], "str | None"]


def _tool(kinds: list[Kind], required: set[str]) -> ToolSpec:
    return ToolSpec.from_schema("tool", {
        "type": "object",
        "properties": {kind.name: kind.schema for kind in kinds},
        "required": sorted(required),
        "additionalProperties": False,
    })  # fmt: skip


#: Error formats tools really reply with, naming the field and the value sent.
ERRORS = (
    "1 validation error for Tool\n{name}\n  Input should be valid [type=value_error, "
    "input_value={sent!r}]",
    '{{"detail": [{{"loc": ["body", "{name}"], "msg": "value is not valid", '
    '"type": "value_error"}}]}}',
    "Invalid value for {name}: {sent}",
    "{sent!r} is not valid under any of the given schemas",
)


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """A tool, a call, a task, and per field the outcomes a repair may have there."""
    picked = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=4,
                           unique_by=lambda kind: kind.name))  # fmt: skip
    required = {kind.name for kind in picked if draw(st.booleans())}
    call: dict[str, Any] = {}
    allowed: dict[str, Any] = {}
    error: str | None = None
    phrases = []
    for kind in picked:
        stated = draw(st.booleans())
        if stated:
            phrases.append(kind.phrase)
        how = draw(st.sampled_from(["right", "wrong", "left out"]))
        if how == "right":
            call[kind.name] = kind.meant
            allowed[kind.name] = (kind.meant,)
        elif how == "wrong" and kind.mistakes:
            mistake = draw(st.sampled_from(kind.mistakes))
            call[kind.name] = mistake.sent
            allowed[kind.name] = mistake.stated if stated else mistake.open
            if mistake.error is not None and error is None:
                error = mistake.error
            elif error is None and draw(st.booleans()):
                error = draw(st.sampled_from(ERRORS)).format(name=kind.name, sent=mistake.sent)
        elif stated:  # left out, the task writes it: that value (or, optional, nothing)
            allowed[kind.name] = (kind.meant,) if kind.name in required else (kind.meant, None)
        else:  # left out, written nowhere: absent, or a decline if required
            allowed[kind.name] = (DECLINE,) if kind.name in required else (None,)
    task = f"Please do it {', '.join(phrases)}." if phrases else draw(
        st.sampled_from([None, "Please do it."]))  # fmt: skip
    return _tool(picked, required), call, task, allowed, error


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios())
def test_a_repair_keeps_what_the_task_states_or_declines(
    scenario: Scenario,
) -> None:
    spec, call, task, allowed, error = scenario
    result = ParamRepairer(spec).repair(call, error, task=task, now=NOW)
    if not result.ok:
        return
    assert spec.is_valid(result.args), result.args
    for name, outcomes in allowed.items():
        assert DECLINE not in outcomes, (
            f"{name}: required, stated nowhere, yet repaired to {result.args}"
        )
        got = result.args.get(name)
        if name in call and got == call[name]:
            continue  # left as sent: not the repair's doing
        assert any(_same(got, ok) for ok in outcomes), (
            f"{name}: sent {call.get(name)!r}, task {task!r}: got {got!r}, allowed {outcomes!r}"
        )


def _same(got: Any, want: Any) -> bool:
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        return not isinstance(got, bool) and got == want
    return type(got) is type(want) and got == want


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios())
def test_a_repaired_call_is_a_fixed_point(
    scenario: Scenario,
) -> None:
    spec, call, task, _, error = scenario
    repairer = ParamRepairer(spec)
    first = repairer.repair(call, error, task=task, now=NOW)
    if not first.ok:
        return
    again = repairer.repair(first.args, task=task, now=NOW)
    assert again.ok and again.args == first.args and again.strategy == "none", again.reason


# -- what the properties found, each as a kind ----------------------------------------------


def test_all_for_a_list_the_task_narrows_is_declined_not_expanded() -> None:
    spec = _tool([next(k for k in KINDS if k.name == "colors")], set())
    narrowed = ParamRepairer(spec).repair({"colors": "all"}, task="Show the shirts in red.")
    assert not narrowed.ok and "red" in narrowed.reason
    whole = ParamRepairer(spec).repair({"colors": "all"}, task="Show the shirts in every color.")
    assert whole.ok and whole.args == {"colors": ["red", "green", "blue"]}


def test_a_free_text_value_refused_never_takes_the_number_another_field_holds() -> None:
    spec = _tool([next(k for k in KINDS if k.name == "address")], set())
    sent = {"address": {"city": "Lyon", "zip": 69002}}
    error = f"Invalid value for address: {sent['address']}"
    result = ParamRepairer(spec).repair(sent, error, task="Ship it to Lyon 69002.")
    assert not result.ok or result.args == {"address": {"city": "Lyon", "zip": "69002"}}, (
        result.args
    )


def test_a_free_text_word_refused_is_no_kind_word_for_the_id_beside_it() -> None:
    spec = ToolSpec.from_schema(
        "ship", {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    )
    result = ParamRepairer(spec).repair(
        {"city": "Lyon"}, "Invalid value for city: 'Lyon'", task="Ship it to Lyon 69002."
    )
    assert not result.ok, result.args  # fmt: skip


def test_an_enum_value_read_from_another_spelling_is_declined_when_the_task_names_another() -> None:
    spec = _tool([next(k for k in KINDS if k.name == "status")], set())
    other = ParamRepairer(spec).repair(
        {"status": "opened"}, task="List the tickets that are closed."
    )
    assert not other.ok and "closed" in other.reason
    same = ParamRepairer(spec).repair({"status": "opened"}, task="List the opened tickets.")
    assert same.ok and same.args == {"status": "open"}
    # a file name is no mention: "tar" in release.tar.gz names no value
    plain = ParamRepairer(spec).repair({"status": "opened"}, task="Check closed.tar.gz tickets.")
    assert plain.ok and plain.args == {"status": "open"}


def test_an_address_without_scheme_is_the_task_s_address_it_cuts() -> None:
    spec = _tool([next(k for k in KINDS if k.name == "site")], set())
    task = "Audit https://example.com/pricing?plan=pro and report."
    cut = ParamRepairer(spec).repair({"site": "example.com/pricing"}, task=task)
    assert cut.ok and cut.args == {"site": "https://example.com/pricing?plan=pro"}
    http = ParamRepairer(spec).repair({"site": "example.com"}, task="Audit http://example.com.")
    assert http.ok and http.args == {"site": "http://example.com"}
    two = "Compare https://example.com/a with https://example.com/b."
    assert not ParamRepairer(spec).repair({"site": "example.com"}, task=two).ok


# -- values read from the task for fields the call left out ---------------------------------

#: Booking fields: schema, how a task states a value ({v}), the values drawn. A phrase ending
#: in "!" states the value in another currency than the field's: it must never be filled.
BOOKING = {
    "guests": ({"type": "integer", "minimum": 1}, ["{v} guests", "for {v} guests"], range(2, 9)),
    "nights": ({"type": "integer", "minimum": 1}, ["{v} nights", "staying {v} nights"],
               range(2, 14)),
    "rooms": ({"type": "integer", "minimum": 1, "description": "Number of rooms."},
              ["{v} rooms"], range(2, 5)),
    "stars": ({"type": "integer", "minimum": 1, "maximum": 5}, ["{v}-star", "at least {v} stars"],
              range(2, 5)),
    "room_type": ({"type": "string", "enum": ["single", "double", "suite"]}, ["in a {v}"],
                  ["single", "double", "suite"]),
    "city": ({"type": "string"}, ["in {v}"], ["Paris", "Lisbon", "Osaka"]),
    "max_price": ({"type": "number", "description": "Highest nightly price in euros."},
                  ["at most €{v} per night", "max {v} euros", "under ${v} a night!",
                   "max {v} pounds!", "below {v} USD!"], [90, 150, 200]),
}  # fmt: skip
#: Numbers in a task that fill none of the fields.
DISTRACTIONS = ["in room 12", "on flight 345", "at 7 pm", "on the 5th floor", "near gate 7",
                "for a 3-day conference", "booking ref 8812", "under 300 dollars in total",
                "the usual one", "10 minutes from the station"]  # fmt: skip


@st.composite
def bookings(draw: st.DrawFn) -> tuple[ToolSpec, dict[str, Any], str, dict[str, Any]]:
    names = draw(st.lists(st.sampled_from(sorted(BOOKING)), min_size=2, max_size=5, unique=True))
    meant: dict[str, Any] = {}
    phrases = []
    for name in names:
        _, templates, values = BOOKING[name]
        if not draw(st.booleans()):
            continue  # the task does not state it
        value = draw(st.sampled_from(list(values)))
        template = draw(st.sampled_from(templates))
        phrases.append(template.rstrip("!").format(v=value))
        meant[name] = None if template.endswith("!") else value
    phrases += draw(st.lists(st.sampled_from(DISTRACTIONS), max_size=2, unique=True))
    phrases = draw(st.permutations(phrases))
    sent = {n: v for n, v in meant.items() if v is not None and draw(st.booleans())}
    required = [n for n in names if draw(st.booleans())]
    spec = ToolSpec.from_schema("book_hotel", {
        "type": "object", "properties": {n: BOOKING[n][0] for n in names},
        "required": sorted(required), "additionalProperties": False,
    })  # fmt: skip
    return spec, sent, f"Book a hotel {', '.join(phrases)}.", meant


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=bookings())
def test_a_value_filled_from_the_task_is_the_one_it_states_for_that_field(
    scenario: tuple[ToolSpec, dict[str, Any], str, dict[str, Any]],
) -> None:
    spec, sent, task, meant = scenario
    result = ParamRepairer(spec).repair(sent, task=task, now=NOW)
    if not result.ok:
        return
    for name, value in result.args.items():
        if name in sent:
            continue
        assert meant.get(name) is not None and _same(value, meant[name]), (
            f"{name} filled with {value!r} from {task!r}; the task states {meant.get(name)!r}"
        )


@pytest.mark.parametrize(
    ("task", "field"),
    [
        ("Book a hotel under 150 euros a night.", "nights"),  # an amount of euros, per night
        ("Book a hotel in room 12.", "rooms"),  # a room's label, not a count of rooms
        ("Book a hotel, max 90 pounds.", "max_price"),  # the field is in euros
        ("Book a hotel, below 90 USD.", "max_price"),
    ],
)
def test_a_number_the_task_ties_to_something_else_never_fills_the_field(
    task: str, field: str
) -> None:
    schema = {"type": "object", "properties": {field: BOOKING[field][0]}, "required": [field]}
    spec = ToolSpec.from_schema("book_hotel", schema)
    result = ParamRepairer(spec).repair({}, task=task)
    assert not result.ok, result.args


def test_a_count_written_as_a_word_another_field_holds_is_not_read_twice() -> None:
    spec = ToolSpec.from_schema("book_hotel", {
        "type": "object", "properties": {n: BOOKING[n][0] for n in ("rooms", "room_type")},
        "required": ["rooms", "room_type"]})  # fmt: skip
    result = ParamRepairer(spec).repair({"room_type": "single"}, task="Book a single room.")
    assert not result.ok, result.args


# -- values the tool refused, read against the task -----------------------------------------


def _one_text(name: str) -> ToolSpec:
    schema = {"type": "object", "properties": {name: {"type": "string"}}, "required": [name]}
    return ToolSpec.from_schema("tool", schema)


@pytest.mark.parametrize("sent", ["JPY", "jpy"])
@pytest.mark.parametrize("task", ["Convert it in JPY.", "Convert 40 units."])
def test_a_refused_code_is_not_turned_into_its_name_without_the_field_saying_so(
    sent: str, task: str
) -> None:
    result = ParamRepairer(_one_text("currency")).repair(
        {"currency": sent}, "invalid currency: " + sent, task=task
    )
    assert not result.ok or result.args == {"currency": "JPY"}, result.args


@pytest.mark.parametrize(("sent", "task"), [
    ("ORD", "Check it, and also order ORD-0107."),  # the part every order id shares
    ("2025", "Move it, not to 2025-08-01."),
])  # fmt: skip
def test_the_shared_start_of_an_id_is_not_the_task_s_id_in_full(sent: str, task: str) -> None:
    result = ParamRepairer(_one_text("ref")).repair(
        {"ref": sent}, f"Error: no such ref: '{sent}'", task=task
    )
    assert not result.ok, result.args


def test_words_before_a_sigil_the_task_writes_are_dropped_the_sigil_kept() -> None:
    result = ParamRepairer(_one_text("channel")).repair(
        {"channel": "the #ops"}, "Channel the #ops not found", task="Post it in #ops."
    )
    assert result.ok and result.args == {"channel": "#ops"}, result.reason


def test_a_date_cut_short_of_the_one_the_task_writes_is_not_another_day() -> None:
    spec = ToolSpec.from_schema("tool", {
        "type": "object", "properties": {"day": {"type": "string", "format": "date"}},
        "required": ["day"]})  # fmt: skip
    result = ParamRepairer(spec).repair({"day": "2025-07-1"}, task="Move it to 2025-07-14.")
    assert not result.ok or result.args == {"day": "2025-07-14"}, result.args
