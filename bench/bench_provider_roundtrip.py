"""Provider round trip: a scripted provider endpoint against a bare respx route, through the
real ``openai`` SDK.

Each arm makes ``client.chat.completions.create(...)`` calls with the real ``openai.OpenAI``
client (its request building, its ``httpx2`` client, its response parsing) inside a chaos run:

* ``scripted``: answered by ``chaos.provider("openai", script=[...])`` (the request parsed and
  checked against the API, a model call recorded with its fault decision, the answer rendered
  as the API would send it).
* ``canned`` (the baseline): answered by a bare respx route on the run's router,
  ``chaos.http.post(url).respond(json=<a canned chat.completion>)``: the same SDK call, the
  same ``httpx2`` bridge, no provider logic.

Informational: ``mock``, the SDK on an ``httpx2.MockTransport`` returning the canned body, with
no plugin at all (what the SDK alone costs), and ``scripted/stream``: a streamed answer read
to its end.

Interleaved batch by batch (one run per batch per arm, created outside the timing), median
of the batch means. Goal (issue 27): scripted <= 1.5x canned.

Run: .venv/bin/python bench/bench_provider_roundtrip.py
"""

from __future__ import annotations

import gc
import statistics
import sys
from collections.abc import Callable
from time import perf_counter_ns
from typing import Any

import httpx2
import openai

from pytest_agentchaos import Chaos

GOAL = 1.5
BATCHES = 25
WARMUP = 3
CALLS = 40

URL = "https://api.openai.com/v1/chat/completions"
MESSAGES = [
    {"role": "system", "content": "You are a travel agent."},
    {"role": "user", "content": "Where is the Louvre, and when does it open?"},
]
TEXT = "The Louvre is in Paris, on the right bank of the Seine; it opens at 9 am."
CANNED = {
    "id": "chatcmpl-bench",
    "object": "chat.completion",
    "created": 1_700_000_000,
    "model": "gpt-4o-mini",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "logprobs": None,
            "message": {"role": "assistant", "content": TEXT, "refusal": None},
        }
    ],
    "usage": {"prompt_tokens": 30, "completion_tokens": 20, "total_tokens": 50},
}


def calls(client: openai.OpenAI, n: int, stream: bool = False) -> None:
    for _ in range(n):
        if stream:
            for _chunk in client.chat.completions.create(
                model="gpt-4o-mini", messages=MESSAGES, stream=True
            ):
                pass
        else:
            client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)


def arm_scripted(stream: bool = False) -> Callable[[], float]:
    def batch() -> float:
        with Chaos.create() as chaos:
            chaos.provider("openai", script=[TEXT] * CALLS)
            client = openai.OpenAI(api_key="sk-bench", max_retries=0)
            return timed(lambda: calls(client, CALLS, stream))

    return batch


def arm_canned() -> float:
    with Chaos.create() as chaos:
        chaos.http.post(URL).respond(json=CANNED)
        client = openai.OpenAI(api_key="sk-bench", max_retries=0)
        return timed(lambda: calls(client, CALLS))


def arm_mock() -> float:
    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, json=CANNED))
    client = openai.OpenAI(
        api_key="sk-bench", max_retries=0, http_client=httpx2.Client(transport=transport)
    )
    return timed(lambda: calls(client, CALLS))


def timed(fn: Callable[[], Any]) -> float:
    """Microseconds per call of one batch."""
    gc.collect()
    start = perf_counter_ns()
    fn()
    return (perf_counter_ns() - start) / CALLS / 1000


def main() -> int:
    arms: dict[str, Callable[[], float]] = {
        "canned": arm_canned,
        "scripted": arm_scripted(),
        "mock": arm_mock,
        "scripted/stream": arm_scripted(stream=True),
    }
    for _ in range(WARMUP):
        for run in arms.values():
            run()
    samples: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(BATCHES):
        for name, run in arms.items():
            samples[name].append(run())
    medians = {name: statistics.median(values) for name, values in samples.items()}
    base = medians["canned"]
    print(f"{BATCHES} batches of {CALLS} calls per arm, interleaved, after {WARMUP} warm-ups")
    print(f"{'arm':<18}{'us/call':>10}{'p10':>10}{'p90':>10}{'/ canned':>10}")
    for name, values in samples.items():
        deciles = statistics.quantiles(values, n=10)
        print(
            f"{name:<18}{medians[name]:>10.1f}{deciles[0]:>10.1f}{deciles[-1]:>10.1f}"
            f"{medians[name] / base:>10.2f}"
        )
    ratio = medians["scripted"] / base
    verdict = "PASS" if ratio <= GOAL else "FAIL"
    print(
        f"RESULT bench_provider_roundtrip: scripted={medians['scripted']:.1f}us "
        f"canned={base:.1f}us ratio={ratio:.2f} (info: SDK alone {medians['mock']:.1f}us, "
        f"streamed {medians['scripted/stream']:.1f}us) goal <= {GOAL}x {verdict}"
    )
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
