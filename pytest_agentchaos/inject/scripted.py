"""Scripted provider endpoints on the run's router: the real SDK, a scripted model.

``chaos.provider("openai", script=[...])`` answers the provider's API (OpenAI Chat
Completions and Responses, Anthropic Messages; streamed or not) on the run's router, so the
team's unmodified agent, its framework's real model class and the provider SDK's own retry
loop, timeouts and stream parser all run; only the model's answers are scripted. Each wire
attempt is one model call in the trace, and the plan's ``model`` faults are delivered as the
provider would deliver them: an error status with the provider's headers and JSON body, a read
timeout, a refused connection, a slow answer, the previous answer again. The SDK raises its
own exceptions and retries by itself.

The wire formats (request checks, responses, SSE framing, error bodies) live in
:mod:`.providers`; this module applies the run's plan and records the calls.
"""

from __future__ import annotations

import inspect
import itertools
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from ..errors import ProviderScriptError
from ..saferepr import safe_repr, safe_str
from .call import CallState
from .handover import caller
from .providers import (
    DEFAULT_HOSTS,
    ParsedRequest,
    RequestInvalid,
    ToolCallSpec,
    Turn,
    arguments_text,
    format_for_path,
    formats_for,
    parse_turn,
)
from .providers.wire import dumps
from .session import _MISSING, ChaosSession
from .turn import describe_turn

if TYPE_CHECKING:
    from .providers import WireFormat

__all__ = ["ProviderEndpoint"]

#: Where each provider's SDK sends by default (the API version is part of the base URL).
_DEFAULT_BASE = {provider: f"https://{host}/v1" for provider, host in DEFAULT_HOSTS.items()}

Respond = Callable[[ParsedRequest], Any]


#: What a client reads when a connection drops mid-body (httpcore's own words).
_RESET = "peer closed connection without sending complete message body (incomplete chunked read)"


class _Events(httpx.SyncByteStream, httpx.AsyncByteStream):
    """An SSE body, one event per chunk, readable by sync and async clients alike; with
    ``reset`` (the request), the connection drops after the last event."""

    def __init__(self, events: Sequence[bytes], reset: httpx.Request | None = None) -> None:
        self._events = events
        self._reset = reset

    def __iter__(self) -> Iterator[bytes]:
        yield from self._events
        if self._reset is not None:
            raise httpx.RemoteProtocolError(_RESET, request=self._reset)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in self._events:
            yield event
        if self._reset is not None:
            raise httpx.RemoteProtocolError(_RESET, request=self._reset)


