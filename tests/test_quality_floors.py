"""Regression floors for the detectors and the repairer on the **test** halves of their corpora
(fixtures/*/test/, which nobody developing the rules reads). These are the figures recorded at
the end of issue 29's and issue 30's first sessions, less a small margin: a change that makes
a detector or the repairer worse on runs it was not developed on fails here. They are floors,
not the issues' goals (README: the goals are not met yet)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))


def _result(capsys: pytest.CaptureFixture[str], main: object, *argv: str) -> dict[str, float]:
    main(list(argv))  # type: ignore[operator]
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("RESULT"))
    return {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)(?:x|ms)?\b", line)}


def test_the_loop_detector_on_the_test_half(capsys: pytest.CaptureFixture[str]) -> None:
    import bench_loop_corpus

    got = _result(capsys, bench_loop_corpus.main, "--split", "test")
    # recorded 0.983 (0.991 before the chat-reply framing round; before issue 29: 0.963)
    assert got["precision"] >= 0.98, got
    assert got["recall"] >= 0.94, got  # recorded 0.957 (was 0.915; before issue 29: 0.667)


def test_the_repairer_on_the_test_half(capsys: pytest.CaptureFixture[str]) -> None:
    import bench_repair_corpus

    got = _result(capsys, bench_repair_corpus.main, "bench_repair_corpus.py", "--split", "test")
    # recorded 1 of 91 (2 on the fourth test batch's arrival; issue 30 is open); the first 62
    # declines of the test half are all declined
    assert got["invented"] <= 1, got
    assert got["fixed"] >= 0.60, got  # recorded 0.608 (0.612 at best; before the fifth round 0.565)


@pytest.mark.runs_first
def test_the_halt_monitor_on_the_test_half(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sentence_transformers")
    import bench_halt_corpus

    got = _result(capsys, bench_halt_corpus.main, "bench_halt_corpus.py", "--split", "test")
    # recorded 0.975 / 0.664 (0.963 before the drift-series round; 0.927 / 0.655 before the
    # failures-as-attempts round; 0.922 /
    # 0.612 with the fourth test batch; before issue 29: 0.690 / 0.439)
    assert got["precision"] >= 0.96, got
    assert got["recall"] >= 0.65, got
    assert got["early"] == 0, got
