"""Chaos profiles: built-ins load, user profiles shadow and extend them, bad files are named."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.faults import FaultPlan, parse_fault
from pytest_agentchaos.profiles import (
    Budgets,
    Profile,
    ProfileRegistry,
    builtin_dir,
    deep_merge,
    inline_profile,
)

BUILTINS = ("none", "flaky", "outage", "rate_limited", "malformed", "spiral", "quiet")


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / f"{name}.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def kinds(profile: Profile) -> list[str]:
    return [f.kind.name for f in profile.faults]


# -- built-ins --------------------------------------------------------------------------


@pytest.mark.parametrize("name", BUILTINS)
def test_every_builtin_profile_loads(name):
    registry = ProfileRegistry.default()
    profile = registry.get(name)
    assert profile.name == name
    assert profile.description
    assert profile.chain == (name,)
    assert Path(profile.source) == builtin_dir() / f"{name}.toml"
    assert FaultPlan(profile.faults, seed=1).faults == profile.faults


def test_builtin_names_are_listed():
    assert set(BUILTINS) <= set(ProfileRegistry.default().names())


def test_builtin_profiles_contain_what_their_descriptions_promise():
    reg = ProfileRegistry.default()
    assert reg.get("none").faults == ()
    assert kinds(reg.get("flaky")) == ["timeout", "http_error", "connection_error", "latency"]
    assert all(f.selector.probability < 1 for f in reg.get("flaky").faults)

    (outage,) = reg.get("outage").faults
    assert outage.kind.name == "http_error" and outage.kind.values["status"] == (503,)
    assert outage.selector.window == (0.0, 120.0)

    (rate,) = reg.get("rate_limited").faults
    assert rate.kind.name == "rate_limit" and rate.selector.max_count is not None

    assert kinds(reg.get("malformed")) == ["malformed_params"]
    spiral = reg.get("spiral")
    assert {"paraphrased_output", "repeated_output", "stale_output"} <= set(kinds(spiral))
    assert any(f.kind.name == "paraphrased_output" for f in spiral.faults)
    for name in BUILTINS[1:]:
        assert reg.get(name).budgets.max_steps is not None


def test_default_registry_ignores_a_missing_user_dir(tmp_path):
    reg = ProfileRegistry.default(tmp_path / "does-not-exist")
    assert reg.get("flaky").name == "flaky"


# -- user dirs --------------------------------------------------------------------------


def test_user_profile_shadows_a_builtin(tmp_path):
    path = write(
        tmp_path,
        "flaky",
        """
        description = "our own flaky"
        [[faults]]
        kind = "latency"
        seconds = 1
    """,
    )
    reg = ProfileRegistry.default(tmp_path)
    profile = reg.get("flaky")
    assert profile.source == str(path)
    assert profile.description == "our own flaky"
    assert kinds(profile) == ["latency"]
    assert reg.path("flaky") == path
    assert reg.path("outage") == builtin_dir() / "outage.toml"


def test_user_only_profiles_are_listed_with_builtins(tmp_path):
    write(tmp_path, "checkout", 'description = "x"\n')
    names = ProfileRegistry.default(tmp_path).names()
    assert "checkout" in names and "flaky" in names
    assert names == sorted(names)


def test_extends_merges_faults_budgets_and_sections(tmp_path):
    write(
        tmp_path,
        "base",
        """
        description = "base profile"
        [budgets]
        max_steps = 100
        max_seconds = 600
        [escape]
        max_breaker_wait = 30
        backoff = { base = 1, max_delay = 30 }
        [[faults]]
        kind = "timeout"
        [[faults]]
        kind = "latency"
    """,
    )
    write(
        tmp_path,
        "child",
        """
        extends = "base"
        [budgets]
        max_steps = 20
        max_tool_calls = 10
        [escape]
        backoff = { max_delay = 60 }
        interventions = ["retry", "stop"]
        [[faults]]
        kind = "http_error"
        status = 502
    """,
    )
    child = ProfileRegistry.default(tmp_path).get("child")
    assert kinds(child) == ["timeout", "latency", "http_error"]
    assert child.budgets == Budgets(max_steps=20, max_tool_calls=10, max_seconds=600.0)
    assert child.sections["escape"] == {
        "max_breaker_wait": 30,
        "backoff": {"base": 1, "max_delay": 60},
        "interventions": ["retry", "stop"],
    }
    policy = child.policy("escape")  # parsed from the merged table when the profile loaded
    assert (policy.max_breaker_wait, policy.interventions) == (30.0, ("retry", "stop"))
    assert (policy.backoff.base, policy.backoff.max_delay) == (1.0, 60.0)
    assert child.description == "base profile"  # inherited when not set
    assert child.chain == ("base", "child")


def test_extends_a_builtin(tmp_path):
    write(
        tmp_path,
        "harsh",
        """
        extends = "flaky"
        description = "flaky plus outages"
        [[faults]]
        kind = "rate_limit"
    """,
    )
    reg = ProfileRegistry.default(tmp_path)
    harsh = reg.get("harsh")
    assert kinds(harsh) == kinds(reg.get("flaky")) + ["rate_limit"]
    assert harsh.budgets == reg.get("flaky").budgets
    assert harsh.description == "flaky plus outages"


def test_profile_extending_its_own_name_builds_on_the_builtin(tmp_path):
    write(
        tmp_path,
        "flaky",
        """
        extends = "flaky"
        [budgets]
        max_steps = 50
        [[faults]]
        kind = "garbled_output"
    """,
    )
    user = ProfileRegistry.default(tmp_path).get("flaky")
    builtin = ProfileRegistry.default().get("flaky")
    assert kinds(user) == kinds(builtin) + ["garbled_output"]
    assert user.budgets.max_steps == 50
    assert user.budgets.max_seconds == builtin.budgets.max_seconds
    assert user.chain == ("flaky", "flaky")


def test_three_level_chain(tmp_path):
    write(tmp_path, "a", '[[faults]]\nkind = "timeout"\n')
    write(tmp_path, "b", 'extends = "a"\n[[faults]]\nkind = "latency"\n')
    write(tmp_path, "c", 'extends = "b"\n[[faults]]\nkind = "connection_error"\n')
    c = ProfileRegistry.default(tmp_path).get("c")
    assert kinds(c) == ["timeout", "latency", "connection_error"]
    assert c.chain == ("a", "b", "c")


# -- errors -----------------------------------------------------------------------------


def test_extends_cycle_names_the_cycle(tmp_path):
    write(tmp_path, "alpha", 'extends = "beta"\n')
    write(tmp_path, "beta", 'extends = "gamma"\n')
    write(tmp_path, "gamma", 'extends = "alpha"\n')
    with pytest.raises(ChaosConfigError) as exc:
        ProfileRegistry.default(tmp_path).get("alpha")
    msg = str(exc.value)
    assert "'extends' cycle: alpha -> beta -> gamma -> alpha" in msg
    assert str(tmp_path) in msg


def test_two_profile_cycle(tmp_path):
    write(tmp_path, "ping", 'extends = "pong"\n')
    write(tmp_path, "pong", 'extends = "ping"\n')
    with pytest.raises(ChaosConfigError, match="cycle: pong -> ping -> pong"):
        ProfileRegistry.default(tmp_path).get("pong")


def test_unknown_profile_lists_available_names(tmp_path):
    write(tmp_path, "mine", 'description = "m"\n')
    with pytest.raises(ChaosConfigError) as exc:
        ProfileRegistry.default(tmp_path).get("flakey")
    msg = str(exc.value)
    assert msg.startswith("chaos profile 'flakey': not found; available:")
    for name in (*BUILTINS, "mine"):
        assert name in msg


def test_extending_an_unknown_profile_names_it(tmp_path):
    write(tmp_path, "child", 'extends = "ghost"\n')
    with pytest.raises(ChaosConfigError, match="chaos profile 'ghost': not found"):
        ProfileRegistry.default(tmp_path).get("child")


def test_self_extends_without_a_shadowed_profile_says_so(tmp_path):
    write(tmp_path, "solo", 'extends = "solo"\n')
    with pytest.raises(ChaosConfigError) as exc:
        ProfileRegistry.default(tmp_path).get("solo")
    assert str(exc.value).startswith(
        f"{tmp_path / 'solo.toml'}: extends: 'solo' extends itself, but no other profile 'solo' "
        "is there to build on"
    )


def test_invalid_toml_names_the_file(tmp_path):
    path = write(tmp_path, "broken", '[[faults]\nkind = "timeout"\n')
    with pytest.raises(ChaosConfigError) as exc:
        ProfileRegistry.default(tmp_path).get("broken")
    assert str(exc.value).startswith(f"{path}: invalid TOML")


def test_unknown_top_level_key_names_it_and_what_is_allowed(tmp_path):
    path = write(tmp_path, "typo", '[[fault]]\nkind = "timeout"\n')
    with pytest.raises(ChaosConfigError) as exc:
        ProfileRegistry.default(tmp_path).get("typo")
    msg = str(exc.value)
    assert msg.startswith(f"{path}: unknown key 'fault'")
    assert "faults" in msg and "budgets" in msg and "extends" in msg


def test_bad_fault_names_file_and_index(tmp_path):
    path = write(
        tmp_path,
        "bad",
        """
        [[faults]]
        kind = "timeout"
        [[faults]]
        kind = "http_error"
        status = 200
    """,
    )
    with pytest.raises(ChaosConfigError) as exc:
        ProfileRegistry.default(tmp_path).get("bad")
    msg = str(exc.value)
    assert msg.startswith(f"{path}: faults[1]: status")
    assert "400-599" in msg


def test_bad_fault_in_a_parent_names_the_parent_file(tmp_path):
    parent = write(tmp_path, "parent", '[[faults]]\nkind = "timeout"\nseconds = -5\n')
    write(tmp_path, "kid", 'extends = "parent"\n')
    with pytest.raises(ChaosConfigError) as exc:
        ProfileRegistry.default(tmp_path).get("kid")
    assert str(exc.value).startswith(f"{parent}: faults[0]: seconds")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[budgets]\nmax_steps = 0\n", "budgets: max_steps: must be > 0"),
        ("[budgets]\nmax_stepz = 5\n", "unknown budget 'max_stepz'"),
        ("escape = 3\n", "[escape] must be a table"),
        ("extends = 5\n", "extends: expected a profile name"),
        ("description = 5\n", "description: expected a string"),
        ('faults = "timeout"\n', "faults: 'faults' must be a list"),
    ],
)
def test_other_bad_profiles_name_file_and_key(tmp_path, text, fragment):
    path = write(tmp_path, "p", text)
    with pytest.raises(ChaosConfigError) as exc:
        ProfileRegistry.default(tmp_path).get("p")
    assert str(exc.value).startswith(f"{path}: ")
    assert fragment in str(exc.value)


@pytest.mark.parametrize("name", ["", None, 3, "../outside", "sub/flaky", "/etc/passwd", ".hidden"])
def test_profile_name_must_be_a_plain_name_not_a_path(name, tmp_path):
    (tmp_path / "outside.toml").write_text('description = "outside the profiles dir"\n')
    registry = ProfileRegistry.default(tmp_path / "user")
    with pytest.raises(ChaosConfigError, match="is not a profile name"):
        registry.get(name)


def test_extends_a_missing_profile_names_the_file_and_key(tmp_path):
    (tmp_path / "mine.toml").write_text('extends = "nosuch"\n')
    with pytest.raises(ChaosConfigError) as exc:
        ProfileRegistry.default(tmp_path).get("mine")
    assert str(exc.value).startswith(f"{tmp_path / 'mine.toml'}: extends: chaos profile 'nosuch'")
    assert "available: " in str(exc.value)


def test_a_directory_named_like_a_profile_is_not_a_profile(tmp_path):
    (tmp_path / "mine.toml").mkdir()
    registry = ProfileRegistry.default(tmp_path)
    assert "mine" not in registry.names()
    with pytest.raises(ChaosConfigError, match="'mine': not found"):
        registry.get("mine")


# -- helpers ----------------------------------------------------------------------------


def test_deep_merge_overrides_leaves_and_keeps_inputs():
    base = {"a": 1, "t": {"x": 1, "deep": {"k": 1}}}
    over = {"t": {"deep": {"j": 2}, "y": 2}, "b": 3}
    merged = deep_merge(base, over)
    assert merged == {"a": 1, "b": 3, "t": {"x": 1, "y": 2, "deep": {"k": 1, "j": 2}}}
    assert base == {"a": 1, "t": {"x": 1, "deep": {"k": 1}}}
    assert deep_merge({"t": {"x": 1}}, {"t": 5}) == {"t": 5}


def test_inline_profile():
    spec = parse_fault({"kind": "timeout"}, "f")
    p = inline_profile("adhoc", [spec], Budgets(max_steps=3))
    assert (p.name, p.faults, p.budgets.max_steps, p.source) == ("adhoc", (spec,), 3, "<inline>")
