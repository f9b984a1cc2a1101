"""Kinds the sixth independent dev batch showed the repairer getting wrong, each written as a
user of the repairer meets it (not in the batch's words)."""

from __future__ import annotations

from pytest_agentchaos.repair import ParamRepairer, ToolSpec
from pytest_agentchaos.repair.error_bodies import listed_values

DEPLOY = ToolSpec.from_schema("deploy", {
    "type": "object",
    "properties": {"build_step": {"type": "string"},
                   "ref": {"type": "string", "description": "Branch or tag to deploy"}},
    "required": ["build_step"],
})  # fmt: skip


def test_the_values_an_error_lists_under_the_fields_noun_are_the_ones_to_choose_from() -> None:
    # the listing's noun is a word of the field's name ("steps" for build_step), and another
    # "Noun:" earlier in the message does not hide it
    error = "Step not found: 'compile-app' in build 77 (steps: fetch, compile-apps, package)"
    result = ParamRepairer(DEPLOY).repair(
        {"build_step": "compile-app"}, error, "Rerun the compile app step of build 77."
    )
    assert result.ok and result.args == {"build_step": "compile-apps"}, result.reason
    # without the list, the task's prose is no spelling of the step's name
    bare = ParamRepairer(DEPLOY).repair(
        {"build_step": "compile-app"}, "Step not found: 'compile-app' in build 77",
        "Rerun the compile app step of build 77.",
    )  # fmt: skip
    assert not bare.ok, bare.args


def test_a_listed_value_holding_the_sent_one_whole_is_it_in_full() -> None:
    error = "Step not found: 'pack' in build 77 (steps: fetch, compile-apps, pack-zip)"
    result = ParamRepairer(DEPLOY).repair({"build_step": "pack"}, error, "Redo the pack step.")
    assert result.ok and result.args == {"build_step": "pack-zip"}, result.reason


def test_the_description_s_first_word_names_the_listing_and_a_dot_stays_in_a_value() -> None:
    error = "Unknown ref: 'hotfix/3-2'. Known branches: main, hotfix/3.2, feature/x-y"
    result = ParamRepairer(DEPLOY).repair(
        {"build_step": "deploy", "ref": "hotfix/3-2"}, error, "Deploy hotfix/3-2 please."
    )
    assert result.ok and result.args == {"build_step": "deploy", "ref": "hotfix/3.2"}, result.reason


def test_a_shorter_listed_name_is_not_the_one_the_task_writes_as_sent() -> None:
    # the task asks for 'hotfixes' as sent; 'hotfix' is another branch, not its spelling
    error = "Unknown ref: 'hotfixes'. Known branches: main, hotfix"
    result = ParamRepairer(DEPLOY).repair(
        {"build_step": "deploy", "ref": "hotfixes"}, error, "Deploy the hotfixes branch."
    )
    assert not result.ok, result.args


def test_values_apart_by_commas_keep_their_slashes() -> None:
    assert listed_values("main, release/2.0, feat/a") == ["main", "release/2.0", "feat/a"]
    assert listed_values("json/xml") == ["json", "xml"]


JOB = ToolSpec.from_schema("schedule_job", {
    "type": "object",
    "properties": {
        "expiry": {"anyOf": [{"type": "integer", "minimum": 30, "maximum": 172800},
                             {"type": "null"}],
                   "description": "How long the job may wait, in seconds (30 to 172800)."},
        "grace": {"type": "integer", "minimum": 5, "maximum": 3600,
                  "description": "Seconds to wait before the retry."},
        "remind_every": {"type": "integer",
                         "description": "Minutes before reminding again while it waits."},
    },
})  # fmt: skip


