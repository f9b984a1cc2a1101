"""What every provider wire format shares: the parsed request, the request error, the
:class:`WireFormat` protocol, and the small helpers that frame SSE, split text into deltas and
make deterministic ids.

Path matching: a format serves ``method`` requests whose URL path, with the query and any
trailing ``/`` removed, *ends with* its :attr:`WireFormat.suffix` on a segment boundary
(``/chat/completions``, ``/responses``, ``/messages``). So ``https://api.openai.com/v1``,
``https://host/openai/v1``, an Azure-like ``/openai/deployments/gpt/chat/completions`` and
Anthropic's ``/v1/messages?beta=true`` all match, while ``/v1/messages/count_tokens``,
``/v1/messages/batches`` and ``/v1/responses/resp_1`` (other endpoints) do not.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from .turns import Turn, arguments_text, estimate_tokens, text_of

__all__ = [
    "ParsedRequest",
    "RequestInvalid",
    "WireFormat",
    "dumps",
    "json_body",
    "make_id",
    "path_matches",
    "split_pieces",
    "split_words",
    "sse",
]


@dataclass(frozen=True)
class ParsedRequest:
    """A provider request, normalised the same way for every API.

    ``messages``: dicts ``{"role": "system" | "user" | "assistant" | "tool", "content":
    str}``; an assistant message that called tools also has ``"tool_calls": [{"id", "name",
    "arguments"}]`` (``arguments`` the JSON text sent), a tool result has ``"tool_call_id"``
    (and ``"is_error": True`` when Anthropic's ``tool_result`` says so). The system prompt
    (OpenAI ``system``/``developer`` messages, Responses ``instructions``, Anthropic
    ``system``) is a ``"system"`` message, first. Text parts are joined with ``"\\n"``;
    non-text parts (images, files, audio) are left out.

    ``tools``: ``{"name", "description", "parameters"}`` for the function tools (the JSON
    schema of their arguments; ``{}`` when none was given); provider-hosted tools (web
    search, code interpreter...) are left out. ``structured``: the JSON schema of a
    structured-output request (``{}`` for OpenAI's schema-less ``json_object`` mode), else
    ``None``. ``raw``: the JSON body as sent.
    """

    api: str
    model: str
    messages: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...]
    stream: bool
    structured: dict[str, Any] | None
    raw: dict[str, Any] = field(repr=False)

    @property
    def include_usage(self) -> bool:
        """Whether a chat completions stream ends with a usage chunk
        (``stream_options.include_usage``); the other APIs always report usage."""
        options = self.raw.get("stream_options")
        return isinstance(options, dict) and options.get("include_usage") is True


class RequestInvalid(Exception):
    """The request is not valid for its API: the real API would answer ``status`` (400) with
    ``message`` (its wording, where known), naming ``param``, with ``code``. Render the
    answer with :meth:`WireFormat.reject`."""

    def __init__(
        self, message: str, *, param: str | None = None, code: str | None = None, status: int = 400
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code
        self.status = status


class WireFormat(Protocol):
    """One provider HTTP API's wire format (see the module doc for path matching)."""

    api: str
    provider: str
    method: str
    path: str
    suffix: str

    def matches(self, method: str, path: str) -> bool:
        """Whether a request with this method and URL path is for this API."""
        ...

    def parse_request(self, body: bytes, headers: Mapping[str, str]) -> ParsedRequest:
        """The request, normalised; :class:`RequestInvalid` when the real API would refuse it."""
        ...

    def render(
        self, turn: Turn, request: ParsedRequest, *, n: int, created: float | None = None
    ) -> dict[str, Any]:
        """The non-streaming JSON response for ``turn`` (``n``: the call counter that makes
        ids deterministic; ``created``: the Unix time to report, now by default)."""
        ...

    def render_stream(
        self,
        turn: Turn,
        request: ParsedRequest,
        *,
        n: int,
        created: float | None = None,
        finish: bool = True,
    ) -> list[bytes]:
        """The SSE body, one complete event per item; ``finish=False`` leaves out the events
        that finish the answer (see each format's doc for which)."""
        ...

    def mid_answer(self, events: list[bytes]) -> int:
        """An index into ``render_stream``'s events that is strictly inside the answer: cut
        there (``events[:i]``), the stream has started but not finished."""
        ...

    def error(
        self,
        status: int,
        message: str | None = None,
        *,
        retry_after: float | None = None,
        param: str | None = None,
        code: str | None = None,
        n: int = 0,
    ) -> tuple[list[tuple[str, str]], dict[str, Any]]:
        """The headers and JSON body the provider sends with this error status."""
        ...

    def reject(
        self, exc: RequestInvalid, *, n: int = 0
    ) -> tuple[list[tuple[str, str]], dict[str, Any]]:
        """The headers and body of the real API's answer to an invalid request."""
        ...

    def stream_error(self, status: int, message: str | None = None, *, n: int = 0) -> bytes:
        """One SSE event carrying an error in the middle of a stream, as the provider sends
        it (after a 200: the SDKs raise while iterating)."""
        ...

    def success_headers(self, *, n: int, stream: bool) -> list[tuple[str, str]]:
        """The headers of a successful response (content type, request id, rate limits)."""
        ...

    def tokens(self, turn: Turn, request: ParsedRequest) -> tuple[int, int]:
        """``(input, output)`` tokens the response's usage reports."""
        ...


def path_matches(path: str, suffix: str) -> bool:
    """Whether ``path`` (query and trailing ``/`` ignored) ends with ``suffix`` (which starts
    with ``/``, so on a segment boundary)."""
    path = path.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return path.endswith(suffix)  # every suffix starts with "/": a segment boundary


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII kept as UTF-8 (as the providers send it)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def sse(data: Any, event: str | None = None) -> bytes:
    """One complete SSE event: ``event: x\\n`` (when given), ``data: <json>\\n\\n``. A ``str``
    ``data`` is sent verbatim (``[DONE]``)."""
    text = data if isinstance(data, str) else dumps(data)
    head = f"event: {event}\n" if event is not None else ""
    return f"{head}data: {text}\n\n".encode()


_WORD = re.compile(r"\s*\S+|\s+")


def split_words(text: str) -> list[str]:
    """``text`` in pieces of one word each with its leading whitespace (``"".join`` gives it
    back); ``[]`` for ``""``."""
    return _WORD.findall(text)


def split_pieces(text: str, size: int = 8) -> list[str]:
    """``text`` in pieces of ``size`` characters (the last shorter); ``[]`` for ``""``."""
    return [text[i : i + size] for i in range(0, len(text), size)]


_ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_HEX = "0123456789abcdef"


def make_id(prefix: str, length: int, *parts: object, alphabet: str = _ALNUM) -> str:
    """``prefix`` and ``length`` characters of ``alphabet`` derived from ``parts``: the same
    parts, the same id."""
    digest = hashlib.sha256(repr(parts).encode()).digest()
    while len(digest) < length:
        digest += hashlib.sha256(digest).digest()
    return prefix + "".join(alphabet[b % len(alphabet)] for b in digest[:length])


def hex_id(prefix: str, length: int, *parts: object) -> str:
    """:func:`make_id` in lowercase hex."""
    return make_id(prefix, length, *parts, alphabet=_HEX)


def json_body(body: bytes, invalid: str) -> dict[str, Any]:
    """The request body as a JSON object, or :class:`RequestInvalid` with ``invalid``."""
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise RequestInvalid(invalid) from None
    if not isinstance(value, dict):
        raise RequestInvalid(invalid)
    return value


def join_text(parts: list[str]) -> str:
    """Text parts of one message joined with newlines."""
    return "\n".join(parts)


def whole_seconds(seconds: float) -> str:
    """A ``retry-after`` value: whole seconds, rounded up, as the providers send it."""
    return str(max(0, math.ceil(seconds)))


def wait_text(seconds: float) -> str:
    """OpenAI's wording of a wait in a rate-limit message: ``120ms``, ``2s``, ``1m30s``."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    if seconds < 60:
        return f"{seconds:.3g}s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{rest:.3g}s"


class FormatBase:
    """What every format implements the same way: path matching, token counts, the index
    of a mid-answer cut. Subclasses set the class attributes and ``_is_delta``."""

    api: str
    provider: str
    method = "POST"
    path: str
    suffix: str

    def matches(self, method: str, path: str) -> bool:
        """Whether a request with this method and URL path is for this API (module doc)."""
        return method.upper() == self.method and path_matches(path, self.suffix)

    def tokens(self, turn: Turn, request: ParsedRequest) -> tuple[int, int]:
        """The turn's ``usage`` if given, else an estimate: a token per 4 characters of the
        request's messages and tool schemas (plus 3 a message), and of the turn's text and
        tool calls; each at least 1."""
        if turn.usage is not None:
            return turn.usage
        chars = 0
        for message in request.messages:
            chars += len(message.get("content") or "")
            for call in message.get("tool_calls", ()):
                chars += len(call["name"]) + len(call["arguments"])
        if request.tools:
            chars += len(dumps(list(request.tools)))
        used = estimate_tokens("x" * chars) + 3 * len(request.messages)
        said = text_of(turn) + "".join(c.name + arguments_text(c) for c in turn.tool_calls)
        return max(1, used), max(1, estimate_tokens(said))

    def mid_answer(self, events: list[bytes]) -> int:
        """An index strictly inside the answer: after about half of the stream's delta events
        (text or tool-argument pieces), so ``events[:i]`` has started the answer but not
        finished it; 1 (after the opening event) when the answer has no delta."""
        deltas = [i for i, event in enumerate(events) if self._is_delta(event)]
        if not deltas:
            return 1
        return deltas[(len(deltas) - 1) // 2] + 1

    def _is_delta(self, event: bytes) -> bool:  # pragma: no cover - every format overrides
        raise NotImplementedError
