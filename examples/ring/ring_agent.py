"""The ring-graph agent of the escape-mechanism lecture (seed 000).

The agent walks A -> B -> C and must reach E. At B it fetches data with a flaky tool; at C
it goes on to D -> E once it has the data, and otherwise back round the ring to A to try
again. When the tool keeps failing, the naive agent circles A -> B -> C -> A forever. The
supervised agent calls the tool through the escape stack (retries with backoff on the
clock, circuit breaker, classification) and asks ``Supervisor.check()`` at every node: while
the loop persists it waits with backoff, then explores the edge out of the cycle (C -> D).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_agentchaos.escape import Supervisor

GRAPH = {"A": ["B"], "B": ["C"], "C": ["A", "D"], "D": ["E"], "E": []}


def fetch_data(source: str) -> dict[str, Any]:
    """The tool at node B: returns the data the agent needs to leave the ring."""
    return {"source": source, "rows": 42}


def naive_agent(fetch: Callable[..., Any], step: Callable[[str], Any]) -> dict[str, Any] | None:
    """No escape stack: swallows the tool's errors and goes round the ring again."""
    node, data = "A", None
    while node != "E":
        step(node)
        if node == "B":
            try:
                data = fetch(source="B")
            except Exception:
                data = None
        node = ("D" if data is not None else "A") if node == "C" else GRAPH[node][0]
    return data


def supervised_agent(fetch: Callable[..., Any], supervisor: Supervisor) -> dict[str, Any] | None:
    """The same walk through the escape stack: supervised calls, visit() and check()."""
    node, data = "A", None
    while node != "E":
        supervisor.visit(node)
        if node == "B":
            try:
                data = supervisor.call("fetch_data", fetch, {"source": "B"})
            except Exception:
                data = None
        nxt = ("D" if data is not None else "A") if node == "C" else GRAPH[node][0]
        action = supervisor.check()
        if action.kind == "explore" and action.to is not None:
            nxt = action.to
        node = nxt
    return data
