"""A scripted provider endpoint for the wire-format tests: an ``httpx2.MockTransport``
handler that parses each request with a :mod:`pytest_agentchaos.inject.providers` format and
answers with the script's next step, and the real SDK clients wired to it (no network)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2

from pytest_agentchaos.inject.providers import (
    FORMATS,
    ParsedRequest,
    RequestInvalid,
    Turn,
    WireFormat,
    parse_turn,
)
from pytest_agentchaos.inject.providers.wire import dumps


@dataclass(frozen=True)
class Err:
    """A step that answers with the provider's error for ``status``."""

    status: int
    message: str | None = None
    retry_after: float | None = None


@dataclass(frozen=True)
class Cut:
    """A step that streams ``turn`` cut after ``at`` events (``None``: mid-answer), or
    without its finishing events (``finish=False``)."""

    turn: Any
    at: int | None = None
    finish: bool = True


@dataclass
class FakeProvider:
    """Answers requests for ``api`` with ``script``'s steps, in order (the last repeats)."""

    api: str
    script: list[Any] = field(default_factory=list)
    requests: list[ParsedRequest] = field(default_factory=list)
    rejected: list[RequestInvalid] = field(default_factory=list)
    calls: int = 0

    @property
    def fmt(self) -> WireFormat:
        return FORMATS[self.api]

    def respond(self, request: httpx2.Request) -> tuple[int, list[tuple[str, str]], Any]:
        """``(status, headers, body)``: ``body`` is bytes, or a list of SSE events."""
        self.calls += 1
        n = self.calls
        if not self.fmt.matches(request.method, request.url.path):
            return 404, [("content-type", "application/json")], b'{"error": "no such route"}'
        try:
            parsed = self.fmt.parse_request(request.read(), request.headers)
        except RequestInvalid as exc:
            self.rejected.append(exc)
            headers, body = self.fmt.reject(exc, n=n)
            return exc.status, headers, dumps(body).encode()
        self.requests.append(parsed)
        step = self.script[min(n - 1, len(self.script) - 1)]
        if isinstance(step, Err):
            headers, body = self.fmt.error(step.status, step.message, retry_after=step.retry_after)
            return step.status, headers, dumps(body).encode()
        cut = step if isinstance(step, Cut) else Cut(step)
        turn: Turn = parse_turn(cut.turn, f"script step {n}")
        if not parsed.stream:
            body = dumps(self.fmt.render(turn, parsed, n=n, created=1_700_000_000)).encode()
            return 200, self.fmt.success_headers(n=n, stream=False), body
        events = self.fmt.render_stream(turn, parsed, n=n, created=1_700_000_000, finish=cut.finish)
        if isinstance(step, Cut) and step.finish:  # a cut stream
            events = events[: step.at if step.at is not None else self.fmt.mid_answer(events)]
        return 200, self.fmt.success_headers(n=n, stream=True), events

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        status, headers, body = self.respond(request)
        if isinstance(body, list):
            return httpx2.Response(status, headers=headers, content=_iterate(body))
        return httpx2.Response(status, headers=headers, content=body)

    async def async_handler(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        status, headers, body = self.respond(request)
        if isinstance(body, list):
            return httpx2.Response(status, headers=headers, content=_aiterate(body))
        return httpx2.Response(status, headers=headers, content=body)

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handler)

    def async_transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.async_handler)


def _iterate(events: list[bytes]) -> Iterator[bytes]:
    yield from events


async def _aiterate(events: list[bytes]) -> AsyncIterator[bytes]:
    for event in events:
        yield event


def openai_client(fake: FakeProvider, **options: Any) -> Any:
    import openai

    options.setdefault("max_retries", 0)
    http = openai.DefaultHttpxClient(transport=fake.transport())
    return openai.OpenAI(api_key="sk-test", http_client=http, **options)


def async_openai_client(fake: FakeProvider, **options: Any) -> Any:
    import openai

    options.setdefault("max_retries", 0)
    http = openai.DefaultAsyncHttpxClient(transport=fake.async_transport())
    return openai.AsyncOpenAI(api_key="sk-test", http_client=http, **options)


def anthropic_client(fake: FakeProvider, **options: Any) -> Any:
    import anthropic

    options.setdefault("max_retries", 0)
    http = anthropic.DefaultHttpxClient(transport=fake.transport())
    return anthropic.Anthropic(api_key="sk-ant-test", http_client=http, **options)


def async_anthropic_client(fake: FakeProvider, **options: Any) -> Any:
    import anthropic

    options.setdefault("max_retries", 0)
    http = anthropic.DefaultAsyncHttpxClient(transport=fake.async_transport())
    return anthropic.AsyncAnthropic(api_key="sk-ant-test", http_client=http, **options)
