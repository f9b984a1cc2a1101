"""The session's option values and ini keys as plain values (``harness.options``), without
pytest: each parser's allowed input, and bad input always one ``ChaosConfigError`` line."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.harness.options import (
    SEED_KEY,
    TRACES_KEY,
    AutoRuns,
    RawOptions,
    parse_explore,
    parse_runs,
    parse_seed,
    session_settings,
)
from pytest_agentchaos.harness.spec import MAX_EXPLORE, MAX_RUNS
from pytest_agentchaos.profiles.profile import ProfileRegistry

INI: dict[str, Any] = {
    "chaos_profile": "none",
    "chaos_report_dir": "",
    "chaos_virtual_sleep": "false",
    "chaos_freeze_time": "false",
    "chaos_trace_max_value": "65536",
    "chaos_allow_hosts": [],
    "chaos_wall_timeout": "300",
    "chaos_baseline": "",
    "chaos_baseline_tolerances": [],
}


def _raw(tmp_path: Path, ini: dict[str, Any] | None = None, **given: Any) -> RawOptions:
    return RawOptions(rootpath=tmp_path, cwd=tmp_path, ini={**INI, **(ini or {})}, **given)


def _registry(tmp_path: Path) -> ProfileRegistry:
    return ProfileRegistry.default(tmp_path / "chaos_profiles")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", 1),
        ("25", 25),
        (str(MAX_RUNS), MAX_RUNS),
        ("auto:2", AutoRuns(2)),
        ("AUTO:40", AutoRuns(40)),
    ],
)
def test_runs_in_digits_or_auto(raw: str, expected: int | AutoRuns) -> None:
    assert parse_runs(raw) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("0", "--chaos-runs: expected 1 to 10000 runs, got '0'"),
        ("+3", "--chaos-runs: expected 1 to 10000 runs, got '+3'"),
        ("1_0", "--chaos-runs: expected 1 to 10000 runs, got '1_0'"),
        ("٣", "--chaos-runs: expected 1 to 10000 runs, got '٣'"),
        ("auto:1", "--chaos-runs: auto:MAX: expected MAX from 2 to 10000, got 'auto:1'"),
        ("auto:", "--chaos-runs: auto:MAX: expected MAX from 2 to 10000, got 'auto:'"),
    ],
)
def test_bad_runs_name_the_option_and_the_range(raw: str, message: str) -> None:
    with pytest.raises(ChaosConfigError) as info:
        parse_runs(raw)
    assert str(info.value) == message


def test_runs_error_spells_the_flag_it_was_given_as() -> None:
    with pytest.raises(ChaosConfigError, match=r"^--agentchaos-runs: "):
        parse_runs("x", "--agentchaos-runs")


@given(st.text(max_size=12))
def test_any_runs_text_parses_or_says_why(raw: str) -> None:
    try:
        runs = parse_runs(raw)
    except ChaosConfigError as exc:
        assert str(exc).startswith("--chaos-runs: ")
        assert "\n" not in str(exc).replace(repr(raw), "")
    else:
        count = runs.max if isinstance(runs, AutoRuns) else runs
        assert 1 <= count <= MAX_RUNS
        assert int(raw[5:] if isinstance(runs, AutoRuns) else raw) == count


@given(st.text(max_size=12))
def test_any_explore_text_parses_or_says_why(raw: str) -> None:
    try:
        found = parse_explore(raw)
    except ChaosConfigError as exc:
        assert str(exc) == f"--chaos-explore: expected 1 to {MAX_EXPLORE} schedules, got {raw!r}"
    else:
        assert str(found) == raw.lstrip("0") and 1 <= found <= MAX_EXPLORE


@given(st.text(max_size=12))
def test_any_seed_text_is_a_seed_or_an_argparse_error(raw: str) -> None:
    try:
        seed = parse_seed(raw)
    except argparse.ArgumentTypeError as exc:
        assert str(exc) == f"expected a non-negative integer, got {raw!r}"
    else:
        assert seed >= 0 and seed == int(raw)


def test_settings_from_plain_values(tmp_path: Path) -> None:
    raw = _raw(tmp_path, {"chaos_virtual_sleep": "yes"}, seed=7, profile="flaky", runs="auto:5")
    settings = session_settings(raw, _registry(tmp_path))
    assert (settings.seed, settings.default_profile, settings.profile_option) == (
        7,
        "flaky",
        "flaky",
    )
    assert (settings.runs, settings.auto_runs, settings.virtual_sleep) == (5, True, True)
    assert settings.profiles == ("flaky",)


def test_a_worker_takes_the_controllers_seed_and_trace_dir(tmp_path: Path) -> None:
    given = {SEED_KEY: 42, TRACES_KEY: str(tmp_path / "t")}
    raw = _raw(tmp_path, seed=7, html="r.html", workerinput=given)
    settings = session_settings(raw, _registry(tmp_path))
    assert settings.seed == 42
    assert settings.trace_dir == tmp_path / "t" and settings.temp_traces


def test_an_unknown_profile_names_where_it_came_from(tmp_path: Path) -> None:
    for raw, where in (
        (_raw(tmp_path, profile="nosuch"), "--chaos-profile: "),
        (_raw(tmp_path, {"chaos_profile": "nosuch"}), "ini chaos_profile: "),
    ):
        with pytest.raises(ChaosConfigError) as info:
            session_settings(raw, _registry(tmp_path))
        assert str(info.value).startswith(where)
        assert "nosuch" in str(info.value)


def test_bad_runs_use_the_sessions_flag_prefix(tmp_path: Path) -> None:
    raw = _raw(tmp_path, runs="0", flag_prefix="--agentchaos-")
    with pytest.raises(ChaosConfigError, match=r"^--agentchaos-runs: expected 1 to"):
        session_settings(raw, _registry(tmp_path))


@given(st.sampled_from(sorted(INI)), st.text(max_size=8))
def test_any_ini_value_is_taken_or_one_error_line(key: str, value: str) -> None:
    root = Path("/nonexistent-agentchaos-root")
    listed = key in ("chaos_allow_hosts", "chaos_baseline_tolerances")
    raw = RawOptions(rootpath=root, cwd=root, ini={**INI, key: [value] if listed else value})
    try:
        session_settings(raw, ProfileRegistry.default(root / "chaos_profiles"))
    except ChaosConfigError as exc:
        assert str(exc).strip() and "Traceback" not in str(exc)