def test_a_number_out_of_bounds_on_another_unit_s_scale_is_the_task_s_quantity() -> None:
    task = "Queue it and give up after one day."
    result = ParamRepairer(JOB).repair(
        {"expiry": 86_400_000}, "expiry: must be less than or equal to 172800", task
    )  # a day in milliseconds, for a field in seconds
    assert result.ok and result.args == {"expiry": 86_400}, result.reason
    # minutes sent as they are, where the description opens with its unit ("Seconds to ...")
    waited = ParamRepairer(JOB).repair(
        {"grace": 3}, "grace: must be greater than or equal to 5", "Retry after 3 minutes."
    )
    assert waited.ok and waited.args == {"grace": 180}, waited.reason


def test_a_number_on_no_unit_s_scale_or_two_quantities_of_the_measure_are_declined() -> None:
    error = "expiry: must be less than or equal to 172800"
    odd = ParamRepairer(JOB).repair({"expiry": 999_999}, error, "Give up after one day.")
    assert not odd.ok, odd.args  # 999999 is no day on any unit's scale
    two = ParamRepairer(JOB).repair(
        {"expiry": 86_400_000}, error, "Give up after one day, retry after 2 hours."
    )
    assert not two.ok, two.args


def test_a_duration_with_its_unit_goes_into_the_unit_a_description_opens_with() -> None:
    result = ParamRepairer(JOB).repair(
        {"remind_every": "2h"}, "remind_every: must be an integer", "Remind me every 2 hours."
    )
    assert result.ok and result.args == {"remind_every": 120}, result.reason


MUTE = ToolSpec.from_schema("mute", {
    "type": "object",
    "properties": {
        "start": {"type": ["integer", "null"], "description": "POSIX timestamp (seconds)."},
        "tz": {"type": "string"},
    },
})  # fmt: skip


def test_a_written_date_time_is_a_posix_timestamp_in_the_zone_a_sibling_field_holds() -> None:
    error = "start: Required value type is int and passed type was str"
    result = ParamRepairer(MUTE).repair({"start": "2026-11-29T01:00:00Z"}, error, "Mute it.")
    assert result.ok and result.args == {"start": 1795914000}, result.reason
    zoned = ParamRepairer(MUTE).repair(
        {"start": "2026-11-29 02:00", "tz": "Europe/Berlin"}, error, "Mute from 02:00 Berlin."
    )
    assert zoned.ok and zoned.args == {"start": 1795914000, "tz": "Europe/Berlin"}, zoned.reason
    # without a zone anywhere, the hour is a guess
    bare = ParamRepairer(MUTE).repair({"start": "2026-11-29 02:00"}, error, "Mute from 02:00.")
    assert not bare.ok, bare.args


ROOM = ToolSpec.from_schema("open_room", {
    "type": "object",
    "properties": {
        "recording": {
            "description": "Whether the room is recorded automatically ('auto_on') or not "
                           "('by_hand').",
            "enum": ["by_hand", "auto_on"], "type": "string"},
    },
})  # fmt: skip


def test_the_word_before_a_quoted_value_in_parentheses_glosses_it_inflected_too() -> None:
    error = "recording: Input should be 'by_hand' or 'auto_on'"
    task = "Open a room that records every call automatically."
    result = ParamRepairer(ROOM).repair({"recording": "automatic"}, error, task)
    assert result.ok and result.args == {"recording": "auto_on"}, result.reason
    # "not" glosses nothing: a no is no value's name
    neg = ParamRepairer(ROOM).repair({"recording": "not"}, error, "Open a room.")
    assert not neg.ok, neg.args


SMS = ToolSpec.from_schema("sms", {
    "type": "object",
    "properties": {"to": {"type": "string", "pattern": "^[1-9]\\d{6,14}$"}},
})  # fmt: skip


def test_an_international_number_becomes_its_digits_where_the_pattern_takes_them_alone() -> None:
    error = "to: String should match pattern '^[1-9]\\d{6,14}$'"
    for sent in ("+447700900123", "+44 7700 900123", "0044 7700 900123"):
        result = ParamRepairer(SMS).repair({"to": sent}, error, "Text them.")
        assert result.ok and result.args == {"to": "447700900123"}, (sent, result.reason)
    # text that is no phone number is not stripped to its digits
    assert not ParamRepairer(SMS).repair({"to": "+ext 12 34"}, error, "Text them.").ok


