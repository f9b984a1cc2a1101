"""The session's bookkeeping the plugin asks for, on plain values and without pytest: auto-run
tallies, search budgets, a found schedule's command, where a partial replay's report goes, and
the notes printed around the summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_agentchaos.harness.auto import AutoTally, case_key
from pytest_agentchaos.harness.placement import place_report
from pytest_agentchaos.harness.search_plan import (
    schedule_replay,
    search_budget,
    unfired_message,
)
from pytest_agentchaos.harness.settings import SessionSettings
from pytest_agentchaos.harness.spec import RunSpec
from pytest_agentchaos.harness.variants import Variant
from pytest_agentchaos.report.notes import (
    header_lines,
    no_recorded_test,
    replay_note,
    search_sections,
)


def _auto(run: int) -> Variant:
    return Variant(profile=None, run=run, seed=run, id=f"seed{run}", runs=10, auto=True)


def test_a_case_is_decided_by_its_judged_runs_only() -> None:
    tally = AutoTally()
    key = case_key("t.py::test[seed1]", _auto(1))
    assert key == ("t.py::test", None)
    tally.record(key, "skipped", None, 10)
    assert key not in tally.outcomes and tally.skip_reason(key, None) is None
    tally.record(key, "failed", None, 10)  # pass^k: one failure decides it
    reason = tally.skip_reason(key, None)
    assert (
        reason
        == "agentchaos: t.py::test: decided after 1 of at most 10 runs: a run failed (pass^k)"
    )


def test_a_decision_is_kept_once_made() -> None:
    tally = AutoTally()
    key = ("t.py::test", "flaky")
    tally.record(key, "error", None, 10)
    first = tally.stops[key]
    tally.record(key, "passed", None, 10)
    assert tally.stops[key] is first and tally.outcomes[key] == [False, True]


def test_cases_of_other_profiles_are_counted_apart() -> None:
    tally = AutoTally()
    tally.record(("t.py::test", "a"), "failed", None, 10)
    assert tally.skip_reason(("t.py::test", "b"), None) is None


@pytest.mark.parametrize(
    ("spec", "session", "xfail", "expected"),
    [
        (None, None, False, (None, None)),
        (None, 5, False, (5, None)),
        (RunSpec(explore=7), None, False, (7, None)),
        (RunSpec(explore=7), 5, False, (7, None)),
        (RunSpec(explore=False), 5, False, (None, "its chaos marker says explore=False")),
        (RunSpec(explore=False), None, False, (None, None)),
        (RunSpec(schedule=()), 5, False, (None, "its schedule is pinned (schedule=...)")),
        (RunSpec(schedule=()), None, False, (None, None)),
        (None, 5, True, (None, "it is marked xfail (its failure is expected)")),
        (None, None, True, (None, None)),
    ],
)
def test_search_budget(
    spec: RunSpec | None, session: int | None, xfail: bool, expected: Any
) -> None:
    assert search_budget(spec, session, expected_to_fail=xfail) == expected


def test_a_found_schedules_command_repeats_the_session_and_its_prefix() -> None:
    settings = SessionSettings(seed=3, profile_option="a b", runs=4, flag_prefix="--agentchaos-")
    command = schedule_replay("t.py::test", settings, "s dir/x.json")
    assert command == (
        "pytest t.py::test --agentchaos-seed=3 --agentchaos-profile='a b' --agentchaos-runs=4 "
        "--agentchaos-schedule='s dir/x.json'"
    )


def test_unfired_message_counts_and_names_the_missed_faults() -> None:
    text = unfired_message("t.py::test", ["timeout on search#2", "crash on book#1"], 3)
    assert text.startswith("t.py::test: 2 of the 3 faults its schedule pins never fired: ")
    assert "timeout on search#2; crash on book#1" in text


def _recording(report_dir: Path, seed: int, ids: list[str]) -> None:
    report_dir.mkdir(parents=True)
    rows = [{"node_id": i, "outcome": "passed"} for i in ids]
    (report_dir / "index.json").write_text(
        json.dumps({"session_seed": seed, "tests": rows}), encoding="utf-8"
    )


def test_no_report_dir_or_a_replay_is_written_in_place(tmp_path: Path) -> None:
    assert place_report(SessionSettings(), ["t.py::a"]) is None
    replaying = SessionSettings(report_dir=tmp_path, replay=object())
    assert place_report(replaying, ["t.py::a"]) is None


def test_a_session_under_another_seed_writes_in_place(tmp_path: Path) -> None:
    _recording(tmp_path / "r", 1, ["t.py::a", "t.py::b"])
    settings = SessionSettings(seed=2, report_dir=tmp_path / "r")
    assert place_report(settings, ["t.py::a"]) is None


def test_part_of_a_recording_under_its_seed_goes_to_its_replay_folder(tmp_path: Path) -> None:
    recording = tmp_path / "r"
    _recording(recording, 2, ["t.py::a", "t.py::b"])
    settings = SessionSettings(seed=2, report_dir=recording, html=tmp_path / "report.html")
    placed = place_report(settings, ["t.py::a"])
    assert placed is not None
    moved, place = placed
    own = place.report_dir
    assert own != recording and own.is_relative_to(recording) and (own / "traces").is_dir()
    assert (moved.report_dir, moved.trace_dir, moved.html) == (
        own,
        own / "traces",
        own / "report.html",
    )
    assert (place.rerun, place.recorded) == (1, 2)
    note = replay_note(place, moved.report_dir, None, asked_for_report=False)
    assert note == (
        f"agentchaos: this session ran 1 of the 2 runs recorded in {recording / 'index.json'} "
        f"again under their seed: its report is in {own}; the recording is left as it was"
    )
    assert place_report(settings, ["t.py::a", "t.py::b"]) is None  # every run: in place


def test_header_lines() -> None:
    assert header_lines(SessionSettings(seed=5, default_profile="flaky")) == [
        "agentchaos: profile=flaky seed=5 (replay with --chaos-seed=5)"
    ]
    auto = SessionSettings(seed=5, profiles=("a", "b"), runs=9, auto_runs=True)
    assert header_lines(auto) == [
        "agentchaos: profile=a,b seed=5 runs=auto:9 (replay with --chaos-seed=5)"
    ]


def test_replay_note_only_when_there_is_something_to_say(tmp_path: Path) -> None:
    assert replay_note(None, None, None, asked_for_report=True) is None
    assert replay_note(None, None, tmp_path / "i.json", asked_for_report=False) is None
    assert replay_note(None, None, tmp_path / "i.json", asked_for_report=True) == (
        f"agentchaos: replaying {tmp_path / 'i.json'}: no report written (it would overwrite "
        "what it replays)"
    )
    assert replay_note(None, tmp_path, tmp_path / "i.json", asked_for_report=False) == (
        f"agentchaos: replaying {tmp_path / 'i.json'}: its report is in {tmp_path}"
    )


def test_no_recorded_test_lists_at_most_three() -> None:
    text = no_recorded_test(Path("r/index.json"), ["d", "c", "b", "a"])
    assert text.startswith("--chaos-replay: r/index.json: none of the tests collected here")
    assert "(it has 4: a, b, c, ...)" in text


def test_search_sections_sort_and_deduplicate() -> None:
    rows = [
        {"test": "t.py::b", "breaking_point": {"description": "latency.seconds = 2"}},
        {"test": "t.py::a", "breaking_point": {"description": "latency.seconds = 1"}},
        {"test": "t.py::c", "not_searched": "why"},
        {"test": "t.py::c", "not_searched": "why"},
        {"test": "t.py::d"},
    ]
    assert search_sections(rows) == [
        (
            "agentchaos: breaking points",
            ["t.py::a: latency.seconds = 1", "t.py::b: latency.seconds = 2"],
        ),
        ("agentchaos: 1 chaos test(s) not searched", ["t.py::c: ran once, not searched: why"]),
    ]
    assert search_sections([{"test": "t.py::d"}]) == []
