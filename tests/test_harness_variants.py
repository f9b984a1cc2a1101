"""The variants a chaos test runs as (issue 16, item 5): ``run_seed``, ``variants``,
``Variant.apply`` and ``case_id``, free of pytest."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pytest_agentchaos.harness.settings import SessionSettings
from pytest_agentchaos.harness.spec import RunSpec
from pytest_agentchaos.harness.variants import Variant, case_id, run_seed, variants

FID = "test_agent.py::test_k"

seeds = st.integers(min_value=0, max_value=10**9)
run_counts = st.integers(min_value=1, max_value=40)
profile_names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
matrices = st.lists(profile_names, min_size=0, max_size=4, unique=True).map(tuple)


def settings(seed: int = 7, runs: int = 1, profiles: tuple[str, ...] = ()) -> SessionSettings:
    return SessionSettings(seed=seed, runs=runs, profiles=profiles)


# --- run_seed ---------------------------------------------------------------------------------


def test_a_run_seed_is_a_32_bit_number_fixed_by_its_inputs() -> None:
    seed = run_seed(7, FID, 1)
    assert 0 <= seed < 2**32
    assert run_seed(7, FID, 1) == seed
    assert len({run_seed(7, FID, 1), run_seed(8, FID, 1), run_seed(7, FID + "x", 1)}) == 3
    assert run_seed(7, FID, 2) != seed


# --- variants: count, ids, determinism --------------------------------------------------------


def test_a_single_run_without_a_matrix_has_no_variants() -> None:
    assert variants(None, settings(), FID) == []
    assert variants(RunSpec(), settings(), FID) == []
    assert variants(RunSpec(runs=1), settings(runs=5), FID) == []  # the marker wins
    assert variants(None, settings(profiles=("flaky",)), FID) == []  # one profile: no matrix


def test_runs_from_the_option_each_carry_their_run_number_and_seed() -> None:
    found = variants(None, settings(runs=3), FID)
    assert [v.run for v in found] == [1, 2, 3]
    assert [v.seed for v in found] == [run_seed(7, FID, r) for r in (1, 2, 3)]
    assert [v.id for v in found] == [f"seed{v.seed}" for v in found]
    assert all(v.profile is None for v in found)


def test_the_markers_runs_win_over_the_option() -> None:
    assert len(variants(RunSpec(runs=4), settings(runs=2), FID)) == 4
    assert len(variants(RunSpec(runs=2), settings(runs=9), FID)) == 2


def test_the_matrix_alone_gives_one_variant_per_profile_with_no_seed() -> None:
    found = variants(None, settings(profiles=("none", "flaky")), FID)
    assert found == [Variant("none", None, None, "none"), Variant("flaky", None, None, "flaky")]


def test_the_matrix_with_runs_names_profile_and_seed() -> None:
    found = variants(None, settings(runs=2, profiles=("none", "flaky")), FID)
    seeds_ = [run_seed(7, FID, r) for r in (1, 2)]
    assert [v.id for v in found] == [
        f"none-seed{seeds_[0]}",
        f"none-seed{seeds_[1]}",
        f"flaky-seed{seeds_[0]}",
        f"flaky-seed{seeds_[1]}",
    ]


def test_a_pinned_profile_leaves_the_matrix() -> None:
    assert variants(RunSpec(profile="outage"), settings(profiles=("none", "flaky")), FID) == []
    found = variants(RunSpec(profile="outage", runs=2), settings(profiles=("a", "b")), FID)
    assert [v.profile for v in found] == [None, None] and [v.run for v in found] == [1, 2]


def test_a_pinned_seed_runs_once() -> None:
    assert variants(RunSpec(seed=5), settings(runs=4), FID) == []
    found = variants(RunSpec(seed=5), settings(runs=4, profiles=("none", "flaky")), FID)
    assert [v.id for v in found] == ["none", "flaky"]
    assert all(v.run is None and v.seed is None for v in found)


@given(seed=seeds, runs=run_counts, matrix=matrices)
def test_count_is_runs_times_profiles_and_ids_are_unique(
    seed: int, runs: int, matrix: tuple[str, ...]
) -> None:
    found = variants(None, settings(seed, runs, matrix), FID)
    width = len(matrix) if len(matrix) > 1 else 1
    assert len(found) == (0 if runs == 1 and width == 1 else runs * width)
    assert len({v.id for v in found}) == len(found)
    assert all(v.id for v in found)


@given(seed=seeds, runs=run_counts, matrix=matrices)
def test_variants_are_deterministic(seed: int, runs: int, matrix: tuple[str, ...]) -> None:
    first = variants(None, settings(seed, runs, matrix), FID)
    assert variants(None, settings(seed, runs, matrix), FID) == first
    taken: set[int] = set()
    for v in first[: runs if runs > 1 else 0]:  # one profile's runs (each profile has the same)
        assert v.run is not None and v.seed is not None
        # a run's hash, drawn again only if an earlier run has it
        assert (v.seed == run_seed(seed, FID, v.run)) is (run_seed(seed, FID, v.run) not in taken)
        taken.add(v.seed)
    assert len(taken) == (runs if runs > 1 else 0)
    assert [v.seed for v in first] == [v.seed for v in first[:runs]] * (len(first) // runs)


@given(seed=seeds, runs=run_counts, matrix=matrices)
def test_pinned_profile_and_seed_are_respected(
    seed: int, runs: int, matrix: tuple[str, ...]
) -> None:
    pinned_profile = variants(RunSpec(profile="p", runs=runs), settings(seed, 1, matrix), FID)
    assert len(pinned_profile) == (0 if runs == 1 else runs)
    assert all(v.profile is None for v in pinned_profile)
    pinned_seed = variants(RunSpec(seed=3), settings(seed, runs, matrix), FID)
    assert len(pinned_seed) == (len(matrix) if len(matrix) > 1 else 0)
    assert all(v.run is None for v in pinned_seed)


def test_the_runs_of_one_test_have_distinct_seeds_even_when_the_hash_collides() -> None:
    # session seed 324: runs 560 and 4210 of test_x.py::test_k hash to the same 32-bit seed
    fid = "test_x.py::test_k"
    assert run_seed(324, fid, 560) == run_seed(324, fid, 4210)
    found = variants(RunSpec(runs=4210), settings(seed=324), fid)
    assert found[559].seed == run_seed(324, fid, 560)  # the first keeps its seed
    assert found[4209].seed != found[559].seed  # the repeat is drawn again
    assert found[4209].seed == variants(RunSpec(runs=4210), settings(seed=324), fid)[4209].seed
    assert len({v.seed for v in found}) == len(found)
    assert len({v.id for v in found}) == len(found)


# --- Variant.apply ---------------------------------------------------------------------------


def test_apply_sets_the_profile_and_the_runs_seed() -> None:
    spec = RunSpec(profile="outage", runs=3, min_pass_rate=0.5)
    applied = Variant("flaky", 2, 1234, "flaky-seed1234").apply(spec)
    assert (applied.profile, applied.seed, applied.run) == ("flaky", 1234, 2)
    assert (applied.runs, applied.min_pass_rate) == (3, 0.5)


def test_apply_keeps_what_the_variant_does_not_set() -> None:
    spec = RunSpec(profile="outage", seed=9)
    assert Variant("flaky", None, None, "flaky").apply(spec) == RunSpec(profile="flaky", seed=9)
    run_only = Variant(None, 1, 77, "seed77").apply(RunSpec(profile="outage"))
    assert (run_only.profile, run_only.seed, run_only.run) == ("outage", 77, 1)


# --- case_id ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("node_id", "variant_id", "case"),
    [
        ("t.py::test[seed12]", "seed12", "t.py::test"),
        ("t.py::test[flaky-seed12]", "flaky-seed12", "t.py::test"),
        ("t.py::test[flaky]", "flaky", "t.py::test"),
        ("t.py::test[seed12-a]", "seed12", "t.py::test[a]"),
        ("t.py::test[a-seed12]", "seed12", "t.py::test[a]"),
        ("t.py::test[a-seed12-b]", "seed12", "t.py::test[a-b]"),
        ("t.py::test[flaky-seed12-1-2]", "flaky-seed12", "t.py::test[1-2]"),
        ("t.py::TestC::test[seed12]", "seed12", "t.py::TestC::test"),
        ("sub/t.py::TestC::test[x-seed12]", "seed12", "sub/t.py::TestC::test[x]"),
        ("t.py::test", "seed12", "t.py::test"),  # no params: nothing to strip
    ],
)
def test_case_id_strips_only_the_variant(node_id: str, variant_id: str, case: str) -> None:
    assert case_id(node_id, variant_id) == case


variant_ids = st.one_of(
    st.integers(0, 2**32 - 1).map(lambda s: f"seed{s}"),
    st.sampled_from(["none", "flaky", "rate_limited", "outage"]),
    st.tuples(st.sampled_from(["none", "flaky"]), st.integers(0, 2**32 - 1)).map(
        lambda t: f"{t[0]}-seed{t[1]}"
    ),
)
# user ids as pytest makes them: words joined with "-" (no "::", no brackets)
user_ids = st.lists(st.from_regex(r"[A-Za-z0-9_.]{1,6}", fullmatch=True), min_size=1, max_size=3)


@given(variant=variant_ids, user=user_ids, variant_first=st.booleans())
def test_case_id_leaves_user_params_wherever_the_variant_is(
    variant: str, user: list[str], variant_first: bool
) -> None:
    own = "-".join(user)
    assume(not re.search(rf"(^|-){re.escape(variant)}(-|$)", own))  # ambiguous: see below
    ids = f"{variant}-{own}" if variant_first else f"{own}-{variant}"
    assert case_id(f"t.py::test[{ids}]", variant) == f"t.py::test[{own}]"
    assert case_id(f"t.py::test[{variant}]", variant) == "t.py::test"


def test_case_id_strips_the_leading_variant_when_a_user_id_ends_with_it() -> None:
    # @pytest.mark.parametrize("a,b", [("x", "flaky")]) under --chaos-profile=none,flaky:
    # pytest's id is [flaky-x-flaky] (ours first), the case is test[x-flaky]
    assert case_id("t.py::test[flaky-x-flaky]", "flaky") == "t.py::test[x-flaky]"
    assert case_id("t.py::test[none-x-flaky]", "none") == "t.py::test[x-flaky]"