RATE = ToolSpec.from_schema("invoice", {
    "type": "object",
    "properties": {"tax_rate": {"type": "string", "enum": ["0.13", "0.06", "0"]}},
})  # fmt: skip


def test_a_number_the_tool_lists_as_text_is_sent_as_that_text() -> None:
    error = (
        '{"detail":[{"type":"literal_error","loc":["body","tax_rate"],'
        "\"msg\":\"Input should be '0.13', '0.06' or '0'\",\"input\":0.06}]}"
    )
    result = ParamRepairer(RATE).repair({"tax_rate": 0.06}, error, "税率 6%")
    assert result.ok and result.args == {"tax_rate": "0.06"}, result.reason


ALERT = ToolSpec.from_schema("alert", {
    "type": "object", "properties": {"threshold": {"type": "number"}},
})  # fmt: skip


def test_a_percentage_is_the_fraction_the_task_writes_and_else_unknown() -> None:
    error = "threshold: Required value type is float and passed type was str"
    task = "Alert above 80% used; the query compares with 0.8 already."
    result = ParamRepairer(ALERT).repair({"threshold": "80%"}, error, task)
    assert result.ok and result.args == {"threshold": 0.8}, result.reason
    # 0-1 or 0-100: the task that writes no fraction leaves it unknown
    assert not ParamRepairer(ALERT).repair({"threshold": "80%"}, error, "Alert above 80%.").ok


STREAM = ToolSpec.from_schema("stream", {
    "type": "object",
    "properties": {"cap": {"type": "integer", "minimum": 50000, "maximum": 9000000,
                           "description": "Upper bound of the stream's rate, in bits per second."}},
})  # fmt: skip


def test_a_bit_rate_the_task_writes_with_an_si_prefix_is_converted_to_bits_per_second() -> None:
    error = "cap: Input should be greater than or equal to 50000"
    result = ParamRepairer(STREAM).repair({"cap": 1500}, error, "Cap the stream at 1.5 Mbps.")
    assert result.ok and result.args == {"cap": 1_500_000}, result.reason


def _ticket(kinds: list[str]) -> ToolSpec:
    return ToolSpec.from_schema("ticket", {
        "type": "object", "properties": {"kind": {"type": "string", "enum": kinds}},
    })  # fmt: skip


def test_a_cjk_head_word_is_the_one_compound_value_ending_in_it() -> None:
    spec = _ticket(["电子卧铺", "电子硬座"])
    result = ParamRepairer(spec).repair({"kind": "硬座"}, task="买一张硬座")
    assert result.ok and result.args == {"kind": "电子硬座"}, result.reason
    # two values end in it: which qualifier is meant is not said
    both = _ticket(["电子硬座", "纸质硬座"])
    assert not ParamRepairer(both).repair({"kind": "硬座"}, task="买一张硬座").ok


CI_VARS = ToolSpec.from_schema("run", {
    "type": "object",
    "properties": {"variables": {"type": "object", "additionalProperties": {"type": "string"}}},
})  # fmt: skip


def test_a_yes_no_where_text_is_due_is_spelt_as_the_task_writes_it_beside_the_name() -> None:
    result = ParamRepairer(CI_VARS).repair({"variables": {"VERBOSE": False}},
                                           task="Run it with VERBOSE=False please.")  # fmt: skip
    assert result.ok and result.args == {"variables": {"VERBOSE": "False"}}, result.reason
    # the task writes no spelling of it: "true", "True", "1" would be a guess
    bare = ParamRepairer(CI_VARS).repair({"variables": {"VERBOSE": False}}, task="Run it quietly.")
    assert not bare.ok, bare.args


