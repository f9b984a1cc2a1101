"""A position on a timeline in seconds ("the 5 s around 2640.8 s", "at 12.5 s") is where in a
recording or a log, not how long something took: a value, so a bisection of a recording that
scans a new position each step brings news; a measured duration ("took 12.4 s") stays left out."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.halt.monitor import HaltMonitor
from pytest_agentchaos.halt.values import values


@given(
    st.integers(min_value=10, max_value=99_999),
    st.integers(min_value=1, max_value=9),
    st.sampled_from(["at", "around", "near", "past"]),
)
@settings(max_examples=50, deadline=None)
def test_a_position_in_seconds_is_a_value(whole: int, tenth: int, word: str) -> None:
    assert f"{whole}.{tenth}" in values(f"the clicks start {word} {whole}.{tenth} s")


@given(st.integers(min_value=1, max_value=999), st.integers(min_value=1, max_value=9))
def test_a_measured_duration_stays_left_out(whole: int, tenth: int) -> None:
    assert not values(f"the build took {whole}.{tenth} s") - {str(whole)}
    assert not values(f"tests passed in {whole}.{tenth} s")


def test_a_bisection_of_a_recording_is_no_spiral() -> None:
    monitor = HaltMonitor(task="find where the clicks start in ep212", embedder="lexical")
    monitor.observe("The raw file is 3521 s long; halving.", tool="load", ok=True, args={})
    halted = []
    scans = [(1760.5, "clean"), (2640.8, "clicks present"), (2200.7, "clean"),
             (2420.8, "clicks present"), (2310.8, "clean"), (2365.8, "clean")]  # fmt: skip
    for at, heard in scans:
        decision = monitor.observe(
            f"Spectral scan of the 5 s around {at} s: {heard}.",
            tool="click_detect", ok=True, args={"at": at},
        )  # fmt: skip
        halted.append(decision.halt)
    assert not any(halted)


@given(
    st.integers(min_value=1, max_value=999),
    st.integers(min_value=1, max_value=99),
    st.sampled_from(["took around", "took about", "finished in roughly", "took just over"]),
)
def test_a_duration_said_to_be_rounded_is_still_a_duration(
    whole: int, hundredth: int, words: str
) -> None:
    # "around" before a number marks a position ("around 2640.8 s") only when no word saying
    # how long something took comes first
    assert not values(f"the export {words} {whole}.{hundredth:02d} s")


@given(
    st.integers(min_value=10, max_value=99_999),
    st.integers(min_value=1, max_value=9),
    st.sampled_from(["@ ", "@", "t=", "t = ", "t= ", "t ="]),
)
def test_a_position_written_with_at_sign_or_t_is_a_value(whole: int, tenth: int, mark: str) -> None:
    for unit in (" s", "s"):
        read = values(f"spike {mark}{whole}.{tenth}{unit} in the trace")
        assert any(f"{whole}.{tenth}" in v for v in read), read  # kept, as written or bare
