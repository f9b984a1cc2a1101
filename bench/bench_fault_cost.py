"""Fault cost: what one injected failure costs, against an unfaulted wrapped call of the same seam.

A fault that fires is decided (the plan's selector, its kind's decision), built into the
exception the seam raises (built-in kinds on a plain tool; on a provider seam the SDK's own
exception, e.g. ``openai.RateLimitError`` from a real ``httpx2`` response), raised, caught by the
caller, and recorded (``FaultInjected`` and the failed result). This bench measures that, per
call, against the same wrapped seam called with no fault firing, in the same process:

* ``tool``: a plain sync tool through ``chaos.wrap``; the fault: ``http_error`` 503, raised as
  ``InjectedHTTPError``.
* ``model/openai``: a model call through the injection core (``Interceptor``) with the ``openai``
  SDK's errors, as the Agents SDK and LangChain (ChatOpenAI) adapters raise them; the fault:
  ``rate_limit`` (an ``openai.RateLimitError`` with ``retry-after`` headers).
* ``model/pydantic-ai``: pydantic-ai's ``ChaosModel.request`` around a ``FunctionModel``; the
  fault: ``http_error`` 503, raised as pydantic-ai's ``ModelHTTPError`` (skipped without
  pydantic-ai).

Baselines: the same seam with a plan whose only fault never matches it (``tools=["other"]``: the
cheapest unfaulted call), measured in the same loop, interleaved batch by batch. Informational:
an unfaulted call whose fault was drawn and missed (``probability`` tiny), as most calls under a
profile are.

Goal (issue 25): an injected fault costs at most 4x an unfaulted wrapped call of the same seam,
in every arm (the median over rounds of each round's ratio of batch means; the table's columns are
the medians of the batch means).

Run: .venv/bin/python bench/bench_fault_cost.py
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
from collections.abc import Callable
from time import perf_counter_ns
from typing import Any

from pytest_agentchaos import Chaos
from pytest_agentchaos.inject.intercept import Interceptor
from pytest_agentchaos.inject.provider_errors import openai_errors

GOAL = 4.0
BATCHES = 30
WARMUP = 4
CALLS = 500
#: pydantic-ai's model calls cost ~250 us unfaulted: fewer per batch
SLOW_CALLS = 100


def lookup(query: str, limit: int = 5) -> dict[str, object]:
    return {"query": query, "limit": limit}


def faults(kind: dict[str, Any], target: str, mode: str) -> list[dict[str, Any]]:
    """``hit``: the fault fires on every call; ``miss``: it can never match; ``drawn``: it is
    drawn on every call and (almost) never fires."""
    if mode == "hit":
        return [{**kind, "tools": [target]}]
    if mode == "miss":
        return [{**kind, "tools": ["other"]}]
    return [{**kind, "tools": [target], "probability": 1e-9}]


# -- arms: each returns (make a batch runner for a mode) ----------------------------------------


def tool_arm(mode: str) -> tuple[Chaos, Callable[[], None]]:
    chaos = Chaos.create(
        seed=1, faults=faults({"kind": "http_error", "status": 503}, "lookup", mode)
    )
    tool = chaos.wrap(lookup)

    def run() -> None:
        for _ in range(CALLS):
            try:  # noqa: SIM105 - the loop must cost what the caller's own try costs
                tool("weather in Paris", limit=3)
            except Exception:
                pass

    return chaos, run


OPENAI = openai_errors()


def openai_arm(mode: str) -> tuple[Chaos, Callable[[], None]]:
    chaos = Chaos.create(seed=1, faults=faults({"kind": "rate_limit"}, "planner", mode))
    core = Interceptor(chaos.session, "planner", channel="model", errors=OPENAI, agent="Planner")
    args = {"messages": 3}

    def answer(_: Any) -> str:
        return "the plan"

    def run() -> None:
        for _ in range(CALLS):
            try:  # noqa: SIM105
                core.call(args, answer)
            except Exception:
                pass

    return chaos, run


def pydantic_ai_arm(mode: str) -> tuple[Chaos, Callable[[], None]] | None:
    try:
        from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
        from pydantic_ai.models import ModelRequestParameters
        from pydantic_ai.models.function import FunctionModel

        from pytest_agentchaos.adapters.pydantic_ai import chaos_model
    except ImportError:
        return None
    chaos = Chaos.create(
        seed=1, faults=faults({"kind": "http_error", "status": 503}, "planner", mode)
    )
    function = FunctionModel(lambda m, i: ModelResponse([TextPart("ok")]))
    model = chaos_model(chaos, function, name="planner")
    messages = [ModelRequest(parts=[UserPromptPart("plan my trip")])]
    params = ModelRequestParameters()
    loop = asyncio.new_event_loop()

    async def batch() -> None:
        for _ in range(SLOW_CALLS):
            try:  # noqa: SIM105
                await model.request(messages, None, params)
            except Exception:
                pass

    def run() -> None:
        loop.run_until_complete(batch())

    chaos.session.add_cleanup(loop.close)
    return chaos, run


ARMS: dict[str, Callable[[str], Any]] = {
    "tool": tool_arm,
    "model/openai": openai_arm,
    "model/pydantic-ai": pydantic_ai_arm,
}


def time_batch(make: Callable[[str], Any], mode: str) -> float | None:
    built = make(mode)
    if built is None:
        return None
    chaos, run = built
    t0 = perf_counter_ns()
    run()
    elapsed = perf_counter_ns() - t0
    calls = chaos.session.model_calls + chaos.session.tool_calls
    faults_fired = len(chaos.trace.faults())
    chaos.close()
    expected = calls if mode == "hit" else 0
    if not calls or faults_fired != expected:
        raise AssertionError(f"{mode}: {faults_fired} faults fired in {calls} calls")
    return elapsed / calls / 1000  # us per call


def main() -> int:
    modes = ("hit", "miss", "drawn")
    samples: dict[tuple[str, str], list[float]] = {(a, m): [] for a in ARMS for m in modes}
    skipped: set[str] = set()
    for round_ in range(WARMUP + BATCHES):
        gc.collect()  # once a round (a full collection takes ~0.1 s with the frameworks loaded)
        for arm, make in ARMS.items():
            if arm in skipped:
                continue
            for mode in modes:
                us = time_batch(make, mode)
                if us is None:
                    skipped.add(arm)
                    break
                if round_ >= WARMUP:
                    samples[(arm, mode)].append(us)
    print(
        f"{BATCHES} batches of {CALLS} calls ({SLOW_CALLS} of pydantic-ai's) per arm and mode, "
        f"after {WARMUP} warm-up rounds"
    )
    print(
        f"{'arm':<20}{'fault (us)':>12}{'unfaulted':>12}{'drawn':>10}{'ratio':>8}{'vs drawn':>10}"
    )
    worst = 0.0
    for arm in ARMS:
        if arm in skipped:
            print(f"{arm:<20} skipped (not installed)")
            continue
        hit, miss, drawn = (statistics.median(samples[(arm, m)]) for m in modes)
        # the verdict's ratio: per round (its fault and unfaulted batches ran back to back, so a
        # machine that slows down for a while slows both), the median over rounds
        ratio = statistics.median(
            h / m for h, m in zip(samples[(arm, "hit")], samples[(arm, "miss")], strict=True)
        )
        worst = max(worst, ratio)
        print(f"{arm:<20}{hit:>12.2f}{miss:>12.2f}{drawn:>10.2f}{ratio:>8.2f}{hit / drawn:>10.2f}")
    verdict = "PASS" if worst <= GOAL else "FAIL"
    print(f"RESULT fault_cost: worst ratio {worst:.2f}x goal <= {GOAL:g}x {verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
