"""``--hold-out``: a round's held-out corpus files are neither scored nor listed by the quality
benches, and a name that matches no file is an error, never silently nothing held out."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import bench_loop_corpus  # noqa: E402
import bench_repair_corpus  # noqa: E402
import hold_out  # noqa: E402

FILES = ["dev/batch10.json", "dev/batch11.json", "dev/batch9.json"]


def test_the_flag_is_read_in_both_spellings_and_taken_out_of_argv() -> None:
    names, rest = hold_out.parse(["-v", "--hold-out", "a.json,b.json", "--split", "dev",
                                  "--hold-out=c.json"])  # fmt: skip
    assert names == ["a.json", "b.json", "c.json"]
    assert rest == ["-v", "--split", "dev"]


@pytest.mark.parametrize("argv", [["--hold-out"], ["--hold-out", "-v"], ["--hold-out="]])
def test_a_flag_without_a_name_is_an_error(argv: list[str]) -> None:
    with pytest.raises(ValueError, match="needs a file name"):
        hold_out.parse(argv)


def test_named_files_are_left_out_by_name_or_by_path() -> None:
    assert hold_out.drop(FILES, ["batch11.json"], str) == ["dev/batch10.json", "dev/batch9.json"]
    assert hold_out.drop(FILES, ["dev/batch9.json"], str) == FILES[:2]
    assert hold_out.drop(FILES, [], str) == FILES


def test_a_name_of_no_file_is_refused() -> None:
    with pytest.raises(ValueError, match=r"batch12\.json: no such file"):
        hold_out.drop(FILES, ["batch12.json"], str)


@given(st.lists(st.sampled_from(FILES), unique=True))
def test_nothing_of_a_held_out_file_is_kept_and_nothing_else_is_lost(held: list[str]) -> None:
    names = [f.rsplit("/", 1)[-1] for f in held]
    kept = hold_out.drop(FILES * 2, names, str)
    assert not set(kept) & set(held)
    assert len(kept) == 2 * (len(FILES) - len(held))


def test_the_loop_bench_leaves_the_file_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_loop_corpus.main(["--split", "dev", "--hold-out", "nosuch.json"]) == 2
    assert "no such file in this split" in capsys.readouterr().out
    assert bench_loop_corpus.main(["--split", "dev", "--hold-out"]) == 2


def test_the_repair_bench_leaves_the_file_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_repair_corpus.main(["x", "--split", "dev", "--hold-out", "nosuch.json"]) == 2
    assert "no such file in this split" in capsys.readouterr().out


def test_the_halt_bench_leaves_the_file_out(capsys: pytest.CaptureFixture[str]) -> None:
    import bench_halt_corpus

    assert bench_halt_corpus.main(["x", "--split", "dev", "--hold-out", "nosuch.json"]) == 2
    assert "no such file in this split" in capsys.readouterr().out