CRON = ToolSpec.from_schema("schedule", {
    "type": "object", "properties": {"cron": {"type": "string"}}, "required": ["cron"],
})  # fmt: skip


def test_a_quartz_cron_with_a_zero_seconds_field_becomes_five_fields_the_tool_counts() -> None:
    error = "400 Bad Request: cron is invalid: '0 15 6 * * MON' (expected 5 fields)"
    result = ParamRepairer(CRON).repair({"cron": "0 15 6 * * MON"}, error, "Every Monday 06:15.")
    assert result.ok and result.args == {"cron": "15 6 * * MON"}, result.reason
    # a seconds field other than 0 would be lost: declined
    other = error.replace("'0 15", "'30 15")
    assert not ParamRepairer(CRON).repair({"cron": "30 15 6 * * MON"}, other, "Monday 06:15").ok


_KIND = {"enum": ["sms", "email"], "type": "string"}
NOTIFY = ToolSpec.from_schema("notify", {
    "type": "object",
    "properties": {"targets": {"type": "array", "items": {"anyOf": [
        {"type": "object", "required": ["to"],
         "properties": {"to": {"type": "string", "pattern": "^[1-9]\\d{6,14}$"},
                        "kind": {**_KIND, "default": "sms"}}},
        {"type": "object", "required": ["to"],
         "properties": {"to": {"type": "string"}, "kind": {**_KIND, "default": "email"}}},
    ]}}},
})  # fmt: skip


def test_a_union_member_named_by_its_tag_is_held_to_its_own_shape() -> None:
    # the e-mail member takes any text and any kind: the tag says it is the SMS member
    call = {"targets": [{"kind": "sms", "to": "+44 7700 900123"}]}
    assert NOTIFY.is_valid(call)
    result = ParamRepairer(NOTIFY).repair(call, task="Text +44 7700 900123.")
    assert result.ok and result.args == {"targets": [{"kind": "sms", "to": "447700900123"}]}, (
        result.reason
    )
    # no mechanical change fits its shape: declined, not passed as it is
    odd = ParamRepairer(NOTIFY).repair({"targets": [{"kind": "sms", "to": "call me"}]}, task="x")
    assert not odd.ok, odd.args
    # the e-mail member's own tag: its shape, any text
    mail = {"targets": [{"kind": "email", "to": "a@b.io"}]}
    assert ParamRepairer(NOTIFY).repair(mail, task="Mail a@b.io.").args == mail


def _levelled(description: str) -> ToolSpec:
    return ToolSpec.from_schema("page", {
        "type": "object",
        "properties": {"severity": {"type": "integer", "minimum": 1, "maximum": 5,
                                    "description": description}},
    })  # fmt: skip


def test_a_level_written_with_the_field_s_initial_is_its_number_where_1_is_the_highest() -> None:
    error = "severity: Input should be a valid integer"
    spec = _levelled("1 (highest) to 5.")
    result = ParamRepairer(spec).repair({"severity": "S2"}, error, "Open an S2 incident.")
    assert result.ok and result.args == {"severity": 2}, result.reason
    # a scale the description does not say runs from 1 as the highest may run the other way
    other = _levelled("1 (normal) to 5 (urgent).")
    assert not ParamRepairer(other).repair({"severity": "S2"}, error, "Open an S2 incident.").ok


def test_an_out_of_bounds_level_is_the_one_the_task_names_by_the_description_s_word() -> None:
    spec = _levelled("1 (highest) to 5 (lowest).")
    error = "severity: must be greater than or equal to 1"
    result = ParamRepairer(spec).repair({"severity": 0}, error, "Give it the highest severity.")
    assert result.ok and result.args == {"severity": 1}, result.reason
    assert type(result.args["severity"]) is int
    # the task names no level by the description's words: clamping would be a guess
    assert not ParamRepairer(spec).repair({"severity": 0}, error, "Make it bad.").ok