class ProviderEndpoint:
    """A scripted provider on the run's router; made by ``chaos.provider`` (see there).

    ``requests`` lists the parsed requests the agent sent (every wire attempt, retries
    included); ``calls`` how many the script or ``respond`` answered.
    """

    def __init__(
        self,
        session: ChaosSession,
        provider: str,
        *,
        script: Sequence[Any] | None,
        respond: Respond | None,
        base_url: str | None,
        name: str | Callable[[ParsedRequest], str] | None,
        virtual_sleep: bool,
    ) -> None:
        __tracebackhide__ = True
        where = "chaos.provider()"
        if not isinstance(provider, str):
            raise TypeError(
                f"{where}: provider: expected a provider name such as 'openai' or 'anthropic', "
                f"got {safe_repr(provider, 80)}"
            )
        if provider not in DEFAULT_HOSTS:
            raise ValueError(
                f"{where}: provider: unknown provider {safe_repr(provider, 80)}; the providers "
                f"are {', '.join(sorted(DEFAULT_HOSTS))}"
            )
        self.provider = provider
        self.formats: list[WireFormat] = formats_for(provider)
        if (script is None) == (respond is None):
            raise TypeError(
                f"{where}: give the model's answers as script=[turn, ...] or as "
                "respond=fn(request) -> turn (exactly one of them)"
            )
        if respond is not None and not callable(respond):
            raise TypeError(
                f"{where}: respond: expected a function of the request, got "
                f"{safe_repr(respond, 80)}"
            )
        if respond is not None and _is_async(respond):
            raise TypeError(
                f"{where}: respond: expected a plain function of the request returning a turn, "
                f"got the coroutine function {safe_repr(respond, 80)} (the endpoint answers "
                "sync and async clients alike: make it a def)"
            )
        if script is not None and (
            isinstance(script, (str, bytes, Mapping)) or not isinstance(script, Sequence)
        ):
            raise TypeError(
                f"{where}: script: expected a list of turns ({{'content': 'text'}}, "
                f"{{'tool_calls': [...]}}), got {safe_repr(script, 80)}"
            )
        self._script: list[Turn] | None = None
        if script is not None:
            self._script = []
            for i, turn in enumerate(script):
                self._script.append(parse_turn(turn, f"{where}: script[{i}]"))
        self._respond = respond
        if (
            name is not None
            and not callable(name)
            and (not isinstance(name, str) or not name.strip())
        ):
            raise TypeError(
                f"{where}: name: expected a non-empty target name, or a function of the "
                f"request naming the agent that sent it, got {safe_repr(name, 80)}"
            )
        self.name = name
        base = _DEFAULT_BASE[provider] if base_url is None else base_url
        if not isinstance(base, str):
            raise TypeError(f"{where}: base_url: expected a URL, got {safe_repr(base, 80)}")
        try:
            url = httpx.URL(base)
        except Exception:
            url = None
        problem = _url_problem(url)
        if problem is not None:
            raise ValueError(
                f"{where}: base_url: expected an http(s) URL such as "
                f"'https://llm.internal/v1'{problem}, got {safe_repr(base, 80)}"
            )
        assert url is not None
        self.base_url = str(url)
        self._origin = (url.scheme, url.host, url.port)
        self._prefix = url.path.rstrip("/") + "/"
        self.requests: list[ParsedRequest] = []
        self.calls = 0
        self._session = session
        self._virtual_sleep = virtual_sleep
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        #: the steps of the calls whose end is recorded (an exception after it is not another)
        self._done: set[int] = set()

    def serves(self, other: ProviderEndpoint) -> bool:
        """Whether ``other`` would answer the same requests as this endpoint."""
        return (self.provider, self._origin, self._prefix) == (
            other.provider,
            other._origin,
            other._prefix,
        )

    def answers(self, url: str) -> bool:
        """Whether this endpoint answers a POST to ``url`` (a model's full request URL)."""
        try:
            parsed = httpx.URL(url)
        except Exception:
            return False
        if (parsed.scheme, parsed.host, parsed.port) != self._origin:
            return False
        path = parsed.path
        return path.startswith(self._prefix) and (
            format_for_path(self.provider, "POST", path) is not None
        )

    def __repr__(self) -> str:
        return (
            f"<ProviderEndpoint {self.provider} {self.base_url} requests={len(self.requests)} "
            f"answered={self.calls}>"
        )

    # -- routing -------------------------------------------------------------------------

    def match(self, request: httpx.Request) -> WireFormat | None:
        """The API format a request is for, when it is a POST to this endpoint."""
        url = request.url
        if request.method != "POST" or (url.scheme, url.host, url.port) != self._origin:
            return None
        if not url.path.startswith(self._prefix):
            return None
        return format_for_path(self.provider, "POST", url.path)

    def handle(self, request: httpx.Request, fmt: WireFormat) -> httpx.Response:
        """Answer one wire attempt (sync clients)."""
        state, parsed = self._begin(request, fmt)
        try:
            if state.effect is not None and state.effect.delay:
                cut = _read_timeout(request, state.effect.delay)
                self._session.delay(state, cut)
                if cut is not None:
                    raise self._timed_out(state, request, cut)
            return self._answer(state, parsed, request, fmt)
        except BaseException as exc:
            self._unfinished(state, exc)
            raise

    async def ahandle(self, request: httpx.Request, fmt: WireFormat) -> httpx.Response:
        """Answer one wire attempt (async clients): a delay lets other tasks run."""
        state, parsed = self._begin(request, fmt)
        try:
            if state.effect is not None and state.effect.delay:
                cut = _read_timeout(request, state.effect.delay)
                await self._session.adelay(state, cut)
                if cut is not None:
                    raise self._timed_out(state, request, cut)
            return self._answer(state, parsed, request, fmt)
        except BaseException as exc:
            self._unfinished(state, exc)
            raise

    def _timed_out(
        self, state: CallState, request: httpx.Request, seconds: float
    ) -> httpx.ReadTimeout:
        """The client's own read timeout ran out before the answer (or the fault's error)."""
        message = f"timed out: no answer within the client's read timeout of {seconds:g}s"
        self._session.finish_error(state, error_type="ReadTimeout", message=message)
        self._done.add(state.step)
        return httpx.ReadTimeout(message, request=request)

    def _unfinished(self, state: CallState, exc: BaseException) -> None:
        """Record the end of a call that ended by an exception before its result was."""
        if state.step not in self._done:
            self._session.finish_error(state, exc)
            self._done.add(state.step)

    # -- one attempt ---------------------------------------------------------------------

    def _stop(self, message: str, **detail: Any) -> ProviderScriptError:
        return self._session.stop(
            ProviderScriptError(f"pytest-agentchaos: {self.provider} endpoint: {message}"),
            **detail,
        )  # type: ignore[return-value]

    def _begin(self, request: httpx.Request, fmt: WireFormat) -> tuple[CallState, ParsedRequest]:
        url = str(request.url.copy_with(query=None))
        try:
            parsed = fmt.parse_request(request.content, request.headers)
        except RequestInvalid as exc:
            raise self._stop(
                f"the agent's request to POST {url} is not valid for the {fmt.api} API "
                f"(the provider would answer 400): {exc}",
                url=url,
                api=fmt.api,
            ) from None
        with self._lock:
            self.requests.append(parsed)
        agent = None
        handed = caller(self._session)
        if handed is not None:  # a framework seam's call (chaos_agent): its agent's target
            target, agent = handed.target, handed.agent
            handed.reached.append(1)
        elif callable(self.name):  # the user tells the agents apart (by system prompt ...)
            agent = self._agent_name(parsed, url)
            target = agent
        else:
            target = self.name or parsed.model or self.provider
        tools = [t.get("name") for t in parsed.tools]
        # `wire` and `stream` tell the wire-only fault kinds (faults.wire_kinds) where they are
        args = {
            "messages": list(parsed.messages),
            "tools": tools,
            "wire": fmt.api,
            "stream": parsed.stream,
        }
        recorded = {
            "api": fmt.api,
            "messages": len(parsed.messages),
            "tools": tools,
            **({"stream": True} if parsed.stream else {}),
        }
        state = self._session.begin("model", target, args, recorded=recorded, agent=agent)
        return state, parsed

    def _agent_name(self, parsed: ParsedRequest, url: str) -> str:
        assert callable(self.name)
        try:
            found = self.name(parsed)
        except Exception as exc:
            raise self._stop(
                f"name() failed: {type(exc).__name__}: {safe_str(exc, 400)}", url=url
            ) from exc
        if not isinstance(found, str) or not found.strip():
            raise self._stop(
                f"name() must return the agent's name (a non-empty string), returned "
                f"{safe_repr(found, 80)}",
                url=url,
            )
        return found

    def _answer(
        self, state: CallState, parsed: ParsedRequest, request: httpx.Request, fmt: WireFormat
    ) -> httpx.Response:
        session = self._session
        effect = state.effect
        turn: Turn | None = None
        if effect is not None:
            if effect.failure is not None:
                return self._fail(state, request, fmt)
            if effect.replay:
                previous = session.previous_output(state)
                if previous is not _MISSING and isinstance(previous, Turn):
                    turn = previous
        replayed = turn is not None
        if turn is None:
            turn = self._next_turn(parsed, request)
        if effect is not None and effect.transform is not None and turn.content:
            new = effect.transform(turn.content)
            if isinstance(new, str) and new != turn.content:
                turn = _with_content(turn, new)
        number = next(self._numbers)
        if replayed:  # the earlier answer under fresh ids: a new message, not the old one again
            turn = _fresh_ids(turn, number)
        wire = effect.wire if effect is not None and effect.wire else {}
        if wire:
            turn = self._broken(state, turn, wire)
        tokens_in, tokens_out = fmt.tokens(turn, parsed)
        calls = [(c.name, c.arguments) for c in turn.tool_calls]
        shown = describe_turn(turn.content or "", calls)
        cut = wire.get("cut") if parsed.stream else None
        self._done.add(state.step)
        if cut == "reset":
            session.finish_error(
                state, error_type="RemoteProtocolError", message=_RESET, output=shown
            )
        else:
            if cut == "end" or (wire.get("no_finish") and parsed.stream):
                shown += "\n[the stream ended without its finish]"
            session.finish_ok(
                state, turn, tokens=tokens_in + tokens_out, transform=False, recorded=shown
            )
        headers = fmt.success_headers(n=number, stream=parsed.stream)
        if parsed.stream:  # `created` is time.time(): the virtual one under freeze_time
            finish = not wire.get("no_finish")
            events = fmt.render_stream(turn, parsed, n=number, finish=finish)
            if cut is not None:
                events = events[: fmt.mid_answer(events)]
            stream = _Events(events, reset=request if cut == "reset" else None)
            return httpx.Response(200, headers=headers, stream=stream, request=request)
        body = dumps(fmt.render(turn, parsed, n=number)).encode()
        return httpx.Response(200, headers=headers, content=body, request=request)

    def _broken(self, state: CallState, turn: Turn, wire: Mapping[str, Any]) -> Turn:
        """The turn as a wire fault delivers it: empty, or its first tool call's arguments
        not JSON."""
        import dataclasses

        if wire.get("empty"):
            return Turn(content="", finish_reason="stop")
        mode = wire.get("bad_arguments")
        if mode is None:
            return turn
        if not turn.tool_calls:
            self._session.note(
                f"bad_tool_arguments on call {state.index} of {state.target!r}: the answer "
                "called no tool, so it was sent as scripted"
            )
            return turn
        first, *rest = turn.tool_calls
        text = arguments_text(first)
        broken = text[: max(1, len(text) // 2)] if mode == "truncated" else _python_repr(first)
        return dataclasses.replace(
            turn, tool_calls=(dataclasses.replace(first, arguments=broken), *rest)
        )

    def _next_turn(self, parsed: ParsedRequest, request: httpx.Request) -> Turn:
        with self._lock:
            self.calls += 1
            call = self.calls
            if self._script is not None:
                if call > len(self._script):
                    raise self._stop(
                        f"the script has {len(self._script)} turn(s) and the agent asked for "
                        f"turn {call} (model {parsed.model!r}, {len(parsed.messages)} "
                        "messages): add turns, or answer with respond=fn(request)",
                        url=str(request.url),
                    )
                return self._script[call - 1]
        assert self._respond is not None
        try:
            value = self._respond(parsed)
        except Exception as exc:
            raise self._stop(
                f"respond() failed on call {call}: {type(exc).__name__}: {safe_str(exc, 400)}",
                url=str(request.url),
            ) from exc
        if inspect.isawaitable(value):
            close = getattr(value, "close", None)
            if callable(close):
                close()  # never awaited: say so here, not as a warning in a later test
            raise self._stop(
                f"respond() on call {call} returned an awaitable ({type(value).__name__}): "
                "it must return the turn itself",
                url=str(request.url),
            )
        try:
            return parse_turn(value, f"respond() on call {call}")
        except (TypeError, ValueError) as exc:
            raise self._stop(str(exc), url=str(request.url)) from None

    def _fail(self, state: CallState, request: httpx.Request, fmt: WireFormat) -> httpx.Response:
        """The plan's failure as the provider delivers it."""
        session = self._session
        failure = state.effect.failure  # type: ignore[union-attr]
        assert failure is not None
        if not self._virtual_sleep:
            session.note(
                f"{self.provider} endpoint: the SDK's retry backoff after an injected failure "
                "waits in real time; @pytest.mark.chaos(virtual_sleep=True) (or ini "
                "chaos_virtual_sleep) puts it on virtual time"
            )
        self._done.add(state.step)
        if failure.kind == "timeout":
            session.finish_error(state, error_type="ReadTimeout", message=failure.message)
            raise httpx.ReadTimeout(failure.message, request=request)
        if failure.kind == "connection":
            session.finish_error(state, error_type="ConnectError", message=failure.message)
            raise httpx.ConnectError(failure.message, request=request)
        status = failure.status or 500
        headers, body = fmt.error(
            status, None, retry_after=failure.retry_after, n=next(self._numbers)
        )
        if failure.body is not None:  # the fault's own body, as the test gave it
            body = failure.body
        given = {h.lower() for h in failure.headers}
        merged = [(k, v) for k, v in headers if k.lower() not in given]
        merged += list(failure.headers.items())
        error = body.get("error") if isinstance(body, Mapping) else None
        session.finish_error(
            state,
            error_type=str(error.get("type")) if isinstance(error, Mapping) else f"HTTP {status}",
            message=str(error.get("message")) if isinstance(error, Mapping) else failure.message,
            status=status,
            output=body,
        )
        content = body if isinstance(body, str) else dumps(body)
        return httpx.Response(status, headers=merged, content=content.encode(), request=request)


def _is_async(fn: Callable[..., Any]) -> bool:
    call = getattr(fn, "__call__", None)  # noqa: B004 - a callable object's async __call__
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


def _url_problem(url: httpx.URL | None) -> str | None:
    """Why ``url`` cannot be an endpoint's base URL (``None``: it can)."""
    if url is None or url.scheme not in ("http", "https") or not url.host:
        return ""
    if url.query or url.fragment:
        return " with no query or fragment (the SDK appends its paths to the base URL)"
    if url.userinfo:
        return " with no user or password in it"
    if url.port is not None and not 0 < url.port < 65536:
        return " with a port from 1 to 65535"
    return None


def _read_timeout(request: httpx.Request, delay: float) -> float | None:
    """The client's own read timeout when it is shorter than ``delay`` (the client gives up
    first), else ``None``."""
    timeout = request.extensions.get("timeout")
    read = timeout.get("read") if isinstance(timeout, Mapping) else None
    if isinstance(read, (int, float)) and 0 <= read < delay:
        return float(read)
    return None


def _python_repr(call: ToolCallSpec) -> str:
    """The call's arguments written as a Python dict (single quotes): not JSON."""
    value = call.arguments
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return str(value) + "'"
    return repr(value if value is not None else {})


def _with_content(turn: Turn, content: str) -> Turn:
    import dataclasses

    return dataclasses.replace(turn, content=content)


def _fresh_ids(turn: Turn, number: int) -> Turn:
    import dataclasses

    calls = tuple(
        dataclasses.replace(c, id=f"{c.id}_again{number}" if c.id else None)
        for c in turn.tool_calls
    )
    return dataclasses.replace(turn, tool_calls=calls)
