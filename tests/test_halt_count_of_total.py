"""A count toward a total whose count is the agent's own counter ("iteration 4/20" after
"iteration 3/20") is that counter: the total said again with it is no news, so a chat that
only advances its counter while saying the same thing in new words reads as bringing nothing.
A count toward a total that a working call reports ("[3/8]", the work's progress) stays news."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentchaos.halt.monitor import HaltMonitor


@given(
    st.integers(min_value=1, max_value=50),
    st.integers(min_value=60, max_value=500),
    st.sampled_from(["iteration", "attempt", "round"]),
)
@settings(max_examples=50, deadline=None)
def test_a_counted_count_toward_a_total_is_no_news(start: int, total: int, word: str) -> None:
    monitor = HaltMonitor(embedder="lexical")
    for i in range(3):
        monitor.observe(f"{word} {start + i}/{total}: tidying the same query once more")
    assert not monitor.watch.history[-1].new_info


def test_a_working_calls_progress_toward_a_total_stays_news() -> None:
    monitor = HaltMonitor(embedder="lexical")
    for i in range(1, 4):
        monitor.observe(f"imported the batch [{i}/8]", tool="import_batch", ok=True, args={"n": i})
    assert "3/8" in monitor.watch.history[-1].new_info
