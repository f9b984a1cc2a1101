"""The provider SDKs' own exceptions for injected failures (OpenAI, Anthropic).

An injected rate limit at a seam where the ``openai`` SDK would have raised is an
``openai.RateLimitError``, built by the SDK's own code from a real response object of the HTTP
client that SDK version sends through (``httpx2`` for openai 3.x and anthropic 2.x, ``httpx``
before): the SDK's status-to-class mapping and message, the provider's error body, and headers
the real API sends (``retry-after`` and ``retry-after-ms`` on a 429, a request id). A timeout
is the SDK's ``APITimeoutError`` caused by the HTTP client's ``ReadTimeout``, a dropped
connection its ``APIConnectionError`` caused by ``ConnectError``, as the SDK raises them.

Each builder is a :data:`~.errors.NativeErrors`; ``None`` where the SDK is not installed (the
seam then raises the built-in kind, and says so in the trace's meta).
"""

from __future__ import annotations

import importlib
import json
import math
import sys
from collections.abc import Mapping
from typing import Any

from ..faults.effects import Failure, reason_phrase
from .errors import NativeErrors, Templates

__all__ = ["PROVIDERS", "anthropic_errors", "openai_errors", "provider_errors"]

#: Provider -> (SDK module, client class, default base URL, default path).
PROVIDERS: Mapping[str, tuple[str, str, str, str]] = {
    "openai": ("openai", "OpenAI", "https://api.openai.com/v1", "/chat/completions"),
    "anthropic": ("anthropic", "Anthropic", "https://api.anthropic.com", "/v1/messages"),
}

# The error bodies the providers send, by status: (type, code, message). OpenAI:
# {"error": {"message", "type", "param", "code"}}; Anthropic: {"type": "error", "error":
# {"type", "message"}}. Statuses not listed take their class's (4xx / 5xx) entry.
_OPENAI_ERRORS: Mapping[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: ("invalid_request_error", "unsupported_country_region_territory",
          "Country, region, or territory not supported."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist or you do not "
          "have access to it."),
    409: ("invalid_request_error", None, "Conflict."),
    422: ("invalid_request_error", None, "Unprocessable request."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try "
          "again later."),
    500: ("server_error", None, "The server had an error while processing your request. "
          "Sorry about that!"),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
    4: ("invalid_request_error", None, "Invalid request."),
    5: ("server_error", None, "The server had an error while processing your request."),
}  # fmt: skip
_ANTHROPIC_ERRORS: Mapping[int, tuple[str, None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("authentication_error", None, "invalid x-api-key"),
    403: ("permission_error", None, "Your API key does not have permission to use the "
          "specified resource."),
    404: ("not_found_error", None, "The requested resource could not be found."),
    413: ("request_too_large", None, "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", None, "Number of request tokens has exceeded your per-minute "
          "rate limit."),
    500: ("api_error", None, "Internal server error"),
    529: ("overloaded_error", None, "Overloaded"),
    4: ("invalid_request_error", None, "Invalid request."),
    5: ("api_error", None, "Internal server error"),
}  # fmt: skip


def provider_errors(
    provider: str,
    *,
    base_url: str | None = None,
    path: str | None = None,
    marked: bool = True,
) -> NativeErrors | None:
    """The errors of ``provider`` (``"openai"`` or ``"anthropic"``) for requests to
    ``base_url`` + ``path`` (the provider's own by default); ``None`` when its SDK is not
    installed. ``marked=False``: the SDK's own classes, not yet marked injected (for a seam
    that maps them into a framework's exception, as a framework maps the real ones)."""
    try:
        module_name, client_name, default_url, default_path = PROVIDERS[provider]
    except KeyError:
        raise ValueError(
            f"no provider errors for {provider!r}: the providers are {', '.join(PROVIDERS)}"
        ) from None
    try:
        sdk = importlib.import_module(module_name)
    except ImportError:
        return None
    http = _http_module(sdk)
    stub = object.__new__(getattr(sdk, client_name))  # the client's error mapping, no client
    url = (base_url or default_url).rstrip("/") + (path if path is not None else default_path)
    request = http.Request("POST", url)
    table = _OPENAI_ERRORS if provider == "openai" else _ANTHROPIC_ERRORS
    counter = iter(range(1, sys.maxsize))

    def build(failure: Failure) -> BaseException:
        if failure.kind == "timeout":
            exc: BaseException = sdk.APITimeoutError(request=request)
            exc.__cause__ = http.ReadTimeout("timed out", request=request)
            return exc
        if failure.kind == "connection":
            exc = sdk.APIConnectionError(request=request)
            exc.__cause__ = http.ConnectError("[Errno 111] Connection refused", request=request)
            return exc
        if failure.kind != "http":
            return None  # type: ignore[return-value]  # a crash: no provider form
        status = failure.status or 500
        body = failure.body if failure.body is not None else _body(provider, table, status)
        headers = _headers(provider, failure, next(counter))
        content = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        response = http.Response(status, request=request, headers=headers, content=content)
        error: BaseException = stub._make_status_error_from_response(response)
        return error

    return Templates(build, marked=marked)


def openai_errors(*, base_url: str | None = None, path: str | None = None) -> NativeErrors | None:
    """The ``openai`` SDK's exceptions (see the module doc); ``None`` without the SDK."""
    return provider_errors("openai", base_url=base_url, path=path)


def anthropic_errors(
    *, base_url: str | None = None, path: str | None = None
) -> NativeErrors | None:
    """The ``anthropic`` SDK's exceptions (see the module doc); ``None`` without the SDK."""
    return provider_errors("anthropic", base_url=base_url, path=path)


def _http_module(sdk: Any) -> Any:
    """The HTTP client module the SDK's exceptions are built on (``httpx2`` or ``httpx``)."""
    exceptions = sys.modules.get(f"{sdk.__name__}._exceptions")
    for name in ("httpx2", "httpx"):
        module = getattr(exceptions, name, None) if exceptions is not None else None
        if module is not None:
            return module
    return importlib.import_module("httpx")  # pragma: no cover - every SDK release has one


def _body(provider: str, table: Mapping[int, tuple[str, Any, str]], status: int) -> Any:
    kind, code, message = (
        table.get(status) or table.get(status // 100) or ("api_error", None, reason_phrase(status))
    )
    if provider == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _headers(provider: str, failure: Failure, n: int) -> dict[str, str]:
    headers = {"content-type": "application/json"}
    headers["x-request-id" if provider == "openai" else "request-id"] = f"req_agentchaos_{n}"
    headers.update({k.lower(): v for k, v in failure.headers.items()})
    if failure.retry_after is not None:
        headers["retry-after"] = str(math.ceil(failure.retry_after))
        if provider == "openai":
            headers["retry-after-ms"] = str(round(failure.retry_after * 1000))
    return headers
